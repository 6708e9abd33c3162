//! The RanRead method: steps of J concurrent jobs, the sweep that raises J until the response time passes the
//! target or IOPS stops growing, the knee, and the verdict against the user's targets.
//!
//! This module is pure logic over step figures; where the reads happen (a file or a database) is a [`StepRunner`].

use envbench_base::latency::{HistogramDocument, LatencyHistogram};
use envbench_core::sampler::StepObserver;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Doubling J must add at least this much IOPS, or the storage is saturated.
pub const MIN_GROWTH_ON_DOUBLING: f64 = 0.10;

/// How long each job runs in a step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepLimit {
    /// Each job does this many reads (the original tool's iterations).
    Iterations(u64),
    /// Each job reads for this long.
    Duration(#[serde(with = "millis")] Duration),
}

mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

impl StepLimit {
    /// As the original tool's export shows it: an iteration count, or the duration.
    pub fn describe(&self) -> String {
        match self {
            StepLimit::Iterations(n) => n.to_string(),
            StepLimit::Duration(d) => format!("{}s", d.as_secs_f64()),
        }
    }
}

/// Which job counts to run.
#[derive(Clone, Debug, PartialEq)]
pub enum JobsPlan {
    /// 1, 2, 4, ... until the latency target, saturation or the maximum.
    Auto { max_jobs: u32 },
    /// Exactly these, in order.
    List(Vec<u32>),
}

/// What the user requires of the storage.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Mean response time limit in milliseconds (default 10: the classic limit without a distributed cache).
    pub latency_ms: f64,
    /// IOPS the storage must sustain within the latency target, if the user has a number.
    pub iops: Option<f64>,
}

/// The figures of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    pub jobs: u32,
    /// Reads completed by all jobs.
    pub reads: u64,
    /// From the release of the barrier to the end of the last job.
    pub elapsed_s: f64,
    pub iops: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Coefficient of variation of the jobs' IOPS, in percent: how evenly the storage served them.
    pub job_cv_percent: f64,
    /// When the step started, UTC, RFC 3339 (the original export's date and time).
    pub started_at: String,
    /// Database counters over the step, in database mode.
    pub database: Option<DatabaseCounters>,
    /// Every read's latency, kept so steps of several hosts merge into exact percentiles (absent in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<HistogramDocument>,
    /// Each job's IOPS (absent in older runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub job_iops: Vec<f64>,
    /// The step's IOPS in each of [`STEP_WINDOWS`] equal windows of a timed step: the independent samples a
    /// comparison tests (empty for a step limited by reads, in database mode and in older runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub window_iops: Vec<f64>,
}

/// A timed step is cut into this many equal windows, each an IOPS sample (what the verdict's test needs: five
/// samples a side).
pub const STEP_WINDOWS: u32 = 5;

impl StepFigures {
    /// The figures of a step of `jobs` jobs from every read's latency, the step's length and each job's IOPS.
    pub fn measured(
        jobs: u32,
        histogram: &LatencyHistogram,
        elapsed_s: f64,
        job_iops: Vec<f64>,
        started_at: String,
        database: Option<DatabaseCounters>,
    ) -> StepFigures {
        let summary = histogram.summary();
        StepFigures {
            jobs,
            reads: histogram.count(),
            elapsed_s,
            iops: histogram.count() as f64 / elapsed_s.max(1e-9),
            mean_ms: summary.mean_us / 1e3,
            p50_ms: summary.p50_us / 1e3,
            p99_ms: summary.p99_us / 1e3,
            max_ms: summary.max_us / 1e3,
            job_cv_percent: cv_percent(&job_iops),
            started_at,
            database,
            latency: Some(histogram.to_document()),
            job_iops,
            window_iops: Vec::new(),
        }
    }
}

/// PostgreSQL's own view of a step: heap and index blocks read from outside shared_buffers vs found in them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseCounters {
    pub heap_blocks_read: i64,
    pub heap_blocks_hit: i64,
    pub index_blocks_read: i64,
    pub index_blocks_hit: i64,
}

impl DatabaseCounters {
    /// Share of heap block requests that went outside shared_buffers (to the OS, and maybe to storage).
    pub fn heap_read_percent(&self) -> f64 {
        let total = self.heap_blocks_read + self.heap_blocks_hit;
        if total > 0 { 100.0 * self.heap_blocks_read as f64 / total as f64 } else { 0.0 }
    }
}

/// Why the sweep stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The mean response time passed the target.
    LatencyTarget,
    /// Doubling the jobs added less than 10% IOPS.
    Saturated,
    /// The next step would exceed `--max-jobs`.
    MaxJobs,
    /// Every listed job count ran.
    ListDone,
    /// The user interrupted.
    Interrupted,
}

impl StopReason {
    pub fn describe(&self) -> &'static str {
        match self {
            StopReason::LatencyTarget => "the mean response time passed the target",
            StopReason::Saturated => "IOPS grew by less than 10% when the jobs doubled (saturated)",
            StopReason::MaxJobs => "the maximum number of jobs was reached",
            StopReason::ListDone => "every listed job count ran",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// A finished sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepOutcome {
    pub steps: Vec<StepFigures>,
    pub stop_reason: StopReason,
    pub targets: Targets,
    /// Index into `steps` of the knee: the highest IOPS within the latency target.
    pub knee: Option<usize>,
    pub verdict: Verdict,
}

impl SweepOutcome {
    /// The knee step, if any step met the latency target.
    pub fn knee_step(&self) -> Option<&StepFigures> {
        self.knee.map(|i| &self.steps[i])
    }
}

/// PASS or FAIL, with the sentence that explains it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub pass: bool,
    pub explanation: String,
}

/// The highest-IOPS step whose mean response time is within the target.
pub fn find_knee(steps: &[StepFigures], target_latency_ms: f64) -> Option<usize> {
    steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.mean_ms <= target_latency_ms && s.reads > 0)
        // Equal IOPS: the step with fewer jobs is the knee (same rate, less queueing).
        .max_by(|(_, a), (_, b)| a.iops.total_cmp(&b.iops).then(b.jobs.cmp(&a.jobs)))
        .map(|(i, _)| i)
}

/// The next job count of an automatic sweep, or why to stop.
pub fn next_auto_step(steps: &[StepFigures], targets: &Targets, max_jobs: u32) -> Result<u32, StopReason> {
    let Some(last) = steps.last() else { return Ok(1) };
    if last.mean_ms > targets.latency_ms {
        return Err(StopReason::LatencyTarget);
    }
    if let Some(previous) = steps.len().checked_sub(2).map(|i| &steps[i])
        && last.iops < previous.iops * (1.0 + MIN_GROWTH_ON_DOUBLING)
    {
        return Err(StopReason::Saturated);
    }
    if last.jobs >= max_jobs {
        return Err(StopReason::MaxJobs);
    }
    Ok((last.jobs.saturating_mul(2)).min(max_jobs))
}

/// Judge the knee against the targets.
pub fn judge(steps: &[StepFigures], knee: Option<usize>, targets: &Targets) -> Verdict {
    let Some(knee) = knee.map(|i| &steps[i]) else {
        return Verdict {
            pass: false,
            explanation: match steps.first() {
                Some(first) => format!(
                    "FAIL: even {} job{} saw a mean response time of {:.2} ms, above the {} ms target",
                    first.jobs,
                    if first.jobs == 1 { "" } else { "s" },
                    first.mean_ms,
                    targets.latency_ms
                ),
                None => "FAIL: no step completed".to_string(),
            },
        };
    };
    match targets.iops {
        Some(target_iops) if knee.iops < target_iops => Verdict {
            pass: false,
            explanation: format!(
                "FAIL: at most {:.0} IOPS within {} ms (at {} jobs, {:.2} ms mean); the target is {:.0} IOPS",
                knee.iops, targets.latency_ms, knee.jobs, knee.mean_ms, target_iops
            ),
        },
        Some(target_iops) => Verdict {
            pass: true,
            explanation: format!(
                "PASS: {:.0} IOPS at {:.2} ms mean with {} jobs, above the {:.0} IOPS target within {} ms",
                knee.iops, knee.mean_ms, knee.jobs, target_iops, targets.latency_ms
            ),
        },
        None => Verdict {
            pass: true,
            explanation: format!(
                "PASS: {:.0} IOPS at {:.2} ms mean with {} jobs, within the {} ms target (give --target-iops to \
                 judge a required rate)",
                knee.iops, knee.mean_ms, knee.jobs, targets.latency_ms
            ),
        },
    }
}

/// Runs one step: J jobs, each synchronous at queue depth 1, all released together.
pub trait StepRunner {
    /// What is read, for people and for the export's target column (a file path, or a table and database).
    fn target(&self) -> String;
    /// Run one step. Returns the figures, or `None` when interrupted before any read completed.
    fn run_step(
        &mut self,
        jobs: u32,
        limit: StepLimit,
        interrupt: &AtomicBool,
    ) -> Result<Option<StepFigures>, crate::error::RanReadError>;
}

/// Run the sweep: each step is marked for the sampler as `J=<jobs>`, `on_step` sees each step as it finishes.
pub fn sweep(
    runner: &mut dyn StepRunner,
    plan: &JobsPlan,
    targets: Targets,
    limit: StepLimit,
    steps_observer: &dyn StepObserver,
    interrupt: &AtomicBool,
    on_step: &mut dyn FnMut(&StepFigures),
) -> Result<SweepOutcome, crate::error::RanReadError> {
    let mut steps: Vec<StepFigures> = Vec::new();
    let mut listed = match plan {
        JobsPlan::List(list) => list.clone().into_iter(),
        JobsPlan::Auto { .. } => Vec::new().into_iter(),
    };
    let stop_reason = loop {
        if interrupt.load(Ordering::SeqCst) {
            break StopReason::Interrupted;
        }
        let jobs = match plan {
            JobsPlan::Auto { max_jobs } => match next_auto_step(&steps, &targets, *max_jobs) {
                Ok(jobs) => jobs,
                Err(reason) => break reason,
            },
            JobsPlan::List(_) => match listed.next() {
                Some(jobs) => jobs,
                None => break StopReason::ListDone,
            },
        };
        let step_name = crate::step_test_id(jobs);
        steps_observer.step_started(&step_name);
        let figures = runner.run_step(jobs, limit, interrupt);
        steps_observer.step_finished(&step_name);
        match figures? {
            _ if interrupt.load(Ordering::SeqCst) => break StopReason::Interrupted,
            Some(figures) => {
                on_step(&figures);
                steps.push(figures);
            }
            // A step that read nothing measured nothing: not a result.
            None => {
                return Err(crate::error::RanReadError::Failed(format!(
                    "{step_name}: the {jobs} jobs completed no read in {}; the storage did not answer",
                    match limit {
                        StepLimit::Iterations(n) => format!("{n} iterations"),
                        StepLimit::Duration(d) => envbench_core::units::format_duration(d),
                    }
                )));
            }
        }
    };
    let knee = find_knee(&steps, targets.latency_ms);
    let verdict = judge(&steps, knee, &targets);
    Ok(SweepOutcome { steps, stop_reason, targets, knee, verdict })
}

/// Coefficient of variation, in percent, of per-job rates.
pub fn cv_percent(values: &[f64]) -> f64 {
    envbench_core::stats::Summary::of(values).map(|s| s.cv * 100.0).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RanReadError;
    use envbench_core::sampler::NoSteps;

    fn step(jobs: u32, iops: f64, mean_ms: f64) -> StepFigures {
        StepFigures {
            jobs,
            reads: 1000,
            elapsed_s: 1.0,
            iops,
            mean_ms,
            p50_ms: mean_ms,
            p99_ms: mean_ms * 2.0,
            max_ms: mean_ms * 3.0,
            job_cv_percent: 1.0,
            started_at: "2026-11-22T00:00:00.000Z".into(),
            database: None,
            latency: None,
            job_iops: Vec::new(),
            window_iops: Vec::new(),
        }
    }

    const TARGETS: Targets = Targets { latency_ms: 10.0, iops: None };

    /// A storage model: IOPS and latency per job count.
    struct Model(fn(u32) -> (f64, f64), Vec<u32>);

    impl StepRunner for Model {
        fn target(&self) -> String {
            "model".into()
        }
        fn run_step(
            &mut self,
            jobs: u32,
            _: StepLimit,
            _: &AtomicBool,
        ) -> Result<Option<StepFigures>, crate::error::RanReadError> {
            self.1.push(jobs);
            let (iops, mean_ms) = (self.0)(jobs);
            Ok(Some(step(jobs, iops, mean_ms)))
        }
    }

    fn run(model: fn(u32) -> (f64, f64), plan: JobsPlan, targets: Targets) -> (SweepOutcome, Vec<u32>) {
        let mut runner = Model(model, Vec::new());
        let outcome = sweep(
            &mut runner,
            &plan,
            targets,
            StepLimit::Iterations(10),
            &NoSteps,
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        (outcome, runner.1)
    }

    #[test]
    fn sweep_stops_when_latency_passes_the_target() {
        // Latency grows linearly with jobs, IOPS keeps growing: 1 ms per job.
        let (outcome, ran) =
            run(|j| (j as f64 * 1000.0 * 0.9, j as f64 * 1.0 + 0.5), JobsPlan::Auto { max_jobs: 256 }, TARGETS);
        assert_eq!(ran, vec![1, 2, 4, 8, 16]);
        assert_eq!(outcome.stop_reason, StopReason::LatencyTarget);
        assert_eq!(outcome.knee_step().unwrap().jobs, 8);
        assert!(outcome.verdict.pass);
    }

    #[test]
    fn sweep_stops_at_saturation() {
        // IOPS flattens at 20k from 8 jobs on; latency stays low.
        let (outcome, ran) =
            run(|j| ((j as f64 * 4000.0).min(20000.0), 0.2 * j as f64), JobsPlan::Auto { max_jobs: 256 }, TARGETS);
        assert_eq!(ran, vec![1, 2, 4, 8, 16]);
        assert_eq!(outcome.stop_reason, StopReason::Saturated);
        // 8 and 16 jobs both give 20k IOPS: the knee is the one with fewer jobs.
        assert_eq!(outcome.knee_step().unwrap().jobs, 8);
    }

    #[test]
    fn sweep_never_saturated_stops_at_max_jobs() {
        let (outcome, ran) = run(|j| (j as f64 * 1000.0, 0.1), JobsPlan::Auto { max_jobs: 48 }, TARGETS);
        assert_eq!(ran, vec![1, 2, 4, 8, 16, 32, 48]);
        assert_eq!(outcome.stop_reason, StopReason::MaxJobs);
        assert_eq!(outcome.knee_step().unwrap().jobs, 48);
    }

    #[test]
    fn listed_jobs_run_in_order() {
        let (outcome, ran) = run(|j| (j as f64 * 100.0, 50.0), JobsPlan::List(vec![10, 20, 40]), TARGETS);
        assert_eq!(ran, vec![10, 20, 40]);
        assert_eq!(outcome.stop_reason, StopReason::ListDone);
        assert_eq!(outcome.knee, None);
        assert!(!outcome.verdict.pass);
        assert!(outcome.verdict.explanation.starts_with("FAIL: even 10 jobs"));
    }

    #[test]
    fn verdict_against_an_iops_target() {
        let steps = vec![step(1, 900.0, 1.1), step(2, 1700.0, 1.2), step(4, 2600.0, 7.9), step(8, 2700.0, 12.0)];
        let knee = find_knee(&steps, 8.0);
        assert_eq!(knee, Some(2));
        let pass = judge(&steps, knee, &Targets { latency_ms: 8.0, iops: Some(2500.0) });
        assert!(pass.pass, "{}", pass.explanation);
        let fail = judge(&steps, knee, &Targets { latency_ms: 8.0, iops: Some(2800.0) });
        assert!(!fail.pass);
        assert!(fail.explanation.contains("2600 IOPS within 8 ms"), "{}", fail.explanation);
    }

    #[test]
    fn interrupt_stops_before_the_next_step() {
        let mut runner = Model(|j| (j as f64, 0.1), Vec::new());
        let interrupt = AtomicBool::new(true);
        let outcome = sweep(
            &mut runner,
            &JobsPlan::Auto { max_jobs: 8 },
            TARGETS,
            StepLimit::Iterations(1),
            &NoSteps,
            &interrupt,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(outcome.stop_reason, StopReason::Interrupted);
        assert!(runner.1.is_empty());
    }

    /// A step that read nothing (and was not interrupted) measured nothing: the sweep fails instead of storing it as
    /// interrupted or as a result.
    #[test]
    fn a_step_without_reads_fails_the_sweep() {
        struct Silent;
        impl StepRunner for Silent {
            fn target(&self) -> String {
                "silent".into()
            }
            fn run_step(&mut self, _: u32, _: StepLimit, _: &AtomicBool) -> Result<Option<StepFigures>, RanReadError> {
                Ok(None)
            }
        }
        let limit = StepLimit::Duration(Duration::from_millis(100));
        let outcome = sweep(
            &mut Silent,
            &JobsPlan::List(vec![2]),
            TARGETS,
            limit,
            &NoSteps,
            &AtomicBool::new(false),
            &mut |_| {},
        );
        let error = outcome.err().unwrap().to_string();
        assert!(error.contains("J=2: the 2 jobs completed no read in 100.00 ms"), "{error}");
    }
}
