//! `envbench results list|show|export`.

use crate::cli::{ExportArgs, ExportFormat, ListArgs, ResultsAction, ResultsArgs, ShowArgs};
use crate::commands::{parse_tags, store, sysinfo};
use crate::output::{Align, Table, heading, number};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::stats::Summary;
use envbench_store::{RunFilter, StoreLocation, StoredRun};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

pub fn run(location: &StoreLocation, args: ResultsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        ResultsAction::List(args) => list(location, args),
        ResultsAction::Show(args) => show(location, args),
        ResultsAction::Export(args) => export(location, args),
    }
}

fn list(location: &StoreLocation, args: ListArgs) -> anyhow::Result<ExitCode> {
    let filter = RunFilter {
        workload: args.workload,
        label: args.label,
        tags: parse_tags(&args.tags)?,
        host: args.host,
        limit: args.limit,
    };
    let runs = store(location, false)?.list_runs(&filter)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("No runs match in {}.", location.display());
        return Ok(ExitCode::SUCCESS);
    }
    use Align::{Left, Right};
    let mut table = Table::new(
        &["RUN", "STARTED (UTC)", "WORKLOAD", "STATUS", "LABEL", "TAGS", "HOST", "RESULTS"],
        &[Left, Left, Left, Left, Left, Left, Left, Right],
    );
    for run in &runs {
        table.row(vec![
            run.uuid[..8].to_string(),
            run.started_at.get(..19).unwrap_or(&run.started_at).replace('T', " "),
            run.workload.clone(),
            run.status.to_string(),
            run.label.clone().unwrap_or_default(),
            run.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","),
            run.host.clone().unwrap_or_default(),
            run.result_count.to_string(),
        ]);
    }
    print!("{}", table.render());
    Ok(ExitCode::SUCCESS)
}

fn show(location: &StoreLocation, args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = store(location, false)?;
    let run = store.load_run(&store.find_run(&args.run)?)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&run)?);
        return Ok(ExitCode::SUCCESS);
    }
    let s = &run.summary;
    println!("{}", heading(&format!("Run {}", s.uuid)));
    println!("  Workload      {}", s.workload);
    println!("  Status        {}{}", s.status, s.status_reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default());
    println!("  Started       {}", s.started_at);
    println!("  Ended         {}", s.ended_at.as_deref().unwrap_or("-"));
    if let Some(label) = &s.label {
        println!("  Label         {label}");
    }
    if !s.tags.is_empty() {
        println!("  Tags          {}", s.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "));
    }
    println!("  Command       {}", run.command_line);
    println!("  envbench      {}", run.tool_version);
    println!();
    print!("{}", sysinfo::render(&run.fingerprint));
    if !run.results.is_empty() {
        println!();
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
        print!("{}", table.render());
    }
    if let Some(series) = &run.series {
        println!();
        println!(
            "{}",
            heading(&format!(
                "Sampler: {} points every {} ms on {}; its own cost {:.3}% of a core",
                series.points.len(),
                series.interval_ms,
                if series.devices.is_empty() { "no block device".to_string() } else { series.devices.join(", ") },
                series.own_cost_percent_of_core()
            ))
        );
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
            print!("{}", table.render());
        }
    }
    for (name, document) in &run.attachments {
        println!();
        println!("{}", heading(name));
        println!("{}", serde_json::to_string_pretty(document)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// One exported row: one raw sample with everything needed to read it alone.
#[derive(Serialize)]
struct ExportRow<'a> {
    run: &'a str,
    label: &'a str,
    tags: String,
    started_at: &'a str,
    status: &'a str,
    host: &'a str,
    environment: String,
    workload: &'a str,
    workload_version: u32,
    test: &'a str,
    parameters: String,
    parameters_hash: &'a str,
    metric: &'a str,
    unit: &'a str,
    better: &'static str,
    flags: String,
    sample: usize,
    value: f64,
}

const EXPORT_COLUMNS: &[&str] = &[
    "run",
    "label",
    "tags",
    "started_at",
    "status",
    "host",
    "environment",
    "workload",
    "workload_version",
    "test",
    "parameters",
    "parameters_hash",
    "metric",
    "unit",
    "better",
    "flags",
    "sample",
    "value",
];

fn export(location: &StoreLocation, args: ExportArgs) -> anyhow::Result<ExitCode> {
    let store = store(location, false)?;
    let uuids: Vec<String> = if args.runs.is_empty() {
        store.list_runs(&RunFilter::default())?.into_iter().rev().map(|r| r.uuid).collect()
    } else {
        args.runs.iter().map(|r| store.find_run(r)).collect::<Result<_, _>>()?
    };
    let runs: Vec<StoredRun> = uuids.iter().map(|u| store.load_run(u)).collect::<Result<_, _>>()?;
    if args.format == ExportFormat::Tsv
        && let Some(text) = ranread_tsv(&runs)?
    {
        return write_export(&args, &text, text.lines().count().saturating_sub(1));
    }
    let mut rows = Vec::new();
    for run in &runs {
        let environment = environment_summary(&run.fingerprint);
        let tags = run.summary.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
        for result in &run.results {
            let r = &result.record;
            for (index, value) in r.samples.iter().enumerate() {
                rows.push(ExportRow {
                    run: &run.summary.uuid,
                    label: run.summary.label.as_deref().unwrap_or(""),
                    tags: tags.clone(),
                    started_at: &run.summary.started_at,
                    status: run.summary.status.as_str(),
                    host: run.summary.host.as_deref().unwrap_or(""),
                    environment: environment.clone(),
                    workload: &r.workload,
                    workload_version: r.workload_version,
                    test: &r.test_id,
                    parameters: r.canonical_parameters(),
                    parameters_hash: &result.parameters_hash,
                    metric: &r.metric,
                    unit: &r.unit,
                    better: r.direction.as_str(),
                    flags: r.flags.join(","),
                    sample: index + 1,
                    value: *value,
                });
            }
        }
    }
    let text = match args.format {
        ExportFormat::Json => serde_json::to_string_pretty(&rows)? + "\n",
        ExportFormat::Csv => delimited(&rows, ',', csv_field),
        ExportFormat::Tsv => delimited(&rows, '\t', tsv_field),
    };
    write_export(&args, &text, rows.len())
}

fn write_export(args: &ExportArgs, text: &str, row_count: usize) -> anyhow::Result<ExitCode> {
    match &args.output {
        Some(path) => {
            std::fs::write(path, text)
                .map_err(|e| anyhow::anyhow!("{}: cannot write the export ({e})", path.display()))?;
            eprintln!("wrote {row_count} rows to {}", path.display());
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// When every run is a ranread sweep, the TSV export takes the original RanRead tool's layout (one line per step:
/// date, time, target, iterations, jobs, response time, IOPS), which its analysis spreadsheet expects.
fn ranread_tsv(runs: &[StoredRun]) -> anyhow::Result<Option<String>> {
    if runs.is_empty() || runs.iter().any(|r| r.summary.workload != "ranread" || !r.attachments.contains_key("ranread"))
    {
        return Ok(None);
    }
    let unreadable = |run: &StoredRun, e: serde_json::Error| {
        anyhow::anyhow!("run {}: its ranread record cannot be read ({e})", run.summary.uuid)
    };
    let mut text = envbench_ranread::TSV_HEADER.join("\t");
    text.push('\n');
    for run in runs {
        let document = &run.attachments["ranread"];
        let outcome: envbench_ranread::SweepOutcome =
            serde_json::from_value(document["outcome"].clone()).map_err(|e| unreadable(run, e))?;
        let limit: envbench_ranread::StepLimit =
            serde_json::from_value(document["parameters"]["limit"].clone()).map_err(|e| unreadable(run, e))?;
        let target = tsv_field(document["target"].as_str().unwrap_or_default());
        for row in envbench_ranread::tsv_rows(&outcome, &target, &limit) {
            text.push_str(&row.join("\t"));
            text.push('\n');
        }
    }
    Ok(Some(text))
}

fn delimited(rows: &[ExportRow], separator: char, field: fn(&str) -> String) -> String {
    let mut out = EXPORT_COLUMNS.join(&separator.to_string());
    out.push('\n');
    for row in rows {
        let value = serde_json::to_value(row).expect("rows serialize");
        let cells: Vec<String> = EXPORT_COLUMNS
            .iter()
            .map(|column| match &value[*column] {
                serde_json::Value::String(s) => field(s),
                other => field(&other.to_string()),
            })
            .collect();
        out.push_str(&cells.join(&separator.to_string()));
        out.push('\n');
    }
    out
}

/// RFC 4180 quoting.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_string() }
}

/// Tabs and line breaks cannot appear inside a TSV field: they become spaces.
fn tsv_field(text: &str) -> String {
    text.replace(['\t', '\n', '\r'], " ")
}

/// A one-line description of an environment, for exports.
pub fn environment_summary(fp: &Fingerprint) -> String {
    let mut parts = Vec::new();
    if let Some(model) = &fp.cpu.model {
        parts.push(model.clone());
    }
    if let Some(threads) = fp.cpu.threads {
        parts.push(format!("{threads} threads"));
    }
    if let Some(smt) = &fp.cpu.smt_control {
        parts.push(format!("SMT {smt}"));
    }
    parts.push(fp.virtualization.hypervisor.clone().unwrap_or_else(|| "bare metal".into()));
    if let Some(storage) = &fp.storage {
        let device = storage
            .physical_devices()
            .map(|d| format!("{}{}", d.name, d.transport.as_ref().map(|t| format!(" ({t})")).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("+");
        parts.push(if device.is_empty() {
            format!("{} on {}", storage.filesystem, storage.source)
        } else {
            format!("{} on {device}", storage.filesystem)
        });
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field(r#"{"a":1,"b":2}"#), r#""{""a"":1,""b"":2}""#);
        assert_eq!(tsv_field("a\tb\nc"), "a b c");
    }
}
