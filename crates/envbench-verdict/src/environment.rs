//! The environment table: each side's fingerprint as named fields, and which of them differ between sides.

use crate::side::Side;
use envbench_core::fingerprint::{BlockDevice, Fingerprint, ProcessLimits};
use envbench_core::workload::Resource;
use serde::Serialize;

/// One line of the environment table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnvironmentField {
    /// What the line is about, e.g. `SMT`, `Mount options`.
    pub name: String,
    /// One value per side; a side whose runs ran in several environments shows their values joined by ` | `.
    pub values: Vec<String>,
    /// True when the sides do not all show the same value.
    pub differs: bool,
}

/// An environment as people tell environments apart: CPU model and count, memory, hypervisor, and the storage
/// under the data directory (file system and physical device), with a short stable id of those fields. Two runs on
/// the same hardware and storage share an identity whatever their host names; the run's label is shown beside it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct EnvironmentIdentity {
    /// Ten hex digits of the SHA-256 of `name`.
    pub id: String,
    /// E.g. `AMD EPYC 7B13 x2 CPUs, 24 GiB, kvm, ext4 on virtio disk`.
    pub name: String,
}

/// The identity of the environment a fingerprint describes.
pub fn environment_identity(fp: &Fingerprint) -> EnvironmentIdentity {
    let cpu = fp.cpu.model.clone().unwrap_or_else(|| "unknown CPU".into());
    let cpu = cpu.split_whitespace().collect::<Vec<_>>().join(" ");
    // A run held to fewer CPUs than its machine has is another environment: its threads have less to run on.
    let usable = fp.limits.usable_cpus.filter(|usable| fp.cpu.threads.is_some_and(|online| *usable < online));
    let mut parts = vec![match (fp.cpu.threads, usable) {
        (Some(n), Some(usable)) => format!("{cpu} x{n} CPUs ({usable} usable)"),
        (Some(n), None) => format!("{cpu} x{n} CPUs"),
        (None, _) => cpu,
    }];
    // Whole GiB: the kernel's own reservations move MemTotal by megabytes between kernels and boots.
    parts.extend(fp.memory.total_bytes.map(|b| format!("{:.0} GiB", b as f64 / (1u64 << 30) as f64)));
    parts.push(fp.virtualization.hypervisor.clone().unwrap_or_else(|| "bare metal".into()));
    if let Some(storage) = &fp.storage {
        let devices: Vec<String> = storage
            .physical_devices()
            // By what the device is, not the kernel's name for it (nvme0n1 and nvme1n1 swap across reboots).
            .map(|d| match (&d.transport, &d.model) {
                (Some(transport), Some(model)) => format!("{transport} {model}"),
                (Some(transport), None) => format!("{transport} disk"),
                (None, Some(model)) => model.clone(),
                (None, None) => d.name.clone(),
            })
            .collect();
        let under = if devices.is_empty() { storage.source.clone() } else { devices.join(" + ") };
        // RAM is not storage: a memory-backed data directory is an environment of its own.
        let memory = if storage.memory_reason().is_some() { " (memory-backed)" } else { "" };
        parts.push(format!("{} on {under}{memory}", storage.filesystem));
    }
    let name = parts.join(", ");
    let id = envbench_core::model::sha256_hex(name.as_bytes())[..10].to_string();
    EnvironmentIdentity { id, name }
}

/// The fields that show what limits the process (affinity, cgroup quotas) or serves its storage from memory: a
/// verdict states them as sentences ([`limit_sentences`]) rather than field by field.
pub(crate) const LIMIT_FIELDS: &[&str] =
    &["Usable CPUs", "CPU affinity", "CPU quota", "Cpuset", "Memory limit", "I/O limits", "Memory-backed storage"];

/// What holds a fingerprint's process below its machine, in words about `subject`, with the resource each limits.
pub(crate) fn limit_sentences(fp: &Fingerprint, subject: &str) -> Vec<(Resource, String)> {
    let mut sentences = fp.limits.sentences(subject, fp.cpu.threads);
    sentences.extend(fp.storage.as_ref().and_then(|s| s.memory_sentence(subject)).map(|s| (Resource::Storage, s)));
    sentences
}

/// True when memory serves a fingerprint's data directory.
pub fn memory_backed(fp: &Fingerprint) -> bool {
    fp.storage.as_ref().is_some_and(|s| s.memory_reason().is_some())
}

/// Per side, each limit that holds it below its machine, in words: `B may use 1 of 2 CPUs (affinity)`.
pub fn side_notes(sides: &[Side]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for (index, side) in sides.iter().enumerate() {
        let letter = crate::words::side_letter(index);
        for run in &side.runs {
            for (_, sentence) in limit_sentences(&run.fingerprint, &letter) {
                if !notes.contains(&sentence) {
                    notes.push(sentence);
                }
            }
        }
    }
    notes
}

/// Fields that differ on every machine and say nothing about performance stay out of the short list of differences.
const NOT_A_DIFFERENCE: &[&str] = &["Host"];

/// The environment table of some sides.
pub fn environment_table(sides: &[Side]) -> Vec<EnvironmentField> {
    let per_side: Vec<Vec<(&'static str, String)>> = sides
        .iter()
        .map(|side| {
            let mut fingerprints: Vec<&Fingerprint> = Vec::new();
            for run in &side.runs {
                if !fingerprints.contains(&&run.fingerprint) {
                    fingerprints.push(&run.fingerprint);
                }
            }
            let empty = Fingerprint::default();
            if fingerprints.is_empty() {
                fingerprints.push(&empty);
            }
            let described: Vec<Vec<(&'static str, String)>> = fingerprints.iter().copied().map(describe).collect();
            let names: Vec<&'static str> =
                described.first().map(|d| d.iter().map(|(n, _)| *n).collect()).unwrap_or_default();
            names
                .into_iter()
                .enumerate()
                .map(|(index, name)| {
                    let mut values: Vec<String> = Vec::new();
                    for fields in &described {
                        if !values.contains(&fields[index].1) {
                            values.push(fields[index].1.clone());
                        }
                    }
                    (name, values.join(" | "))
                })
                .collect()
        })
        .collect();
    let Some(first) = per_side.first() else { return Vec::new() };
    (0..first.len())
        .map(|index| {
            let values: Vec<String> = per_side.iter().map(|fields| fields[index].1.clone()).collect();
            let name = first[index].0;
            // Limits unknown on one side were not recorded then (older fingerprints): not a difference.
            let compared: Vec<&String> =
                values.iter().filter(|v| !LIMIT_FIELDS.contains(&name) || v.as_str() != UNKNOWN).collect();
            let differs = compared.iter().any(|v| *v != compared[0]);
            EnvironmentField { name: name.to_string(), values, differs }
        })
        .filter(|field| field.values.iter().any(|v| v != UNKNOWN))
        .collect()
}

/// The short list of what differs between the environments, e.g. `SMT: on (active) | off (inactive)`.
pub fn differences(table: &[EnvironmentField]) -> Vec<String> {
    table
        .iter()
        .filter(|field| field.differs && !NOT_A_DIFFERENCE.contains(&field.name.as_str()))
        .map(|field| format!("{}: {}", field.name, field.values.join(" vs ")))
        .collect()
}

const UNKNOWN: &str = "-";

fn or_unknown(value: Option<String>) -> String {
    value.filter(|v| !v.is_empty()).unwrap_or_else(|| UNKNOWN.to_string())
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// A fingerprint as named fields, always the same fields in the same order.
fn describe(fp: &Fingerprint) -> Vec<(&'static str, String)> {
    let cpu = &fp.cpu;
    let topology = [
        cpu.sockets.map(|n| format!("{n} sockets")),
        cpu.cores.map(|n| format!("{n} cores")),
        cpu.threads.map(|n| format!("{n} threads")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    let smt = match (cpu.smt_control_words(), cpu.smt_active) {
        (Some(control), Some(active)) => Some(format!("{control} ({})", if active { "active" } else { "inactive" })),
        (Some(control), None) => Some(control),
        (None, Some(active)) => Some(if active { "active" } else { "inactive" }.to_string()),
        (None, None) => cpu.threads_per_core.map(|t| format!("{t} threads per core")),
    };
    let virt = &fp.virtualization;
    let machine = [virt.sys_vendor.clone(), virt.product_name.clone()].into_iter().flatten().collect::<Vec<_>>();
    let memory = &fp.memory;
    let hugepages = match (memory.hugepages_total, memory.hugepage_size_bytes) {
        (Some(0), _) => Some("none".to_string()),
        (Some(count), Some(size)) => Some(format!("{count} x {} KiB", size / 1024)),
        (Some(count), None) => Some(count.to_string()),
        _ => None,
    };
    let storage = fp.storage.as_ref();
    let filesystem = storage.map(|s| format!("{} on {} ({})", s.filesystem, s.mount_point, s.source));
    let mount_options = storage.map(|s| {
        if s.super_options.is_empty() {
            s.mount_options.clone()
        } else {
            format!("{}; {}", s.mount_options, s.super_options)
        }
    });
    let chain =
        storage.filter(|s| !s.devices.is_empty()).map(|s| s.devices.iter().map(device).collect::<Vec<_>>().join(" > "));
    let physical = storage.map(|s| s.physical_devices().map(physical_device).collect::<Vec<_>>().join("; "));
    let nfs = storage.and_then(|s| s.nfs.as_ref()).map(|n| {
        let mut parts = vec![format!("NFS {}", n.version.as_deref().unwrap_or("?"))];
        if let Some(server) = &n.server {
            parts.push(format!("server {server}"));
        }
        parts.push(if n.sync { "sync".into() } else { "async".into() });
        if let (Some(r), Some(w)) = (n.rsize, n.wsize) {
            parts.push(format!("rsize {r}, wsize {w}"));
        }
        parts.join(", ")
    });
    let iscsi = storage.map(|s| s.devices.iter().filter_map(|d| d.iscsi_target.clone()).collect::<Vec<_>>().join(", "));
    let limits = &fp.limits;
    // Fingerprints from before the limits were recorded show them as unknown; a limit a cgroup-less host cannot have
    // shows as unknown too.
    let known = limits.is_known();
    // A limit read (cgroup v2, or v1 where no unified cgroup path is known) shows; "none" only where a cgroup was read.
    let in_cgroup = |present: bool, text: String| (present || limits.cgroup.is_some()).then_some(text);
    let usable_cpus = limits.usable_cpus.filter(|_| known).map(|usable| {
        let why = limits.usable_cpus_limited_by(cpu.threads);
        let of = cpu.threads.map(|online| format!(" of {online}")).unwrap_or_default();
        if why.is_empty() { format!("{usable}{of}") } else { format!("{usable}{of} ({})", why.join(", ")) }
    });
    let memory_present = limits.memory_max.is_some() || limits.memory_high.is_some();
    let memory_limit = in_cgroup(
        memory_present,
        match (&limits.memory_max, &limits.memory_high) {
            (None, None) => "none".to_string(),
            (max, high) => {
                let mut parts = Vec::new();
                parts.extend(max.as_ref().map(|_| format!("max {}", ProcessLimits::bytes_text(max.as_ref()))));
                parts.extend(high.as_ref().map(|_| format!("high {}", ProcessLimits::bytes_text(high.as_ref()))));
                parts.join(", ")
            }
        },
    );
    vec![
        ("Host", or_unknown(fp.os.hostname.clone())),
        ("CPU", or_unknown(cpu.model.clone())),
        ("Topology", or_unknown(Some(topology))),
        ("SMT", or_unknown(smt)),
        ("Governor", or_unknown(cpu.governor.clone())),
        ("NUMA nodes", or_unknown(cpu.numa_nodes.map(|n| n.to_string()))),
        ("Hypervisor", virt.hypervisor.clone().unwrap_or_else(|| "none (bare metal)".into())),
        ("Container", virt.container.clone().unwrap_or_else(|| "none".into())),
        ("Machine", or_unknown(Some(machine.join(" ")))),
        ("Usable CPUs", or_unknown(usable_cpus)),
        ("CPU affinity", or_unknown(limits.affinity_text(cpu.threads))),
        ("CPU quota", or_unknown(in_cgroup(limits.cpu_max.is_some(), limits.cpu_max_text()))),
        ("Cpuset", or_unknown(limits.cpuset.clone())),
        ("Memory limit", or_unknown(memory_limit)),
        ("I/O limits", or_unknown(in_cgroup(!limits.io_max.is_empty(), limits.io_text()))),
        ("Memory", or_unknown(memory.total_bytes.map(gib))),
        ("Huge pages", or_unknown(hugepages)),
        ("Transparent huge pages", or_unknown(memory.transparent_hugepages.clone())),
        ("Kernel", or_unknown(fp.os.kernel.clone())),
        ("Distribution", or_unknown(fp.os.distribution.clone())),
        ("Filesystem", or_unknown(filesystem)),
        ("Mount options", or_unknown(mount_options)),
        ("Device chain", or_unknown(chain)),
        ("Physical devices", or_unknown(physical)),
        ("Memory-backed storage", or_unknown(storage.map(|s| s.memory_reason().unwrap_or_else(|| "no".into())))),
        ("Network storage", or_unknown(nfs.or_else(|| iscsi.filter(|t| !t.is_empty()).map(|t| format!("iSCSI {t}"))))),
    ]
}

fn device(d: &BlockDevice) -> String {
    format!("{} ({})", d.name, d.kind)
}

fn physical_device(d: &BlockDevice) -> String {
    let mut parts = vec![d.name.clone()];
    parts.extend(d.transport.clone());
    parts.extend(d.model.clone());
    if let Some(rotational) = d.rotational {
        parts.push(if rotational { "rotational".into() } else { "non-rotational".into() });
    }
    if let Some(scheduler) = &d.scheduler {
        parts.push(format!("scheduler {scheduler}"));
    }
    if let Some(n) = d.nr_requests {
        parts.push(format!("nr_requests {n}"));
    }
    if let Some(kib) = d.read_ahead_kib {
        parts.push(format!("read-ahead {kib} KiB"));
    }
    parts.join(", ")
}
