//! `envbench disk --sustained DURATION`: whether the write speed a storage shows lasts. Each write test (by default
//! 128 KiB sequential at queue depth 8 and 4 KiB random at queue depth 32) runs without a pause for the whole
//! duration on a file larger than any cache envbench can see (twice the RAM, capped by the free space), optionally
//! after SNIA's preconditioning (the file written sequentially twice). Every second's MB/s, IOPS and p99 are kept;
//! [`crate::steady`] judges steady state, the burst figure and the cliff from them.

use crate::cache::ram_bytes;
use crate::engine::{EngineChoice, EngineKind, select_engine};
use crate::error::BenchError;
use crate::records::TestRecords;
use crate::runner::{JobConfig, JobResult, Region, RunLimit, WindowFigures, run_job};
use crate::spec::{Operation, Pattern, TestSpec, WriteSync};
use crate::steady::{self, Cliff, SteadyState, WINDOW_ROUNDS};
use crate::testfile::{FillSummary, TestFile};
use envbench_base::latency::LatencySummary;
use envbench_base::place::{available_bytes, file_system_name};
use envbench_core::ByteSize;
use envbench_core::model::{Direction, ResultRecord};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::units::format_duration;
use envbench_core::workload::{Measured, Planned, RunContext, Timeline, TimelineMark, WorkloadError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The attachment key of a sustained run.
pub const SUSTAINED_ATTACHMENT: &str = "sustained";
/// The flag of results whose run never reached steady state.
pub const NOT_STEADY_FLAG: &str = "not-steady";
/// How long each test runs by default, and with `--quick`.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(600);
pub const QUICK_DURATION: Duration = Duration::from_secs(60);
/// The shortest run whose steady state can be judged: five rounds of at least two seconds.
pub const MIN_DURATION: Duration = Duration::from_secs(10);
/// The file must fit in this share of the free space...
const FREE_SPACE_SHARE: f64 = 0.9;
/// ... and be at least this large.
const MIN_FILE_BYTES: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// The default tests: a log or bulk load's sequential writes, and a database's random page writes.
pub fn default_tests() -> Vec<TestSpec> {
    vec![
        TestSpec::new(Pattern::Sequential, 128 << 10, 8, 1, Operation::Write),
        TestSpec::new(Pattern::Random, 4 << 10, 32, 1, Operation::Write),
    ]
}

/// The test id of a sustained test: `SUSTAINED SEQ128K Q8T1 write`.
pub fn test_id(spec: &TestSpec) -> String {
    format!("SUSTAINED {}", spec.id())
}

/// The file size when the user gave none: twice the RAM, capped by 90% of the free space (whole MiB), with a note
/// when the cap made it smaller than twice the RAM. Refused when less than 1 GiB would fit.
pub fn default_file_size(
    ram_bytes: Option<u64>,
    available_bytes: Option<u64>,
) -> Result<(u64, Option<String>), String> {
    // Without MemTotal, 16 GiB: more than most database hosts' caches in front of one volume.
    let wanted = ram_bytes.map_or(16 << 30, |ram| ram.saturating_mul(2));
    let Some(available) = available_bytes else { return Ok((wanted / MIB * MIB, None)) };
    let cap = (available as f64 * FREE_SPACE_SHARE) as u64 / MIB * MIB;
    if cap < MIN_FILE_BYTES {
        return Err(format!(
            "only {} is free: a sustained write test needs a file of at least {} (twice the RAM by default); free \
             some space or choose another --dir",
            ByteSize(available),
            ByteSize(MIN_FILE_BYTES)
        ));
    }
    if cap >= wanted {
        return Ok((wanted / MIB * MIB, None));
    }
    Ok((
        cap,
        Some(format!(
            "the test file is {}, less than twice the RAM ({}), because only {} is free: a cache as large as the RAM \
             could hold part of what is written",
            ByteSize(cap),
            ByteSize(wanted),
            ByteSize(available)
        )),
    ))
}

/// The size of `dir`'s test file: `--size` when given, else [`default_file_size`] for this machine.
pub fn plan_file_size(dir: &Path, size: Option<u64>) -> Result<(u64, Option<String>), BenchError> {
    match size {
        Some(bytes) => Ok((bytes, None)),
        None => default_file_size(ram_bytes(), available_bytes(dir)?)
            .map_err(|message| BenchError::InvalidSetup(format!("{}: {message}", dir.display()))),
    }
}

/// A planned sustained run.
pub struct SustainedRun {
    pub directory: PathBuf,
    pub tests: Vec<TestSpec>,
    /// How long each test writes.
    pub duration: Duration,
    pub file_size_bytes: u64,
    /// `true` when `--size` chose it.
    pub size_given: bool,
    /// Why the file is smaller than the policy wants, when it is.
    pub size_note: Option<String>,
    /// `--precondition`: write the file sequentially twice first.
    pub precondition: bool,
    pub engine: EngineChoice,
    pub seed: u64,
}

/// One second-by-second series and what was judged from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SustainedOutcome {
    pub test_id: String,
    pub spec: TestSpec,
    /// Each whole second of the run, from the first I/O.
    pub mb_per_s: Vec<f64>,
    pub iops: Vec<f64>,
    /// The 99th percentile latency of each second's I/Os, in microseconds.
    pub p99_us: Vec<f64>,
    /// The length of a steady-state round ([`steady::round_seconds`]).
    pub round_s: usize,
    /// The mean of the first [`steady::BURST_SECONDS`].
    pub burst_mb_per_s: f64,
    pub burst_iops: f64,
    /// SNIA's steady-state window, when one was found.
    pub steady: Option<SteadyState>,
    /// The seconds the sustained figures are the mean of: the steady-state window, or the last five rounds when the
    /// run never became steady.
    pub window_start_s: usize,
    pub window_end_s: usize,
    pub sustained_mb_per_s: f64,
    pub sustained_iops: f64,
    /// The median of the window's per-second p99s.
    pub sustained_p99_us: f64,
    /// Where throughput fell by more than half, when it did (its `written_before` is in MB).
    pub cliff: Option<Cliff>,
    /// Every I/O of the run.
    pub latency: LatencySummary,
    pub written_bytes: u64,
}

impl SustainedOutcome {
    /// Judge a test's per-second figures.
    pub fn judge(spec: &TestSpec, seconds: &[WindowFigures], latency: LatencySummary) -> SustainedOutcome {
        let mb_per_s: Vec<f64> = seconds.iter().map(|s| s.bytes as f64 / 1e6).collect();
        let iops: Vec<f64> = seconds.iter().map(|s| s.ops as f64).collect();
        let p99_us: Vec<f64> = seconds.iter().map(|s| s.p99_ns as f64 / 1000.0).collect();
        let round_s = steady::round_seconds(mb_per_s.len());
        let steady = steady::find_steady_state(&mb_per_s, round_s);
        let (window_start_s, window_end_s) = match &steady {
            Some(window) => (window.start_s, window.end_s),
            None => (mb_per_s.len().saturating_sub(WINDOW_ROUNDS * round_s), mb_per_s.len()),
        };
        let window = |series: &[f64]| mean(&series[window_start_s..window_end_s]);
        let mut window_p99 = p99_us[window_start_s..window_end_s].to_vec();
        window_p99.sort_by(f64::total_cmp);
        SustainedOutcome {
            test_id: test_id(spec),
            spec: spec.clone(),
            round_s,
            burst_mb_per_s: steady::burst(&mb_per_s).unwrap_or(0.0),
            burst_iops: steady::burst(&iops).unwrap_or(0.0),
            window_start_s,
            window_end_s,
            sustained_mb_per_s: window(&mb_per_s),
            sustained_iops: window(&iops),
            sustained_p99_us: window_p99.get(window_p99.len() / 2).copied().unwrap_or(0.0),
            cliff: steady::find_cliff(&mb_per_s),
            steady,
            latency,
            written_bytes: seconds.iter().map(|s| s.bytes).sum(),
            mb_per_s,
            iops,
            p99_us,
        }
    }

    /// The steady-state verdict in words.
    pub fn verdict(&self) -> String {
        match &self.steady {
            Some(window) => format!(
                "steady from {} s to {} s (range {:.0}%, slope {:.0}% of the mean)",
                window.start_s, window.end_s, window.range_percent, window.slope_percent
            ),
            None => format!(
                "NOT STEADY: no {WINDOW_ROUNDS} rounds of {} s within 20% range and 10% slope; sustained is the mean \
                 of the last {} s",
                self.round_s,
                self.window_end_s - self.window_start_s
            ),
        }
    }

    /// The cliff in words.
    pub fn cliff_text(&self) -> String {
        match &self.cliff {
            Some(cliff) => format!(
                "at {} s after {:.1} GB written: {} -> {} MB/s",
                cliff.at_s,
                cliff.written_before / 1000.0,
                number(cliff.before),
                number(cliff.after)
            ),
            None => "no cliff".into(),
        }
    }
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 }
}

/// What a sustained run keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SustainedDocument {
    pub directory: PathBuf,
    pub file_system: String,
    pub file_size_bytes: u64,
    /// `true` when the user chose the size.
    pub size_given: bool,
    pub size_note: Option<String>,
    pub engine: EngineKind,
    pub duration_s: f64,
    /// The two sequential passes of `--precondition`, when asked for.
    pub preconditioning: Vec<FillSummary>,
    pub tests: Vec<SustainedOutcome>,
}

impl SustainedDocument {
    /// The document of a stored run.
    pub fn of(attachment: &Value) -> Option<SustainedDocument> {
        serde_json::from_value(attachment.get(SUSTAINED_ATTACHMENT)?.clone()).ok()
    }
}

impl Planned for SustainedRun {
    fn data_dir(&self) -> &Path {
        &self.directory
    }

    fn announce(&self) -> Option<String> {
        Some(format!(
            "envbench disk --sustained: {} write test{} of {} each on a {} file in {}, O_DIRECT{}",
            self.tests.len(),
            if self.tests.len() == 1 { "" } else { "s" },
            format_duration(self.duration),
            ByteSize(self.file_size_bytes),
            self.directory.display(),
            if self.precondition { ", after writing the file sequentially twice" } else { "" }
        ))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        if let Some(note) = &self.size_note {
            context.progress.warn(note);
        }
        let selection = select_engine(self.engine)?;
        let file = TestFile::create(&self.directory, self.file_size_bytes, true)?;
        context.progress.line(&format!("test file {} ({})", file.path().display(), ByteSize(self.file_size_bytes)));
        let mut document = SustainedDocument {
            directory: self.directory.clone(),
            file_system: file_system_name(&self.directory),
            file_size_bytes: self.file_size_bytes,
            size_given: self.size_given,
            size_note: self.size_note.clone(),
            engine: selection.kind,
            duration_s: self.duration.as_secs_f64(),
            preconditioning: Vec::new(),
            tests: Vec::new(),
        };
        if self.precondition {
            for pass in 1..=2 {
                context.steps.step_started("precondition");
                let filled = file.fill(selection.kind, true, context.interrupt, &mut |written, total| {
                    context
                        .progress
                        .update(&format!("preconditioning, pass {pass} of 2: {:>3}%", written * 100 / total.max(1)))
                });
                context.steps.step_finished("precondition");
                let summary = filled?;
                context.progress.line(&format!("preconditioning pass {pass}: {:.0} MB/s", summary.mb_per_s));
                document.preconditioning.push(summary);
            }
        }
        for (index, spec) in self.tests.iter().enumerate() {
            let handle = file.open(true, spec.write_sync == WriteSync::Dsync)?;
            let id = test_id(spec);
            context.progress.line(&format!(
                "[{}/{}] {id} for {}",
                index + 1,
                self.tests.len(),
                format_duration(self.duration)
            ));
            context.steps.step_started(&id);
            let job = run_with_clock(context, &id, self.duration, || {
                run_job(&JobConfig {
                    spec,
                    file: &handle,
                    path: file.path(),
                    region: Region { offset_bytes: 0, len_bytes: self.file_size_bytes },
                    limit: RunLimit::Duration(self.duration),
                    engine: selection.kind,
                    seed: self.seed ^ index as u64,
                    cancel: context.interrupt,
                    window: Some(Duration::from_secs(1)),
                })
            });
            context.steps.step_finished(&id);
            let job: JobResult = job?;
            if job.interrupted {
                return Err(WorkloadError::interrupted());
            }
            let outcome = SustainedOutcome::judge(spec, &job.windows(), job.latency().summary());
            context.progress.line(&format!(
                "  burst {} MB/s, sustained {} MB/s; {}; {}",
                number(outcome.burst_mb_per_s),
                number(outcome.sustained_mb_per_s),
                if outcome.steady.is_some() { "steady" } else { "not steady" },
                outcome.cliff_text()
            ));
            document.tests.push(outcome);
        }
        file.remove()?;
        Ok(Box::new(SustainedMeasured { document }))
    }
}

/// Run `job` while the progress line counts its seconds.
fn run_with_clock<T: Send>(
    context: &RunContext<'_>,
    id: &str,
    duration: Duration,
    job: impl FnOnce() -> T + Send,
) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let clock = scope.spawn(|| {
            let started = Instant::now();
            while !done.load(Ordering::Relaxed) {
                context.progress.update(&format!(
                    "  {id}: {:.0} of {} s",
                    started.elapsed().as_secs_f64(),
                    duration.as_secs()
                ));
                std::thread::park_timeout(Duration::from_millis(500));
            }
        });
        let result = job();
        done.store(true, Ordering::Relaxed);
        clock.thread().unpark();
        result
    })
}

struct SustainedMeasured {
    document: SustainedDocument,
}

/// The parameters that define a sustained test: not the file size, which follows the RAM by policy.
fn parameters(document: &SustainedDocument, spec: &TestSpec) -> Value {
    json!({
        "profile": "sustained",
        "pattern": spec.pattern.as_str(),
        "block_bytes": spec.block_bytes,
        "queue_depth": spec.queue_depth,
        "threads": spec.threads,
        "read_percent": spec.operation.read_percent(),
        "direct": true,
        "engine": document.engine.as_str(),
        "duration_s": document.duration_s,
        "preconditioned": !document.preconditioning.is_empty(),
        "file_size": if document.size_given { document.file_size_bytes.to_string() } else { "2x RAM".to_string() },
    })
}

/// The records of a sustained run: the sustained and burst figures, latency, and the cliff when there was one.
pub fn records(document: &SustainedDocument) -> Vec<ResultRecord> {
    let mut records = Vec::new();
    for test in &document.tests {
        let flags: Vec<String> = if test.steady.is_none() { vec![NOT_STEADY_FLAG.to_string()] } else { Vec::new() };
        let parameters = parameters(document, &test.spec);
        let test_records = TestRecords { test_id: &test.test_id, parameters: &parameters, flags: &flags };
        let mut push = |metric: &str, unit: &str, direction: Direction, value: f64| {
            records.push(test_records.record(metric, unit, direction, vec![value]));
        };
        push("throughput", "MB/s", Direction::HigherIsBetter, test.sustained_mb_per_s);
        push("iops", "IOPS", Direction::HigherIsBetter, test.sustained_iops);
        push("burst_throughput", "MB/s", Direction::HigherIsBetter, test.burst_mb_per_s);
        push("sustained_latency_p99", "us", Direction::LowerIsBetter, test.sustained_p99_us);
        push("latency_p50", "us", Direction::LowerIsBetter, test.latency.p50_us);
        push("latency_p99", "us", Direction::LowerIsBetter, test.latency.p99_us);
        push("latency_max", "us", Direction::LowerIsBetter, test.latency.max_us);
        if let Some(cliff) = &test.cliff {
            push("written_before_cliff", "GB", Direction::HigherIsBetter, cliff.written_before / 1000.0);
        }
    }
    records
}

impl Measured for SustainedMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        records(&self.document)
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((SUSTAINED_ATTACHMENT, json!(&self.document)))
    }

    /// Kept under its key, so a db profile's run can hold it beside the suite's outcome.
    fn attachment(&self) -> Option<Value> {
        Some(json!({ SUSTAINED_ATTACHMENT: &self.document }))
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(&self.document)
    }

    fn warnings(&self, _series: &SamplerSeries) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .document
            .tests
            .iter()
            .filter(|t| t.steady.is_none())
            .map(|t| {
                format!(
                    "{} never reached steady state in {}: its sustained figure is the mean of the last {} s and is \
                     flagged {NOT_STEADY_FLAG}; run longer (e.g. --sustained 30m) or with --precondition",
                    t.test_id,
                    format_duration(Duration::from_secs_f64(self.document.duration_s)),
                    t.window_end_s - t.window_start_s
                )
            })
            .collect();
        warnings.extend(self.document.size_note.clone());
        warnings
    }
}

/// The sustained table: burst against sustained, the steady-state verdict and the cliff of every test.
pub fn render(document: &SustainedDocument) -> String {
    let mut out = heading(&format!(
        "Sustained writes in {} ({}), {} file, O_DIRECT, engine {}, {} per test{}",
        document.directory.display(),
        document.file_system,
        ByteSize(document.file_size_bytes),
        document.engine.as_str(),
        format_duration(Duration::from_secs_f64(document.duration_s)),
        if document.preconditioning.is_empty() { ", not preconditioned" } else { ", preconditioned" }
    ));
    out.push('\n');
    let headers = ["TEST", "BURST MB/s", "SUSTAINED MB/s", "SUSTAINED IOPS", "P99 us", "WRITTEN GB", "FLAGS"];
    let mut aligns = vec![Align::Right; headers.len()];
    aligns[0] = Align::Left;
    aligns[headers.len() - 1] = Align::Left;
    let mut table = Table::new(&headers, &aligns);
    for test in &document.tests {
        table.row(vec![
            test.test_id.clone(),
            number(test.burst_mb_per_s),
            number(test.sustained_mb_per_s),
            number(test.sustained_iops),
            format!("{:.0}", test.sustained_p99_us),
            format!("{:.1}", test.written_bytes as f64 / 1e9),
            if test.steady.is_none() { NOT_STEADY_FLAG.to_string() } else { String::new() },
        ]);
    }
    out.push_str(&table.render());
    for test in &document.tests {
        out.push_str(&format!(
            "{}:\n  steady state: {}\n  cliff: {}\n",
            test.test_id,
            test.verdict(),
            test.cliff_text()
        ));
    }
    out.push_str(&format!(
        "Burst is the mean of the first {} s; sustained is the mean of SNIA's steady-state window ({WINDOW_ROUNDS} \
         rounds whose range is within 20% and slope within 10% of their mean), P99 the median of its seconds' p99. \
         A cliff is where throughput stayed below half the burst figure.\n",
        steady::BURST_SECONDS
    ));
    out
}

/// One chart per test: MB/s each second, with the steady-state window and the cliff marked.
pub fn timelines(document: &SustainedDocument) -> Vec<Timeline> {
    document
        .tests
        .iter()
        .map(|test| {
            let mut marks = Vec::new();
            if let Some(window) = &test.steady {
                marks.push(TimelineMark::Span {
                    from: window.start_s as f64,
                    to: window.end_s as f64,
                    label: format!("steady state, {} MB/s", number(window.mean)),
                });
            }
            if let Some(cliff) = &test.cliff {
                marks.push(TimelineMark::At {
                    x: cliff.at_s as f64,
                    label: format!("cliff after {:.1} GB", cliff.written_before / 1000.0),
                });
            }
            Timeline {
                subject: Some(test.test_id.clone()),
                y_label: "MB/s".into(),
                x_label: "seconds since the test began".into(),
                lines: vec![(
                    test.test_id.clone(),
                    test.mb_per_s.iter().enumerate().map(|(s, v)| (s as f64 + 1.0, *v)).collect(),
                )],
                marks,
                higher_is_better: true,
                note: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_file_is_twice_the_ram_unless_the_free_space_is_short() {
        assert_eq!(default_file_size(Some(24 * GIB), Some(80 * GIB)).unwrap(), (48 * GIB, None));
        let (size, note) = default_file_size(Some(24 * GIB), Some(40 * GIB)).unwrap();
        assert_eq!(size, 36 * GIB, "90% of the free space");
        assert!(note.unwrap().contains("less than twice the RAM"));
        assert_eq!(default_file_size(None, None).unwrap(), (16 * GIB, None));
        let error = default_file_size(Some(24 * GIB), Some(GIB)).unwrap_err();
        assert!(error.contains("at least 1 GiB"), "{error}");
    }

    fn seconds(mb: impl Iterator<Item = f64>) -> Vec<WindowFigures> {
        mb.map(|mb| WindowFigures { ops: (mb * 1e6 / 131072.0) as u64, bytes: (mb * 1e6) as u64, p99_ns: 500_000 })
            .collect()
    }

    #[test]
    fn a_flat_run_is_steady_with_sustained_equal_to_burst() {
        let spec = &default_tests()[0];
        let outcome =
            SustainedOutcome::judge(spec, &seconds(std::iter::repeat_n(1000.0, 60)), LatencySummary::default());
        assert_eq!(outcome.round_s, 6);
        let steady = outcome.steady.as_ref().unwrap();
        assert_eq!((steady.start_s, steady.end_s), (0, 30));
        assert!((outcome.sustained_mb_per_s - 1000.0).abs() < 1e-6);
        assert!((outcome.burst_mb_per_s - 1000.0).abs() < 1e-6);
        assert_eq!(outcome.sustained_p99_us, 500.0);
        assert!(outcome.cliff.is_none());
        assert_eq!(outcome.cliff_text(), "no cliff");
        assert_eq!(outcome.test_id, "SUSTAINED SEQ128K Q8T1 write");
        assert!(outcome.verdict().starts_with("steady from 0 s to 30 s"));
    }

    #[test]
    fn a_cache_filling_is_a_cliff_and_an_unsettled_run_is_flagged() {
        let spec = &default_tests()[1];
        // 20 s at 2000 MB/s, then a steady decline that never settles.
        let series = (0..60).map(|s| if s < 20 { 2000.0 } else { 700.0 - 10.0 * (s - 20) as f64 });
        let outcome = SustainedOutcome::judge(spec, &seconds(series), LatencySummary::default());
        let cliff = outcome.cliff.as_ref().unwrap();
        assert_eq!(cliff.at_s, 20);
        assert!((cliff.written_before - 40_000.0).abs() < 1.0, "{cliff:?}");
        assert!(outcome.cliff_text().starts_with("at 20 s after 40.0 GB"), "{}", outcome.cliff_text());
        assert!(outcome.steady.is_none());
        assert_eq!((outcome.window_start_s, outcome.window_end_s), (30, 60), "the last five rounds");
        assert!(outcome.verdict().starts_with("NOT STEADY"));
        let document = SustainedDocument {
            directory: "/data".into(),
            file_system: "ext4".into(),
            file_size_bytes: 48 * GIB,
            size_given: false,
            size_note: None,
            engine: EngineKind::IoUring,
            duration_s: 60.0,
            preconditioning: Vec::new(),
            tests: vec![outcome],
        };
        let records = records(&document);
        assert!(records.iter().all(|r| r.flags == [NOT_STEADY_FLAG]));
        assert!(records.iter().any(|r| r.metric == "written_before_cliff" && (r.samples[0] - 40.0).abs() < 1e-6));
        assert_eq!(records[0].parameters["file_size"], "2x RAM");
        let timeline = &timelines(&document)[0];
        assert_eq!(timeline.lines[0].1.len(), 60);
        assert!(matches!(timeline.marks[..], [TimelineMark::At { x, .. }] if x == 20.0));
        let text = render(&document);
        assert!(text.contains("NOT STEADY") && text.contains("cliff: at 20 s"), "{text}");
    }
}
