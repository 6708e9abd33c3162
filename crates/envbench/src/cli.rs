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
    /// Run a suite: the quick default (a few minutes), standard, or your own TOML file with a matrix; ends with a
    /// scorecard and an HTML report.
    Run(RunArgs),
    /// Time your own steps (scripts against a real Essbase, SQL against a database) like a built-in workload.
    Exec(ExecArgs),
    /// Show the environment fingerprint: CPU, SMT, memory, OS, virtualization, and the storage stack under a path.
    Sysinfo(SysinfoArgs),
    /// Storage suite: CrystalDiskMark/Anvil-style profiles and a database-shaped one, with O_DIRECT and io_uring.
    Disk(DiskArgs),
    /// Database random-read scaling sweep (RanRead method): jobs rise until the response time passes the target.
    Ranread(RanreadArgs),
    /// EssBench-style OLAP cube: load, aggregate, allocate, convert currency, restructure; or query the cube.
    Cube(CubeArgs),
    /// TPC-H-derived analytic queries: power and throughput tests with virtual users, on embedded DataFusion over
    /// generated Parquet files or on PostgreSQL.
    Tpch(TpchArgs),
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
}

/// How often the OS sampler reads disk and CPU counters during a workload.
#[derive(Args, Debug, Clone)]
pub struct SamplingArgs {
    /// Interval of the OS sampler (iostat-style disk and CPU figures), e.g. 1s, 500ms.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub sample_interval: String,
}

impl SamplingArgs {
    pub fn interval(&self) -> anyhow::Result<std::time::Duration> {
        let interval = envbench_core::parse_duration(&self.sample_interval)
            .map_err(|e| crate::usage(format!("--sample-interval: {e}")))?;
        if interval < std::time::Duration::from_millis(10) {
            return Err(crate::usage("--sample-interval must be at least 10ms"));
        }
        Ok(interval)
    }
}

#[derive(Args, Debug)]
pub struct DiskArgs {
    /// Directory in which envbench creates (and afterwards removes) its test file.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Test profile: cdm, cdm-nvme, cdm5, anvil or db.
    #[arg(long, default_value = "cdm")]
    pub profile: String,
    /// An ad-hoc test instead of the profile, e.g. rnd:8k:q32:t1:read, seq:1m:q8:t1:write, rnd:8k:q16:t1:mix70,
    /// seq:16k:q1:t1:write:fsync1 (repeatable).
    #[arg(long = "test", value_name = "TEST")]
    pub tests: Vec<String>,
    /// Test file size, e.g. 1g (default 1 GiB; 256 MiB with --quick).
    #[arg(long)]
    pub size: Option<String>,
    /// Measured runs per test (default 3, as CrystalDiskMark 9).
    #[arg(long)]
    pub runs: Option<u32>,
    /// Length of each run, e.g. 5s (the default).
    #[arg(long)]
    pub duration: Option<String>,
    /// Pause between runs and tests, e.g. 5s (the default).
    #[arg(long)]
    pub interval: Option<String>,
    /// Smoke test: 1 run of 2 s per test after a 1 s warm-up, no pauses, a 256 MiB file.
    #[arg(long)]
    pub quick: bool,
    /// Skip the discarded warm-up run.
    #[arg(long)]
    pub no_warmup: bool,
    /// Buffered I/O instead of O_DIRECT (results need a file of at least 2x RAM or a dropped page cache).
    #[arg(long)]
    pub buffered: bool,
    /// I/O engine: auto (io_uring where allowed), io_uring, or threadpool.
    #[arg(long, default_value = "auto")]
    pub engine: String,
    /// Write durability: none, fsync:N (fdatasync every N writes) or dsync (O_DSYNC).
    #[arg(long, value_name = "MODE")]
    pub write_sync: Option<String>,
    /// Run the equivalent fio job after each test and show both: --cross-check fio.
    #[arg(long, value_name = "TOOL")]
    pub cross_check: Option<String>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub labels: RunLabels,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

#[derive(Args, Debug)]
pub struct RanreadArgs {
    /// Directory of the database file envbench-ranread.dat (file mode).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Run the sweep inside PostgreSQL instead: postgres://user@host:port/database.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// Database file size (default 8 GiB with O_DIRECT, 2x RAM buffered) or table size (default 2x shared_buffers).
    #[arg(long)]
    pub size: Option<String>,
    /// Block size of the random reads (file mode): a power of two from 512 to 64k.
    #[arg(long, default_value = "8k")]
    pub block: String,
    /// Job counts: auto (1, 2, 4, ... to the knee) or a list such as 1,2,4,8,16,32,64.
    #[arg(long, default_value = "auto")]
    pub jobs: String,
    /// Reads per job in each step (the original tool's iterations).
    #[arg(long, conflicts_with = "duration")]
    pub iterations: Option<u64>,
    /// Length of each step, e.g. 30s (default 10s).
    #[arg(long)]
    pub duration: Option<String>,
    /// IOPS the storage must sustain within the latency target.
    #[arg(long)]
    pub target_iops: Option<f64>,
    /// Mean response time limit, e.g. 8ms (default 10ms).
    #[arg(long, default_value = "10ms")]
    pub target_latency: String,
    /// Highest job count of an automatic sweep.
    #[arg(long, default_value_t = 256)]
    pub max_jobs: u32,
    /// Recreate the database file (or table) even when a usable one exists.
    #[arg(long)]
    pub fresh: bool,
    /// Keep the database file for later runs (the default).
    #[arg(long, overrides_with = "no_keep")]
    pub keep: bool,
    /// Remove the database file at the end.
    #[arg(long, overrides_with = "keep")]
    pub no_keep: bool,
    /// Buffered reads instead of O_DIRECT (the file must then be at least 2x RAM, or results are flagged).
    #[arg(long)]
    pub buffered: bool,
    /// I/O engine: auto, io_uring or threadpool.
    #[arg(long, default_value = "auto")]
    pub engine: String,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub labels: RunLabels,
    #[command(flatten)]
    pub sampling: SamplingArgs,
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
    /// The suite this run belongs to (set by `envbench run`).
    #[arg(long, hide = true)]
    pub suite_id: Option<String>,
    /// The command line to record instead of this process's (set by `envbench run` for each of its runs).
    #[arg(long, hide = true)]
    pub invoked_as: Option<String>,
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

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CubeArgs {
    #[command(subcommand)]
    pub action: Option<CubeAction>,
    #[command(flatten)]
    pub run: CubeRunArgs,
}

#[derive(Subcommand, Debug)]
pub enum CubeAction {
    /// Read one cell (or a small grid with --grid) from the cube the last run left in --dir.
    Get(CubeGetArgs),
}

#[derive(Args, Debug)]
pub struct CubeRunArgs {
    /// Working directory: generated data in DIR/data (reused), the cube in DIR/cube.
    #[arg(long, default_value = "envbench-cube")]
    pub dir: PathBuf,
    /// Data volume: 1.0 is EssBench-sized (about 10 million native cells and 10 million CSV rows).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of the data generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many times the 8-step sequence runs.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Parallel native load threads; a list such as 2,4,8 sweeps them.
    #[arg(long, value_name = "N[,N...]")]
    pub load_threads: Option<String>,
    /// Calculation threads (the CALCPARALLEL analog); a list such as 1,2,4 sweeps them.
    #[arg(long, value_name = "N[,N...]")]
    pub calc_threads: Option<String>,
    /// Allocation threads (the FIXPARALLEL analog, at most 8); a list sweeps them.
    #[arg(long, value_name = "N[,N...]")]
    pub fix_threads: Option<String>,
    /// Dense restructure threads; a list sweeps them.
    #[arg(long, value_name = "N[,N...]")]
    pub restructure_threads: Option<String>,
    /// Block compression: bitmap (default), zlib or none.
    #[arg(long, default_value = "bitmap")]
    pub compression: String,
    /// Bound of the cache of expanded blocks, e.g. 256MiB.
    #[arg(long, default_value = "256MiB")]
    pub data_cache: String,
    /// Open the page files with O_DIRECT.
    #[arg(long)]
    pub direct: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub labels: RunLabels,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

#[derive(Args, Debug)]
pub struct CubeGetArgs {
    /// One member per dimension, e.g. "Years=FY19, Scenario=Actual, Version=Final, Currency=USD, Entity=TotalEntity,
    /// Product=Product, Account=NetIncome, Period=Q1"; with --grid, leave the grid's dimensions out.
    pub query: String,
    /// A grid: rows and columns, each a dimension or Dim=Member (that member's children), e.g. --grid Entity Period.
    #[arg(long, num_args = 2, value_names = ["ROWS", "COLUMNS"])]
    pub grid: Option<Vec<String>>,
    /// The working directory of the cube run.
    #[arg(long, default_value = "envbench-cube")]
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct TpchArgs {
    /// Scale factor: 1 is about 1 GB of raw data (6 million lineitem rows); any positive decimal such as 0.1.
    #[arg(long, default_value_t = 1.0)]
    pub sf: f64,
    /// Directory for the generated Parquet data (DIR/envbench-tpch/sf<SF>, kept and reused); with a PostgreSQL
    /// target, the directory whose storage the sampler watches (default: the server's data directory when it is on
    /// this machine).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Where the queries run: datafusion (embedded, the default) or postgres://user@host:port/database.
    #[arg(long, default_value = "datafusion", value_name = "TARGET")]
    pub target: String,
    /// PostgreSQL schema for the tables (created when missing; default: the connection's search_path); ignored by
    /// the datafusion target, so one suite matrix can sweep both.
    #[arg(long)]
    pub schema: Option<String>,
    /// Virtual users (concurrent query streams) of the throughput test (default: the TPC-H minimum for the SF).
    #[arg(long)]
    pub users: Option<usize>,
    /// Query sets each virtual user runs in the throughput test.
    #[arg(long, default_value_t = 1)]
    pub sets: usize,
    /// Use the specification's validation parameters (and, at SF 1, check every answer against the reference).
    #[arg(long)]
    pub validate: bool,
    /// Seed of the substitution parameters and the query orders beyond the specification's table.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Give up on a query after this long, e.g. 10m; it is counted as timed out.
    #[arg(long, value_name = "DURATION")]
    pub query_timeout: Option<String>,
    /// Run only the power test (one stream).
    #[arg(long, conflicts_with = "throughput_only")]
    pub power_only: bool,
    /// Run only the throughput test (the virtual users).
    #[arg(long)]
    pub throughput_only: bool,
    /// Regenerate the data (DataFusion) or reload the tables (PostgreSQL) even when a matching set exists.
    #[arg(long)]
    pub fresh: bool,
    /// Drop the OS page cache before each power-test query and before the throughput test (needs root).
    #[arg(long)]
    pub cold: bool,
    /// Threads for generation, DataFusion partitions and PostgreSQL load jobs (default: every CPU).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub labels: RunLabels,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more sides, the first being the baseline: a run id (or prefix), a label, or tags such as ht=off,storage=nvme
    /// (write run:ID, label:NAME or tag:K=V to be explicit). A side's runs pool their samples.
    #[arg(required = true, num_args = 2.., value_name = "SIDE")]
    pub sides: Vec<String>,
    /// Print JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print a Markdown table, for pasting into tickets.
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Sides to report on (as for compare); none means the most recent run.
    #[arg(value_name = "SIDE")]
    pub sides: Vec<String>,
    /// The HTML file to write.
    #[arg(short, long, default_value = "envbench-report.html")]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; loopback by default (results are not shared unless you say so).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
}

#[derive(Args, Debug)]
pub struct PushArgs {
    /// The destination store: postgres://user@host/db or a SQLite file path.
    #[arg(long, value_name = "STORE")]
    pub to: String,
    /// Runs to copy (ids or prefixes); every ended run when none are given.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// quick (default: fingerprint, disk --quick, a short ranread sweep, a small cube, TPC-H SF 0.1), standard (each
    /// workload's full default), or a suite file (TOML; see examples/).
    #[arg(long, default_value = "quick", value_name = "quick|standard|FILE")]
    pub suite: String,
    /// Directory for the workloads' files (test files, the ranread database file, the cube).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Continue the most recent interrupted run of the same suite: completed runs are kept, the rest run.
    #[arg(long)]
    pub resume: bool,
    /// Where to write the HTML report of the suite.
    #[arg(long, default_value = "envbench-report.html")]
    pub report: PathBuf,
    /// Check the suite and print the runs it expands into, without running anything.
    #[arg(long, conflicts_with = "resume")]
    pub dry_run: bool,
    /// Test-only: run the built-in suite at tiny sizes.
    #[arg(long, hide = true)]
    pub smoke: bool,
    #[command(flatten)]
    pub labels: RunLabels,
}

#[derive(Args, Debug)]
pub struct ExecArgs {
    /// What is being timed, e.g. essbench-maxl; results of the same name and commands compare across environments.
    #[arg(long)]
    pub name: String,
    /// A step: NAME=COMMAND, run through the shell (repeatable, in order).
    #[arg(long = "step", value_name = "NAME=COMMAND", required = true)]
    pub steps: Vec<String>,
    /// Repetitions of all steps.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// A command run once before the first repetition.
    #[arg(long)]
    pub setup: Option<String>,
    /// A command run once after the last repetition (also after a failure).
    #[arg(long)]
    pub teardown: Option<String>,
    /// Carry on after a failing step (its time is not kept).
    #[arg(long)]
    pub keep_going: bool,
    /// The data directory the steps work on (its storage is fingerprinted and sampled).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub labels: RunLabels,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}
