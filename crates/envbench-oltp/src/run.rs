//! A planned oltp run ([`OltpRun`]) and what it does: load the tables (or reuse them), settle the database before
//! each step, run the steps of users, check consistency, run pgbench beside them, and make the run's document.

use crate::arrivals::{Arrivals, OpenLoop, RatePlan};
use crate::capacity::{self, CapacityFigures};
use crate::companion::{Companion, CompanionState};
use crate::consistency::{self, Check};
use crate::crosscheck;
use crate::document::{Drive, OltpDocument, OpenLoopSettings};
use crate::error::OltpError;
use crate::figures::{StepFigures, step_name, step_test_id};
use crate::load::{self, LoadInfo, LoadPlan, RoutinesPlan};
use crate::lock::TablesLock;
use crate::measured::OltpMeasured;
use crate::mix::Mix;
use crate::profile::Profile;
use crate::random::{NuRandConstants, Zipf};
use crate::render::step_line;
use crate::routines::Mode;
use crate::schema::{self, Shape};
use crate::slo::Slo;
use crate::sweep::{self, StopReason, Sweep, UsersPlan};
use crate::users::{self, StepSettings};
use envbench_core::text::number;
use envbench_core::units::format_duration;
use envbench_core::workload::{Measured, Planned, RunContext, WorkloadError};
use envbench_sql::{DatabaseUrl, Isolation, Namespace};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// The share of each TPC-C transaction.
    pub mix: Mix,
    /// Open loop: the rate transactions arrive at (`None`: a closed loop).
    pub rate: Option<RatePlan>,
    pub arrivals: Arrivals,
    pub latency_limit: Option<Duration>,
    /// The service level open-loop steps are judged by.
    pub slo: Option<Slo>,
    pub isolation: Option<Isolation>,
    pub max_tries: u32,
    /// TPC-B's accounts drawn with a Zipfian skew.
    pub skew: Option<Zipf>,
    pub transactions_per_user: Option<u64>,
    pub mode: Mode,
    /// The seed every step's users draw their inputs and arrivals from (`--seed`, or drawn anew for each run; a
    /// fleet's agents take their coordinator's).
    pub seed: u64,
    /// Settle the database before each step ([`schema::settle`]).
    pub(crate) settle: bool,
    pub(crate) settle_noted: std::sync::atomic::AtomicBool,
    /// Whether the run uses the load it found or builds the tables, as decided under the lock.
    pub(crate) load_plan: LoadPlan,
    /// Held for the whole run (none on a fleet's agent: its coordinator holds it).
    pub(crate) lock: Option<TablesLock>,
    pub(crate) pgbench: Option<PathBuf>,
    pub loaders: usize,
    /// The directory whose storage the run describes: the server's data directory when it is on this host.
    pub watched: PathBuf,
    pub server_version: String,
    /// Tables another workload keeps beside these, built and checked with them.
    pub(crate) companion: Option<&'static dyn Companion>,
    /// A fleet agent's: whether it has found its coordinator's load in `namespace` ([`OltpRun::use_namespace`]).
    pub(crate) namespace_checked: bool,
}

impl Planned for OltpRun {
    fn data_dir(&self) -> &Path {
        &self.watched
    }

    fn announce(&self) -> Option<String> {
        Some(self.describe())
    }

    fn drives_local_server(&self) -> bool {
        !self.url.dialect().ops().embedded && self.url.is_local()
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let progress = context.progress;
        let load = self.load_tables(context)?;
        let (steps, stop_reason) = match self.rate {
            Some(RatePlan::Auto) => self.capacity_steps(context)?,
            _ => self.users_steps(context)?,
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
    /// The steps of users, down the list or doubling until the knee.
    fn users_steps(&self, context: &RunContext<'_>) -> Result<(Vec<StepFigures>, StopReason), WorkloadError> {
        let mut steps: Vec<StepFigures> = Vec::new();
        let mut sweep = Sweep::new(&self.users);
        loop {
            if context.interrupted() {
                return Ok((steps, StopReason::Interrupted));
            }
            let users = match sweep.next(&steps, self.profile, self.target_ms) {
                Ok(users) => users,
                Err(reason) => return Ok((steps, reason)),
            };
            match self.measure_step(context, &self.step_settings(users, 0, users))? {
                Some(step) => steps.push(step),
                None => return Ok((steps, StopReason::Interrupted)),
            }
        }
    }

    /// The steps of `--rate auto`: the closed-loop peak at the run's users, then open-loop rates as shares of it
    /// until the service level's edge is found.
    pub(crate) fn capacity_steps(
        &self,
        context: &RunContext<'_>,
    ) -> Result<(Vec<StepFigures>, StopReason), WorkloadError> {
        let users = match &self.users {
            crate::sweep::UsersPlan::List(list) => list[0],
            crate::sweep::UsersPlan::Auto { .. } => unreachable!("--rate auto is planned with one count of users"),
        };
        let mut steps = Vec::new();
        let mut settings = self.step_settings(users, 0, users);
        settings.open = None;
        context.progress.line(&format!("  closed loop at {users} users: the peak the open-loop rates are shares of"));
        let Some(peak) = self.measure_step(context, &settings)? else {
            return Ok((steps, StopReason::Interrupted));
        };
        let peak_tps = peak.tpm / 60.0;
        let invalid = peak.invalid().is_some();
        steps.push(peak);
        if invalid || peak_tps <= 0.0 {
            return Ok((steps, StopReason::Failures));
        }
        let mut search = capacity::Search::default();
        let (mut last, mut missed) = (None, false);
        while let Some(share) = search.next(last) {
            if context.interrupted() {
                return Ok((steps, StopReason::Interrupted));
            }
            settings.open = Some(self.open_loop(peak_tps * share, users));
            let Some(step) = self.measure_step(context, &settings)? else {
                return Ok((steps, StopReason::Interrupted));
            };
            last = Some((share, step.within_slo()));
            missed |= !step.within_slo();
            steps.push(step);
        }
        Ok((steps, if missed { StopReason::Capacity } else { StopReason::CapacityAtPeak }))
    }

    /// One step, the database settled first, its figures judged by the service level when its loop is open and
    /// shown as a line; `None` when it was interrupted.
    pub(crate) fn measure_step(
        &self,
        context: &RunContext<'_>,
        settings: &StepSettings,
    ) -> Result<Option<StepFigures>, WorkloadError> {
        self.settle(context)?;
        let name = step_name(settings.users, settings.open.as_ref().map(|o| o.per_second));
        let on_tick = |text: &str| context.progress.update(text);
        let Some(step) = users::run_step(&self.url, settings, &name, context.steps, context.interrupt, &on_tick)?
        else {
            return Ok(None);
        };
        let mut figures = step.figures;
        if let (Some(slo), Some(_)) = (&self.slo, &settings.open) {
            figures.slo = slo.judge(&step.latency);
        }
        context.progress.line(&step_line(self.profile, &figures));
        Ok(Some(figures))
    }

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
            "oltp {}{}{}{} on {} ({}): {}, {}, {per_step}",
            self.profile.name(),
            match self.mode {
                Mode::Client => "",
                Mode::Procedures => " in procedures mode (stored routines, one call per transaction)",
            },
            if self.all_warehouses { ", every transaction in any warehouse" } else { "" },
            if self.mix == Mix::TPCC { String::new() } else { format!(", mix {}", self.mix.text()) },
            crate::error::place(&self.url, &self.namespace),
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
        let place = crate::error::place(&self.url, &namespace);
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
                "loading {} {}: {} ({} of {} rows, {} rows/s)",
                self.profile.name(),
                self.profile.scale_word(),
                envbench_core::text::progress_bar(rows, expected, started.elapsed()),
                number(rows as f64),
                number(expected as f64),
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
                        crate::error::place(&self.url, &self.namespace),
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
            mix: self.mix,
            transactions_per_user: self.transactions_per_user,
            mode: self.mode,
            clients_per_user: self.clients_per_user,
            load_constants: NuRandConstants::load(load::LOAD_SEED),
            seed: step_seed(self.seed, total),
            open: match self.rate {
                Some(RatePlan::Fixed(rate)) => Some(self.open_loop(rate.total(total), total)),
                Some(RatePlan::Auto) | None => None,
            },
            max_tries: self.max_tries,
            isolation: self.isolation,
            skew: self.skew,
        }
    }

    /// How the run drives its transactions, as its document keeps it.
    pub fn drive(&self) -> Drive {
        Drive {
            open_loop: self.rate.map(|rate| OpenLoopSettings {
                rate,
                arrivals: self.arrivals,
                latency_limit_ms: self.latency_limit.map(|l| l.as_secs_f64() * 1e3),
            }),
            slo: self.slo.clone(),
            isolation: self.isolation.map(|level| level.name().to_string()),
            max_tries: self.max_tries,
            skew_theta: self.skew.map(|zipf| zipf.theta),
        }
    }

    /// The open loop of a step whose `users` (a fleet's, all of them) are sent `per_second` transactions in all.
    pub fn open_loop(&self, per_second: f64, users: u32) -> OpenLoop {
        OpenLoop { per_second, users, arrivals: self.arrivals, latency_limit: self.latency_limit }
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
            mix: (self.mix != Mix::TPCC).then_some(self.mix),
            transactions_per_user: self.transactions_per_user,
            mode: self.mode,
            partitions: self.partitions,
            clients_per_user: self.clients_per_user,
            target_latency_ms: self.target_ms,
            load,
            knee: sweep::knee(&steps, self.profile, self.target_ms),
            capacity: match (self.rate, &self.slo) {
                (Some(RatePlan::Auto), Some(slo)) => CapacityFigures::of(&steps, self.profile, slo.text()),
                _ => None,
            },
            steps,
            stop_reason,
            consistency,
            pgbench: Vec::new(),
            drive: self.drive(),
            seed: Some(self.seed),
        }
    }
}

/// The seed of a step of `total` users: the run's, mixed with the step's size (SplitMix64's finalizer), so every
/// step of a run draws a stream of its own and a run with the same seed replays the same steps.
pub fn step_seed(run_seed: u64, total: u32) -> u64 {
    let mut z = run_seed ^ u64::from(total).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed for a run given none: from the operating system's randomness (the standard library's hash keys), so two
/// runs never replay one sequence.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrivals::{Arrivals, OpenLoop, Schedule};
    use std::time::Instant;

    /// Issue #67, C2: runs given no seed draw their own, so their arrivals differ; runs given one replay it.
    #[test]
    fn each_run_draws_its_own_arrivals_unless_given_a_seed() {
        let open = OpenLoop { per_second: 100.0, users: 4, arrivals: Arrivals::Poisson, latency_limit: None };
        let start = Instant::now();
        let arrivals = |run_seed: u64| -> Vec<Instant> {
            let mut schedule = Schedule::new(&open, 0, start, step_seed(run_seed, 4));
            (0..20)
                .map(|_| {
                    let due = schedule.due();
                    schedule.advance();
                    due
                })
                .collect()
        };
        let (a, b) = (fresh_seed(), fresh_seed());
        assert_ne!(a, b, "two runs, two seeds");
        assert_ne!(arrivals(a), arrivals(b), "two runs, two sequences");
        assert_eq!(arrivals(7), arrivals(7), "one seed, one sequence");
        assert_ne!(step_seed(7, 4), step_seed(7, 8), "each step its own stream");
    }
}
