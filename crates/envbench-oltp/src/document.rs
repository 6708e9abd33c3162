//! What an oltp run keeps: its attachment ([`OltpDocument`]), read back from a stored run, and the names of its
//! records' tests, metrics and flags.

use crate::consistency::Check;
use crate::crosscheck::PgbenchFigures;
use crate::load::LoadInfo;
use crate::mix::Mix;
use crate::routines::Mode;
use crate::sweep::StopReason;
use crate::users::StepFigures;
use crate::{Profile, WORKLOAD};
use envbench_core::model::StoredRun;
use serde::{Deserialize, Serialize};

/// The test of the knee's figures.
pub const KNEE_TEST: &str = "knee";
/// The metric of the knee's throughput and its judged latency.
pub const THROUGHPUT_METRIC: &str = "throughput";
pub const P95_METRIC: &str = "latency_p95";

/// The flag of the pgbench cross-check's records.
pub const PGBENCH_FLAG: &str = "pgbench-cross-check";

/// The test id, and the sampler's step name, of a step of `users` users.
pub fn step_test_id(users: u32) -> String {
    format!("U={users}")
}

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
}

fn one() -> u32 {
    1
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
    d.steps.iter().filter_map(|s| Some(format!("{}: {}", step_test_id(s.users), s.invalid()?))).collect()
}
