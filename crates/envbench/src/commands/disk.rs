//! `envbench disk`: the storage suite, printed like CrystalDiskMark, stored with its environment and sampler series.

use crate::cli::DiskArgs;
use crate::commands::run_request;
use crate::output::{Align, Table, heading, number, progress, progress_line};
use crate::session::{Ending, RunSession};
use crate::usage;
use envbench_core::ByteSize;
use envbench_core::sampler::SamplerSeries;
use envbench_io::{
    BenchError, EngineChoice, Profile, ProgressEvent, SuiteOptions, SuiteOutcome, TestOutcome, TestSpec, WriteSync,
    result_records, run_suite,
};
use envbench_store::StoreLocation;
use std::process::ExitCode;
use std::time::Duration;

/// A read that moved this much more than the device saw came, at least partly, from a cache.
const CACHE_SUSPICION_RATIO: f64 = 2.0;
/// The flag on results that the device could not have delivered.
const EXCEEDS_DEVICE_FLAG: &str = "exceeds-device";

pub fn run(location: &StoreLocation, args: DiskArgs) -> anyhow::Result<ExitCode> {
    let request = run_request("disk", &args.labels)?;
    let (options, tests) = plan(&args)?;
    let mut session = RunSession::start(location, &request, &args.dir, args.sampling.interval()?)?;
    let interrupt = session.interrupt();
    if !args.json {
        eprintln!(
            "envbench disk: {} test{} on a {} file in {}, {} run{} of {} each{}{}, {}",
            tests.len(),
            if tests.len() == 1 { "" } else { "s" },
            ByteSize(options.file_size_bytes),
            args.dir.display(),
            options.runs,
            if options.runs == 1 { "" } else { "s" },
            envbench_core::units::format_duration(options.duration),
            if options.interval.is_zero() {
                String::new()
            } else {
                format!(", {} apart", envbench_core::units::format_duration(options.interval))
            },
            if options.warmup { " after a discarded warm-up" } else { "" },
            if options.direct { "O_DIRECT" } else { "buffered" },
        );
    }
    let progress = |event: &ProgressEvent<'_>| report_progress(event, args.json);
    let outcome = run_suite(&options, &tests, &progress, session.steps(), &interrupt);
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            let reason = error.to_string();
            session.finish(&[], Ending::Failed(reason))?;
            return Err(classify(error));
        }
    };
    let series = session.stop_sampling().clone();
    let mut records = result_records(&outcome);
    let suspicious = flag_cache_served_reads(&outcome, &series, &mut records);
    if args.json {
        let document = serde_json::json!({ "run": session.uuid(), "outcome": &outcome, "sampler": &series });
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        print!("{}", render(&outcome, &series));
        if let Some(warning) = outcome.cache.warning() {
            eprintln!("warning: {warning}");
        }
        for test in &suspicious {
            eprintln!(
                "warning: {test} read more than {CACHE_SUSPICION_RATIO}x what the device under {} delivered: the \
                 figure is inflated by a cache; its results are flagged {EXCEEDS_DEVICE_FLAG}",
                args.dir.display()
            );
        }
    }
    session.attach("disk", &serde_json::to_value(&outcome)?)?;
    let status = session.finish(&records, Ending::Complete)?;
    Ok(if status == envbench_core::RunStatus::Complete { ExitCode::SUCCESS } else { ExitCode::from(130) })
}

/// The suite options and tests the arguments ask for, or a usage error.
fn plan(args: &DiskArgs) -> anyhow::Result<(SuiteOptions, Vec<TestSpec>)> {
    let mut options = SuiteOptions::new(&args.dir);
    if args.quick {
        options.runs = 1;
        options.duration = Duration::from_secs(2);
        options.warmup_duration = Duration::from_secs(1);
        options.interval = Duration::ZERO;
        options.file_size_bytes = 256 << 20;
    }
    if let Some(size) = &args.size {
        options.file_size_bytes =
            envbench_core::parse_byte_size(size).map_err(|e| usage(format!("--size: {e}")))?.bytes();
    }
    if let Some(runs) = args.runs {
        if runs == 0 {
            return Err(usage("--runs must be at least 1"));
        }
        options.runs = runs;
    }
    if let Some(duration) = &args.duration {
        options.duration = envbench_core::parse_duration(duration).map_err(|e| usage(format!("--duration: {e}")))?;
        if options.duration.is_zero() {
            return Err(usage("--duration must be longer than zero, e.g. 5s"));
        }
        if !args.quick {
            options.warmup_duration = options.duration;
        }
    }
    if let Some(interval) = &args.interval {
        options.interval = envbench_core::parse_duration(interval).map_err(|e| usage(format!("--interval: {e}")))?;
    }
    options.warmup = !args.no_warmup;
    options.direct = !args.buffered;
    options.engine = args.engine.parse::<EngineChoice>().map_err(|e| usage(format!("--engine: {e}")))?;
    options.cross_check_fio = match args.cross_check.as_deref() {
        None => false,
        Some("fio") => true,
        Some(other) => return Err(usage(format!("--cross-check {other}: the only cross-check tool is fio"))),
    };
    let write_sync: Option<WriteSync> = match &args.write_sync {
        Some(text) => Some(text.parse().map_err(|e: envbench_io::SpecError| usage(e.to_string()))?),
        None => None,
    };
    let mut tests: Vec<TestSpec> = if args.tests.is_empty() {
        Profile::parse(&args.profile).map_err(|e| usage(e.to_string()))?.tests()
    } else {
        args.tests.iter().map(|t| t.parse::<TestSpec>().map_err(|e| usage(e.to_string()))).collect::<Result<_, _>>()?
    };
    if let Some(write_sync) = write_sync {
        // The user's durability mode applies to every writing test that does not define its own (the db profile's log
        // test always syncs each write).
        for test in tests.iter_mut().filter(|t| t.operation.writes() && t.write_sync == WriteSync::None) {
            test.write_sync = write_sync;
        }
    }
    for test in &tests {
        test.validate().map_err(|e| usage(e.to_string()))?;
    }
    Ok((options, tests))
}

/// Errors the user caused by how they called envbench exit with 2.
fn classify(error: BenchError) -> anyhow::Error {
    match error {
        BenchError::Spec(_)
        | BenchError::InvalidSetup(_)
        | BenchError::NotADirectory { .. }
        | BenchError::BlockDevice { .. }
        | BenchError::NotEnoughSpace { .. }
        | BenchError::DirectIoRefused { .. }
        | BenchError::UringUnavailable { .. } => usage(error.to_string()),
        other => other.into(),
    }
}

fn report_progress(event: &ProgressEvent<'_>, quiet: bool) {
    if quiet {
        return;
    }
    match event {
        ProgressEvent::Prepared { engine, fallback_reason, path, size_bytes } => {
            progress_line(&format!(
                "engine {}{}",
                engine.as_str(),
                fallback_reason.map(|r| format!(" (io_uring unavailable: {r})")).unwrap_or_default()
            ));
            progress_line(&format!("test file {} ({})", path.display(), ByteSize(*size_bytes)));
        }
        ProgressEvent::Filling { written_bytes, total_bytes } => {
            progress(&format!("filling with incompressible data: {:>3}%", written_bytes * 100 / (*total_bytes).max(1)));
        }
        ProgressEvent::Filled { summary } => progress_line(&format!("filled at {:.0} MB/s", summary.mb_per_s)),
        ProgressEvent::TestStarted { index, count, test } => {
            progress_line(&format!("[{index}/{count}] {}", test.display_name()))
        }
        ProgressEvent::WarmupStarted { .. } => progress("  warm-up"),
        ProgressEvent::RunStarted { run, runs, .. } => progress(&format!("  run {run}/{runs}")),
        ProgressEvent::RunFinished { run, runs, sample, .. } => progress_line(&format!(
            "  run {run}/{runs}: {:.1} MB/s, {:.0} IOPS, {} mean",
            sample.mb_per_s,
            sample.iops,
            micros(sample.latency.mean_us)
        )),
        ProgressEvent::Pausing { duration } => {
            progress(&format!("  pausing {}", envbench_core::units::format_duration(*duration)))
        }
        ProgressEvent::CrossCheckStarted { command, .. } => progress_line(&format!("  fio: {command}")),
        ProgressEvent::TestFinished { .. } => {}
    }
}

/// Flag reads that moved far more bytes than the device under the test file did: they were served from a cache.
/// Returns the ids of the flagged tests.
fn flag_cache_served_reads(
    outcome: &SuiteOutcome,
    series: &SamplerSeries,
    records: &mut [envbench_core::ResultRecord],
) -> Vec<String> {
    let mut flagged = Vec::new();
    for test in outcome.tests.iter().filter(|t| t.spec.operation.read_percent() == 100) {
        let Some(device) = series.step(&test.test_id).and_then(|step| step.disks.first().map(|d| (d, step))) else {
            continue;
        };
        let (disk, step) = device;
        let device_bytes = disk.read_mb_per_s * 1e6 * (step.end_ms - step.start_ms) as f64 / 1000.0;
        let test_bytes: f64 = test.runs.iter().map(|r| r.bytes as f64).sum();
        if test_bytes > CACHE_SUSPICION_RATIO * device_bytes + 1e6 {
            flagged.push(test.test_id.clone());
        }
    }
    for record in records.iter_mut().filter(|r| flagged.contains(&r.test_id)) {
        record.flags.push(EXCEEDS_DEVICE_FLAG.to_string());
    }
    flagged
}

/// Microseconds for people: `85 µs`, `3.97 ms`.
fn micros(us: f64) -> String {
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.0} µs") }
}

/// The CrystalDiskMark-like table: one row per test, mean and best MB/s (CrystalDiskMark reports the best run,
/// KDiskMark the mean), IOPS, latency percentiles, CPU per I/O; a fio row under each test when cross-checked.
pub fn render(outcome: &SuiteOutcome, series: &SamplerSeries) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["TEST", "MB/s", "BEST", "IOPS", "MEAN", "P50", "P99", "P99.9", "MAX", "CPU/IO", "DEVICE MB/s", "FLAGS"],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right, Left],
    );
    for test in &outcome.tests {
        table.row(row(test, series, outcome));
        if let Some(check) = &test.cross_check {
            match (&check.sample, &check.error) {
                (Some(fio), _) => {
                    let ratio = if fio.iops > 0.0 { test.mean_iops / fio.iops } else { 0.0 };
                    table.row(vec![
                        format!("  fio (envbench/fio IOPS {ratio:.3})"),
                        number(fio.mb_per_s),
                        String::new(),
                        number(fio.iops),
                        micros(fio.latency.mean_us),
                        micros(fio.latency.p50_us),
                        micros(fio.latency.p99_us),
                        micros(fio.latency.p99_9_us),
                        micros(fio.latency.max_us),
                        format!("{:.2} µs", fio.cpu_per_io_us),
                        String::new(),
                        String::new(),
                    ]);
                }
                (None, Some(error)) => table.row(vec![format!("  fio: {error}")]),
                (None, None) => {}
            }
        }
    }
    let mut out = String::new();
    out.push_str(&heading(&format!(
        "Storage suite: {} on {} ({}), {} file, {}, engine {}",
        outcome.directory.display(),
        outcome.file_system,
        if outcome.direct { "O_DIRECT" } else { "buffered" },
        ByteSize(outcome.file_size_bytes),
        if outcome.runs == 1 { "1 run".to_string() } else { format!("mean and best of {} runs", outcome.runs) },
        outcome.engine.as_str()
    )));
    out.push('\n');
    out.push_str(&table.render());
    out.push_str("MB/s are 10^6 bytes per second; latency from submission to completion; DEVICE MB/s is what the OS saw on the device during the test.\n");
    if outcome.interrupted {
        out.push_str("Interrupted: only the tests above completed.\n");
    }
    out
}

fn row(test: &TestOutcome, series: &SamplerSeries, outcome: &SuiteOutcome) -> Vec<String> {
    let device = series
        .step(&test.test_id)
        .and_then(|s| s.disks.first())
        .map(|d| number(d.read_mb_per_s + d.write_mb_per_s))
        .unwrap_or_else(|| "-".into());
    let cpu: f64 = test.runs.iter().map(|r| r.cpu_per_io_us).sum::<f64>() / test.runs.len().max(1) as f64;
    let samples: Vec<f64> = test.runs.iter().map(|r| r.mb_per_s).collect();
    let mut flags = outcome.cache.flags();
    if envbench_core::stats::Summary::of(&samples).is_some_and(|s| s.is_noisy()) {
        flags.push("noisy".into());
    }
    vec![
        test.display_name.clone(),
        number(test.mean_mb_per_s),
        number(test.best_mb_per_s),
        number(test.mean_iops),
        micros(test.latency.mean_us),
        micros(test.latency.p50_us),
        micros(test.latency.p99_us),
        micros(test.latency.p99_9_us),
        micros(test.latency.max_us),
        format!("{cpu:.2} µs"),
        device,
        flags.join(","),
    ]
}
