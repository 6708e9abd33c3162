//! `envbench run`: a whole methodology in one command. A suite (built-in or a TOML file with a matrix) expands into
//! runs that execute through the same code as the workload commands, grouped by a suite id; it ends with a one-screen
//! scorecard and an HTML report. `--resume` continues an interrupted suite without repeating finished runs.

use crate::cli::RunArgs;
use crate::commands::scorecard::{self, SUITE_ITEM_TAG, SuiteEnd, SuiteOutcome};
use crate::commands::store;
use crate::driver::{parse_tags, quote_words};
use crate::files::OutputFile;
use crate::output::{print, println};
use crate::registry::WORKLOADS;
use crate::session::interrupt_flag;
use crate::usage;
use envbench_core::RunStatus;
use envbench_core::text::{duration_words, pace_words};
use envbench_store::{RunFilter, StoreLocation, StoredRun};
use envbench_suite::{Suite, SuiteItem, parse_suite};
use envbench_verdict::{SUITE_NAME_TAG, SUITE_TAG};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// Tags every run of a suite carries, beside envbench_verdict's SUITE_NAME_TAG and SUITE_TAG and the scorecard's
/// SUITE_ITEM_TAG.
const SUITE_PLAN_TAG: &str = "suite.plan";

pub fn run(location: &StoreLocation, args: RunArgs) -> anyhow::Result<ExitCode> {
    let (suite, file) = load(&args)?;
    // A built-in suite's runs keep its defaults (a smoke run's tiny sizes are not a profile).
    let builtin = !args.smoke && WORKLOADS.builtin_suite(&args.suite).is_some();
    if !args.dir.is_dir() {
        return Err(usage(format!("--dir {}: not a directory; give an existing directory", args.dir.display())));
    }
    let user_tags = parse_tags(&args.tags)?;
    if let Some(label) = &args.label {
        crate::driver::check_name("--label", label)?;
    }
    // Each item serves the suite's --metrics-listen in turn: a port in use is refused now, before the first item runs.
    if let Some(address) = args.metrics_listen
        && !args.dry_run
    {
        drop(envbench_probe::MetricsEndpoint::serve(address).map_err(usage)?);
    }
    let plan = suite.plan_hash();
    let report =
        if args.dry_run { None } else { Some(OutputFile::check(&args.report, "--report", args.force, location)?) };

    // Every run is parsed by the real command-line definitions before anything runs.
    let commands: Vec<Vec<String>> = suite.items.iter().map(|item| item_command(item, &args, &user_tags)).collect();
    for (item, command) in suite.items.iter().zip(&commands) {
        // The suite id is not known yet; a placeholder parses the same.
        let mut argv = command.clone();
        argv.extend(["--suite-id".into(), "check".into()]);
        if let Err(error) = crate::cli::command().try_get_matches_from(&argv) {
            let first = error.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
            return Err(usage(format!("{file} line {} ([{}]): {first}", item.line, item.workload)));
        }
    }

    if args.dry_run && args.json {
        let shown: Vec<String> = commands.iter().map(|c| format!("envbench {}", quote_words(c[1..].iter()))).collect();
        println(&serde_json::to_string_pretty(&scorecard::plan_document(&suite, &file, &shown))?);
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        println(&format!(
            "suite {} ({file}): {} run{}",
            suite.name,
            commands.len(),
            if commands.len() == 1 { "" } else { "s" }
        ));
        for (item, command) in suite.items.iter().zip(&commands) {
            println(&format!("[{}] envbench {}", item.index, quote_words(command[1..].iter())));
        }
        return Ok(ExitCode::SUCCESS);
    }

    let (suite_id, done) = if args.resume {
        resume_point(location, &suite, &plan)?
    } else {
        (uuid::Uuid::new_v4().to_string(), BTreeSet::new())
    };
    let interrupt = interrupt_flag();
    let total = suite.items.len();
    // With --json, the suite's progress is quiet too (each run's warnings still show), and its runs' output is in
    // the one document at the end.
    let progress = |line: String| {
        if !args.json {
            eprintln!("{line}");
        }
    };
    progress(format!(
        "envbench run: suite {} ({total} run{}{}), suite id {suite_id}",
        suite.name,
        if total == 1 { "" } else { "s" },
        if done.is_empty() { String::new() } else { format!(", resuming: {} already complete", done.len()) }
    ));
    let (mut failures, mut finished, started) = (0, 0usize, std::time::Instant::now());
    let to_run: Vec<_> = suite.items.iter().zip(&commands).filter(|(item, _)| !done.contains(&item.index)).collect();
    for &(item, command) in &to_run {
        if interrupt.load(Ordering::SeqCst) {
            break;
        }
        let mut argv = command.clone();
        argv.extend(["--suite-id".into(), suite_id.clone()]);
        if builtin {
            argv.extend(["--defaults-of".into(), suite.name.clone()]);
        }
        if args.json {
            argv.push("--json".into());
        }
        for (key, value) in [
            (SUITE_TAG, suite_id.as_str()),
            (SUITE_NAME_TAG, suite.name.as_str()),
            (SUITE_PLAN_TAG, plan.as_str()),
            (SUITE_ITEM_TAG, &item.index.to_string()),
        ] {
            argv.extend(["--tag".into(), format!("{key}={value}")]);
        }
        let shown = quote_words(command[1..].iter());
        argv.extend([
            "--invoked-as".into(),
            format!("envbench {shown} (suite {}, run {} of {total})", suite.name, item.index),
        ]);
        let pace = pace_words(started.elapsed(), finished, to_run.len());
        progress(format!("\n[{}/{total}] envbench {shown}{pace}", item.index));
        finished += 1;
        let matches = crate::cli::command().try_get_matches_from(&argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        let dispatched = if args.json {
            crate::output::without_stdout(|| crate::commands::dispatch(location, &matches))
        } else {
            crate::commands::dispatch(location, &matches)
        };
        match dispatched {
            Ok(code) if code == ExitCode::SUCCESS || interrupt.load(Ordering::SeqCst) => {}
            // Stored, but not everything worked (e.g. queries that failed): the run said what above.
            Ok(_) => failures += 1,
            Err(error) => {
                failures += 1;
                let why = crate::output::error_text(&error);
                eprintln!("envbench: [{}/{total}] {}: {why}", item.index, item.workload);
            }
        }
    }
    let interrupted = interrupt.load(Ordering::SeqCst);
    let (ended, took) = (if interrupted { "stopped" } else { "done" }, duration_words(started.elapsed()));
    progress(format!("\nenvbench run: suite {} {ended} in {took}", suite.name));

    let store = store(location, false)?;
    let mut tags = BTreeMap::new();
    tags.insert(SUITE_TAG.to_string(), suite_id.clone());
    let runs = store.list_runs(&RunFilter { tags, ..Default::default() })?;
    let mut stored: Vec<StoredRun> = runs.iter().map(|r| store.load_run(&r.uuid)).collect::<Result<_, _>>()?;
    stored.sort_by_key(item_index);
    // The side to compare by: the label the user gave (every run under it, this suite's included, as the README does
    // it), or this suite when it has none.
    let side = match &args.label {
        Some(label) => format!("label:{label}"),
        None => format!("{SUITE_TAG}={suite_id}"),
    };
    if !args.json {
        println("");
        print(&scorecard::scorecard(&suite, &stored));
        if interrupted {
            println(&format!(
                "Suite interrupted: finished runs are kept; `envbench run --suite {} --resume` continues it.",
                args.suite
            ));
        }
    }
    let mut written = None;
    if !stored.is_empty()
        && let Some(report) = &report
    {
        let sides = envbench_verdict::resolve_sides(store.as_ref(), &[format!("tag:{SUITE_TAG}={suite_id}")])?;
        report.write(&envbench_report::render_report(&sides, &WORKLOADS))?;
        written = Some(args.report.display().to_string());
        if !args.json {
            println(&format!(
                "Report: {}   Compare with another environment: envbench compare {side} <other side>",
                args.report.display()
            ));
        }
    }
    if args.json {
        let end = match (interrupted, failures) {
            (true, _) => SuiteEnd::Interrupted,
            (false, 0) => SuiteEnd::Complete,
            (false, _) => SuiteEnd::Failed,
        };
        let (elapsed, report) = (started.elapsed(), written);
        let outcome =
            SuiteOutcome { suite: &suite, file: &file, suite_id: &suite_id, plan: &plan, end, elapsed, report, side };
        let document = serde_json::to_string_pretty(&scorecard::document(&outcome, &stored)?)?;
        println(&envbench_core::model::redact_secrets(&document));
    }
    Ok(if interrupted {
        ExitCode::from(130)
    } else if failures > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The largest suite file read (the largest example is a few KiB).
const MAX_SUITE_FILE_BYTES: u64 = 1 << 20;

/// The suite the arguments name, and how to name it in errors.
fn load(args: &RunArgs) -> anyhow::Result<(Suite, String)> {
    let name = if args.smoke { "smoke" } else { args.suite.as_str() };
    let known = WORKLOADS.names();
    if let Some(text) = WORKLOADS.builtin_suite(name) {
        return Ok((parse_suite(&text, name, &known).map_err(|e| usage(e.to_string()))?, name.to_string()));
    }
    let path = Path::new(&args.suite);
    if !path.exists() {
        return Err(usage(format!(
            "--suite {}: not a built-in suite (quick, standard) and not a file{}",
            envbench_core::text::printable(&args.suite),
            envbench_core::text::did_you_mean(&envbench_core::text::suggestions(
                &args.suite,
                envbench_core::workload::BUILTIN_SUITES.iter().copied().filter(|s| *s != "smoke")
            ))
        )));
    }
    let text = crate::files::read_small_file(path, "--suite", MAX_SUITE_FILE_BYTES)?;
    let file = path.display().to_string();
    Ok((parse_suite(&text, &file, &known).map_err(|e| usage(e.to_string()))?, file))
}

/// The command line of one run: the workload, its parameters, and what the suite adds (where it works, labels, tags).
fn item_command(item: &SuiteItem, args: &RunArgs, user_tags: &BTreeMap<String, String>) -> Vec<String> {
    let mut argv = vec!["envbench".to_string(), item.workload.clone()];
    argv.extend(item.args.iter().cloned());
    if let Some((option, value)) =
        WORKLOADS.find(&item.workload).and_then(|w| w.suite_side().place(&args.dir, &item.args))
    {
        argv.extend([option.to_string(), value]);
    }
    if let Some(label) = &args.label {
        argv.extend(["--label".into(), label.clone()]);
    }
    for (key, value) in user_tags {
        argv.extend(["--tag".into(), format!("{key}={value}")]);
    }
    if let Some(address) = args.metrics_listen {
        argv.extend(["--metrics-listen".into(), address.to_string()]);
    }
    for (key, value) in &item.matrix {
        if !user_tags.contains_key(key) {
            // A matrix of connection URLs must not put a password into the tags.
            argv.extend(["--tag".into(), format!("{key}={}", envbench_core::model::redact_secrets(value))]);
        }
    }
    argv
}

/// The suite id of the latest run of this plan, and the items it completed.
fn resume_point(location: &StoreLocation, suite: &Suite, plan: &str) -> anyhow::Result<(String, BTreeSet<usize>)> {
    let store = store(location, false)?;
    let mut tags = BTreeMap::new();
    tags.insert(SUITE_PLAN_TAG.to_string(), plan.to_string());
    tags.insert(SUITE_NAME_TAG.to_string(), suite.name.clone());
    let runs = store.list_runs(&RunFilter { tags, ..Default::default() })?;
    let Some(latest) = runs.first() else {
        return Err(usage(format!(
            "nothing to resume: no earlier run of suite {} with this plan is in the store",
            suite.name
        )));
    };
    let suite_id = latest.tags.get(SUITE_TAG).cloned().unwrap_or_default();
    let done: BTreeSet<usize> = runs
        .iter()
        .filter(|r| r.tags.get(SUITE_TAG) == Some(&suite_id) && r.status == RunStatus::Complete)
        .filter_map(|r| r.tags.get(SUITE_ITEM_TAG).and_then(|i| i.parse().ok()))
        .collect();
    if done.len() == suite.items.len() {
        return Err(usage(format!("nothing to resume: suite {} ({suite_id}) already completed every run", suite.name)));
    }
    Ok((suite_id, done))
}

fn item_index(run: &StoredRun) -> (usize, String) {
    let index = run.summary.tags.get(SUITE_ITEM_TAG).and_then(|i| i.parse().ok()).unwrap_or(usize::MAX);
    (index, run.summary.started_at.clone())
}
