//! PostgreSQL at SF 0.01 returns the same rows as DataFusion on the same data, loads the specification's row counts,
//! reuses a matching load, and runs the refresh functions, all in the one schema the run resolved: decoy tables of
//! the same names, in a schema earlier on the connection's search path, are never read or written. Needs the local
//! server (postgres://postgres@127.0.0.1:5432/test, trust authentication); the test fails when it is absent.

use crate::common;

use common::decoy_rows;
use envbench_core::sampler::NoSteps;
use envbench_sql::DatabaseUrl;
use envbench_tpch::data::{GenerationOptions, TableName, ensure_data};
use envbench_tpch::params::{QueryParameters, SeededRandom};
use envbench_tpch::queries::render;
use envbench_tpch::reference::compare_rows;
use envbench_tpch::results::ExecutionStatus;
use envbench_tpch::targets::{DataFusionTarget, ServerOptions, ServerTarget};
use envbench_tpch::{QueryFailure, RunOptions, Session, Target, run};
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

/// A digest of every decoy's rows.
fn decoy_digest(client: &mut postgres::Client, decoys: &str) -> String {
    TableName::ALL
        .iter()
        .map(|table| {
            let sql = format!("SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM \"{decoys}\".{table} t");
            client.query_one(&sql, &[]).unwrap().get::<_, String>(0)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn postgres_answers_match_datafusion_on_the_same_data() {
    let interrupt = AtomicBool::new(false);
    let schema = format!(
        "envbench_tpch_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() % 1_000_000_000
    );
    let decoys = format!("{schema}_decoys");
    let _guards = (SchemaGuard(schema.clone()), SchemaGuard(decoys.clone()));
    // The decoys' schema comes first on the connection's search path.
    let url = format!("{URL}?options=-c%20search_path%3D{decoys},{schema}");
    let options =
        ServerOptions { url: DatabaseUrl::parse(&url).unwrap(), schema: Some(schema.clone()), load_threads: None };
    let mut postgres = ServerTarget::connect(&options).expect("the local PostgreSQL server must be running");
    assert_eq!(postgres.namespace().name(), schema);
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

    let mut decoy_client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    decoy_client.batch_execute(&format!("CREATE SCHEMA \"{decoys}\"")).unwrap();
    for table in TableName::ALL {
        decoy_client
            .batch_execute(&format!(
                "CREATE TABLE \"{decoys}\".{table} AS SELECT * FROM \"{schema}\".{table} WHERE {}",
                decoy_rows(table)
            ))
            .unwrap();
    }
    let decoys_before = decoy_digest(&mut decoy_client, &decoys);

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
    let mut decoys_answered = 0;
    for query in 1..=22u8 {
        for parameters in [QueryParameters::validation(query, SF), QueryParameters::random(query, SF, &mut random)] {
            let expected = df_session
                .query(&datafusion.query_sql(&parameters), None, &interrupt)
                .unwrap_or_else(|e| panic!("DataFusion Q{query}: {e}"));
            let sql = postgres.query_sql(&parameters);
            let actual =
                pg_session.query(&sql, None, &interrupt).unwrap_or_else(|e| panic!("PostgreSQL Q{query}: {e}"));
            if let Err(mismatch) = compare_rows(&expected.rows, &actual.rows) {
                mismatches.push(format!("Q{query} {parameters:?}: {mismatch}"));
            }
            // The query text names the run's tables itself: on a connection whose search path finds the decoys
            // first, it still answers from the run's tables, where the bare text answers from the decoys.
            let qualified = text_rows(&mut decoy_client, &sql);
            if let Err(mismatch) = compare_rows(&expected.rows, &qualified) {
                mismatches.push(format!("Q{query} {parameters:?} beside the decoys: {mismatch}"));
            }
            if compare_rows(&expected.rows, &text_rows(&mut decoy_client, &render(&parameters))).is_err() {
                decoys_answered += 1;
            }
        }
    }
    assert!(mismatches.is_empty(), "PostgreSQL and DataFusion differ:\n{}", mismatches.join("\n"));
    assert!(decoys_answered >= 30, "the decoys change most answers of the bare text: {decoys_answered} of 44");

    // Timeouts are reported as such on both targets, and the sessions stay usable.
    let slow = "select count(*) from lineitem a, lineitem b where a.l_orderkey < b.l_orderkey";
    let tiny = Some(std::time::Duration::from_millis(20));
    assert_eq!(pg_session.query(slow, tiny, &interrupt), Err(QueryFailure::TimedOut));
    assert_eq!(df_session.query(slow, tiny, &interrupt), Err(QueryFailure::TimedOut));
    assert_eq!(pg_session.query("select 1", None, &interrupt).unwrap().rows, [["1"]]);
    // Even a name left unqualified reaches the run's schema only: the session's search path is pinned to it.
    let path = pg_session.query("select current_schemas(false)", None, &interrupt).unwrap().rows;
    assert_eq!(path, [[format!("{{{schema}}}")]], "the search path is the run's schema alone");
    let unqualified = pg_session.query("select count(*) from nation", None, &interrupt).unwrap().rows;
    assert_eq!(unqualified, [["25"]], "the run's nation, not the decoys' 13 rows");

    // A power test with RF1 before and RF2 after leaves the data as loaded, and the decoys as they were.
    let mut run_options = RunOptions::new(SF);
    run_options.throughput = false;
    let outcome = run(&postgres, load.clone(), &run_options, &interrupt, &NoSteps, &|_| {}).unwrap();
    let power = &outcome.streams[0];
    assert_eq!(power.refreshes.iter().map(|r| r.function.as_str()).collect::<Vec<_>>(), ["RF1", "RF2"]);
    assert!(power.refreshes.iter().all(|r| r.status == ExecutionStatus::Ok), "{:?}", power.refreshes);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(outcome.metrics.power_intervals, 24);
    assert!(outcome.refresh_skipped.is_none());
    assert_eq!(postgres.count_rows().unwrap(), load.rows);
    // RF1 alone adds SF * 1500 orders to the run's table and none to the decoys'.
    let update_set = envbench_tpch::refresh::UpdateSet::new(SF, 3);
    let mut session: Box<dyn Session> = postgres.session().unwrap();
    session.refresh_insert(&update_set).unwrap();
    assert_eq!(postgres.count_rows().unwrap()["orders"], load.rows["orders"] + 15);
    assert_eq!(decoy_digest(&mut decoy_client, &decoys), decoys_before, "the decoys are unchanged");
    session.refresh_delete(&update_set).unwrap();
    assert_eq!(postgres.count_rows().unwrap(), load.rows);

    // --fresh reloads the run's tables, and leaves the decoys alone.
    let fresh = postgres.prepare(SF, true, &interrupt, &NoSteps, &|_| {}).unwrap();
    assert!(!fresh.reused);
    assert_eq!(fresh.rows, load.rows);
    assert_eq!(decoy_digest(&mut decoy_client, &decoys), decoys_before, "the decoys are unchanged");
}

/// A query's rows as text, on a plain connection.
fn text_rows(client: &mut postgres::Client, sql: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for message in client.simple_query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        if let postgres::SimpleQueryMessage::Row(row) = message {
            rows.push((0..row.len()).map(|i| row.get(i).unwrap_or("").to_string()).collect());
        }
    }
    rows
}

#[test]
fn a_missing_database_says_to_create_it() {
    let options = ServerOptions {
        url: DatabaseUrl::parse("postgres://postgres@127.0.0.1:5432/envbench_no_such_database").unwrap(),
        schema: None,
        load_threads: None,
    };
    let error = ServerTarget::connect(&options).err().expect("the database does not exist").to_string();
    assert!(error.contains("create the database"), "{error}");
}
