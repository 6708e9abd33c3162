//! Whether a sync write can have reached stable storage: the rules that flag a commit-latency result as possibly not
//! durable, each with its reason. A database's commit waits on this path, and the dangerous "fix" for slow sync
//! writes (sync turned off on an NFS server, a volatile write cache, a RAM-backed file system) makes them very fast
//! and no longer safe. envbench cannot see a server's export or a controller's battery, so it never claims certainty:
//! it says what it saw and what that may mean.

use envbench_core::fingerprint::{MEMORY_FILE_SYSTEMS, StorageStack};
use serde::{Deserialize, Serialize};

/// The flag of a result that may not be durable.
pub const NOT_DURABLE_FLAG: &str = "possibly-not-durable";

/// The plain statement every concern ends with.
pub const NOT_DURABLE_MEANING: &str = "sync writes may not be reaching stable storage (a volatile write cache, sync \
                                       disabled on the server, or a RAM-backed file system)";

/// The fastest median flush a rotational disk or a network round trip can really make, in microseconds.
pub const SLOWEST_HONEST_FLUSH_US: f64 = 50.0;

/// What a sync-write test measured, for the rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyncFigures {
    /// The median latency of a durable write (the write and its flush), in microseconds.
    pub sync_p50_us: f64,
    /// The median latency of the same write without a flush, when it was measured.
    pub plain_p50_us: Option<f64>,
}

/// One rule that fired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Concern {
    /// A short name: `volatile-file-system`, `ram-disk`, `nfs-async`, `faster-than-device`, `free-flush`.
    pub rule: String,
    /// What was seen, for people.
    pub reason: String,
}

fn concern(rule: &str, reason: String) -> Concern {
    Concern { rule: rule.to_string(), reason }
}

/// Whether the mount options (either list) hold `option` as a whole word.
fn has_option(stack: &StorageStack, option: &str) -> bool {
    [&stack.mount_options, &stack.super_options].iter().any(|list| list.split(',').any(|o| o == option))
}

/// The class of the storage for the flush rule: a rotational disk or the network, when it is one.
fn slow_class(stack: &StorageStack) -> Option<&'static str> {
    if stack.network {
        return Some("a network file system");
    }
    let physical: Vec<_> = stack.physical_devices().collect();
    if physical.iter().any(|d| matches!(d.transport.as_deref(), Some("iscsi" | "fc" | "nbd"))) {
        return Some("a network block device");
    }
    if !physical.is_empty() && physical.iter().all(|d| d.rotational == Some(true)) {
        return Some("a rotational disk");
    }
    None
}

/// The rules that fire for sync writes of these figures on this storage; empty when none does.
pub fn concerns(stack: &StorageStack, figures: &SyncFigures) -> Vec<Concern> {
    let mut out = Vec::new();
    if MEMORY_FILE_SYSTEMS.contains(&stack.filesystem.as_str()) {
        out.push(concern(
            "volatile-file-system",
            format!(
                "{} is {}, held in RAM: nothing written there survives a power loss",
                stack.mount_point, stack.filesystem
            ),
        ));
    }
    if let Some(ram) = stack.devices.iter().find(|d| d.name.starts_with("zram") || d.name.starts_with("ram")) {
        out.push(concern("ram-disk", format!("{} lies on {}, a RAM disk", stack.mount_point, ram.name)));
    }
    if stack.nfs.is_some() && has_option(stack, "async") {
        out.push(concern(
            "nfs-async",
            format!(
                "{} is an NFS mount with async: the client may acknowledge writes before the server has them (and \
                 whether the server exports async cannot be seen from here)",
                stack.mount_point
            ),
        ));
    }
    if let Some(class) = slow_class(stack)
        && figures.sync_p50_us < SLOWEST_HONEST_FLUSH_US
    {
        out.push(concern(
            "faster-than-device",
            format!(
                "the median sync write took {:.1} us, faster than {class} can make a write durable (at least \
                 {SLOWEST_HONEST_FLUSH_US:.0} us)",
                figures.sync_p50_us
            ),
        ));
    }
    if let Some(plain) = figures.plain_p50_us
        && plain > 0.0
        && figures.sync_p50_us <= plain * 1.1 + 1.0
    {
        out.push(concern(
            "free-flush",
            format!(
                "the flush costs nothing: a sync write's median {:.1} us against {:.1} us for the same write without \
                 one",
                figures.sync_p50_us, plain
            ),
        ));
    }
    out
}

/// One line for people: the reasons, then what they may mean. `None` when no rule fired.
pub fn explain(concerns: &[Concern]) -> Option<String> {
    (!concerns.is_empty()).then(|| {
        let reasons: Vec<&str> = concerns.iter().map(|c| c.reason.as_str()).collect();
        format!("{}; {NOT_DURABLE_MEANING}", reasons.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_core::fingerprint::{BlockDevice, NfsInfo};

    fn disk(name: &str, transport: &str, rotational: bool) -> BlockDevice {
        BlockDevice {
            name: name.into(),
            kind: "disk".into(),
            is_physical: true,
            transport: Some(transport.into()),
            rotational: Some(rotational),
            ..BlockDevice::default()
        }
    }

    fn mount(filesystem: &str, options: &str, devices: Vec<BlockDevice>) -> StorageStack {
        StorageStack {
            path: "/data".into(),
            mount_point: "/data".into(),
            filesystem: filesystem.into(),
            mount_options: options.into(),
            devices,
            responsive: true,
            ..StorageStack::default()
        }
    }

    fn rules(stack: &StorageStack, sync: f64, plain: Option<f64>) -> Vec<String> {
        concerns(stack, &SyncFigures { sync_p50_us: sync, plain_p50_us: plain }).into_iter().map(|c| c.rule).collect()
    }

    #[test]
    fn an_honest_ssd_raises_nothing() {
        let ssd = mount("ext4", "rw,relatime", vec![disk("vda", "virtio", false)]);
        assert!(rules(&ssd, 450.0, Some(4.0)).is_empty());
        // A fast NVMe flush of 20 us is possible on flash: the device-class rule is for disks and networks.
        assert!(rules(&ssd, 20.0, Some(3.0)).is_empty());
        assert_eq!(explain(&[]), None);
    }

    #[test]
    fn ram_backed_file_systems_are_flagged() {
        let shm = mount("tmpfs", "rw,nosuid,nodev", vec![]);
        assert_eq!(rules(&shm, 2.0, Some(1.9)), ["volatile-file-system", "free-flush"]);
        let text = explain(&concerns(&shm, &SyncFigures { sync_p50_us: 2.0, plain_p50_us: None })).unwrap();
        assert!(text.contains("tmpfs, held in RAM") && text.contains("may not be reaching stable storage"), "{text}");
        let zram = mount("ext4", "rw", vec![disk("zram0", "zram", false)]);
        assert_eq!(rules(&zram, 300.0, None), ["ram-disk"]);
    }

    #[test]
    fn a_rotational_disk_or_network_storage_cannot_flush_in_microseconds() {
        let hdd = mount("xfs", "rw", vec![disk("sda", "sata", true)]);
        assert_eq!(rules(&hdd, 30.0, Some(5.0)), ["faster-than-device"]);
        assert!(rules(&hdd, 8000.0, Some(5.0)).is_empty());
        let lun = mount("ext4", "rw", vec![disk("sdb", "iscsi", false)]);
        assert_eq!(rules(&lun, 12.0, None), ["faster-than-device"]);
    }

    #[test]
    fn nfs_async_and_a_free_flush_are_flagged() {
        let mut nfs = mount("nfs4", "rw,relatime,async", vec![]);
        nfs.network = true;
        nfs.nfs = Some(NfsInfo { version: Some("4.2".into()), ..NfsInfo::default() });
        assert_eq!(rules(&nfs, 900.0, Some(20.0)), ["nfs-async"]);
        assert_eq!(rules(&nfs, 40.0, Some(38.0)), ["nfs-async", "faster-than-device", "free-flush"]);
        let mut synced = nfs.clone();
        synced.mount_options = "rw,sync".into();
        synced.nfs.as_mut().unwrap().sync = true;
        assert!(rules(&synced, 2500.0, Some(30.0)).is_empty());
    }
}
