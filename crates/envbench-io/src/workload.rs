//! `envbench disk` as the driver runs it: its registration, how it takes part in suites and reads back, and its runs
//! (the storage suite, the db profile). Its command line and plan are [`crate::options`]'s; what a run measured and
//! its table are [`crate::measured`]'s.

use crate::measured::DiskMeasured;
use crate::options::{CrossCheckTool, DiskArgs, DiskProfile};
use crate::options::{plan, plan_commit, plan_sustained};
use crate::spec::SpecError;
use crate::suite::check_suite;
use crate::{BenchError, Profile, ProgressEvent, SuiteOptions, TestSpec, WORKLOAD, WORKLOAD_VERSION, run_suite};
use clap::{Args, FromArgMatches};
use envbench_core::ByteSize;
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{micros, plural};
use envbench_core::units::format_duration;
use envbench_core::workload::{
    Envelope, Measured, Plan, Planned, Progress, ReadBack, RunContext, ScalingCurve, Timeline, Workload, WorkloadError,
};
use serde_json::{Value, json};
use std::path::Path;

/// The tests whose figures head the scorecard (both in the default profile).
pub const HEADLINE_RANDOM_TEST: &str = "RND4K Q32T1 read";
pub const HEADLINE_SEQUENTIAL_TEST: &str = "SEQ1M Q8T1 read";
/// The metrics the scorecard reads.
pub const IOPS_METRIC: &str = "iops";
pub const THROUGHPUT_METRIC: &str = "throughput";

/// The storage suite.
pub struct DiskWorkload;

/// The registration of `disk`.
pub static DISK: DiskWorkload = DiskWorkload;

impl From<BenchError> for WorkloadError {
    fn from(error: BenchError) -> WorkloadError {
        match error {
            BenchError::Interrupted => WorkloadError::interrupted(),
            error if error.is_usage() => WorkloadError::usage(error.to_string()),
            error => WorkloadError::failure(error.to_string()),
        }
    }
}

impl From<SpecError> for WorkloadError {
    fn from(error: SpecError) -> WorkloadError {
        WorkloadError::usage(error.to_string())
    }
}

impl Workload for DiskWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        DiskArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Storage suite: CrystalDiskMark/Anvil-style profiles and a database-shaped one, with O_DIRECT and \
             io_uring.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = DiskArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        if args.sustained.is_some() {
            return Ok(Plan::Run(Box::new(plan_sustained(&args)?)));
        }
        if args.precondition {
            return Err(WorkloadError::usage("--precondition applies to --sustained runs: add --sustained [DURATION]"));
        }
        if args.profile == DiskProfile::Commit && args.tests.is_empty() {
            return Ok(Plan::Run(Box::new(plan_commit(&args, args.cross_check)?)));
        }
        let (options, tests) = plan(&args)?;
        check_suite(&options, &tests)?;
        let disk = DiskRun { options, tests };
        if args.profile == DiskProfile::Suite(Profile::Db) && args.tests.is_empty() {
            // The database profile ends with what a commit costs: the commit profile's tests.
            // fio cross-checks the suite's tests; pg_test_fsync the commit tests.
            let pg_test_fsync = args.cross_check.filter(|tool| *tool != CrossCheckTool::Fio);
            let commit = plan_commit(&args, pg_test_fsync)?;
            return Ok(Plan::Run(Box::new(DbRun { disk, commit })));
        }
        Ok(Plan::Run(Box::new(disk)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::DiskFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for DiskWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
quick = true
"#,
            ),
            "standard" => Some(
                r#"
profile = "cdm"
"#,
            ),
            "smoke" => Some(
                r#"
size = "16m"
runs = 1
duration = "100ms"
interval = "0s"
no_warmup = true
test = ["rnd:4k:q8:t1:read", "seq:128k:q2:t1:write"]
"#,
            ),
            _ => None,
        }
    }
}

impl ReadBack for DiskWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: IOPS_METRIC,
            tests: "rnd:4k",
            per: envbench_core::workload::Per::Rate(1000.0),
            words: "1,000 IOPS (4 KiB random)",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("storage")
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::STORAGE_NOISE_MARGIN
    }

    fn more_samples(&self) -> &'static str {
        "--runs 5"
    }

    /// Profile tests by their threads and queue depth, commit-latency tests by their committers.
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["threads", "queue_depth", "committers"]
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Storage]
    }

    /// One chart per sustained write test: MB/s each second with the steady-state window and the cliff.
    fn timelines(&self, run: &StoredRun) -> Vec<Timeline> {
        run.attachments
            .get(WORKLOAD)
            .and_then(crate::sustained::SustainedDocument::of)
            .map(|document| crate::sustained::timelines(&document))
            .unwrap_or_default()
    }

    /// The group-commit curve of a commit run.
    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let document = run.attachments.get(WORKLOAD)?.get(crate::commit_suite::COMMIT_ATTACHMENT)?;
        crate::commit_suite::scaling(&serde_json::from_value(document.clone()).ok()?)
    }

    fn headline(&self, run: &StoredRun) -> String {
        // The statistics the table shows first: the mean of the runs (KDiskMark's figure) and the best
        // (CrystalDiskMark's), each named; medians where the commit test's table shows them.
        let mut parts = Vec::new();
        let mean_and_best = |test: &str, metric: &str, unit: &str| {
            run.summary(test, metric).map(|s| match s.count {
                1 => format!("{test} {:.0} {unit}", s.mean),
                _ => format!("{test} {:.0} {unit} mean, best {:.0}", s.mean, s.max),
            })
        };
        parts.extend(mean_and_best(HEADLINE_RANDOM_TEST, IOPS_METRIC, "IOPS"));
        parts.extend(mean_and_best(HEADLINE_SEQUENTIAL_TEST, THROUGHPUT_METRIC, "MB/s"));
        let commit = "COMMIT 8K fdatasync append";
        if let (Some(rate), Some(p99)) = (run.median(commit, "commits_per_s"), run.median(commit, "latency_p99")) {
            parts.push(format!("{commit} {rate:.0} commits/s, p99 {p99:.0} us (medians)"));
        }
        for test in crate::sustained::default_tests().iter().map(crate::sustained::test_id) {
            if let (Some(sustained), Some(burst)) =
                (run.median(&test, THROUGHPUT_METRIC), run.median(&test, "burst_throughput"))
            {
                parts.push(format!("{test} {sustained:.0} MB/s sustained (burst {burst:.0})"));
            }
        }
        if parts.is_empty()
            && let Some(first) = run.results.iter().find(|r| r.record.metric == THROUGHPUT_METRIC)
        {
            let mb = run.median(&first.record.test_id, THROUGHPUT_METRIC).unwrap_or(0.0);
            parts.push(format!("{} {mb:.1} MB/s", first.record.test_id));
        }
        parts.join("; ")
    }
}

struct DiskRun {
    options: SuiteOptions,
    tests: Vec<TestSpec>,
}

impl Planned for DiskRun {
    fn data_dir(&self) -> &Path {
        &self.options.directory
    }

    fn announce(&self) -> Option<String> {
        let o = &self.options;
        Some(format!(
            "envbench disk: {} test{} on a {} file in {}, {} run{} of {} each{}{}, {}",
            self.tests.len(),
            plural(self.tests.len()),
            ByteSize(o.file_size_bytes),
            o.directory.display(),
            o.runs,
            plural(o.runs as usize),
            format_duration(o.duration),
            if o.interval.is_zero() { String::new() } else { format!(", {} apart", format_duration(o.interval)) },
            if o.warmup { " after a discarded warm-up" } else { "" },
            if o.direct { "O_DIRECT" } else { "buffered" },
        ))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        Ok(Box::new(self.measure(context)?))
    }
}

impl DiskRun {
    fn measure(&self, context: &RunContext<'_>) -> Result<DiskMeasured, WorkloadError> {
        let progress = |event: &ProgressEvent<'_>| report_progress(event, context.progress);
        let outcome = run_suite(&self.options, &self.tests, &progress, context.steps, context.interrupt)?;
        Ok(DiskMeasured { outcome })
    }
}

/// `--profile db`: the database-shaped tests, then the commit profile's.
struct DbRun {
    disk: DiskRun,
    commit: crate::commit_suite::CommitRun,
}

impl Planned for DbRun {
    fn data_dir(&self) -> &Path {
        self.disk.data_dir()
    }

    fn announce(&self) -> Option<String> {
        Some([self.disk.announce(), self.commit.announce()].into_iter().flatten().collect::<Vec<_>>().join("; then "))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let disk = self.disk.measure(context)?;
        // An interrupted suite keeps what it completed; the commit tests then do not start.
        let commit = if disk.outcome.interrupted { None } else { Some(self.commit.measure(context)?) };
        Ok(Box::new(DbMeasured { disk, commit }))
    }
}

/// The db profile's results: the suite's and the commit tests'.
struct DbMeasured {
    disk: DiskMeasured,
    commit: Option<crate::commit_suite::CommitMeasured>,
}

impl DbMeasured {
    fn parts(&self) -> impl Iterator<Item = &dyn Measured> {
        std::iter::once(&self.disk as &dyn Measured).chain(self.commit.iter().map(|c| c as &dyn Measured))
    }
}

impl Measured for DbMeasured {
    fn records(&self, series: &SamplerSeries) -> Vec<ResultRecord> {
        self.parts().flat_map(|part| part.records(series)).collect()
    }

    /// The suite's outcome with the commit document under its key, as a commit run keeps it.
    fn attachment(&self) -> Option<Value> {
        let mut attachment = self.disk.attachment()?;
        if let (Some(object), Some(Value::Object(commit))) =
            (attachment.as_object_mut(), self.commit.as_ref().and_then(|c| c.attachment()))
        {
            object.extend(commit);
        }
        Some(attachment)
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        let mut parts = vec![("outcome", json!(&self.disk.outcome))];
        if let Some(commit) = &self.commit {
            parts.push((crate::commit_suite::COMMIT_ATTACHMENT, json!(&commit.document)));
        }
        envelope.wrap(parts)
    }

    fn render(&self, series: &SamplerSeries) -> String {
        self.parts().map(|part| part.render(series)).collect::<Vec<_>>().join("\n")
    }

    fn warnings(&self, series: &SamplerSeries) -> Vec<String> {
        self.parts().flat_map(|part| part.warnings(series)).collect()
    }
}

fn report_progress(event: &ProgressEvent<'_>, progress: &dyn Progress) {
    match event {
        ProgressEvent::Prepared { engine, fallback_reason, path, size_bytes } => {
            progress.line(&format!(
                "engine {}{}",
                engine.as_str(),
                fallback_reason.map(|r| format!(" (io_uring unavailable: {r})")).unwrap_or_default()
            ));
            progress.line(&format!("test file {} ({})", path.display(), ByteSize(*size_bytes)));
        }
        ProgressEvent::Filling { written_bytes, total_bytes, elapsed } => progress.update(&format!(
            "filling with incompressible data {}",
            envbench_core::text::progress_bar(*written_bytes, *total_bytes, *elapsed)
        )),
        ProgressEvent::Filled { summary } => progress.line(&format!("filled at {:.0} MB/s", summary.mb_per_s)),
        ProgressEvent::TestStarted { index, count, test } => {
            progress.line(&format!("[{index}/{count}] {}", test.display_name()))
        }
        ProgressEvent::WarmupStarted { .. } => progress.update("  warm-up"),
        ProgressEvent::RunStarted { run, runs, .. } => progress.update(&format!("  run {run}/{runs}")),
        ProgressEvent::RunFinished { run, runs, sample, .. } => progress.line(&format!(
            "  run {run}/{runs}: {:.1} MB/s, {:.0} IOPS, {} mean",
            sample.mb_per_s,
            sample.iops,
            micros(sample.latency.mean_us)
        )),
        ProgressEvent::Pausing { duration } => progress.update(&format!("  pausing {}", format_duration(*duration))),
        ProgressEvent::CrossCheckStarted { command, .. } => progress.line(&format!("  fio: {command}")),
        ProgressEvent::TestFinished { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_tests_are_in_the_default_profile() {
        let ids: Vec<String> = Profile::Cdm.tests().iter().map(|t| t.id()).collect();
        assert!(ids.contains(&HEADLINE_RANDOM_TEST.to_string()), "{ids:?}");
        assert!(ids.contains(&HEADLINE_SEQUENTIAL_TEST.to_string()), "{ids:?}");
    }
}
