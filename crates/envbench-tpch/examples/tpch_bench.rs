//! Driver for bench/tpch.sh: generation speed, the DataFusion power test, and the query texts for other engines.
//!
//! tpch_bench generate <data dir> <sf>         fresh generation; prints seconds, rows and rows/s as JSON
//! tpch_bench power <data dir> <sf> [threads] [key=value ...]
//!                                             DataFusion power test with validation parameters (after one warm-up
//!                                             run) on `threads` threads (default: every CPU), with DataFusion
//!                                             settings on top of envbench's; JSON per query (median and
//!                                             every measured run)
//! tpch_bench sql <sf> <out dir>               writes Q1.sql..Q22.sql with the validation parameters, and
//!                                             order.txt, the power test's query order
//! tpch_bench explain <data dir> <sf> <query>  DataFusion's physical plan of a query (validation parameters),
//!                                             with each operator's rows and time (EXPLAIN ANALYZE)
//! tpch_bench time <data dir> <sf> <threads> <file.sql ...> [key=value ...]
//!                                             each file's SQL (a query text to try, or EXPLAIN ANALYZE of one) run
//!                                             once to warm up, then RUNS times (default 3); prints the median and
//!                                             every time per file, and the last answer's rows with SHOW=1

use envbench_core::sampler::NoSteps;
use envbench_core::stats::Summary;
use envbench_tpch::data::{GenerationOptions, ensure_data};
use envbench_tpch::params::{PERMUTATIONS, QueryParameters};
use envbench_tpch::queries::render;
use envbench_tpch::targets::{DataFusionTarget, LoadInfo};
use envbench_tpch::{RunOptions, Target, run};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: tpch_bench generate|power|explain|time|sql ... (see the doc at the top of examples/tpch_bench.rs)";
    let interrupt = AtomicBool::new(false);
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["generate", dir, sf] => {
            let sf: f64 = sf.parse().expect("a number");
            let options =
                GenerationOptions { data_dir: PathBuf::from(dir), scale_factor: sf, fresh: true, threads: None };
            let started = Instant::now();
            let data = ensure_data(&options, &interrupt, &|_| {}).expect("generation works");
            let seconds = started.elapsed().as_secs_f64();
            println!(
                "{{\"seconds\": {seconds:.3}, \"rows\": {}, \"rows_per_s\": {:.0}, \"bytes\": {}}}",
                data.total_rows(),
                data.total_rows() as f64 / seconds,
                data.total_bytes()
            );
        }
        ["power", dir, sf, rest @ ..] => {
            let sf: f64 = sf.parse().expect("a number");
            let threads: Option<usize> = rest.first().filter(|t| !t.contains('=')).map(|t| t.parse().expect("threads"));
            let (target, load) = prepared(dir, sf, threads, settings(rest), &interrupt);
            let mut run_options = RunOptions::new(sf);
            run_options.validate = true;
            run_options.throughput = false;
            // One warm-up run, as the other engine gets: the page cache and the file metadata are warm for both.
            run(&target, load.clone(), &run_options, &interrupt, &NoSteps, &|_| {}).expect("the warm-up works");
            // Then RUNS measured runs (default 3); each query's time is its median, on a machine whose noise is
            // larger than most differences between settings.
            let runs: usize = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); 22];
            let mut failures = 0;
            for _ in 0..runs {
                let outcome =
                    run(&target, load.clone(), &run_options, &interrupt, &NoSteps, &|_| {}).expect("the run works");
                failures += outcome.failures.len();
                for query in &outcome.streams[0].queries {
                    times[usize::from(query.query) - 1].push(query.elapsed_seconds);
                }
            }
            let medians: Vec<f64> =
                times.iter().map(|t| Summary::of(t).map_or(f64::NAN, |summary| summary.median)).collect();
            let per_query: Vec<String> =
                medians.iter().enumerate().map(|(i, s)| format!("\"Q{}\": {s:.4}", i + 1)).collect();
            let every_run: Vec<String> = times
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let runs: Vec<String> = t.iter().map(|s| format!("{s:.5}")).collect();
                    format!("\"Q{}\": [{}]", i + 1, runs.join(", "))
                })
                .collect();
            println!(
                "{{\"geomean\": {:.4}, \"failures\": {failures}, \"runs\": {runs}, \"queries\": {{{}}}, \"times\": {{{}}}}}",
                envbench_core::stats::geometric_mean(&medians).unwrap_or(f64::NAN),
                per_query.join(", "),
                every_run.join(", ")
            );
        }
        ["explain", dir, sf, query] => {
            let sf: f64 = sf.parse().expect("a number");
            let query: u8 = query.trim_start_matches('Q').parse().expect("a query number");
            let (target, _) = prepared(dir, sf, None, Vec::new(), &interrupt);
            let sql = render(&QueryParameters::validation(query, sf));
            let answer = target
                .session()
                .expect("a session")
                .query(&format!("EXPLAIN ANALYZE {sql}"), None, &interrupt)
                .expect("the plan");
            for row in answer.rows {
                println!("{}", row.join("\n"));
            }
        }
        ["time", dir, sf, threads, rest @ ..] => {
            let sf: f64 = sf.parse().expect("a number");
            let threads: usize = threads.parse().expect("threads");
            let (target, _) = prepared(dir, sf, Some(threads), settings(rest), &interrupt);
            let files = rest.iter().filter(|arg| !arg.contains('='));
            let mut session = target.session().expect("a session");
            let runs: usize = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
            for file in files {
                let sql = std::fs::read_to_string(file).expect("a readable SQL file");
                let mut times = Vec::new();
                let mut answer = None;
                for run in 0..=runs {
                    let started = Instant::now();
                    let result = session.query(&sql, None, &interrupt).expect("the query runs");
                    if run > 0 {
                        times.push(started.elapsed().as_secs_f64());
                    }
                    answer = Some(result);
                }
                let median = Summary::of(&times).map_or(f64::NAN, |summary| summary.median);
                let every: Vec<String> = times.iter().map(|t| format!("{t:.4}")).collect();
                println!("{file}: median {median:.4} s ({})", every.join(" "));
                if std::env::var_os("SHOW").is_some() {
                    for row in answer.expect("at least one run").rows {
                        println!("{}", row.join(" | "));
                    }
                }
            }
        }
        ["sql", sf, out] => {
            let sf: f64 = sf.parse().expect("a number");
            std::fs::create_dir_all(out).expect("output directory");
            for query in 1..=22u8 {
                let sql = render(&QueryParameters::validation(query, sf));
                std::fs::write(PathBuf::from(out).join(format!("Q{query}.sql")), sql).expect("writable");
            }
            // The power test's order, for another engine to run the texts in the order envbench does.
            let order: Vec<String> = PERMUTATIONS[0].iter().map(u8::to_string).collect();
            std::fs::write(PathBuf::from(out).join("order.txt"), order.join(" ") + "\n").expect("writable");
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}

/// DataFusion settings given as `key=value` arguments.
fn settings(args: &[&str]) -> Vec<(String, String)> {
    args.iter().filter_map(|arg| arg.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A DataFusion target over the generated data of `dir` (generated first when missing), its tables registered.
fn prepared(
    dir: &str,
    sf: f64,
    threads: Option<usize>,
    settings: Vec<(String, String)>,
    interrupt: &AtomicBool,
) -> (DataFusionTarget, LoadInfo) {
    let options = GenerationOptions { data_dir: PathBuf::from(dir), scale_factor: sf, fresh: false, threads: None };
    let data = ensure_data(&options, interrupt, &|_| {}).expect("generation works");
    let mut target = DataFusionTarget::new(data, threads).expect("a runtime").with_settings(settings);
    let load = target.prepare(sf, false, interrupt, &NoSteps, &|_| {}).expect("tables register");
    (target, load)
}
