//! Every workload envbench runs, registered once: its command, its place in suites, the scorecard, the report and
//! exports all come from here. A new workload is its own crate and one line in this list.

use envbench_core::workload::Registry;

pub static WORKLOADS: Registry = Registry::new(&[
    &envbench_probe::SYSINFO,
    &envbench_io::DISK,
    &envbench_ranread::RANREAD,
    &envbench_cube::CUBE,
    &envbench_oltp::OLTP,
    &envbench_tpch::TPCH,
    &envbench_exec::workload::EXEC,
]);
