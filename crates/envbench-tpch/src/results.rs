//! What a run produced: per query per stream times, stream geometric means, the TPC-H-derived metrics, every
//! failure with its error, and the data/load facts; and its translation into the core result model.

use crate::params::{OrderSource, QueryOrder, QueryParameters};
use crate::targets::{LoadInfo, QueryFailure, TargetKind};
use envbench_core::{Direction, ResultRecord};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The workload name in results.
pub const WORKLOAD: &str = "tpch";
/// Bumped when results stop being comparable with earlier ones (2: the Parquet files are cut into row groups for
/// parallel scans, and the DataFusion target is tuned; 3: query texts in a join order, with Q15's view evaluated once
/// and Q17, Q18 and Q20 decorrelated; see [`crate::queries`]; 4: LZ4_RAW Parquet instead of Snappy, which DataFusion
/// reads about a fifth faster; 5: Q2's correlated minimum is a window over the outer query's rows, which halves
/// DataFusion's Q2 at SF 10; 6: DataFusion's workers read their own column chunks and malloc keeps large blocks,
/// which made its power test about a fifth faster, see `targets::local_files`).
pub const WORKLOAD_VERSION: u32 = 6;
/// What every record of a tpch run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };
/// The test and metric of the stream geometric means, and of QphH@Size: what the scorecard reads.
pub const GEOMEAN_TEST: &str = "geomean";
pub const GEOMEAN_METRIC: &str = "elapsed_geomean";
pub const QPHH_TEST: &str = "qphh";
pub const QPHH_METRIC: &str = "qphh_at_size";
/// The label every metric carries.
pub const DERIVED_NOTE: &str = "TPC-H-derived metrics: not audited, not comparable with published TPC-H results";

/// The test a stream belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Power,
    Throughput,
}

impl Phase {
    /// The step name the OS sampler sees.
    pub fn step(self) -> &'static str {
        match self {
            Phase::Power => "power",
            Phase::Throughput => "throughput",
        }
    }
}

/// How one execution ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "error")]
pub enum ExecutionStatus {
    Ok,
    /// The answer came back but differs from the reference (validation runs at SF 1 only).
    WrongAnswer(String),
    Failed(QueryFailure),
}

impl ExecutionStatus {
    pub fn is_ok(&self) -> bool {
        matches!(self, ExecutionStatus::Ok)
    }
}

/// One query of one query set of one stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryExecution {
    /// 1 to 22.
    pub query: u8,
    /// 0-based query set within the stream.
    pub set: usize,
    /// 1-based position in the set's order.
    pub position: usize,
    pub parameters: QueryParameters,
    pub elapsed_seconds: f64,
    pub rows: usize,
    pub status: ExecutionStatus,
}

/// A refresh function run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RefreshExecution {
    /// `RF1` or `RF2`.
    pub function: String,
    pub update_set: u32,
    pub elapsed_seconds: f64,
    pub status: ExecutionStatus,
}

/// One stream (virtual user).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamOutcome {
    pub phase: Phase,
    /// 0 for the power test, 1.. for throughput streams.
    pub stream: usize,
    /// Where each query set's order came from.
    pub orders: Vec<OrderSource>,
    pub queries: Vec<QueryExecution>,
    pub refreshes: Vec<RefreshExecution>,
    /// Geometric mean of the successful query times; `None` when none succeeded.
    pub geomean_seconds: Option<f64>,
    pub elapsed_seconds: f64,
}

/// A failed, timed-out, cancelled or wrong query or refresh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureReport {
    pub phase: Phase,
    pub stream: usize,
    pub set: usize,
    /// `Q1`..`Q22`, `RF1`, `RF2`, or `session` when the stream could not connect.
    pub what: String,
    pub status: ExecutionStatus,
}

/// The TPC-H-style metrics, each `None` with the reason in `notes` when it could not be computed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Power@Size = 3600 * SF / (product of the query and refresh times)^(1/n).
    pub power_at_size: Option<f64>,
    /// How many timed intervals the power figure uses: 24 with refreshes, 22 without.
    pub power_intervals: usize,
    /// Throughput@Size = S * sets * 22 * 3600 / Ts * SF.
    pub throughput_at_size: Option<f64>,
    /// Ts: the throughput test's wall time.
    pub throughput_seconds: Option<f64>,
    /// QphH@Size = sqrt(Power * Throughput).
    pub qphh_at_size: Option<f64>,
    /// Labels and caveats, always including [`DERIVED_NOTE`].
    pub notes: Vec<String>,
}

/// The key of a thread sweep's points in a run's document.
pub const THREADS_KEY: &str = "threads";

/// One thread count of a `--threads 1,2,4` sweep: the power test run at it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadPoint {
    pub threads: usize,
    pub outcome: TpchOutcome,
}

impl ThreadPoint {
    /// The power test's query geomean, in seconds.
    pub fn geomean(&self) -> Option<f64> {
        self.outcome.streams.iter().find(|s| s.phase == Phase::Power).and_then(|s| s.geomean_seconds)
    }

    /// How many times faster than `base` the queries ran (its geomean over this one's).
    pub fn speedup_over(&self, base: &ThreadPoint) -> Option<f64> {
        Some(base.geomean()? / self.geomean()?)
    }

    /// Parallel efficiency over `base`, in percent: the speedup over the ratio of threads (100%: twice the threads
    /// ran the queries twice as fast).
    pub fn efficiency_over(&self, base: &ThreadPoint) -> Option<f64> {
        Some(self.speedup_over(base)? * base.threads as f64 / self.threads as f64 * 100.0)
    }
}

/// Everything one `tpch` run produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchOutcome {
    pub scale_factor: f64,
    pub target: TargetKind,
    pub users: usize,
    pub sets: usize,
    pub validate: bool,
    pub seed: u64,
    pub order: QueryOrder,
    pub query_timeout_seconds: Option<f64>,
    pub load: LoadInfo,
    pub streams: Vec<StreamOutcome>,
    pub failures: Vec<FailureReport>,
    pub metrics: Metrics,
    /// Set when the refresh functions did not run, with the reason.
    pub refresh_skipped: Option<String>,
    pub interrupted: bool,
}

impl TpchOutcome {
    /// The parameters that define a comparable run (nothing that varies from run to run).
    pub fn parameters(&self) -> serde_json::Value {
        json!({
            "sf": self.scale_factor,
            "target": self.target.as_str(),
            "users": self.users,
            "sets": self.sets,
            "validate": self.validate,
            "seed": self.seed,
        })
    }

    /// The results in the core model: `Q1`..`Q22` elapsed seconds (one sample per stream execution), `geomean`
    /// (one sample per stream), and `power`, `throughput`, `qphh` when computed.
    pub fn records(&self) -> Vec<ResultRecord> {
        let parameters = self.parameters();
        let record = |test_id: String, metric: &str, unit: &str, direction, samples: Vec<f64>, flags: Vec<String>| {
            ResultRecord { flags, ..SOURCE.record(test_id, &parameters, metric, unit, direction, samples) }
        };
        let mut records = Vec::new();
        for query in 1..=22u8 {
            let executions = self.streams.iter().flat_map(|s| s.queries.iter()).filter(|e| e.query == query);
            let (ok, failed): (Vec<&QueryExecution>, Vec<&QueryExecution>) = executions.partition(|e| e.status.is_ok());
            if ok.is_empty() && failed.is_empty() {
                continue;
            }
            let mut flags = Vec::new();
            if !failed.is_empty() {
                flags.push(format!("failed:{}", failed.len()));
            }
            let samples = ok.iter().map(|e| e.elapsed_seconds).collect();
            records.push(record(format!("Q{query}"), "elapsed", "s", Direction::LowerIsBetter, samples, flags));
        }
        for function in ["RF1", "RF2"] {
            let executions = self.streams.iter().flat_map(|s| s.refreshes.iter()).filter(|r| r.function == function);
            let (ok, failed): (Vec<&RefreshExecution>, Vec<&RefreshExecution>) =
                executions.partition(|r| r.status.is_ok());
            if ok.is_empty() && failed.is_empty() {
                continue;
            }
            let flags = if failed.is_empty() { vec![] } else { vec![format!("failed:{}", failed.len())] };
            let samples = ok.iter().map(|r| r.elapsed_seconds).collect();
            records.push(record(function.into(), "elapsed", "s", Direction::LowerIsBetter, samples, flags));
        }
        let geomeans: Vec<f64> = self.streams.iter().filter_map(|s| s.geomean_seconds).collect();
        if !geomeans.is_empty() {
            let flags = if self.failures.is_empty() { vec![] } else { vec!["incomplete".to_string()] };
            records.push(record(GEOMEAN_TEST.into(), GEOMEAN_METRIC, "s", Direction::LowerIsBetter, geomeans, flags));
        }
        let mut derived_flags = vec!["tpch-derived".to_string()];
        if self.refresh_skipped.is_some() {
            derived_flags.push("refresh-skipped".to_string());
        }
        for (test, metric, value) in [
            ("power", "power_at_size", self.metrics.power_at_size),
            ("throughput", "throughput_at_size", self.metrics.throughput_at_size),
            (QPHH_TEST, QPHH_METRIC, self.metrics.qphh_at_size),
        ] {
            if let Some(value) = value {
                let flags = derived_flags.clone();
                records.push(record(test.into(), metric, "queries/h", Direction::HigherIsBetter, vec![value], flags));
            }
        }
        records
    }
}

/// The test id, and the sampler's step prefix, of a thread count of a sweep.
pub fn thread_test_id(threads: usize) -> String {
    format!("T={threads}")
}

/// The metrics of a thread sweep's points beside their queries': speedup and efficiency over the first count.
pub const SPEEDUP_METRIC: &str = "speedup";
pub const EFFICIENCY_METRIC: &str = "efficiency";
