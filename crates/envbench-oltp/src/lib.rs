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
//! companion tables another workload keeps beside them ([`Companion`]), a step's figures ([`StepFigures`]), the
//! fleet's merging ([`merge_steps`]), and the records' and tables' shared parts; the public modules (`users`,
//! `transactions`, `load`, `schema`, `routines`, ...) are the rest of it, each item by its module's path alone.
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
mod error;
mod figures;
mod fleet;
mod live;
pub mod load;
mod lock;
mod measured;
mod mix;
mod options;
mod plan;
mod profile;
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

// The surface other workloads use (htap runs on oltp's tables, loader, transactions and users). Each name has one
// public path: the public modules' items by their module (`envbench_oltp::users::run_step`), the private modules'
// here, at the crate's root.
pub use companion::{Companion, CompanionState};
pub use document::Drive;
pub use drop::drop_tables;
pub use error::{OltpError, place};
pub use figures::{KindFigures, MeasuredStep, StepFigures};
pub use fleet::{AgentStep, SCHEMA_KEY, UsersShare, host_share, merge_steps, numbers};
pub use measured::{AgentSteps, TPM_WINDOW_METRIC, TPM_WINDOWS, add_transaction_parameters, window_rates};
pub use mix::Mix;
pub use options::{MAX_USERS, OltpArgs, Target};
pub use plan::{Planner, plan_with};
pub use profile::{Profile, SOURCE, WORKLOAD, WORKLOAD_VERSION};
pub use render::server_figures;
pub use run::OltpRun;
pub use sweep::UsersPlan;
