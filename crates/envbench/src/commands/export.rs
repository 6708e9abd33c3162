//! `envbench results export`: the runs chosen, in the format asked for (`envbench-export` holds one exporter per
//! format), to standard output or a file.

use crate::cli::{Better, ExportArgs, ExportFormat};
use crate::commands::store;
use crate::files::OutputFile;
use crate::output::print;
use crate::registry::WORKLOADS;
use envbench_core::model::Direction;
use envbench_export::{Bencher, Csv, Exporter, GithubActionBenchmark, Json, Tsv};
use envbench_store::{RunFilter, StoreLocation, StoredRun};
use std::process::ExitCode;

pub fn export(location: &StoreLocation, args: ExportArgs) -> anyhow::Result<ExitCode> {
    let output = args.output.as_deref().map(|path| OutputFile::check(path, "-o", args.force, location)).transpose()?;
    let tracker = matches!(args.format, ExportFormat::Bencher | ExportFormat::GithubActionBenchmark);
    let exporter: Box<dyn Exporter> = match (args.format, args.better) {
        (ExportFormat::GithubActionBenchmark, None) => {
            return Err(crate::usage(
                "--format github-action-benchmark: give --better higher (for the action's tool customBiggerIsBetter) \
                 or --better lower (customSmallerIsBetter); the action reads each file one way",
            ));
        }
        (ExportFormat::GithubActionBenchmark, Some(better)) => Box::new(GithubActionBenchmark {
            better: match better {
                Better::Higher => Direction::HigherIsBetter,
                Better::Lower => Direction::LowerIsBetter,
            },
        }),
        (_, Some(_)) => return Err(crate::usage("--better is for --format github-action-benchmark only")),
        (ExportFormat::Csv, None) => Box::new(Csv),
        (ExportFormat::Tsv, None) => Box::new(Tsv { workloads: &WORKLOADS }),
        (ExportFormat::Json, None) => Box::new(Json),
        (ExportFormat::Bencher, None) => Box::new(Bencher),
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
    let export = exporter.export(&runs)?;
    write_export(output.as_ref(), &export.text, export.rows)
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
