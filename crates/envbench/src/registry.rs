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

#[cfg(test)]
mod tests {
    use super::WORKLOADS;
    use serde_json::json;

    /// Each workload names its own concurrency knobs: no central list decides which tests are single-threaded.
    #[test]
    fn each_workload_knows_its_single_threaded_tests() {
        let cases = [
            ("disk", "RND4K Q1T1 read", json!({"threads": 1, "queue_depth": 1}), true),
            ("disk", "RND4K Q32T1 read", json!({"threads": 1, "queue_depth": 32}), false),
            ("ranread", "jobs 1", json!({"jobs": 1}), true),
            ("cube", "calc", json!({"calc_threads": 1}), true),
            ("cube", "3 csv load", json!({"load_threads": 4}), true),
            ("oltp", "users 1", json!({"users": 1}), true),
            ("oltp", "users 4", json!({"users": 4}), false),
            ("tpch", "Q1", json!({"threads": 1, "users": 2}), true),
            ("oltp", "users 1", json!({"threads": 1, "users": 8}), false),
            ("exec", "step", json!({"threads": 1}), false),
            ("not-a-workload", "t", json!({"threads": 1}), false),
        ];
        for (workload, test, parameters, expected) in cases {
            assert_eq!(
                WORKLOADS.single_threaded(workload, test, &parameters),
                expected,
                "{workload} {test} {parameters}"
            );
        }
    }
}
