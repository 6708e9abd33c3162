//! envbench's block-storage OLAP cube and its EssBench-style workload (specification section 5).
//!
//! This crate owns a small Essbase-like block storage engine and the benchmark that exercises it: the EssBench
//! outline (eight dimensions, 838 x 14 dense cells per block), a deterministic data generator (native block-row
//! files and a CSV with its load rules), the page-file block store (compressed blocks, sharded index, free-space
//! reuse, bounded data cache, optional direct I/O, a durable end to every step and detection of interrupted
//! steps), the eight timed steps (reset, parallel native load, CSV load, aggregation, allocation, aggregation of
//! the allocation, currency conversion, dense restructure), retrieval of cells and small grids, the thread sweep
//! with its recommendation, and the results in `envbench-core`'s model.
//!
//! It keeps its hands off everything it did not make: each of its directories carries a marker, foreign files are
//! refused by name, a run holds an exclusive lock on the cube and `cube get` a shared one and never writes
//! ([`places`]). The `cube` workload the driver registers is [`CUBE`]. It does not print, sample the OS (it only
//! tells a [`StepObserver`](envbench_core::sampler::StepObserver) where steps begin and end), store results, or talk
//! to a real Essbase server.
//!
//! ```no_run
//! use envbench_cube::{CubeConfig, ThreadSweep, run_sequence, run_sweep, result_records, Cube};
//! use envbench_core::sampler::NoSteps;
//! use std::sync::atomic::AtomicBool;
//!
//! let cancel = AtomicBool::new(false);
//! let mut config = CubeConfig::new("/var/tmp/envbench-cube");
//! config.scale = 0.1;
//! let outcome = run_sequence(&config, &NoSteps, &cancel)?;
//! for step in &outcome.summary {
//!     println!("{:<24} {:8.2} s {:5.1}%", step.name, step.mean_seconds, 100.0 * step.share_of_total);
//! }
//! let sweep = ThreadSweep { calc_threads: vec![1, 2, 4], ..Default::default() };
//! let swept = run_sweep(&config, &sweep, &NoSteps, &cancel)?;
//! println!("{}", swept.recommendation.unwrap().sentence);
//! let records = result_records(&swept.outcomes);
//! # let _ = records;
//! let cube = Cube::open(&config.cube_dir, config.options)?;
//! let value = cube.get("Years=FY19, Scenario=Actual, Version=Final, Currency=USD, Entity=TotalEntity, \
//!                       Product=Product, Account=NetIncome, Period=Q1")?;
//! println!("{value:?}");
//! println!("{}", cube.grid("Years=FY19, Scenario=Actual, Version=Final, Currency=Local, Product=Product, \
//!                          Account=GrossSales", "Entity=NorthAmerica", "Period=Q1")?);
//! # Ok::<(), envbench_cube::CubeError>(())
//! ```

mod aligned;
pub mod bench;
pub mod block;
mod cache;
pub mod calc;
mod counters;
pub mod cube;
mod durable;
pub mod error;
pub mod generate;
mod index;
pub mod load;
pub mod names;
pub mod options;
pub mod outline;
mod parallel;
pub mod places;
pub mod rates;
pub mod recommend;
pub mod records;
pub mod restructure;
pub mod retrievals;
pub mod retrieve;
mod rng;
mod shape;
mod shard;
pub mod store;
pub mod sweep;
#[cfg(test)]
mod testdir;
pub mod workload;
#[cfg(test)]
mod workload_tests;

pub use bench::{CubeConfig, PRIME_STEP, SequenceOutcome, Step, StepRun, StepSummary, ThreadKnob, ThreadSettings};
pub use block::Compression;
pub use cube::{Cube, CubeOptions, CubeStatistics};
pub use error::{CubeError, InterruptedStep};
pub use generate::{DataSet, Manifest, prepare_data};
pub use names::{ELAPSED_METRIC, TOTAL_TEST, WORKLOAD, WORKLOAD_VERSION};
pub use outline::{Dim, Outline, SparseKey};
pub use places::CubeLock;
pub use recommend::{Difference, Recommendation, cpu_sentence, recommend};
pub use records::result_records;
pub use retrieve::Grid;
pub use sweep::{SweepOutcome, ThreadSweep, run_sequence, run_sweep};
pub use workload::CUBE;
