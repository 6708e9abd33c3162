//! `envbench htap` as the driver runs it: the command line (oltp's, plus the analytic streams), the plan (oltp's, with
//! the CH tables kept beside the TPC-C tables), the steps, the interference figures, the records and the tables.

use crate::ch::CH_TABLES;
use crate::streams::{self, AnalyticFigures, HtapStepSettings, StepOutcome};
use crate::{SOURCE, WORKLOAD, WORKLOAD_VERSION};
use clap::{Args, FromArgMatches};
use envbench_core::DurationArg;
use envbench_core::model::{Direction, ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::workload::{
    Ending, Measured, Plan, Planned, ReadBack, RunContext, ScalingCurve, ScalingPoint, Workload, WorkloadError,
};
use envbench_oltp::Profile;
use envbench_oltp::consistency::Check;
use envbench_oltp::fleet::AgentSteps;
use envbench_oltp::load::LoadInfo;
use envbench_oltp::schema::Shape;
use envbench_oltp::transactions::Kind;
use envbench_oltp::users::StepFigures;
use envbench_oltp::workload::{
    OltpArgs, OltpRun, Planner, TPM_WINDOW_METRIC, TPM_WINDOWS, server_figures, window_rates,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The most analytic streams of a step (each is a thread and a connection running the 22 queries).
pub const MAX_STREAMS: u32 = 64;
/// The most transactional users (oltp's bound).
pub const MAX_USERS: u32 = envbench_oltp::workload::MAX_USERS;
/// The shortest and longest query timeout.
pub const MIN_QUERY_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_QUERY_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The arguments of `envbench htap`: oltp's (the target, warehouses, mode, ramp and duration of each step, ...) and
/// the analytic streams.
#[derive(Args, Debug)]
pub struct HtapArgs {
    #[command(flatten)]
    pub oltp: OltpArgs,
    /// Analytic streams of each step, a list such as 0,1,2,4: each stream runs the 22 CH-benCHmark queries in an
    /// order of its own, over and over, on its own connection. Step 0 is the transactions' baseline; each step
    /// with streams is also run without transactional users, the analytics' own baseline.
    #[arg(long, help_heading = "Run", default_value = "0,1,2", value_name = "LIST")]
    pub analytic_users: String,
    /// The longest an analytic query may run: the server cancels it there, and it is counted as a timeout.
    #[arg(long, help_heading = "Run", default_value = "10m", value_name = "DURATION")]
    pub query_timeout: DurationArg,
}

/// The mixed workload.
pub struct HtapWorkload;

/// The registration of `htap`.
pub static HTAP: HtapWorkload = HtapWorkload;

fn usage(message: impl Into<String>) -> WorkloadError {
    WorkloadError::usage(message)
}

/// The test id, and the sampler's step name, of a step.
pub fn step_test_id(users: u32, streams: u32) -> String {
    format!("U={users} A={streams}")
}

impl Workload for HtapWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        // oltp's options as htap takes them: a server target (without --target, oltp's default, SQLite, is refused
        // with the reason), one count of users, and the options htap refuses (another profile, pgbench's cross-check,
        // SQLite's directory, count-based steps, the knee search's) out of its help; given anyway, each is refused
        // with the reason.
        let mut command = HtapArgs::augment_args(clap::Command::new(WORKLOAD))
            .about(
                "Transactions and analytics on the same live tables (CH-benCHmark-style), on PostgreSQL or \
                 MariaDB/MySQL: what each analytic stream costs the transactions, and how much slower the analytics \
                 run beside them.",
            )
            .mut_arg("target", |arg| {
                arg.hide_default_value(true).help(
                    "Where the transactions and the analytic queries run (required): postgres://user@host/db or \
                     mysql://user@host/db (MariaDB or MySQL)",
                )
            })
            .mut_arg("users", |arg| arg.help("Transactional users of every step (one count, 1 or more)"))
            .mut_arg("warehouses", |arg| arg.help("Warehouses of TPC-C's tables, which the analytic queries read too"))
            .mut_arg("mode", |arg| {
                arg.help(
                    "How transactions reach the database: client (every statement from the client, one round trip \
                     each: what an application sees) or procedures (one call of a stored routine per transaction, as \
                     HammerDB's TPROC-C runs them)",
                )
            })
            .mut_arg("drop", |arg| {
                arg.help(
                    "Remove everything envbench made for htap in the target (TPC-C's tables, the CH-benCHmark's, \
                     their marker and the stored routines) and nothing else, then end; no run is stored",
                )
            });
        for refused in ["profile", "dir", "cross_check", "transactions", "max_users", "target_latency"] {
            command = command.mut_arg(refused, |arg| arg.hide(true));
        }
        command
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = HtapArgs::from_arg_matches(matches).map_err(|e| usage(e.to_string()))?;
        check_profile(&args)?;
        // oltp's knee search, which htap's steps (counts of analytic streams) have no use for.
        for (id, option) in [("target_latency", "--target-latency"), ("max_users", "--max-users")] {
            if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
                return Err(usage(format!(
                    "{option} is oltp's, for its search of the user count's knee; htap runs one count of users \
                     (--users N) beside each count of analytic streams (--analytic-users 0,1,2): leave it out"
                )));
            }
        }
        if args.oltp.drop {
            return Ok(Plan::Answer(envbench_oltp::workload::drop_tables(&args.oltp, Some(&CH_TABLES))?));
        }
        Ok(Plan::Run(Box::new(plan(args, Planner::Run)?)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::HtapFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

/// htap needs a database server, which the built-in suites do not give: it is in none of them.
impl envbench_core::workload::SuiteSide for HtapWorkload {}

/// Parse `--analytic-users`: stream counts from 0 to [`MAX_STREAMS`], none twice.
fn parse_streams(text: &str) -> Result<Vec<u32>, WorkloadError> {
    let counts = text
        .split(',')
        .map(|part| match part.trim().parse::<u32>() {
            Ok(n) if n <= MAX_STREAMS => Ok(n),
            _ => Err(usage(format!(
                "--analytic-users '{}': give stream counts from 0 to {MAX_STREAMS}, e.g. --analytic-users 0,1,2,4",
                envbench_core::text::truncate(text, 80)
            ))),
        })
        .collect::<Result<Vec<u32>, _>>()?;
    envbench_core::units::check_settings("--analytic-users", &counts, 16).map_err(usage)?;
    Ok(counts)
}

/// htap runs TPC-C's tables only.
fn check_profile(args: &HtapArgs) -> Result<(), WorkloadError> {
    if args.oltp.profile != "tpcc" {
        return Err(usage(format!(
            "--profile '{}': htap runs TPC-C's transactions beside the CH-benCHmark's queries over the same tables; \
             leave --profile out (tpcb is oltp's, with pgbench's tables)",
            args.oltp.profile
        )));
    }
    Ok(())
}

/// The run `args` describe, for `planner` (a run of its own or a fleet's coordinator, which load and lock the tables;
/// or a fleet's agent, which only reaches the server).
pub(crate) fn plan(mut args: HtapArgs, planner: Planner) -> Result<HtapRun, WorkloadError> {
    check_profile(&args)?;
    let users: u32 = match args.oltp.users.trim().parse() {
        Ok(n) if (1..=MAX_USERS).contains(&n) => n,
        Ok(0) => {
            return Err(usage(
                "--users 0: htap measures what analytic streams and transactions cost each other, so it needs \
                 transactional users (each count of streams also runs alone, as the analytics' baseline); for \
                 analytic queries alone, run tpch",
            ));
        }
        _ => {
            return Err(usage(format!(
                "--users '{}': give one count of transactional users from 1 to {MAX_USERS} (htap's steps are its \
                 analytic streams: --analytic-users 0,1,2)",
                envbench_core::text::truncate(&args.oltp.users, 80)
            )));
        }
    };
    let streams = parse_streams(&args.analytic_users)?;
    if args.oltp.cross_check.is_some() {
        return Err(usage("--cross-check runs pgbench's transaction: it is oltp's (--profile tpcb), not htap's"));
    }
    if args.oltp.transactions.is_some() {
        return Err(usage(
            "--transactions: htap's steps are timed, so the transactions and the analytics share one window; use \
             --ramp and --duration",
        ));
    }
    if args.oltp.target == "sqlite" {
        return Err(usage(
            "htap runs analytic queries beside the transactions on one database server, and SQLite has one writer \
             and lacks the queries' functions: give --target postgres://user@host/db or mysql://user@host/db",
        ));
    }
    let query_timeout =
        args.query_timeout.within("--query-timeout", MIN_QUERY_TIMEOUT, MAX_QUERY_TIMEOUT).map_err(usage)?;
    // oltp plans one step of the users; htap runs its own steps with them.
    args.oltp.users = users.to_string();
    let run = envbench_oltp::workload::plan_with(args.oltp, planner, &CH_TABLES)?;
    Ok(HtapRun { run, users, streams, query_timeout })
}

/// Everything the arguments say, checked, with oltp's run planned and its tables locked.
pub(crate) struct HtapRun {
    pub(crate) run: OltpRun,
    /// Transactional users of the mixed steps.
    pub(crate) users: u32,
    pub(crate) streams: Vec<u32>,
    pub(crate) query_timeout: Duration,
}

impl HtapRun {
    /// The steps in the order they run: the transactional users beside each count of streams (the first, 0, is the
    /// transactions' baseline), then each count of streams alone (the analytics' baselines).
    pub(crate) fn steps(&self) -> Vec<(u32, u32)> {
        let mut steps: Vec<(u32, u32)> = self.streams.iter().map(|&s| (self.users, s)).collect();
        steps.extend(self.streams.iter().filter(|&&s| s > 0).map(|&s| (0, s)));
        steps
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "htap on {} ({}): {}, {} transactional users{}, analytic streams {}, each step ramp {} then {} measured",
            envbench_oltp::place(&self.run.url, &self.run.namespace),
            self.run.server_version,
            self.run.shape().describe(Profile::Tpcc),
            self.users,
            match self.run.mode {
                envbench_oltp::routines::Mode::Client => "",
                envbench_oltp::routines::Mode::Procedures => " in procedures mode",
            },
            self.streams.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            envbench_core::units::format_duration(self.run.ramp),
            envbench_core::units::format_duration(self.run.duration),
        )
    }
}

impl Planned for HtapRun {
    fn data_dir(&self) -> &Path {
        &self.run.watched
    }

    fn announce(&self) -> Option<String> {
        Some(self.describe())
    }

    fn drives_local_server(&self) -> bool {
        self.run.url.is_local()
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let progress = context.progress;
        let load = self.run.load_tables(context)?;
        let mut steps = Vec::new();
        let mut interrupted = false;
        for (users, streams) in self.steps() {
            if context.interrupted() {
                interrupted = true;
                break;
            }
            self.run.settle(context)?;
            let settings = self.step_settings(users, 0, users, streams, 0);
            let name = step_test_id(users, streams);
            let on_tick = |text: &str| progress.update(text);
            match streams::run_step(&settings, &name, context.steps, context.interrupt, &on_tick)? {
                Some(StepOutcome { oltp, analytics }) => {
                    let step =
                        HtapStep { users, streams, oltp: oltp.map(|o| o.figures), analytics: analytics.figures() };
                    progress.line(&step.line());
                    steps.push(step);
                }
                None => {
                    interrupted = true;
                    break;
                }
            }
        }
        progress.update("checking consistency");
        let consistency = self.run.check_consistency()?;
        Ok(Box::new(HtapMeasured::new(self.document(load, steps, consistency, interrupted))))
    }
}

impl HtapRun {
    /// A step's settings: `users` transactional users numbered from `first_user` of `total` in the step, and
    /// `streams` analytic streams numbered from `first_stream`.
    pub(crate) fn step_settings(
        &self,
        users: u32,
        first_user: u32,
        total: u32,
        streams: u32,
        first_stream: u32,
    ) -> HtapStepSettings<'_> {
        HtapStepSettings {
            url: &self.run.url,
            namespace: &self.run.namespace,
            oltp: self.run.step_settings(users, first_user, total),
            streams,
            first_stream,
            query_timeout: self.query_timeout,
        }
    }

    /// The run's document from its steps.
    pub(crate) fn document(
        &self,
        load: LoadInfo,
        steps: Vec<HtapStep>,
        consistency: Vec<Check>,
        interrupted: bool,
    ) -> HtapDocument {
        let run = &self.run;
        HtapDocument {
            target: run.url.shown(),
            dialect: run.url.dialect().name().to_string(),
            server_version: run.server_version.clone(),
            scale: run.scale,
            partitions: run.partitions,
            mode: run.mode,
            users: self.users,
            keying_thinking: run.keying_thinking,
            all_warehouses: run.all_warehouses,
            ramp_seconds: run.ramp.as_secs_f64(),
            duration_seconds: run.duration.as_secs_f64(),
            query_timeout_seconds: self.query_timeout.as_secs_f64(),
            load,
            steps,
            consistency,
            interrupted,
        }
    }
}

/// One step: transactional users and analytic streams over one measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtapStep {
    pub users: u32,
    pub streams: u32,
    /// The transactional users' figures (none in an analytics-alone step).
    pub oltp: Option<StepFigures>,
    pub analytics: AnalyticFigures,
}

impl HtapStep {
    fn nopm(&self) -> Option<f64> {
        self.oltp.as_ref().and_then(|o| o.nopm)
    }

    fn new_order(&self, quantile: fn(&envbench_oltp::users::KindFigures) -> f64) -> Option<f64> {
        self.oltp.as_ref().and_then(|o| o.kind(Kind::NewOrder)).filter(|k| k.count > 0).map(quantile)
    }

    /// The step's line of progress.
    pub(crate) fn line(&self) -> String {
        let oltp = match &self.oltp {
            Some(o) => format!(
                "{:>9} NOPM, New-Order p95 {:.1} ms",
                number(o.nopm.unwrap_or(0.0)),
                self.new_order(|k| k.p95_ms).unwrap_or(0.0)
            ),
            None => "no transactions".to_string(),
        };
        let analytics = match self.streams {
            0 => "no analytic queries".to_string(),
            _ => format!(
                "{} queries/h ({} completed, {} timed out{})",
                number(self.analytics.queries_per_hour),
                self.analytics.completed,
                self.analytics.timeouts,
                match self.analytics.unfinished {
                    0 => String::new(),
                    running => format!(", {running} still running at the window's end"),
                }
            ),
        };
        format!(
            "  {:>4} user{}, {:>2} stream{}: {oltp}; {analytics}",
            self.users,
            envbench_core::text::plural(self.users as usize),
            self.streams,
            envbench_core::text::plural(self.streams as usize)
        )
    }
}

/// What an htap run keeps as its attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtapDocument {
    pub target: String,
    pub dialect: String,
    pub server_version: String,
    pub scale: i64,
    pub partitions: u32,
    pub mode: envbench_oltp::routines::Mode,
    /// Transactional users of the mixed steps.
    pub users: u32,
    pub keying_thinking: bool,
    pub all_warehouses: bool,
    pub ramp_seconds: f64,
    pub duration_seconds: f64,
    pub query_timeout_seconds: f64,
    pub load: LoadInfo,
    pub steps: Vec<HtapStep>,
    pub consistency: Vec<Check>,
    pub interrupted: bool,
}

/// How one mixed step compares with its baselines.
#[derive(Clone, Debug, PartialEq)]
pub struct Interference {
    pub streams: u32,
    /// The share of the baseline's NOPM the streams cost, in percent.
    pub nopm_cost_percent: Option<f64>,
    /// New-Order p95 against the baseline's, as a factor.
    pub new_order_p95_factor: Option<f64>,
    /// How much slower the analytics ran beside the transactions than alone, as a factor of queries per hour.
    pub analytics_slowdown: Option<f64>,
}

impl HtapDocument {
    fn step(&self, users: u32, streams: u32) -> Option<&HtapStep> {
        self.steps.iter().find(|s| s.users == users && s.streams == streams)
    }

    /// The transactions' baseline: the mixed users without streams.
    fn baseline(&self) -> Option<&HtapStep> {
        (self.users > 0).then(|| self.step(self.users, 0)).flatten()
    }

    /// Each mixed step against the baselines.
    pub fn interference(&self) -> Vec<Interference> {
        let baseline = self.baseline();
        self.steps
            .iter()
            .filter(|s| s.users > 0)
            .map(|step| {
                let alone = self.step(0, step.streams).filter(|_| step.streams > 0);
                Interference {
                    streams: step.streams,
                    nopm_cost_percent: baseline
                        .and_then(HtapStep::nopm)
                        .filter(|b| *b > 0.0)
                        .zip(step.nopm())
                        .map(|(b, n)| (1.0 - n / b) * 100.0),
                    new_order_p95_factor: baseline
                        .and_then(|b| b.new_order(|k| k.p95_ms))
                        .filter(|b| *b > 0.0)
                        .zip(step.new_order(|k| k.p95_ms))
                        .map(|(b, n)| n / b),
                    analytics_slowdown: alone
                        .map(|a| a.analytics.queries_per_hour)
                        .filter(|_| step.analytics.queries_per_hour > 0.0)
                        .map(|a| a / step.analytics.queries_per_hour),
                }
            })
            .collect()
    }

    /// The run in a sentence: what the most streams cost the transactions, and what the transactions cost them.
    pub fn verdict(&self) -> Option<String> {
        let worst = self.interference().into_iter().filter(|i| i.streams > 0).max_by_key(|i| i.streams)?;
        let mut parts = Vec::new();
        let streams = format!("{} analytic stream{}", worst.streams, if worst.streams == 1 { "" } else { "s" });
        match (worst.nopm_cost_percent, worst.new_order_p95_factor) {
            (Some(cost), Some(factor)) => parts.push(format!(
                "{streams} {} and {}",
                if cost >= 0.0 { format!("cost {cost:.0}% of NOPM") } else { format!("raised NOPM by {:.0}%", -cost) },
                factor_words("New-Order p95", factor)
            )),
            (Some(cost), None) => parts.push(format!("{streams} cost {cost:.0}% of NOPM")),
            _ => {}
        }
        if let Some(slowdown) = worst.analytics_slowdown {
            parts.push(format!(
                "analytics run {} under {} transactional users",
                if slowdown >= 1.0 {
                    format!("{slowdown:.2}x slower")
                } else {
                    format!("{:.2}x faster", 1.0 / slowdown)
                },
                self.users
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; ") + ".")
    }
}

/// What the streams did to a response time, as a factor in the verdict's words: `made New-Order p95 3.10x longer`,
/// `made New-Order p95 1.20x shorter`, `left New-Order p95 as it was`.
fn factor_words(what: &str, factor: f64) -> String {
    if (factor - 1.0).abs() < 0.05 {
        format!("left {what} as it was")
    } else if factor > 1.0 {
        format!("made {what} {factor:.2}x longer")
    } else {
        format!("made {what} {:.2}x shorter", 1.0 / factor)
    }
}

pub(crate) struct HtapMeasured {
    document: HtapDocument,
    /// A fleet agent's own run: the agent's name and the fleet's name of each step.
    fleet_agent: Option<AgentSteps>,
}

impl HtapMeasured {
    pub(crate) fn new(document: HtapDocument) -> HtapMeasured {
        HtapMeasured { document, fleet_agent: None }
    }

    /// A fleet agent's share of the fleet's steps, named `steps`.
    pub(crate) fn fleet_agent(document: HtapDocument, steps: AgentSteps) -> HtapMeasured {
        HtapMeasured { document, fleet_agent: Some(steps) }
    }

    fn parameters(&self, step: &HtapStep) -> Value {
        let d = &self.document;
        let mut parameters = json!({
            "target": d.dialect,
            "scale": d.scale,
            "ramp_s": d.ramp_seconds,
            "duration_s": d.duration_seconds,
            "keying_thinking": d.keying_thinking,
            "users": step.users,
            "analytic_users": step.streams,
        });
        if d.mode != envbench_oltp::routines::Mode::Client {
            parameters["mode"] = json!(d.mode.name());
        }
        if d.all_warehouses {
            parameters["all_warehouses"] = json!(true);
        }
        if d.partitions > 0 {
            parameters["order_line_partitions"] = json!(d.partitions);
        }
        parameters
    }
}

impl Measured for HtapMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
        let d = &self.document;
        let interference = d.interference();
        let mut records = Vec::new();
        for (index, step) in d.steps.iter().enumerate() {
            let mut parameters = self.parameters(step);
            let test = match &self.fleet_agent {
                Some(agent) => agent.test_id(index, &mut parameters, || step_test_id(step.users, step.streams)),
                None => step_test_id(step.users, step.streams),
            };
            if let Some(oltp) = &step.oltp {
                if let Some(nopm) = oltp.nopm {
                    records.push(SOURCE.record(&test, &parameters, "nopm", "NOPM", Higher, vec![nopm]));
                }
                let first = oltp.ramp_seconds.ceil() as usize;
                if let Some(windows) = window_rates(oltp.per_second.get(first..).unwrap_or_default(), TPM_WINDOWS) {
                    records.push(SOURCE.record(&test, &parameters, TPM_WINDOW_METRIC, "TPM", Higher, windows));
                }
                for (metric, value) in
                    [("new_order_p95", step.new_order(|k| k.p95_ms)), ("new_order_p99", step.new_order(|k| k.p99_ms))]
                {
                    if let Some(value) = value {
                        records.push(SOURCE.record(&test, &parameters, metric, "ms", Lower, vec![value]));
                    }
                }
            }
            if step.streams > 0 {
                let analytics = &step.analytics;
                records.push(SOURCE.record(
                    &test,
                    &parameters,
                    "queries_per_hour",
                    "Qph",
                    Higher,
                    vec![analytics.queries_per_hour],
                ));
                records.push(SOURCE.record(
                    &test,
                    &parameters,
                    "query_timeouts",
                    "count",
                    Lower,
                    vec![analytics.timeouts as f64],
                ));
                for query in analytics.queries.iter().filter(|q| q.count > 0) {
                    let test = format!("{test} Q{}", query.query);
                    records.push(SOURCE.record(
                        &test,
                        &parameters,
                        "latency_median",
                        "ms",
                        Lower,
                        vec![query.median_ms],
                    ));
                    records.push(SOURCE.record(&test, &parameters, "latency_p95", "ms", Lower, vec![query.p95_ms]));
                }
            }
            // What the streams cost is the fleet's, not one host's share of it.
            if let Some(i) = interference
                .iter()
                .find(|i| i.streams == step.streams && step.users > 0 && step.streams > 0)
                .filter(|_| self.fleet_agent.is_none())
            {
                if let Some(cost) = i.nopm_cost_percent {
                    records.push(SOURCE.record(&test, &parameters, "nopm_cost", "%", Lower, vec![cost]));
                }
                if let Some(slowdown) = i.analytics_slowdown {
                    records.push(SOURCE.record(&test, &parameters, "analytics_slowdown", "x", Lower, vec![slowdown]));
                }
            }
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, serde_json::to_value(&self.document).expect("the htap document serializes")))
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(&self.document)
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
            return Ending::Failed("no step was measured".into());
        }
        let failures: u64 = d.steps.iter().map(|s| s.analytics.failures).sum();
        let failed_transactions: u64 = d.steps.iter().filter_map(|s| s.oltp.as_ref()).map(|o| o.failures).sum();
        if failures + failed_transactions > 0 {
            let first = d
                .steps
                .iter()
                .find_map(|s| s.analytics.first_failure.clone().or_else(|| s.oltp.as_ref()?.first_failure.clone()))
                .unwrap_or_default();
            return Ending::CompleteWithFailures(format!(
                "{failures} analytic queries and {failed_transactions} transactions failed; the first: {first}"
            ));
        }
        Ending::Complete
    }
}

fn optional(value: Option<f64>, write: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| "-".to_string(), write)
}

/// The run for people: the interference table, each query alone and beside the transactions, the checks.
pub fn render(d: &HtapDocument) -> String {
    let shape = Shape { scale: d.scale, partitions: d.partitions };
    let mut out = heading(&format!(
        "HTAP on {} ({}), {}, {} transactional users, mode {}",
        d.target,
        d.server_version,
        shape.describe(Profile::Tpcc),
        d.users,
        d.mode.name()
    ));
    out.push('\n');
    let headers =
        ["USERS", "STREAMS", "NOPM", "NOPM COST", "NO p95 ms", "NO p99 ms", "QUERIES/H", "SLOWDOWN", "TIMEOUTS"];
    let mut table = Table::new(&headers, &[Align::Right; 9]);
    let interference = d.interference();
    for step in &d.steps {
        let i = interference.iter().find(|i| step.users > 0 && i.streams == step.streams);
        table.row(vec![
            step.users.to_string(),
            step.streams.to_string(),
            optional(step.nopm(), number),
            optional(i.and_then(|i| i.nopm_cost_percent).filter(|_| step.streams > 0), |c| format!("{c:.1}%")),
            optional(step.new_order(|k| k.p95_ms), |v| format!("{v:.1}")),
            optional(step.new_order(|k| k.p99_ms), |v| format!("{v:.1}")),
            if step.streams > 0 { number(step.analytics.queries_per_hour) } else { "-".into() },
            optional(i.and_then(|i| i.analytics_slowdown), |s| format!("{s:.2}x")),
            if step.streams > 0 { step.analytics.timeouts.to_string() } else { "-".into() },
        ]);
    }
    out.push_str(&table.render());
    out.push_str(
        "NOPM COST: the share of the transactions' baseline (0 streams) the streams took; SLOWDOWN: queries per hour \
         of the streams alone over those beside the transactions.\n",
    );
    if let Some(verdict) = d.verdict() {
        out.push_str(&format!("Verdict: {verdict}\n"));
    }
    for step in d.steps.iter().filter(|s| s.streams > 0 && s.analytics.completed == 0 && s.analytics.unfinished > 0) {
        out.push_str(&format!(
            "No analytic query finished inside the {:.0} s window at {} users and {} streams ({} still running when \
             it closed): the queries take longer than the window; give a longer --duration.\n",
            step.analytics.measured_seconds, step.users, step.streams, step.analytics.unfinished
        ));
    }
    // Each query alone and beside the transactions, at the most streams that ran both ways.
    if let Some((mixed, alone)) = d
        .steps
        .iter()
        .filter(|s| s.users > 0 && s.streams > 0)
        .filter_map(|s| Some((s, d.step(0, s.streams)?)))
        .max_by_key(|(s, _)| s.streams)
    {
        out.push_str(&heading(&format!(
            "Queries at {} streams (median and p95 in ms), alone and beside {} transactional users",
            mixed.streams, mixed.users
        )));
        out.push('\n');
        let headers = ["QUERY", "ALONE", "ALONE p95", "MIXED", "MIXED p95", "SLOWDOWN", "RUNS", "TIMEOUTS"];
        let mut table = Table::new(&headers, &[Align::Right; 8]);
        for (a, m) in alone.analytics.queries.iter().zip(&mixed.analytics.queries) {
            let done = |q: &streams::QueryFigures| q.count > 0;
            table.row(vec![
                format!("Q{}", a.query),
                if done(a) { format!("{:.1}", a.median_ms) } else { "-".into() },
                if done(a) { format!("{:.1}", a.p95_ms) } else { "-".into() },
                if done(m) { format!("{:.1}", m.median_ms) } else { "-".into() },
                if done(m) { format!("{:.1}", m.p95_ms) } else { "-".into() },
                if done(a) && done(m) && a.median_ms > 0.0 {
                    format!("{:.2}x", m.median_ms / a.median_ms)
                } else {
                    "-".into()
                },
                format!("{}/{}", a.count, m.count),
                format!("{}/{}", a.timeouts, m.timeouts),
            ]);
        }
        out.push_str(&table.render());
    }
    let steps: Vec<(Vec<String>, String, &StepFigures)> = d
        .steps
        .iter()
        .filter_map(|s| {
            let oltp = s.oltp.as_ref()?;
            let words = format!("{} users and {} streams", s.users, s.streams);
            Some((vec![s.users.to_string(), s.streams.to_string()], words, oltp))
        })
        .collect();
    out.push_str(&server_figures(&["USERS", "STREAMS"], &steps));
    out.push_str(&envbench_oltp::consistency::render(&d.consistency));
    if d.interrupted {
        out.push_str("Interrupted: the steps above ran; the rest did not.\n");
    }
    out.push_str(
        "CH-benCHmark-derived (TPC-C's transactions, the 22 CH queries over the same live tables): not a TPC result.\n",
    );
    out
}

impl ReadBack for HtapWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: "nopm",
            tests: "",
            per: envbench_core::workload::Per::Rate(1000.0),
            words: "1,000 NOPM",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("transactions with analytics")
    }

    fn headline_metrics(&self) -> &'static [&'static str] {
        &[TPM_WINDOW_METRIC]
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Storage, Resource::Memory]
    }

    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["users", "analytic_users"]
    }

    /// One transactional user and no stream, or one stream alone: one session at a time.
    fn single_threaded(&self, _test_id: &str, parameters: &Value) -> bool {
        let count = |knob: &str| parameters.get(knob).and_then(Value::as_u64).unwrap_or(0);
        count("users") + count("analytic_users") == 1
    }

    fn headline(&self, run: &StoredRun) -> String {
        match document(run) {
            Some(Ok(d)) => d.verdict().unwrap_or_else(|| {
                d.baseline().and_then(HtapStep::nopm).map_or("no step measured".into(), |n| format!("{n:.0} NOPM"))
            }),
            Some(Err(e)) => e,
            None => "no htap record".into(),
        }
    }

    fn tests_word(&self) -> &'static str {
        "per step and query"
    }

    /// The interference curve: NOPM and New-Order p95 against analytic streams.
    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let d = document(run)?.ok()?;
        let points: Vec<ScalingPoint> = d
            .steps
            .iter()
            .filter(|s| s.users > 0)
            .map(|s| ScalingPoint {
                concurrency: f64::from(s.streams),
                throughput: s.nopm().unwrap_or(0.0),
                latency: s.new_order(|k| k.p95_ms).unwrap_or(0.0),
            })
            .collect();
        (!points.is_empty()).then(|| ScalingCurve {
            concurrency_label: "analytic streams".into(),
            concurrency_symbol: "A".into(),
            throughput_label: "NOPM".into(),
            latency_label: "New-Order p95".into(),
            latency_unit: "ms".into(),
            points,
            knee: None,
            latency_target: None,
        })
    }
}

/// The document of a stored run: `None` when it has none.
fn document(run: &StoredRun) -> Option<Result<HtapDocument, String>> {
    let value = run.attachments.get(WORKLOAD)?;
    Some(
        serde_json::from_value(value.clone())
            .map_err(|e| format!("run {}: its htap record cannot be read ({e})", run.summary.uuid)),
    )
}
