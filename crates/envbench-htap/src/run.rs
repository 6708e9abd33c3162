//! A planned htap run ([`HtapRun`], planned by [`plan`]): oltp's run with the CH tables beside TPC-C's, the steps of
//! transactional users and analytic streams, and the run's document.

use crate::ch::CH_TABLES;
use crate::document::{HtapDocument, HtapStep, step_test_id};
use crate::measured::HtapMeasured;
use crate::options::{HtapArgs, MAX_QUERY_TIMEOUT, MAX_USERS, MIN_QUERY_TIMEOUT};
use crate::streams::{self, HtapStepSettings, StepOutcome};
use envbench_core::workload::{Measured, Planned, RunContext, WorkloadError};
use envbench_oltp::{
    OltpRun, Planner, Profile, Target, UsersPlan, arrivals::RatePlan, consistency::Check, load::LoadInfo,
    routines::Mode,
};
use std::path::Path;
use std::time::Duration;

/// htap runs TPC-C's tables only.
pub(crate) fn check_profile(args: &HtapArgs) -> Result<(), WorkloadError> {
    if args.oltp.profile != Profile::Tpcc {
        return Err(WorkloadError::usage(format!(
            "--profile '{}': htap runs TPC-C's transactions beside the CH-benCHmark's queries over the same tables; \
             leave --profile out (tpcb is oltp's, with pgbench's tables)",
            args.oltp.profile.name()
        )));
    }
    Ok(())
}

/// The run `args` describe, for `planner` (a run of its own or a fleet's coordinator, which load and lock the tables;
/// or a fleet's agent, which only reaches the server).
pub(crate) fn plan(args: HtapArgs, planner: Planner) -> Result<HtapRun, WorkloadError> {
    check_profile(&args)?;
    // htap's --users parser gives one count ([`crate::options::parse_users`]); oltp plans one step of them, and htap
    // runs its own steps with them.
    let users = match &args.oltp.users {
        UsersPlan::List(list) if list.len() == 1 => list[0],
        _ => {
            return Err(WorkloadError::usage(format!(
                "--users: give one count of transactional users from 1 to {MAX_USERS} (htap's steps are its analytic \
                 streams: --analytic-users 0,1,2)"
            )));
        }
    };
    let streams = args.analytic_users.0;
    if args.oltp.cross_check.is_some() {
        return Err(WorkloadError::usage(
            "--cross-check runs pgbench's transaction: it is oltp's (--profile tpcb), not htap's",
        ));
    }
    if args.oltp.transactions.is_some() {
        return Err(WorkloadError::usage(
            "--transactions: htap's steps are timed, so the transactions and the analytics share one window; use \
             --ramp and --duration",
        ));
    }
    if args.oltp.rate == Some(RatePlan::Auto) {
        return Err(WorkloadError::usage(
            "--rate auto searches oltp's transactions alone for their capacity within a service level: give htap a \
             fixed rate (e.g. --rate 200) to see how the analytic streams move the transactions' response times",
        ));
    }
    if args.oltp.slo.is_some() {
        return Err(WorkloadError::usage(
            "--slo judges oltp's open-loop steps (and its --rate auto search) by a service level: leave it out of htap, \
             whose verdict is what the analytic streams cost the transactions",
        ));
    }
    if args.oltp.target == Target::Sqlite {
        return Err(WorkloadError::usage(format!(
            "htap runs analytic queries beside the transactions on one database server, and SQLite has one writer \
             and lacks the queries' functions: give --target {}",
            envbench_sql::url_forms()
        )));
    }
    let query_timeout = args
        .query_timeout
        .within("--query-timeout", MIN_QUERY_TIMEOUT, MAX_QUERY_TIMEOUT)
        .map_err(WorkloadError::usage)?;
    let run = envbench_oltp::plan_with(args.oltp, planner, &CH_TABLES)?;
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
                Mode::Client => "",
                Mode::Procedures => " in procedures mode",
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
            mix: (run.mix != envbench_oltp::Mix::TPCC).then_some(run.mix),
            ramp_seconds: run.ramp.as_secs_f64(),
            duration_seconds: run.duration.as_secs_f64(),
            query_timeout_seconds: self.query_timeout.as_secs_f64(),
            load,
            steps,
            consistency,
            interrupted,
            drive: run.drive(),
        }
    }
}
