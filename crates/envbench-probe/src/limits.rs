//! What limits this process below what the machine has: the CPUs it may run on (`Cpus_allowed_list`, what
//! `sched_getaffinity` returns), and the cgroup limits on its cgroup and every ancestor up to the hierarchy's mount,
//! each taken at its tightest:
//!
//! - cgroup v2, the `0::/path` line of `/proc/self/cgroup` under the `cgroup2` mount: `cpu.max`,
//!   `cpuset.cpus.effective`, `memory.max`, `memory.high` and `io.max`;
//! - cgroup v1, an `N:controller,...:/path` line under the `cgroup` mount whose super options name the controller:
//!   `cpu.cfs_quota_us` over `cpu.cfs_period_us`, `cpuset.effective_cpus` (`cpuset.cpus` on kernels without it),
//!   `memory.limit_in_bytes` (an ancestor's unless its `memory.use_hierarchy` is 0; 2^62 and above is no limit)
//!   and the `blkio.throttle.{read,write}_{iops,bps}_device` lines, into the same fields. v1 has no `memory.high`
//!   (`memory.soft_limit_in_bytes` is something else).
//!
//! A hybrid host has both: every hierarchy is read, the tightest limit of each kind wins and keeps the cgroup path it
//! came from. A mount's root field says which part of the tree a cgroup namespace (or a container's bind mount) shows.
//! A missing cgroup file system, mount, directory or v1 limit file is listed as unreadable, never guessed.

use crate::cpu::parse_cpu_list;
use crate::host::Host;
use crate::mountinfo::{MountEntry, parse_mountinfo};
use envbench_core::fingerprint::{CgroupBytes, CpuQuota, IoLimit, ProcessLimits, StorageStack};
use std::path::{Path, PathBuf};

/// cgroup v1 controllers whose limits are read, as `/proc/self/cgroup` and the mount options name them.
const V1_CONTROLLERS: &[&str] = &["cpu", "cpuset", "memory", "blkio"];

/// cgroup v1 `memory.limit_in_bytes` at or above this is no limit (the kernel shows "unlimited" as
/// 9223372036854771712, the largest page count times the page size).
const V1_UNLIMITED_BYTES: u64 = 1 << 62;

/// The cgroup v1 throttle files and the `io.max` key each one fills.
const V1_THROTTLE_FILES: &[(&str, &str)] = &[
    ("blkio.throttle.read_iops_device", "riops"),
    ("blkio.throttle.write_iops_device", "wiops"),
    ("blkio.throttle.read_bps_device", "rbps"),
    ("blkio.throttle.write_bps_device", "wbps"),
];

/// Probe the limits of this process. `online_cpus` is the machine's count; `storage` narrows the I/O limits to the
/// devices under the data directory.
pub(crate) fn probe_limits(
    host: &Host,
    online_cpus: Option<u32>,
    storage: Option<&StorageStack>,
    unreadable: &mut Vec<String>,
) -> ProcessLimits {
    let mut limits = ProcessLimits::default();
    match host.read("/proc/self/status").and_then(|status| allowed_list(&status)) {
        Some(list) => {
            limits.affinity_cpus = Some(parse_cpu_list(&list).len() as u32);
            limits.affinity = Some(list);
        }
        None => unreadable.push("/proc/self/status Cpus_allowed_list".into()),
    }
    let mut io = Vec::new();
    match host.read("/proc/self/cgroup") {
        Some(text) => read_cgroups(host, &parse_proc_cgroup(&text), &mut limits, &mut io, unreadable),
        None => unreadable.push("/proc/self/cgroup".into()),
    }
    limits.io_max = narrow_io(io, storage);
    let quota_cpus = limits.cpu_max.as_ref().map(|q| (q.quota_us / q.period_us.max(1)).max(1) as u32);
    limits.usable_cpus =
        [online_cpus, limits.affinity_cpus, limits.cpuset_cpus, quota_cpus].into_iter().flatten().min();
    limits
}

/// `Cpus_allowed_list` of `/proc/self/status`.
fn allowed_list(status: &str) -> Option<String> {
    status.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == "Cpus_allowed_list").then(|| value.trim().to_string()).filter(|v| !v.is_empty())
    })
}

/// The cgroups `/proc/self/cgroup` puts the process in.
#[derive(Debug, Default, PartialEq, Eq)]
struct Membership {
    /// The cgroup v2 path (the `0::/path` line).
    unified: Option<String>,
    /// Each cgroup v1 controller that is read, with the process's cgroup in its hierarchy.
    v1: Vec<(&'static str, String)>,
}

/// Parse `/proc/self/cgroup`: `0::/path` for cgroup v2, `N:controller[,controller]:/path` for each v1 hierarchy
/// (`name=systemd` and other controllers whose limits do not matter here are skipped).
fn parse_proc_cgroup(text: &str) -> Membership {
    let mut membership = Membership::default();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else { continue };
        if controllers.is_empty() {
            membership.unified = Some(path.to_string());
            continue;
        }
        for controller in controllers.split(',') {
            if let Some(known) = V1_CONTROLLERS.iter().find(|c| **c == controller) {
                membership.v1.push((known, path.to_string()));
            }
        }
    }
    membership
}

/// One level of a cgroup hierarchy: a cgroup the process is in, or one of its ancestors.
struct Level {
    /// Its directory under the mount.
    dir: PathBuf,
    /// Its cgroup path, as `/proc/self/cgroup` would name it.
    cgroup: String,
}

impl Level {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Read the limits of every hierarchy the process is in, v2 and v1 alike, into `limits` and `io`.
fn read_cgroups(
    host: &Host,
    membership: &Membership,
    limits: &mut ProcessLimits,
    io: &mut Vec<IoLimit>,
    unreadable: &mut Vec<String>,
) {
    if membership.unified.is_none() && membership.v1.is_empty() {
        return;
    }
    let mounts = parse_mountinfo(&host.read("/proc/self/mountinfo").unwrap_or_default());
    if let Some(path) = &membership.unified {
        let cgroup2: Vec<&MountEntry> = mounts.iter().filter(|m| m.filesystem == "cgroup2").collect();
        if let Some(levels) = cgroup_levels(host, &cgroup2, "cgroup2", path, unreadable) {
            read_v2_limits(host, &levels, limits, io, unreadable);
            limits.cgroup = Some(path.clone());
        }
    }
    for (controller, path) in &membership.v1 {
        let hierarchy: Vec<&MountEntry> = mounts
            .iter()
            .filter(|m| m.filesystem == "cgroup" && m.super_options.split(',').any(|o| o == *controller))
            .collect();
        let label = format!("cgroup v1 {controller}");
        if let Some(levels) = cgroup_levels(host, &hierarchy, &label, path, unreadable) {
            read_v1_limits(host, controller, &levels, limits, io, unreadable);
        }
    }
}

/// The directories of cgroup `path` and of each ancestor that one of `mounts` (the mounts of one hierarchy, named
/// `label` in notes) shows, own cgroup first. The mount whose root holds `path` is used; a cgroup namespace or a
/// container's bind mount shows only part of the tree, so the walk stops at the mount's root.
fn cgroup_levels(
    host: &Host,
    mounts: &[&MountEntry],
    label: &str,
    path: &str,
    unreadable: &mut Vec<String>,
) -> Option<Vec<Level>> {
    let Some(mount) = mounts.iter().copied().find(|m| within(path, &m.root)).or(mounts.first().copied()) else {
        unreadable.push(format!("{label} mount (none in /proc/self/mountinfo)"));
        return None;
    };
    if !within(path, &mount.root) {
        unreadable.push(format!("cgroup {path} (outside the {label} mount's root {})", mount.root));
        return None;
    }
    let relative = path[mount.root.trim_end_matches('/').len()..].trim_start_matches('/');
    let own = PathBuf::from(&mount.mount_point).join(relative);
    if !host.exists(&own) {
        unreadable.push(own.display().to_string());
        return None;
    }
    let components: Vec<&str> = relative.split('/').filter(|c| !c.is_empty()).collect();
    let root = mount.root.trim_end_matches('/');
    let levels = (0..=components.len())
        .rev()
        .map(|depth| {
            let below = components[..depth].join("/");
            let cgroup = match (root.is_empty(), below.is_empty()) {
                (true, true) => "/".to_string(),
                (true, false) => format!("/{below}"),
                (false, true) => root.to_string(),
                (false, false) => format!("{root}/{below}"),
            };
            Level { dir: PathBuf::from(&mount.mount_point).join(&below), cgroup }
        })
        .collect();
    Some(levels)
}

/// True when cgroup `path` is `root` or lies below it.
fn within(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    root.is_empty() || path == root || path.strip_prefix(root).is_some_and(|rest| rest.starts_with('/'))
}

/// Keep `quota` when it allows fewer CPUs than the one kept so far.
fn tighten_quota(limits: &mut ProcessLimits, quota: CpuQuota) {
    if limits.cpu_max.as_ref().is_none_or(|q| quota.cpus() < q.cpus()) {
        limits.cpu_max = Some(quota);
    }
}

/// Keep `bytes` (set by `cgroup`) when it is below the limit kept so far.
fn tighten_bytes(slot: &mut Option<CgroupBytes>, bytes: u64, cgroup: &str) {
    if slot.as_ref().is_none_or(|b| bytes < b.bytes) {
        *slot = Some(CgroupBytes { bytes, cgroup: cgroup.to_string() });
    }
}

/// Keep a hierarchy's cpuset when it holds fewer CPUs than the one kept so far (on a real kernel only one hierarchy
/// has the cpuset controller).
fn tighten_cpuset(limits: &mut ProcessLimits, list: String) {
    let cpus = parse_cpu_list(&list).len() as u32;
    if limits.cpuset_cpus.is_none_or(|kept| cpus < kept) {
        limits.cpuset_cpus = Some(cpus);
        limits.cpuset = Some(list);
    }
}

/// Read every cgroup v2 level's limits and keep the tightest of each kind.
fn read_v2_limits(
    host: &Host,
    levels: &[Level],
    limits: &mut ProcessLimits,
    io: &mut Vec<IoLimit>,
    unreadable: &mut Vec<String>,
) {
    let mut cpuset = None;
    for level in levels {
        if let Some(text) = host.read(level.file("cpu.max")) {
            match parse_cpu_max(&text) {
                Ok(Some((quota_us, period_us))) => {
                    tighten_quota(limits, CpuQuota { quota_us, period_us, cgroup: level.cgroup.clone() });
                }
                Ok(None) => {}
                Err(()) => unreadable.push(format!("{} (not 'QUOTA PERIOD')", level.file("cpu.max").display())),
            }
        }
        for (name, slot) in [("memory.max", &mut limits.memory_max), ("memory.high", &mut limits.memory_high)] {
            let Some(text) = host.read(level.file(name)) else { continue };
            match parse_bytes_or_max(&text) {
                Ok(Some(bytes)) => tighten_bytes(slot, bytes, &level.cgroup),
                Ok(None) => {}
                Err(()) => unreadable.push(format!("{} (not a byte count or 'max')", level.file(name).display())),
            }
        }
        // The nearest level that has the file: a cgroup without the cpuset controller enabled has its parent's set.
        if cpuset.is_none() {
            cpuset = host.read(level.file("cpuset.cpus.effective")).filter(|l| !l.is_empty());
        }
        if let Some(text) = host.read(level.file("io.max")) {
            for line in text.lines() {
                merge_io_line(io, line);
            }
        }
    }
    if let Some(list) = cpuset {
        tighten_cpuset(limits, list);
    }
}

/// Read one cgroup v1 controller's limits at every level and keep the tightest. Every v1 cgroup directory has its
/// controller's files (the root's included), so a file that cannot be read is noted, with its path.
fn read_v1_limits(
    host: &Host,
    controller: &str,
    levels: &[Level],
    limits: &mut ProcessLimits,
    io: &mut Vec<IoLimit>,
    unreadable: &mut Vec<String>,
) {
    let read = |path: &Path, unreadable: &mut Vec<String>| {
        let text = host.read(path);
        if text.is_none() {
            unreadable.push(path.display().to_string());
        }
        text
    };
    match controller {
        "cpu" => {
            for level in levels {
                let (quota_file, period_file) = (level.file("cpu.cfs_quota_us"), level.file("cpu.cfs_period_us"));
                let Some(quota) = read(&quota_file, unreadable) else { continue };
                let Some(period) = read(&period_file, unreadable) else { continue };
                match parse_cfs_quota(&quota, &period) {
                    Ok(Some((quota_us, period_us))) => {
                        tighten_quota(limits, CpuQuota { quota_us, period_us, cgroup: level.cgroup.clone() });
                    }
                    Ok(None) => {}
                    Err(()) => unreadable.push(format!(
                        "{} and cpu.cfs_period_us (not a quota of -1 or more microseconds per period)",
                        quota_file.display()
                    )),
                }
            }
        }
        "cpuset" => {
            // Own cgroup first: a v1 cpuset is always a subset of its parent's.
            for level in levels {
                let list = match host.read(level.file("cpuset.effective_cpus")) {
                    Some(list) => Some(list),
                    None => read(&level.file("cpuset.cpus"), unreadable),
                };
                if let Some(list) = list.filter(|l| !l.is_empty()) {
                    tighten_cpuset(limits, list);
                    break;
                }
            }
        }
        "memory" => {
            for (depth, level) in levels.iter().enumerate() {
                // An ancestor whose memory.use_hierarchy is 0 (kernels before 5.11 allowed it) limits only the tasks
                // directly in it, not its descendants.
                if depth > 0 && host.read(level.file("memory.use_hierarchy")).as_deref() == Some("0") {
                    continue;
                }
                let file = level.file("memory.limit_in_bytes");
                let Some(text) = read(&file, unreadable) else { continue };
                match parse_v1_bytes(&text) {
                    Ok(Some(bytes)) => tighten_bytes(&mut limits.memory_max, bytes, &level.cgroup),
                    Ok(None) => {}
                    Err(()) => unreadable.push(format!("{} (not a byte count)", file.display())),
                }
            }
        }
        "blkio" => {
            for level in levels {
                for (name, key) in V1_THROTTLE_FILES {
                    let Some(text) = read(&level.file(name), unreadable) else { continue };
                    for line in text.lines() {
                        let mut words = line.split_whitespace();
                        let (Some(device), Some(value)) = (words.next(), words.next()) else { continue };
                        merge_io_value(io, device, key, value);
                    }
                }
            }
        }
        _ => {}
    }
}

/// The I/O limits on the devices of the storage stack (all of them when no path was probed), named, each device once.
fn narrow_io(mut io: Vec<IoLimit>, storage: Option<&StorageStack>) -> Vec<IoLimit> {
    let devices = storage.map(|s| s.devices.as_slice()).unwrap_or_default();
    if !devices.is_empty() {
        io.retain(|limit| devices.iter().any(|d| d.major_minor == limit.device));
    }
    for limit in &mut io {
        limit.name = devices.iter().find(|d| d.major_minor == limit.device).map(|d| d.name.clone());
    }
    io.retain(|l| l.riops.is_some() || l.wiops.is_some() || l.rbps.is_some() || l.wbps.is_some());
    io.sort_by(|a, b| a.device.cmp(&b.device));
    io
}

/// `cpu.max`: `max 100000` (no quota) or `150000 100000`.
fn parse_cpu_max(text: &str) -> Result<Option<(u64, u64)>, ()> {
    let mut words = text.split_whitespace();
    let quota = words.next().ok_or(())?;
    let period: u64 = words.next().map_or(Ok(100_000), str::parse).map_err(|_| ())?;
    if quota == "max" {
        return Ok(None);
    }
    let quota: u64 = quota.parse().map_err(|_| ())?;
    if period == 0 {
        return Err(());
    }
    Ok(Some((quota, period)))
}

/// cgroup v1 `cpu.cfs_quota_us` (`-1`: no quota) and `cpu.cfs_period_us`.
fn parse_cfs_quota(quota: &str, period: &str) -> Result<Option<(u64, u64)>, ()> {
    let quota: i64 = quota.trim().parse().map_err(|_| ())?;
    let period: u64 = period.trim().parse().map_err(|_| ())?;
    match quota {
        -1 => Ok(None),
        _ if quota < 0 || period == 0 => Err(()),
        _ => Ok(Some((quota as u64, period))),
    }
}

/// `memory.max` and friends: a byte count or `max`.
fn parse_bytes_or_max(text: &str) -> Result<Option<u64>, ()> {
    match text.trim() {
        "max" => Ok(None),
        number => number.parse().map(Some).map_err(|_| ()),
    }
}

/// cgroup v1 `memory.limit_in_bytes`: a byte count, no limit at 2^62 and above.
fn parse_v1_bytes(text: &str) -> Result<Option<u64>, ()> {
    let bytes: u64 = text.trim().parse().map_err(|_| ())?;
    Ok((bytes < V1_UNLIMITED_BYTES).then_some(bytes))
}

/// One `io.max` line, `8:16 rbps=2097152 wbps=max riops=max wiops=120`, folded into the per-device limits.
fn merge_io_line(io: &mut Vec<IoLimit>, line: &str) {
    let mut words = line.split_whitespace();
    let Some(device) = words.next() else { return };
    for word in words {
        if let Some((key, value)) = word.split_once('=') {
            merge_io_value(io, device, key, value);
        }
    }
}

/// One limit (`riops`, `wiops`, `rbps` or `wbps`) on `device` (`major:minor`), folded into the per-device limits: the
/// lower of two values wins, and what is not a number (`max`) is no limit.
fn merge_io_value(io: &mut Vec<IoLimit>, device: &str, key: &str, value: &str) {
    if !device.contains(':') {
        return;
    }
    let Ok(value) = value.parse::<u64>() else { return };
    let at = match io.iter().position(|l| l.device == device) {
        Some(at) => at,
        None => {
            io.push(IoLimit { device: device.to_string(), ..IoLimit::default() });
            io.len() - 1
        }
    };
    let limit = &mut io[at];
    let slot = match key {
        "riops" => &mut limit.riops,
        "wiops" => &mut limit.wiops,
        "rbps" => &mut limit.rbps,
        "wbps" => &mut limit.wbps,
        _ => return,
    };
    *slot = Some(slot.map_or(value, |old| old.min(value)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_max_reads_quota_and_period() {
        assert_eq!(parse_cpu_max("max 100000"), Ok(None));
        assert_eq!(parse_cpu_max("150000 100000"), Ok(Some((150_000, 100_000))));
        assert_eq!(parse_cpu_max("50000"), Ok(Some((50_000, 100_000))));
        assert_eq!(parse_cpu_max("lots 100000"), Err(()));
        assert_eq!(parse_cpu_max("1 0"), Err(()));
    }

    #[test]
    fn cfs_quota_reads_minus_one_as_no_quota() {
        assert_eq!(parse_cfs_quota("-1", "100000"), Ok(None));
        assert_eq!(parse_cfs_quota("50000", "100000"), Ok(Some((50_000, 100_000))));
        assert_eq!(parse_cfs_quota("-2", "100000"), Err(()));
        assert_eq!(parse_cfs_quota("50000", "0"), Err(()));
        assert_eq!(parse_cfs_quota("max", "100000"), Err(()));
    }

    #[test]
    fn v1_memory_limits_at_or_above_2_to_the_62_are_unlimited() {
        assert_eq!(parse_v1_bytes("9223372036854771712"), Ok(None));
        assert_eq!(parse_v1_bytes("4611686018427387904"), Ok(None));
        assert_eq!(parse_v1_bytes("4611686018427387903"), Ok(Some((1 << 62) - 1)));
        assert_eq!(parse_v1_bytes("4294967296"), Ok(Some(4 << 30)));
        assert_eq!(parse_v1_bytes("max"), Err(()));
    }

    #[test]
    fn proc_self_cgroup_names_the_unified_path_and_each_v1_controller() {
        let membership = parse_proc_cgroup(
            "12:pids:/user.slice\n11:blkio:/user.slice\n4:cpu,cpuacct:/user.slice\n3:cpuset:/\n\
             1:name=systemd:/user.slice/session-3.scope\n0::/user.slice/session-3.scope\n",
        );
        assert_eq!(membership.unified.as_deref(), Some("/user.slice/session-3.scope"));
        assert_eq!(
            membership.v1,
            vec![("blkio", "/user.slice".to_string()), ("cpu", "/user.slice".into()), ("cpuset", "/".into())]
        );
        assert_eq!(parse_proc_cgroup("0::/\n"), Membership { unified: Some("/".into()), v1: Vec::new() });
    }

    #[test]
    fn io_max_lines_merge_to_the_tightest() {
        let mut io = Vec::new();
        merge_io_line(&mut io, "8:0 rbps=max wbps=104857600 riops=2000 wiops=max");
        merge_io_line(&mut io, "8:0 riops=1000 wbps=209715200");
        merge_io_line(&mut io, "garbage");
        assert_eq!(io.len(), 1);
        assert_eq!((io[0].riops, io[0].wiops, io[0].rbps, io[0].wbps), (Some(1000), None, None, Some(104_857_600)));
        // A cgroup v1 throttle line lands in the same limits.
        merge_io_value(&mut io, "8:0", "riops", "500");
        merge_io_value(&mut io, "8:0", "wbps", "209715200");
        assert_eq!((io[0].riops, io[0].wbps), (Some(500), Some(104_857_600)));
    }

    #[test]
    fn cgroup_paths_lie_within_mount_roots() {
        assert!(within("/system.slice/x.service", "/"));
        assert!(within("/docker/abc", "/docker/abc"));
        assert!(within("/docker/abc/inner", "/docker/abc"));
        assert!(!within("/docker/abcd", "/docker/abc"));
    }
}
