//! `envbench fleet ... tpch`: one database server's analytic queries from many hosts. The coordinator loads the
//! tables once, before any agent starts; the power test runs on the first agent; the throughput test's virtual users
//! (query streams) are spread over every agent, released at one instant, with the refresh stream on the first. The
//! fleet's throughput test lasts from the release to the last stream's end, and its metrics are computed from every
//! stream, as one host running them all would compute them.

use crate::drive::prepare;
use crate::measured::TpchMeasured;
use crate::options::TpchArgs;
use crate::plan::{TpchRun, plan};
use crate::results::{Phase, StreamOutcome};
use crate::run::{self, QueryEvent, RunOptions, check_options};
use crate::scale::format_scale_factor;
use crate::targets::{LoadInfo, TargetSpec};
use clap::FromArgMatches;
use envbench_core::fleet::{
    AgentPlace, AgentReport, FleetAgent, FleetCoordinator, FleetStep, FleetWorkload, SHOWN_KEY, StepReport,
    split_evenly,
};
use envbench_core::workload::{Measured, RunContext, WorkloadError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::Path;

/// tpch's side of fleet runs.
pub struct TpchFleet;

impl FleetWorkload for TpchFleet {
    /// Each host's share: the queries its streams answered, per hour of its step.
    fn throughput_unit(&self) -> &'static str {
        "queries/h"
    }

    /// The coordinator holds the lock on the server's tables for the whole fleet run; its agents take none.
    fn coordinator(&self, matches: &clap::ArgMatches) -> Result<Box<dyn FleetCoordinator>, WorkloadError> {
        let mut run = fleet_plan(matches)?;
        run.lock()?;
        let users = check_options(&run.options)?;
        let mut phases = Vec::new();
        if run.options.power {
            phases.push(Phase::Power);
        }
        if run.options.throughput {
            phases.push(Phase::Throughput);
        }
        Ok(Box::new(TpchCoordinator { run, users, phases, streams: Vec::new(), throughput_seconds: None, load: None }))
    }

    fn agent(&self, matches: &clap::ArgMatches, _place: &AgentPlace) -> Result<Box<dyn FleetAgent>, WorkloadError> {
        let run = fleet_plan(matches)?;
        let users = check_options(&run.options)?;
        Ok(Box::new(TpchAgent { run, users, load: None, streams: Vec::new(), throughput_seconds: None }))
    }
}

/// The arguments of a fleet's tpch, checked as the single-host command checks them, and what a fleet cannot do.
fn fleet_plan(matches: &clap::ArgMatches) -> Result<TpchRun, WorkloadError> {
    let args = TpchArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
    if matches!(args.target, TargetSpec::DataFusion) {
        return Err(WorkloadError::usage(format!(
            "a fleet's tpch drives one database server from every host: give --target {}, a server every agent's \
             host reaches (embedded DataFusion reads one host's files)",
            envbench_sql::url_forms()
        )));
    }
    if args.cold {
        return Err(WorkloadError::usage(
            "--cold drops the page cache of the host it runs on, and a fleet's agents are not the server's host: \
             leave it out on a fleet",
        ));
    }
    plan(&args)
}

/// An agent's part of a step: its streams and how long its part took from the release.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AgentPart {
    streams: Vec<StreamOutcome>,
    seconds: f64,
}

/// What an agent is given of a step: the power test, or some of the throughput test's streams (numbered in the
/// whole test) and whether it runs the refresh stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
enum Share {
    Power,
    Throughput { streams: Vec<usize>, refresh: bool },
}

/// An assignment with its text for the per-host table.
fn shown(mut assignment: Value, text: String) -> Value {
    assignment[SHOWN_KEY] = Value::String(text);
    assignment
}

/// The fleet's side: the tables loaded once, the two tests handed out, every stream gathered.
struct TpchCoordinator {
    run: TpchRun,
    users: usize,
    /// The tests still to run.
    phases: Vec<Phase>,
    streams: Vec<StreamOutcome>,
    throughput_seconds: Option<f64>,
    load: Option<LoadInfo>,
}

impl FleetCoordinator for TpchCoordinator {
    fn data_dir(&self) -> &Path {
        &self.run.watched
    }

    fn announce(&self, agents: usize) -> String {
        let options = &self.run.options;
        let mut tests = Vec::new();
        if options.power {
            tests.push("the power test on the first agent".to_string());
        }
        if options.throughput {
            tests.push(format!(
                "the throughput test's {} virtual users spread over {agents} agents{}",
                self.users,
                if self.run.target.refresh_support().is_ok() { " (the refresh stream on the first)" } else { "" }
            ));
        }
        format!(
            "tpch SF {} on {}: {}, {} query set{} each",
            format_scale_factor(options.scale_factor),
            self.run.target.kind().as_str(),
            tests.join(", then "),
            options.sets,
            envbench_core::text::plural(options.sets)
        )
    }

    fn prepare(&mut self, context: &RunContext<'_>) -> Result<Option<String>, WorkloadError> {
        let load = prepare(self.run.target.as_mut(), &self.run.options, self.run.fresh, context)?;
        self.load = Some(load);
        Ok(Some("the agents share these tables".into()))
    }

    fn next_step(&mut self, agents: usize) -> Option<FleetStep> {
        if self.phases.is_empty() {
            return None;
        }
        let phase = self.phases.remove(0);
        let assignments = match phase {
            Phase::Power => (0..agents)
                .map(|i| if i == 0 { shown(json!(Share::Power), "power stream".into()) } else { Value::Null })
                .collect(),
            Phase::Throughput => {
                let refresh = self.run.target.refresh_support().is_ok();
                let mut next = 1;
                split_evenly(self.users as u32, agents)
                    .into_iter()
                    .enumerate()
                    .map(|(i, n)| {
                        let streams: Vec<usize> = (next..next + n as usize).collect();
                        next += n as usize;
                        let refresh = refresh && i == 0;
                        let mut text = match (streams.first(), streams.last()) {
                            (Some(first), Some(last)) if first == last => vec![format!("stream {first}")],
                            (Some(first), Some(last)) => vec![format!("streams {first}-{last}")],
                            _ => Vec::new(),
                        };
                        if refresh {
                            text.push("refresh stream".to_string());
                        }
                        let text = text.join(" + ");
                        if streams.is_empty() && !refresh {
                            Value::Null
                        } else {
                            shown(json!(Share::Throughput { streams, refresh }), text)
                        }
                    })
                    .collect()
            }
        };
        Some(FleetStep { name: phase.step().to_string(), assignments, pause: std::time::Duration::ZERO })
    }

    fn merge_step(&mut self, step: &FleetStep, reports: &[AgentReport<'_>]) -> Result<String, WorkloadError> {
        let mut seconds: f64 = 0.0;
        let mut queries = 0;
        for report in reports {
            let part: AgentPart = report.figures(step)?;
            seconds = seconds.max(part.seconds);
            queries += part.streams.iter().map(|s| s.queries.len()).sum::<usize>();
            self.streams.extend(part.streams);
        }
        if step.name == Phase::Throughput.step() {
            self.throughput_seconds = Some(seconds);
        }
        Ok(format!(
            "  {}: {queries} queries on {} agent{} in {seconds:.2} s",
            step.name,
            reports.len(),
            envbench_core::text::plural(reports.len())
        ))
    }

    fn finish(self: Box<Self>, interrupted: bool) -> Result<Box<dyn Measured>, WorkloadError> {
        let TpchCoordinator { run, users, mut streams, throughput_seconds, load, .. } = *self;
        let load = load.ok_or_else(|| WorkloadError::failure("the tables were never loaded"))?;
        streams.sort_by_key(|s| (s.phase == Phase::Throughput, s.stream));
        let outcome =
            run::outcome(run.target.as_ref(), load, &run.options, users, streams, throughput_seconds, interrupted);
        Ok(Box::new(TpchMeasured::warm(outcome)))
    }
}

/// One host's side: its streams against the server.
struct TpchAgent {
    run: TpchRun,
    /// The throughput test's virtual users in the whole fleet.
    users: usize,
    load: Option<LoadInfo>,
    streams: Vec<StreamOutcome>,
    throughput_seconds: Option<f64>,
}

impl FleetAgent for TpchAgent {
    fn data_dir(&self) -> &Path {
        &self.run.watched
    }

    /// Nothing is loaded: the coordinator loaded the tables before this agent started. The agent checks that it
    /// sees that load, so a host that reaches another server says so.
    fn prepare(&mut self, _context: &RunContext<'_>) -> Result<String, WorkloadError> {
        let sf = self.run.options.scale_factor;
        let load = self.run.target.loaded(sf)?.ok_or_else(|| {
            WorkloadError::failure(format!(
                "this host finds no complete load of SF {} on its {} target; the coordinator loads the tables before \
                 the agents start, so this host reaches another server than the coordinator did (a loopback or \
                 private address means something else on each host)",
                format_scale_factor(sf),
                self.run.target.kind().as_str()
            ))
        })?;
        let line = format!("ready: {}", load.summary);
        self.load = Some(load);
        Ok(line)
    }

    fn run_step(
        &mut self,
        step: &str,
        assignment: &Value,
        context: &RunContext<'_>,
    ) -> Result<StepReport, WorkloadError> {
        let share: Share = serde_json::from_value(assignment.clone()).map_err(|e| {
            WorkloadError::failure(format!("{step}: the coordinator sent no share of it ({assignment}: {e})"))
        })?;
        if self.load.is_none() {
            return Err(WorkloadError::failure(format!("{step}: a step before preparing")));
        }
        let progress = context.progress;
        let on_event = |event: &QueryEvent| {
            progress.update(&format!("{step} stream {}: {} {:.3} s", event.stream, event.what, event.elapsed_seconds))
        };
        let (target, options): (&dyn crate::targets::Target, &RunOptions) =
            (self.run.target.as_ref(), &self.run.options);
        let (streams, seconds) = match share {
            Share::Power => {
                let refresh = target.refresh_support().is_ok();
                let stream = run::power_test(target, options, refresh, context.interrupt, context.steps, &on_event);
                let seconds = stream.elapsed_seconds;
                (vec![stream], seconds)
            }
            Share::Throughput { streams, refresh } => {
                let (streams, seconds) = run::throughput_test(
                    target,
                    options,
                    self.users,
                    streams,
                    refresh,
                    context.interrupt,
                    context.steps,
                    &on_event,
                );
                self.throughput_seconds = Some(seconds);
                (streams, seconds)
            }
        };
        if context.interrupted() {
            return Err(WorkloadError::interrupted());
        }
        let answered: usize = streams.iter().map(|s| s.queries.iter().filter(|q| q.status.is_ok()).count()).sum();
        let part = AgentPart { streams, seconds };
        self.streams.extend(part.streams.iter().cloned());
        Ok(StepReport {
            throughput: answered as f64 * 3600.0 / seconds.max(1e-9),
            figures: serde_json::to_value(&part).expect("streams serialize"),
        })
    }

    /// This host's own run: the streams it ran (its throughput figures are its share's).
    fn finish(self: Box<Self>) -> Result<Box<dyn Measured>, WorkloadError> {
        let TpchAgent { run, load, streams, throughput_seconds, .. } = *self;
        let load = load.ok_or_else(|| WorkloadError::failure("the agent never prepared"))?;
        let users = streams.iter().filter(|s| s.phase == Phase::Throughput && !s.queries.is_empty()).count();
        let outcome = run::outcome(run.target.as_ref(), load, &run.options, users, streams, throughput_seconds, false);
        Ok(Box::new(TpchMeasured::warm(outcome)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_read_back_as_they_were_sent() {
        let share = Share::Throughput { streams: vec![2, 3], refresh: true };
        let value = json!(share);
        assert_eq!(value["phase"], "throughput");
        assert_eq!(serde_json::from_value::<Share>(value).unwrap(), share);
        assert_eq!(serde_json::from_value::<Share>(json!({"phase": "power"})).unwrap(), Share::Power);
        assert!(serde_json::from_value::<Share>(json!({"jobs": 2})).is_err());
    }
}
