//! The storage stack under a path: its mount, and the block device chain from `st_dev` down to physical devices.
//!
//! The device is never guessed from its name: `st_dev` leads to `/sys/dev/block/MAJ:MIN`, and from there partitions
//! lead to their disk, device-mapper and md devices to their `slaves/`. When the major number is 0 (btrfs, overlay,
//! network filesystems) mountinfo's source decides. Storage that memory serves is named with its reason: a RAM file
//! system, a zram or brd RAM disk in the chain, or a loop device reading its backing file through the page cache
//! (`loop/dio` 0) or keeping it on a RAM file system. The path is stat'ed on a helper thread with a time limit, so a
//! dead network mount cannot hang the run; `statvfs` is never called here.

use crate::host::Host;
use crate::mountinfo::{MountEntry, covers, parse_mountinfo};
use crate::system::selected_choice;
use envbench_core::fingerprint::{BlockDevice, NfsInfo, StorageStack, memory_file_system};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long a path may take to answer `stat` before we treat its mount as unresponsive.
const STAT_TIMEOUT: Duration = Duration::from_secs(3);

/// Filesystems whose data lives across a network.
const NETWORK_FILESYSTEMS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
    "lustre",
    "gpfs",
    "afs",
    "9p",
    "fuse.s3fs",
];

/// What can go wrong when probing the storage under a path.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{0}: no such file or directory; give an existing directory")]
    PathNotFound(String),
    #[error("{path}: cannot be read ({reason}); give a directory you can access with --path")]
    PathUnreadable { path: String, reason: String },
    #[error("cannot read /proc/self/mountinfo ({0}); is /proc mounted?")]
    NoMountinfo(String),
    #[error("{0}: no mount in /proc/self/mountinfo covers this path")]
    NoMount(String),
}

/// The mount point of a path whose mount /proc/self/mountinfo does not list.
pub const UNLISTED_MOUNT: &str = "(not listed in /proc/self/mountinfo)";

/// Probe the storage under `path`. Unreadable sysfs attributes become `None`, listed in `unreadable` once per kind.
pub fn probe_storage(host: &Host, path: &Path, unreadable: &mut Vec<String>) -> Result<StorageStack, ProbeError> {
    let Located { absolute, device_number, responsive } = locate(host, path)?;
    let absolute_text = absolute.to_string_lossy().into_owned();
    let mountinfo_path = "/proc/self/mountinfo";
    let text =
        std::fs::read_to_string(host.path(mountinfo_path)).map_err(|e| ProbeError::NoMountinfo(e.to_string()))?;
    let mounts = parse_mountinfo(&text);
    let unlisted;
    let mount = match choose_mount(&mounts, &absolute_text, device_number) {
        Some(mount) => mount,
        // A chroot or container whose root is not a mount: its mountinfo lists no mount above the path. What stat and
        // statfs tell still holds (the device, so its chain in /sys; the file system's type); the rest is unknown.
        None if host.live => {
            let (major, minor) = device_number.unwrap_or((0, 0));
            unlisted = MountEntry {
                major,
                minor,
                root: String::new(),
                mount_point: UNLISTED_MOUNT.into(),
                mount_options: String::new(),
                filesystem: envbench_base::place::file_system_name(&absolute),
                source: String::new(),
                super_options: String::new(),
            };
            unreadable.push(format!(
                "{mountinfo_path} (no mount covers {absolute_text}: the root is not a mount, as in a chroot; the \
                 mount point, source and options are unknown)"
            ));
            &unlisted
        }
        None => return Err(ProbeError::NoMount(absolute_text.clone())),
    };

    let network = NETWORK_FILESYSTEMS.contains(&mount.filesystem.as_str());
    let mut devices = Vec::new();
    if !network && let Some(top) = top_device(host, mount) {
        walk(host, &top, None, 0, &mut devices, unreadable);
    }
    let nfs = mount.filesystem.starts_with("nfs").then(|| nfs_info(mount));
    let memory_backed = memory_backed(&mount.filesystem, &devices, &mounts);
    Ok(StorageStack {
        path: absolute_text,
        mount_point: mount.mount_point.clone(),
        filesystem: mount.filesystem.clone(),
        source: mount.source.clone(),
        mount_options: mount.mount_options.clone(),
        super_options: mount.super_options.clone(),
        device_number: format!("{}:{}", mount.major, mount.minor),
        devices,
        nfs,
        network,
        responsive,
        memory_backed,
    })
}

/// Why memory serves the storage, when it does: a RAM file system, a RAM disk in the chain (zram, brd), a loop
/// device reading its backing file through the page cache (no direct I/O), or a loop device whose backing file is on
/// a RAM file system. Reasons join with `; `.
fn memory_backed(filesystem: &str, devices: &[BlockDevice], mounts: &[MountEntry]) -> Option<String> {
    let mut reasons: Vec<String> = memory_file_system(filesystem).into_iter().collect();
    for device in devices {
        let name = &device.name;
        match device.transport.as_deref() {
            Some("zram") => reasons.push(format!("{name}: a compressed RAM disk (zram)")),
            Some("brd") => reasons.push(format!("{name}: a RAM disk (brd)")),
            _ => {}
        }
        if device.kind != "loop" {
            continue;
        }
        let file = device.backing_file.as_deref().unwrap_or("(unknown)");
        if device.direct_io == Some(false) {
            reasons.push(format!("{name} reads its backing file {file} through the page cache (dio=0)"));
        }
        if let Some(backing) = &device.backing_file
            && let Some(mount) = choose_mount(mounts, backing, None)
            && memory_file_system(&mount.filesystem).is_some()
        {
            reasons.push(format!("{name}'s backing file {backing} is on {} (RAM)", mount.filesystem));
        }
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// Where a path lives, as far as `stat` would tell in time.
struct Located {
    absolute: PathBuf,
    /// `st_dev` as (major, minor); `None` for fixtures and unresponsive mounts.
    device_number: Option<(u32, u32)>,
    responsive: bool,
}

/// The absolute path and its `st_dev`, found on a helper thread so a hung mount cannot hang us. For fixtures the path
/// is taken as given and has no `st_dev`.
fn locate(host: &Host, path: &Path) -> Result<Located, ProbeError> {
    if !host.live {
        let absolute = Path::new("/").join(path.strip_prefix("/").unwrap_or(path));
        return Ok(Located { absolute, device_number: None, responsive: true });
    }
    let lexical = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let owned = path.to_path_buf();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        use std::os::unix::fs::MetadataExt;
        let answer = std::fs::canonicalize(&owned).and_then(|real| {
            let meta = std::fs::metadata(&real)?;
            Ok((real, meta.dev()))
        });
        let _ = sender.send(answer);
    });
    match receiver.recv_timeout(STAT_TIMEOUT) {
        Ok(Ok((real, dev))) => {
            let (major, minor) = (libc::major(dev), libc::minor(dev));
            Ok(Located { absolute: real, device_number: Some((major, minor)), responsive: true })
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ProbeError::PathNotFound(path.display().to_string()))
        }
        Ok(Err(e)) => Err(ProbeError::PathUnreadable { path: path.display().to_string(), reason: e.to_string() }),
        // The stat thread is left behind: it is blocked in the kernel and will end with the process.
        Err(_) => Ok(Located { absolute: lexical, device_number: None, responsive: false }),
    }
}

/// The mount that holds `path`: among mounts covering it, the one matching `st_dev` when known (and not major 0),
/// else the one with the longest mount point, the latest mounted on ties.
fn choose_mount<'a>(mounts: &'a [MountEntry], path: &str, device: Option<(u32, u32)>) -> Option<&'a MountEntry> {
    let covering = || mounts.iter().filter(|m| covers(&m.mount_point, path));
    let longest = |candidates: Vec<&'a MountEntry>| candidates.into_iter().rev().max_by_key(|m| m.mount_point.len());
    if let Some((major, minor)) = device.filter(|(major, _)| *major != 0) {
        let matching: Vec<_> = covering().filter(|m| m.major == major && m.minor == minor).collect();
        if !matching.is_empty() {
            return longest(matching);
        }
    }
    longest(covering().collect())
}

/// The sysfs directory (machine path, symlinks resolved) of the device the filesystem sits on.
fn top_device(host: &Host, mount: &MountEntry) -> Option<PathBuf> {
    if mount.major != 0 {
        return host.resolve(format!("/sys/dev/block/{}:{}", mount.major, mount.minor));
    }
    // Major 0: btrfs and friends name their device in the source.
    let source = mount.source.strip_prefix("/dev/")?;
    if let Some(dm_name) = source.strip_prefix("mapper/") {
        return host.list("/sys/block").into_iter().find_map(|name| {
            (host.read(format!("/sys/block/{name}/dm/name")).as_deref() == Some(dm_name))
                .then(|| host.resolve(format!("/sys/block/{name}")))
                .flatten()
        });
    }
    let name = source.rsplit('/').next()?;
    host.resolve(format!("/sys/class/block/{name}"))
}

fn walk(
    host: &Host,
    dir: &Path,
    holder: Option<&str>,
    depth: u32,
    out: &mut Vec<BlockDevice>,
    unreadable: &mut Vec<String>,
) {
    // A malformed tree must not send us round in circles.
    if depth > 16 {
        return;
    }
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else { return };
    if out.iter().any(|d| d.name == name && d.holder.as_deref() == holder) {
        return;
    }
    let attr = |file: &str| host.read(dir.join(file));
    let is_partition = host.exists(dir.join("partition"));
    let dm_uuid = attr("dm/uuid");
    let md_level = attr("md/level");
    let (kind, below): (String, Vec<PathBuf>) = if is_partition {
        ("partition".into(), dir.parent().map(Path::to_path_buf).into_iter().collect())
    } else if dm_uuid.is_some() || host.exists(dir.join("dm")) {
        (dm_kind(dm_uuid.as_deref().unwrap_or("")), slaves(host, dir))
    } else if let Some(level) = &md_level {
        (level.clone(), slaves(host, dir))
    } else if name.starts_with("loop") {
        ("loop".into(), Vec::new())
    } else {
        ("disk".into(), Vec::new())
    };
    // A partition has no queue of its own: its disk's queue serves it.
    let queue_dir = if host.exists(dir.join("queue")) {
        dir.join("queue")
    } else {
        dir.parent().map(|p| p.join("queue")).unwrap_or_else(|| dir.join("queue"))
    };
    let queue = |file: &str| host.read(queue_dir.join(file));
    if queue("scheduler").is_none() && !unreadable.iter().any(|u| u == "/sys/block/*/queue") {
        unreadable.push("/sys/block/*/queue".into());
    }
    let is_physical = below.is_empty();
    let dir_text = dir.to_string_lossy();
    let disk_dir = if is_partition { dir.parent().unwrap_or(dir) } else { dir };
    let device_attr = |file: &str| host.read(disk_dir.join("device").join(file)).filter(|s| !s.is_empty());
    let transport = transport(&name, &dir_text);
    let is_loop = kind == "loop";
    let iscsi_target = if transport.as_deref() == Some("iscsi") { iscsi_target(host, &dir_text) } else { None };
    out.push(BlockDevice {
        name: name.clone(),
        major_minor: attr("dev").unwrap_or_default(),
        kind,
        holder: holder.map(str::to_string),
        depth,
        is_physical,
        dm_name: attr("dm/name").or_else(|| attr("md/array_name")).filter(|s| !s.is_empty()),
        size_bytes: attr("size").and_then(|s| s.parse::<u64>().ok()).map(|sectors| sectors * 512),
        model: device_attr("model"),
        vendor: device_attr("vendor"),
        transport,
        rotational: queue("rotational").map(|v| v == "1"),
        scheduler: queue("scheduler").map(|s| selected_choice(&s).unwrap_or(s)),
        nr_requests: queue("nr_requests").and_then(|v| v.parse().ok()),
        logical_block_bytes: queue("logical_block_size").and_then(|v| v.parse().ok()),
        physical_block_bytes: queue("physical_block_size").and_then(|v| v.parse().ok()),
        read_ahead_kib: queue("read_ahead_kb").and_then(|v| v.parse().ok()),
        iscsi_target,
        backing_file: attr("loop/backing_file").filter(|_| is_loop),
        direct_io: attr("loop/dio").filter(|_| is_loop).map(|v| v == "1"),
    });
    for next in below {
        walk(host, &next, Some(&name), depth + 1, out, unreadable);
    }
}

/// The devices below a dm or md device, resolved.
fn slaves(host: &Host, dir: &Path) -> Vec<PathBuf> {
    host.list(dir.join("slaves"))
        .into_iter()
        .filter_map(|name| host.resolve(format!("/sys/class/block/{name}")))
        .collect()
}

/// Device-mapper targets by `dm/uuid` prefix, as lsblk and udev name them.
fn dm_kind(uuid: &str) -> String {
    let prefix = uuid.split('-').next().unwrap_or("");
    match prefix {
        "LVM" => "lvm",
        "CRYPT" => "crypt",
        "mpath" => "multipath",
        "part1" | "part2" | "part3" | "part4" => "partition",
        "VDO" => "vdo",
        "stratis" => "stratis",
        _ => "dm",
    }
    .to_string()
}

/// The transport, read from where the device sits in the sysfs device tree.
fn transport(name: &str, sysfs_path: &str) -> Option<String> {
    let has = |needle: &str| sysfs_path.contains(needle);
    let kind = if name.starts_with("nvme") || has("/nvme") {
        "nvme"
    } else if has("/virtio") {
        "virtio"
    } else if has("/session") && has("/host") {
        "iscsi"
    } else if has("/rport-") {
        "fc"
    } else if has("/usb") {
        "usb"
    } else if name.starts_with("mmcblk") || has("/mmc") {
        "mmc"
    } else if has("/vbd-") {
        "xen"
    } else if has("/end_device-") || has("/expander-") || has("/sas_") {
        "sas"
    } else if has("/ata") {
        "sata"
    } else if name.starts_with("loop") {
        "loop"
    } else if name.starts_with("nbd") {
        "nbd"
    } else if name.starts_with("rbd") {
        "rbd"
    } else if name.starts_with("zram") {
        "zram"
    } else if name.strip_prefix("ram").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
        "brd"
    } else if has("/host") && has("/target") {
        "scsi"
    } else {
        return None;
    };
    Some(kind.to_string())
}

/// The target name of the iSCSI session a disk belongs to (`.../sessionN/...` in its sysfs path).
fn iscsi_target(host: &Host, sysfs_path: &str) -> Option<String> {
    let session = sysfs_path.split('/').find(|part| part.starts_with("session") && part[7..].parse::<u32>().is_ok())?;
    host.read(format!("/sys/class/iscsi_session/{session}/targetname"))
}

fn nfs_info(mount: &MountEntry) -> NfsInfo {
    let option = |key: &str| {
        mount.super_options.split(',').chain(mount.mount_options.split(',')).find_map(|opt| {
            let (name, value) = opt.split_once('=')?;
            (name == key).then(|| value.to_string())
        })
    };
    let flag = |word: &str| mount.mount_options.split(',').chain(mount.super_options.split(',')).any(|o| o == word);
    let (server, export) = match mount.source.rsplit_once(':') {
        Some((server, export)) => (Some(server.trim_matches(['[', ']']).to_string()), Some(export.to_string())),
        None => (option("addr"), None),
    };
    let version = option("vers").or_else(|| (mount.filesystem == "nfs4").then(|| "4".to_string()));
    NfsInfo {
        version,
        server,
        export,
        sync: flag("sync"),
        rsize: option("rsize").and_then(|v| v.parse().ok()),
        wsize: option("wsize").and_then(|v| v.parse().ok()),
        protocol: option("proto"),
        recovery: if flag("soft") {
            Some("soft".into())
        } else if flag("hard") {
            Some("hard".into())
        } else {
            None
        },
    }
}

/// The kernel device names the sampler should watch for a storage stack: the top of the chain, then each physical
/// device below it.
pub fn sampled_devices(stack: &envbench_core::fingerprint::StorageStack) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for device in stack.devices.iter().filter(|d| d.depth == 0 || d.is_physical) {
        if !names.contains(&device.name) {
            names.push(device.name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dm_kinds_by_uuid_prefix() {
        assert_eq!(dm_kind("LVM-abc"), "lvm");
        assert_eq!(dm_kind("CRYPT-LUKS2-abc-name"), "crypt");
        assert_eq!(dm_kind("mpath-3600a"), "multipath");
        assert_eq!(dm_kind(""), "dm");
    }

    #[test]
    fn transports_by_sysfs_path() {
        let t = |name, path| transport(name, path);
        assert_eq!(t("vda", "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda").as_deref(), Some("virtio"));
        assert_eq!(
            t("nvme0n1", "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1").as_deref(),
            Some("nvme")
        );
        assert_eq!(
            t("sda", "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda").as_deref(),
            Some("sata")
        );
        assert_eq!(
            t("sdb", "/sys/devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sdb").as_deref(),
            Some("iscsi")
        );
    }

    #[test]
    fn mount_choice_prefers_st_dev_then_longest() {
        let mounts = parse_mountinfo(
            "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
             2 1 8:2 / /data rw - xfs /dev/sda2 rw\n\
             3 1 0:40 / /data/nfs rw - nfs4 srv:/x rw,vers=4.2\n",
        );
        assert_eq!(choose_mount(&mounts, "/data/pg", Some((8, 2))).unwrap().mount_point, "/data");
        assert_eq!(choose_mount(&mounts, "/data/nfs/a", None).unwrap().mount_point, "/data/nfs");
        assert_eq!(choose_mount(&mounts, "/database", None).unwrap().mount_point, "/");
    }
}
