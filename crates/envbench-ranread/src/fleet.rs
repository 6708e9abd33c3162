//! `envbench fleet ... ranread`: the sweep's jobs spread over many hosts, each reading its own database file (on
//! shared storage, the array sees every host's reads at once). The coordinator raises the fleet's total jobs as the
//! single-host sweep raises one host's (to the knee, or down a list), splits each step's jobs over the agents as
//! evenly as they go, and merges the agents' steps: IOPS add up, latency percentiles come from every read's latency
//! (the agents' HDR histograms merged, not their percentiles averaged).
//!
//! With `--db` every agent reads one table: the coordinator builds it before any agent starts and holds its lock
//! until the fleet's run ends; it resolves the schema the table is in and names it in every step, and each agent
//! opens the table there with its first step.

use crate::document::{Comparable, RanreadDocument, RanreadMeasured, render};
use crate::error::RanReadError;
use crate::options::{RanreadArgs, RanreadRun, plan};
use crate::records::results;
use crate::records::{WORKLOAD, step_test_id};
use crate::run::Prepared;
use crate::{DatabaseCounters, JobsPlan, StepFigures, StopReason, SweepOutcome, find_knee, judge, next_auto_step};
use clap::FromArgMatches;
use envbench_base::latency::LatencyHistogram;
use envbench_core::fleet::{
    AgentPlace, AgentReport, FleetAgent, FleetCoordinator, FleetStep, FleetWorkload, StepReport, split_evenly,
};
use envbench_core::model::ResultRecord;
use envbench_core::sampler::SamplerSeries;
use envbench_core::workload::{Measured, RunContext, WorkloadError};
use envbench_io::AgentDirectory;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// ranread's side of fleet runs.
pub struct RanreadFleet;

impl FleetWorkload for RanreadFleet {
    fn throughput_unit(&self) -> &'static str {
        "IOPS"
    }

    fn coordinator(&self, matches: &clap::ArgMatches) -> Result<Box<dyn FleetCoordinator>, WorkloadError> {
        let mut args = RanreadArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        // The directory is on the agents' hosts: each agent checks it there.
        let dir = std::mem::replace(&mut args.dir, PathBuf::from("."));
        let mut run = plan(args)?;
        run.dir = dir;
        let listed = match &run.jobs {
            JobsPlan::List(list) => list.clone(),
            JobsPlan::Auto { .. } => Vec::new(),
        };
        Ok(Box::new(RanreadCoordinator { run, listed, steps: Vec::new(), stop_reason: None, first: None, table: None }))
    }

    fn agent(&self, matches: &clap::ArgMatches, place: &AgentPlace) -> Result<Box<dyn FleetAgent>, WorkloadError> {
        let args = RanreadArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        let mut run = plan(args)?;
        // With --db the coordinator built the table: an agent only reads it (and never rebuilds or locks it).
        run.fleet_agent = true;
        run.fresh = false;
        let directory = AgentDirectory::new(run.dir.join(&place.subdirectory));
        run.dir = directory.path().to_path_buf();
        Ok(Box::new(RanreadAgent { name: place.name.clone(), run, directory, prepared: None, steps: Vec::new() }))
    }
}

/// What an agent reports of a step: its figures (with every read's latency) and what it read.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AgentStep {
    step: StepFigures,
    parameters: Comparable,
    flags: Vec<String>,
}

/// The fleet's side: the sweep over total jobs.
struct RanreadCoordinator {
    run: RanreadRun,
    /// Job counts still to run, for a listed sweep.
    listed: Vec<u32>,
    steps: Vec<StepFigures>,
    stop_reason: Option<StopReason>,
    /// What the first agent read and how: the merged run's parameters.
    first: Option<(Comparable, Vec<String>)>,
    /// With --db, the table the agents read, kept (with its lock) until the fleet's run ends.
    table: Option<Prepared>,
}

/// The key of a step's assignment that names the schema of the table (with --db).
const SCHEMA_KEY: &str = "schema";

impl FleetCoordinator for RanreadCoordinator {
    fn data_dir(&self) -> &Path {
        &self.run.dir
    }

    fn announce(&self, agents: usize) -> String {
        format!(
            "ranread on {agents} agents: {}, the jobs of each step spread over the agents, {}",
            match &self.run.jobs {
                JobsPlan::Auto { max_jobs } => format!("total jobs 1, 2, 4, ... up to {max_jobs}"),
                JobsPlan::List(list) =>
                    format!("total jobs {}", list.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
            },
            match &self.run.db {
                Some(url) => format!("all reading one table in {}", envbench_core::model::redact_secrets(url)),
                None => format!("each reading its own file in {}", self.run.dir.display()),
            }
        )
    }

    /// With --db, the table every agent reads is built here, once, before any agent starts.
    fn prepare(&mut self, context: &RunContext<'_>) -> Result<Option<String>, WorkloadError> {
        if self.run.db.is_none() {
            return Ok(None);
        }
        let prepared = self.run.prepare(context)?;
        let line = format!("the agents share this table: {}", prepared.runner.target());
        self.table = Some(prepared);
        Ok(Some(line))
    }

    fn next_step(&mut self, agents: usize) -> Option<FleetStep> {
        if self.stop_reason.is_some() {
            return None;
        }
        let jobs = match &self.run.jobs {
            JobsPlan::Auto { max_jobs } => next_auto_step(&self.steps, &self.run.targets, *max_jobs),
            JobsPlan::List(_) if self.listed.is_empty() => Err(StopReason::ListDone),
            JobsPlan::List(_) => Ok(self.listed.remove(0)),
        };
        let jobs = match jobs {
            Ok(jobs) => jobs,
            Err(reason) => {
                self.stop_reason = Some(reason);
                return None;
            }
        };
        let schema = self.table.as_ref().and_then(|t| t.namespace.as_ref()).map(|n| n.name().to_string());
        let assignments = split_evenly(jobs, agents)
            .into_iter()
            .map(|n| match (n, &schema) {
                (0, _) => Value::Null,
                (n, Some(schema)) => json!({ "jobs": n, SCHEMA_KEY: schema }),
                (n, None) => json!({ "jobs": n }),
            })
            .collect();
        Some(FleetStep { name: step_test_id(jobs), assignments, pause: std::time::Duration::ZERO })
    }

    fn merge_step(&mut self, step: &FleetStep, reports: &[AgentReport<'_>]) -> Result<String, WorkloadError> {
        let mut parts = Vec::new();
        for report in reports {
            let part: AgentStep = report.figures(step)?;
            if self.first.is_none() {
                self.first = Some((part.parameters.clone(), part.flags.clone()));
            }
            parts.push(part.step);
        }
        let merged = merge_steps(&parts).map_err(|e| WorkloadError::failure(format!("{}: {e}", step.name)))?;
        let line = format!(
            "  {:>4} jobs on {} agent{}: {:>9.0} IOPS, {:.3} ms mean, {:.3} ms p99",
            merged.jobs,
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            merged.iops,
            merged.mean_ms,
            merged.p99_ms
        );
        self.steps.push(merged);
        Ok(line)
    }

    fn finish(self: Box<Self>, interrupted: bool) -> Result<Box<dyn Measured>, WorkloadError> {
        let stop_reason =
            if interrupted { StopReason::Interrupted } else { self.stop_reason.unwrap_or(StopReason::ListDone) };
        let knee = find_knee(&self.steps, self.run.targets.latency_ms);
        let verdict = judge(&self.steps, knee, &self.run.targets);
        let outcome = SweepOutcome { steps: self.steps, stop_reason, targets: self.run.targets, knee, verdict };
        let (parameters, flags) = self.first.ok_or_else(|| WorkloadError::failure("no agent reported a step"))?;
        let target = match &self.run.db {
            Some(url) => format!("one table in {} read from every agent", envbench_core::model::redact_secrets(url)),
            None => format!("each agent's database file in {}", self.run.dir.display()),
        };
        Ok(Box::new(RanreadMeasured { document: RanreadDocument { target, parameters, outcome }, flags }))
    }
}

/// One step of the whole fleet from each agent's: jobs, reads and IOPS add up (each agent's IOPS over its own
/// step, which all began at the release instant), latency from every read of every agent, job spread over every job.
pub fn merge_steps(parts: &[StepFigures]) -> Result<StepFigures, String> {
    let first = parts.first().ok_or("no agent reported it")?;
    let mut histogram = LatencyHistogram::new();
    for part in parts {
        let document = part.latency.as_ref().ok_or("an agent reported no latency histogram")?;
        histogram.merge(&LatencyHistogram::from_document(document));
    }
    let elapsed_s = parts.iter().map(|p| p.elapsed_s).fold(0.0, f64::max);
    let job_iops = parts.iter().flat_map(|p| p.job_iops.iter().copied()).collect();
    let started_at = parts.iter().map(|p| p.started_at.clone()).min().unwrap_or_else(|| first.started_at.clone());
    let mut merged = StepFigures::measured(
        parts.iter().map(|p| p.jobs).sum(),
        &histogram,
        elapsed_s,
        job_iops,
        started_at,
        database_counters(parts),
    );
    merged.iops = parts.iter().map(|p| p.iops).sum();
    // Each window's IOPS add up too: every agent cut its step from the same release instant into equal windows.
    let windows = parts.iter().map(|p| p.window_iops.len()).min().unwrap_or(0);
    merged.window_iops = (0..windows).map(|w| parts.iter().map(|p| p.window_iops[w]).sum()).collect();
    Ok(merged)
}

/// The table's block counters over a step (with --db): every agent reads them for the whole table around the same
/// window, so the fleet takes each counter's median over the agents rather than adding them up.
fn database_counters(parts: &[StepFigures]) -> Option<DatabaseCounters> {
    let counters: Vec<&DatabaseCounters> = parts.iter().filter_map(|p| p.database.as_ref()).collect();
    if counters.is_empty() {
        return None;
    }
    let median = |field: fn(&DatabaseCounters) -> i64| {
        let mut values: Vec<i64> = counters.iter().map(|c| field(c)).collect();
        values.sort_unstable();
        values[values.len() / 2]
    };
    Some(DatabaseCounters {
        heap_blocks_read: median(|c| c.heap_blocks_read),
        heap_blocks_hit: median(|c| c.heap_blocks_hit),
        index_blocks_read: median(|c| c.index_blocks_read),
        index_blocks_hit: median(|c| c.index_blocks_hit),
    })
}

/// One host's side: its own database file in its own subdirectory, its share of each step.
struct RanreadAgent {
    name: String,
    run: RanreadRun,
    directory: AgentDirectory,
    prepared: Option<Prepared>,
    /// The fleet's step names and this agent's figures in them.
    steps: Vec<(String, StepFigures)>,
}

impl RanreadAgent {
    /// Remove the database file and the subdirectory this agent created (never anything else: a directory that
    /// holds other files stays).
    fn clean_up(&mut self) -> Result<(), String> {
        if let Some(prepared) = self.prepared.take() {
            let Prepared { runner, database_file, .. } = prepared;
            drop(runner);
            if let Some(path) = database_file {
                std::fs::remove_file(&path).map_err(|e| format!("{}: cannot remove it ({e})", path.display()))?;
            }
        }
        // The lock file beside the database file, in the agent's own directory: no other run ever takes it.
        if self.run.db.is_none() {
            let lock = self.directory.path().join(crate::file::LOCK_FILE_NAME);
            match std::fs::remove_file(&lock) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!("{}: cannot remove it ({e})", lock.display()));
                }
                _ => {}
            }
        }
        self.directory.remove()
    }
}

impl Drop for RanreadAgent {
    fn drop(&mut self) {
        let _ = self.clean_up();
    }
}

impl FleetAgent for RanreadAgent {
    fn data_dir(&self) -> &Path {
        self.directory.parent()
    }

    /// In file mode, the agent's own database file; with --db, only the server is reached here: the agent opens the
    /// table in the schema its coordinator names with the first step.
    fn prepare(&mut self, context: &RunContext<'_>) -> Result<String, WorkloadError> {
        if let Some(url) = &self.run.db {
            let url = envbench_sql::DatabaseUrl::parse(url).map_err(RanReadError::from)?;
            url.connect("envbench-ranread agent").map_err(RanReadError::from)?;
            return Ok(format!("ready: {}", url.shown()));
        }
        self.directory.create()?;
        let prepared = self.run.prepare(context)?;
        let line = format!("ready: {}", prepared.runner.target());
        self.prepared = Some(prepared);
        Ok(line)
    }

    fn run_step(
        &mut self,
        step: &str,
        assignment: &Value,
        context: &RunContext<'_>,
    ) -> Result<StepReport, WorkloadError> {
        let jobs = assignment
            .get("jobs")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                WorkloadError::failure(format!("{step}: the coordinator sent no job count ({assignment})"))
            })?;
        if self.run.db.is_some() && self.prepared.is_none() {
            let schema = assignment.get(SCHEMA_KEY).and_then(Value::as_str).ok_or_else(|| {
                WorkloadError::failure(format!("{step}: the coordinator named no schema ({assignment})"))
            })?;
            self.run.namespace = Some(schema.to_string());
            self.prepared = Some(self.run.prepare(context)?);
        }
        let prepared = self.prepared.as_mut().ok_or_else(|| WorkloadError::failure("a step before preparing"))?;
        let figures = prepared
            .runner
            .run_step(jobs, self.run.limit, context.interrupt)?
            .ok_or_else(WorkloadError::interrupted)?;
        let report =
            AgentStep { step: figures.clone(), parameters: prepared.parameters.clone(), flags: prepared.flags.clone() };
        self.steps.push((step.to_string(), figures.clone()));
        Ok(StepReport {
            throughput: figures.iops,
            figures: serde_json::to_value(&report).expect("step figures serialize"),
        })
    }

    fn finish(mut self: Box<Self>) -> Result<Box<dyn Measured>, WorkloadError> {
        let parameters = self.prepared.as_ref().map(|p| p.parameters.clone());
        let flags = self.prepared.as_ref().map(|p| p.flags.clone()).unwrap_or_default();
        let target = self.prepared.as_ref().map(|p| p.runner.target()).unwrap_or_default();
        self.clean_up().map_err(WorkloadError::failure)?;
        let parameters = parameters.ok_or_else(|| WorkloadError::failure("the agent never prepared"))?;
        let steps = std::mem::take(&mut self.steps);
        Ok(Box::new(AgentMeasured {
            name: self.name.clone(),
            target,
            parameters,
            flags,
            steps,
            targets: self.run.targets,
        }))
    }
}

/// An agent's own run: its share of each of the fleet's steps, named by the fleet's step.
struct AgentMeasured {
    name: String,
    target: String,
    parameters: Comparable,
    flags: Vec<String>,
    steps: Vec<(String, StepFigures)>,
    targets: crate::Targets,
}

impl AgentMeasured {
    /// This agent's share of every step as a sweep.
    fn outcome(&self) -> SweepOutcome {
        self.outcome_of(self.steps.iter().map(|(_, f)| f.clone()).collect())
    }

    /// Some of this agent's steps as a sweep without a knee (the fleet's run judges the sweep).
    fn outcome_of(&self, steps: Vec<StepFigures>) -> SweepOutcome {
        SweepOutcome {
            verdict: crate::Verdict {
                pass: true,
                explanation: format!("{}'s share of a fleet's steps: the fleet's run judges the sweep", self.name),
            },
            steps,
            stop_reason: StopReason::ListDone,
            targets: self.targets,
            knee: None,
        }
    }
}

impl Measured for AgentMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = Vec::new();
        for (name, figures) in &self.steps {
            let outcome = self.outcome_of(vec![figures.clone()]);
            let parameters = json!({ "fleet_agent": self.name, "fleet_step": name });
            let mut base = json!(self.parameters);
            if let (Some(map), Value::Object(add)) = (base.as_object_mut(), parameters) {
                map.extend(add);
            }
            for mut record in results(&outcome, &base) {
                record.test_id = name.clone();
                record.flags.extend(self.flags.iter().cloned());
                records.push(record);
            }
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        let document = RanreadDocument {
            target: self.target.clone(),
            parameters: self.parameters.clone(),
            outcome: self.outcome(),
        };
        Some((WORKLOAD, json!(document)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.outcome(), series, &self.target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(jobs: u32, latencies_us: &[u64], elapsed_s: f64) -> StepFigures {
        let mut histogram = LatencyHistogram::new();
        for us in latencies_us {
            histogram.record_ns(us * 1000);
        }
        let rates = vec![latencies_us.len() as f64 / elapsed_s / f64::from(jobs); jobs as usize];
        StepFigures::measured(jobs, &histogram, elapsed_s, rates, "2026-11-23T10:00:00.000Z".into(), None)
    }

    #[test]
    fn merged_steps_add_throughput_and_take_percentiles_of_every_read() {
        let fast: Vec<u64> = vec![100; 900];
        let slow: Vec<u64> = vec![10_000; 100];
        let mut a = part(2, &fast, 1.0);
        let mut b = part(1, &slow, 1.0);
        a.window_iops = vec![900.0; 5];
        b.window_iops = vec![100.0, 100.0, 100.0, 100.0];
        let merged = merge_steps(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(merged.window_iops, vec![1000.0; 4], "each window adds up, over the windows every agent has");
        assert_eq!(merged.jobs, 3);
        assert_eq!(merged.reads, 1000);
        assert_eq!(merged.iops, a.iops + b.iops);
        // 10% of all reads are slow: the merged p99 is a slow read, though one host's p99 is fast.
        assert!(merged.p99_ms > 9.0, "{merged:?}");
        assert!(a.p99_ms < 0.2);
        assert!((merged.mean_ms - (900.0 * 0.1 + 100.0 * 10.0) / 1000.0).abs() < 1e-9, "{merged:?}");
        assert_eq!(merged.job_iops.len(), 3);
        assert!(merge_steps(&[]).is_err());
    }
}
