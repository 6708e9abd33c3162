//! What an oltp run keeps: its attachment ([`OltpDocument`]), read back from a stored run, and the names of its
//! records' tests, metrics and flags.

use crate::arrivals::{Arrivals, RatePlan};
use crate::capacity::CapacityFigures;
use crate::consistency::Check;
use crate::crosscheck::PgbenchFigures;
use crate::figures::StepFigures;
use crate::load::LoadInfo;
use crate::mix::Mix;
use crate::profile::{Profile, WORKLOAD};
use crate::routines::Mode;
use crate::slo::Slo;
use crate::sweep::StopReason;
use envbench_core::model::StoredRun;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The test of the knee's figures.
pub const KNEE_TEST: &str = "knee";
/// The metric of the knee's throughput and its judged latency.
pub const THROUGHPUT_METRIC: &str = "throughput";
pub const P95_METRIC: &str = "latency_p95";

/// The flag of the pgbench cross-check's records.
pub const PGBENCH_FLAG: &str = "pgbench-cross-check";

/// What an OLTP run keeps as its attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OltpDocument {
    pub profile: Profile,
    /// The database, without its password.
    pub target: String,
    pub dialect: String,
    pub server_version: String,
    pub scale: i64,
    pub ramp_seconds: f64,
    pub duration_seconds: f64,
    pub keying_thinking: bool,
    /// Each transaction in a warehouse drawn from all of them (absent from runs stored before the option).
    #[serde(default)]
    pub all_warehouses: bool,
    /// A mix other than TPC-C's (`--mix`; absent: TPC-C's, as every run before the option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Mix>,
    /// Transactions per user of a count-based run (absent: timed steps).
    #[serde(default)]
    pub transactions_per_user: Option<u64>,
    /// Statements from the client or stored routines (runs stored before procedures mode were client-side).
    #[serde(default)]
    pub mode: Mode,
    /// Range partitions of tpcc_order_line (0, and absent from older runs: one plain table).
    #[serde(default)]
    pub partitions: u32,
    /// Clients each user drove (1, and absent from older runs: each user one client).
    #[serde(default = "one")]
    pub clients_per_user: u32,
    pub target_latency_ms: f64,
    pub load: LoadInfo,
    pub steps: Vec<StepFigures>,
    pub knee: Option<usize>,
    pub stop_reason: StopReason,
    pub consistency: Vec<Check>,
    pub pgbench: Vec<PgbenchFigures>,
    /// How the transactions were driven: arrivals, service level, isolation, tries, skew.
    #[serde(flatten)]
    pub drive: Drive,
    /// The seed the users drew their inputs and arrivals from (`--seed`, or the run's own; absent from runs stored
    /// before it was kept, which all drew from one fixed seed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// What `--rate auto` found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityFigures>,
}

/// How a run drove its transactions beyond users and mix, each absent where it is the default (so runs stored before
/// these options read back as they ran: a closed loop at the server's isolation with ten retries, uniform keys).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Drive {
    /// How transactions arrived when not in a closed loop (`--rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopSettings>,
    /// The service level open-loop steps were judged by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// The sessions' isolation level (absent: the server's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// How many times a transaction that failed on a conflict ran at most.
    #[serde(default = "default_max_tries")]
    pub max_tries: u32,
    /// tpcb's Zipfian skew of the accounts (absent: uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew_theta: Option<f64>,
}

impl Default for Drive {
    fn default() -> Drive {
        Drive { open_loop: None, slo: None, isolation: None, max_tries: default_max_tries(), skew_theta: None }
    }
}

impl Drive {
    /// The parameters of results driven this way, each only where it is not the default, so results match only
    /// results driven alike (a closed loop's never an open one's) and runs stored before the options still match.
    pub fn add_parameters(&self, parameters: &mut Value) {
        if let Some(open) = &self.open_loop {
            parameters["rate"] = json!(match open.rate {
                RatePlan::Fixed(rate) => rate.text(),
                RatePlan::Auto => "auto".to_string(),
            });
            parameters["arrivals"] = json!(open.arrivals.name());
            if let Some(limit) = open.latency_limit_ms {
                parameters["latency_limit_ms"] = json!(limit);
            }
        }
        if let Some(slo) = &self.slo {
            parameters["slo"] = json!(slo.text());
        }
        if let Some(level) = &self.isolation {
            parameters["isolation"] = json!(level);
        }
        if self.max_tries != default_max_tries() {
            parameters["max_tries"] = json!(self.max_tries);
        }
        if let Some(theta) = self.skew_theta {
            parameters["skew"] = json!(format!("zipf:{theta}"));
        }
    }

    /// The settings in lines for people, empty for a run at the defaults.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(open) = &self.open_loop {
            out.push_str(&format!(
                "Open loop: {} arrivals{}{}; latencies are response times from each transaction's intended start\n",
                open.arrivals.name(),
                match open.rate {
                    RatePlan::Fixed(rate) => format!(" at {}", rate.text()),
                    RatePlan::Auto => " at rates found step by step (--rate auto)".into(),
                },
                open.latency_limit_ms.map(|ms| format!(", latency limit {ms} ms")).unwrap_or_default()
            ));
        }
        if let Some(slo) = &self.slo {
            out.push_str(&format!("Service level: {}\n", slo.text()));
        }
        if let Some(level) = &self.isolation {
            out.push_str(&format!("Isolation: {level}\n"));
        }
        if self.max_tries != default_max_tries() {
            out.push_str(&format!("Tries: at most {} per transaction that fails on a conflict\n", self.max_tries));
        }
        if let Some(theta) = self.skew_theta {
            out.push_str(&format!("Skew: accounts drawn Zipfian with exponent {theta}\n"));
        }
        out
    }
}

/// How an open-loop run's transactions arrived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopSettings {
    pub rate: RatePlan,
    pub arrivals: Arrivals,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_ms: Option<f64>,
}

fn one() -> u32 {
    1
}

fn default_max_tries() -> u32 {
    crate::users::DEFAULT_MAX_TRIES
}

impl OltpDocument {
    /// The document of a stored run: `None` when it has none, `Err` when it cannot be read.
    pub fn of(run: &StoredRun) -> Option<Result<OltpDocument, String>> {
        let value = run.attachments.get(WORKLOAD)?;
        Some(
            serde_json::from_value(value.clone())
                .map_err(|e| format!("run {}: its oltp record cannot be read ({e})", run.summary.uuid)),
        )
    }

    pub fn knee_step(&self) -> Option<&StepFigures> {
        self.knee.and_then(|k| self.steps.get(k))
    }
}

/// The steps that are no measurement (they ended no transaction, or too many failed), each with why.
pub(crate) fn invalid_steps(d: &OltpDocument) -> Vec<String> {
    d.steps.iter().filter_map(|s| Some(format!("{}: {}", s.test_id(), s.invalid()?))).collect()
}
