//! The I/O core of envbench: the storage suite (`disk`) and the engine the random-read scaling test (`ranread`)
//! reuses.
//!
//! This crate owns the I/O engines (io_uring with registered buffers and file, and a pread/pwrite thread pool as the
//! fallback where io_uring is blocked), the one loop that drives them (queue depth, threads released together at a
//! barrier, per-I/O latency in mergeable HDR histograms, CPU time per I/O, cancellation), the test file (created
//! fresh, filled with incompressible data, removed on every exit path), the storage profiles and the ad-hoc test
//! syntax, the suite method (warm-up, measured runs, pauses), the cache-honesty policy for buffered runs, the fio
//! cross-check, the conversion of results into the core model, and the `disk` workload the driver registers
//! ([`DISK`]: its command line, the rule that flags cache-served reads, its table). It stands on envbench-base for the file lock, the RNG, the
//! latency histogram and the checks of a place. It does not print, store results, probe the environment or
//! sample the OS: the driver, `envbench-store` and `envbench-probe` do.
//!
//! ```no_run
//! use envbench_io::{NoProgress, Profile, SuiteOptions, result_records, run_suite};
//! use envbench_core::sampler::NoSteps;
//! use std::sync::atomic::AtomicBool;
//!
//! let options = SuiteOptions::new("/data");
//! let cancel = AtomicBool::new(false);
//! let outcome = run_suite(&options, &Profile::Cdm.tests(), &NoProgress, &NoSteps, &cancel)?;
//! let records = result_records(&outcome);
//! # Ok::<(), envbench_io::BenchError>(())
//! ```

pub mod buffer;
pub mod cache;
pub mod commit;
pub mod commit_suite;
pub mod durability;
pub mod engine;
pub mod error;
pub mod figures;
pub mod fio;
mod fleet;
mod measured;
mod options;
pub mod profile;
pub mod records;
pub mod runner;
pub mod spec;
pub mod steady;
pub mod suite;
pub mod sustained;
pub mod testfile;
pub mod workload;

#[cfg(test)]
mod testing;

pub use cache::{CACHE_INFLATED_FLAG, CacheHonesty, cache_honesty};
pub use engine::{Engine, EngineChoice, EngineKind, EngineSelection, open_engine, select_engine};
pub use error::BenchError;
pub use fleet::AgentDirectory;
pub use profile::Profile;
pub use records::{FIO_CROSS_CHECK_FLAG, WORKLOAD, WORKLOAD_VERSION, result_records, test_parameters};
pub use runner::{JobConfig, JobResult, Region, RunLimit, RunSample, ThreadResult, ThreadSample, run_job};
pub use spec::{Operation, Pattern, SpecError, TestSpec, WriteSync};
pub use suite::{CrossCheck, NoProgress, Progress, ProgressEvent, SuiteOptions, SuiteOutcome, TestOutcome, run_suite};
pub use testfile::{FillSummary, TestFile, check_file_plan, fill_region, open_for_io};
pub use workload::DISK;
