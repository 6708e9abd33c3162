//! `envbench oltp` as the driver runs it: the command line, the plan (the database reached and its tables checked
//! before anything is stored), the steps, the consistency checks, the pgbench cross-check, and the tables, records
//! and scaling curve of a run.

use crate::companion::{Companion, CompanionState};
use crate::consistency::{self, Check};
use crate::crosscheck::{self, PgbenchFigures};
use crate::load::{self, LoadInfo, LoadPlan, RoutinesPlan};
use crate::lock::TablesLock;
use crate::random::NuRandConstants;
use crate::routines::{self, Mode, RoutinesState};
use crate::schema::{self, Existing, Shape};
use crate::sweep::{self, StopReason, Sweep, UsersPlan};
use crate::users::{self, StepFigures, StepSettings};
use crate::{OltpError, Profile, SOURCE, WORKLOAD, WORKLOAD_VERSION};
use clap::{Args, FromArgMatches};
use envbench_core::model::{Direction, ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::units::format_duration;
use envbench_core::workload::{
    Ending, Measured, Plan, Planned, ReadBack, RunContext, ScalingCurve, ScalingPoint, Timeline, Workload,
    WorkloadError,
};
use envbench_core::{ByteSize, DurationArg};
use envbench_sql::{Connection, DatabaseUrl, Dialect, Namespace};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The SQLite database file in `--dir`.
pub const SQLITE_FILE: &str = "envbench-oltp.sqlite";
/// The test of the knee's figures.
pub const KNEE_TEST: &str = "knee";
/// The metric of the knee's throughput and its judged latency.
pub const THROUGHPUT_METRIC: &str = "throughput";
pub const P95_METRIC: &str = "latency_p95";
/// The most warehouses (or pgbench scale) envbench loads.
pub const MAX_SCALE: i64 = 10_000;
/// The most virtual users of a step (each is a thread and a connection).
pub const MAX_USERS: u32 = 1024;
/// The most clients a virtual user drives (each is a terminal with keying and think times, sharing the user's
/// connection: a few hundred keep one connection busy).
pub const MAX_CLIENTS_PER_USER: u32 = 1000;
/// The most parallel loaders.
pub const MAX_LOADERS: usize = 256;
/// The shortest measured time of a step: a shorter one may end before a single transaction does.
pub const MIN_DURATION: Duration = Duration::from_secs(1);
/// The longest ramp-up and measured time of a step.
pub const MAX_STEP_TIME: Duration = Duration::from_secs(24 * 3600);
/// The most transactions per user of a count-based step.
pub const MAX_TRANSACTIONS_PER_USER: u64 = 1_000_000_000;
/// The flag of the pgbench cross-check's records.
pub const PGBENCH_FLAG: &str = "pgbench-cross-check";

/// The test id, and the sampler's step name, of a step of `users` users.
pub fn step_test_id(users: u32) -> String {
    format!("U={users}")
}

/// The arguments of `envbench oltp`.
#[derive(Args, Debug)]
pub struct OltpArgs {
    /// Where the transactions run: sqlite (embedded, a file in --dir; the default), postgres://user@host/db or
    /// mysql://user@host/db (MariaDB or MySQL).
    #[arg(long, help_heading = "Connection", default_value = "sqlite")]
    pub target: String,
    /// Directory of the SQLite database envbench-oltp.sqlite (with --target sqlite).
    #[arg(long, help_heading = "Connection", default_value = ".")]
    pub dir: PathBuf,
    /// tpcc (TPC-C-derived order entry) or tpcb (pgbench's TPC-B-like transaction).
    #[arg(long, help_heading = "Load", default_value = "tpcc")]
    pub profile: String,
    /// Warehouses (tpcc) or pgbench's scale factor (tpcb).
    #[arg(long, help_heading = "Load", visible_alias = "scale", default_value = "1")]
    pub warehouses: String,
    /// Virtual users: a count, a list of steps such as 1,2,4,8, or auto (doubling until the knee).
    #[arg(long, help_heading = "Run", default_value = "4")]
    pub users: String,
    /// Highest user count of --users auto.
    #[arg(long, help_heading = "Run", default_value_t = 64)]
    pub max_users: u32,
    /// Ramp-up of each step before measuring, e.g. 1m.
    #[arg(long, help_heading = "Run", default_value = "1m", value_name = "DURATION")]
    pub ramp: DurationArg,
    /// Measured time of each step, e.g. 5m.
    #[arg(long, help_heading = "Run", default_value = "5m", value_name = "DURATION")]
    pub duration: DurationArg,
    /// New-Order p95 (tpcb: the transaction's p95) the knee must stay within.
    #[arg(long, help_heading = "Run", default_value = "100ms", value_name = "DURATION")]
    pub target_latency: DurationArg,
    /// The specification's keying and think times between transactions (off: HammerDB's no-wait users).
    #[arg(long, help_heading = "HammerDB compatibility")]
    pub keying_thinking: bool,
    /// Each transaction works in a warehouse drawn from all of them, not in its user's home warehouse (HammerDB's
    /// "use all warehouses"): the working set is the whole database, for storage-bound runs.
    #[arg(long, help_heading = "HammerDB compatibility")]
    pub all_warehouses: bool,
    /// Clients each virtual user drives, with --keying-thinking (HammerDB's asynchronous scaling): every client is a
    /// terminal with its own home warehouse and keying and think times, and a user's clients share its one connection
    /// as an application's sessions share a pool, so --users 10 --clients-per-user 100 runs 1,000 terminals over 10
    /// connections. Response times include the wait for the connection, which is also shown on its own.
    #[arg(long, help_heading = "HammerDB compatibility", default_value_t = 1, value_name = "K")]
    pub clients_per_user: u32,
    /// A count-based step instead of a timed one (HammerDB's "total transactions per user"): each user runs N
    /// transactions and the step ends when all have; --ramp and --duration do not apply (24 h at most).
    #[arg(long, help_heading = "HammerDB compatibility", value_name = "N")]
    pub transactions: Option<u64>,
    /// Split tpcc_order_line into range partitions by warehouse (one per warehouse, at most 10), as HammerDB's
    /// "partition order line" does: PostgreSQL partition tables, MariaDB/MySQL partitions. A load of the other layout
    /// is rebuilt.
    #[arg(long, help_heading = "Load")]
    pub partition: bool,
    /// Rebuild the tables even when a matching load exists.
    #[arg(long, help_heading = "Load")]
    pub fresh: bool,
    /// Schema (PostgreSQL) or database (MariaDB/MySQL) of the tables, which must exist (default: the connection's
    /// current schema, or the URL's database). envbench touches nothing outside it.
    #[arg(long, help_heading = "Connection")]
    pub schema: Option<String>,
    /// Run pgbench against the same server afterwards (needs --profile tpcb and a PostgreSQL target).
    #[arg(long, help_heading = "Run", value_name = "TOOL")]
    pub cross_check: Option<String>,
    /// Parallel loaders (default: one per CPU, at most one per warehouse; SQLite loads with one).
    #[arg(long, help_heading = "Load")]
    pub loaders: Option<usize>,
    /// How transactions reach the database: client (every statement from the client, one round trip each: what an
    /// application sees) or procedures (one call of a stored routine per transaction, as HammerDB's TPROC-C runs
    /// them: the engine's capacity, the figure to set beside HammerDB's NOPM). Procedures need --profile tpcc on
    /// PostgreSQL or MariaDB/MySQL.
    #[arg(long, help_heading = "Run", default_value = "client", value_name = "MODE")]
    pub mode: String,
    /// Skip the settling before each step: VACUUM ANALYZE of envbench's tables and a CHECKPOINT (PostgreSQL), a flush
    /// of envbench's tables (MariaDB/MySQL), a WAL checkpoint (SQLite), as HammerDB does before its timed run.
    #[arg(long, help_heading = "Run")]
    pub no_vacuum: bool,
    /// Remove everything envbench made for --profile in the target (its tables, their marker and, for tpcc, its
    /// stored routines) and nothing else, then end; no run is stored.
    #[arg(long, help_heading = "Load", conflicts_with = "fresh")]
    pub drop: bool,
}

/// The transactional workload.
pub struct OltpWorkload;

/// The registration of `oltp`.
pub static OLTP: OltpWorkload = OltpWorkload;

impl From<OltpError> for WorkloadError {
    fn from(error: OltpError) -> WorkloadError {
        match error {
            OltpError::Interrupted => WorkloadError::interrupted(),
            OltpError::BadInput(_) | OltpError::Foreign(_) | OltpError::NoSpace(_) => {
                WorkloadError::usage(error.to_string())
            }
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

fn usage(message: impl Into<String>) -> WorkloadError {
    WorkloadError::usage(message)
}

/// Everything the arguments say, checked, with the database reached, its namespace resolved and its tables locked.
pub struct OltpRun {
    pub url: DatabaseUrl,
    /// The one schema (MySQL: database) the run's tables are in.
    pub namespace: Namespace,
    pub profile: Profile,
    pub scale: i64,
    /// Range partitions of tpcc_order_line (0: one plain table).
    pub partitions: u32,
    pub users: UsersPlan,
    /// Clients (terminals) each user drives over its connection.
    pub clients_per_user: u32,
    pub ramp: Duration,
    pub duration: Duration,
    pub target_ms: f64,
    pub keying_thinking: bool,
    pub all_warehouses: bool,
    pub transactions_per_user: Option<u64>,
    pub mode: Mode,
    /// Settle the database before each step ([`schema::settle`]).
    settle: bool,
    settle_noted: std::sync::atomic::AtomicBool,
    /// Whether the run uses the load it found or builds the tables, as decided under the lock.
    load_plan: LoadPlan,
    /// Held for the whole run (none on a fleet's agent: its coordinator holds it).
    lock: Option<TablesLock>,
    pgbench: Option<PathBuf>,
    pub loaders: usize,
    /// The directory whose storage the run describes: the server's data directory when it is on this host.
    pub watched: PathBuf,
    pub server_version: String,
    /// Tables another workload keeps beside these, built and checked with them.
    companion: Option<&'static dyn Companion>,
    /// A fleet agent's: whether it has found its coordinator's load in `namespace` ([`OltpRun::use_namespace`]).
    namespace_checked: bool,
}

impl Workload for OltpWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        OltpArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Transactions from virtual users (TPC-C-derived order entry or pgbench's TPC-B-like), on SQLite, \
             PostgreSQL or MariaDB/MySQL: NOPM, per-transaction latency and the knee.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = OltpArgs::from_arg_matches(matches).map_err(|e| usage(e.to_string()))?;
        if args.drop {
            return Ok(Plan::Answer(drop_tables(&args, None)?));
        }
        Ok(Plan::Run(Box::new(plan(args, Planner::Run)?)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::OltpFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for OltpWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
# One warehouse on embedded SQLite: commits synced to this storage, two users; the measured 20 s give five
# windows, five samples for compare.
warehouses = 1
users = "2"
ramp = "10s"
duration = "20s"
"#,
            ),
            "standard" => Some(
                r#"
warehouses = 4
users = "auto"
"#,
            ),
            "smoke" => Some(
                r#"
profile = "tpcb"
users = "1"
ramp = "0s"
duration = "1s"
"#,
            ),
            _ => None,
        }
    }

    /// Against a server the sampler should watch the server's data directory, which `oltp` finds itself.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        let server = args.iter().any(|a| DatabaseUrl::parse(a).is_ok());
        (!server && !envbench_core::workload::has_option(args, "--dir"))
            .then(|| ("--dir", suite_dir.display().to_string()))
    }
}

impl ReadBack for OltpWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[
            envbench_core::workload::CostUnit {
                metric: "nopm",
                tests: "",
                per: envbench_core::workload::Per::Rate(1000.0),
                words: "1,000 NOPM",
            },
            envbench_core::workload::CostUnit {
                metric: "tpm",
                tests: "",
                per: envbench_core::workload::Per::Rate(1000.0),
                words: "1,000 TPM",
            },
        ]
    }

    fn title(&self) -> Option<&'static str> {
        Some("transactions")
    }

    /// TPM over each fifth of the measured window ([`TPM_WINDOW_METRIC`]), so a verdict can test it; NOPM and TPM are
    /// one figure each over the whole window.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[TPM_WINDOW_METRIC]
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Storage, Resource::Memory]
    }

    /// One virtual user is one connection running one transaction at a time.
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["users"]
    }

    fn headline(&self, run: &StoredRun) -> String {
        let profile = run.results.first().and_then(|r| r.record.parameters.get("profile")?.as_str().map(String::from));
        let label = if profile.as_deref() == Some("tpcb") { "TPS" } else { "NOPM" };
        let judged = if profile.as_deref() == Some("tpcb") { "p95" } else { "New-Order p95" };
        match (run.median(KNEE_TEST, THROUGHPUT_METRIC), run.median(KNEE_TEST, P95_METRIC)) {
            (Some(throughput), Some(p95)) => format!("knee {throughput:.0} {label} at {p95:.1} ms {judged}"),
            _ => "no step within the latency target".into(),
        }
    }

    fn tests_word(&self) -> &'static str {
        "per step and transaction"
    }

    fn timelines(&self, run: &StoredRun) -> Vec<Timeline> {
        let Some(Ok(document)) = OltpDocument::of(run) else { return Vec::new() };
        vec![Timeline {
            subject: None,
            marks: Vec::new(),
            y_label: "transactions per second".into(),
            x_label: "seconds since the step began (ramp-up included)".into(),
            lines: document
                .steps
                .iter()
                .map(|s| {
                    let points = s.per_second.iter().enumerate().map(|(i, n)| (i as f64 + 1.0, *n)).collect();
                    (format!("{} users", s.users), points)
                })
                .collect(),
        }]
    }

    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let document = OltpDocument::of(run)?.ok()?;
        if document.steps.is_empty() {
            return None;
        }
        let profile = document.profile;
        Some(ScalingCurve {
            concurrency_label: "virtual users".into(),
            concurrency_symbol: "U".into(),
            throughput_label: profile.throughput_label().into(),
            latency_label: format!("{} p95", profile.judged_kind().name()),
            latency_unit: "ms".into(),
            points: document
                .steps
                .iter()
                .map(|s| ScalingPoint {
                    concurrency: f64::from(s.users),
                    throughput: s.throughput(profile),
                    latency: s.judged_latency_ms(profile),
                })
                .collect(),
            knee: document.knee,
            latency_target: Some(document.target_latency_ms),
        })
    }
}

/// Who plans a run: a run of its own (also a fleet's coordinator, which loads and locks the tables for the whole
/// fleet), or a fleet's agent, which neither builds nor locks them (its coordinator holds the lock while the fleet
/// runs) and learns their namespace from the coordinator with each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planner {
    Run,
    FleetAgent,
}

/// The run `args` describe, planned as `envbench oltp` plans it for `planner` (the database reached, the namespace
/// resolved, and for a run of its own the tables looked at and locked), with `companion`'s tables kept beside the
/// TPC-C tables: for a workload that runs on oltp's tables (`envbench htap`).
pub fn plan_with(
    args: OltpArgs,
    planner: Planner,
    companion: &'static dyn Companion,
) -> Result<OltpRun, WorkloadError> {
    plan_run(args, planner, Some(companion))
}

pub(crate) fn plan(args: OltpArgs, planner: Planner) -> Result<OltpRun, WorkloadError> {
    plan_run(args, planner, None)
}

fn plan_run(
    args: OltpArgs,
    planner: Planner,
    companion: Option<&'static dyn Companion>,
) -> Result<OltpRun, WorkloadError> {
    let profile = parse_profile(&args.profile)?;
    let scale: i64 = match args.warehouses.trim().parse() {
        Ok(n) if (1..=MAX_SCALE).contains(&n) => n,
        _ => {
            return Err(usage(format!(
                "--warehouses '{}': give a whole number of {} from 1 to {MAX_SCALE}",
                args.warehouses,
                profile.scale_word()
            )));
        }
    };
    if !(1..=MAX_USERS).contains(&args.max_users) {
        return Err(usage(format!("--max-users {}: give a count from 1 to {MAX_USERS}", args.max_users)));
    }
    let users = UsersPlan::parse(&args.users, args.max_users).map_err(usage)?;
    let clients_per_user = args.clients_per_user;
    if !(1..=MAX_CLIENTS_PER_USER).contains(&clients_per_user) {
        return Err(usage(format!(
            "--clients-per-user {clients_per_user}: give a count from 1 to {MAX_CLIENTS_PER_USER}"
        )));
    }
    if clients_per_user > 1 && !args.keying_thinking {
        return Err(usage(format!(
            "--clients-per-user {clients_per_user} needs --keying-thinking: without keying and think times each \
             client would wait for its user's connection all the time, which measures the same as one client per \
             user; for more load without them, raise --users"
        )));
    }
    let mut ramp = args.ramp.within("--ramp", Duration::ZERO, MAX_STEP_TIME).map_err(usage)?;
    let mut duration = args.duration.within("--duration", MIN_DURATION, MAX_STEP_TIME).map_err(usage)?;
    if let Some(count) = args.transactions {
        if !(1..=MAX_TRANSACTIONS_PER_USER).contains(&count) {
            return Err(usage(format!(
                "--transactions {count}: give a count of transactions per user from 1 to {MAX_TRANSACTIONS_PER_USER}"
            )));
        }
        // Every transaction counts from the start; the step may take up to the longest step time.
        (ramp, duration) = (Duration::ZERO, MAX_STEP_TIME);
    }
    let target = args.target_latency.get();
    if target.is_zero() {
        return Err(usage("--target-latency must be longer than zero, e.g. 100ms"));
    }
    let target_ms = target.as_secs_f64() * 1e3;
    if let Some(loaders) = args.loaders
        && !(1..=MAX_LOADERS).contains(&loaders)
    {
        return Err(usage(format!("--loaders {loaders}: give 1 to {MAX_LOADERS} (each is a thread and a connection)")));
    }
    let url = target_url(&args)?;
    let mode = Mode::parse(&args.mode).ok_or_else(|| {
        usage(format!(
            "--mode '{}': give client (statements from the client) or procedures (stored routines)",
            args.mode
        ))
    })?;
    if mode == Mode::Procedures && !url.dialect().ops().stored_routines {
        return Err(usage(
            "--mode procedures runs each transaction as a stored routine, and SQLite has none: use --mode client \
             with SQLite, or a --target postgres://... or mysql://... URL",
        ));
    }
    if mode == Mode::Procedures && profile != Profile::Tpcc {
        return Err(usage(
            "--mode procedures runs TPC-C's five transactions as stored routines: use it with --profile tpcc (tpcb \
             is pgbench's transaction, sent from the client as pgbench sends it)",
        ));
    }
    let shape = Shape::of(scale, args.partition);
    if args.partition && (profile != Profile::Tpcc || !url.dialect().ops().partitions) {
        return Err(usage(
            "--partition splits TPC-C's tpcc_order_line by warehouse on a server: use it with --profile tpcc and a \
             --target postgres://... or mysql://... URL (SQLite has no partitions)",
        ));
    }
    let pgbench = match args.cross_check.as_deref() {
        None => None,
        Some("pgbench") if profile == Profile::Tpcb && url.dialect().ops().pgbench => Some(crosscheck::find_pgbench()?),
        Some("pgbench") => {
            return Err(usage(
                "--cross-check pgbench runs pgbench's TPC-B-like transaction against PostgreSQL: add --profile tpcb \
                 and a --target postgres://... URL",
            ));
        }
        Some(other) => return Err(usage(format!("--cross-check '{other}': the cross-check tool is pgbench"))),
    };
    let (mut connection, namespace) = reach(&args, &url)?;
    let (server_version, watched) = match connection.as_mut() {
        None => (format!("SQLite {}", envbench_sql::sqlite_version()), args.dir.clone()),
        Some(connection) => {
            let server_version = connection.server_version().map_err(OltpError::from)?;
            let watched =
                envbench_sql::local_data_directory(connection.as_mut(), &url).unwrap_or_else(|| args.dir.clone());
            (server_version, watched)
        }
    };
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let loaders = match url.dialect() {
        Dialect::Sqlite => 1,
        _ => args.loaders.unwrap_or(cpus),
    };
    let mut run = OltpRun {
        url,
        namespace,
        profile,
        scale,
        partitions: shape.partitions,
        users,
        clients_per_user,
        ramp,
        duration,
        target_ms,
        keying_thinking: args.keying_thinking,
        all_warehouses: args.all_warehouses,
        transactions_per_user: args.transactions,
        mode,
        settle: !args.no_vacuum,
        settle_noted: Default::default(),
        load_plan: LoadPlan::Reuse,
        lock: None,
        pgbench,
        loaders,
        watched,
        server_version,
        companion,
        namespace_checked: false,
    };
    if planner == Planner::FleetAgent {
        return Ok(run);
    }
    // What the namespace holds decides whether the run builds the tables (or, in procedures mode, installs their
    // routines), and so holds them alone ([`envbench_io::lock::take_as_needed`]: looked at again once a shared lock
    // is held).
    let tables_reusable = std::cell::Cell::new(false);
    let must_build = |connection: &mut Option<Box<dyn Connection>>| {
        let existing = match connection.as_mut() {
            Some(connection) => schema::existing(connection.as_mut(), &run.namespace, profile)?,
            None => Existing::Nothing,
        };
        if let Existing::Foreign(relations) = &existing {
            return Err(OltpError::foreign(&crate::place(&run.url, &run.namespace), profile, relations));
        }
        let reusable = LoadPlan::of(&existing, shape, args.fresh) == LoadPlan::Reuse;
        tables_reusable.set(reusable);
        let companion_missing = match (run.companion, connection.as_mut()) {
            (Some(companion), Some(connection)) => match companion.state(connection.as_mut(), &run.namespace)? {
                CompanionState::Complete => false,
                CompanionState::Missing => true,
                CompanionState::Foreign(relations) => {
                    return Err(OltpError::Foreign(format!(
                        "{}: {} bear the names of {} but envbench did not make them; envbench never creates, drops \
                         or alters anything beside what it made. Use another schema or database, or drop them \
                         yourself if they are expendable",
                        crate::place(&run.url, &run.namespace),
                        relations.join(", "),
                        companion.name()
                    )));
                }
            },
            (Some(_), None) => true,
            (None, _) => false,
        };
        let routines_missing = match connection.as_mut() {
            Some(connection) if profile == Profile::Tpcc && run.url.dialect().ops().stored_routines => {
                match routines::state(connection.as_mut(), &run.namespace)? {
                    RoutinesState::Newer(version) => return Err(routines::newer_error(&run.namespace, version)),
                    RoutinesState::Current => false,
                    RoutinesState::Missing | RoutinesState::Foreign(_) => mode == Mode::Procedures && reusable,
                }
            }
            _ => false,
        };
        Ok(!reusable || routines_missing || companion_missing)
    };
    let take = |connection: &mut Option<Box<dyn Connection>>, exclusive: bool| {
        if exclusive {
            check_space(&run.watched, &run.url, profile, scale)?;
            if let Some(connection) = connection.as_mut()
                && run.url.dialect().ops().schema_create_privilege
            {
                check_create_privilege(connection.as_mut(), &run.url, &run.namespace)?;
            }
        }
        TablesLock::take(&run.url, &run.namespace, profile, &args.dir, exclusive, run.workload_name())
    };
    let (lock, alone) = envbench_io::lock::take_as_needed(&mut connection, must_build, take)?;
    // Alone, the run rebuilds the tables unless only their routines were missing.
    run.load_plan = if alone && !tables_reusable.get() { LoadPlan::Rebuild } else { LoadPlan::Reuse };
    run.lock = Some(lock);
    Ok(run)
}

fn parse_profile(text: &str) -> Result<Profile, WorkloadError> {
    Profile::parse(text).ok_or_else(|| {
        let hint = envbench_core::text::did_you_mean(&envbench_core::text::suggestions(text, ["tpcc", "tpcb"]));
        usage(format!("--profile '{text}': give tpcc or tpcb{hint}"))
    })
}

/// The database `--target` names (`--dir`'s SQLite file for `sqlite`), with `--schema` refused where it means nothing.
fn target_url(args: &OltpArgs) -> Result<DatabaseUrl, WorkloadError> {
    let url = match args.target.as_str() {
        "sqlite" => {
            envbench_io::check_directory(&args.dir).map_err(|e| usage(format!("--dir: {e}")))?;
            DatabaseUrl::sqlite(args.dir.join(SQLITE_FILE))
        }
        text => DatabaseUrl::parse(text).map_err(|e| {
            usage(format!("--target: {}; or sqlite (embedded, the default)", e.message.trim_end_matches('.')))
        })?,
    };
    if args.schema.is_some() && !url.dialect().ops().named_namespaces {
        return Err(usage(
            "--schema names a schema (PostgreSQL) or database (MariaDB/MySQL) on a server: leave it out with \
             --target sqlite, whose tables are in --dir",
        ));
    }
    Ok(url)
}

/// Reach the database now, before anything is stored: a wrong URL, a stopped server, a missing privilege or foreign
/// tables are the user's to fix. The namespace is resolved here, once: every name the run checks, creates, drops,
/// loads or queries is qualified with it, and every session it opens is pinned to it. A SQLite file that does not
/// exist yet is not created here (no connection): nothing is made before the run.
fn reach(args: &OltpArgs, url: &DatabaseUrl) -> Result<(Option<Box<dyn Connection>>, Namespace), WorkloadError> {
    let sqlite_file = args.dir.join(SQLITE_FILE);
    let mut connection: Option<Box<dyn Connection>> = if url.dialect().ops().embedded && !sqlite_file.exists() {
        None
    } else {
        Some(url.connect("envbench-oltp plan").map_err(OltpError::from)?)
    };
    let namespace = match connection.as_mut() {
        Some(connection) => {
            let namespace =
                Namespace::resolve(connection.as_mut(), args.schema.as_deref(), false).map_err(OltpError::from)?;
            namespace.pin(connection.as_mut()).map_err(OltpError::from)?;
            namespace
        }
        None => Namespace::named(Dialect::Sqlite, "main"),
    };
    Ok((connection, namespace))
}

/// `envbench oltp --drop`: everything envbench made for the profile in the target, under the tables' lock held
/// alone, and nothing else. A SQLite file left with nothing in it is removed, as envbench made it.
pub fn drop_tables(args: &OltpArgs, companion: Option<&dyn Companion>) -> Result<String, WorkloadError> {
    let profile = parse_profile(&args.profile)?;
    let url = target_url(args)?;
    let (connection, namespace) = reach(args, &url)?;
    let place = crate::place(&url, &namespace);
    let Some(mut connection) = connection else {
        return Ok(format!("{place}: no database file, so nothing of envbench's to drop"));
    };
    let workload = companion.map_or("oltp", |c| c.workload());
    let _lock = TablesLock::take(&url, &namespace, profile, &args.dir, true, workload)?;
    let mut dropped = match companion {
        Some(companion) => companion.drop_own(connection.as_mut(), &namespace)?,
        None => schema::Dropped::default(),
    };
    let tables = schema::drop_profile(connection.as_mut(), &namespace, profile)?;
    dropped.dropped.extend(tables.dropped);
    dropped.left.extend(tables.left);
    let mut answer = match dropped.dropped.as_slice() {
        [] => format!("{place}: nothing of envbench's {} tables or routines found; nothing dropped", profile.name()),
        names => format!("{place}: dropped {}", names.join(", ")),
    };
    if !dropped.left.is_empty() {
        answer.push_str(&format!("\nleft alone, as envbench did not make them: {}", dropped.left.join(", ")));
    }
    if url.dialect().ops().embedded {
        let left = connection.query("SELECT COUNT(*) FROM sqlite_master", &[]).map_err(OltpError::from)?;
        let empty = left.first().map(|r| r.int(0)).transpose().map_err(OltpError::from)? == Some(0);
        drop(connection);
        if empty {
            let file = args.dir.join(SQLITE_FILE);
            for path in [file.clone(), file.with_extension("sqlite-wal"), file.with_extension("sqlite-shm")] {
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(WorkloadError::failure(format!("{}: {e}", path.display()))),
                }
            }
            answer.push_str(&format!("\nremoved {}, which held nothing else", file.display()));
        }
    }
    Ok(answer)
}

/// Refuse a load the PostgreSQL user could not finish: it must be allowed to create tables in the run's schema.
fn check_create_privilege(
    connection: &mut dyn envbench_sql::Connection,
    url: &DatabaseUrl,
    namespace: &Namespace,
) -> Result<(), OltpError> {
    let row = connection.query_optional(
        "SELECT current_user, COALESCE(has_schema_privilege(?, 'CREATE'), false)::int",
        &[namespace.name().into()],
    )?;
    let Some(row) = row else { return Ok(()) };
    if row.int(1)? == 1 {
        return Ok(());
    }
    let (user, schema) = (row.text(0)?, namespace.quoted());
    Err(OltpError::BadInput(format!(
        "{}: user {user} may not create tables in schema {schema}; GRANT CREATE ON SCHEMA {schema} TO {user}, or use \
         a database where it may",
        url.shown()
    )))
}

/// Refuse a scale that cannot fit in the free space of the directory the data goes to (when it is known).
fn check_space(dir: &Path, url: &DatabaseUrl, profile: Profile, scale: i64) -> Result<(), OltpError> {
    if !url.dialect().ops().embedded && !url.is_local() {
        return Ok(());
    }
    let Ok(Some(free)) = envbench_io::testfile::available_bytes(dir) else {
        return Ok(());
    };
    let needed = load::expected_bytes(profile, scale);
    if needed > free {
        return Err(OltpError::NoSpace(format!(
            "--warehouses {scale}: the {} load needs about {} but {} has {} free; choose fewer {} or free some space",
            profile.name(),
            ByteSize(needed),
            dir.display(),
            ByteSize(free),
            profile.scale_word()
        )));
    }
    Ok(())
}

/// What an OLTP run keeps as its attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OltpDocument {
    pub profile: Profile,
    /// The database, without its password.
    pub target: String,
    pub dialect: String,
    pub server_version: String,
    pub scale: i64,
    pub ramp_seconds: f64,
    pub duration_seconds: f64,
    pub keying_thinking: bool,
    /// Each transaction in a warehouse drawn from all of them (absent from runs stored before the option).
    #[serde(default)]
    pub all_warehouses: bool,
    /// Transactions per user of a count-based run (absent: timed steps).
    #[serde(default)]
    pub transactions_per_user: Option<u64>,
    /// Statements from the client or stored routines (runs stored before procedures mode were client-side).
    #[serde(default)]
    pub mode: Mode,
    /// Range partitions of tpcc_order_line (0, and absent from older runs: one plain table).
    #[serde(default)]
    pub partitions: u32,
    /// Clients each user drove (1, and absent from older runs: each user one client).
    #[serde(default = "one")]
    pub clients_per_user: u32,
    pub target_latency_ms: f64,
    pub load: LoadInfo,
    pub steps: Vec<StepFigures>,
    pub knee: Option<usize>,
    pub stop_reason: StopReason,
    pub consistency: Vec<Check>,
    pub pgbench: Vec<PgbenchFigures>,
}

fn one() -> u32 {
    1
}

impl OltpDocument {
    /// The document of a stored run: `None` when it has none, `Err` when it cannot be read.
    pub fn of(run: &StoredRun) -> Option<Result<OltpDocument, String>> {
        let value = run.attachments.get(WORKLOAD)?;
        Some(
            serde_json::from_value(value.clone())
                .map_err(|e| format!("run {}: its oltp record cannot be read ({e})", run.summary.uuid)),
        )
    }

    pub fn knee_step(&self) -> Option<&StepFigures> {
        self.knee.and_then(|k| self.steps.get(k))
    }
}

impl Planned for OltpRun {
    fn data_dir(&self) -> &Path {
        &self.watched
    }

    fn announce(&self) -> Option<String> {
        Some(self.describe())
    }

    fn drives_local_server(&self) -> bool {
        self.url.dialect() != envbench_sql::Dialect::Sqlite && self.url.is_local()
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let progress = context.progress;
        let load = self.load_tables(context)?;
        let mut steps: Vec<StepFigures> = Vec::new();
        let mut sweep = Sweep::new(&self.users);
        let stop_reason = loop {
            if context.interrupted() {
                break StopReason::Interrupted;
            }
            let users = match sweep.next(&steps, self.profile, self.target_ms) {
                Ok(users) => users,
                Err(reason) => break reason,
            };
            self.settle(context)?;
            let settings = self.step_settings(users, 0, users);
            let name = step_test_id(users);
            let on_tick = |text: &str| progress.update(text);
            match users::run_step(&self.url, &settings, &name, context.steps, context.interrupt, &on_tick)? {
                Some(step) => {
                    progress.line(&step_line(self.profile, &step.figures));
                    steps.push(step.figures);
                }
                None => break StopReason::Interrupted,
            }
        };
        // The checks run even after an interrupt: every transaction is atomic, so the database must still hold.
        progress.update("checking consistency");
        let consistency = self.check_consistency()?;
        let mut pgbench = Vec::new();
        if let Some(program) = &self.pgbench
            && stop_reason != StopReason::Interrupted
        {
            for step in &steps {
                progress.update(&format!("pgbench with {} clients for {}", step.users, format_duration(self.duration)));
                context.steps.step_started(&format!("pgbench {}", step_test_id(step.users)));
                let figures = crosscheck::run_pgbench(program, &self.url, &self.namespace, step.users, self.duration);
                context.steps.step_finished(&format!("pgbench {}", step_test_id(step.users)));
                let figures = figures?;
                progress.line(&format!(
                    "  pgbench {:>4} clients: {:>9.0} TPS, {:.2} ms p95",
                    figures.clients, figures.tps, figures.p95_ms
                ));
                pgbench.push(figures);
            }
        }
        let mut document = self.document(load, steps, stop_reason, consistency);
        document.pgbench = pgbench;
        Ok(Box::new(OltpMeasured::new(document)))
    }
}

impl OltpRun {
    /// The workload this run is (oltp, or the workload whose companion tables it keeps: htap).
    pub fn workload_name(&self) -> &'static str {
        self.companion.map_or("oltp", |c| c.workload())
    }

    /// What the run's load is made of.
    pub fn shape(&self) -> Shape {
        Shape { scale: self.scale, partitions: self.partitions }
    }

    /// What the run will do, in a line.
    pub fn describe(&self) -> String {
        let per_step = match self.transactions_per_user {
            Some(count) => format!("{count} transactions per user per step"),
            None => {
                format!("ramp {} then {} measured per step", format_duration(self.ramp), format_duration(self.duration))
            }
        };
        format!(
            "oltp {}{}{} on {} ({}): {}, {}, {per_step}",
            self.profile.name(),
            match self.mode {
                Mode::Client => "",
                Mode::Procedures => " in procedures mode (stored routines, one call per transaction)",
            },
            if self.all_warehouses { ", every transaction in any warehouse" } else { "" },
            crate::place(&self.url, &self.namespace),
            self.server_version,
            self.shape().describe(self.profile),
            match self.clients_per_user {
                1 => self.users.describe(),
                k => format!("{}, {k} clients each over its one connection", self.users.describe()),
            },
        )
    }

    /// A fleet agent's: use the namespace its coordinator resolved and named, once this host sees the coordinator's
    /// load there (the same server, the same shape, the companion's tables complete); a host that reaches another
    /// server says so. Nothing is created or changed.
    pub fn use_namespace(&mut self, name: &str) -> Result<(), WorkloadError> {
        if self.namespace.name() == name && self.namespace_checked {
            return Ok(());
        }
        let (profile, shape) = (self.profile, self.shape());
        let namespace = Namespace::named(self.url.dialect(), name);
        let place = crate::place(&self.url, &namespace);
        let elsewhere = "the coordinator loads the tables before the agents start, so this host reaches another \
                         server than the coordinator did (a loopback or private address means something else on each \
                         host)";
        let mut connection = namespace.connect(&self.url, "envbench-oltp agent").map_err(OltpError::from)?;
        let found = schema::existing(connection.as_mut(), &namespace, profile)?;
        if !found.is_reusable(shape) {
            return Err(WorkloadError::failure(format!(
                "{place}: this host finds no complete {} load of {} there ({}); {elsewhere}",
                profile.name(),
                shape.describe(profile),
                found.describe()
            )));
        }
        if let Some(companion) = self.companion {
            let state = companion.state(connection.as_mut(), &namespace)?;
            if state != CompanionState::Complete {
                return Err(WorkloadError::failure(format!(
                    "{place}: this host finds {} incomplete there; {elsewhere}",
                    companion.name()
                )));
            }
        }
        self.namespace = namespace;
        self.namespace_checked = true;
        Ok(())
    }

    /// A fleet agent's: reach the server as `application` (nothing is built: the coordinator loaded the tables
    /// before the agents started), and say so in a line.
    pub fn reach_as_agent(&self, application: &str) -> Result<String, WorkloadError> {
        self.url.connect(application).map_err(OltpError::from)?;
        Ok(format!(
            "ready: {} ({}), {} {} to use",
            self.url.shown(),
            self.server_version,
            self.scale,
            self.profile.scale_word()
        ))
    }

    /// A fleet agent's load: the coordinator's, reused.
    pub fn agents_load(&self) -> LoadInfo {
        LoadInfo { reused: true, rows: load::expected_rows(self.profile, self.scale), seconds: 0.0, loaders: 0 }
    }

    /// Load the profile's tables, or reuse a complete load of the same scale, with progress in rows.
    pub fn load_tables(&self, context: &RunContext<'_>) -> Result<LoadInfo, WorkloadError> {
        let progress = context.progress;
        let started = std::time::Instant::now();
        let on_rows = |rows: u64, expected: u64| {
            let rate = rows as f64 / started.elapsed().as_secs_f64().max(1e-3);
            progress.update(&format!(
                "loading {} {}: {:>3}% of {} rows, {} rows/s",
                self.profile.name(),
                self.profile.scale_word(),
                rows * 100 / expected.max(1),
                expected,
                number(rate)
            ));
        };
        // Only a run that holds the tables alone builds them, or installs their routines.
        let exclusive = self.lock.as_ref().is_some_and(TablesLock::is_exclusive);
        let load_plan = if exclusive { self.load_plan } else { LoadPlan::Reuse };
        let routines_plan = RoutinesPlan::of(self.profile, self.url.dialect(), self.mode, exclusive);
        let load = load::prepare(
            &self.url,
            &self.namespace,
            self.profile,
            self.shape(),
            load_plan,
            routines_plan,
            self.loaders,
            context.steps,
            context.interrupt,
            &on_rows,
        )?;
        if let Some(companion) = self.companion {
            let mut connection = self.namespace.connect(&self.url, "envbench-oltp load").map_err(OltpError::from)?;
            match companion.state(connection.as_mut(), &self.namespace)? {
                CompanionState::Complete => {}
                CompanionState::Missing if exclusive => {
                    progress.update(&format!("loading {}", companion.name()));
                    context.steps.step_started("load companion");
                    let built = companion.build(connection.as_mut(), &self.namespace, context.interrupt);
                    context.steps.step_finished("load companion");
                    built?;
                    progress.line(&format!("loaded {}", companion.name()));
                }
                CompanionState::Missing | CompanionState::Foreign(_) => {
                    return Err(OltpError::Other(format!(
                        "{}: {} changed after the run was planned; run it again",
                        crate::place(&self.url, &self.namespace),
                        companion.name()
                    ))
                    .into());
                }
            }
        }
        progress.line(&if load.reused {
            format!(
                "reusing the {} tables ({}); --fresh rebuilds them",
                self.profile.name(),
                self.shape().describe(self.profile)
            )
        } else {
            format!(
                "loaded {} rows in {:.1} s ({} rows/s, {} loader{}), keys, indexes and statistics included",
                load.rows,
                load.seconds,
                number(load.rows as f64 / load.seconds.max(1e-3)),
                load.loaders,
                envbench_core::text::plural(load.loaders)
            )
        });
        if self.url.dialect().ops().single_writer && self.users != UsersPlan::List(vec![1]) {
            progress.line(
                "SQLite serializes writers: one transaction writes at a time, the others wait for the lock (the \
                 figures show how this storage syncs commits, not how a server scales)",
            );
        }
        Ok(load)
    }

    /// Settle the database before a step, unless --no-vacuum; a part this user may not do is said once.
    pub fn settle(&self, context: &RunContext<'_>) -> Result<(), WorkloadError> {
        if !self.settle {
            return Ok(());
        }
        context.progress.update("settling the database before the step (VACUUM, CHECKPOINT or flush)");
        let mut connection = self.namespace.connect(&self.url, "envbench-oltp settle").map_err(OltpError::from)?;
        if let Some(note) = schema::settle(connection.as_mut(), &self.namespace, self.profile)?
            && !self.settle_noted.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            context.progress.line(&format!("note: {note}"));
        }
        Ok(())
    }

    /// A step's settings: `users` users numbered from `first_user`, of a step of `total` users in all (on a fleet,
    /// every host's users draw from the step's one seed, each user with its own stream and home warehouse).
    pub fn step_settings(&self, users: u32, first_user: u32, total: u32) -> StepSettings {
        StepSettings {
            profile: self.profile,
            namespace: self.namespace.clone(),
            users,
            first_user,
            scale: self.scale,
            ramp: self.ramp,
            duration: self.duration,
            keying_thinking: self.keying_thinking,
            all_warehouses: self.all_warehouses,
            transactions_per_user: self.transactions_per_user,
            mode: self.mode,
            clients_per_user: self.clients_per_user,
            load_constants: NuRandConstants::load(load::LOAD_SEED),
            seed: 0x5eed_0000 + u64::from(total),
        }
    }

    /// The profile's consistency conditions, checked on the database as it is now.
    pub fn check_consistency(&self) -> Result<Vec<Check>, WorkloadError> {
        let mut connection = self.namespace.connect(&self.url, "envbench-oltp check").map_err(OltpError::from)?;
        Ok(consistency::run(connection.as_mut(), &self.namespace, self.profile)?)
    }

    /// The run's document from its steps (the knee found here).
    pub(crate) fn document(
        &self,
        load: LoadInfo,
        steps: Vec<StepFigures>,
        stop_reason: StopReason,
        consistency: Vec<Check>,
    ) -> OltpDocument {
        OltpDocument {
            profile: self.profile,
            target: self.url.shown(),
            dialect: self.url.dialect().name().to_string(),
            server_version: self.server_version.clone(),
            scale: self.scale,
            ramp_seconds: self.ramp.as_secs_f64(),
            duration_seconds: self.duration.as_secs_f64(),
            keying_thinking: self.keying_thinking,
            all_warehouses: self.all_warehouses,
            transactions_per_user: self.transactions_per_user,
            mode: self.mode,
            partitions: self.partitions,
            clients_per_user: self.clients_per_user,
            target_latency_ms: self.target_ms,
            load,
            knee: sweep::knee(&steps, self.profile, self.target_ms),
            steps,
            stop_reason,
            consistency,
            pgbench: Vec::new(),
        }
    }
}

/// What a step's clients were and how long they waited for their users' connections: the part of every response
/// time spent in the driver, not the server.
fn clients_line(users: u32, clients: &crate::users::ClientsFigures) -> String {
    format!(
        "{users} users x {} clients = {} terminals over {users} connections: waited for a connection {:.2} ms on \
         average, p95 {:.2} ms, at most {:.2} ms{}",
        clients.per_user,
        u64::from(users) * u64::from(clients.per_user),
        clients.wait_mean_ms,
        clients.wait_p95_ms,
        clients.wait_max_ms,
        if clients.wait_p95_ms > 10.0 {
            " (the users are busy: raise --users and lower --clients-per-user so the wait measures the server)"
        } else {
            ""
        }
    )
}

/// The server's counters per second of each step's measured window, and the wait events sampled from its users'
/// sessions (PostgreSQL), each step named by its `labels` columns and, in words, for the wait events: empty when no
/// step has any.
pub fn server_figures(labels: &[&str], steps: &[(Vec<String>, String, &StepFigures)]) -> String {
    let mut out = String::new();
    let counters: std::collections::BTreeSet<&String> = steps.iter().flat_map(|(_, _, s)| s.server.keys()).collect();
    if !counters.is_empty() {
        out.push_str(&heading("Server counters per second of the measured window"));
        out.push('\n');
        let mut headers: Vec<String> = labels.iter().map(ToString::to_string).collect();
        headers.extend(counters.iter().map(|c| c.to_uppercase()));
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut table = Table::new(&header_refs, &vec![Align::Right; headers.len()]);
        for (cells, _, step) in steps {
            let mut row = cells.clone();
            row.extend(
                counters
                    .iter()
                    .map(|c| step.server.get(*c).map_or("-".into(), |v| number(v / step.measured_seconds.max(1e-9)))),
            );
            table.row(row);
        }
        out.push_str(&table.render());
    }
    for (_, words, step) in steps {
        if step.wait_events.is_empty() {
            continue;
        }
        let total: u64 = step.wait_events.values().sum();
        let mut events: Vec<(&String, &u64)> = step.wait_events.iter().collect();
        events.sort_by(|a, b| b.1.cmp(a.1));
        let top: Vec<String> = events
            .iter()
            .take(5)
            .map(|(event, n)| format!("{event} {:.0}%", **n as f64 * 100.0 / total as f64))
            .collect();
        out.push_str(&format!("Wait events at {words} (sampled): {}\n", top.join(", ")));
    }
    out
}

/// A step's line of progress.
pub fn step_line(profile: Profile, step: &StepFigures) -> String {
    let judged = step.kind(profile.judged_kind());
    let headline = match profile {
        Profile::Tpcc => format!("{:>9} NOPM, ", number(step.nopm.unwrap_or(0.0))),
        Profile::Tpcb => format!("{:>9} TPS, ", number(step.tpm / 60.0)),
    };
    format!(
        "  {:>4} users: {headline}{:>9} TPM, {} p95 {:.1} ms, {} retries, {} failed",
        step.users,
        number(step.tpm),
        profile.judged_kind().name(),
        judged.map_or(0.0, |k| k.p95_ms),
        step.retries,
        step.failures
    ) + &step.clients.as_ref().map(|c| format!("\n        {}", clients_line(step.users, c))).unwrap_or_default()
}

pub(crate) struct OltpMeasured {
    document: OltpDocument,
    /// On a fleet's agent: its name and the fleet's name of each step, the test ids of this host's share.
    fleet_agent: Option<crate::fleet::AgentSteps>,
}

impl OltpMeasured {
    pub(crate) fn new(document: OltpDocument) -> OltpMeasured {
        OltpMeasured { document, fleet_agent: None }
    }

    /// One fleet agent's run: its share of each of the fleet's steps, named as the fleet named them.
    pub(crate) fn fleet_agent(document: OltpDocument, steps: crate::fleet::AgentSteps) -> OltpMeasured {
        OltpMeasured { document, fleet_agent: Some(steps) }
    }
}

impl OltpMeasured {
    fn parameters(&self, users: Option<u32>) -> Value {
        let d = &self.document;
        let mut parameters = json!({
            "profile": d.profile.name(),
            "target": d.dialect,
            "scale": d.scale,
            "ramp_s": d.ramp_seconds,
            "duration_s": d.duration_seconds,
            "keying_thinking": d.keying_thinking,
        });
        // Client-side runs keep the parameters they always had, so they still match runs stored before the modes;
        // a procedures run's results match only other procedures runs.
        if d.mode != Mode::Client {
            parameters["mode"] = json!(d.mode.name());
        }
        if d.all_warehouses {
            parameters["all_warehouses"] = json!(true);
        }
        if d.clients_per_user > 1 {
            parameters["clients_per_user"] = json!(d.clients_per_user);
        }
        // Another layout of the same data is another workload to the server: a partitioned load's results match only
        // runs of as many partitions.
        if d.partitions > 0 {
            parameters["order_line_partitions"] = json!(d.partitions);
        }
        if let Some(count) = d.transactions_per_user {
            parameters["transactions_per_user"] = json!(count);
        }
        if let Some(users) = users {
            parameters["users"] = json!(users);
        }
        parameters
    }
}

/// The metric holding the TPM of each of [`TPM_WINDOWS`] equal parts of the measured window.
pub const TPM_WINDOW_METRIC: &str = "tpm_window";

/// Parts of the measured window whose TPMs are a step's samples: enough for the verdict's test to decide (5 a side
/// for Mann-Whitney U), few enough that a part spans several seconds and so counts stalls (a checkpoint, an fsync
/// storm) as a run over the whole window does. Per-second samples would let a median step over them.
pub const TPM_WINDOWS: usize = 5;

/// Per-minute rates of `parts` consecutive parts of per-second counts (one part per second when there are fewer
/// seconds), the parts' lengths differing by at most a second, so their mean weighted by length is the whole
/// window's rate. `None` without a measured second.
pub fn window_rates(per_second: &[f64], parts: usize) -> Option<Vec<f64>> {
    let parts = parts.min(per_second.len());
    if parts == 0 {
        return None;
    }
    let (base, extra) = (per_second.len() / parts, per_second.len() % parts);
    let mut start = 0;
    let rates = (0..parts)
        .map(|part| {
            let length = base + usize::from(part < extra);
            let count: f64 = per_second[start..start + length].iter().sum();
            start += length;
            count * 60.0 / length as f64
        })
        .collect();
    Some(rates)
}

/// The records of one step, under test id `test` (its transactions' tests are `test` and the transaction's name).
fn step_records(step: &StepFigures, test: &str, parameters: &Value) -> Vec<ResultRecord> {
    use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
    let mut records = Vec::new();
    if let Some(nopm) = step.nopm {
        records.push(SOURCE.record(test, parameters, "nopm", "NOPM", Higher, vec![nopm]));
    }
    // TPM has one definition: transactions ended in the measured window over its minutes, the figure the terminal
    // prints. The windows' TPMs are the samples a comparison tests.
    records.push(SOURCE.record(test, parameters, "tpm", "TPM", Higher, vec![step.tpm]));
    let first = step.ramp_seconds.ceil() as usize;
    let measured = step.per_second.get(first..).unwrap_or_default();
    if let Some(windows) = window_rates(measured, TPM_WINDOWS) {
        records.push(SOURCE.record(test, parameters, TPM_WINDOW_METRIC, "TPM", Higher, windows));
    }
    if let Some(db_tpm) = step.db_tpm {
        records.push(SOURCE.record(test, parameters, "db_tpm", "TPM", Higher, vec![db_tpm]));
    }
    if let Some(server_tpm) = step.server_tpm {
        records.push(SOURCE.record(test, parameters, "server_tpm", "TPM", Higher, vec![server_tpm]));
    }
    records.push(SOURCE.record(
        test,
        parameters,
        "client_cpu_per_transaction",
        "us",
        Lower,
        vec![step.client_cpu_us_per_transaction],
    ));
    for kind in &step.kinds {
        let test = format!("{test} {}", kind.kind.name());
        for (metric, value) in [
            ("latency_mean", kind.mean_ms),
            ("latency_p50", kind.p50_ms),
            (P95_METRIC, kind.p95_ms),
            ("latency_p99", kind.p99_ms),
            ("latency_p99_9", kind.p999_ms),
            ("latency_max", kind.max_ms),
        ] {
            records.push(SOURCE.record(&test, parameters, metric, "ms", Lower, vec![value]));
        }
        records.push(SOURCE.record(&test, parameters, "transactions", "count", Higher, vec![kind.count as f64]));
        records.push(SOURCE.record(&test, parameters, "retries", "count", Lower, vec![kind.retries as f64]));
        records.push(SOURCE.record(&test, parameters, "failures", "count", Lower, vec![kind.failures as f64]));
    }
    records
}

impl Measured for OltpMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
        let d = &self.document;
        let mut records = Vec::new();
        for (index, step) in d.steps.iter().enumerate() {
            let mut parameters = self.parameters(Some(step.users));
            let test = match &self.fleet_agent {
                Some(agent) => agent.test_id(index, &mut parameters, || step_test_id(step.users)),
                None => step_test_id(step.users),
            };
            records.extend(step_records(step, &test, &parameters));
        }
        if let Some(knee) = d.knee_step() {
            let parameters = self.parameters(None);
            let (metric_unit, throughput) = match d.profile {
                Profile::Tpcc => ("NOPM", knee.nopm.unwrap_or(0.0)),
                Profile::Tpcb => ("TPS", knee.tpm / 60.0),
            };
            records.push(SOURCE.record(
                KNEE_TEST,
                &parameters,
                THROUGHPUT_METRIC,
                metric_unit,
                Higher,
                vec![throughput],
            ));
            records.push(SOURCE.record(
                KNEE_TEST,
                &parameters,
                P95_METRIC,
                "ms",
                Lower,
                vec![knee.judged_latency_ms(d.profile)],
            ));
            records.push(SOURCE.record(KNEE_TEST, &parameters, "users", "users", Higher, vec![f64::from(knee.users)]));
        }
        for figures in &d.pgbench {
            let test = format!("pgbench {}", step_test_id(figures.clients));
            let parameters = self.parameters(Some(figures.clients));
            let mut tps = SOURCE.record(&test, &parameters, "tps", "TPS", Higher, vec![figures.tps]);
            let mut p95 = SOURCE.record(&test, &parameters, P95_METRIC, "ms", Lower, vec![figures.p95_ms]);
            tps.flags.push(PGBENCH_FLAG.into());
            p95.flags.push(PGBENCH_FLAG.into());
            records.extend([tps, p95]);
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, json!(&self.document)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.document, series)
    }

    fn ending(&self) -> Ending {
        let d = &self.document;
        let failed: Vec<&Check> = d.consistency.iter().filter(|c| !c.passed).collect();
        if !failed.is_empty() {
            return Ending::Failed(format!(
                "the consistency check failed: {}",
                failed.iter().map(|c| format!("{} ({})", c.name, c.detail)).collect::<Vec<_>>().join("; ")
            ));
        }
        if d.steps.is_empty() {
            return Ending::Failed("no step of users was measured".into());
        }
        let invalid = invalid_steps(d);
        if invalid.len() == d.steps.len() {
            return Ending::Failed(format!("no step is a measurement: {}", invalid.join("; ")));
        }
        if !invalid.is_empty() {
            return Ending::CompleteWithFailures(format!(
                "left out of the knee, as no measurement: {}",
                invalid.join("; ")
            ));
        }
        let failures: u64 = d.steps.iter().map(|s| s.failures).sum();
        if failures > 0 {
            let first = d.steps.iter().find_map(|s| s.first_failure.clone()).unwrap_or_default();
            return Ending::CompleteWithFailures(format!("{failures} transactions failed; the first: {first}"));
        }
        Ending::Complete
    }
}

/// The steps that are no measurement (they ended no transaction, or too many failed), each with why.
fn invalid_steps(d: &OltpDocument) -> Vec<String> {
    d.steps.iter().filter_map(|s| Some(format!("{}: {}", step_test_id(s.users), s.invalid()?))).collect()
}

/// The run for people: the steps with the knee, every transaction's latencies, the server's counters, the checks
/// and the cross-check.
pub fn render(d: &OltpDocument, series: &SamplerSeries) -> String {
    let profile = d.profile;
    let mut out = heading(&format!(
        "OLTP {} on {} ({}), {}",
        profile.name(),
        d.target,
        d.server_version,
        Shape { scale: d.scale, partitions: d.partitions }.describe(profile)
    ));
    out.push('\n');
    if profile == Profile::Tpcc {
        out.push_str(&format!("Mode: {} — {}\n", d.mode.name(), d.mode.describe()));
    }
    let mut headers = vec!["USERS"];
    if profile == Profile::Tpcc {
        headers.push("NOPM");
    } else {
        headers.push("TPS");
    }
    headers.extend([
        "TPM",
        "SERVER TPM",
        "P95 ms",
        "RETRIES",
        "FAILED",
        "CLIENT CPU",
        "CPU us/tx",
        "DISK w/s",
        "w_await ms",
    ]);
    let mut table = Table::new(&headers, &vec![Align::Right; headers.len()]);
    for (index, step) in d.steps.iter().enumerate() {
        let disk = series.step(&step_test_id(step.users)).and_then(|s| s.disks.first());
        table.row(vec![
            format!("{}{}", if Some(index) == d.knee { "* " } else { "" }, step.users),
            number(step.throughput(profile)),
            number(step.tpm),
            step.server_tpm.map_or("-".into(), number),
            format!("{:.1}", step.judged_latency_ms(profile)),
            step.retries.to_string(),
            match step.failures {
                0 => "0".to_string(),
                n => format!("{n} ({:.1}%)", step.failed_share() * 100.0),
            },
            format!("{:.0}%", step.client_cpu_percent),
            format!("{:.0}", step.client_cpu_us_per_transaction),
            disk.map_or("-".into(), |d| number(d.writes_per_s)),
            disk.map_or("-".into(), |d| format!("{:.2}", d.write_await_ms)),
        ]);
    }
    out.push_str(&table.render());
    for reason in invalid_steps(d) {
        out.push_str(&format!("No measurement, left out of the knee: {reason}\n"));
    }
    let judged = format!("{} p95", profile.judged_kind().name());
    match d.knee_step() {
        Some(knee) => out.push_str(&format!(
            "Knee (*): {} users, {} {} at {:.1} ms {judged} — the highest within {} ms\n",
            knee.users,
            number(knee.throughput(profile)),
            profile.throughput_label(),
            knee.judged_latency_ms(profile),
            d.target_latency_ms
        )),
        None => out.push_str(&format!("Knee: no step kept the {judged} within {} ms\n", d.target_latency_ms)),
    }
    out.push_str(&format!("Stopped because {}.\n", d.stop_reason.describe()));
    for step in &d.steps {
        if let Some(clients) = &step.clients {
            out.push_str(&format!("{}\n", clients_line(step.users, clients)));
        }
    }

    out.push_str(&heading("Transactions (measured window; latency in ms, retries included)"));
    out.push('\n');
    let headers = [
        "USERS",
        "TRANSACTION",
        "COUNT",
        "SHARE",
        "ROLLED BACK",
        "RETRIES",
        "FAILED",
        "MEAN",
        "P50",
        "P95",
        "P99",
        "P99.9",
        "MAX",
    ];
    let mut aligns = vec![Align::Right; headers.len()];
    aligns[1] = Align::Left;
    let mut table = Table::new(&headers, &aligns);
    for step in &d.steps {
        for kind in &step.kinds {
            table.row(vec![
                step.users.to_string(),
                kind.kind.name().to_string(),
                kind.count.to_string(),
                format!("{:.1}%", kind.count as f64 * 100.0 / step.transactions.max(1) as f64),
                kind.rolled_back.to_string(),
                kind.retries.to_string(),
                kind.failures.to_string(),
                format!("{:.2}", kind.mean_ms),
                format!("{:.2}", kind.p50_ms),
                format!("{:.2}", kind.p95_ms),
                format!("{:.2}", kind.p99_ms),
                format!("{:.2}", kind.p999_ms),
                format!("{:.2}", kind.max_ms),
            ]);
        }
    }
    out.push_str(&table.render());

    let steps: Vec<(Vec<String>, String, &StepFigures)> =
        d.steps.iter().map(|s| (vec![s.users.to_string()], format!("{} users", s.users), s)).collect();
    out.push_str(&server_figures(&["USERS"], &steps));
    out.push_str(&consistency::render(&d.consistency));

    if !d.pgbench.is_empty() {
        out.push_str(&heading("Cross-check: pgbench against the same server and tables"));
        out.push('\n');
        let headers =
            ["CLIENTS", "ENVBENCH TPS", "PGBENCH TPS", "RATIO", "ENVBENCH P95 ms", "PGBENCH P95 ms", "PGBENCH P99 ms"];
        let mut table = Table::new(&headers, &vec![Align::Right; headers.len()]);
        for figures in &d.pgbench {
            let ours = d.steps.iter().find(|s| s.users == figures.clients);
            let our_tps = ours.map_or(0.0, |s| s.tpm / 60.0);
            table.row(vec![
                figures.clients.to_string(),
                number(our_tps),
                number(figures.tps),
                format!("{:.2}", our_tps / figures.tps.max(1e-9)),
                ours.map_or("-".into(), |s| format!("{:.2}", s.judged_latency_ms(profile))),
                format!("{:.2}", figures.p95_ms),
                format!("{:.2}", figures.p99_ms),
            ]);
        }
        out.push_str(&table.render());
        if let Some(version) = d.pgbench.first().map(|f| &f.version) {
            out.push_str(&format!("{version}, -M prepared, builtin tpcb-like, one thread per client\n"));
        }
    }
    if d.dialect == "sqlite" {
        out.push_str(
            "SQLite: embedded, WAL with synchronous=FULL; writers serialize, so more users add waiting, not work.\n",
        );
    }
    out.push_str(
        "NOPM counts new orders from the database over the measured window (as HammerDB does); TPM counts every \
         transaction the users ended. TPC-derived: not a TPC result.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_rates_cover_the_window_and_average_to_its_rate() {
        let seconds = [10.0, 12.0, 8.0, 10.0, 10.0, 11.0, 9.0, 10.0, 10.0, 10.0, 10.0, 12.0];
        let rates = window_rates(&seconds, 5).unwrap();
        // 12 seconds in 5 parts: 3, 3, 2, 2, 2 seconds.
        assert_eq!(rates, vec![600.0, 620.0, 570.0, 600.0, 660.0]);
        let weighted: f64 = rates.iter().zip([3.0, 3.0, 2.0, 2.0, 2.0]).map(|(r, l)| r * l).sum::<f64>() / 12.0;
        let whole = seconds.iter().sum::<f64>() * 60.0 / 12.0;
        assert!((weighted - whole).abs() < 1e-9);
        assert_eq!(window_rates(&seconds[..3], 5), Some(vec![600.0, 720.0, 480.0]));
        assert_eq!(window_rates(&[], 5), None);
    }
    use crate::transactions::Kind;

    #[test]
    fn transaction_kinds_name_their_tests() {
        assert_eq!(step_test_id(8), "U=8");
        assert_eq!(Kind::NewOrder.name(), "New-Order");
    }

    fn step(users: u32, transactions: u64, failures: u64) -> StepFigures {
        StepFigures {
            users,
            measured_seconds: 1.0,
            nopm: Some(transactions as f64 * 27.0),
            tpm: transactions as f64 * 60.0,
            db_tpm: None,
            server_tpm: None,
            transactions,
            retries: 0,
            failures,
            kinds: Vec::new(),
            per_second: Vec::new(),
            ramp_seconds: 0.0,
            client_cpu_percent: 0.0,
            client_cpu_us_per_transaction: 0.0,
            server: Default::default(),
            wait_events: Default::default(),
            first_failure: (failures > 0).then(|| "Payment: disk full".to_string()),
            clients: None,
        }
    }

    fn ending(steps: Vec<StepFigures>) -> (Ending, String) {
        let document = OltpDocument {
            profile: Profile::Tpcc,
            target: "x.sqlite".into(),
            dialect: "sqlite".into(),
            server_version: "SQLite".into(),
            scale: 1,
            ramp_seconds: 0.0,
            duration_seconds: 1.0,
            keying_thinking: false,
            all_warehouses: false,
            transactions_per_user: None,
            mode: Mode::Client,
            partitions: 0,
            clients_per_user: 1,
            target_latency_ms: 100.0,
            load: LoadInfo { reused: true, rows: 0, seconds: 0.0, loaders: 0 },
            knee: sweep::knee(&steps, Profile::Tpcc, 100.0),
            steps,
            stop_reason: StopReason::ListDone,
            consistency: Vec::new(),
            pgbench: Vec::new(),
        };
        let text = render(&document, &SamplerSeries::default());
        (OltpMeasured::new(document).ending(), text)
    }

    /// A run whose steps ended no transaction (a `--duration` of 1ns once did) or lost more than 1% of them is no
    /// result: it ends failed, or with failures when some step stands, and the table says which step is left out.
    #[test]
    fn runs_without_a_measured_step_fail() {
        let (end, text) = ending(vec![step(2, 0, 0)]);
        assert!(matches!(&end, Ending::Failed(why) if why.contains("U=2: 2 users ended no transaction")), "{end:?}");
        assert!(text.contains("No measurement, left out of the knee: U=2") && text.contains("Knee: no step"), "{text}");
        let (end, _) = ending(vec![step(1, 100, 0), step(2, 96, 104)]);
        assert!(matches!(&end, Ending::CompleteWithFailures(why) if why.contains("52.0%")), "{end:?}");
        let (end, _) = ending(Vec::new());
        assert!(matches!(end, Ending::Failed(_)));
        let (end, _) = ending(vec![step(1, 1000, 3)]);
        assert!(
            matches!(&end, Ending::CompleteWithFailures(why) if why.starts_with("3 transactions failed")),
            "{end:?}"
        );
        assert_eq!(ending(vec![step(1, 1000, 0)]).0, Ending::Complete);
    }
}
