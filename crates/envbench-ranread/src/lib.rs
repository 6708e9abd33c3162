//! The database random-read scaling test, modelled on InterSystems' PerfTools RanRead.
//!
//! J jobs each do synchronous random block reads (queue depth 1) of a pre-expanded database file, all released
//! together; a sweep raises J until the mean response time passes the target or IOPS stops growing, finds the knee (the
//! highest IOPS within the target) and judges it against the user's targets. The same sweep runs from inside
//! PostgreSQL against a table of one row per page. File reads go through `envbench-io`'s engine loop (no second I/O
//! loop here); this crate owns the method, the database file and its size policy, the database mode, the result
//! records and what makes two sweeps comparable, and the `ranread` workload the driver registers ([`RANREAD`]). It
//! does not print or store anything.

mod database;
mod document;
mod error;
mod file;
mod fleet;
mod options;
mod records;
mod run;
mod sweep;
mod tsv;
pub mod workload;

pub use database::{PostgresOptions, PostgresRanRead, TABLE, TableInfo};
pub use document::{Comparable, RanreadDocument};
pub use error::RanReadError;
pub use file::{
    DATABASE_FILE_NAME, FileOptions, FileRanRead, FileState, HEADER_BYTES, check_data_size, validate_block,
};
pub use records::{IOPS_WINDOW_METRIC, KNEE_TEST, SOURCE, WORKLOAD_VERSION, results, step_test_id};
pub use sweep::{
    DatabaseCounters, JobsPlan, MIN_GROWTH_ON_DOUBLING, STEP_WINDOWS, StepFigures, StepLimit, StepRunner, StopReason,
    SweepOutcome, Targets, Verdict, find_knee, judge, next_auto_step, sweep,
};
pub use tsv::{TSV_HEADER, tsv_rows};
pub use workload::RANREAD;
