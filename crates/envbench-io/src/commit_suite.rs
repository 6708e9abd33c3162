//! `envbench disk --profile commit`: what a database commit costs here. Every write size (2, 8 and 16 KiB) by every
//! sync method, appended and overwriting, by one committer (like `pg_test_fsync`, with percentiles); then the group
//! commit curve: 1 to 16 committers sharing one log, and each with its own; and the durability rules applied to the
//! storage the fingerprint saw.

use crate::commit::{CommitOutcome, CommitSpec, Placement, RewriteFile, SyncMethod, run_commit_test, run_rewrite_test};
use crate::durability::{self, Concern, NOT_DURABLE_FLAG, SyncFigures};
use crate::records::TestRecords;
use envbench_core::model::{Direction, ResultRecord};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::workload::{Measured, Planned, RunContext, ScalingCurve, ScalingPoint, WorkloadError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The flag of pg_test_fsync's own figures.
pub const PG_TEST_FSYNC_FLAG: &str = "pg_test_fsync-cross-check";
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
        Placement::Rewrite => "rewrite",
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
    /// `pg_test_fsync`'s figures beside envbench's, when `--cross-check pg_test_fsync` asked for them.
    #[serde(default)]
    pub pg_test_fsync: Vec<PgTestFsync>,
}

/// One method both tools measure: pg_test_fsync's "one 8kB write" figure and envbench's 8 KiB overwrite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgTestFsync {
    /// pg_test_fsync's name of the method (`open_datasync`, `fdatasync`, `fsync`).
    pub method: String,
    /// envbench's test it matches.
    pub test_id: String,
    pub theirs_ops_per_s: f64,
    pub ours_ops_per_s: f64,
    /// Rounds each figure is the median of.
    #[serde(default)]
    pub rounds: u32,
    /// The median of the rounds' own ratios (envbench over pg_test_fsync, each round's pair run minutes apart at
    /// most): what the comparison says.
    #[serde(default)]
    pub ratio: f64,
    /// The lowest and highest round ratio.
    #[serde(default)]
    pub ratio_range: (f64, f64),
    /// Every round's ratio, in the order the rounds ran (to pool several runs' rounds).
    #[serde(default)]
    pub round_ratios: Vec<f64>,
    /// How much pg_test_fsync disagreed with itself between rounds: (highest - lowest) / median, in percent. A
    /// difference between the tools smaller than this is the storage's noise, not the tools'.
    #[serde(default)]
    pub theirs_spread_percent: f64,
}

/// pg_test_fsync's methods of "one 8kB write" and envbench's of the same: it rewrites the first 8 kB of a
/// preallocated file, and its `open_datasync` is `O_DIRECT|O_DSYNC` where the platform has O_DIRECT. envbench runs
/// these rewrite tests only for the cross-check (its own overwrite tests move through the file, as a WAL does).
const PG_TEST_FSYNC_METHODS: [(&str, SyncMethod); 3] =
    [("open_datasync", SyncMethod::OdirectOdsync), ("fdatasync", SyncMethod::Fdatasync), ("fsync", SyncMethod::Fsync)];

/// Rounds of the pg_test_fsync cross-check.
pub const CROSS_CHECK_ROUNDS: usize = 5;

/// envbench's test of a pg_test_fsync method.
fn rewrite_spec(method: SyncMethod, duration: Duration) -> CommitSpec {
    CommitSpec { method, write_bytes: 8192, placement: Placement::Rewrite, committers: 1, shared_log: false, duration }
}

/// The ops/s of each method in pg_test_fsync's "one 8kB write" section.
pub fn parse_pg_test_fsync(output: &str) -> Vec<(String, f64)> {
    let mut in_section = false;
    let mut out = Vec::new();
    for line in output.lines() {
        if line.starts_with("Compare file sync methods using one 8kB write") {
            in_section = true;
            continue;
        }
        if in_section && line.trim().is_empty() && !out.is_empty() {
            break;
        }
        let mut words = line.split_whitespace();
        if let (true, Some(method), Some(ops), Some("ops/sec")) = (in_section, words.next(), words.next(), words.next())
            && let Ok(ops) = ops.parse::<f64>()
        {
            out.push((method.to_string(), ops));
        }
    }
    out
}

/// Run pg_test_fsync in `dir` (its file named by envbench and removed afterwards) for `seconds` per test.
fn run_pg_test_fsync(program: &Path, dir: &Path, seconds: u64) -> Result<Vec<(String, f64)>, String> {
    let file = dir.join(format!(".envbench-pg_test_fsync-{}.out", std::process::id()));
    let output =
        std::process::Command::new(program).arg("-f").arg(&file).args(["-s", &seconds.max(1).to_string()]).output();
    let _ = std::fs::remove_file(&file);
    let output = output.map_err(|e| format!("{}: cannot run it ({e})", program.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "pg_test_fsync failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let figures = parse_pg_test_fsync(&text);
    if figures.is_empty() {
        return Err(format!("pg_test_fsync printed no one-write figures:\n{text}"));
    }
    Ok(figures)
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
    /// pg_test_fsync, when the user asked for the cross-check.
    pub pg_test_fsync: Option<PathBuf>,
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
        Ok(Box::new(self.measure(context)?))
    }
}

impl CommitRun {
    /// Run every commit test, the reference write and the cross-check, and apply the durability rules.
    pub(crate) fn measure(&self, context: &RunContext<'_>) -> Result<CommitMeasured, WorkloadError> {
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
        let cross_check = match &self.pg_test_fsync {
            Some(program) => {
                let duration = self.tests.first().map_or(Duration::from_secs(1), |t| t.duration);
                let (ours, checks) = self.cross_check(program, duration, context, &mut skipped)?;
                outcomes.extend(ours);
                checks
            }
            None => Vec::new(),
        };
        Ok(CommitMeasured {
            document: CommitDocument {
                directory: self.directory.clone(),
                outcomes,
                skipped,
                plain_p50_us: plain,
                concerns,
                pg_test_fsync: cross_check,
            },
        })
    }
}

impl CommitRun {
    /// pg_test_fsync's one-write methods against envbench's same rewrite tests, in [`CROSS_CHECK_ROUNDS`] rounds that
    /// alternate which tool goes first, so a disk whose flush time drifts (by 10% and more between runs a minute
    /// apart on a shared virtual disk) does not favour either; each side's figure is its median round. Returns
    /// envbench's median outcomes and the comparisons.
    fn cross_check(
        &self,
        program: &Path,
        duration: Duration,
        context: &RunContext<'_>,
        skipped: &mut Vec<(String, String)>,
    ) -> Result<(Vec<CommitOutcome>, Vec<PgTestFsync>), WorkloadError> {
        let seconds = duration.as_secs().max(1);
        let methods = PG_TEST_FSYNC_METHODS.len();
        let mut ours: Vec<Vec<Option<CommitOutcome>>> = vec![vec![None; CROSS_CHECK_ROUNDS]; methods];
        let mut theirs: Vec<Vec<Option<f64>>> = vec![vec![None; CROSS_CHECK_ROUNDS]; methods];
        for round in 0..CROSS_CHECK_ROUNDS {
            let envbench_first = round % 2 == 0;
            for envbench_turn in [envbench_first, !envbench_first] {
                if context.interrupted() {
                    return Err(WorkloadError::interrupted());
                }
                if envbench_turn {
                    // One preallocated file for the three methods, as pg_test_fsync has.
                    let file = RewriteFile::create(&self.directory).map_err(|e| {
                        WorkloadError::failure(format!(
                            "{}: cannot create the rewrite file ({e})",
                            self.directory.display()
                        ))
                    })?;
                    for (index, (_, method)) in PG_TEST_FSYNC_METHODS.iter().enumerate() {
                        let spec = rewrite_spec(*method, duration);
                        context.progress.update(&format!(
                            "round {}/{CROSS_CHECK_ROUNDS}: {}",
                            round + 1,
                            test_id(&spec)
                        ));
                        match run_rewrite_test(&file, &spec, context.interrupt) {
                            Ok(outcome) => ours[index][round] = Some(outcome),
                            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {
                                if round == 0 {
                                    skipped.push((test_id(&spec), format!("the file system refused it ({error})")));
                                }
                            }
                            Err(error) => return Err(WorkloadError::failure(format!("{}: {error}", test_id(&spec)))),
                        }
                    }
                } else {
                    context.progress.line(&format!(
                        "round {}/{CROSS_CHECK_ROUNDS}: pg_test_fsync -s {seconds} in {}",
                        round + 1,
                        self.directory.display()
                    ));
                    context.steps.step_started("pg_test_fsync");
                    let figures = run_pg_test_fsync(program, &self.directory, seconds);
                    context.steps.step_finished("pg_test_fsync");
                    for (method, ops) in figures.map_err(WorkloadError::failure)? {
                        if let Some(index) = PG_TEST_FSYNC_METHODS.iter().position(|(m, _)| *m == method) {
                            theirs[index][round] = Some(ops);
                        }
                    }
                }
            }
        }
        let mut medians = Vec::new();
        let mut checks = Vec::new();
        for (index, (method, _)) in PG_TEST_FSYNC_METHODS.iter().enumerate() {
            let mut runs: Vec<CommitOutcome> = ours[index].iter().flatten().cloned().collect();
            runs.sort_by(|a, b| a.commits_per_s.total_cmp(&b.commits_per_s));
            let mut figures: Vec<f64> = theirs[index].iter().flatten().copied().collect();
            figures.sort_by(f64::total_cmp);
            let round_ratios: Vec<f64> = ours[index]
                .iter()
                .zip(&theirs[index])
                .filter_map(|(ours, theirs)| Some(ours.as_ref()?.commits_per_s / theirs.filter(|t| *t > 0.0)?))
                .collect();
            let mut ratios = round_ratios.clone();
            ratios.sort_by(f64::total_cmp);
            let (Some(our_median), Some(their_median), Some(ratio)) =
                (runs.get(runs.len() / 2), figures.get(figures.len() / 2), median_of_sorted(&ratios))
            else {
                continue;
            };
            checks.push(PgTestFsync {
                method: method.to_string(),
                test_id: test_id(&our_median.spec),
                theirs_ops_per_s: *their_median,
                ours_ops_per_s: our_median.commits_per_s,
                rounds: ratios.len() as u32,
                ratio,
                ratio_range: (ratios[0], ratios[ratios.len() - 1]),
                round_ratios,
                theirs_spread_percent: (figures[figures.len() - 1] - figures[0]) / their_median.max(1e-9) * 100.0,
            });
            medians.push(our_median.clone());
        }
        Ok((medians, checks))
    }
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median_of_sorted(values: &[f64]) -> Option<f64> {
    match values.len() {
        0 => None,
        n if n % 2 == 1 => Some(values[n / 2]),
        n => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// A commit run's results.
pub(crate) struct CommitMeasured {
    pub(crate) document: CommitDocument,
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
            let id = test_id(spec);
            let test = TestRecords { test_id: &id, parameters: &parameters, flags: &flags };
            let mut push = |metric: &str, unit: &str, direction: Direction, value: f64| {
                records.push(test.record(metric, unit, direction, vec![value]));
            };
            push("commits_per_s", "commits/s", Direction::HigherIsBetter, outcome.commits_per_s);
            push("latency_p50", "us", Direction::LowerIsBetter, outcome.p50_us);
            push("latency_p99", "us", Direction::LowerIsBetter, outcome.p99_us);
            push("latency_p99_9", "us", Direction::LowerIsBetter, outcome.p999_us);
            push("latency_max", "us", Direction::LowerIsBetter, outcome.max_us);
        }
        let theirs = [PG_TEST_FSYNC_FLAG.to_string()];
        for check in &self.document.pg_test_fsync {
            let id = format!("pg_test_fsync {}", check.method);
            let parameters = json!({ "profile": "commit", "tool": "pg_test_fsync", "method": check.method });
            let test = TestRecords { test_id: &id, parameters: &parameters, flags: &theirs };
            records.push(test.record(
                "commits_per_s",
                "commits/s",
                Direction::HigherIsBetter,
                vec![check.theirs_ops_per_s],
            ));
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((COMMIT_ATTACHMENT, json!(&self.document)))
    }

    /// Kept under its key, so a db profile's run can hold it beside the suite's outcome.
    fn attachment(&self) -> Option<Value> {
        Some(json!({ COMMIT_ATTACHMENT: &self.document }))
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
    if !document.pg_test_fsync.is_empty() {
        let rounds = document.pg_test_fsync.iter().map(|c| c.rounds).max().unwrap_or(1);
        out.push_str(&heading(&format!(
            "Cross-check: pg_test_fsync, one 8 kB write (ops/s, median of {rounds} alternating round{}; RATIO is the \
             median of the rounds' ratios)",
            if rounds == 1 { "" } else { "s" }
        )));
        out.push('\n');
        let headers =
            ["PG_TEST_FSYNC METHOD", "ENVBENCH TEST", "PG_TEST_FSYNC", "ENVBENCH", "RATIO", "ROUNDS", "PG SPREAD"];
        let mut aligns = vec![Align::Right; headers.len()];
        aligns[0] = Align::Left;
        aligns[1] = Align::Left;
        let mut table = Table::new(&headers, &aligns);
        for check in &document.pg_test_fsync {
            table.row(vec![
                check.method.clone(),
                check.test_id.clone(),
                number(check.theirs_ops_per_s),
                number(check.ours_ops_per_s),
                format!("{:.2}", check.ratio),
                format!("{:.2}-{:.2}", check.ratio_range.0, check.ratio_range.1),
                format!("{:.0}%", check.theirs_spread_percent),
            ]);
        }
        out.push_str(&table.render());
        out.push_str(
            "PG SPREAD: how much pg_test_fsync's own rounds differed (highest - lowest, of the median); a difference \
             between the tools within it is the storage's noise.\n",
        );
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
        mark: envbench_core::workload::CurveMark::Knee,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_test_fsync_one_write_figures_are_read() {
        let output = "5 seconds per test\n\
O_DIRECT supported on this platform for open_datasync and open_sync.\n\n\
Compare file sync methods using one 8kB write:\n\
(in wal_sync_method preference order, except fdatasync is Linux's default)\n\
        open_datasync                      5234.567 ops/sec     191 usecs/op\n\
        fdatasync                          4986.123 ops/sec     201 usecs/op\n\
        fsync                              4321.000 ops/sec     231 usecs/op\n\
        fsync_writethrough                            n/a\n\
        open_sync                          4000.000 ops/sec     250 usecs/op\n\n\
Compare file sync methods using two 8kB writes:\n\
        open_datasync                      2000.000 ops/sec     500 usecs/op\n";
        let figures = parse_pg_test_fsync(output);
        assert_eq!(figures.len(), 4, "{figures:?}");
        assert_eq!(figures[0], ("open_datasync".to_string(), 5234.567));
        assert_eq!(figures[2], ("fsync".to_string(), 4321.0));
    }

    #[test]
    fn the_commit_profile_names_its_tests() {
        let tests = commit_tests(Duration::from_secs(1));
        let ids: Vec<String> = tests.iter().map(test_id).collect();
        assert!(ids.contains(&"COMMIT 2K fdatasync append".to_string()));
        assert!(ids.contains(&"GROUP 8K fdatasync one log C=16".to_string()));
        assert!(!ids.iter().any(|id| id.starts_with("COMMIT 2K O_DIRECT")), "O_DIRECT needs 4 KiB blocks");
        assert_eq!(
            test_id(&rewrite_spec(SyncMethod::Fdatasync, Duration::from_secs(1))),
            "COMMIT 8K fdatasync rewrite"
        );
    }
}
