//! What `envbench run` knows of each workload: where the suite points it and which figure heads the scorecard. A
//! workload joins suites by implementing [`SuiteWorkload`] here (and being a command, so its options are parsed and
//! checked by the command that owns them); the suite runner itself names no workload.

use envbench_core::stats::Summary;
use envbench_store::StoredRun;
use std::path::Path;

/// A workload as the suite runner sees it.
pub trait SuiteWorkload: Sync {
    /// The command, and the table name in suite files.
    fn name(&self) -> &'static str;

    /// The option and value that point the workload at the suite's `--dir`, unless the item's own arguments (`args`)
    /// already say where it works.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)>;

    /// The figure a practitioner looks at first, for the scorecard.
    fn headline(&self, run: &StoredRun) -> String;
}

/// Every workload a suite can run, in the order suites list them.
pub const WORKLOADS: &[&dyn SuiteWorkload] = &[&Sysinfo, &Disk, &Ranread, &Cube, &Tpch, &Exec];

/// The workload of a suite item.
pub fn workload(name: &str) -> Option<&'static dyn SuiteWorkload> {
    WORKLOADS.iter().copied().find(|w| w.name() == name)
}

/// The scorecard line of a workload without a headline of its own: its first result.
pub fn first_result(run: &StoredRun) -> String {
    run.results
        .first()
        .and_then(|r| {
            Summary::of(&r.record.samples)
                .map(|s| format!("{} {} {:.3} {}", r.record.test_id, r.record.metric, s.median, r.record.unit))
        })
        .unwrap_or_default()
}

fn has(args: &[String], option: &str) -> bool {
    args.iter().any(|a| a == option || a.starts_with(&format!("{option}=")))
}

/// `--dir` with the suite's directory, unless the item gives its own.
fn suite_dir_option(suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
    (!has(args, "--dir")).then(|| ("--dir", suite_dir.display().to_string()))
}

/// The median of one result of a run.
fn median(run: &StoredRun, test: &str, metric: &str) -> Option<f64> {
    run.results
        .iter()
        .find(|r| r.record.test_id == test && r.record.metric == metric)
        .and_then(|r| Summary::of(&r.record.samples))
        .map(|s| s.median)
}

struct Sysinfo;

impl SuiteWorkload for Sysinfo {
    fn name(&self) -> &'static str {
        "sysinfo"
    }

    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        (!has(args, "--path")).then(|| ("--path", suite_dir.display().to_string()))
    }

    fn headline(&self, run: &StoredRun) -> String {
        let fp = &run.fingerprint;
        format!(
            "{}; {} threads; {}",
            fp.cpu.model.as_deref().unwrap_or("CPU ?"),
            fp.cpu.threads.unwrap_or(0),
            fp.virtualization.hypervisor.as_deref().unwrap_or("bare metal")
        )
    }
}

struct Disk;

impl SuiteWorkload for Disk {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        suite_dir_option(suite_dir, args)
    }

    fn headline(&self, run: &StoredRun) -> String {
        let mut parts = Vec::new();
        if let Some(iops) = median(run, "RND4K Q32T1 read", "iops") {
            parts.push(format!("RND4K Q32T1 read {iops:.0} IOPS"));
        }
        if let Some(mb) = median(run, "SEQ1M Q8T1 read", "throughput") {
            parts.push(format!("SEQ1M Q8T1 read {mb:.0} MB/s"));
        }
        if parts.is_empty()
            && let Some(first) = run.results.iter().find(|r| r.record.metric == "throughput")
        {
            let mb = Summary::of(&first.record.samples).map(|s| s.median).unwrap_or(0.0);
            parts.push(format!("{} {mb:.1} MB/s", first.record.test_id));
        }
        parts.join("; ")
    }
}

struct Ranread;

impl SuiteWorkload for Ranread {
    fn name(&self) -> &'static str {
        "ranread"
    }

    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        suite_dir_option(suite_dir, args)
    }

    fn headline(&self, run: &StoredRun) -> String {
        match (median(run, "knee", "iops"), median(run, "knee", "latency_mean")) {
            (Some(iops), Some(ms)) => format!("knee {iops:.0} IOPS at {ms:.3} ms mean"),
            _ => "no step within the latency target".into(),
        }
    }
}

struct Cube;

impl SuiteWorkload for Cube {
    fn name(&self) -> &'static str {
        "cube"
    }

    /// The cube keeps its data and page files in a directory of its own.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        (!has(args, "--dir")).then(|| ("--dir", suite_dir.join("envbench-cube").display().to_string()))
    }

    fn headline(&self, run: &StoredRun) -> String {
        median(run, "total", "elapsed").map(|s| format!("8-step sequence {s:.2} s")).unwrap_or_default()
    }
}

struct Tpch;

impl SuiteWorkload for Tpch {
    fn name(&self) -> &'static str {
        "tpch"
    }

    /// Against PostgreSQL the sampler should watch the server's data directory, which `tpch` finds itself.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        let postgres = args.iter().any(|a| a.contains("postgres://") || a.contains("postgresql://"));
        if postgres { None } else { suite_dir_option(suite_dir, args) }
    }

    fn headline(&self, run: &StoredRun) -> String {
        let sf = run.results.first().and_then(|r| r.record.parameters.get("sf")).cloned().unwrap_or_default();
        let mut parts = vec![format!("SF {sf}")];
        if let Some(geomean) = median(run, "geomean", "elapsed_geomean") {
            parts.push(format!("query geomean {geomean:.3} s"));
        }
        if let Some(qphh) = median(run, "qphh", "qphh_at_size") {
            parts.push(format!("QphH@Size {qphh:.0} (TPC-H-derived)"));
        }
        parts.join("; ")
    }
}

struct Exec;

impl SuiteWorkload for Exec {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        suite_dir_option(suite_dir, args)
    }

    fn headline(&self, run: &StoredRun) -> String {
        let total: f64 = run
            .results
            .iter()
            .filter(|r| r.record.metric == "elapsed")
            .filter_map(|r| Summary::of(&r.record.samples).map(|s| s.median))
            .sum();
        format!("steps {total:.2} s (sum of medians)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_a_suite_file_may_name_is_implemented() {
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name()).collect();
        assert_eq!(names, envbench_suite::WORKLOADS);
    }

    #[test]
    fn the_suite_directory_is_passed_unless_the_item_says_where() {
        let dir = Path::new("/data");
        let none: Vec<String> = vec![];
        assert_eq!(workload("disk").unwrap().place(dir, &none), Some(("--dir", "/data".into())));
        assert_eq!(workload("sysinfo").unwrap().place(dir, &none), Some(("--path", "/data".into())));
        assert_eq!(workload("cube").unwrap().place(dir, &none), Some(("--dir", "/data/envbench-cube".into())));
        let own = vec!["--dir".to_string(), "/elsewhere".to_string()];
        assert_eq!(workload("ranread").unwrap().place(dir, &own), None);
        let postgres = vec!["--target".to_string(), "postgres://u@db/test".to_string()];
        assert_eq!(workload("tpch").unwrap().place(dir, &postgres), None);
        assert_eq!(workload("tpch").unwrap().place(dir, &none), Some(("--dir", "/data".into())));
        assert!(workload("diks").is_none());
    }
}
