//! `envbench results export`: one row per raw sample as CSV, TSV or JSON, or a workload's own layout.

use crate::cli::{ExportArgs, ExportFormat};
use crate::commands::store;
use crate::files::{EXPORT_COLUMNS, OutputFile};
use crate::output::print;
use crate::registry::WORKLOADS;
use envbench_core::fingerprint::Fingerprint;
use envbench_store::{RunFilter, StoreLocation, StoredRun};
use serde::Serialize;
use std::process::ExitCode;

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

pub fn export(location: &StoreLocation, args: ExportArgs) -> anyhow::Result<ExitCode> {
    let output = args.output.as_deref().map(|path| OutputFile::check(path, "-o", args.force, location)).transpose()?;
    let tracker = matches!(args.format, ExportFormat::Bencher | ExportFormat::GithubActionBenchmark);
    let better = match (args.format, args.better) {
        (ExportFormat::GithubActionBenchmark, None) => {
            return Err(crate::usage(
                "--format github-action-benchmark: give --better higher (for the action's tool customBiggerIsBetter) \
                 or --better lower (customSmallerIsBetter); the action reads each file one way",
            ));
        }
        (ExportFormat::GithubActionBenchmark, Some(better)) => Some(better),
        (_, Some(_)) => return Err(crate::usage("--better is for --format github-action-benchmark only")),
        (_, None) => None,
    };
    let store = store(location, false)?;
    let filter = super::selection::selected(&args.selection)?;
    let filtered = filter.workload.is_some() || filter.label.is_some() || !filter.tags.is_empty();
    let uuids: Vec<String> = if args.runs.is_empty() && !filtered && tracker {
        latest_suite(&store.list_runs(&RunFilter::default())?)
    } else {
        // Oldest first.
        super::selection::runs_of(store.as_ref(), &args.runs, &filter)?.into_iter().rev().map(|r| r.uuid).collect()
    };
    let runs: Vec<StoredRun> = uuids.iter().map(|u| store.load_run(u)).collect::<Result<_, _>>()?;
    let results = runs.iter().map(|r| r.results.len()).sum();
    let native = if args.format == ExportFormat::Tsv { native_tsv(&runs)? } else { None };
    let (text, count) = match (args.format, better, native) {
        (_, _, Some(text)) => {
            let count = text.lines().count().saturating_sub(1);
            (text, count)
        }
        (ExportFormat::GithubActionBenchmark, Some(better), _) => {
            (super::tracker_export::github_action_benchmark(&runs, better)?, results)
        }
        (ExportFormat::Bencher, _, _) => (super::tracker_export::bencher(&runs)?, results),
        (format, _, None) => {
            let rows = sample_rows(&runs);
            let text = match format {
                ExportFormat::Csv => delimited(&rows, ',', csv_field),
                ExportFormat::Tsv => delimited(&rows, '\t', tsv_field),
                _ => serde_json::to_string_pretty(&rows)? + "\n",
            };
            (text, rows.len())
        }
    };
    write_export(output.as_ref(), &text, count)
}

/// One row per raw sample of every result of the runs.
fn sample_rows(runs: &[StoredRun]) -> Vec<ExportRow<'_>> {
    let mut rows = Vec::new();
    for run in runs {
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
    rows
}

/// The runs of the latest suite, oldest first, or the latest run when it is not part of a suite; none in an empty
/// store.
fn latest_suite(runs: &[envbench_store::RunSummary]) -> Vec<String> {
    let Some(latest) = runs.first() else { return Vec::new() };
    match &latest.suite_id {
        Some(suite) => {
            runs.iter().rev().filter(|r| r.suite_id.as_ref() == Some(suite)).map(|r| r.uuid.clone()).collect()
        }
        None => vec![latest.uuid.clone()],
    }
}

fn write_export(output: Option<&OutputFile>, text: &str, row_count: usize) -> anyhow::Result<ExitCode> {
    match output {
        Some(file) => {
            file.write(text)?;
            eprintln!("wrote {row_count} rows to {}", file.path().display());
        }
        None => print(text),
    }
    Ok(ExitCode::SUCCESS)
}

/// When every run is of one workload that has its own export layout (ranread: the original RanRead tool's, which its
/// analysis spreadsheet expects), the TSV export takes that layout.
fn native_tsv(runs: &[StoredRun]) -> anyhow::Result<Option<String>> {
    let Some(first) = runs.first() else { return Ok(None) };
    if runs.iter().any(|r| r.summary.workload != first.summary.workload) {
        return Ok(None);
    }
    let workload = WORKLOADS.read_back(&first.summary.workload);
    let mut text = String::new();
    for (index, run) in runs.iter().enumerate() {
        let Some(table) = workload.native_tsv(run) else { return Ok(None) };
        let table = table.map_err(|e| anyhow::anyhow!(e))?;
        if index == 0 {
            text.push_str(&table.header.join("\t"));
            text.push('\n');
        }
        for row in table.rows {
            text.push_str(&row.iter().map(|cell| tsv_field(cell)).collect::<Vec<_>>().join("\t"));
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

/// RFC 4180 quoting, after [`spreadsheet_safe`].
fn csv_field(text: &str) -> String {
    let text = spreadsheet_safe(text);
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.into_owned() }
}

/// Tabs and line breaks cannot appear inside a TSV field: they become spaces; then [`spreadsheet_safe`].
fn tsv_field(text: &str) -> String {
    spreadsheet_safe(&text.replace(['\t', '\n', '\r'], " ")).into_owned()
}

/// A cell a spreadsheet will not run as a formula: text beginning with `=`, `+`, `-`, `@`, a tab or a carriage return
/// (a label such as `=HYPERLINK(...)`) gets a leading `'`, as OWASP advises for CSV exports. Numbers, negative ones
/// included, are left as they are.
fn spreadsheet_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && text.parse::<f64>().is_err() { format!("'{text}").into() } else { text.into() }
}

/// A one-line description of an environment, for exports.
pub fn environment_summary(fp: &Fingerprint) -> String {
    let mut parts = Vec::new();
    if let Some(model) = &fp.cpu.model {
        parts.push(model.clone());
    }
    if let Some(threads) = fp.cpu.threads {
        // A process held to fewer CPUs than the machine has says so: `2 threads, 1 usable (affinity)`.
        parts.push(match fp.limits.usable_cpus_words(fp.cpu.threads) {
            Some(usable) => format!("{threads} threads, {usable}"),
            None => format!("{threads} threads"),
        });
    }
    if let Some(smt) = fp.cpu.smt_control_words() {
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

    /// The battery's finding D12: a label beginning with `=` reached a spreadsheet as a formula.
    #[test]
    fn exported_text_never_runs_as_a_formula() {
        assert_eq!(csv_field("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
        for formula in ["+1+2", "-cmd", "@SUM(A1)", "=1"] {
            assert_eq!(csv_field(formula), format!("'{formula}"));
            assert_eq!(tsv_field(formula), format!("'{formula}"));
        }
        assert_eq!(csv_field("-1.5"), "-1.5");
        assert_eq!(csv_field("1e-3"), "1e-3");
    }
}
