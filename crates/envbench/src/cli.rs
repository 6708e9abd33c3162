//! Command-line definitions.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "envbench",
    version,
    about = "Benchmark where your database runs: storage, random reads, OLAP cube and analytic queries, \
             with the environment recorded and results kept for comparison."
)]
pub struct Cli {
    /// Results store: a SQLite file (default: $XDG_DATA_HOME/envbench/results.db).
    #[arg(long, global = true, env = "ENVBENCH_STORE", value_name = "PATH")]
    pub store: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show the environment fingerprint: CPU, SMT, memory, OS, virtualization, and the storage stack under a path.
    Sysinfo(SysinfoArgs),
    /// List, show and export stored results.
    Results(ResultsArgs),
}

/// How a run is named in the user's methodology; accepted by every workload command.
#[derive(Args, Debug, Clone, Default)]
pub struct RunLabels {
    /// A name for this configuration, e.g. physical-p3605.
    #[arg(long)]
    pub label: Option<String>,
    /// A key=value tag, e.g. --tag ht=off --tag storage=iscsi (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
}

#[derive(Args, Debug)]
pub struct SysinfoArgs {
    /// The data directory whose storage stack to describe.
    #[arg(long, default_value = ".")]
    pub path: PathBuf,
    /// Print JSON instead of the human view.
    #[arg(long)]
    pub json: bool,
    /// Also keep the fingerprint in the results store, as a run of its own.
    #[arg(long)]
    pub save: bool,
    #[command(flatten)]
    pub labels: RunLabels,
}

#[derive(Args, Debug)]
pub struct ResultsArgs {
    #[command(subcommand)]
    pub action: ResultsAction,
}

#[derive(Subcommand, Debug)]
pub enum ResultsAction {
    /// List runs, newest first.
    List(ListArgs),
    /// Show one run: environment, results and sampler summary.
    Show(ShowArgs),
    /// Export results, one row per raw sample.
    Export(ExportArgs),
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only runs of this workload (disk, ranread, cube, tpch, exec, sysinfo).
    #[arg(long)]
    pub workload: Option<String>,
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs with this tag (repeatable; all must match).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Only runs on this host name.
    #[arg(long)]
    pub host: Option<String>,
    /// At most this many runs.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A run id or a unique prefix of one.
    pub run: String,
    /// Print JSON (everything kept about the run).
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Tsv,
    Json,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Runs to export (ids or unique prefixes); all runs when none are given.
    pub runs: Vec<String>,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}
