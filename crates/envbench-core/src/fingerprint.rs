//! The environment fingerprint recorded with every run (specification section 1).
//!
//! Only the data types live here; `envbench-probe` fills them. Fields a machine hides (containers mask much of `/sys`)
//! are `None`, and what could not be read is listed in [`Fingerprint::unreadable`] rather than guessed.

use crate::model::{canonical_json, sha256_hex};
use serde::{Deserialize, Serialize};

/// Everything envbench knows about where a run happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub cpu: CpuInfo,
    pub memory: MemoryInfo,
    pub os: OsInfo,
    pub virtualization: Virtualization,
    /// The storage stack under the data directory, when a path was probed.
    pub storage: Option<StorageStack>,
    /// Sources that exist on most machines but could not be read here (e.g. `/sys/class/dmi/id` in a container).
    pub unreadable: Vec<String>,
}

impl Fingerprint {
    /// A stable hash of the whole fingerprint, used to store each distinct environment once.
    pub fn hash(&self) -> String {
        let value = serde_json::to_value(self).expect("fingerprint serializes");
        sha256_hex(canonical_json(&value).as_bytes())
    }
}

/// Processor topology and settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuInfo {
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub sockets: Option<u32>,
    /// Physical cores, all sockets.
    pub cores: Option<u32>,
    /// Logical CPUs online.
    pub threads: Option<u32>,
    pub threads_per_core: Option<u32>,
    /// `/sys/devices/system/cpu/smt/control`: on, off, forceoff, notsupported, notimplemented.
    pub smt_control: Option<String>,
    /// `/sys/devices/system/cpu/smt/active`.
    pub smt_active: Option<bool>,
    /// cpufreq scaling governor of CPU 0, when the kernel exposes cpufreq.
    pub governor: Option<String>,
    pub numa_nodes: Option<u32>,
    pub caches: Vec<CacheInfo>,
    /// CPU flags that matter to a database: hypervisor, aes, avx2, avx512f, sse4_2.
    pub notable_flags: Vec<String>,
}

/// One cache level as CPU 0 sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheInfo {
    pub level: u32,
    /// Data, Instruction or Unified.
    pub kind: String,
    pub size_bytes: u64,
    /// How many logical CPUs share one instance of this cache.
    pub shared_by_cpus: Option<u32>,
}

/// Memory size and huge pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryInfo {
    pub total_bytes: Option<u64>,
    pub hugepages_total: Option<u64>,
    pub hugepage_size_bytes: Option<u64>,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`, the selected value.
    pub transparent_hugepages: Option<String>,
}

/// Operating system identity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OsInfo {
    pub kernel: Option<String>,
    pub distribution: Option<String>,
    pub hostname: Option<String>,
}

/// Hypervisor and container, detected separately (a container can run inside a VM).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// systemd-detect-virt's names: kvm, qemu, vmware, microsoft, oracle, xen, amazon, google, bhyve, parallels...
    pub hypervisor: Option<String>,
    /// Which check found it, e.g. `dmi:sys_vendor`, `cpuid`, `/proc/xen`.
    pub hypervisor_source: Option<String>,
    /// docker, podman, lxc, systemd-nspawn, wsl...
    pub container: Option<String>,
    pub container_source: Option<String>,
    /// DMI product name, often the cloud instance type (e.g. `m5.large`) or the hardware model.
    pub product_name: Option<String>,
    pub sys_vendor: Option<String>,
}

/// The storage under the data directory: the mount and the block device chain down to physical devices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageStack {
    /// The path that was probed, made absolute.
    pub path: String,
    pub mount_point: String,
    pub filesystem: String,
    /// The mount source, e.g. `/dev/mapper/vg-data` or `server:/export`.
    pub source: String,
    /// Per-mount options (mountinfo field 6).
    pub mount_options: String,
    /// Superblock options (mountinfo's last field).
    pub super_options: String,
    /// `major:minor` of the filesystem.
    pub device_number: String,
    /// The device chain, top (what the filesystem sits on) first, then each layer below in order.
    pub devices: Vec<BlockDevice>,
    pub nfs: Option<NfsInfo>,
    /// True when the path is on a network filesystem (nfs, cifs, ceph, glusterfs...).
    pub network: bool,
    /// False when the path did not answer `stat` in time (a dead network mount); the rest comes from mountinfo only.
    pub responsive: bool,
}

impl StorageStack {
    /// The leaves of the chain: the devices with nothing below them.
    pub fn physical_devices(&self) -> impl Iterator<Item = &BlockDevice> {
        self.devices.iter().filter(|d| d.is_physical)
    }
}

/// One block device in the chain.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name, e.g. `nvme0n1p2`, `dm-0`, `md0`, `sda`.
    pub name: String,
    pub major_minor: String,
    /// partition, disk, lvm, crypt, multipath, dm, raid1, raid0, raid5, raid10, loop...
    pub kind: String,
    /// The device directly above this one in the chain (None for the top).
    pub holder: Option<String>,
    /// 0 for the top, increasing downwards.
    pub depth: u32,
    /// True when nothing lies below (a disk or something we cannot descend).
    pub is_physical: bool,
    /// Device-mapper name (e.g. `vg0-data`) or md name.
    pub dm_name: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    /// nvme, sata, sas, scsi, virtio, iscsi, fc, usb, mmc, xen, loop...
    pub transport: Option<String>,
    pub rotational: Option<bool>,
    /// The active I/O scheduler (the one in brackets).
    pub scheduler: Option<String>,
    pub nr_requests: Option<u32>,
    pub logical_block_bytes: Option<u32>,
    pub physical_block_bytes: Option<u32>,
    pub read_ahead_kib: Option<u32>,
    /// iSCSI target name when the disk belongs to an iSCSI session.
    pub iscsi_target: Option<String>,
}

/// What matters about an NFS mount for database I/O.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NfsInfo {
    /// e.g. `3`, `4.1`, `4.2`.
    pub version: Option<String>,
    pub server: Option<String>,
    pub export: Option<String>,
    /// True when mounted with `sync` (every write synchronous), the case that dominates write results.
    pub sync: bool,
    pub rsize: Option<u64>,
    pub wsize: Option<u64>,
    pub protocol: Option<String>,
    /// `hard` or `soft`.
    pub recovery: Option<String>,
}
