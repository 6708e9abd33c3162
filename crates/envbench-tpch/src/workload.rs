//! `envbench tpch` as the driver registers it ([`TPCH`]): its command, its plan, its fleet side, its suite tables,
//! and how its stored runs are read back (cost units, headline, scaling curve). The command line is in
//! `options.rs`, the checks and the opened target in `plan.rs`, the run itself in `drive.rs`, and what it reports in
//! `measured.rs` and `render.rs`.

use crate::error::TpchError;
use crate::options::TpchArgs;
use crate::plan::plan;
use crate::results::{GEOMEAN_METRIC, GEOMEAN_TEST, QPHH_METRIC, QPHH_TEST, SPEEDUP_METRIC, THREADS_KEY, ThreadPoint};
use crate::results::{WORKLOAD, WORKLOAD_VERSION};
use crate::targets::TargetSpec;
use clap::{Args, FromArgMatches};
use envbench_core::model::StoredRun;
use envbench_core::workload::{Plan, ReadBack, ScalingCurve, ScalingPoint, Workload, WorkloadError, has_option};
use std::path::Path;

/// The TPC-H-derived analytic workload.
pub struct TpchWorkload;

/// The registration of `tpch`.
pub static TPCH: TpchWorkload = TpchWorkload;

impl From<TpchError> for WorkloadError {
    fn from(error: TpchError) -> WorkloadError {
        match error {
            TpchError::Interrupted => WorkloadError::interrupted(),
            TpchError::BadScaleFactor(_)
            | TpchError::ForeignFiles { .. }
            | TpchError::NotEnoughSpace { .. }
            | TpchError::BadOptions(_) => WorkloadError::usage(error.to_string()),
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl Workload for TpchWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        TpchArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "TPC-H-derived analytic queries: power and throughput tests with virtual users, on embedded DataFusion \
             over generated Parquet files, on PostgreSQL or on MySQL/MariaDB.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = TpchArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        let mut run = plan(&args)?;
        run.lock()?;
        Ok(Plan::Run(Box::new(run)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::TpchFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for TpchWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
# Each query five times: the power test and two users' two query sets each.
sf = 0.1
users = 2
sets = 2
"#,
            ),
            "standard" => Some(
                r#"
sf = 1
"#,
            ),
            "smoke" => Some(
                r#"
sf = 0.01
"#,
            ),
            _ => None,
        }
    }

    /// Against a server the sampler should watch the server's data directory, which `tpch` finds itself.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        let server = args.iter().any(|a| matches!(TargetSpec::parse(a), Ok(TargetSpec::Server(_))));
        (!server && !has_option(args, "--dir")).then(|| ("--dir", suite_dir.display().to_string()))
    }
}

impl ReadBack for TpchWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        use crate::results::{GEOMEAN_METRIC, GEOMEAN_TEST, QPHH_METRIC, QPHH_TEST};
        &[
            // TPC-H's price-performance is price per QphH@Size: here, what an hour costs over the queries it does.
            envbench_core::workload::CostUnit {
                metric: QPHH_METRIC,
                tests: QPHH_TEST,
                per: envbench_core::workload::Per::Rate(1.0),
                words: "QphH@Size",
            },
            envbench_core::workload::CostUnit {
                metric: GEOMEAN_METRIC,
                tests: GEOMEAN_TEST,
                per: envbench_core::workload::Per::Execution,
                words: "query (geometric mean time)",
            },
        ]
    }

    fn title(&self) -> Option<&'static str> {
        Some("analytic queries")
    }

    /// Each query's (and refresh function's) elapsed time: one sample per stream that ran it.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &["elapsed"]
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::TPCH_NOISE_MARGIN
    }

    fn more_samples(&self) -> &'static str {
        "--users 2 --sets 2: the power test and four query sets run each query five times"
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Memory]
    }

    /// The threads each query may use (DataFusion's partitions, PostgreSQL's parallel workers).
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &[crate::results::THREADS_KEY]
    }

    fn headline(&self, run: &StoredRun) -> String {
        let sf = run.results.first().and_then(|r| r.record.parameters.get("sf")).cloned().unwrap_or_default();
        let mut parts = vec![format!("SF {sf}")];
        let speedups: Vec<String> = run
            .results
            .iter()
            .filter(|r| r.record.metric == SPEEDUP_METRIC)
            .filter_map(|r| {
                Some(format!("{:.2}x at {} threads", r.record.samples.first()?, r.record.parameters.get("threads")?))
            })
            .collect();
        if !speedups.is_empty() {
            parts.push(format!("speedup {}", speedups.join(", ")));
        }
        if let Some(geomean) = run.median(GEOMEAN_TEST, GEOMEAN_METRIC) {
            parts.push(format!("query geomean {geomean:.3} s"));
        }
        if let Some(qphh) = run.median(QPHH_TEST, QPHH_METRIC) {
            parts.push(format!("QphH@Size {qphh:.0} (TPC-H-derived)"));
        }
        parts.join("; ")
    }

    fn tests_word(&self) -> &'static str {
        "per query"
    }

    /// A thread sweep's curve: the queries' rate (3600 over the geomean) and geomean at each thread count.
    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let points: Vec<ThreadPoint> =
            serde_json::from_value(run.attachments.get(WORKLOAD)?.get(THREADS_KEY)?.clone()).ok()?;
        let points: Vec<ScalingPoint> = points
            .iter()
            .filter_map(|p| {
                let geomean = p.geomean()?;
                Some(ScalingPoint { concurrency: p.threads as f64, throughput: 3600.0 / geomean, latency: geomean })
            })
            .collect();
        (points.len() > 1).then(|| ScalingCurve {
            concurrency_label: "threads".into(),
            concurrency_symbol: "T".into(),
            throughput_label: "queries/h at the geomean".into(),
            latency_label: "query geomean".into(),
            latency_unit: "s".into(),
            points,
            knee: None,
            latency_target: None,
            mark: envbench_core::workload::CurveMark::Knee,
        })
    }
}
