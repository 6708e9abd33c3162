//! PostgreSQL at SF 0.01 returns the same rows as DataFusion on the same data, loads the specification's row counts,
//! reuses a matching load, and runs the refresh functions. Needs the local server
//! (postgres://postgres@127.0.0.1:5432/test, trust authentication); the test fails when it is absent.

use envbench_core::sampler::NoSteps;
use envbench_tpch::data::{GenerationOptions, TableName, ensure_data};
use envbench_tpch::params::{QueryParameters, SeededRandom};
use envbench_tpch::queries::render;
use envbench_tpch::reference::compare_rows;
use envbench_tpch::results::ExecutionStatus;
use envbench_tpch::target::{DataFusionTarget, PostgresOptions, PostgresTarget};
use envbench_tpch::{QueryFailure, RunOptions, Target, run};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

const URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const SF: f64 = 0.01;

/// Drops the test's schema however the test ends.
struct SchemaGuard(String);

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(URL, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.0));
        }
    }
}

#[test]
fn postgres_answers_match_datafusion_on_the_same_data() {
    let interrupt = AtomicBool::new(false);
    let schema = format!(
        "envbench_tpch_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() % 1_000_000_000
    );
    let _guard = SchemaGuard(schema.clone());
    let options = PostgresOptions { url: URL.into(), schema: Some(schema.clone()), load_threads: None };
    let mut postgres = PostgresTarget::connect(&options).expect("the local PostgreSQL server must be running");
    let load = postgres.prepare(SF, false, &interrupt, &NoSteps, &|_| {}).unwrap();
    assert!(!load.reused);
    for table in TableName::ALL {
        let rows = load.rows[table.as_str()];
        match table.expected_rows(SF) {
            Some(expected) => assert_eq!(rows, expected, "{table}"),
            None => assert!((55_000..65_000).contains(&rows), "lineitem: {rows}"),
        }
    }
    let again = postgres.prepare(SF, false, &interrupt, &NoSteps, &|_| {}).unwrap();
    assert!(again.reused);
    assert_eq!(again.rows, load.rows);

    let data_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("envbench-tpch-sf0.01");
    let generation = GenerationOptions { data_dir, scale_factor: SF, fresh: false, threads: None };
    let data = ensure_data(&generation, &interrupt, &|_| {}).unwrap();
    for (table, files) in &data.manifest.tables {
        assert_eq!(load.rows[table.as_str()], files.rows, "{table}: loaded and generated rows differ");
    }
    let mut datafusion = DataFusionTarget::new(data, None).unwrap();
    datafusion.prepare(SF, false, &interrupt, &NoSteps, &|_| {}).unwrap();

    let mut pg_session = postgres.session().unwrap();
    let mut df_session = datafusion.session().unwrap();
    let mut random = SeededRandom::for_stream(42, 1, 0);
    let mut mismatches = Vec::new();
    for query in 1..=22u8 {
        for parameters in [QueryParameters::validation(query, SF), QueryParameters::random(query, SF, &mut random)] {
            let sql = render(&parameters);
            let expected =
                df_session.query(&sql, None, &interrupt).unwrap_or_else(|e| panic!("DataFusion Q{query}: {e}"));
            let actual =
                pg_session.query(&sql, None, &interrupt).unwrap_or_else(|e| panic!("PostgreSQL Q{query}: {e}"));
            if let Err(mismatch) = compare_rows(&expected.rows, &actual.rows) {
                mismatches.push(format!("Q{query} {parameters:?}: {mismatch}"));
            }
        }
    }
    assert!(mismatches.is_empty(), "PostgreSQL and DataFusion differ:\n{}", mismatches.join("\n"));

    // Timeouts are reported as such on both targets, and the sessions stay usable.
    let slow = "select count(*) from lineitem a, lineitem b where a.l_orderkey < b.l_orderkey";
    let tiny = Some(std::time::Duration::from_millis(20));
    assert_eq!(pg_session.query(slow, tiny, &interrupt), Err(QueryFailure::TimedOut));
    assert_eq!(df_session.query(slow, tiny, &interrupt), Err(QueryFailure::TimedOut));
    assert_eq!(pg_session.query("select 1", None, &interrupt).unwrap().rows, [["1"]]);

    // A power test with RF1 before and RF2 after leaves the data as loaded.
    let mut run_options = RunOptions::new(SF);
    run_options.throughput = false;
    let outcome = run(&postgres, load.clone(), &run_options, &interrupt, &NoSteps, &|_| {}).unwrap();
    let power = &outcome.streams[0];
    assert_eq!(power.refreshes.iter().map(|r| r.function.as_str()).collect::<Vec<_>>(), ["RF1", "RF2"]);
    assert!(power.refreshes.iter().all(|r| r.status == ExecutionStatus::Ok), "{:?}", power.refreshes);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(outcome.metrics.power_intervals, 24);
    assert!(outcome.refresh_skipped.is_none());
    let mut client =
        postgres::Client::connect(&format!("{URL}?options=-csearch_path%3D{schema}"), postgres::NoTls).unwrap();
    assert_eq!(envbench_tpch::target::postgres::count_rows(&mut client).unwrap(), load.rows);
}

#[test]
fn a_missing_database_says_to_create_it() {
    let options = PostgresOptions {
        url: "postgres://postgres@127.0.0.1:5432/envbench_no_such_database".into(),
        schema: None,
        load_threads: None,
    };
    let error = PostgresTarget::connect(&options).err().expect("the database does not exist").to_string();
    assert!(error.contains("create the database"), "{error}");
}
