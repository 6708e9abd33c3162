//! `envbench fleet ... oltp`: the virtual users of each step spread over many hosts against one database server,
//! HammerDB's primary-and-replicas way of driving a server that one client host cannot saturate.
//!
//! The coordinator loads the tables once, before any agent starts, and holds their lock until the fleet's run ends
//! (alone when it built them, shared otherwise); it resolves the one namespace they are in and tells the agents with
//! every step, and each agent checks that it sees that load there before its first step.
//! Every step's users are split over the agents as evenly as they go, numbered across the fleet (a user's number
//! picks its home warehouse and its random stream, so the fleet's users are those of one host running them all).
//! Merging a step: what the clients count adds up (transactions, TPM, retries, the per-second series, client CPU),
//! latency percentiles come from every transaction of every host (the agents' histograms merged), and what the
//! database counts (NOPM from the districts' order ids, commits, the server's counters) is counted by every agent
//! around the same window, so the fleet takes the agents' median rather than adding it up.

use crate::figures::{self, Causes, ClientsFigures, KindFigures, OpenCounts, StepFigures, step_name};
use crate::load::LoadInfo;
use crate::measured::OltpMeasured;
use crate::options::{OltpArgs, Target};
use crate::plan::{Planner, plan};
use crate::profile::Profile;
use crate::render::step_line;
use crate::run::OltpRun;
use crate::sweep::{StopReason, Sweep};
use crate::transactions::Kind;
use crate::users;
use clap::FromArgMatches;
use envbench_base::latency::{HistogramDocument, LatencyHistogram};
use envbench_core::fleet::{
    AgentPlace, AgentReport, FleetAgent, FleetCoordinator, FleetStep, FleetWorkload, SHOWN_KEY, StepReport,
    split_evenly,
};
use envbench_core::stats::Summary;
use envbench_core::workload::{Measured, RunContext, WorkloadError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// oltp's side of fleet runs.
pub struct OltpFleet;

impl FleetWorkload for OltpFleet {
    /// Each host's share is what its users ended: the database's own counts are the fleet's, not a host's.
    fn throughput_unit(&self) -> &'static str {
        "TPM"
    }

    fn coordinator(&self, matches: &clap::ArgMatches) -> Result<Box<dyn FleetCoordinator>, WorkloadError> {
        let run = fleet_plan(matches, Planner::Run)?;
        let sweep = Sweep::new(&run.users);
        Ok(Box::new(OltpCoordinator { run, sweep, steps: Vec::new(), stop_reason: None, load: None }))
    }

    fn agent(&self, matches: &clap::ArgMatches, place: &AgentPlace) -> Result<Box<dyn FleetAgent>, WorkloadError> {
        let run = fleet_plan(matches, Planner::FleetAgent)?;
        Ok(Box::new(OltpAgent { name: place.name.clone(), run, steps: Vec::new(), prepared: false }))
    }
}

/// The arguments of a fleet's oltp, checked as the single-host command checks them, and what a fleet cannot do.
fn fleet_plan(matches: &clap::ArgMatches, planner: Planner) -> Result<OltpRun, WorkloadError> {
    let args = OltpArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
    if args.target == Target::Sqlite {
        return Err(WorkloadError::usage(format!(
            "a fleet's oltp drives one database server from every host: give --target {}, a server every agent's \
             host reaches (embedded SQLite is one host's file)",
            envbench_sql::url_forms()
        )));
    }
    if args.cross_check.is_some() {
        return Err(WorkloadError::usage(
            "--cross-check runs pgbench from one host: leave it out on a fleet (run oltp --cross-check pgbench on \
             its own to compare with pgbench)",
        ));
    }
    if args.rate == Some(crate::arrivals::RatePlan::Auto) || args.slo.is_some() {
        return Err(WorkloadError::usage(
            "--rate auto searches one host's users for their capacity within a service level, and --slo judges one \
             host's open-loop steps by one: run them with envbench oltp on its own; a fleet takes a fixed rate (e.g. \
             --rate 2000), shared by all its users",
        ));
    }
    plan(args, planner)
}

/// An agent's share of a step, as it reports it: its figures as measured (the database's counts included, which
/// are the fleet's) and the latency of every measured transaction, by kind.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentStep {
    pub figures: StepFigures,
    pub latency: Vec<(Kind, HistogramDocument)>,
    /// How long measured transactions waited for their user's connection (users with several clients).
    #[serde(default)]
    pub waits: Option<HistogramDocument>,
    /// An open loop's service times by kind and its schedule's lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<AgentOpenLoop>,
}

/// An agent's open-loop histograms, beside its response times.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentOpenLoop {
    pub service: Vec<(Kind, HistogramDocument)>,
    pub lag: HistogramDocument,
}

impl AgentStep {
    /// What an agent reports of a step it measured.
    pub fn of(measured: &figures::MeasuredStep) -> AgentStep {
        AgentStep {
            latency: measured.latency.iter().map(|(kind, h)| (*kind, h.to_document())).collect(),
            waits: measured.waits.as_ref().map(LatencyHistogram::to_document),
            open: measured.open.as_ref().map(|open| AgentOpenLoop {
                service: open.service.iter().map(|(kind, h)| (*kind, h.to_document())).collect(),
                lag: open.lag.to_document(),
            }),
            figures: measured.figures.clone(),
        }
    }
}

/// The median of some figures, `None` when there are none.
fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    Summary::of(&values.into_iter().collect::<Vec<f64>>()).map(|s| s.median)
}

/// One step of the whole fleet from each agent's share (see the module's note for what adds up and what does not).
pub fn merge_steps(parts: &[AgentStep]) -> Result<StepFigures, String> {
    let first = &parts.first().ok_or("no agent reported it")?.figures;
    let mut latency: BTreeMap<Kind, LatencyHistogram> = BTreeMap::new();
    let mut service: BTreeMap<Kind, LatencyHistogram> = BTreeMap::new();
    let mut lag = LatencyHistogram::new();
    let mut open_counts = OpenCounts::default();
    let mut counts: BTreeMap<Kind, [u64; 3]> = BTreeMap::new();
    let mut causes: BTreeMap<Kind, [Causes; 2]> = BTreeMap::new();
    for part in parts {
        for (kind, document) in &part.latency {
            latency.entry(*kind).or_default().merge(&LatencyHistogram::from_document(document));
        }
        if let Some(open) = &part.open {
            for (kind, document) in &open.service {
                service.entry(*kind).or_default().merge(&LatencyHistogram::from_document(document));
            }
            lag.merge(&LatencyHistogram::from_document(&open.lag));
        }
        if let Some(open) = &part.figures.open {
            open_counts.add(OpenCounts::of(open));
        }
        for kind in &part.figures.kinds {
            let sums = counts.entry(kind.kind).or_default();
            for (sum, n) in sums.iter_mut().zip([kind.rolled_back, kind.failures, kind.retries]) {
                *sum += n;
            }
            let [retried, failed] = causes.entry(kind.kind).or_default();
            for (sums, by) in [(retried, &kind.retried_by), (failed, &kind.failed_by)] {
                for (cause, n) in by {
                    *sums.entry(cause.clone()).or_insert(0) += n;
                }
            }
        }
    }
    let kinds: Vec<KindFigures> = latency
        .iter()
        .map(|(kind, histogram)| {
            let [retried, failed] = causes.get(kind).cloned().unwrap_or_default();
            KindFigures::of(*kind, histogram, counts.get(kind).copied().unwrap_or_default()).detailed(
                service.get(kind).filter(|_| first.open.is_some()),
                &retried,
                &failed,
            )
        })
        .collect();
    let figures = || parts.iter().map(|p| &p.figures);
    let transactions: u64 = kinds.iter().map(|k| k.count).sum();
    let seconds = figures().map(|f| f.measured_seconds).fold(0.0, f64::max);
    let cpu_seconds: f64 = figures().map(|f| f.client_cpu_percent / 100.0 * f.measured_seconds).sum();
    let mut per_second = vec![0.0; figures().map(|f| f.per_second.len()).max().unwrap_or(0)];
    for f in figures() {
        for (sum, n) in per_second.iter_mut().zip(&f.per_second) {
            *sum += n;
        }
    }
    let mut server = BTreeMap::new();
    for name in figures().flat_map(|f| f.server.keys()) {
        if let Some(value) = median(figures().filter_map(|f| f.server.get(name).copied())) {
            server.insert(name.clone(), value);
        }
    }
    Ok(StepFigures {
        users: figures().map(|f| f.users).sum(),
        measured_seconds: seconds,
        nopm: median(figures().filter_map(|f| f.nopm)),
        tpm: figures().map(|f| f.tpm).sum(),
        db_tpm: median(figures().filter_map(|f| f.db_tpm)),
        server_tpm: median(figures().filter_map(|f| f.server_tpm)),
        server_note: figures().find_map(|f| f.server_note.clone()),
        transactions,
        retries: kinds.iter().map(|k| k.retries).sum(),
        failures: kinds.iter().map(|k| k.failures).sum(),
        kinds,
        per_second,
        ramp_seconds: first.ramp_seconds,
        client_cpu_percent: cpu_seconds / seconds.max(1e-9) * 100.0,
        client_cpu_us_per_transaction: if transactions == 0 { 0.0 } else { cpu_seconds * 1e6 / transactions as f64 },
        server,
        // Every agent samples the wait events of every user's session (they share one application name): one
        // agent's samples describe the fleet's.
        wait_events: first.wait_events.clone(),
        first_failure: figures().find_map(|f| f.first_failure.clone()),
        clients: first.clients.as_ref().map(|clients| {
            let mut waits = LatencyHistogram::new();
            for document in parts.iter().filter_map(|p| p.waits.as_ref()) {
                waits.merge(&LatencyHistogram::from_document(document));
            }
            ClientsFigures::of(clients.per_user, &waits)
        }),
        // Each agent's users were offered their share of the fleet's rate; the shares and what the agents ended add
        // up.
        open: first.open.as_ref().map(|open| {
            let opens = || figures().filter_map(|f| f.open.as_ref());
            let rates = [opens().map(|o| o.offered_tps).sum(), opens().map(|o| o.achieved_tps).sum()];
            figures::open_figures(rates, open.arrivals, open.latency_limit_ms, &open_counts, &lag)
        }),
        slo: Vec::new(),
    })
}

/// A step's figures as one host's share: what its own users did. The database's counts (NOPM from the districts,
/// commits, the server's counters, the sessions' wait events) describe the whole fleet and are left out; NOPM is
/// counted from the New-Orders this host's users committed.
pub fn host_share(mut figures: StepFigures, profile: Profile) -> StepFigures {
    figures.nopm = match profile {
        Profile::Tpcc => figures
            .kind(Kind::NewOrder)
            .map(|k| (k.count - k.rolled_back) as f64 / (figures.measured_seconds / 60.0).max(1e-9)),
        Profile::Tpcb => None,
    };
    figures.db_tpm = None;
    figures.server_tpm = None;
    figures.server.clear();
    figures.wait_events.clear();
    figures
}

/// The fleet's side: the tables loaded once, the sweep over the fleet's users, the merged steps.
struct OltpCoordinator {
    run: OltpRun,
    sweep: Sweep,
    steps: Vec<StepFigures>,
    stop_reason: Option<StopReason>,
    load: Option<LoadInfo>,
}

impl FleetCoordinator for OltpCoordinator {
    fn data_dir(&self) -> &Path {
        &self.run.watched
    }

    fn announce(&self, agents: usize) -> String {
        format!("{}; each step's users spread over {agents} agents", self.run.describe())
    }

    fn prepare(&mut self, context: &RunContext<'_>) -> Result<Option<String>, WorkloadError> {
        let load = self.run.load_tables(context)?;
        self.load = Some(load);
        Ok(Some(format!("the agents share these tables on {}", self.run.url.shown())))
    }

    /// The database is settled before each step, as a single host's run settles it.
    fn before_step(&mut self, _step: &FleetStep, context: &RunContext<'_>) -> Result<(), WorkloadError> {
        self.run.settle(context)
    }

    fn next_step(&mut self, agents: usize) -> Option<FleetStep> {
        if self.stop_reason.is_some() {
            return None;
        }
        let users = match self.sweep.next(&self.steps, self.run.profile, self.run.target_ms) {
            Ok(users) => users,
            Err(reason) => {
                self.stop_reason = Some(reason);
                return None;
            }
        };
        let mut first_user = 0;
        let assignments = split_evenly(users, agents)
            .into_iter()
            .map(|n| {
                let shown = format!("{n} user{} ({})", envbench_core::text::plural(n as usize), numbers(first_user, n));
                let share = UsersShare {
                    users: n,
                    first_user,
                    total: users,
                    seed: self.run.seed,
                    schema: self.run.namespace.name(),
                };
                let mut assignment = share.assignment();
                assignment[SHOWN_KEY] = shown.into();
                first_user += n;
                if n == 0 { Value::Null } else { assignment }
            })
            .collect();
        // An open loop's step is named with its rate, as a single host names it (the sampler's steps, the tables).
        let rate = self.run.step_settings(users, 0, users).open.map(|o| o.per_second);
        Some(FleetStep { name: step_name(users, rate), assignments, pause: std::time::Duration::ZERO })
    }

    fn merge_step(&mut self, step: &FleetStep, reports: &[AgentReport<'_>]) -> Result<String, WorkloadError> {
        let parts = reports.iter().map(|report| report.figures::<AgentStep>(step)).collect::<Result<Vec<_>, _>>()?;
        let merged = merge_steps(&parts).map_err(|e| WorkloadError::failure(format!("{}: {e}", step.name)))?;
        let line = format!("{} on {} agents", step_line(self.run.profile, &merged), parts.len());
        self.steps.push(merged);
        Ok(line)
    }

    fn finish(self: Box<Self>, interrupted: bool) -> Result<Box<dyn Measured>, WorkloadError> {
        let stop_reason =
            if interrupted { StopReason::Interrupted } else { self.stop_reason.unwrap_or(StopReason::ListDone) };
        // Checked once, by the coordinator, after every agent's users are done.
        let consistency = self.run.check_consistency()?;
        let load = self.load.clone().ok_or_else(|| WorkloadError::failure("the tables were never loaded"))?;
        let document = self.run.document(load, self.steps, stop_reason, consistency);
        Ok(Box::new(OltpMeasured::new(document)))
    }
}

/// The key of a step's assignment that names the namespace (schema, or MySQL's database) of the tables.
pub const SCHEMA_KEY: &str = "schema";
/// The key of a step's assignment that carries the fleet's seed, so every host's users draw from the one run's.
pub const SEED_KEY: &str = "seed";

use crate::measured::AgentSteps;

/// The numbers of `count` users (or streams) from `first` (counted from 0), as shown: `#3`, `#3-4`.
pub fn numbers(first: u32, count: u32) -> String {
    match count {
        1 => format!("#{}", first + 1),
        _ => format!("#{}-{}", first + 1, first + count),
    }
}

/// An agent's share of a step's users as the coordinator assigned it: how many, the fleet's number of the first,
/// the step's total, the fleet's seed, and the namespace of the tables.
pub struct UsersShare<'a> {
    pub users: u32,
    pub first_user: u32,
    pub total: u32,
    pub seed: u64,
    pub schema: &'a str,
}

impl UsersShare<'_> {
    /// The assignment that carries this share, as [`UsersShare::read`] reads it back (a workload adds its own keys).
    pub fn assignment(&self) -> Value {
        json!({
            "users": self.users,
            "first_user": self.first_user,
            "total": self.total,
            SEED_KEY: self.seed,
            SCHEMA_KEY: self.schema,
        })
    }

    /// The share an assignment holds; `None` when it holds none.
    pub fn read(assignment: &Value) -> Option<UsersShare<'_>> {
        let number = |key: &str| assignment.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        Some(UsersShare {
            users: number("users")?,
            first_user: number("first_user")?,
            total: number("total")?,
            seed: assignment.get(SEED_KEY).and_then(Value::as_u64)?,
            schema: assignment.get(SCHEMA_KEY).and_then(Value::as_str)?,
        })
    }
}

/// One host's side: its share of each step's users against the server.
struct OltpAgent {
    name: String,
    run: OltpRun,
    /// The fleet's step names and this host's share of them.
    steps: Vec<(String, StepFigures)>,
    prepared: bool,
}

impl FleetAgent for OltpAgent {
    fn data_dir(&self) -> &Path {
        &self.run.watched
    }

    /// Nothing is built: the coordinator loaded the tables before this agent started. The agent reaches the server
    /// here; it checks the load in the namespace the coordinator names with the first step.
    fn prepare(&mut self, _context: &RunContext<'_>) -> Result<String, WorkloadError> {
        let ready = self.run.reach_as_agent("envbench-oltp agent")?;
        self.prepared = true;
        Ok(ready)
    }

    fn run_step(
        &mut self,
        step: &str,
        assignment: &Value,
        context: &RunContext<'_>,
    ) -> Result<StepReport, WorkloadError> {
        let Some(UsersShare { users, first_user, total, seed, schema }) = UsersShare::read(assignment) else {
            return Err(WorkloadError::failure(format!("{step}: the coordinator sent no users ({assignment})")));
        };
        if !self.prepared || users == 0 {
            return Err(WorkloadError::failure(format!("{step}: a step before preparing, or without users")));
        }
        self.run.use_namespace(schema)?;
        self.run.seed = seed;
        let settings = self.run.step_settings(users, first_user, total);
        let on_tick = |text: &str| context.progress.update(text);
        let measured = users::run_step(&self.run.url, &settings, step, context.steps, context.interrupt, &on_tick)?
            .ok_or_else(WorkloadError::interrupted)?;
        let report = AgentStep::of(&measured);
        self.steps.push((step.to_string(), host_share(measured.figures, self.run.profile)));
        Ok(StepReport {
            throughput: report.figures.tpm,
            figures: serde_json::to_value(&report).expect("step figures serialize"),
        })
    }

    /// This host's own run: its share of every step, under the fleet's step names; the consistency checks are the
    /// fleet's run's.
    fn finish(self: Box<Self>) -> Result<Box<dyn Measured>, WorkloadError> {
        let OltpAgent { name, run, steps, .. } = *self;
        let (names, steps): (Vec<String>, Vec<StepFigures>) = steps.into_iter().unzip();
        let document = run.document(run.agents_load(), steps, StopReason::ListDone, Vec::new());
        Ok(Box::new(OltpMeasured::fleet_agent(document, AgentSteps { agent: name, names })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(users: u32, nopm: f64, new_order_us: &[u64], payment_us: &[u64]) -> AgentStep {
        let histogram = |values: &[u64]| {
            let mut h = LatencyHistogram::new();
            for us in values {
                h.record_ns(us * 1000);
            }
            h
        };
        let (new_order, payment) = (histogram(new_order_us), histogram(payment_us));
        let kinds = vec![
            KindFigures::of(Kind::NewOrder, &new_order, [1, 0, 2]),
            KindFigures::of(Kind::Payment, &payment, [0, 1, 0]),
        ];
        let transactions = (new_order_us.len() + payment_us.len()) as u64;
        AgentStep {
            figures: StepFigures {
                users,
                measured_seconds: 60.0,
                nopm: Some(nopm),
                tpm: transactions as f64,
                db_tpm: Some(nopm * 3.0),
                server_tpm: Some(nopm * 3.0),
                transactions,
                retries: 2,
                failures: 1,
                kinds,
                per_second: vec![1.0, 2.0, 3.0],
                ramp_seconds: 1.0,
                client_cpu_percent: 50.0,
                client_cpu_us_per_transaction: 30.0 * 1e6 / transactions as f64,
                server: BTreeMap::from([("commits".to_string(), nopm * 3.0)]),
                server_note: None,
                wait_events: BTreeMap::new(),
                first_failure: None,
                clients: None,
                open: None,
                slo: Vec::new(),
            },
            latency: vec![(Kind::NewOrder, new_order.to_document()), (Kind::Payment, payment.to_document())],
            waits: None,
            open: None,
        }
    }

    #[test]
    fn client_counts_add_up_and_database_counts_are_the_agents_median() {
        let a = part(2, 1000.0, &[1000; 90], &[500; 100]);
        let b = part(1, 1010.0, &[50_000; 5], &[500; 100]);
        let c = part(1, 990.0, &[1000; 90], &[500; 100]);
        let merged = merge_steps(&[a.clone(), b, c]).unwrap();
        assert_eq!(merged.users, 4);
        assert_eq!(merged.transactions, 190 + 105 + 190);
        assert_eq!(merged.tpm, a.figures.tpm * 2.0 + 105.0);
        // The database counted the fleet's new orders once per agent: the median, not the sum.
        assert_eq!(merged.nopm, Some(1000.0));
        assert_eq!(merged.db_tpm, Some(3000.0));
        assert_eq!(merged.server["commits"], 3000.0);
        assert_eq!(merged.per_second, vec![3.0, 6.0, 9.0]);
        assert_eq!((merged.retries, merged.failures), (6, 3));
        // 5 of 185 New-Orders were slow: the merged p95 is fast, the p99 slow, though agent b's p50 is slow.
        let new_order = merged.kind(Kind::NewOrder).unwrap();
        assert_eq!((new_order.count, new_order.rolled_back, new_order.retries), (185, 3, 6));
        assert!(new_order.p95_ms < 1.1 && new_order.p99_ms > 49.0, "{new_order:?}");
        // Three hosts at half a core each over the same minute: 150% of a core.
        assert!((merged.client_cpu_percent - 150.0).abs() < 1e-9);
        assert!((merged.client_cpu_us_per_transaction - 90.0 * 1e6 / 485.0).abs() < 1e-6);
        assert!(merge_steps(&[]).is_err());
    }

    #[test]
    fn a_hosts_share_keeps_only_what_its_own_users_did() {
        let share = host_share(part(2, 1000.0, &[1000; 90], &[500; 100]).figures, Profile::Tpcc);
        // 90 New-Orders, one rolled back on purpose, in a minute.
        assert_eq!(share.nopm, Some(89.0));
        assert_eq!(share.db_tpm, None);
        assert!(share.server.is_empty());
    }
}
