//! `envbench ranread` as the driver runs it: its registration, how it takes part in suites, and how its stored runs
//! read back (the headline, the scaling curve, the original tool's export layout). Its command line and plan are
//! [`crate::options`]'s, a run's preparation and sweep [`crate::run`]'s, what a run keeps and its table
//! [`crate::document`]'s.

use crate::StepFigures;
use crate::document::RanreadDocument;
use crate::error::RanReadError;
use crate::options::RanreadArgs;
use crate::options::plan;
use crate::records::{IOPS_METRIC, KNEE_TEST, LATENCY_MEAN_METRIC, WORKLOAD};
use crate::tsv::TSV_HEADER;
use crate::tsv::tsv_rows;
use clap::{Args, FromArgMatches};
use envbench_core::model::StoredRun;
use envbench_core::workload::{NativeTable, Plan, ReadBack, ScalingCurve, ScalingPoint, Workload, WorkloadError};
use envbench_io::BenchError;

/// The database random-read scaling test.
pub struct RanreadWorkload;

/// The registration of `ranread`.
pub static RANREAD: RanreadWorkload = RanreadWorkload;

impl From<RanReadError> for WorkloadError {
    fn from(error: RanReadError) -> WorkloadError {
        match error {
            RanReadError::Interrupted | RanReadError::Io(BenchError::Interrupted) => WorkloadError::interrupted(),
            RanReadError::BadInput(_) | RanReadError::BadDatabaseUrl { .. } => WorkloadError::usage(error.to_string()),
            RanReadError::Io(error) => error.into(),
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl Workload for RanreadWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        crate::records::WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        RanreadArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Database random-read scaling sweep (RanRead method): jobs rise until the response time passes the target.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = RanreadArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        Ok(Plan::Run(Box::new(plan(args)?)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::RanreadFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for RanreadWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
size = "1g"
jobs = "auto"
duration = "2s"
max_jobs = 32
# A quick look should not leave a 1 GiB file behind.
no_keep = true
"#,
            ),
            "standard" => Some(
                r#"
jobs = "auto"
"#,
            ),
            "smoke" => Some(
                r#"
size = "16m"
jobs = "1,2"
iterations = 100
"#,
            ),
            _ => None,
        }
    }
}

impl ReadBack for RanreadWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: IOPS_METRIC,
            tests: "",
            per: envbench_core::workload::Per::Rate(1000.0),
            words: "1,000 IOPS",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("database random reads")
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::STORAGE_NOISE_MARGIN
    }

    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["jobs"]
    }

    /// Each timed step's IOPS per window: five samples a step for the verdict to test; a step's one `iops` figure
    /// where it has none (steps limited by reads, database mode, older runs).
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[crate::records::IOPS_WINDOW_METRIC, IOPS_METRIC]
    }

    fn more_samples(&self) -> &'static str {
        "--duration 5s: timed steps give five IOPS samples each"
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Storage, Resource::Cpu]
    }

    fn headline(&self, run: &StoredRun) -> String {
        match (run.median(KNEE_TEST, IOPS_METRIC), run.median(KNEE_TEST, LATENCY_MEAN_METRIC)) {
            (Some(iops), Some(ms)) => format!("knee {iops:.0} IOPS at {ms:.3} ms mean"),
            _ => "no step within the latency target".into(),
        }
    }

    fn tests_word(&self) -> &'static str {
        "per step (jobs)"
    }

    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let (points, knee, latency_target) = match RanreadDocument::of(run) {
            Some(Ok(document)) if !document.outcome.steps.is_empty() => {
                let outcome = document.outcome;
                let points = outcome.steps.iter().map(point).collect();
                (points, outcome.knee, Some(outcome.targets.latency_ms))
            }
            // Runs without their document (imported from elsewhere): the curve from the step results.
            _ => from_results(run)?,
        };
        Some(ScalingCurve {
            concurrency_label: "concurrent jobs".into(),
            concurrency_symbol: "J".into(),
            throughput_label: "IOPS".into(),
            latency_label: "mean response time".into(),
            latency_unit: "ms".into(),
            points,
            knee,
            latency_target,
            mark: envbench_core::workload::CurveMark::Knee,
        })
    }

    fn native_tsv(&self, run: &StoredRun) -> Option<Result<NativeTable, String>> {
        Some(RanreadDocument::of(run)?.map(|document| {
            let target = document.target.replace(['\t', '\n', '\r'], " ");
            NativeTable {
                header: TSV_HEADER.iter().map(|h| h.to_string()).collect(),
                rows: tsv_rows(&document.outcome, &target, &document.parameters.limit())
                    .into_iter()
                    .map(|r| r.to_vec())
                    .collect(),
            }
        }))
    }
}

fn point(step: &StepFigures) -> ScalingPoint {
    ScalingPoint { concurrency: f64::from(step.jobs), throughput: step.iops, latency: step.mean_ms }
}

/// The sweep of a run from its `J=<jobs>` results, the knee matched by its IOPS.
fn from_results(run: &StoredRun) -> Option<(Vec<ScalingPoint>, Option<usize>, Option<f64>)> {
    let mut points: Vec<ScalingPoint> = run
        .results
        .iter()
        .filter(|r| r.record.metric == IOPS_METRIC)
        .filter_map(|r| {
            let jobs: f64 = r.record.test_id.strip_prefix("J=")?.parse().ok()?;
            Some(ScalingPoint {
                concurrency: jobs,
                throughput: *r.record.samples.first()?,
                latency: *run.result(&r.record.test_id, LATENCY_MEAN_METRIC)?.samples.first()?,
            })
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    points.sort_by(|a, b| a.concurrency.total_cmp(&b.concurrency));
    let knee = run
        .result(KNEE_TEST, IOPS_METRIC)
        .and_then(|k| k.samples.first())
        .and_then(|iops| points.iter().position(|p| p.throughput == *iops));
    let target = run.result(KNEE_TEST, IOPS_METRIC).and_then(|k| k.parameters.get("target_latency_ms")?.as_f64());
    Some((points, knee, target))
}
