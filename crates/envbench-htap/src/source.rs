//! What every record of an htap run is of: the workload's name and the version of its results.

/// The name of the workload.
pub const WORKLOAD: &str = "htap";
/// Bumped when results stop being comparable with older ones.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of an htap run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };
