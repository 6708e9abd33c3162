//! Every workload envbench runs, registered once: its command, its place in suites, the scorecard, the report and
//! exports all come from here. A new workload is its own crate and one line in this list.

use envbench_core::workload::Registry;

pub static WORKLOADS: Registry = Registry::new(&[
    &envbench_probe::SYSINFO,
    &envbench_io::DISK,
    &envbench_ranread::RANREAD,
    &envbench_cube::CUBE,
    &envbench_oltp::OLTP,
    &envbench_htap::HTAP,
    &envbench_tpch::TPCH,
    &envbench_exec::workload::EXEC,
    &envbench_replay::workload::REPLAY,
]);

#[cfg(test)]
mod tests {
    use super::WORKLOADS;
    use envbench_core::workload::BUILTIN_SUITES;
    use serde_json::json;

    /// The built-in suites are made of the workloads' own tables, in the registry's order, and each parses: every
    /// workload but `exec` (the user's own steps), `htap` (it needs a database server) and `replay` (it needs a
    /// capture and a server) is in each, and nothing else is.
    #[test]
    fn builtin_suites_come_from_the_workloads() {
        let expected: Vec<&str> =
            WORKLOADS.names().into_iter().filter(|w| !["exec", "htap", "replay"].contains(w)).collect();
        for name in BUILTIN_SUITES {
            let text = WORKLOADS.builtin_suite(name).unwrap();
            let suite = envbench_suite::parse_suite(&text, name, &WORKLOADS.names()).unwrap();
            assert_eq!(suite.name, *name);
            let workloads: Vec<&str> = suite.items.iter().map(|i| i.workload.as_str()).collect();
            assert_eq!(workloads, expected, "{name}:\n{text}");
        }
        assert_eq!(WORKLOADS.builtin_suite("nightly"), None);
        // The quick suite's items, as `envbench run` has always run them (a resumed suite must plan the same).
        let quick =
            envbench_suite::parse_suite(&WORKLOADS.builtin_suite("quick").unwrap(), "quick", &WORKLOADS.names())
                .unwrap();
        let args: Vec<String> = quick.items.iter().map(|i| format!("{} {}", i.workload, i.args.join(" "))).collect();
        assert_eq!(
            args,
            [
                "sysinfo --save",
                "disk --quick",
                "ranread --size 1g --jobs auto --duration 2s --max-jobs 32 --no-keep",
                "cube --scale 0.02 --repeat 5",
                "oltp --warehouses 1 --users 2 --ramp 10s --duration 20s",
                "tpch --sf 0.1 --users 2 --sets 2",
            ]
        );
    }

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
            ("htap", "U=1 A=0", json!({"users": 1, "analytic_users": 0}), true),
            ("htap", "U=0 A=1", json!({"users": 0, "analytic_users": 1}), true),
            ("htap", "U=1 A=1", json!({"users": 1, "analytic_users": 1}), false),
            ("not-a-workload", "t", json!({"threads": 1}), false),
        ];
        for (workload, test, parameters, expected) in cases {
            assert_eq!(
                WORKLOADS.read_back(workload).single_threaded(test, &parameters),
                expected,
                "{workload} {test} {parameters}"
            );
        }
    }
}
