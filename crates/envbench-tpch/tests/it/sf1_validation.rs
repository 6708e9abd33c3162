//! At SF 1 with the specification's validation parameters, every query's answer on DataFusion matches the reference
//! answers that tpchgen ships, and the generated row counts are the specification's.

use envbench_core::sampler::NoSteps;
use envbench_tpch::data::{GenerationOptions, TableName, ensure_data};
use envbench_tpch::results::ExecutionStatus;
use envbench_tpch::targets::DataFusionTarget;
use envbench_tpch::{RunOptions, Target, run};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[test]
fn sf1_answers_match_the_reference() {
    let data_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("envbench-tpch-sf1");
    let interrupt = AtomicBool::new(false);
    let started = Instant::now();
    let options = GenerationOptions { data_dir, scale_factor: 1.0, fresh: false, threads: None };
    let data = ensure_data(&options, &interrupt, &|_| {}).expect("SF 1 generates");
    eprintln!("data: {:.1} s (reused: {})", started.elapsed().as_secs_f64(), data.reused);
    for table in TableName::ALL {
        let rows = data.manifest.tables[&table].rows;
        match table.expected_rows(1.0) {
            Some(expected) => assert_eq!(rows, expected, "{table}"),
            None => assert_eq!(rows, 6_001_215, "lineitem at SF 1"),
        }
    }
    // Every table offers at least 16 row groups to a parallel scan, but region, whose 5 rows are a row group each.
    for table in TableName::ALL {
        let groups = data.manifest.tables[&table].row_groups;
        let floor = if table == TableName::Region { 5 } else { 16 };
        assert!(groups >= floor, "{table} at SF 1 has {groups} row groups");
    }
    assert_eq!(data.manifest.tables[&TableName::Orders].rows, 1_500_000);
    assert_eq!(data.manifest.tables[&TableName::PartSupp].rows, 800_000);

    let mut target = DataFusionTarget::new(data, None).unwrap();
    let load = target.prepare(1.0, false, &interrupt, &NoSteps, &|_| {}).unwrap();
    let mut run_options = RunOptions::new(1.0);
    run_options.validate = true;
    run_options.throughput = false;
    let outcome = run(&target, load, &run_options, &interrupt, &NoSteps, &|event| {
        eprintln!("{} {:.2} s {:?}", event.what, event.elapsed_seconds, event.status)
    })
    .unwrap();
    let power = &outcome.streams[0];
    assert_eq!(power.queries.len(), 22);
    let wrong: Vec<String> = power
        .queries
        .iter()
        .filter(|q| q.status != ExecutionStatus::Ok)
        .map(|q| format!("Q{}: {:?}", q.query, q.status))
        .collect();
    assert!(wrong.is_empty(), "answers differ from the reference:\n{}", wrong.join("\n"));
    assert!(outcome.metrics.power_at_size.is_some());
    assert_eq!(outcome.metrics.power_intervals, 22);
    eprintln!("power geomean {:.3} s, total {:.1} s", power.geomean_seconds.unwrap(), started.elapsed().as_secs_f64());
}
