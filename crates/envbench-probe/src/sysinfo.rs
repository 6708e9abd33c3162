//! `envbench sysinfo` as the driver runs it: the fingerprint for people (also shown by `results show`), as JSON, or
//! saved as a run of its own.

use clap::{Args, FromArgMatches};
use envbench_core::ByteSize;
use envbench_core::fingerprint::{BlockDevice, Fingerprint, ProcessLimits};
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Section, Table};
use envbench_core::workload::{
    Envelope, Measured, Plan, Planned, ReadBack, Recording, RunContext, Workload, WorkloadError, has_option,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The name of the workload.
pub const WORKLOAD: &str = "sysinfo";

/// The arguments of `envbench sysinfo`.
#[derive(Args, Debug)]
pub struct SysinfoArgs {
    /// The data directory whose storage stack to describe.
    #[arg(long, default_value = ".")]
    pub path: PathBuf,
    /// Also keep the fingerprint in the results store, as a run of its own.
    #[arg(long)]
    pub save: bool,
}

/// The environment fingerprint as a workload.
pub struct SysinfoWorkload;

/// The registration of `sysinfo`.
pub static SYSINFO: SysinfoWorkload = SysinfoWorkload;

impl Workload for SysinfoWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        1
    }

    fn command(&self) -> clap::Command {
        SysinfoArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Show the environment fingerprint: CPU, SMT, memory, OS, virtualization, and the storage stack under a \
             path.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = SysinfoArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        // The storage of a directory or a file (a database's own file); a FIFO or a device has none to describe.
        if let Ok(metadata) = std::fs::metadata(&args.path)
            && !metadata.is_dir()
            && !metadata.is_file()
        {
            return Err(WorkloadError::usage(format!(
                "--path {}: a FIFO, socket or device, not a data directory; give the directory your database's \
                 files are in",
                envbench_core::text::printable(&args.path.display().to_string())
            )));
        }
        Ok(Plan::Run(Box::new(SysinfoRun { path: args.path, save: args.save })))
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for SysinfoWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
save = true
"#,
            ),
            "standard" => Some(
                r#"
save = true
"#,
            ),
            "smoke" => Some(
                r#"
save = true
"#,
            ),
            _ => None,
        }
    }

    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        (!has_option(args, "--path")).then(|| ("--path", suite_dir.display().to_string()))
    }
}

impl ReadBack for SysinfoWorkload {
    /// A fingerprint measures nothing: no resource governs it.
    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        &[]
    }

    /// `AMD EPYC; 2 threads; kvm`, or with the process held to fewer CPUs, `AMD EPYC; 2 threads, 1 usable
    /// (affinity); kvm`.
    fn headline(&self, run: &StoredRun) -> String {
        let fp = &run.fingerprint;
        let usable = fp.limits.usable_cpus_words(fp.cpu.threads).map(|u| format!(", {u}")).unwrap_or_default();
        format!(
            "{}; {} threads{usable}; {}",
            fp.cpu.model.as_deref().unwrap_or("CPU ?"),
            fp.cpu.threads.unwrap_or(0),
            fp.virtualization.hypervisor.as_deref().unwrap_or("bare metal")
        )
    }
}

struct SysinfoRun {
    path: PathBuf,
    save: bool,
}

impl Planned for SysinfoRun {
    fn data_dir(&self) -> &Path {
        &self.path
    }

    fn recording(&self) -> Recording {
        if self.save { Recording::Unsampled } else { Recording::NotStored }
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        Ok(Box::new(SysinfoMeasured { fingerprint: context.fingerprint.clone() }))
    }
}

struct SysinfoMeasured {
    fingerprint: Fingerprint,
}

impl Measured for SysinfoMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        Vec::new()
    }

    fn attachment(&self) -> Option<Value> {
        None
    }

    /// The fingerprint itself: scripts read `sysinfo --json` as the fingerprint document.
    fn json(&self, _envelope: &Envelope<'_>) -> Value {
        json!(&self.fingerprint)
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(&self.fingerprint)
    }
}

/// The grouped, aligned human view of a fingerprint.
pub fn render(fp: &Fingerprint) -> String {
    const WIDTH: usize = 16;
    let mut out = String::new();
    let cpu = &fp.cpu;
    let mut section = Section::new("CPU");
    section
        .line("Model", cpu.model.clone())
        .line("Vendor", cpu.vendor.clone())
        .line("Topology", topology(fp))
        .line("SMT", smt(fp))
        .line("Governor", cpu.governor.clone())
        .line("NUMA nodes", cpu.numa_nodes.map(|n| n.to_string()))
        .line("Caches", caches(fp))
        .line("Flags", (!cpu.notable_flags.is_empty()).then(|| cpu.notable_flags.join(" ")));
    out.push_str(&section.render(WIDTH));
    out.push('\n');

    let memory = &fp.memory;
    let mut section = Section::new("Memory");
    section.line("Total", memory.total_bytes.map(|b| ByteSize(b).to_string())).line(
        "Huge pages",
        memory.hugepages_total.map(|n| {
            let size = memory.hugepage_size_bytes.map(|s| ByteSize(s).to_string()).unwrap_or_default();
            format!("{n} x {size}")
        }),
    );
    section.line("Transparent HP", memory.transparent_hugepages.clone());
    out.push_str(&section.render(WIDTH));
    out.push('\n');

    let mut section = Section::new("Operating system");
    section
        .line("Distribution", fp.os.distribution.clone())
        .line("Kernel", fp.os.kernel.clone())
        .line("Hostname", fp.os.hostname.clone());
    out.push_str(&section.render(WIDTH));
    out.push('\n');

    let virt = &fp.virtualization;
    let mut section = Section::new("Virtualization");
    let with_source = |value: &Option<String>, source: &Option<String>, none: &str| {
        Some(match (value, source) {
            (Some(v), Some(s)) => format!("{v} (from {s})"),
            (Some(v), None) => v.clone(),
            _ => none.to_string(),
        })
    };
    section
        .line("Hypervisor", with_source(&virt.hypervisor, &virt.hypervisor_source, "none (bare metal)"))
        .line("Container", with_source(&virt.container, &virt.container_source, "none"))
        .line(
            "System",
            match (&virt.sys_vendor, &virt.product_name) {
                (None, None) => None,
                (vendor, product) => Some(
                    format!("{} {}", vendor.as_deref().unwrap_or(""), product.as_deref().unwrap_or(""))
                        .trim()
                        .to_string(),
                ),
            },
        );
    out.push_str(&section.render(WIDTH));

    let limits = &fp.limits;
    if limits.is_known() {
        out.push('\n');
        // "none" is said only where the cgroup v2 tree was read; a limit found through cgroup v1 alone is shown too.
        let v2 = limits.cgroup.is_some();
        let mut section = Section::new("Process limits");
        section
            .line("CPU affinity", limits.affinity_text(fp.cpu.threads))
            .line("cgroup", limits.cgroup.clone())
            .line("CPU quota", (v2 || limits.cpu_max.is_some()).then(|| limits.cpu_max_text()))
            .line("cpuset", limits.cpuset.clone())
            .line(
                "Memory max",
                (v2 || limits.memory_max.is_some()).then(|| ProcessLimits::bytes_text(limits.memory_max.as_ref())),
            )
            .line("Memory high", v2.then(|| ProcessLimits::bytes_text(limits.memory_high.as_ref())))
            .line("I/O limits", (v2 || !limits.io_max.is_empty()).then(|| limits.io_text()))
            .line(
                "Usable CPUs",
                limits.usable_cpus.map(|n| match fp.cpu.threads {
                    Some(online) => format!("{n} of {online} (what thread defaults use)"),
                    None => format!("{n} (what thread defaults use)"),
                }),
            );
        out.push_str(&section.render(WIDTH));
    }

    if let Some(storage) = &fp.storage {
        out.push('\n');
        let mut section = Section::new(format!("Storage under {}", storage.path));
        section
            .line("Mount point", Some(storage.mount_point.clone()))
            .line(
                "Filesystem",
                Some(format!("{} on {} ({})", storage.filesystem, storage.source, storage.device_number)),
            )
            .line("Mount options", Some(storage.mount_options.clone()))
            .line("FS options", Some(storage.super_options.clone()));
        if storage.network {
            section.line("Network", Some("yes: results depend on the network and the server".into()));
        }
        if let Some(reason) = &storage.memory_backed {
            section.line("Memory-backed", Some(format!("YES: {reason}; storage figures here measure RAM")));
        }
        if !storage.responsive {
            section
                .line("Responsive", Some("NO: the path did not answer stat within 3 s (dead network mount?)".into()));
        }
        if let Some(nfs) = &storage.nfs {
            section
                .line("NFS version", nfs.version.clone())
                .line(
                    "NFS server",
                    Some(format!("{}:{}", nfs.server.as_deref().unwrap_or("?"), nfs.export.as_deref().unwrap_or("?"))),
                )
                .line(
                    "NFS writes",
                    Some(if nfs.sync { "sync (every write synchronous)".into() } else { "async".into() }),
                )
                .line("NFS rsize/wsize", Some(format!("{} / {}", opt_bytes(nfs.rsize), opt_bytes(nfs.wsize))))
                .line(
                    "NFS transport",
                    Some(format!(
                        "{} {}",
                        nfs.protocol.as_deref().unwrap_or("?"),
                        nfs.recovery.as_deref().unwrap_or("")
                    )),
                );
        }
        out.push_str(&section.render(WIDTH));
        if !storage.devices.is_empty() {
            out.push_str(&device_table(&storage.devices));
        }
    }
    if !fp.unreadable.is_empty() {
        out.push_str(&format!("\nNot readable here: {}\n", fp.unreadable.join(", ")));
    }
    out
}

fn topology(fp: &Fingerprint) -> Option<String> {
    let cpu = &fp.cpu;
    let threads = cpu.threads?;
    Some(match (cpu.sockets, cpu.cores, cpu.threads_per_core) {
        (Some(sockets), Some(cores), Some(per_core)) => format!(
            "{sockets} socket{}, {cores} cores, {threads} threads ({per_core} per core)",
            if sockets == 1 { "" } else { "s" }
        ),
        _ => format!("{threads} logical CPUs"),
    })
}

fn smt(fp: &Fingerprint) -> Option<String> {
    let control = fp.cpu.smt_control_words()?;
    let active = match fp.cpu.smt_active {
        Some(true) => "active",
        Some(false) => "inactive",
        None => "state unknown",
    };
    Some(format!("{control} ({active})"))
}

fn caches(fp: &Fingerprint) -> Option<String> {
    if fp.cpu.caches.is_empty() {
        return None;
    }
    let parts: Vec<String> = fp
        .cpu
        .caches
        .iter()
        .map(|c| {
            let kind = match c.kind.as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            let shared = c.shared_by_cpus.filter(|n| *n > 1).map(|n| format!(" shared by {n}")).unwrap_or_default();
            format!("L{}{kind} {}{shared}", c.level, ByteSize(c.size_bytes))
        })
        .collect();
    Some(parts.join(", "))
}

fn opt_bytes(value: Option<u64>) -> String {
    value.map(|v| ByteSize(v).to_string()).unwrap_or_else(|| "?".into())
}

fn device_table(devices: &[BlockDevice]) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["  DEVICE", "KIND", "TRANSPORT", "SIZE", "ROT", "SCHED", "NR_REQ", "LOG/PHYS", "READ-AHEAD", "MODEL"],
        &[Left, Left, Left, Right, Left, Left, Right, Right, Right, Left],
    );
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    for device in devices {
        let name = format!(
            "{}{}{}",
            "  ".repeat(device.depth as usize + 1),
            if device.depth > 0 { "└ " } else { "" },
            device.name
        );
        let kind = match &device.dm_name {
            Some(dm) => format!("{} ({dm})", device.kind),
            None => device.kind.clone(),
        };
        let model = match (&device.model, &device.iscsi_target) {
            _ if device.backing_file.is_some() => format!(
                "backing file {}{}",
                device.backing_file.as_deref().unwrap_or_default(),
                match device.direct_io {
                    Some(true) => " (direct I/O)",
                    Some(false) => " (page cache, dio=0)",
                    None => "",
                }
            ),
            (_, Some(target)) => {
                format!("{} target {target}", device.model.as_deref().unwrap_or("")).trim().to_string()
            }
            (Some(model), None) => model.clone(),
            (None, None) => device.vendor.clone().unwrap_or_else(|| "-".into()),
        };
        table.row(vec![
            name,
            kind,
            text(&device.transport),
            device.size_bytes.map(|b| ByteSize(b).to_string()).unwrap_or_else(|| "-".into()),
            device.rotational.map(|r| if r { "yes" } else { "no" }.to_string()).unwrap_or_else(|| "-".into()),
            text(&device.scheduler),
            device.nr_requests.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            match (device.logical_block_bytes, device.physical_block_bytes) {
                (Some(l), Some(p)) => format!("{l}/{p}"),
                _ => "-".into(),
            },
            device.read_ahead_kib.map(|k| format!("{k} KiB")).unwrap_or_else(|| "-".into()),
            model,
        ]);
    }
    table.render()
}
