//! `envbench oltp`: short transactions from many virtual users, the workload most databases carry.
//!
//! Two profiles over one driver:
//! - **tpcc**, derived from TPC-C (as HammerDB's TPROC-C is): the nine order-entry tables scaled by warehouses, the
//!   five transactions in the specification's mix with NURand inputs, NOPM counted from the database, and the
//!   consistency conditions checked afterwards;
//! - **tpcb**, pgbench's built-in TPC-B-like transaction on pgbench's own tables, so `pgbench` can run against the
//!   same server for a cross-check ([`crosscheck`]).
//!
//! On embedded SQLite (a file in `--dir`), PostgreSQL and MariaDB/MySQL, through [`envbench_sql`]. Users run in steps
//! (`--users 1,2,4` or `auto`); the knee is the step with the highest throughput whose judged latency (New-Order's
//! p95) stays within the target, found as `ranread` finds its own.
//!
//! The names at the crate's root are the surface other workloads use (`envbench htap` runs on these tables, loader,
//! transactions and users): the options and the plan of a run ([`OltpArgs`], [`plan_with`], [`OltpRun`]), the
//! companion tables another workload keeps beside them ([`Companion`]), a step's users and figures ([`run_step`],
//! [`StepFigures`]), the fleet's merging ([`merge_steps`]), and the records' and tables' shared parts.
//!
//! These are TPC-derived workloads, not TPC benchmarks: their results are not TPC results and must not be called so.

pub mod arrivals;
mod capacity;
mod cardinality;
mod companion;
pub mod consistency;
pub mod crosscheck;
mod document;
mod drop;
mod figures;
mod fleet;
mod live;
pub mod load;
mod lock;
mod measured;
mod mix;
mod options;
mod plan;
pub mod random;
mod readback;
mod render;
pub mod routines;
mod run;
pub mod schema;
pub mod slo;
mod sweep;
pub mod telemetry;
pub mod transactions;
pub mod users;
mod workload;

pub use workload::OLTP;

// The surface other workloads use (htap runs on oltp's tables, loader, transactions and users): every name of oltp's
// that another crate's code needs is re-exported here, at the crate's root, and imported from here.
pub use arrivals::{Arrivals, OpenLoopFigures, RatePlan};
pub use companion::{Companion, CompanionState};
pub use consistency::{Check, render as render_consistency};
pub use document::Drive;
pub use drop::drop_tables;
pub use figures::{KindFigures, MeasuredStep, StepFigures};
pub use fleet::{AgentStep, SCHEMA_KEY, UsersShare, host_share, merge_steps, numbers};
pub use load::LoadInfo;
pub use measured::{AgentSteps, TPM_WINDOW_METRIC, TPM_WINDOWS, add_transaction_parameters, window_rates};
pub use mix::Mix;
pub use options::{MAX_USERS, OltpArgs, Target};
pub use plan::{Planner, plan_with};
pub use random::{NuRandConstants, Random};
pub use render::server_figures;
pub use routines::Mode;
pub use run::OltpRun;
pub use schema::{Dropped, Shape};
pub use sweep::UsersPlan;
pub use transactions::Kind;
pub use users::{StepSettings, run_step};

use envbench_core::workload::WorkloadError;
use envbench_sql::{DatabaseUrl, DbError, ErrorKind, Namespace};
use serde::{Deserialize, Serialize};

/// The name of the workload.
pub const WORKLOAD: &str = "oltp";
/// Bumped when results stop being comparable with older ones. Version 2: `tpm` is one figure over the whole
/// measured window (as the terminal prints it), and `tpm_window` holds the per-window samples; version 1 stored
/// per-second samples under `tpm`, so a median of seconds was compared with it.
pub const WORKLOAD_VERSION: u32 = 2;
/// What every record of an oltp run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };

/// What the users run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// TPC-C-derived order entry.
    Tpcc,
    /// pgbench's TPC-B-like transaction.
    Tpcb,
}

impl Profile {
    pub fn parse(text: &str) -> Option<Profile> {
        match text {
            "tpcc" => Some(Profile::Tpcc),
            "tpcb" => Some(Profile::Tpcb),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Tpcc => "tpcc",
            Profile::Tpcb => "tpcb",
        }
    }

    /// The transactions it runs.
    pub fn kinds(self) -> &'static [Kind] {
        match self {
            Profile::Tpcc => &Kind::TPCC,
            Profile::Tpcb => &[Kind::TpcB],
        }
    }

    /// The transaction whose p95 judges the knee.
    pub fn judged_kind(self) -> Kind {
        match self {
            Profile::Tpcc => Kind::NewOrder,
            Profile::Tpcb => Kind::TpcB,
        }
    }

    /// What the scale counts.
    pub fn scale_word(self) -> &'static str {
        match self {
            Profile::Tpcc => "warehouses",
            Profile::Tpcb => "scale",
        }
    }

    /// The throughput the knee is judged by, and its unit.
    pub fn throughput_label(self) -> &'static str {
        match self {
            Profile::Tpcc => "NOPM",
            Profile::Tpcb => "TPS",
        }
    }
}

/// Why an OLTP run could not do its work.
#[derive(Clone, Debug, PartialEq)]
pub enum OltpError {
    /// The arguments are wrong.
    BadInput(String),
    /// The database said no or could not be reached (the message says which and what to do).
    Database(DbError),
    /// Relations of the profile's names exist that envbench did not make.
    Foreign(String),
    /// Not enough free space for the load.
    NoSpace(String),
    /// Another envbench run holds the tables (the message names it).
    Busy(String),
    /// The user stopped the run.
    Interrupted,
    Other(String),
}

impl OltpError {
    /// The refusal for relations envbench did not make in `place`, naming each and its kind.
    pub fn foreign(place: &str, profile: Profile, relations: &[String]) -> OltpError {
        OltpError::Foreign(format!(
            "{place}: {} bear the names of envbench's {} tables{} but envbench did not make them (its {} marker, \
             with the signed row envbench gives it, says which it made{}; a copied table of that name, or one an \
             envbench before 2026-12 made, proves nothing); envbench never creates, drops or alters anything beside \
             what it made. Use another schema or database (or SQLite directory), or drop them yourself if they are \
             expendable",
            relations.join(", "),
            profile.name(),
            if profile == Profile::Tpcc { " and routines" } else { "" },
            profile.marker_table(),
            if profile == Profile::Tpcc { ", and a comment on each routine it made" } else { "" }
        ))
    }
}

/// Where a run's tables are, for messages: the database and its schema (MariaDB/MySQL: the database they are in).
pub fn place(url: &DatabaseUrl, namespace: &Namespace) -> String {
    let ops = url.dialect().ops();
    match ops.named_namespaces {
        true => format!("{}, {} {}", url.shown(), ops.namespace_word, namespace.quoted()),
        false => url.shown(),
    }
}

impl std::fmt::Display for OltpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OltpError::BadInput(m)
            | OltpError::Foreign(m)
            | OltpError::NoSpace(m)
            | OltpError::Busy(m)
            | OltpError::Other(m) => f.write_str(m),
            OltpError::Database(e) => f.write_str(&e.message),
            OltpError::Interrupted => f.write_str("interrupted by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)"),
        }
    }
}

impl std::error::Error for OltpError {}

impl From<OltpError> for WorkloadError {
    fn from(error: OltpError) -> WorkloadError {
        match error {
            OltpError::Interrupted => WorkloadError::interrupted(),
            OltpError::BadInput(_) | OltpError::Foreign(_) | OltpError::NoSpace(_) => {
                WorkloadError::usage(error.to_string())
            }
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl From<DbError> for OltpError {
    fn from(error: DbError) -> OltpError {
        OltpError::Database(error)
    }
}

impl OltpError {
    /// True when the user must fix something before the run can work (exit status 2 when found while planning).
    pub fn is_users_to_fix(&self) -> bool {
        match self {
            OltpError::BadInput(_) | OltpError::Foreign(_) | OltpError::NoSpace(_) => true,
            OltpError::Database(e) => matches!(e.kind, ErrorKind::Refused | ErrorKind::Unreachable),
            _ => false,
        }
    }
}
