//! The fingerprint of each fake machine under tests/fixtures, field by field.

use envbench_core::fingerprint::{BlockDevice, CgroupBytes, CpuQuota, Fingerprint, IoLimit};
use envbench_core::sampler::{Pressure, SamplerSeries, StallTimes};
use envbench_probe::{Host, RunCounters, fingerprint, sampled_devices};
use std::path::{Path, PathBuf};

fn probe(fixture: &str, path: &str) -> Fingerprint {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(fixture);
    fingerprint(&Host::fixture(root), Some(Path::new(path))).expect("fixture probes")
}

/// One link of a device chain: (name, kind, holder, depth, physical, transport).
type Link<'a> = (&'a str, &'a str, Option<&'a str>, u32, bool, Option<&'a str>);

fn chain(fp: &Fingerprint) -> Vec<Link<'_>> {
    fp.storage
        .as_ref()
        .unwrap()
        .devices
        .iter()
        .map(|d| {
            (d.name.as_str(), d.kind.as_str(), d.holder.as_deref(), d.depth, d.is_physical, d.transport.as_deref())
        })
        .collect()
}

fn device<'a>(fp: &'a Fingerprint, name: &str) -> &'a BlockDevice {
    fp.storage.as_ref().unwrap().devices.iter().find(|d| d.name == name).unwrap()
}

#[test]
fn nvme_partition_on_a_physical_server() {
    let fp = probe("nvme-partition", "/");
    assert_eq!(fp.cpu.model.as_deref(), Some("Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz"));
    assert_eq!(fp.cpu.vendor.as_deref(), Some("GenuineIntel"));
    assert_eq!(
        (fp.cpu.sockets, fp.cpu.cores, fp.cpu.threads, fp.cpu.threads_per_core),
        (Some(1), Some(4), Some(8), Some(2))
    );
    assert_eq!((fp.cpu.smt_control.as_deref(), fp.cpu.smt_active), (Some("on"), Some(true)));
    assert_eq!(fp.cpu.governor.as_deref(), Some("performance"));
    assert_eq!(fp.cpu.numa_nodes, Some(1));
    assert_eq!(fp.cpu.caches.len(), 2);
    assert_eq!((fp.cpu.caches[1].level, fp.cpu.caches[1].size_bytes), (3, 32 << 20));
    assert_eq!(fp.cpu.notable_flags, vec!["ht", "aes", "sse4_2"]);
    assert_eq!(fp.memory.total_bytes, Some(131916060 * 1024));
    assert_eq!((fp.memory.hugepages_total, fp.memory.hugepage_size_bytes), (Some(1024), Some(2 << 20)));
    assert_eq!(fp.memory.transparent_hugepages.as_deref(), Some("madvise"));
    assert_eq!(fp.os.hostname.as_deref(), Some("db-physical"));
    assert_eq!(fp.os.kernel.as_deref(), Some("6.1.0-18-amd64"));
    assert_eq!(fp.os.distribution.as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
    assert_eq!(fp.virtualization.hypervisor, None);
    assert_eq!(fp.virtualization.container, None);
    assert_eq!(fp.virtualization.sys_vendor.as_deref(), Some("ASRock"));
    let storage = fp.storage.as_ref().unwrap();
    assert_eq!((storage.mount_point.as_str(), storage.filesystem.as_str()), ("/", "ext4"));
    assert_eq!(storage.mount_options, "rw,noatime");
    assert_eq!(storage.device_number, "259:2");
    assert!(!storage.network && storage.responsive);
    assert_eq!(
        chain(&fp),
        vec![
            ("nvme0n1p2", "partition", None, 0, false, Some("nvme")),
            ("nvme0n1", "disk", Some("nvme0n1p2"), 1, true, Some("nvme")),
        ]
    );
    let disk = device(&fp, "nvme0n1");
    assert_eq!(disk.model.as_deref(), Some("INTEL SSDPEDME016T4"));
    assert_eq!(disk.rotational, Some(false));
    assert_eq!(disk.scheduler.as_deref(), Some("none"));
    assert_eq!((disk.logical_block_bytes, disk.physical_block_bytes), (Some(512), Some(512)));
    assert_eq!((disk.nr_requests, disk.read_ahead_kib), (Some(256), Some(128)));
    assert_eq!(disk.size_bytes, Some(3125627568 * 512));
    // The partition reports its disk's queue.
    assert_eq!(device(&fp, "nvme0n1p2").scheduler.as_deref(), Some("none"));
    // A login session on cgroup v2 with nothing limited: every CPU is usable.
    let limits = &fp.limits;
    assert_eq!((limits.affinity.as_deref(), limits.affinity_cpus), (Some("0-7"), Some(8)));
    assert_eq!(limits.cgroup.as_deref(), Some("/user.slice/user-1000.slice/session-1.scope"));
    assert_eq!((limits.cpu_max.as_ref(), limits.memory_max.as_ref(), limits.memory_high.as_ref()), (None, None, None));
    assert_eq!((limits.cpuset.as_deref(), limits.cpuset_cpus), (Some("0-7"), Some(8)));
    assert!(limits.io_max.is_empty());
    assert_eq!(limits.usable_cpus, Some(8));
    assert!(fp.unreadable.is_empty(), "{:?}", fp.unreadable);
}

#[test]
fn lvm_on_md_raid1_on_two_sata_disks() {
    let fp = probe("lvm-md-raid1", "/var/lib/pgsql/data");
    let storage = fp.storage.as_ref().unwrap();
    assert_eq!(storage.mount_point, "/var/lib/pgsql");
    assert_eq!(storage.filesystem, "xfs");
    assert_eq!(storage.source, "/dev/mapper/vg_data-lv_pg");
    assert_eq!(storage.super_options, "rw,attr2,inode64,logbufs=8");
    assert_eq!(
        chain(&fp),
        vec![
            ("dm-0", "lvm", None, 0, false, None),
            ("md0", "raid1", Some("dm-0"), 1, false, None),
            ("sda1", "partition", Some("md0"), 2, false, Some("sata")),
            ("sda", "disk", Some("sda1"), 3, true, Some("sata")),
            ("sdb1", "partition", Some("md0"), 2, false, Some("sata")),
            ("sdb", "disk", Some("sdb1"), 3, true, Some("sata")),
        ]
    );
    assert_eq!(device(&fp, "dm-0").dm_name.as_deref(), Some("vg_data-lv_pg"));
    let sda = device(&fp, "sda");
    assert_eq!(sda.rotational, Some(true));
    assert_eq!(sda.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(sda.model.as_deref(), Some("ST1000NM0033-9ZM"));
    assert_eq!(sampled_devices(storage), vec!["dm-0", "sda", "sdb"]);
    assert_eq!((fp.cpu.cores, fp.cpu.threads), (Some(16), Some(32)));
    assert_eq!(fp.virtualization.hypervisor, None);
}

#[test]
fn virtio_disk_in_a_kvm_guest() {
    let fp = probe("kvm-virtio", "/var/lib");
    // DMI says QEMU, CPUID says KVM: KVM wins, as in systemd-detect-virt.
    assert_eq!(fp.virtualization.hypervisor.as_deref(), Some("kvm"));
    assert_eq!(fp.virtualization.hypervisor_source.as_deref(), Some("cpuid"));
    assert_eq!(fp.virtualization.container, None);
    assert_eq!(fp.cpu.smt_control.as_deref(), Some("notsupported"));
    assert_eq!(fp.cpu.smt_control_words().as_deref(), Some("not supported"), "in words for people");
    assert_eq!(fp.cpu.smt_active, Some(false));
    assert_eq!(fp.cpu.notable_flags, vec!["hypervisor", "sse4_2", "avx2"]);
    assert_eq!(
        chain(&fp),
        vec![
            ("vda1", "partition", None, 0, false, Some("virtio")),
            ("vda", "disk", Some("vda1"), 1, true, Some("virtio")),
        ]
    );
    let vda = device(&fp, "vda");
    assert_eq!(vda.model, None);
    assert_eq!(vda.vendor.as_deref(), Some("0x1af4"));
    assert_eq!(fp.storage.as_ref().unwrap().mount_options, "rw,relatime");
}

#[test]
fn iscsi_lun_in_a_vmware_guest() {
    let fp = probe("iscsi", "/mnt/iscsi/db");
    assert_eq!(fp.virtualization.hypervisor.as_deref(), Some("vmware"));
    assert_eq!(chain(&fp), vec![("sdb", "disk", None, 0, true, Some("iscsi"))]);
    let sdb = device(&fp, "sdb");
    assert_eq!(sdb.iscsi_target.as_deref(), Some("iqn.2005-10.org.freenas.ctl:essbase"));
    assert_eq!(sdb.vendor.as_deref(), Some("FreeNAS"));
    assert_eq!((fp.cpu.sockets, fp.cpu.cores, fp.cpu.threads_per_core), (Some(2), Some(8), Some(1)));
    assert_eq!(fp.cpu.numa_nodes, Some(2));
}

#[test]
fn nfs_mount_with_sync() {
    let fp = probe("nfs-sync", "/mnt/essbase/app");
    let storage = fp.storage.as_ref().unwrap();
    assert_eq!(storage.filesystem, "nfs4");
    assert!(storage.network);
    assert!(storage.devices.is_empty());
    let nfs = storage.nfs.as_ref().unwrap();
    assert_eq!(nfs.version.as_deref(), Some("4.2"));
    assert_eq!(nfs.server.as_deref(), Some("10.0.0.5"));
    assert_eq!(nfs.export.as_deref(), Some("/mnt/tank/essbase"));
    assert!(nfs.sync);
    assert_eq!((nfs.rsize, nfs.wsize), (Some(131072), Some(131072)));
    assert_eq!(nfs.protocol.as_deref(), Some("tcp"));
    assert_eq!(nfs.recovery.as_deref(), Some("hard"));
}

#[test]
fn smt_switched_off() {
    let fp = probe("smt-off", "/data");
    assert_eq!(fp.cpu.smt_control.as_deref(), Some("off"));
    assert_eq!(fp.cpu.smt_active, Some(false));
    assert_eq!(
        (fp.cpu.sockets, fp.cpu.cores, fp.cpu.threads, fp.cpu.threads_per_core),
        (Some(2), Some(16), Some(16), Some(1))
    );
    assert_eq!(fp.cpu.governor.as_deref(), Some("powersave"));
    assert_eq!(fp.cpu.numa_nodes, Some(2));
    assert_eq!(chain(&fp), vec![("sda", "disk", None, 0, true, Some("scsi"))]);
    assert_eq!(device(&fp, "sda").model.as_deref(), Some("MR9265-8i"));
    // cgroup v1 only, and the process's cgroup directories are missing from the v1 mounts: they are listed as
    // unreadable, not guessed; the affinity still counts.
    assert_eq!(fp.limits.cgroup, None);
    assert_eq!((fp.limits.cpu_max.as_ref(), fp.limits.memory_max.as_ref()), (None, None));
    assert_eq!(fp.limits.usable_cpus, Some(16));
    assert_eq!(
        fp.unreadable,
        vec![
            "/sys/fs/cgroup/cpu,cpuacct/system.slice/essbase.service",
            "/sys/fs/cgroup/memory/system.slice/essbase.service"
        ]
    );
}

#[test]
fn docker_container_on_a_kvm_host() {
    let fp = probe("container", "/srv");
    assert_eq!(fp.virtualization.container.as_deref(), Some("docker"));
    assert_eq!(fp.virtualization.container_source.as_deref(), Some("/.dockerenv"));
    assert_eq!(fp.virtualization.hypervisor.as_deref(), Some("kvm"));
    assert_eq!(fp.virtualization.product_name, None);
    let storage = fp.storage.as_ref().unwrap();
    assert_eq!((storage.filesystem.as_str(), storage.device_number.as_str()), ("overlay", "0:52"));
    assert!(storage.devices.is_empty());
    assert_eq!(fp.unreadable, vec!["/sys/class/dmi/id"]);
    // docker run --cpus=1.5 --memory=2g --cpuset-cpus=0-1 without a cgroup namespace: the cgroup2 mount's root is the
    // container's own cgroup.
    let limits = &fp.limits;
    assert_eq!(limits.cgroup.as_deref(), Some("/docker/3f2a9c1b7d4e"));
    let quota = limits.cpu_max.as_ref().unwrap();
    assert_eq!((quota.quota_us, quota.period_us, quota.cgroup.as_str()), (150_000, 100_000, "/docker/3f2a9c1b7d4e"));
    assert_eq!(quota.cpus(), 1.5);
    assert_eq!(limits.memory_max, Some(CgroupBytes { bytes: 2 << 30, cgroup: "/docker/3f2a9c1b7d4e".into() }));
    assert_eq!(limits.memory_high, None);
    assert_eq!((limits.cpuset.as_deref(), limits.affinity_cpus), (Some("0-1"), Some(2)));
    // No block device under an overlay: every io.max line is kept.
    assert_eq!(limits.io_max.len(), 1);
    assert_eq!((limits.io_max[0].device.as_str(), limits.io_max[0].riops), ("254:0", Some(500)));
    // Two CPUs online and allowed, a quota of 1.5: thread defaults (available_parallelism) use 1.
    assert_eq!((fp.cpu.threads, limits.usable_cpus), (Some(2), Some(1)));
}

#[test]
fn a_service_limited_by_its_slice_and_pinned_to_half_the_cpus() {
    let fp = probe("cgroup-limits", "/var/lib/postgresql");
    let limits = &fp.limits;
    assert_eq!(limits.cgroup.as_deref(), Some("/system.slice/postgresql.service"));
    assert_eq!((limits.affinity.as_deref(), limits.affinity_cpus), (Some("0-3"), Some(4)));
    // The slice's quota and memory.max are tighter than the service's own: they are the ones that limit.
    assert_eq!(
        limits.cpu_max,
        Some(CpuQuota { quota_us: 200_000, period_us: 100_000, cgroup: "/system.slice".into() })
    );
    assert_eq!(limits.memory_max, Some(CgroupBytes { bytes: 8 << 30, cgroup: "/system.slice".into() }));
    assert_eq!(
        limits.memory_high,
        Some(CgroupBytes { bytes: 6 << 30, cgroup: "/system.slice/postgresql.service".into() })
    );
    // The service has no cpuset file of its own: the nearest ancestor's effective set applies.
    assert_eq!((limits.cpuset.as_deref(), limits.cpuset_cpus), (Some("0-7"), Some(8)));
    // io.max: only the data disk's line, each limit the tightest along the path (riops from the slice).
    assert_eq!(
        limits.io_max,
        vec![IoLimit {
            device: "8:0".into(),
            name: Some("sda".into()),
            riops: Some(1000),
            wiops: None,
            rbps: None,
            wbps: Some(100 << 20)
        }]
    );
    // 8 online, 4 allowed, a quota of 2 CPUs.
    assert_eq!((fp.cpu.threads, limits.usable_cpus), (Some(8), Some(2)));
    assert!(fp.unreadable.is_empty(), "{:?}", fp.unreadable);
}

#[test]
fn a_service_limited_through_cgroup_v1() {
    let fp = probe("cgroup-v1", "/data/pg");
    let limits = &fp.limits;
    // No unified hierarchy: no cgroup v2 path, but every v1 controller is read.
    assert_eq!(limits.cgroup, None);
    // cpu.cfs_quota_us 50000 per cpu.cfs_period_us 100000 on the service (-1 above it): half a CPU.
    assert_eq!(
        limits.cpu_max,
        Some(CpuQuota { quota_us: 50_000, period_us: 100_000, cgroup: "/system.slice/postgresql.service".into() })
    );
    assert_eq!(limits.cpu_max.as_ref().unwrap().cpus(), 0.5);
    // The cpuset cgroup /pinned narrows the 8 CPUs to 2.
    assert_eq!((limits.cpuset.as_deref(), limits.cpuset_cpus), (Some("2-3"), Some(2)));
    // memory.limit_in_bytes: the slice's 4 GiB is tighter than the service's 8 GiB, and the root's
    // 9223372036854771712 is no limit. The soft limit is not memory.high.
    assert_eq!(limits.memory_max, Some(CgroupBytes { bytes: 4 << 30, cgroup: "/system.slice".into() }));
    assert_eq!(limits.memory_high, None);
    // blkio throttles: only the data disk sdb's, each the tightest along the path (read IOPS from the slice).
    assert_eq!(
        limits.io_max,
        vec![IoLimit {
            device: "8:16".into(),
            name: Some("sdb".into()),
            riops: Some(1000),
            wiops: None,
            rbps: None,
            wbps: Some(100 << 20)
        }]
    );
    // 8 online and allowed, 2 in the cpuset, half a CPU of quota: thread defaults use 1 (never 0).
    assert_eq!((fp.cpu.threads, limits.affinity_cpus, limits.usable_cpus), (Some(8), Some(8), Some(1)));
    assert!(fp.unreadable.is_empty(), "{:?}", fp.unreadable);
}

#[test]
fn a_docker_container_on_a_cgroup_v1_host() {
    let fp = probe("cgroup-v1-docker", "/srv");
    assert_eq!(fp.virtualization.container.as_deref(), Some("docker"));
    let limits = &fp.limits;
    // Each v1 mount's root is the container's cgroup: it is the only level, named by its full path.
    assert_eq!(
        limits.cpu_max,
        Some(CpuQuota { quota_us: 150_000, period_us: 100_000, cgroup: "/docker/9b1e0c7a2f3d".into() })
    );
    // No cpuset.effective_cpus on this kernel: cpuset.cpus says it.
    assert_eq!((limits.cpuset.as_deref(), limits.cpuset_cpus), (Some("0-1"), Some(2)));
    // No --memory: memory.limit_in_bytes is the "unlimited" sentinel.
    assert_eq!(limits.memory_max, None);
    assert!(limits.io_max.is_empty());
    assert_eq!((fp.cpu.threads, limits.usable_cpus), (Some(4), Some(1)));
    // A kernel without blkio throttling has no throttle files: each is listed as unreadable.
    let throttle = |name: &str| format!("/sys/fs/cgroup/blkio/blkio.throttle.{name}_device");
    let mut expected = vec!["/sys/class/dmi/id".to_string()];
    expected.extend(["read_bps", "read_iops", "write_bps", "write_iops"].map(throttle));
    assert_eq!(fp.unreadable, expected);
}

#[test]
fn a_hybrid_host_reads_cgroup_v2_and_v1_and_keeps_the_tightest() {
    let fp = probe("cgroup-hybrid", "/home");
    let limits = &fp.limits;
    assert_eq!(limits.cgroup.as_deref(), Some("/user.slice/user-1000.slice/session-3.scope"));
    // v2 memory.max is 3 GiB on user.slice; v1 memory.limit_in_bytes is 2 GiB on user-1000.slice (user.slice's 1 GiB
    // counts only its own tasks, its memory.use_hierarchy being 0). The tightest wins, with the cgroup that sets it.
    assert_eq!(limits.memory_max, Some(CgroupBytes { bytes: 2 << 30, cgroup: "/user.slice/user-1000.slice".into() }));
    // memory.high comes from v2 only.
    assert_eq!(
        limits.memory_high,
        Some(CgroupBytes { bytes: 1536 << 20, cgroup: "/user.slice/user-1000.slice/session-3.scope".into() })
    );
    // The CPU quota and the cpuset come from v1.
    assert_eq!(limits.cpu_max, Some(CpuQuota { quota_us: 200_000, period_us: 100_000, cgroup: "/user.slice".into() }));
    assert_eq!((limits.cpuset.as_deref(), limits.cpuset_cpus), (Some("0-3"), Some(4)));
    assert!(limits.io_max.is_empty());
    assert_eq!((fp.cpu.threads, limits.usable_cpus), (Some(4), Some(2)));
    assert!(fp.unreadable.is_empty(), "{:?}", fp.unreadable);
}

#[test]
fn without_proc_self_the_limits_are_unreadable_not_guessed() {
    let fp = probe("kvm-virtio", "/var/lib");
    assert_eq!((fp.limits.affinity.as_deref(), fp.limits.cgroup.as_deref()), (None, None));
    assert!(fp.unreadable.contains(&"/proc/self/cgroup".to_string()), "{:?}", fp.unreadable);
    assert!(fp.unreadable.contains(&"/proc/self/status Cpus_allowed_list".to_string()), "{:?}", fp.unreadable);
    // The online CPUs still bound what thread defaults use.
    assert_eq!(fp.limits.usable_cpus, fp.cpu.threads);
}

#[test]
fn container_env_variable_names_the_manager() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/container");
    let mut host = Host::fixture(root);
    host.container_env = Some("podman".into());
    let fp = fingerprint(&host, None).unwrap();
    assert_eq!(fp.virtualization.container.as_deref(), Some("podman"));
    assert_eq!(fp.virtualization.container_source.as_deref(), Some("$container"));
    assert!(fp.storage.is_none());
}

#[test]
fn fingerprint_hash_is_stable_and_sensitive() {
    let a = probe("smt-off", "/data");
    let b = probe("smt-off", "/data");
    assert_eq!(a.hash(), b.hash());
    assert_ne!(a.hash(), probe("nvme-partition", "/").hash());
}

#[test]
fn memory_backed_storage_is_detected_with_its_reason() {
    let reason = |path: &str| probe("memory-backed", path).storage.unwrap().memory_backed;
    assert_eq!(reason("/dev/shm/db").as_deref(), Some("tmpfs: the data directory is in RAM"));
    assert_eq!(reason("/mnt/ramfs").as_deref(), Some("ramfs: the data directory is in RAM"));
    assert_eq!(reason("/mnt/zram/pg").as_deref(), Some("zram0: a compressed RAM disk (zram)"));
    assert_eq!(reason("/mnt/brd").as_deref(), Some("ram0: a RAM disk (brd)"));
    assert_eq!(
        reason("/mnt/loop-cached/data").as_deref(),
        Some("loop0 reads its backing file /var/lib/images/db.img through the page cache (dio=0)")
    );
    // Direct I/O to a file on a real disk: storage figures are the disk's.
    assert_eq!(reason("/mnt/loop-direct"), None);
    assert_eq!(reason("/mnt/loop-on-shm").as_deref(), Some("loop2's backing file /dev/shm/disk.img is on tmpfs (RAM)"));
    // The real disk is not.
    assert_eq!(reason("/home"), None);

    let fp = probe("memory-backed", "/mnt/loop-cached");
    let loop0 = device(&fp, "loop0");
    assert_eq!((loop0.kind.as_str(), loop0.transport.as_deref()), ("loop", Some("loop")));
    assert_eq!((loop0.backing_file.as_deref(), loop0.direct_io), (Some("/var/lib/images/db.img"), Some(false)));
    let direct = probe("memory-backed", "/mnt/loop-direct");
    assert_eq!(device(&direct, "loop1").direct_io, Some(true));
    assert_eq!(device(&probe("memory-backed", "/mnt/brd"), "ram0").transport.as_deref(), Some("brd"));
    // Only loop devices carry the loop attributes.
    assert_eq!(device(&probe("memory-backed", "/"), "sda").backing_file, None);
}

/// The counters of one of the `contention` trees (a 10-second run on 2 CPUs).
fn counters(tree: &str) -> RunCounters {
    RunCounters::read(&Host::fixture(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/contention").join(tree),
    ))
}

/// A 10-second run's series with the contention between two trees.
fn ten_seconds(start: &str, end: &str, drives_local_server: bool) -> SamplerSeries {
    SamplerSeries {
        wall_seconds: 10.0,
        whole_run: Some(counters(end).since(&counters(start), drives_local_server)),
        ..SamplerSeries::default()
    }
}

#[test]
fn a_loop_in_another_process_disturbs_the_run() {
    let series = ten_seconds("start", "busy-end", false);
    let run = series.whole_run.as_ref().unwrap();
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // 12 s of CPU in all; envbench 2 s, and its child and grandchild still running at the end 0.7 s.
    assert!(near(run.contention.busy_cpu_seconds, 12.0) && near(run.contention.own_cpu_seconds, 2.7), "{run:?}");
    assert!(near(run.local_server_cpu_seconds, 3.1) && near(run.steal_percent, 0.0), "{run:?}");
    assert_eq!(run.own_storage_bytes, Some(41 << 20));
    assert_eq!(
        run.contention.pressure,
        Some(Pressure {
            cpu: StallTimes { some_us: 2_000_000, full_us: 0 },
            io: StallTimes { some_us: 800_000, full_us: 300_000 },
            memory: StallTimes::default(),
        })
    );
    assert_eq!(
        series.disturbance().unwrap().reason,
        "disturbed: other processes used 93% of a CPU; tasks waited for a CPU 20% of the time (steal 0.0%, io \
         pressure 3%)"
    );
    // When the run drives the local PostgreSQL, its 3.1 s are the workload's: the loop still disturbs.
    let driven = ten_seconds("start", "busy-end", true).disturbance().unwrap();
    assert!(driven.reason.starts_with("disturbed: other processes used 62% of a CPU"), "{}", driven.reason);
}

#[test]
fn a_run_alone_on_the_machine_is_not_disturbed() {
    let series = ten_seconds("start", "quiet-end", false);
    let run = series.whole_run.as_ref().unwrap();
    assert!((run.other_cpu_seconds() - 0.3).abs() < 1e-9, "{run:?}");
    assert_eq!(series.disturbance(), None);
}

#[test]
fn without_pressure_stall_information_steal_and_other_cpu_still_judge() {
    assert!(!counters("no-psi").has_pressure());
    assert!(counters("start").has_pressure());
    let series = ten_seconds("no-psi", "busy-end", false);
    assert_eq!(series.whole_run.as_ref().unwrap().contention.pressure, None);
    assert_eq!(
        series.disturbance().unwrap().reason,
        "disturbed: other processes used 93% of a CPU (steal 0.0%, no pressure stall information)"
    );
}
