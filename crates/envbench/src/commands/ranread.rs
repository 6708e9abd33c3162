//! `envbench ranread`: the RanRead sweep on a database file or inside PostgreSQL, with the knee and the verdict.

use crate::cli::RanreadArgs;
use crate::commands::run_request;
use crate::output::{Align, Table, heading, number, progress, progress_line};
use crate::session::{Ending, RunSession};
use crate::usage;
use envbench_core::ByteSize;
use envbench_core::sampler::SamplerSeries;
use envbench_io::{EngineChoice, cache_honesty, select_engine};
use envbench_ranread::{
    FileOptions, FileRanRead, FileState, JobsPlan, PostgresOptions, PostgresRanRead, RanReadError, StepFigures,
    StepLimit, StepRunner, SweepOutcome, Targets, results, sweep,
};
use envbench_store::StoreLocation;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Default database file size with O_DIRECT: large enough to defeat a storage controller's cache.
const DEFAULT_DIRECT_FILE_BYTES: u64 = 8 << 30;

/// Everything the arguments say, checked before anything is created.
struct Plan {
    jobs: JobsPlan,
    limit: StepLimit,
    targets: Targets,
    block_bytes: u64,
    size_bytes: Option<u64>,
}

fn plan(args: &RanreadArgs) -> anyhow::Result<Plan> {
    let jobs = if args.jobs.trim().eq_ignore_ascii_case("auto") {
        if args.max_jobs == 0 {
            return Err(usage("--max-jobs must be at least 1"));
        }
        JobsPlan::Auto { max_jobs: args.max_jobs }
    } else {
        let list: Vec<u32> = args
            .jobs
            .split(',')
            .map(|part| match part.trim().parse::<u32>() {
                Ok(n) if (1..=envbench_io::spec::MAX_THREADS).contains(&n) => Ok(n),
                _ => Err(usage(format!(
                    "--jobs '{}': each job count must be a whole number from 1 to {}, e.g. --jobs 1,2,4,8 or --jobs auto",
                    args.jobs,
                    envbench_io::spec::MAX_THREADS
                ))),
            })
            .collect::<Result<_, _>>()?;
        JobsPlan::List(list)
    };
    let limit = match (&args.iterations, &args.duration) {
        (Some(0), _) => return Err(usage("--iterations must be at least 1")),
        (Some(n), _) => StepLimit::Iterations(*n),
        (None, Some(text)) => {
            let duration = envbench_core::parse_duration(text).map_err(|e| usage(format!("--duration: {e}")))?;
            if duration.is_zero() {
                return Err(usage("--duration must be longer than zero, e.g. 30s"));
            }
            StepLimit::Duration(duration)
        }
        (None, None) => StepLimit::Duration(Duration::from_secs(10)),
    };
    let latency =
        envbench_core::parse_duration(&args.target_latency).map_err(|e| usage(format!("--target-latency: {e}")))?;
    if latency.is_zero() {
        return Err(usage("--target-latency must be longer than zero, e.g. 8ms"));
    }
    if let Some(iops) = args.target_iops
        && !(iops > 0.0 && iops.is_finite())
    {
        return Err(usage("--target-iops must be a positive number, e.g. 2800"));
    }
    let block_bytes = envbench_core::parse_byte_size(&args.block).map_err(|e| usage(format!("--block: {e}")))?.bytes();
    envbench_ranread::validate_block(block_bytes).map_err(|e| usage(e.to_string()))?;
    let size_bytes = match &args.size {
        Some(text) => {
            let size = envbench_core::parse_byte_size(text).map_err(|e| usage(format!("--size: {e}")))?.bytes();
            if size == 0 {
                return Err(usage("--size must be larger than zero, e.g. 8g"));
            }
            Some(size)
        }
        None => None,
    };
    Ok(Plan {
        jobs,
        limit,
        targets: Targets { latency_ms: latency.as_secs_f64() * 1e3, iops: args.target_iops },
        block_bytes,
        size_bytes,
    })
}

pub fn run(location: &StoreLocation, args: RanreadArgs) -> anyhow::Result<ExitCode> {
    let request = run_request("ranread", &args.labels)?;
    let plan = plan(&args)?;
    let engine_choice = args.engine.parse::<EngineChoice>().map_err(|e| usage(format!("--engine: {e}")))?;
    let mut session = RunSession::start(location, &request, &args.dir, args.sampling.interval()?)?;
    let interrupt = session.interrupt();
    let quiet = args.json;
    let mut flags = Vec::new();

    // Prepare the target: the database file or the table.
    let prepared = prepare(&args, &plan, engine_choice, &session, &interrupt, &mut flags);
    let Prepared { mut runner, parameters, database_file: file } = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            session.finish(&[], Ending::Failed(error.to_string()))?;
            return Err(classify(error));
        }
    };

    if !quiet {
        eprintln!(
            "sweep: {}, each step {} per job, target mean response time {} ms{}",
            match &plan.jobs {
                JobsPlan::Auto { max_jobs } => format!("jobs 1, 2, 4, ... up to {max_jobs}"),
                JobsPlan::List(list) =>
                    format!("jobs {}", list.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
            },
            match plan.limit {
                StepLimit::Iterations(n) => format!("{n} reads"),
                StepLimit::Duration(d) => envbench_core::units::format_duration(d),
            },
            plan.targets.latency_ms,
            plan.targets.iops.map(|i| format!(", target {i:.0} IOPS")).unwrap_or_default()
        );
    }
    let mut on_step = |step: &StepFigures| {
        if !quiet {
            eprintln!(
                "  {:>4} jobs: {:>9.0} IOPS, {:.3} ms mean, {:.3} ms p99",
                step.jobs, step.iops, step.mean_ms, step.p99_ms
            );
        }
    };
    let outcome =
        sweep(runner.as_mut(), &plan.jobs, plan.targets, plan.limit, session.steps(), &interrupt, &mut on_step);
    let target_name = runner.target();
    drop(runner);
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            session.finish(&[], Ending::Failed(error.to_string()))?;
            return Err(classify(error));
        }
    };
    if let Some(path) = file
        && args.no_keep
    {
        std::fs::remove_file(&path)
            .map_err(|e| anyhow::anyhow!("{}: cannot remove the database file ({e})", path.display()))?;
    }

    let series = session.stop_sampling().clone();
    let mut records = results(&outcome, &parameters);
    for record in &mut records {
        record.flags.extend(flags.iter().cloned());
    }
    let document = json!({
        "target": target_name,
        "parameters": parameters,
        "outcome": outcome,
    });
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "run": session.uuid(), "ranread": &document, "sampler": series }))?
        );
    } else {
        print!("{}", render(&outcome, &series, &target_name));
    }
    session.attach("ranread", &document)?;
    let status = session.finish(&records, Ending::Complete)?;
    Ok(if status == envbench_core::RunStatus::Complete { ExitCode::SUCCESS } else { ExitCode::from(130) })
}

/// A target ready for the sweep.
struct Prepared {
    runner: Box<dyn StepRunner>,
    /// What results are matched by: mode, block size, size, engine, step limit.
    parameters: serde_json::Value,
    /// The database file, in file mode.
    database_file: Option<PathBuf>,
}

/// Build or reuse the database file or table.
fn prepare(
    args: &RanreadArgs,
    plan: &Plan,
    engine_choice: EngineChoice,
    session: &RunSession,
    interrupt: &AtomicBool,
    flags: &mut Vec<String>,
) -> Result<Prepared, RanReadError> {
    let quiet = args.json;
    match &args.db {
        Some(url) => {
            let options = PostgresOptions { url: url.clone(), size_bytes: plan.size_bytes, fresh: args.fresh };
            let mut progress = |done: i64, total: i64| {
                if !quiet {
                    progress(&format!("building the table: {:>3}% of {total} pages", done * 100 / total.max(1)));
                }
            };
            let target = PostgresRanRead::prepare(&options, interrupt, &mut progress)?;
            if !quiet {
                let info = &target.info;
                progress_line(&format!(
                    "{} table {}: {} pages ({}), shared_buffers {}, PostgreSQL {}",
                    if info.reused { "reusing" } else { "built" },
                    envbench_ranread::TABLE,
                    info.rows,
                    ByteSize(info.table_bytes as u64),
                    ByteSize(info.shared_buffers_bytes as u64),
                    info.server_version
                ));
            }
            let parameters = json!({
                "mode": "postgres",
                "block_bytes": 8192,
                "table_pages": target.info.rows,
                "limit": plan.limit,
            });
            Ok(Prepared { runner: Box::new(target), parameters, database_file: None })
        }
        None => {
            let direct = !args.buffered;
            let selection = select_engine(engine_choice)?;
            let ram = session.fingerprint.memory.total_bytes.unwrap_or(0);
            let size = plan.size_bytes.unwrap_or(if direct { DEFAULT_DIRECT_FILE_BYTES } else { 2 * ram });
            let size = size / 4096 * 4096;
            let cache = cache_honesty(direct, size);
            if let Some(warning) = cache.warning() {
                eprintln!("warning: {warning}");
            }
            flags.extend(cache.flags());
            let options = FileOptions {
                dir: args.dir.clone(),
                data_bytes: size,
                block_bytes: plan.block_bytes,
                direct,
                engine: selection.kind,
                fresh: args.fresh,
            };
            let mut progress = |done: u64, total: u64| {
                if !quiet {
                    progress(&format!(
                        "filling the database file: {:>3}% of {}",
                        done * 100 / total.max(1),
                        ByteSize(total)
                    ));
                }
            };
            session.steps().step_started("prepare");
            let target = FileRanRead::prepare(options, interrupt, &mut progress);
            session.steps().step_finished("prepare");
            let target = target?;
            if !quiet {
                progress_line(&format!(
                    "{} {} ({}), {} reads of {}, engine {}",
                    match target.state {
                        FileState::Reused => "reusing",
                        FileState::Created => "created",
                    },
                    target.path().display(),
                    ByteSize(size),
                    if direct { "O_DIRECT" } else { "buffered" },
                    ByteSize(plan.block_bytes),
                    selection.kind.as_str()
                ));
            }
            let parameters = json!({
                "mode": "file",
                "block_bytes": plan.block_bytes,
                "file_size_bytes": size,
                "direct": direct,
                "engine": selection.kind.as_str(),
                "limit": plan.limit,
            });
            let path = target.path().to_path_buf();
            Ok(Prepared { runner: Box::new(target), parameters, database_file: Some(path) })
        }
    }
}

fn classify(error: RanReadError) -> anyhow::Error {
    match error {
        RanReadError::BadInput(_) | RanReadError::BadDatabaseUrl { .. } => usage(error.to_string()),
        RanReadError::Io(
            envbench_io::BenchError::NotEnoughSpace { .. }
            | envbench_io::BenchError::DirectIoRefused { .. }
            | envbench_io::BenchError::NotADirectory { .. }
            | envbench_io::BenchError::BlockDevice { .. }
            | envbench_io::BenchError::UringUnavailable { .. },
        ) => usage(error.to_string()),
        other => other.into(),
    }
}

/// A table per step, the knee, the verdict, and the reference guidance.
pub fn render(outcome: &SweepOutcome, series: &SamplerSeries, target: &str) -> String {
    use Align::{Left, Right};
    let database = outcome.steps.iter().any(|s| s.database.is_some());
    let mut headers =
        vec!["JOBS", "IOPS", "MEAN ms", "P50 ms", "P99 ms", "MAX ms", "JOB CV", "DEVICE r/s", "r_await ms"];
    if database {
        headers.extend(["HEAP READ", "HEAP HIT", "READ %"]);
    }
    let aligns = vec![Right; headers.len()];
    let mut table = Table::new(&headers, &aligns);
    for (index, step) in outcome.steps.iter().enumerate() {
        let device = series.step(&format!("J={}", step.jobs)).and_then(|s| s.disks.first());
        let mut row = vec![
            format!("{}{}", if Some(index) == outcome.knee { "* " } else { "" }, step.jobs),
            format!("{:.0}", step.iops),
            format!("{:.3}", step.mean_ms),
            format!("{:.3}", step.p50_ms),
            format!("{:.3}", step.p99_ms),
            format!("{:.3}", step.max_ms),
            format!("{:.1}%", step.job_cv_percent),
            device.map(|d| number(d.reads_per_s)).unwrap_or_else(|| "-".into()),
            device.map(|d| format!("{:.3}", d.read_await_ms)).unwrap_or_else(|| "-".into()),
        ];
        if let Some(db) = &step.database {
            row.extend([
                db.heap_blocks_read.to_string(),
                db.heap_blocks_hit.to_string(),
                format!("{:.1}%", db.heap_read_percent()),
            ]);
        }
        table.row(row);
    }
    let _ = Left;
    let mut out = heading(&format!("Random read sweep of {target}"));
    out.push('\n');
    out.push_str(&table.render());
    match outcome.knee_step() {
        Some(knee) => out.push_str(&format!(
            "Knee (*): {} jobs, {:.0} IOPS at {:.3} ms mean, {:.3} ms p99 — the highest IOPS within {} ms\n",
            knee.jobs, knee.iops, knee.mean_ms, knee.p99_ms, outcome.targets.latency_ms
        )),
        None => out.push_str(&format!("Knee: no step stayed within {} ms\n", outcome.targets.latency_ms)),
    }
    out.push_str(&format!("Stopped because {}.\n", outcome.stop_reason.describe()));
    out.push_str(&heading(&outcome.verdict.explanation));
    out.push('\n');
    if database {
        out.push_str(
            "HEAP READ counts blocks PostgreSQL fetched from outside shared_buffers; the OS page cache may still have \
             served them: DEVICE r/s shows what reached storage.\n",
        );
    }
    out.push_str(
        "Guidance: all-flash storage should hold a mean of 2 ms or less (max 5 ms); 8 ms with a distributed cache and \
         10 ms without are the classic limits.\n",
    );
    out
}
