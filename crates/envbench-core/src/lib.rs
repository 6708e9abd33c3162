//! The shared vocabulary of envbench.
//!
//! This crate owns the types every other crate speaks: the run and result model (what a workload produces and the
//! store keeps), units and their parsing (`1GiB`, `8k`, `5s`, `8ms`), the statistics rules of the specification
//! (mean, median, spread, coefficient of variation, the noisy flag, geometric mean), the environment fingerprint's
//! data types, the OS sampler's data types, the [`workload::Workload`] trait every workload implements for the one
//! driver, text for people (tables, headings, numbers, the rules for names users give, and what is safe to show on a
//! terminal) and the redaction of secrets ([`secrets`]). It does no I/O and knows nothing about how a fingerprint is
//! probed, how a particular workload runs or how results are stored.

pub mod canonical;
pub mod fingerprint;
pub mod fleet;
pub mod live;
pub mod model;
pub mod programs;
pub mod provenance;
pub mod random;
pub mod run;
pub mod sampler;
pub mod secrets;
pub mod stats;
pub mod text;
pub mod units;
pub mod workload;

pub use model::{Direction, RecordSource, ResultRecord, RunStatus, RunSummary, StoredResult, StoredRun};
pub use provenance::TOOL_VERSION;
pub use units::{ByteSize, DurationArg, check_settings, parse_byte_size, parse_duration};
