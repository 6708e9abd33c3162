//! The names the cube's results are recorded under: the workload, its version, the total test and the metric.

/// The workload name in results.
pub const WORKLOAD: &str = "cube";
/// Bumped when a change makes older cube results incomparable.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of a cube run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };
/// The test of the whole sequence's time, beside the eight steps.
pub const TOTAL_TEST: &str = "total";
/// The metric of every cube result.
pub const ELAPSED_METRIC: &str = "elapsed";
