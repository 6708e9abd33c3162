//! The environment fingerprint recorded with every run (specification section 1).
//!
//! Only the data types live here; `envbench-probe` fills them. Fields a machine hides (containers mask much of `/sys`)
//! are `None`, and what could not be read is listed in [`Fingerprint::unreadable`] rather than guessed.

use crate::canonical::{canonical_json, sha256_hex};
use crate::units::ByteSize;
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
    /// What limits this process below what the machine has: CPU affinity, cgroup quotas, cpusets, memory and I/O
    /// limits. Fingerprints stored before it was recorded read back with it empty.
    #[serde(default)]
    pub limits: ProcessLimits,
    /// Sources that exist on most machines but could not be read here (e.g. `/sys/class/dmi/id` in a container).
    pub unreadable: Vec<String>,
}

impl Fingerprint {
    /// The environment in one line, for exports and the scorecard: CPU, threads (and those usable), SMT, hypervisor
    /// or bare metal, and the storage under the data directory.
    pub fn one_line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(model) = &self.cpu.model {
            parts.push(model.clone());
        }
        if let Some(threads) = self.cpu.threads {
            // A process held to fewer CPUs than the machine has says so: `2 threads, 1 usable (affinity)`.
            parts.push(match self.limits.usable_cpus_words(self.cpu.threads) {
                Some(usable) => format!("{threads} threads, {usable}"),
                None => format!("{threads} threads"),
            });
        }
        if let Some(smt) = self.cpu.smt_control_words() {
            parts.push(format!("SMT {smt}"));
        }
        parts.push(self.virtualization.hypervisor.clone().unwrap_or_else(|| "bare metal".into()));
        if let Some(storage) = &self.storage {
            let device = storage
                .physical_devices()
                .map(|d| format!("{}{}", d.name, d.transport.as_ref().map(|t| format!(" ({t})")).unwrap_or_default()))
                .collect::<Vec<_>>()
                .join("+");
            parts.push(if device.is_empty() {
                format!("{} on {}", storage.filesystem, storage.source)
            } else {
                format!("{} on {device}", storage.filesystem)
            });
        }
        parts.join("; ")
    }

    /// A stable hash of the whole fingerprint, used to store each distinct environment once.
    pub fn hash(&self) -> String {
        let value = serde_json::to_value(self).expect("fingerprint serializes");
        sha256_hex(canonical_json(&value).as_bytes())
    }
}

/// A part of an environment that governs a workload's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// Processor model, count, SMT, frequency governor, NUMA.
    Cpu,
    /// Memory size and huge pages (how much fits in caches).
    Memory,
    /// The storage stack under the data directory.
    Storage,
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

impl CpuInfo {
    /// The SMT control in words: `on`, `off`, `forced off`, `not supported`, `not implemented` (the kernel writes the
    /// last three run together).
    pub fn smt_control_words(&self) -> Option<String> {
        self.smt_control.as_deref().map(|control| {
            match control {
                "forceoff" => "forced off",
                "notsupported" => "not supported",
                "notimplemented" => "not implemented",
                other => other,
            }
            .to_string()
        })
    }
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

/// File systems that keep their files in RAM.
pub const MEMORY_FILE_SYSTEMS: &[&str] = &["tmpfs", "ramfs", "devtmpfs", "hugetlbfs"];

/// The flag on every result of a storage-governed run whose storage is memory-backed
/// ([`StorageStack::memory_backed`]): its figures measure RAM, not storage.
pub const MEMORY_BACKED_FLAG: &str = "memory-backed";

/// What the kernel lets this process use, as far as `/proc/self` and the cgroup trees (v2, and the v1 cpu, cpuset,
/// memory and blkio controllers, read into the same fields: `cpu.cfs_quota_us` as `cpu_max`, `memory.limit_in_bytes`
/// as `memory_max`, `blkio.throttle.*` as `io_max`) tell. Each limit is the tightest of the process's cgroup and its
/// ancestors (a parent's `memory.max` limits its children). `None` means no limit was found; what could not be read
/// (a limit file, no cgroup file system) is listed in [`Fingerprint::unreadable`] instead of guessed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessLimits {
    /// The CPUs this process may run on (`Cpus_allowed_list` of `/proc/self/status`, what `sched_getaffinity`
    /// returns), as the kernel writes lists: `0-3,8`.
    pub affinity: Option<String>,
    /// How many CPUs `affinity` holds.
    pub affinity_cpus: Option<u32>,
    /// The process's cgroup v2 path (from `/proc/self/cgroup`), when the unified hierarchy is mounted.
    pub cgroup: Option<String>,
    /// The tightest cgroup `cpu.max` quota.
    pub cpu_max: Option<CpuQuota>,
    /// `cpuset.cpus.effective` of the process's cgroup, when a cpuset controller applies.
    pub cpuset: Option<String>,
    /// How many CPUs `cpuset` holds.
    pub cpuset_cpus: Option<u32>,
    /// The tightest cgroup `memory.max`, in bytes.
    pub memory_max: Option<CgroupBytes>,
    /// The tightest cgroup `memory.high` (where the kernel starts throttling and reclaiming), in bytes.
    pub memory_high: Option<CgroupBytes>,
    /// cgroup `io.max` limits on the devices of the storage stack (all devices when no path was probed).
    pub io_max: Vec<IoLimit>,
    /// The CPUs thread defaults use: the least of the online CPUs, the affinity, the cpuset and the `cpu.max` quota
    /// rounded down (at least 1), as Rust's `std::thread::available_parallelism` counts them.
    pub usable_cpus: Option<u32>,
}

impl ProcessLimits {
    /// True when anything was recorded (fingerprints older than the limits have nothing).
    pub fn is_known(&self) -> bool {
        self.usable_cpus.is_some() || self.affinity.is_some() || self.cgroup.is_some()
    }

    /// What holds the usable CPUs below the `online` ones: `affinity`, `cgroup cpuset`, `cgroup cpu.max` (none when
    /// nothing does, or the usable CPUs are not known).
    pub fn usable_cpus_limited_by(&self, online: Option<u32>) -> Vec<&'static str> {
        let Some(usable) = self.usable_cpus else { return Vec::new() };
        let below = |n: Option<u32>| n.is_some_and(|n| n == usable) && online.is_some_and(|online| usable < online);
        let mut why = Vec::new();
        if below(self.affinity_cpus) {
            why.push("affinity");
        }
        if below(self.cpuset_cpus) {
            why.push("cgroup cpuset");
        }
        if self.cpu_max.as_ref().is_some_and(|q| q.cpus() < f64::from(online.unwrap_or(u32::MAX))) {
            why.push("cgroup cpu.max");
        }
        why
    }

    /// The usable CPUs where fewer than the `online` ones, with what limits them: `1 usable (affinity)`.
    pub fn usable_cpus_words(&self, online: Option<u32>) -> Option<String> {
        let usable = self.usable_cpus.filter(|usable| online.is_some_and(|online| *usable < online))?;
        let why = self.usable_cpus_limited_by(online);
        Some(if why.is_empty() { format!("{usable} usable") } else { format!("{usable} usable ({})", why.join(", ")) })
    }

    /// The affinity with its count against the online CPUs, e.g. `0 (1 of 2 CPUs)`.
    pub fn affinity_text(&self, online_cpus: Option<u32>) -> Option<String> {
        let list = self.affinity.as_ref()?;
        Some(match (self.affinity_cpus, online_cpus) {
            (Some(n), Some(online)) => format!("{list} ({n} of {online} CPUs)"),
            (Some(n), None) => format!("{list} ({n} CPUs)"),
            _ => list.clone(),
        })
    }

    /// The `cpu.max` quota, e.g. `1.5 CPUs (150000/100000 us in /docker/ab)`, or `none`.
    pub fn cpu_max_text(&self) -> String {
        match &self.cpu_max {
            Some(q) => format!("{} CPUs ({}/{} us in {})", cpus_text(q.cpus()), q.quota_us, q.period_us, q.cgroup),
            None => "none".into(),
        }
    }

    /// A memory limit, e.g. `2 GiB (in /docker/ab)`, or `none`.
    pub fn bytes_text(limit: Option<&CgroupBytes>) -> String {
        match limit {
            Some(limit) => format!("{} (in {})", ByteSize(limit.bytes), limit.cgroup),
            None => "none".into(),
        }
    }

    /// The `io.max` limits, e.g. `sda (8:0): 1000 read IOPS, 100 MiB/s written`, or `none`.
    pub fn io_text(&self) -> String {
        if self.io_max.is_empty() {
            return "none".into();
        }
        let devices: Vec<String> = self
            .io_max
            .iter()
            .map(|l| {
                let mut parts = Vec::new();
                parts.extend(l.riops.map(|n| format!("{n} read IOPS")));
                parts.extend(l.wiops.map(|n| format!("{n} write IOPS")));
                parts.extend(l.rbps.map(|n| format!("{}/s read", ByteSize(n))));
                parts.extend(l.wbps.map(|n| format!("{}/s written", ByteSize(n))));
                let name = match &l.name {
                    Some(name) => format!("{name} ({})", l.device),
                    None => l.device.clone(),
                };
                format!("{name}: {}", parts.join(", "))
            })
            .collect();
        devices.join("; ")
    }

    /// The limits that hold the process below its machine, as sentences about `subject` (e.g. `B`), each with the
    /// resource it limits: `B may use 1 of 2 CPUs (affinity)`, `B is held to 1.5 CPUs (cgroup cpu.max)`, `B's memory
    /// is capped at 2 GiB (cgroup memory.max)`.
    pub fn sentences(&self, subject: &str, online_cpus: Option<u32>) -> Vec<(Resource, String)> {
        let mut out = Vec::new();
        let fewer = |n: Option<u32>| matches!((n, online_cpus), (Some(n), Some(online)) if n < online);
        if fewer(self.affinity_cpus) {
            let (n, online) = (self.affinity_cpus.unwrap_or(0), online_cpus.unwrap_or(0));
            out.push((Resource::Cpu, format!("{subject} may use {n} of {online} CPUs (affinity)")));
        }
        if fewer(self.cpuset_cpus) && self.cpuset_cpus != self.affinity_cpus {
            let (n, online) = (self.cpuset_cpus.unwrap_or(0), online_cpus.unwrap_or(0));
            out.push((Resource::Cpu, format!("{subject} may use {n} of {online} CPUs (cgroup cpuset)")));
        }
        if let Some(quota) = &self.cpu_max
            && online_cpus.is_none_or(|online| quota.cpus() < f64::from(online))
        {
            out.push((
                Resource::Cpu,
                format!("{subject} is held to {} CPUs (cgroup cpu.max)", cpus_text(quota.cpus())),
            ));
        }
        if let Some(max) = &self.memory_max {
            out.push((
                Resource::Memory,
                format!("{subject}'s memory is capped at {} (cgroup memory.max)", ByteSize(max.bytes)),
            ));
        }
        if let Some(high) = &self.memory_high {
            out.push((
                Resource::Memory,
                format!("{subject} is throttled above {} of memory (cgroup memory.high)", ByteSize(high.bytes)),
            ));
        }
        if !self.io_max.is_empty() {
            out.push((Resource::Storage, format!("{subject}'s I/O is throttled (cgroup io.max: {})", self.io_text())));
        }
        out
    }
}

/// A CPU count that may be fractional: `2`, `1.5`.
fn cpus_text(cpus: f64) -> String {
    let text = format!("{cpus:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A cgroup `cpu.max` quota: `quota_us` of CPU time per `period_us`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuQuota {
    pub quota_us: u64,
    pub period_us: u64,
    /// The cgroup that sets it (the process's own or an ancestor).
    pub cgroup: String,
}

impl CpuQuota {
    /// The quota as a number of CPUs, e.g. 1.5.
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }
}

/// A byte limit from a cgroup file and the cgroup that sets it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupBytes {
    pub bytes: u64,
    pub cgroup: String,
}

/// The `io.max` limits on one device (`None`: unlimited), each the tightest along the cgroup path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoLimit {
    /// `major:minor`.
    pub device: String,
    /// The kernel name of the device, when it is in the storage stack.
    pub name: Option<String>,
    pub riops: Option<u64>,
    pub wiops: Option<u64>,
    pub rbps: Option<u64>,
    pub wbps: Option<u64>,
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
    /// Why the storage is served from memory, when it is: a RAM file system (tmpfs, ramfs), a RAM disk (zram,
    /// brd), or a loop device reading its backing file through the page cache. Its figures are not storage figures.
    #[serde(default)]
    pub memory_backed: Option<String>,
}

impl StorageStack {
    /// The leaves of the chain: the devices with nothing below them.
    pub fn physical_devices(&self) -> impl Iterator<Item = &BlockDevice> {
        self.devices.iter().filter(|d| d.is_physical)
    }

    /// Why memory serves this storage, when it does: [`StorageStack::memory_backed`], or for fingerprints recorded
    /// before it, a RAM file system.
    pub fn memory_reason(&self) -> Option<String> {
        self.memory_backed.clone().or_else(|| memory_file_system(&self.filesystem))
    }
}

/// The reason a file system of this type is memory-backed, when it is one: `tmpfs: the data directory is in RAM`.
pub fn memory_file_system(filesystem: &str) -> Option<String> {
    MEMORY_FILE_SYSTEMS.contains(&filesystem).then(|| format!("{filesystem}: the data directory is in RAM"))
}

impl StorageStack {
    /// The sentence that keeps a memory-backed side's storage figures from passing as storage, about `subject`
    /// (e.g. `B`): `B's data directory is on tmpfs (RAM): its storage figures are not storage`.
    pub fn memory_sentence(&self, subject: &str) -> Option<String> {
        let reason = self.memory_reason()?;
        Some(if MEMORY_FILE_SYSTEMS.contains(&self.filesystem.as_str()) {
            format!("{subject}'s data directory is on {} (RAM): its storage figures are not storage", self.filesystem)
        } else {
            format!("{subject}'s storage is served from memory ({reason}): its storage figures are not storage")
        })
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
    /// For a loop device: the file behind it (`loop/backing_file`).
    #[serde(default)]
    pub backing_file: Option<String>,
    /// For a loop device: whether it reads and writes its backing file with direct I/O (`loop/dio`); without, the
    /// host's page cache serves it.
    #[serde(default)]
    pub direct_io: Option<bool>,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #55: a process held to fewer CPUs than the machine has says how many it may use, and why.
    #[test]
    fn usable_cpus_in_words() {
        let pinned = ProcessLimits { affinity_cpus: Some(1), usable_cpus: Some(1), ..Default::default() };
        assert_eq!(pinned.usable_cpus_words(Some(2)).as_deref(), Some("1 usable (affinity)"));
        assert_eq!(pinned.usable_cpus_words(Some(1)), None, "all of a 1-CPU machine");
        assert_eq!(ProcessLimits::default().usable_cpus_words(Some(2)), None, "not known");
    }

    #[test]
    fn limits_in_words() {
        let limits = ProcessLimits {
            affinity: Some("0".into()),
            affinity_cpus: Some(1),
            cpu_max: Some(CpuQuota { quota_us: 150_000, period_us: 100_000, cgroup: "/x".into() }),
            memory_max: Some(CgroupBytes { bytes: 2 << 30, cgroup: "/x".into() }),
            io_max: vec![IoLimit {
                device: "8:0".into(),
                name: Some("sda".into()),
                riops: Some(100),
                ..Default::default()
            }],
            ..Default::default()
        };
        let sentences: Vec<String> = limits.sentences("B", Some(2)).into_iter().map(|(_, s)| s).collect();
        assert_eq!(
            sentences,
            [
                "B may use 1 of 2 CPUs (affinity)",
                "B is held to 1.5 CPUs (cgroup cpu.max)",
                "B's memory is capped at 2 GiB (cgroup memory.max)",
                "B's I/O is throttled (cgroup io.max: sda (8:0): 100 read IOPS)",
            ]
        );
        assert_eq!(limits.affinity_text(Some(2)).as_deref(), Some("0 (1 of 2 CPUs)"));
        assert_eq!(limits.cpu_max_text(), "1.5 CPUs (150000/100000 us in /x)");
        // A quota as large as the machine holds nothing back.
        let loose = ProcessLimits {
            cpu_max: Some(CpuQuota { quota_us: 400_000, period_us: 100_000, cgroup: "/".into() }),
            ..Default::default()
        };
        assert!(loose.sentences("A", Some(4)).is_empty());
        assert!(!ProcessLimits::default().is_known());
    }
}
