//! Run one storage test with envbench's engine, outside the CLI; `bench/disk-vs-fio.sh` uses it to compare with fio.
//!
//! ```text
//! iobench SPEC [--dir DIR] [--size 1g] [--duration 10s] [--warmup 2s] [--engine auto|io_uring|threadpool]
//!              [--buffered] [--json]          create and fill a test file in DIR, run, remove it
//! iobench prepare [--dir DIR] [--size 1g]    create and fill a test file, print its path, keep it
//! iobench run SPEC --file PATH [...]         run on a file made by `prepare` (its name starts with envbench-)
//! ```
//! SPEC is the ad-hoc test syntax, e.g. `rnd:4k:q32:t1:read`.

use envbench_core::{parse_byte_size, parse_duration};
use envbench_io::{
    EngineChoice, JobConfig, Region, RunLimit, TestFile, TestSpec, WriteSync, open_for_io, run_job, select_engine,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

struct Args {
    command: String,
    spec: Option<TestSpec>,
    dir: PathBuf,
    file: Option<PathBuf>,
    size_bytes: u64,
    duration: Duration,
    warmup: Duration,
    engine: EngineChoice,
    direct: bool,
    json: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        command: "once".into(),
        spec: None,
        dir: std::env::temp_dir(),
        file: None,
        size_bytes: 1 << 30,
        duration: Duration::from_secs(10),
        warmup: Duration::ZERO,
        engine: EngineChoice::Auto,
        direct: true,
        json: false,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = |name: &str| words.next().ok_or_else(|| format!("{name} needs a value"));
        match word.as_str() {
            "prepare" | "run" => args.command = word,
            "--dir" => args.dir = value("--dir")?.into(),
            "--file" => args.file = Some(value("--file")?.into()),
            "--size" => args.size_bytes = parse_byte_size(&value("--size")?).map_err(|e| e.to_string())?.bytes(),
            "--duration" => args.duration = parse_duration(&value("--duration")?).map_err(|e| e.to_string())?,
            "--warmup" => args.warmup = parse_duration(&value("--warmup")?).map_err(|e| e.to_string())?,
            "--engine" => args.engine = value("--engine")?.parse()?,
            "--buffered" => args.direct = false,
            "--json" => args.json = true,
            spec if !spec.starts_with("--") => args.spec = Some(spec.parse().map_err(|e| format!("{e}"))?),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(args)
}

fn run(args: &Args, spec: &TestSpec, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let selection = select_engine(args.engine)?;
    let size_bytes = std::fs::metadata(path)?.len();
    let file = Arc::new(open_for_io(path, args.direct, spec.write_sync == WriteSync::Dsync)?);
    let cancel = AtomicBool::new(false);
    let job = |limit| {
        run_job(&JobConfig {
            spec,
            file: &file,
            path,
            region: Region { offset_bytes: 0, len_bytes: size_bytes },
            limit,
            engine: selection.kind,
            seed: 1,
            cancel: &cancel,
            window: None,
        })
    };
    if !args.warmup.is_zero() {
        job(RunLimit::Duration(args.warmup))?;
    }
    let result = job(RunLimit::Duration(args.duration))?;
    let sample = result.sample();
    if args.json {
        let output = serde_json::json!({
            "test": spec.id(),
            "engine": result.engine_detail,
            "fallback_reason": selection.fallback_reason,
            "iops": sample.iops,
            "mb_per_s": sample.mb_per_s,
            "latency_us": sample.latency,
            "cpu_per_io_us": sample.cpu_per_io_us,
            "ops": sample.ops,
            "elapsed_ms": sample.elapsed_ms,
        });
        println!("{output}");
    } else {
        println!(
            "{}  {:.0} IOPS  {:.1} MB/s  latency mean {:.1} us p99 {:.1} us max {:.1} us  CPU {:.2} us/IO  [{}]",
            spec.id(),
            sample.iops,
            sample.mb_per_s,
            sample.latency.mean_us,
            sample.latency.p99_us,
            sample.latency.max_us,
            sample.cpu_per_io_us,
            result.engine_detail
        );
    }
    Ok(())
}

fn prepare(args: &Args) -> Result<TestFile, Box<dyn std::error::Error>> {
    let selection = select_engine(args.engine)?;
    let file = TestFile::create(&args.dir, args.size_bytes, args.direct)?;
    file.fill(selection.kind, args.direct, &AtomicBool::new(false), &mut |_, _| {})?;
    Ok(file)
}

fn main() {
    let outcome = parse_args().map_err(Box::<dyn std::error::Error>::from).and_then(|args| {
        let spec = || args.spec.clone().ok_or("give a test, e.g. rnd:4k:q32:t1:read");
        match args.command.as_str() {
            "prepare" => {
                println!("{}", prepare(&args)?.keep().display());
                Ok(())
            }
            "run" => {
                let path = args.file.clone().ok_or("run needs --file PATH (from iobench prepare)")?;
                let named = path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("envbench-"));
                if !named {
                    return Err(format!("{}: not an envbench test file (envbench-*.dat)", path.display()).into());
                }
                run(&args, &spec()?, &path)
            }
            _ => {
                let spec = spec()?;
                let file = prepare(&args)?;
                run(&args, &spec, file.path())
            }
        }
    });
    if let Err(error) = outcome {
        eprintln!("iobench: {error}");
        std::process::exit(1);
    }
}
