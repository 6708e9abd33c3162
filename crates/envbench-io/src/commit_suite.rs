//! `envbench disk --profile commit`: what a database commit costs here. Every write size (2, 8 and 16 KiB) by every
//! sync method, appended and overwriting, by one committer (like `pg_test_fsync`, with percentiles); then the group
//! commit curve: 1 to 16 committers sharing one log, and each with its own; and the durability rules applied to the
//! storage the fingerprint saw.

use crate::WORKLOAD;
use crate::commit::{CommitOutcome, CommitSpec, Placement, SyncMethod, run_commit_test};
use crate::durability::{self, Concern, NOT_DURABLE_FLAG, SyncFigures};
use envbench_core::model::{Direction, ResultRecord};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::workload::{Envelope, Measured, Planned, RunContext, ScalingCurve, ScalingPoint, WorkloadError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The attachment key of a commit run.
pub const COMMIT_ATTACHMENT: &str = "commit";
/// Write sizes a database's log commits in.
pub const WRITE_SIZES: [usize; 3] = [2048, 8192, 16384];
/// Committer counts of the group-commit curve.
pub const COMMITTERS: [u32; 5] = [1, 2, 4, 8, 16];
/// The write of the group-commit curve: 8 KiB appended with fdatasync, PostgreSQL's WAL on Linux.
const CURVE_BYTES: usize = 8192;

/// The test id of one commit test.
pub fn test_id(spec: &CommitSpec) -> String {
    let kib = spec.write_bytes / 1024;
    let placement = match spec.placement {
        Placement::Append => "append",
        Placement::Overwrite => "overwrite",
    };
    if spec.committers == 1 && !spec.shared_log {
        format!("COMMIT {kib}K {} {placement}", spec.method.name())
    } else {
        let log = if spec.shared_log { "one log" } else { "own logs" };
        format!("GROUP {kib}K {} {log} C={}", spec.method.name(), spec.committers)
    }
}

/// The tests of the commit profile, each running `duration`.
pub fn commit_tests(duration: Duration) -> Vec<CommitSpec> {
    let mut tests = Vec::new();
    for write_bytes in WRITE_SIZES {
        for method in SyncMethod::ALL {
            for placement in [Placement::Append, Placement::Overwrite] {
                let spec = CommitSpec { method, write_bytes, placement, committers: 1, shared_log: false, duration };
                if crate::commit::check(&spec).is_ok() {
                    tests.push(spec);
                }
            }
        }
    }
    for shared_log in [true, false] {
        for committers in COMMITTERS.into_iter().filter(|c| *c > 1) {
            tests.push(CommitSpec {
                method: SyncMethod::Fdatasync,
                write_bytes: CURVE_BYTES,
                placement: Placement::Append,
                committers,
                shared_log,
                duration,
            });
        }
    }
    tests
}

/// What a commit run keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommitDocument {
    pub directory: PathBuf,
    pub outcomes: Vec<CommitOutcome>,
    /// Tests the storage refused (O_DIRECT on tmpfs), with the reason.
    pub skipped: Vec<(String, String)>,
    /// The median latency of the same 8 KiB write without a flush, the reference of the free-flush rule.
    pub plain_p50_us: Option<f64>,
    pub concerns: Vec<Concern>,
}

impl CommitDocument {
    /// The group-commit curve of one log: (committers, commits/s, p99 us), C=1 from the single-committer test.
    pub fn curve(&self, shared_log: bool) -> Vec<(u32, f64, f64)> {
        let single = self.outcomes.iter().find(|o| {
            o.spec.committers == 1
                && o.spec.method == SyncMethod::Fdatasync
                && o.spec.write_bytes == CURVE_BYTES
                && o.spec.placement == Placement::Append
        });
        single
            .into_iter()
            .chain(self.outcomes.iter().filter(|o| o.spec.committers > 1 && o.spec.shared_log == shared_log))
            .map(|o| (o.spec.committers, o.commits_per_s, o.p99_us))
            .collect()
    }
}

/// A planned commit run.
pub struct CommitRun {
    pub directory: PathBuf,
    pub tests: Vec<CommitSpec>,
}

impl Planned for CommitRun {
    fn data_dir(&self) -> &Path {
        &self.directory
    }

    fn announce(&self) -> Option<String> {
        let seconds: f64 = self.tests.iter().map(|t| t.duration.as_secs_f64()).sum();
        Some(format!(
            "envbench disk --profile commit: {} commit tests in {}, about {:.0} s",
            self.tests.len(),
            self.directory.display(),
            seconds
        ))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let mut outcomes = Vec::new();
        let mut skipped = Vec::new();
        let count = self.tests.len();
        for (index, spec) in self.tests.iter().enumerate() {
            if context.interrupted() {
                return Err(WorkloadError::interrupted());
            }
            let id = test_id(spec);
            context.progress.update(&format!("[{}/{count}] {id}", index + 1));
            context.steps.step_started(&id);
            let outcome = run_commit_test(&self.directory, spec, context.interrupt);
            context.steps.step_finished(&id);
            match outcome {
                Ok(outcome) => {
                    context.progress.line(&format!(
                        "[{}/{count}] {id}: {} commits/s, p99 {:.0} us",
                        index + 1,
                        number(outcome.commits_per_s),
                        outcome.p99_us
                    ));
                    outcomes.push(outcome);
                }
                // O_DIRECT where the file system has no direct I/O (tmpfs): the other methods still tell.
                Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {
                    skipped.push((id, format!("the file system refused it ({error})")));
                }
                Err(error) => {
                    return Err(WorkloadError::failure(format!("{}: {id}: {error}", self.directory.display())));
                }
            }
        }
        if context.interrupted() {
            return Err(WorkloadError::interrupted());
        }
        // The same write without a flush: what the free-flush rule compares with.
        let plain = run_commit_test(
            &self.directory,
            &CommitSpec {
                method: SyncMethod::Buffered,
                write_bytes: CURVE_BYTES,
                placement: Placement::Append,
                committers: 1,
                shared_log: false,
                duration: Duration::from_millis(500),
            },
            context.interrupt,
        )
        .ok()
        .map(|o| o.p50_us);
        let reference = outcomes
            .iter()
            .find(|o| {
                o.spec.committers == 1 && o.spec.method == SyncMethod::Fdatasync && o.spec.write_bytes == CURVE_BYTES
            })
            .map(|o| o.p50_us);
        let concerns = match (&context.fingerprint.storage, reference) {
            (Some(stack), Some(sync_p50_us)) => {
                durability::concerns(stack, &SyncFigures { sync_p50_us, plain_p50_us: plain })
            }
            _ => Vec::new(),
        };
        Ok(Box::new(CommitMeasured {
            document: CommitDocument {
                directory: self.directory.clone(),
                outcomes,
                skipped,
                plain_p50_us: plain,
                concerns,
            },
        }))
    }
}

struct CommitMeasured {
    document: CommitDocument,
}

impl Measured for CommitMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let flags: Vec<String> =
            if self.document.concerns.is_empty() { Vec::new() } else { vec![NOT_DURABLE_FLAG.to_string()] };
        let mut records = Vec::new();
        for outcome in &self.document.outcomes {
            let spec = &outcome.spec;
            let parameters = json!({
                "profile": "commit",
                "method": spec.method.name(),
                "write_bytes": spec.write_bytes,
                "placement": spec.placement,
                "committers": spec.committers,
                "shared_log": spec.shared_log,
                "duration_s": spec.duration.as_secs_f64(),
            });
            let mut push = |metric: &str, unit: &str, direction: Direction, value: f64| {
                records.push(ResultRecord {
                    workload: WORKLOAD.to_string(),
                    workload_version: crate::WORKLOAD_VERSION,
                    test_id: test_id(spec),
                    parameters: parameters.clone(),
                    metric: metric.to_string(),
                    unit: unit.to_string(),
                    direction,
                    samples: vec![value],
                    flags: flags.clone(),
                });
            };
            push("commits_per_s", "commits/s", Direction::HigherIsBetter, outcome.commits_per_s);
            push("latency_p50", "us", Direction::LowerIsBetter, outcome.p50_us);
            push("latency_p99", "us", Direction::LowerIsBetter, outcome.p99_us);
            push("latency_p99_9", "us", Direction::LowerIsBetter, outcome.p999_us);
            push("latency_max", "us", Direction::LowerIsBetter, outcome.max_us);
        }
        records
    }

    fn attachment(&self) -> Option<Value> {
        Some(json!({ COMMIT_ATTACHMENT: &self.document }))
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        envelope.wrap([(COMMIT_ATTACHMENT, json!(&self.document))])
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(&self.document)
    }

    fn warnings(&self, _series: &SamplerSeries) -> Vec<String> {
        durability::explain(&self.document.concerns)
            .map(|text| format!("every commit result is flagged {NOT_DURABLE_FLAG}: {text}"))
            .into_iter()
            .collect()
    }
}

/// The commit table, the group-commit curve and the durability verdict.
pub fn render(document: &CommitDocument) -> String {
    let mut out = heading(&format!("Commit latency in {}", document.directory.display()));
    out.push('\n');
    let headers = ["TEST", "COMMITS/s", "MEAN us", "P50 us", "P99 us", "P99.9 us", "MAX us", "COMMITS/FLUSH"];
    let mut aligns = vec![Align::Right; headers.len()];
    aligns[0] = Align::Left;
    let mut table = Table::new(&headers, &aligns);
    for outcome in &document.outcomes {
        table.row(vec![
            test_id(&outcome.spec),
            number(outcome.commits_per_s),
            format!("{:.0}", outcome.mean_us),
            format!("{:.0}", outcome.p50_us),
            format!("{:.0}", outcome.p99_us),
            format!("{:.0}", outcome.p999_us),
            format!("{:.0}", outcome.max_us),
            format!("{:.2}", outcome.commits_per_flush()),
        ]);
    }
    out.push_str(&table.render());
    for (id, reason) in &document.skipped {
        out.push_str(&format!("{id}: skipped, {reason}\n"));
    }
    out.push_str(&heading("Group commit: 8 KiB fdatasync appends, commits/s (p99 us) by committers"));
    out.push('\n');
    for (shared_log, name) in [(true, "one shared log"), (false, "a log each")] {
        let points: Vec<String> = document
            .curve(shared_log)
            .iter()
            .map(|(c, rate, p99)| format!("C={c} {} ({p99:.0})", number(*rate)))
            .collect();
        out.push_str(&format!("  {name}: {}\n", points.join(", ")));
    }
    match durability::explain(&document.concerns) {
        Some(text) => out.push_str(&format!("Durability: POSSIBLY NOT DURABLE: {text}.\n")),
        None => out.push_str("Durability: no sign that sync writes skip stable storage.\n"),
    }
    out
}

/// The group-commit curve of a stored commit run, for the report.
pub fn scaling(document: &CommitDocument) -> Option<ScalingCurve> {
    let points: Vec<ScalingPoint> = document
        .curve(true)
        .into_iter()
        .map(|(c, rate, p99)| ScalingPoint { concurrency: f64::from(c), throughput: rate, latency: p99 })
        .collect();
    (points.len() > 1).then(|| ScalingCurve {
        concurrency_label: "committers on one log".into(),
        concurrency_symbol: "C".into(),
        throughput_label: "commits/s".into(),
        latency_label: "commit p99".into(),
        latency_unit: "us".into(),
        points,
        knee: None,
        latency_target: None,
    })
}
