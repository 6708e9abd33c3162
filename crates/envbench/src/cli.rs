//! The command line: the global options, the commands that are not workloads (suites, results, comparisons, the
//! viewer, push), and the full command with every registered workload added (see [`crate::registry`]).

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use envbench_store::{StoreLocation, default_store_path};
use std::path::PathBuf;

/// `envbench --version`: the version, the commit it was built from and the build's profile.
pub const VERSION: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (", env!("ENVBENCH_COMMIT"), ", ", env!("ENVBENCH_PROFILE"), " build)");

#[derive(Parser, Debug)]
#[command(
    name = "envbench",
    version = VERSION,
    about = "Benchmark where your database runs: storage, database random reads, an OLAP cube, transactions, \
             transactions with analytics on the same tables, analytic queries, your own timed steps and your own \
             workload replayed from the server's log, with the environment recorded and results kept for \
             comparison."
)]
pub struct Cli {
    /// Results store: a SQLite file (default: $XDG_DATA_HOME/envbench/results.db) or postgres://user@host/database.
    #[arg(long, global = true, env = "ENVBENCH_STORE", value_name = "PATH|URL", value_parser = parse_store)]
    pub store: Option<StoreLocation>,

    #[command(subcommand)]
    pub command: Command,
}

/// `--store` (or `ENVBENCH_STORE`), parsed once, as clap reads it: a SQLite file, or a PostgreSQL URL kept parsed
/// on its way to the server. Empty (`ENVBENCH_STORE=`) is the default file.
fn parse_store(text: &str) -> Result<StoreLocation, String> {
    if text.is_empty() {
        return Ok(StoreLocation::Sqlite(default_store_path()));
    }
    StoreLocation::parse(text).map_err(|e| e.to_string())
}

/// The commands that are not workloads; each workload's command comes from its crate.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a suite: the quick default (a few minutes), standard, or your own TOML file with a matrix; ends with a
    /// scorecard and an HTML report.
    Run(RunArgs),
    /// List, show and export stored results.
    Results(ResultsArgs),
    /// Compare environments: runs, labels or tag filters side by side, with significance and what differs.
    Compare(CompareArgs),
    /// Write a self-contained HTML report with charts (opens offline) for runs, labels or tag filters.
    Report(ReportArgs),
    /// Browse and compare stored runs in a local, read-only web viewer.
    Serve(ServeArgs),
    /// Copy runs to another store (e.g. a shared PostgreSQL store); runs already there are skipped.
    Push(PushArgs),
    /// Take part in a fleet run on this host: `ENVBENCH_STORE=postgres://... envbench agent --fleet ID --name NAME`
    /// (what `envbench fleet` runs over ssh, and what Ansible, a Kubernetes job or Slurm run for --transport
    /// external).
    Agent(AgentArgs),
    /// Print shell completions for bash, zsh or fish: envbench completions bash > /etc/bash_completion.d/envbench
    /// (the Debian package installs all three).
    Completions(CompletionsArgs),
    /// Write a man page for envbench and each of its commands into a new or empty directory (what the packages
    /// ship): envbench manpages DIR; man -l DIR/envbench.1
    #[command(hide = true)]
    Manpages(ManpagesArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh or fish (also elvish, powershell).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManpagesArgs {
    /// A directory that does not exist yet, or is empty.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// The whole command line: the commands above and every registered workload, in the order `run`, the workloads,
/// then the rest. Options that take numbers accept negative ones as values, so `--repeat -1` is refused by name.
pub fn command() -> clap::Command {
    let mut command = Cli::command();
    for (index, workload) in crate::registry::WORKLOADS.iter().enumerate() {
        command = command.subcommand(crate::driver::command(workload).display_order(index + 1));
    }
    command = command.subcommand(fleet_command().display_order(crate::registry::WORKLOADS.iter().count() + 1));
    let run = command.find_subcommand("run").is_some();
    if run {
        command = command.mut_subcommand("run", |run| run.display_order(0));
    }
    for name in ["results", "compare", "report", "serve", "push", "agent", "completions"] {
        command = command.mut_subcommand(name, |c| c.display_order(100));
    }
    allow_negative_values(command)
}

/// The `fleet` command: its options, then one subcommand per workload that runs on a fleet, with that workload's
/// own options.
pub fn fleet_command() -> clap::Command {
    let mut command = FleetArgs::augment_args(clap::Command::new("fleet"))
        .about(
            "Run a workload on many hosts at once (started together, merged into one result) through a shared \
             PostgreSQL store: envbench fleet --host db1 --host db2 --store postgres://... ranread --jobs 1,2,4",
        )
        .subcommand_required(true)
        .subcommand_value_name("WORKLOAD");
    for workload in crate::registry::WORKLOADS.iter().filter(|w| w.fleet().is_some()) {
        command = command.subcommand(crate::driver::command(workload));
    }
    command
}

/// Let every option that takes a value take one starting with `-` (`--size -1g`, `--runs -1`), so the value's own check
/// names the option instead of clap reporting an unexpected argument. Positional arguments, and options whose value
/// may be left out (`--sustained [DURATION]`, so `--sustained --quick` is two options), keep clap's rules.
fn allow_negative_values(command: clap::Command) -> clap::Command {
    let command = command.mut_args(|arg| {
        let optional_value = arg.get_num_args().is_some_and(|range| range.min_values() == 0);
        if arg.get_action().takes_values() && !arg.is_positional() && !optional_value {
            arg.allow_hyphen_values(true)
        } else {
            arg
        }
    });
    let names: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_string()).collect();
    names.into_iter().fold(command, |command, name| command.mut_subcommand(name, allow_negative_values))
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
    /// List the suites (`envbench run`s), newest first, with the side to compare each by.
    Suites(GroupArgs),
    /// List the environments (CPU, memory, hypervisor, storage) the runs ran in, with their history per workload.
    Environments(GroupArgs),
    /// Make, list and revoke the upload tokens of a results service (`envbench serve --accept-uploads`), on the
    /// service's store.
    Token(TokenArgs),
}

#[derive(Args, Debug)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

#[derive(Subcommand, Debug)]
pub enum TokenAction {
    /// Make a token for a submitter: printed once on standard output (keep it in a file only they read); the store
    /// keeps only its SHA-256.
    Create(TokenName),
    /// List the tokens: names, when made and revoked, runs uploaded; never the tokens.
    List(GroupArgs),
    /// Revoke a submitter's token: its uploads are refused from now on; the runs it sent stay.
    Revoke(TokenName),
}

#[derive(Args, Debug)]
pub struct TokenName {
    /// The submitter's name, recorded with every run uploaded with the token.
    #[arg(long)]
    pub name: String,
}

#[derive(Args, Debug)]
pub struct GroupArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Which stored runs a command takes: the filters of `results list`, `results export` and `push`, which narrow the
/// sides given (or select from every run when none is).
#[derive(Args, Debug)]
pub struct RunSelection {
    /// Only runs of this workload (sysinfo, disk, ranread, cube, oltp, htap, tpch, exec, replay).
    #[arg(long)]
    pub workload: Option<String>,
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs with this tag (repeatable; all must match).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Sides, as for compare: run:ID (or a prefix), label:NAME, tag:K=V,..., suite=ID, or a bare label or run id; the
    /// runs of each are listed (every run when none is given).
    #[arg(value_name = "SIDE")]
    pub sides: Vec<String>,
    #[command(flatten)]
    pub selection: RunSelection,
    /// Only runs on this host name.
    #[arg(long)]
    pub host: Option<String>,
    /// At most this many runs, the newest (1 or more). The table shows the newest 100 unless told; --json every run.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Every run that matches, in the table too.
    #[arg(long, conflicts_with = "limit")]
    pub all: bool,
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
    /// Bencher Metric Format JSON (`bencher run --adapter json`).
    Bencher,
    /// github-action-benchmark's custom JSON, with --better higher (customBiggerIsBetter) or lower
    /// (customSmallerIsBetter).
    GithubActionBenchmark,
}

/// Which results a github-action-benchmark file holds: the action reads each file one way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Better {
    /// Higher is better (tool: customBiggerIsBetter): throughputs, IOPS, NOPM.
    Higher,
    /// Lower is better (tool: customSmallerIsBetter): times and latencies.
    Lower,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Sides to export, as for compare: run:ID (or a prefix), label:NAME, tag:K=V,..., suite=ID, or a bare label or run
    /// id. When none is given, every run (that matches the filters), or for bencher and github-action-benchmark without
    /// filters the latest suite's runs (or the latest run).
    #[arg(value_name = "SIDE")]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub selection: RunSelection,
    /// For --format github-action-benchmark: export the results where higher is better, or those where lower is.
    #[arg(long, value_enum)]
    pub better: Option<Better>,
    /// Write to this file instead of standard output (a new file, or an export envbench wrote before).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace the -o file even when envbench did not write it.
    #[arg(long, requires = "output")]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more sides, the first being the baseline: a run id (or prefix), a label, or tags such as ht=off,storage=nvme
    /// (write run:ID, label:NAME or tag:K=V to be explicit). A side holds all its runs, and the verdict's interval resamples whole runs (docs/compare.md). A side on a results
    /// service, read-only: https://host/label:NAME (any of the above after the host), or https://host/ alone (filters
    /// as the leaderboard's: https://host/?transport=nvme) for its best other environment on the first side's
    /// workloads; compare then also says where your sides stand there. One service URL alone compares your latest run
    /// (or suite) with it.
    #[arg(required = true, num_args = 1.., value_name = "SIDE")]
    pub sides: Vec<String>,
    /// For a results service over HTTPS: trust this CA certificate (PEM) besides the system's.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print a Markdown table, for pasting into tickets.
    #[arg(long)]
    pub markdown: bool,
    /// A gate for CI: exit 1 when the verdict finds a workload significantly slower than the baseline by more than
    /// this (e.g. 5%), 0 otherwise; either way it says why. A workload it cannot decide about passes, and says so.
    #[arg(long, value_name = "PERCENT")]
    pub fail_if_worse: Option<envbench_core::units::Percent>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Sides to report on (as for compare, on a results service too); none means the most recent run.
    #[arg(value_name = "SIDE")]
    pub sides: Vec<String>,
    /// For a results service over HTTPS: trust this CA certificate (PEM) besides the system's.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// The HTML file to write: a new file, or a report envbench wrote before.
    #[arg(short, long, default_value = "envbench-report.html")]
    pub output: PathBuf,
    /// Replace the -o file even when envbench did not write it.
    #[arg(long)]
    pub force: bool,
    /// Print, as JSON, the file written, the runs of each side and (for two sides or more) the comparison it shows.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; loopback by default (results are not shared unless you say so).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Run as a results service: take runs pushed with `envbench push URL --token-file FILE` (POST /api/v1/runs),
    /// re-check each and keep it with its submitter; every page stays read-only and public. Tokens are made here with
    /// `envbench results token create`. Without --tls-cert and --tls-key this serves plain HTTP, meant for loopback
    /// behind a reverse proxy that speaks TLS: tokens must not cross a network in clear text.
    #[arg(long)]
    pub accept_uploads: bool,
    /// The largest upload taken (larger ones get 413).
    #[arg(long, default_value = "32MiB", value_name = "SIZE")]
    pub max_upload_size: envbench_core::ByteSize,
    /// The most runs in one upload (more get 413).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub max_runs_per_upload: u64,
    /// The most uploads one token may make in an hour (more get 429).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_uploads_per_hour: u32,
    /// A host name the viewer answers for beyond its address, e.g. the public name of a service behind a reverse
    /// proxy (repeatable). Requests for other names are refused, so a web page cannot read the store through DNS
    /// rebinding.
    #[arg(long = "host-name", value_name = "NAME")]
    pub host_names: Vec<String>,
    /// Serve HTTPS with this certificate chain (PEM, the server's certificate first), with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct PushArgs {
    /// The destination store: postgres://user@host/db or a SQLite file path; or a results service,
    /// https://host/ (which may also come first among the arguments: envbench push https://host/ ...).
    #[arg(long, value_name = "STORE|URL")]
    pub to: Option<String>,
    /// For a results service: the file holding your upload token (a file, so the token never shows in `ps` or a
    /// shell's history).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// For a results service over HTTPS: trust this CA certificate (PEM) besides the system's.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// For a results service: print the upload that would be sent (JSON) and send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was pushed as JSON: the runs copied (or accepted), already there, still running or refused.
    #[arg(long)]
    pub json: bool,
    /// For a results service at an http:// URL on another host: send the token in clear text anyway (refused
    /// without this; use https:// where you can).
    #[arg(long)]
    pub insecure_http: bool,
    #[command(flatten)]
    pub selection: RunSelection,
    /// Sides to copy, as for compare: run:ID (or a prefix), label:NAME, tag:K=V,..., suite=ID, or a bare label or run
    /// id; every ended run (that matches the filters) when none is given.
    #[arg(value_name = "SIDE")]
    pub runs: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// quick (default: fingerprint, disk --quick, a short ranread sweep, a small cube, a short oltp run on SQLite,
    /// TPC-H SF 0.1), standard (each workload's full default), or a suite file (TOML; see examples/).
    #[arg(long, default_value = "quick", value_name = "quick|standard|FILE")]
    pub suite: String,
    /// Directory for the workloads' files (test files, the ranread database file, the cube).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Continue the most recent interrupted run of the same suite: completed runs are kept, the rest run.
    #[arg(long)]
    pub resume: bool,
    /// Where to write the HTML report of the suite: a new file, or a report envbench wrote before.
    #[arg(long, default_value = "envbench-report.html")]
    pub report: PathBuf,
    /// Replace the --report file even when envbench did not write it.
    #[arg(long)]
    pub force: bool,
    /// Check the suite and print the runs it expands into, without running anything.
    #[arg(long, conflicts_with = "resume")]
    pub dry_run: bool,
    /// Print one JSON document at the end (the suite, how it ended, the report, and every run whole) instead of the
    /// scorecard; progress is quiet, as with a workload's --json. With --dry-run: the runs it expands into.
    #[arg(long)]
    pub json: bool,
    /// Test-only: run the built-in suite at tiny sizes.
    #[arg(long, hide = true)]
    pub smoke: bool,
    /// A name for this configuration, given to every run of the suite.
    #[arg(long)]
    pub label: Option<String>,
    /// A key=value tag given to every run of the suite (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Serve live Prometheus metrics of each run at http://ADDRESS/metrics while it runs (each workload's
    /// --metrics-listen; a port alone listens on 127.0.0.1 only).
    #[arg(long, value_name = "[ADDRESS:]PORT", value_parser = envbench_core::live::parse_listen)]
    pub metrics_listen: Option<std::net::SocketAddr>,
}

/// The options of `envbench agent`.
#[derive(Args, Debug)]
pub struct AgentArgs {
    /// The fleet to join: the id `envbench fleet` printed.
    #[arg(long)]
    pub fleet: String,
    /// This agent's name in the fleet (as the coordinator listed it: local-1, agent-1, or the host given).
    #[arg(long)]
    pub name: String,
}

/// The options of `envbench fleet`, before the workload and its own options.
#[derive(Args, Debug)]
pub struct FleetArgs {
    /// How agents are started: ssh (each --host), local (--agents processes on this machine), or external (you start
    /// the printed `envbench agent` commands, e.g. with Ansible, a Kubernetes job or Slurm).
    #[arg(long, default_value = "ssh", value_parser = ["ssh", "local", "external"])]
    pub transport: String,
    /// A host to run an agent on, as ssh takes it: host, user@host or an ~/.ssh/config alias (repeatable).
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
    /// A file of hosts, one per line (# starts a comment).
    #[arg(long = "hosts", value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,
    /// How many agents, for the local and external transports.
    #[arg(long)]
    pub agents: Option<usize>,
    /// An ssh configuration file to use instead of ~/.ssh/config (ssh -F).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// An ssh option, e.g. --ssh-option Port=2222 (ssh -o; repeatable).
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    pub ssh_options: Vec<String>,
    /// The envbench program on the hosts.
    #[arg(long, default_value = "envbench", value_name = "PATH")]
    pub remote_binary: String,
    /// Copy this envbench to each host first (to /tmp, removed at the end); the hosts must run the same platform.
    #[arg(long)]
    pub copy_binary: bool,
    /// Go on without agents that cannot be reached or fail, instead of failing the fleet (it says which).
    #[arg(long)]
    pub keep_going: bool,
    /// How long agents may take to start and prepare (create their files), e.g. 10m.
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub prepare_timeout: envbench_core::DurationArg,
}

#[cfg(test)]
mod tests {
    /// The help names every workload: the top-level summary by its title, `run --suite` and `results list
    /// --workload` by its command, so a workload added to the registry cannot go unmentioned.
    #[test]
    fn help_texts_cover_every_workload() {
        let mut command = super::command();
        let about = command.get_about().map(ToString::to_string).unwrap_or_default();
        let run = command.find_subcommand_mut("run").expect("run").render_long_help().to_string();
        let list = command
            .find_subcommand_mut("results")
            .and_then(|r| r.find_subcommand_mut("list"))
            .expect("results list")
            .render_long_help()
            .to_string();
        for workload in crate::registry::WORKLOADS.iter() {
            let name = workload.name();
            if name != "sysinfo" {
                let title = crate::registry::WORKLOADS.title(name).to_lowercase();
                assert!(about.to_lowercase().contains(&title), "{name} missing: {about}");
            }
            assert!(list.contains(name), "results list --workload does not name {name}:\n{list}");
        }
        let quick = crate::registry::WORKLOADS.builtin_suite("quick").expect("the quick suite");
        for workload in crate::registry::WORKLOADS.iter().map(|w| w.name()) {
            let in_quick = quick.lines().any(|line| line == format!("[{workload}]"));
            let mentioned = run.contains(workload)
                || (workload == "tpch" && run.contains("TPC-H"))
                || (workload == "sysinfo" && run.contains("fingerprint"));
            assert!(!in_quick || mentioned, "run --help does not say the quick suite runs {workload}:\n{run}");
        }
    }
}
