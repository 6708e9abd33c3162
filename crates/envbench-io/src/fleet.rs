//! `envbench fleet ... disk`: the storage suite on many hosts at once, each on its own test file (on shared storage,
//! the array serves every host's I/O together). Each test is one step: every agent runs its warm-up and measured
//! runs from the same release instant, so run N of every host overlaps run N of the others. The merged test adds up
//! each run's MB/s and IOPS over the hosts and takes latency from every I/O of every host (merged HDR histograms).

use crate::engine::select_engine;
use crate::measured::DiskMeasured;
use crate::options::{DiskArgs, DiskProfile, plan};
use crate::runner::{RunSample, ThreadSample};
use crate::suite::{NoProgress, SuiteOptions, SuiteOutcome, TestOutcome, TestRunner, validate};
use crate::testfile::{FillSummary, TestFile};
use crate::{CacheHonesty, EngineKind, Profile, TestSpec, cache_honesty};
use clap::FromArgMatches;
use envbench_base::latency::{HistogramDocument, LatencyHistogram};
use envbench_base::place::file_system_name;
use envbench_core::fleet::{
    AgentPlace, AgentReport, FleetAgent, FleetCoordinator, FleetStep, FleetWorkload, SHOWN_KEY, StepReport,
};
use envbench_core::workload::{Measured, RunContext, WorkloadError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// disk's side of fleet runs.
pub struct DiskFleet;

/// An agent's own subdirectory of a fleet workload's directory: the agent creates it (it must not exist yet) and
/// removes it at the end, once what it made inside is gone (a directory that still holds anything stays).
pub struct AgentDirectory {
    path: PathBuf,
    created: bool,
}

impl AgentDirectory {
    pub fn new(path: PathBuf) -> AgentDirectory {
        AgentDirectory { path, created: false }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The workload's directory it is in: what the agent's fingerprint describes.
    pub fn parent(&self) -> &Path {
        self.path.parent().unwrap_or(&self.path)
    }

    pub fn create(&mut self) -> Result<(), WorkloadError> {
        std::fs::create_dir(&self.path).map_err(|e| {
            WorkloadError::failure(format!(
                "{}: cannot create the agent's directory ({e}); it must not exist yet",
                self.path.display()
            ))
        })?;
        self.created = true;
        Ok(())
    }

    /// Remove the directory if this agent created it (once).
    pub fn remove(&mut self) -> Result<(), String> {
        if std::mem::take(&mut self.created) {
            std::fs::remove_dir(&self.path).map_err(|e| format!("{}: cannot remove it ({e})", self.path.display()))?;
        }
        Ok(())
    }
}

/// The suite's arguments for a fleet: the storage suite's tests (not the commit, sustained or fio modes).
fn fleet_plan(
    matches: &clap::ArgMatches,
    dir: Option<PathBuf>,
) -> Result<(SuiteOptions, Vec<TestSpec>), WorkloadError> {
    let mut args = DiskArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
    let refused = [
        ("--sustained", args.sustained.is_some()),
        ("--precondition", args.precondition),
        ("--cross-check", args.cross_check.is_some()),
        ("--profile commit", args.profile == DiskProfile::Commit && args.tests.is_empty()),
        ("--profile db", args.profile == DiskProfile::Suite(Profile::Db) && args.tests.is_empty()),
    ];
    if let Some((option, _)) = refused.iter().find(|(_, given)| *given) {
        return Err(WorkloadError::usage(format!(
            "{option} does not run on a fleet: a fleet's disk runs the storage suite's tests (a profile such as cdm, \
             or --test) on every host at once"
        )));
    }
    if let Some(dir) = dir {
        args.dir = dir;
    }
    plan(&args)
}

impl FleetWorkload for DiskFleet {
    fn throughput_unit(&self) -> &'static str {
        "MB/s"
    }

    fn coordinator(&self, matches: &clap::ArgMatches) -> Result<Box<dyn FleetCoordinator>, WorkloadError> {
        let (options, tests) = fleet_plan(matches, None)?;
        validate(&options, &tests)?;
        Ok(Box::new(DiskCoordinator { options, tests, next: 0, merged: Vec::new(), setup: None }))
    }

    fn agent(&self, matches: &clap::ArgMatches, place: &AgentPlace) -> Result<Box<dyn FleetAgent>, WorkloadError> {
        let (mut options, tests) = fleet_plan(matches, None)?;
        validate(&options, &tests)?;
        let directory = AgentDirectory::new(options.directory.join(&place.subdirectory));
        options.directory = directory.path().to_path_buf();
        Ok(Box::new(DiskAgent { options, tests, directory, file: None, setup: None, done: Vec::new() }))
    }
}

/// How an agent's test file was made, sent with each report (the merged suite's from the first agent).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AgentSetup {
    engine: EngineKind,
    engine_fallback_reason: Option<String>,
    file_system: String,
    cache: CacheHonesty,
    fill: Option<FillSummary>,
}

/// An agent's report of one test: its outcome and each run's latency histogram.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AgentTest {
    outcome: TestOutcome,
    run_latency: Vec<HistogramDocument>,
    setup: AgentSetup,
}

/// The fleet's side: the tests in order, merged as they come.
struct DiskCoordinator {
    options: SuiteOptions,
    tests: Vec<TestSpec>,
    next: usize,
    merged: Vec<TestOutcome>,
    setup: Option<AgentSetup>,
}

impl FleetCoordinator for DiskCoordinator {
    fn data_dir(&self) -> &Path {
        &self.options.directory
    }

    fn announce(&self, agents: usize) -> String {
        format!(
            "disk on {agents} agents: {} test{} at once on every agent's own {} file, {} run{} of {} each",
            self.tests.len(),
            if self.tests.len() == 1 { "" } else { "s" },
            envbench_core::ByteSize(self.options.file_size_bytes),
            self.options.runs,
            if self.options.runs == 1 { "" } else { "s" },
            envbench_core::units::format_duration(self.options.duration)
        )
    }

    fn next_step(&mut self, agents: usize) -> Option<FleetStep> {
        let test = self.tests.get(self.next)?;
        let step = FleetStep {
            name: test.id(),
            assignments: vec![json!({ "test": self.next, SHOWN_KEY: "whole test" }); agents],
            pause: if self.next == 0 { Duration::ZERO } else { self.options.interval },
        };
        self.next += 1;
        Some(step)
    }

    fn merge_step(&mut self, step: &FleetStep, reports: &[AgentReport<'_>]) -> Result<String, WorkloadError> {
        let mut parts = Vec::new();
        for report in reports {
            let part: AgentTest = report.figures(step)?;
            if self.setup.is_none() {
                self.setup = Some(part.setup.clone());
            }
            parts.push(part);
        }
        let merged = merge_tests(&parts).map_err(|e| WorkloadError::failure(format!("{}: {e}", step.name)))?;
        let line = format!(
            "  {} on {} agent{}: {:.1} MB/s, {:.0} IOPS, p99 {:.0} us",
            merged.display_name,
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            merged.mean_mb_per_s,
            merged.mean_iops,
            merged.latency.p99_us
        );
        self.merged.push(merged);
        Ok(line)
    }

    fn finish(self: Box<Self>, interrupted: bool) -> Result<Box<dyn Measured>, WorkloadError> {
        let setup = self.setup.ok_or_else(|| WorkloadError::failure("no agent reported a test"))?;
        Ok(Box::new(DiskMeasured { outcome: suite_outcome(&self.options, setup, self.merged, interrupted) }))
    }
}

/// A suite's outcome from its options, how its test file was made, and its tests.
fn suite_outcome(
    options: &SuiteOptions,
    setup: AgentSetup,
    tests: Vec<TestOutcome>,
    interrupted: bool,
) -> SuiteOutcome {
    SuiteOutcome {
        engine: setup.engine,
        engine_fallback_reason: setup.engine_fallback_reason,
        directory: options.directory.clone(),
        file_system: setup.file_system,
        file_size_bytes: options.file_size_bytes,
        direct: options.direct,
        cache: setup.cache,
        runs: options.runs,
        duration_ms: options.duration.as_millis() as u64,
        interval_ms: options.interval.as_millis() as u64,
        warmup: options.warmup,
        warmup_duration_ms: options.warmup_duration.as_millis() as u64,
        fill: setup.fill,
        tests,
        interrupted,
    }
}

/// One test of the whole fleet from each agent's: run N adds up every agent's run N (all began at the same release
/// instant), with latency from every I/O of every agent.
fn merge_tests(parts: &[AgentTest]) -> Result<TestOutcome, String> {
    let first = parts.first().ok_or("no agent reported it")?;
    let runs = first.outcome.runs.len();
    if parts.iter().any(|p| p.outcome.runs.len() != runs || p.run_latency.len() != runs) {
        return Err("the agents reported different numbers of runs".into());
    }
    let mut all = LatencyHistogram::new();
    let mut samples = Vec::with_capacity(runs);
    for run in 0..runs {
        let mut histogram = LatencyHistogram::new();
        for part in parts {
            histogram.merge(&LatencyHistogram::from_document(&part.run_latency[run]));
        }
        all.merge(&histogram);
        samples.push(merge_runs(parts.iter().map(|p| &p.outcome.runs[run]), &histogram));
    }
    let mean = |values: Vec<f64>| values.iter().sum::<f64>() / values.len().max(1) as f64;
    let best = |values: Vec<f64>| values.into_iter().fold(0.0, f64::max);
    let outcome = &first.outcome;
    Ok(TestOutcome {
        test_id: outcome.test_id.clone(),
        display_name: outcome.display_name.clone(),
        spec: outcome.spec.clone(),
        engine_detail: outcome.engine_detail.clone(),
        latency: all.summary(),
        mean_mb_per_s: mean(samples.iter().map(|s| s.mb_per_s).collect()),
        best_mb_per_s: best(samples.iter().map(|s| s.mb_per_s).collect()),
        mean_iops: mean(samples.iter().map(|s| s.iops).collect()),
        best_iops: best(samples.iter().map(|s| s.iops).collect()),
        runs: samples,
        cross_check: None,
        histogram: all,
        run_histograms: Vec::new(),
    })
}

/// The same run of every agent as one: operations, bytes and rates add up; CPU per I/O weighted by operations.
fn merge_runs<'a>(runs: impl Iterator<Item = &'a RunSample>, latency: &LatencyHistogram) -> RunSample {
    let runs: Vec<&RunSample> = runs.collect();
    let ops: u64 = runs.iter().map(|r| r.ops).sum();
    let cpu: f64 = runs.iter().map(|r| r.cpu_per_io_us * r.ops as f64).sum();
    RunSample {
        elapsed_ms: runs.iter().map(|r| r.elapsed_ms).fold(0.0, f64::max),
        ops,
        bytes: runs.iter().map(|r| r.bytes).sum(),
        iops: runs.iter().map(|r| r.iops).sum(),
        mb_per_s: runs.iter().map(|r| r.mb_per_s).sum(),
        latency: latency.summary(),
        cpu_per_io_us: if ops > 0 { cpu / ops as f64 } else { 0.0 },
        threads: runs.iter().flat_map(|r| r.threads.iter().cloned()).collect::<Vec<ThreadSample>>(),
    }
}

/// One host's side: its own test file in its own subdirectory, each test when released.
struct DiskAgent {
    options: SuiteOptions,
    tests: Vec<TestSpec>,
    directory: AgentDirectory,
    file: Option<TestFile>,
    setup: Option<AgentSetup>,
    /// The tests this agent ran, for its own run.
    done: Vec<TestOutcome>,
}

impl DiskAgent {
    /// Remove the test file and the subdirectory this agent created (a directory holding anything else stays).
    fn clean_up(&mut self) -> Result<(), String> {
        if let Some(file) = self.file.take() {
            file.remove().map_err(|e| e.to_string())?;
        }
        self.directory.remove()
    }
}

impl Drop for DiskAgent {
    fn drop(&mut self) {
        let _ = self.clean_up();
    }
}

impl FleetAgent for DiskAgent {
    fn data_dir(&self) -> &Path {
        self.directory.parent()
    }

    fn prepare(&mut self, context: &RunContext<'_>) -> Result<String, WorkloadError> {
        self.directory.create()?;
        crate::suite::check_suite(&self.options, &self.tests)?;
        let selection = select_engine(self.options.engine)?;
        let cache = cache_honesty(self.options.direct, self.options.file_size_bytes);
        let file = TestFile::create(&self.options.directory, self.options.file_size_bytes, self.options.direct)?;
        context.steps.step_started("fill");
        let filled = file.fill(selection.kind, self.options.direct, context.interrupt, &mut |_, _| {});
        context.steps.step_finished("fill");
        let fill = Some(filled?);
        let line = format!(
            "test file {} ({}), engine {}",
            file.path().display(),
            envbench_core::ByteSize(file.size_bytes()),
            selection.kind.as_str()
        );
        self.setup = Some(AgentSetup {
            engine: selection.kind,
            engine_fallback_reason: selection.fallback_reason,
            file_system: file_system_name(&self.options.directory),
            cache,
            fill,
        });
        self.file = Some(file);
        Ok(line)
    }

    fn run_step(
        &mut self,
        step: &str,
        assignment: &Value,
        context: &RunContext<'_>,
    ) -> Result<StepReport, WorkloadError> {
        let index = assignment
            .get("test")
            .and_then(Value::as_u64)
            .map(|i| i as usize)
            .filter(|i| *i < self.tests.len())
            .ok_or_else(|| WorkloadError::failure(format!("{step}: the coordinator sent no test ({assignment})")))?;
        let (Some(file), Some(setup)) = (&self.file, &self.setup) else {
            return Err(WorkloadError::failure("a test before preparing"));
        };
        let runner = TestRunner {
            options: &self.options,
            file,
            engine: setup.engine,
            cache: setup.cache,
            progress: &NoProgress,
            cancel: context.interrupt,
        };
        let mut outcome = runner.run_test(index, &self.tests[index])?.ok_or_else(WorkloadError::interrupted)?;
        let run_latency =
            std::mem::take(&mut outcome.run_histograms).iter().map(LatencyHistogram::to_document).collect();
        let report = AgentTest { outcome, run_latency, setup: setup.clone() };
        self.done.push(report.outcome.clone());
        Ok(StepReport {
            throughput: report.outcome.mean_mb_per_s,
            figures: serde_json::to_value(&report).expect("a test outcome serializes"),
        })
    }

    fn finish(mut self: Box<Self>) -> Result<Box<dyn Measured>, WorkloadError> {
        self.clean_up().map_err(WorkloadError::failure)?;
        let setup = self.setup.clone().ok_or_else(|| WorkloadError::failure("the agent never prepared"))?;
        // The agent's own run: a suite run of its own file, its tests as they ran beside the other hosts'.
        let tests = std::mem::take(&mut self.done);
        Ok(Box::new(DiskMeasured { outcome: suite_outcome(&self.options, setup, tests, false) }))
    }
}
