//! `envbench results list|show|suites|environments` (`export`, `token` and the run selection in modules of their own).

use super::selection::{runs_of, selected};
use crate::cli::{GroupArgs, ListArgs, ResultsAction, ResultsArgs, ShowArgs};
use crate::commands::store;
use crate::output::{print, println};
use envbench_core::model::redact_secrets;
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, heading, number, printable};
use envbench_store::{RunFilter, StoreLocation};
use std::process::ExitCode;

pub fn run(location: &StoreLocation, args: ResultsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        ResultsAction::List(args) => list(location, args),
        ResultsAction::Show(args) => show(location, args),
        ResultsAction::Export(args) => super::export::export(location, args),
        ResultsAction::Suites(args) => suites(location, args),
        ResultsAction::Environments(args) => environments(location, args),
        ResultsAction::Token(args) => super::tokens::token(location, args),
    }
}

/// The suites in the store, with the side that names each for `compare` and `report`.
fn suites(location: &StoreLocation, args: GroupArgs) -> anyhow::Result<ExitCode> {
    let store = store(location, false)?;
    let suites = envbench_report::suite_summaries(&store.list_runs(&RunFilter::default())?, &store.environments()?);
    if args.json {
        println(&serde_json::to_string_pretty(&suites)?);
        return Ok(ExitCode::SUCCESS);
    }
    if suites.is_empty() {
        println(&format!("No suites in {}: `envbench run` runs one.", location.display()));
        return Ok(ExitCode::SUCCESS);
    }
    use Align::{Left, Right};
    let mut table = Table::new(
        &["SIDE", "SUITE", "STARTED (UTC)", "RUNS", "LABEL", "ENVIRONMENT"],
        &[Left, Left, Left, Right, Left, Left],
    );
    for suite in &suites {
        table.row(vec![
            format!("suite={}", suite.id),
            printable(&suite.name),
            suite.started_at.get(..19).unwrap_or(&suite.started_at).replace('T', " "),
            format!("{}/{}", suite.complete, suite.runs),
            printable(&suite.labels.join(",")),
            printable(
                &suite.environments.iter().map(|e| format!("{} {}", e.id, e.name)).collect::<Vec<_>>().join("; "),
            ),
        ]);
    }
    print(&table.render());
    if let Some(previous) = suites.first().and_then(|s| s.previous.as_ref()) {
        println(&format!(
            "Compare the latest suite with the one before it: envbench compare suite={previous} suite={}",
            suites[0].id
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The environments in the store.
fn environments(location: &StoreLocation, args: GroupArgs) -> anyhow::Result<ExitCode> {
    let store = store(location, false)?;
    let (fingerprints, tallies) = store.fingerprint_tallies()?;
    let environments = envbench_report::environment_summaries(&fingerprints, &tallies);
    if args.json {
        println(&serde_json::to_string_pretty(&environments)?);
        return Ok(ExitCode::SUCCESS);
    }
    if environments.is_empty() {
        println(&format!("No runs in {}.", location.display()));
        return Ok(ExitCode::SUCCESS);
    }
    use Align::{Left, Right};
    let mut table = Table::new(
        &["ID", "ENVIRONMENT", "LABELS", "HOSTS", "RUNS", "LAST RUN (UTC)"],
        &[Left, Left, Left, Left, Right, Left],
    );
    for e in &environments {
        table.row(vec![
            e.identity.id.clone(),
            printable(&e.identity.name),
            printable(&e.labels.join(",")),
            printable(&e.hosts.join(",")),
            e.runs.to_string(),
            e.last_run_at.get(..19).unwrap_or(&e.last_run_at).replace('T', " "),
        ]);
    }
    print(&table.render());
    println("History and rank of each: envbench serve, then Environments.");
    Ok(ExitCode::SUCCESS)
}

/// The most runs `results list` shows in its table unless told (`--limit`, `--all`).
const LISTED_RUNS: usize = 100;

fn list(location: &StoreLocation, args: ListArgs) -> anyhow::Result<ExitCode> {
    // The table shows the newest hundred: one more is read to know whether there are more.
    let shown = (!args.json && !args.all && args.limit.is_none()).then_some(LISTED_RUNS);
    let limit = args.limit.map(|limit| usize::try_from(limit).unwrap_or(usize::MAX)).or(shown.map(|n| n + 1));
    let filter = RunFilter { host: args.host, limit, ..selected(&args.selection)? };
    let store = store(location, false)?;
    let mut runs = runs_of(store.as_ref(), &args.sides, &filter)?;
    let more = shown.is_some_and(|n| runs.len() > n);
    runs.truncate(shown.unwrap_or(usize::MAX));
    if args.json {
        println(&serde_json::to_string_pretty(&runs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println(&format!("No runs match in {}.", location.display()));
        return Ok(ExitCode::SUCCESS);
    }
    use Align::{Left, Right};
    let mut table = Table::new(
        &["RUN", "STARTED (UTC)", "WORKLOAD", "STATUS", "LABEL", "TAGS", "HOST", "ENVIRONMENT", "RESULTS"],
        &[Left, Left, Left, Left, Left, Left, Left, Left, Right],
    );
    let environments = store.environments_of(&runs.iter().map(|r| r.uuid.as_str()).collect::<Vec<_>>())?;
    for run in &runs {
        table.row(vec![
            run.uuid[..8].to_string(),
            run.started_at.get(..19).unwrap_or(&run.started_at).replace('T', " "),
            run.workload.clone(),
            run.status.to_string(),
            run.label.clone().unwrap_or_default(),
            envbench_report::user_tags(&run.tags, ","),
            run.host.clone().unwrap_or_default(),
            environments.of(&run.uuid).map(|f| envbench_verdict::environment_identity(f).id).unwrap_or_default(),
            run.result_count.to_string(),
        ]);
    }
    print(&table.render());
    if more {
        println(&format!("The newest {LISTED_RUNS} runs; more match: --limit N lists more, --all every one."));
    }
    Ok(ExitCode::SUCCESS)
}

fn show(location: &StoreLocation, args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = store(location, false)?;
    let run = store.load_run(&store.find_run(&args.run)?)?;
    if args.json {
        println(&redact_secrets(&serde_json::to_string_pretty(&run)?));
        return Ok(ExitCode::SUCCESS);
    }
    use std::fmt::Write;
    let mut out = String::new();
    let s = &run.summary;
    writeln!(out, "{}", heading(&format!("Run {}", s.uuid)))?;
    writeln!(out, "  Workload      {}", s.workload)?;
    writeln!(
        out,
        "  Status        {}{}",
        s.status,
        s.status_reason.as_ref().map(|r| format!(" ({})", printable(r))).unwrap_or_default()
    )?;
    writeln!(out, "  Started       {}", s.started_at)?;
    writeln!(out, "  Ended         {}", s.ended_at.as_deref().unwrap_or("-"))?;
    if let Some(label) = &s.label {
        writeln!(out, "  Label         {}", printable(label))?;
    }
    if !s.tags.is_empty() {
        let tags: Vec<String> = s.tags.iter().map(|(k, v)| printable(&format!("{k}={v}"))).collect();
        writeln!(out, "  Tags          {}", tags.join(" "))?;
    }
    writeln!(out, "  Command       {}", printable(&run.command_line))?;
    writeln!(out, "  envbench      {}", run.tool_version)?;
    writeln!(out)?;
    write!(out, "{}", envbench_probe::sysinfo::render(&run.fingerprint))?;
    if !run.results.is_empty() {
        writeln!(out)?;
        use Align::{Left, Right};
        let mut table = Table::new(
            &["TEST", "METRIC", "UNIT", "N", "MEAN", "MEDIAN", "MIN", "MAX", "CV", "FLAGS"],
            &[Left, Left, Left, Right, Right, Right, Right, Right, Right, Left],
        );
        for result in &run.results {
            let r = &result.record;
            let Some(summary) = Summary::of(&r.samples) else { continue };
            let mut flags = r.flags.clone();
            if summary.is_noisy() {
                flags.push("noisy".into());
            }
            table.row(vec![
                r.test_id.clone(),
                r.metric.clone(),
                r.unit.clone(),
                summary.count.to_string(),
                number(summary.mean),
                number(summary.median),
                number(summary.min),
                number(summary.max),
                format!("{:.1}%", summary.cv * 100.0),
                flags.join(","),
            ]);
        }
        write!(out, "{}", table.render())?;
    }
    if let Some(series) = &run.series {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            heading(&format!(
                "Sampler: {} points every {} ms on {}; its own cost {:.3}% of a core",
                series.points.len(),
                series.interval_ms,
                if series.devices.is_empty() { "no block device".to_string() } else { series.devices.join(", ") },
                series.own_cost_percent_of_core()
            ))
        )?;
        if !series.steps.is_empty() {
            use Align::{Left, Right};
            let mut table = Table::new(
                &[
                    "STEP", "SECONDS", "DEVICE", "r/s", "w/s", "rMB/s", "wMB/s", "r_await", "w_await", "aqu-sz",
                    "%util", "%usr", "%sys", "%iowait", "%steal",
                ],
                &[
                    Left, Right, Left, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right,
                    Right,
                ],
            );
            for step in &series.steps {
                let seconds = format!("{:.1}", (step.end_ms - step.start_ms) as f64 / 1000.0);
                let cpu = &step.cpu;
                let cpu_cells = [cpu.user_percent, cpu.system_percent, cpu.iowait_percent, cpu.steal_percent]
                    .map(|v| format!("{v:.1}"));
                match step.disks.first() {
                    Some(d) => {
                        let mut row = vec![step.step.clone(), seconds, d.device.clone()];
                        row.extend(
                            [
                                d.reads_per_s,
                                d.writes_per_s,
                                d.read_mb_per_s,
                                d.write_mb_per_s,
                                d.read_await_ms,
                                d.write_await_ms,
                                d.queue_size,
                                d.util_percent,
                            ]
                            .map(number),
                        );
                        row.extend(cpu_cells);
                        table.row(row);
                    }
                    None => {
                        let mut row = vec![step.step.clone(), seconds, "-".into()];
                        row.extend(std::iter::repeat_n(String::new(), 8));
                        row.extend(cpu_cells);
                        table.row(row);
                    }
                }
            }
            write!(out, "{}", table.render())?;
        }
    }
    for (name, document) in &run.attachments {
        writeln!(out)?;
        writeln!(out, "{}", heading(name))?;
        writeln!(out, "{}", serde_json::to_string_pretty(document)?)?;
    }
    // Runs stored by older versions may hold secrets in their command lines and documents: never shown.
    print(&redact_secrets(&out));
    Ok(ExitCode::SUCCESS)
}
