//! `--cross-check fio`: the fio job equivalent to a test, run on the same file, with fio's JSON read back into the
//! same [`RunSample`] shape so both can be shown side by side.
//!
//! Equivalence: same file, block size, queue depth, threads (`numjobs`, each thread its own share of the file for
//! sequential tests via `offset_increment`), read/write mix, durability (`fdatasync=N`, `sync=dsync`), O_DIRECT, and
//! uniform random offsets with replacement (`norandommap`). The engine matches ours: io_uring, or for the thread
//! pool psync at depth 1 and posixaio (glibc's thread-pool AIO) above. fio reports fdatasync latency apart from
//! writes; to compare with our commit latency its mean is added to the write mean (per synced write), while the
//! percentiles are those of the writes alone.

use crate::engine::EngineKind;
use crate::runner::RunSample;
use crate::spec::{Operation, Pattern, TestSpec, WriteSync};
use envbench_base::latency::LatencySummary;
use serde_json::Value;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Why the cross-check did not produce figures.
#[derive(Debug, thiserror::Error)]
pub enum CrossCheckError {
    #[error(
        "fio is not installed (not found on PATH); install it (e.g. apt-get install fio) or run without --cross-check fio"
    )]
    NotInstalled,
    #[error("fio could not be started: {0}")]
    Spawn(io::Error),
    #[error("fio failed ({status}): {stderr}")]
    Failed { status: String, stderr: String },
    #[error("fio's JSON output could not be read: {0}")]
    Output(String),
    #[error("interrupted")]
    Interrupted,
}

/// What the fio job must match.
#[derive(Clone, Copy, Debug)]
pub struct FioJob<'a> {
    pub spec: &'a TestSpec,
    pub path: &'a Path,
    pub file_size_bytes: u64,
    pub direct: bool,
    pub engine: EngineKind,
    pub duration: Duration,
}

/// fio's arguments (without the program name) for the job.
pub fn fio_args(job: &FioJob<'_>) -> Vec<String> {
    let spec = job.spec;
    let rw = match (spec.pattern, spec.operation) {
        (Pattern::Sequential, Operation::Read) => "read",
        (Pattern::Sequential, Operation::Write) => "write",
        (Pattern::Sequential, Operation::Mixed { .. }) => "rw",
        (Pattern::Random, Operation::Read) => "randread",
        (Pattern::Random, Operation::Write) => "randwrite",
        (Pattern::Random, Operation::Mixed { .. }) => "randrw",
    };
    let ioengine = match (job.engine, spec.queue_depth) {
        (EngineKind::IoUring, _) => "io_uring",
        (EngineKind::ThreadPool, 1) => "psync",
        (EngineKind::ThreadPool, _) => "posixaio",
    };
    // fio separates file names with ':'; a literal one is written '\:'.
    let filename = job.path.display().to_string().replace(':', "\\:");
    let mut args = vec![
        "--name=envbench-cross-check".to_string(),
        format!("--filename={filename}"),
        format!("--ioengine={ioengine}"),
        format!("--direct={}", u8::from(job.direct)),
        format!("--rw={rw}"),
        format!("--bs={}", spec.block_bytes),
        format!("--iodepth={}", spec.queue_depth),
        format!("--numjobs={}", spec.threads),
    ];
    if let Operation::Mixed { read_percent } = spec.operation {
        args.push(format!("--rwmixread={read_percent}"));
        // One set of figures for reads and writes together, as ours.
        args.push("--unified_rw_reporting=mixed".into());
    }
    match spec.pattern {
        Pattern::Sequential if spec.threads > 1 => {
            let share = job.file_size_bytes / u64::from(spec.threads) / spec.block_bytes * spec.block_bytes;
            args.push(format!("--size={share}"));
            args.push(format!("--offset_increment={share}"));
        }
        _ => args.push(format!("--size={}", job.file_size_bytes / spec.block_bytes * spec.block_bytes)),
    }
    match spec.write_sync {
        WriteSync::None => {}
        WriteSync::Fsync { every } => args.push(format!("--fdatasync={every}")),
        WriteSync::Dsync => args.push("--sync=dsync".into()),
    }
    args.extend([
        "--time_based=1".to_string(),
        format!("--runtime={}ms", job.duration.as_millis().max(1)),
        "--randrepeat=0".into(),
        "--norandommap=1".into(),
        "--group_reporting=1".into(),
        "--lat_percentiles=1".into(),
        "--percentile_list=50:90:99:99.9".into(),
        // Never create, extend or preallocate: the file is envbench's and already filled.
        "--allow_file_create=0".into(),
        "--fallocate=none".into(),
        "--output-format=json".into(),
    ]);
    args
}

/// The command line as a user could paste it into a shell.
pub fn command_line(args: &[String]) -> String {
    let quoted = args.iter().map(|arg| {
        if arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=./:,".contains(&b)) {
            arg.clone()
        } else {
            format!("'{}'", arg.replace('\'', "'\\''"))
        }
    });
    std::iter::once("fio".to_string()).chain(quoted).collect::<Vec<_>>().join(" ")
}

/// fio's version (`fio-3.33`), or [`CrossCheckError::NotInstalled`].
pub fn fio_version() -> Result<String, CrossCheckError> {
    let output = Command::new("fio").arg("--version").output().map_err(spawn_error)?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn spawn_error(error: io::Error) -> CrossCheckError {
    if error.kind() == io::ErrorKind::NotFound { CrossCheckError::NotInstalled } else { CrossCheckError::Spawn(error) }
}

/// Run fio with `args` (from [`fio_args`]) and read its figures; killed when `cancel` is set.
pub fn run_fio(args: &[String], spec: &TestSpec, cancel: &AtomicBool) -> Result<RunSample, CrossCheckError> {
    let mut child = Command::new("fio")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read_all(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = read_all(Box::new(child.stderr.take().expect("stderr is piped")));
    let status = loop {
        if cancel.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(CrossCheckError::Interrupted);
        }
        match child.try_wait().map_err(CrossCheckError::Spawn)? {
            Some(status) => break status,
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(CrossCheckError::Failed { status: status.to_string(), stderr: stderr.trim().to_string() });
    }
    parse_fio_json(&stdout, spec)
}

/// Read fio's `--output-format=json` (with `--group_reporting`) into our figures.
pub fn parse_fio_json(text: &str, spec: &TestSpec) -> Result<RunSample, CrossCheckError> {
    // fio may print warnings before the JSON document.
    let start = text.find('{').ok_or_else(|| CrossCheckError::Output("no JSON document in fio's output".into()))?;
    let document: Value = serde_json::from_str(&text[start..]).map_err(|e| CrossCheckError::Output(e.to_string()))?;
    let job = document
        .get("jobs")
        .and_then(|jobs| jobs.get(0))
        .ok_or_else(|| CrossCheckError::Output("no jobs in fio's output".into()))?;
    let number = |value: &Value, key: &str| value.get(key).and_then(Value::as_f64);
    let section_name = match spec.operation {
        Operation::Read => "read",
        Operation::Write => "write",
        Operation::Mixed { .. } => "mixed",
    };
    let section = job
        .get(section_name)
        .ok_or_else(|| CrossCheckError::Output(format!("fio's output has no '{section_name}' figures")))?;
    let missing = |what: &str| CrossCheckError::Output(format!("fio's '{section_name}' figures have no {what}"));
    let ops = number(section, "total_ios").ok_or_else(|| missing("total_ios"))?;
    let bytes = number(section, "io_bytes").ok_or_else(|| missing("io_bytes"))?;
    let lat = section.get("lat_ns").ok_or_else(|| missing("lat_ns"))?;
    let percentile =
        |key: &str| lat.get("percentile").and_then(|p| p.get(key)).and_then(Value::as_f64).unwrap_or(f64::NAN) / 1000.0;
    let mut mean_us = number(lat, "mean").ok_or_else(|| missing("lat_ns.mean"))? / 1000.0;
    if let Some(sync) = job.get("sync").and_then(|s| s.get("lat_ns")) {
        let syncs = number(sync, "N").unwrap_or(0.0);
        if syncs > 0.0 && ops > 0.0 {
            mean_us += number(sync, "mean").unwrap_or(0.0) / 1000.0 * syncs / ops;
        }
    }
    let cpu_percent = number(job, "usr_cpu").unwrap_or(0.0) + number(job, "sys_cpu").unwrap_or(0.0);
    // usr_cpu/sys_cpu are percent of the jobs' summed runtime (job_runtime, ms, summed over numjobs).
    let cpu_us = cpu_percent / 100.0 * number(job, "job_runtime").unwrap_or(0.0) * 1000.0;
    Ok(RunSample {
        elapsed_ms: number(section, "runtime").unwrap_or(0.0),
        ops: ops as u64,
        bytes: bytes as u64,
        iops: number(section, "iops").ok_or_else(|| missing("iops"))?,
        mb_per_s: number(section, "bw_bytes").ok_or_else(|| missing("bw_bytes"))? / 1e6,
        latency: LatencySummary {
            count: number(lat, "N").unwrap_or(ops) as u64,
            mean_us,
            p50_us: percentile("50.000000"),
            p90_us: percentile("90.000000"),
            p99_us: percentile("99.000000"),
            p99_9_us: percentile("99.900000"),
            max_us: number(lat, "max").unwrap_or(f64::NAN) / 1000.0,
        },
        cpu_per_io_us: if ops > 0.0 { cpu_us / ops } else { 0.0 },
        threads: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineChoice, select_engine};
    use crate::testfile::TestFile;
    use crate::testing::scratch_dir;

    fn job<'a>(spec: &'a TestSpec, engine: EngineKind) -> FioJob<'a> {
        FioJob {
            spec,
            path: Path::new("/data/envbench-1.dat"),
            file_size_bytes: 1 << 30,
            direct: true,
            engine,
            duration: Duration::from_secs(5),
        }
    }

    fn args_for(text: &str, engine: EngineKind) -> Vec<String> {
        fio_args(&job(&text.parse().unwrap(), engine))
    }

    #[test]
    fn random_read_maps_to_randread_on_io_uring() {
        let args = args_for("rnd:4k:q32:t1:read", EngineKind::IoUring);
        for expected in [
            "--filename=/data/envbench-1.dat",
            "--ioengine=io_uring",
            "--direct=1",
            "--rw=randread",
            "--bs=4096",
            "--iodepth=32",
            "--numjobs=1",
            "--size=1073741824",
            "--time_based=1",
            "--runtime=5000ms",
            "--group_reporting=1",
            "--output-format=json",
            "--norandommap=1",
        ] {
            assert!(args.iter().any(|arg| arg == expected), "{expected} missing from {args:?}");
        }
        assert!(!args.iter().any(|arg| arg.starts_with("--rwmixread") || arg.starts_with("--offset_increment")));
    }

    #[test]
    fn sequential_threads_get_their_own_share() {
        let args = args_for("seq:1m:q8:t4:write", EngineKind::IoUring);
        assert!(args.contains(&"--rw=write".to_string()));
        assert!(args.contains(&"--numjobs=4".to_string()));
        assert!(args.contains(&format!("--size={}", 256 << 20)));
        assert!(args.contains(&format!("--offset_increment={}", 256 << 20)));
    }

    #[test]
    fn mix_durability_and_engine_map() {
        let args = args_for("rnd:8k:q16:t1:mix70", EngineKind::IoUring);
        assert!(args.contains(&"--rw=randrw".to_string()));
        assert!(args.contains(&"--rwmixread=70".to_string()));
        assert!(args.contains(&"--unified_rw_reporting=mixed".to_string()));

        let args = args_for("seq:16k:q1:t1:write:fsync1", EngineKind::ThreadPool);
        assert!(args.contains(&"--fdatasync=1".to_string()));
        assert!(args.contains(&"--ioengine=psync".to_string()));

        let args = args_for("seq:16k:q4:t1:write:dsync", EngineKind::ThreadPool);
        assert!(args.contains(&"--sync=dsync".to_string()));
        assert!(args.contains(&"--ioengine=posixaio".to_string()));
    }

    #[test]
    fn file_names_with_colons_are_escaped_and_quoted_for_display() {
        let spec: TestSpec = "rnd:4k:q1:t1:read".parse().unwrap();
        let mut fio_job = job(&spec, EngineKind::IoUring);
        fio_job.path = Path::new("/mnt/a:b/it's.dat");
        let args = fio_args(&fio_job);
        assert!(args.contains(&"--filename=/mnt/a\\:b/it's.dat".to_string()));
        assert!(command_line(&args).contains("'--filename=/mnt/a\\:b/it'\\''s.dat'"), "{}", command_line(&args));
        assert!(command_line(&args).starts_with("fio --name=envbench-cross-check "));
    }

    #[test]
    fn parses_fio_json() {
        let text = r#"fio: some warning
        {"jobs": [{"usr_cpu": 10.0, "sys_cpu": 40.0, "job_runtime": 2000,
          "read": {"io_bytes": 409600000, "bw_bytes": 204800000, "iops": 50000.0, "total_ios": 100000,
                   "runtime": 2000,
                   "lat_ns": {"min": 1000, "max": 900000, "mean": 25000.0, "N": 100000,
                              "percentile": {"50.000000": 20000, "90.000000": 40000, "99.000000": 80000,
                                             "99.900000": 120000}}}}]}"#;
        let spec: TestSpec = "rnd:4k:q1:t1:read".parse().unwrap();
        let sample = parse_fio_json(text, &spec).unwrap();
        assert_eq!(sample.ops, 100_000);
        assert_eq!(sample.iops, 50_000.0);
        assert_eq!(sample.mb_per_s, 204.8);
        assert_eq!(sample.latency.mean_us, 25.0);
        assert_eq!(sample.latency.p50_us, 20.0);
        assert_eq!(sample.latency.p99_9_us, 120.0);
        assert_eq!(sample.latency.max_us, 900.0);
        // 50% of 2 s of CPU = 1 s over 100 000 I/Os = 10 us each.
        assert!((sample.cpu_per_io_us - 10.0).abs() < 1e-9);
        let error = parse_fio_json("garbage", &spec).unwrap_err();
        assert!(matches!(error, CrossCheckError::Output(_)));
        let write: TestSpec = "rnd:4k:q1:t1:write".parse().unwrap();
        assert!(parse_fio_json(text, &write).unwrap_err().to_string().contains("no 'write' figures"));
    }

    #[test]
    fn fio_runs_on_our_file_or_says_it_is_missing() {
        let spec: TestSpec = "rnd:4k:q4:t1:read".parse().unwrap();
        let dir = scratch_dir("fio");
        let file = TestFile::create(&dir, 8 << 20, true).unwrap();
        let never = AtomicBool::new(false);
        let engine = select_engine(EngineChoice::Auto).unwrap().kind;
        file.fill(engine, true, &never, &mut |_, _| {}).unwrap();
        let args = fio_args(&FioJob {
            spec: &spec,
            path: file.path(),
            file_size_bytes: file.size_bytes(),
            direct: true,
            engine,
            duration: Duration::from_millis(300),
        });
        match fio_version() {
            Ok(_) => {
                let sample = run_fio(&args, &spec, &never).unwrap();
                assert!(sample.ops > 0 && sample.iops > 0.0, "{sample:?}");
                assert!(sample.latency.mean_us > 0.0 && sample.latency.p99_us >= sample.latency.p50_us);
                assert!(sample.cpu_per_io_us > 0.0);
            }
            Err(error) => {
                assert!(matches!(error, CrossCheckError::NotInstalled));
                let error = run_fio(&args, &spec, &never).unwrap_err();
                assert!(error.to_string().starts_with("fio is not installed"), "{error}");
            }
        }
        // fio must not have created, grown or replaced anything.
        assert_eq!(std::fs::metadata(file.path()).unwrap().len(), 8 << 20);
    }
}
