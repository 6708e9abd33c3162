//! `envbench fleet ... htap`: each step's transactional users and analytic streams spread over many hosts against one
//! database server, for a server that one client host cannot load with both at once.
//!
//! As oltp's fleet: the coordinator loads the tables (the CH tables with them) once,
//! before any agent starts, holds their lock until the fleet's run ends, settles the database before each step and
//! checks consistency after the last; each agent checks that it sees that load in the namespace the coordinator names
//! with every step. A step's users and streams are each split over the agents as evenly as they go, the streams from
//! the last agent backwards so that they land first on the hosts with fewer users; both are numbered across the fleet
//! (a user's number picks its home warehouse and random stream, a stream's its order of the 22 queries), so the
//! fleet's users and streams are those of one host running them all.
//! Merging a step: the transactions as oltp's fleet merges them; the analytic queries from every host's exact
//! per-query histograms, their counts added up and the queries per hour taken over the fleet's window.

use crate::document::{HtapStep, step_test_id};
use crate::measured::HtapMeasured;
use crate::options::HtapArgs;
use crate::run::{HtapRun, plan};
use crate::streams::{self, AnalyticTally, TallyDocument};
use clap::FromArgMatches;
use envbench_core::fleet::{
    AgentPlace, AgentReport, FleetAgent, FleetCoordinator, FleetStep, FleetWorkload, SHOWN_KEY, StepReport,
    split_evenly,
};
use envbench_core::text::plural;
use envbench_core::workload::{Measured, RunContext, WorkloadError};
use envbench_oltp::{
    AgentStep, AgentSteps, Planner, Profile, UsersShare, host_share, load::LoadInfo, merge_steps, numbers,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::Path;

/// htap's side of fleet runs.
pub struct HtapFleet;

impl FleetWorkload for HtapFleet {
    /// Each host's share is the transactions its users ended (an analytics-only step has none); the streams'
    /// queries per hour are in the merged step.
    fn throughput_unit(&self) -> &'static str {
        "TPM"
    }

    fn coordinator(&self, matches: &clap::ArgMatches) -> Result<Box<dyn FleetCoordinator>, WorkloadError> {
        let run = fleet_plan(matches, Planner::Run)?;
        let pending = run.steps().into();
        Ok(Box::new(HtapCoordinator { run, pending, steps: Vec::new(), load: None }))
    }

    fn agent(&self, matches: &clap::ArgMatches, place: &AgentPlace) -> Result<Box<dyn FleetAgent>, WorkloadError> {
        let run = fleet_plan(matches, Planner::FleetAgent)?;
        Ok(Box::new(HtapAgent { name: place.name.clone(), run, steps: Vec::new(), prepared: false }))
    }
}

/// The arguments of a fleet's htap, checked as the single-host command checks them, and what a fleet cannot do.
fn fleet_plan(matches: &clap::ArgMatches, planner: Planner) -> Result<HtapRun, WorkloadError> {
    let args = HtapArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
    if args.oltp.drop {
        return Err(WorkloadError::usage(
            "--drop drops the tables of one server, from one host: run envbench htap --target ... --drop on its own, \
             not on a fleet",
        ));
    }
    plan(args, planner)
}

/// An agent's share of a step, as it reports it: its transactions' (none when it had no users) and its streams'.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AgentHtapStep {
    oltp: Option<AgentStep>,
    analytics: TallyDocument,
}

/// One step of the whole fleet from each agent's share.
fn merge(users: u32, streams: u32, parts: &[AgentHtapStep]) -> Result<HtapStep, String> {
    let first = parts.first().ok_or("no agent reported it")?;
    let transactional: Vec<AgentStep> = parts.iter().filter_map(|p| p.oltp.clone()).collect();
    let oltp = if users > 0 { Some(merge_steps(&transactional)?) } else { None };
    let mut analytics = AnalyticTally::from_document(&first.analytics)?;
    for part in &parts[1..] {
        analytics.merge(&AnalyticTally::from_document(&part.analytics)?);
    }
    if analytics.streams != streams {
        return Err(format!("the agents ran {} analytic streams of {streams}", analytics.streams));
    }
    Ok(HtapStep { users, streams, oltp, analytics: analytics.figures() })
}

/// An agent's share of a step: its users (as oltp's fleet assigns them) and its streams.
struct Assignment<'a> {
    users: UsersShare<'a>,
    streams: u32,
    first_stream: u32,
}

impl Assignment<'_> {
    fn read<'a>(step: &str, assignment: &'a Value) -> Result<Assignment<'a>, WorkloadError> {
        let number = |key: &str| assignment.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        let (Some(users), Some(streams), Some(first_stream)) =
            (UsersShare::read(assignment), number("streams"), number("first_stream"))
        else {
            return Err(WorkloadError::failure(format!("{step}: the coordinator sent no share ({assignment})")));
        };
        if users.users == 0 && streams == 0 {
            return Err(WorkloadError::failure(format!("{step}: a share without users or streams")));
        }
        Ok(Assignment { users, streams, first_stream })
    }
}

/// The fleet's side: the tables loaded once, the steps in order, the merged steps.
struct HtapCoordinator {
    run: HtapRun,
    pending: VecDeque<(u32, u32)>,
    steps: Vec<HtapStep>,
    load: Option<LoadInfo>,
}

impl FleetCoordinator for HtapCoordinator {
    fn data_dir(&self) -> &Path {
        &self.run.run.watched
    }

    fn announce(&self, agents: usize) -> String {
        format!("{}; each step's users and streams spread over {agents} agents", self.run.describe())
    }

    fn prepare(&mut self, context: &RunContext<'_>) -> Result<Option<String>, WorkloadError> {
        self.load = Some(self.run.run.load_tables(context)?);
        Ok(Some(format!("the agents share these tables on {}", self.run.run.url.shown())))
    }

    /// The database is settled before each step, as a single host's run settles it.
    fn before_step(&mut self, _step: &FleetStep, context: &RunContext<'_>) -> Result<(), WorkloadError> {
        self.run.run.settle(context)
    }

    fn next_step(&mut self, agents: usize) -> Option<FleetStep> {
        let (users, streams) = self.pending.pop_front()?;
        let user_shares = split_evenly(users, agents);
        let mut stream_shares = split_evenly(streams, agents);
        stream_shares.reverse();
        let (mut first_user, mut first_stream) = (0, 0);
        let assignments = user_shares
            .into_iter()
            .zip(stream_shares)
            .map(|(n, s)| {
                let mut shown = Vec::new();
                if n > 0 {
                    shown.push(format!("{n} user{} ({})", plural(n as usize), numbers(first_user, n)));
                }
                if s > 0 {
                    shown.push(format!("{s} stream{} ({})", plural(s as usize), numbers(first_stream, s)));
                }
                let share = UsersShare {
                    users: n,
                    first_user,
                    total: users,
                    seed: self.run.run.seed,
                    schema: self.run.run.namespace.name(),
                };
                let mut assignment = share.assignment();
                assignment["streams"] = s.into();
                assignment["first_stream"] = first_stream.into();
                assignment[SHOWN_KEY] = shown.join(", ").into();
                first_user += n;
                first_stream += s;
                if n == 0 && s == 0 { Value::Null } else { assignment }
            })
            .collect();
        Some(FleetStep { name: step_test_id(users, streams), assignments, pause: std::time::Duration::ZERO })
    }

    fn merge_step(&mut self, step: &FleetStep, reports: &[AgentReport<'_>]) -> Result<String, WorkloadError> {
        let parts =
            reports.iter().map(|report| report.figures::<AgentHtapStep>(step)).collect::<Result<Vec<_>, _>>()?;
        let (users, streams) = self
            .run
            .steps()
            .into_iter()
            .find(|&(u, s)| step_test_id(u, s) == step.name)
            .ok_or_else(|| WorkloadError::failure(format!("{}: not a step of this run", step.name)))?;
        let merged =
            merge(users, streams, &parts).map_err(|e| WorkloadError::failure(format!("{}: {e}", step.name)))?;
        let line = format!("{} on {} agents", merged.line(), parts.len());
        self.steps.push(merged);
        Ok(line)
    }

    fn finish(self: Box<Self>, interrupted: bool) -> Result<Box<dyn Measured>, WorkloadError> {
        // Checked once, by the coordinator, after every agent's users are done.
        let consistency = self.run.run.check_consistency()?;
        let load = self.load.clone().ok_or_else(|| WorkloadError::failure("the tables were never loaded"))?;
        let interrupted = interrupted || !self.pending.is_empty();
        Ok(Box::new(HtapMeasured::new(self.run.document(load, self.steps, consistency, interrupted))))
    }
}

/// One host's side: its share of each step's users and streams against the server.
struct HtapAgent {
    name: String,
    run: HtapRun,
    /// The fleet's step names and this host's share of them.
    steps: Vec<(String, HtapStep)>,
    prepared: bool,
}

impl FleetAgent for HtapAgent {
    fn data_dir(&self) -> &Path {
        &self.run.run.watched
    }

    /// Nothing is built: the coordinator loaded the tables before this agent started. The agent reaches the server
    /// here; it checks the load in the namespace the coordinator names with the first step.
    fn prepare(&mut self, _context: &RunContext<'_>) -> Result<String, WorkloadError> {
        let ready = self.run.run.reach_as_agent("envbench-htap agent")?;
        self.prepared = true;
        Ok(ready)
    }

    fn run_step(
        &mut self,
        step: &str,
        assignment: &Value,
        context: &RunContext<'_>,
    ) -> Result<StepReport, WorkloadError> {
        let share = Assignment::read(step, assignment)?;
        if !self.prepared {
            return Err(WorkloadError::failure(format!("{step}: a step before preparing")));
        }
        let users = &share.users;
        self.run.run.use_namespace(users.schema)?;
        self.run.run.seed = users.seed;
        let settings =
            self.run.step_settings(users.users, users.first_user, users.total, share.streams, share.first_stream);
        let on_tick = |text: &str| context.progress.update(text);
        let outcome = streams::run_step(&settings, step, context.steps, context.interrupt, &on_tick)?
            .ok_or_else(WorkloadError::interrupted)?;
        let report = AgentHtapStep {
            oltp: outcome.oltp.as_ref().map(AgentStep::of),
            analytics: outcome.analytics.to_document(),
        };
        let throughput = outcome.oltp.as_ref().map_or(0.0, |o| o.figures.tpm);
        self.steps.push((
            step.to_string(),
            HtapStep {
                users: share.users.users,
                streams: share.streams,
                oltp: outcome.oltp.map(|o| host_share(o.figures, Profile::Tpcc)),
                analytics: outcome.analytics.figures(),
            },
        ));
        Ok(StepReport { throughput, figures: serde_json::to_value(&report).expect("step figures serialize") })
    }

    /// This host's own run: its share of every step, under the fleet's step names; the consistency checks and what
    /// the streams cost the transactions are the fleet's run's.
    fn finish(self: Box<Self>) -> Result<Box<dyn Measured>, WorkloadError> {
        let HtapAgent { name, run, steps, .. } = *self;
        let (names, steps): (Vec<String>, Vec<HtapStep>) = steps.into_iter().unzip();
        let document = run.document(run.run.agents_load(), steps, Vec::new(), false);
        Ok(Box::new(HtapMeasured::fleet_agent(document, AgentSteps { agent: name, names })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queries::QUERIES;
    use envbench_base::latency::LatencyHistogram;
    use envbench_oltp::{KindFigures, StepFigures, transactions::Kind};
    use std::collections::BTreeMap;

    fn histogram(values_ms: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for ms in values_ms {
            h.record_ns(ms * 1_000_000);
        }
        h
    }

    fn transactions(users: u32, nopm: f64, new_orders: usize) -> AgentStep {
        let new_order = histogram(&vec![2; new_orders]);
        AgentStep {
            figures: StepFigures {
                users,
                measured_seconds: 60.0,
                nopm: Some(nopm),
                tpm: new_orders as f64,
                db_tpm: Some(nopm * 2.0),
                server_tpm: Some(nopm * 2.0),
                transactions: new_orders as u64,
                retries: 0,
                failures: 0,
                kinds: vec![KindFigures::of(Kind::NewOrder, &new_order, [0, 0, 0])],
                per_second: vec![1.0; 60],
                ramp_seconds: 0.0,
                client_cpu_percent: 10.0,
                client_cpu_us_per_transaction: 100.0,
                server: BTreeMap::new(),
                server_note: None,
                wait_events: BTreeMap::new(),
                first_failure: None,
                clients: None,
                open: None,
                slo: Vec::new(),
            },
            latency: vec![(Kind::NewOrder, new_order.to_document())],
            waits: None,
            open: None,
        }
    }

    /// A stream's runs of Q1 (ms) and one timeout of Q2, over `seconds`.
    fn analytics(streams: u32, seconds: f64, q1_ms: &[u64]) -> TallyDocument {
        let mut tally = AnalyticTally::new(streams, seconds);
        tally.latency[0] = histogram(q1_ms);
        tally.timeouts[1] = 1;
        tally.to_document()
    }

    #[test]
    fn the_fleets_queries_add_up_from_every_hosts_histograms() {
        let a = AgentHtapStep { oltp: Some(transactions(1, 100.0, 50)), analytics: analytics(0, 60.0, &[]) };
        let b = AgentHtapStep { oltp: Some(transactions(1, 104.0, 52)), analytics: analytics(1, 59.5, &[100; 19]) };
        let c = AgentHtapStep { oltp: None, analytics: analytics(1, 60.0, &[1000]) };
        let step = merge(2, 2, &[a, b, c]).unwrap();
        let oltp = step.oltp.expect("the transactions merged");
        assert_eq!((oltp.users, oltp.transactions), (2, 102));
        // The database's count is the agents' median, not their sum.
        assert_eq!(oltp.nopm, Some(102.0));
        let q1 = &step.analytics.queries[0];
        assert_eq!((q1.count, q1.timeouts), (20, 0));
        assert!(q1.median_ms < 101.0 && q1.max_ms > 999.0, "{q1:?}");
        assert_eq!(step.analytics.queries[1].timeouts, 3);
        assert_eq!((step.analytics.streams, step.analytics.completed, step.analytics.timeouts), (2, 20, 3));
        // 20 queries over the fleet's minute.
        assert!((step.analytics.queries_per_hour - 1200.0).abs() < 1e-6);
        assert_eq!(step.analytics.queries.len(), QUERIES);
        // An analytics-only step has no transactions; a share that lost a stream is refused.
        let alone = [AgentHtapStep { oltp: None, analytics: analytics(2, 60.0, &[5]) }];
        assert!(merge(0, 2, &alone).unwrap().oltp.is_none());
        assert!(merge(0, 3, &alone).unwrap_err().contains("2 analytic streams of 3"));
        let broken = AgentHtapStep { oltp: None, analytics: TallyDocument::default() };
        assert!(merge(0, 0, &[broken]).is_err());
    }
}
