//! A planned tpch run carried out ([`TpchRun`] as [`Planned`]): the data generated or loaded with progress in rows/s,
//! the power and throughput tests (or a thread sweep's power tests) with a progress line per query, and the page
//! cache dropped where `--cold` asks.

use crate::cold::{CacheDropper, ColdSteps};
use crate::error::TpchError;
use crate::measured::TpchMeasured;
use crate::plan::TpchRun;
use crate::queries::QUERY_COUNT;
use crate::render::{status_text, stream_name};
use crate::results::{Phase, ThreadPoint, thread_test_id};
use crate::run::{QueryEvent, RunOptions};
use crate::scale::format_scale_factor;
use crate::targets::Target;
use crate::targets::{LoadInfo, LoadProgress};
use envbench_core::sampler::StepObserver;
use envbench_core::text::{count, plural};
use envbench_core::workload::{Measured, Planned, RunContext, WorkloadError};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

impl Planned for TpchRun {
    fn data_dir(&self) -> &Path {
        &self.watched
    }

    fn drives_local_server(&self) -> bool {
        self.target.drives_local_server()
    }

    fn run(mut self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let progress = context.progress;
        let cache = CacheDropper::new(self.cold, self.target.cold_cache_note(), progress);
        let load = prepare(self.target.as_mut(), &self.options, self.fresh, context)?;
        let options = &self.options;
        let users = options.users.unwrap_or_else(|| crate::run::default_users(options.scale_factor));
        let tests = match (options.power, options.throughput) {
            _ if !self.sweep.is_empty() => format!(
                "the power test at {} threads",
                self.sweep.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ),
            (true, true) => format!("power test, then throughput test with {users} virtual users"),
            (true, false) => "power test".to_string(),
            _ => format!("throughput test with {users} virtual users"),
        };
        progress.line(&format!(
            "{}: {tests} x {} query set{}, {} parameters{}",
            load.details,
            options.sets,
            plural(options.sets),
            if options.validate { "validation".to_string() } else { format!("seed {} random", options.seed) },
            options
                .query_timeout
                .map(|t| format!(", query timeout {}", envbench_core::units::format_duration(t)))
                .unwrap_or_default()
        ));
        let observer = ColdSteps { inner: context.steps, cache: &cache };
        let done = AtomicUsize::new(0);
        // A thread sweep runs the power test once per count.
        let total = planned_executions(options, users, self.target.refresh_support().is_ok()) * self.sweep.len().max(1);
        let on_event = |event: &QueryEvent| {
            if event.phase == Phase::Power {
                cache.drop_now();
            }
            let finished = done.fetch_add(1, Ordering::SeqCst) + 1;
            let who = stream_name(event.phase, event.stream, users);
            let line = format!("[{finished}/{total}] {who}: {} {}", event.what, status_text(event.status, event));
            if event.status.is_ok() { progress.update(&line) } else { progress.line(&line) }
        };
        let generation = load.generation.clone();
        if !self.sweep.is_empty() {
            let sweep = self.run_sweep(load, &observer, &on_event, context)?;
            let outcome = sweep.last().map(|p| p.outcome.clone()).expect("a sweep has a point");
            return Ok(Box::new(TpchMeasured { outcome, cache: cache.state(), generation, sweep }));
        }
        let outcome = crate::run(self.target.as_ref(), load, options, context.interrupt, &observer, &on_event);
        drop(self.target);
        progress.line("");
        Ok(Box::new(TpchMeasured { outcome: outcome?, cache: cache.state(), generation, sweep: Vec::new() }))
    }
}

impl TpchRun {
    /// The power test at each thread count of the sweep, on the same data; each count's steps are named for it
    /// (`T=2 power`).
    fn run_sweep(
        &mut self,
        load: LoadInfo,
        observer: &dyn StepObserver,
        on_event: &(dyn Fn(&QueryEvent) + Sync),
        context: &RunContext<'_>,
    ) -> Result<Vec<ThreadPoint>, WorkloadError> {
        let mut points: Vec<ThreadPoint> = Vec::new();
        for &threads in &self.sweep {
            if context.interrupted() {
                break;
            }
            self.target.set_threads(threads)?;
            let steps = NamedSteps { inner: observer, prefix: thread_test_id(threads) };
            let outcome =
                crate::run(self.target.as_ref(), load.clone(), &self.options, context.interrupt, &steps, on_event)?;
            let point = ThreadPoint { threads, outcome };
            context.progress.line(&sweep_line(&point, points.first()));
            points.push(point);
        }
        if points.is_empty() {
            return Err(WorkloadError::interrupted());
        }
        Ok(points)
    }
}

/// A sweep point's line of progress: its geomean and its speedup over the first count.
fn sweep_line(point: &ThreadPoint, first: Option<&ThreadPoint>) -> String {
    let geomean = point.geomean();
    let speedup = first.and_then(|f| point.speedup_over(f));
    format!(
        "  {:>4} threads: query geomean {}{}",
        point.threads,
        geomean.map_or("-".into(), |g| format!("{g:.3} s")),
        speedup.map_or(String::new(), |s| format!(", speedup {s:.2}x"))
    )
}

/// Passes steps on to the sampler under a prefix (`T=2 power`), so each thread count of a sweep has its own.
struct NamedSteps<'a> {
    inner: &'a dyn StepObserver,
    prefix: String,
}

impl StepObserver for NamedSteps<'_> {
    fn step_started(&self, step: &str) {
        self.inner.step_started(&format!("{} {step}", self.prefix));
    }

    fn step_finished(&self, step: &str) {
        self.inner.step_finished(&format!("{} {step}", self.prefix));
    }
}

/// Generate or load the data, with progress in rows/s.
pub(crate) fn prepare(
    target: &mut dyn Target,
    options: &RunOptions,
    fresh: bool,
    context: &RunContext<'_>,
) -> Result<LoadInfo, TpchError> {
    let started = std::time::Instant::now();
    let sf = format_scale_factor(options.scale_factor);
    let on_progress = |p: LoadProgress| {
        let seconds = started.elapsed().as_secs_f64().max(1e-9);
        context.progress.update(&format!(
            "{} SF {sf}: {} ({} rows, {} rows/s)",
            p.action,
            envbench_core::text::progress_bar(p.rows_loaded, p.rows_expected, started.elapsed()),
            count(p.rows_loaded as f64),
            count(p.rows_loaded as f64 / seconds)
        ));
    };
    let load = target.prepare(options.scale_factor, fresh, context.interrupt, context.steps, &on_progress)?;
    context.progress.line(&load.summary);
    Ok(load)
}

/// How many queries and refreshes the run will report, for the progress counter.
fn planned_executions(options: &RunOptions, users: usize, refreshes: bool) -> usize {
    let per_set = usize::from(QUERY_COUNT) + 2 * usize::from(refreshes);
    let power = if options.power { per_set } else { 0 };
    let throughput = if options.throughput { users * options.sets * per_set } else { 0 };
    power + throughput
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_counter_counts_queries_and_refreshes() {
        let mut options = RunOptions::new(1.0);
        assert_eq!(planned_executions(&options, 2, false), 22 + 2 * 22);
        assert_eq!(planned_executions(&options, 2, true), 24 + 2 * 24);
        options.power = false;
        options.sets = 3;
        assert_eq!(planned_executions(&options, 2, false), 2 * 3 * 22);
    }
}
