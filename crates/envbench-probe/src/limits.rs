//! What limits this process below what the machine has: the CPUs it may run on (`Cpus_allowed_list`, what
//! `sched_getaffinity` returns), and the cgroup v2 limits on its cgroup and every ancestor up to the cgroup2 mount
//! (`cpu.max`, `cpuset.cpus.effective`, `memory.max`, `memory.high`, `io.max`), each taken at its tightest.
//!
//! The cgroup comes from the `0::/path` line of `/proc/self/cgroup`, found under the cgroup2 mount of
//! `/proc/self/mountinfo` (whose root field says which part of the tree a cgroup namespace shows). Controllers still
//! on cgroup v1 and a missing cgroup file system are listed as unreadable, never guessed.

use crate::cpu::parse_cpu_list;
use crate::host::Host;
use crate::mountinfo::{MountEntry, parse_mountinfo};
use envbench_core::fingerprint::{CgroupBytes, CpuQuota, IoLimit, ProcessLimits, StorageStack};
use std::path::PathBuf;

/// cgroup v1 controllers whose limits would matter here, as `/proc/self/cgroup` names them.
const V1_CONTROLLERS: &[&str] = &["cpu", "cpuset", "memory", "blkio"];

/// Probe the limits of this process. `online_cpus` is the machine's count; `storage` narrows `io.max` to the devices
/// under the data directory.
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
    if let Some(tree) = cgroup_tree(host, unreadable) {
        read_cgroup_limits(host, &tree, storage, &mut limits, unreadable);
        limits.cgroup = Some(tree.path);
    }
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

/// Where the process's cgroup v2 lives.
struct CgroupTree {
    /// The cgroup path as `/proc/self/cgroup` gives it.
    path: String,
    /// The cgroup's directory and each ancestor's that the mount shows, with their cgroup paths, own cgroup first.
    levels: Vec<(PathBuf, String)>,
}

/// Find the process's cgroup v2 directory and its ancestors, noting what is missing.
fn cgroup_tree(host: &Host, unreadable: &mut Vec<String>) -> Option<CgroupTree> {
    let Some(text) = host.read("/proc/self/cgroup") else {
        unreadable.push("/proc/self/cgroup".into());
        return None;
    };
    let mut unified = None;
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else { continue };
        if controllers.is_empty() {
            unified = Some(path.to_string());
        } else {
            for controller in controllers.split(',').filter(|c| V1_CONTROLLERS.contains(c)) {
                unreadable.push(format!("cgroup v1 {controller} controller (its limits are not read)"));
            }
        }
    }
    let path = unified?;
    let mounts = parse_mountinfo(&host.read("/proc/self/mountinfo").unwrap_or_default());
    let cgroup2: Vec<&MountEntry> = mounts.iter().filter(|m| m.filesystem == "cgroup2").collect();
    let Some(mount) = cgroup2.iter().copied().find(|m| within(&path, &m.root)).or(cgroup2.first().copied()) else {
        unreadable.push("cgroup2 mount (none in /proc/self/mountinfo)".into());
        return None;
    };
    if !within(&path, &mount.root) {
        unreadable.push(format!("cgroup {path} (outside the cgroup2 mount's root {})", mount.root));
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
            let dir = PathBuf::from(&mount.mount_point).join(&below);
            let name = match (root.is_empty(), below.is_empty()) {
                (true, true) => "/".to_string(),
                (true, false) => format!("/{below}"),
                (false, true) => root.to_string(),
                (false, false) => format!("{root}/{below}"),
            };
            (dir, name)
        })
        .collect();
    Some(CgroupTree { path, levels })
}

/// True when cgroup `path` is `root` or lies below it.
fn within(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    root.is_empty() || path == root || path.strip_prefix(root).is_some_and(|rest| rest.starts_with('/'))
}

/// Read every level's limits and keep the tightest of each kind.
fn read_cgroup_limits(
    host: &Host,
    tree: &CgroupTree,
    storage: Option<&StorageStack>,
    limits: &mut ProcessLimits,
    unreadable: &mut Vec<String>,
) {
    let mut io: Vec<IoLimit> = Vec::new();
    for (dir, cgroup) in &tree.levels {
        let file = |name: &str| dir.join(name);
        if let Some(text) = host.read(file("cpu.max")) {
            match parse_cpu_max(&text) {
                Ok(Some((quota_us, period_us))) => {
                    let quota = CpuQuota { quota_us, period_us, cgroup: cgroup.clone() };
                    if limits.cpu_max.as_ref().is_none_or(|q| quota.cpus() < q.cpus()) {
                        limits.cpu_max = Some(quota);
                    }
                }
                Ok(None) => {}
                Err(()) => unreadable.push(format!("{} (not 'QUOTA PERIOD')", file("cpu.max").display())),
            }
        }
        for (name, slot) in [("memory.max", &mut limits.memory_max), ("memory.high", &mut limits.memory_high)] {
            let Some(text) = host.read(file(name)) else { continue };
            match parse_bytes_or_max(&text) {
                Ok(Some(bytes)) => {
                    if slot.as_ref().is_none_or(|b| bytes < b.bytes) {
                        *slot = Some(CgroupBytes { bytes, cgroup: cgroup.clone() });
                    }
                }
                Ok(None) => {}
                Err(()) => unreadable.push(format!("{} (not a byte count or 'max')", file(name).display())),
            }
        }
        if limits.cpuset.is_none()
            && let Some(list) = host.read(file("cpuset.cpus.effective")).filter(|l| !l.is_empty())
        {
            limits.cpuset_cpus = Some(parse_cpu_list(&list).len() as u32);
            limits.cpuset = Some(list);
        }
        if let Some(text) = host.read(file("io.max")) {
            for line in text.lines() {
                merge_io_line(&mut io, line);
            }
        }
    }
    let devices = storage.map(|s| s.devices.as_slice()).unwrap_or_default();
    if !devices.is_empty() {
        io.retain(|limit| devices.iter().any(|d| d.major_minor == limit.device));
    }
    for limit in &mut io {
        limit.name = devices.iter().find(|d| d.major_minor == limit.device).map(|d| d.name.clone());
    }
    io.retain(|l| l.riops.is_some() || l.wiops.is_some() || l.rbps.is_some() || l.wbps.is_some());
    io.sort_by(|a, b| a.device.cmp(&b.device));
    limits.io_max = io;
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

/// `memory.max` and friends: a byte count or `max`.
fn parse_bytes_or_max(text: &str) -> Result<Option<u64>, ()> {
    match text.trim() {
        "max" => Ok(None),
        number => number.parse().map(Some).map_err(|_| ()),
    }
}

/// One `io.max` line, `8:16 rbps=2097152 wbps=max riops=max wiops=120`, folded into the per-device limits (the
/// lower of two values wins).
fn merge_io_line(io: &mut Vec<IoLimit>, line: &str) {
    let mut words = line.split_whitespace();
    let Some(device) = words.next().filter(|d| d.contains(':')) else { return };
    let at = match io.iter().position(|l| l.device == device) {
        Some(at) => at,
        None => {
            io.push(IoLimit { device: device.to_string(), ..IoLimit::default() });
            io.len() - 1
        }
    };
    let limit = &mut io[at];
    for word in words {
        let Some((key, value)) = word.split_once('=') else { continue };
        let Ok(value) = value.parse::<u64>() else { continue };
        let slot = match key {
            "riops" => &mut limit.riops,
            "wiops" => &mut limit.wiops,
            "rbps" => &mut limit.rbps,
            "wbps" => &mut limit.wbps,
            _ => continue,
        };
        *slot = Some(slot.map_or(value, |old| old.min(value)));
    }
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
    fn io_max_lines_merge_to_the_tightest() {
        let mut io = Vec::new();
        merge_io_line(&mut io, "8:0 rbps=max wbps=104857600 riops=2000 wiops=max");
        merge_io_line(&mut io, "8:0 riops=1000 wbps=209715200");
        merge_io_line(&mut io, "garbage");
        assert_eq!(io.len(), 1);
        assert_eq!((io[0].riops, io[0].wiops, io[0].rbps, io[0].wbps), (Some(1000), None, None, Some(104_857_600)));
    }

    #[test]
    fn cgroup_paths_lie_within_mount_roots() {
        assert!(within("/system.slice/x.service", "/"));
        assert!(within("/docker/abc", "/docker/abc"));
        assert!(within("/docker/abc/inner", "/docker/abc"));
        assert!(!within("/docker/abcd", "/docker/abc"));
    }
}
