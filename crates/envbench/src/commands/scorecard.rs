//! How `envbench run` ends: the scorecard of a suite's runs, on a terminal one line per run, with `--json` one
//! document with every run whole.

use crate::registry::WORKLOADS;
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, heading};
use envbench_store::StoredRun;
use envbench_suite::{Suite, SuiteItem};
use serde_json::{Value, json};

/// The tag that says which item of its suite a run is (beside the suite tags of envbench_verdict).
pub(super) const SUITE_ITEM_TAG: &str = "suite.item";

/// How a suite ended, as `run --json` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuiteEnd {
    Complete,
    /// Some runs failed or stored errors; the rest ran.
    Failed,
    /// Stopped by Ctrl-C (or a signal): `--resume` continues it.
    Interrupted,
}

impl SuiteEnd {
    fn word(self) -> &'static str {
        match self {
            SuiteEnd::Complete => "complete",
            SuiteEnd::Failed => "failed",
            SuiteEnd::Interrupted => "interrupted",
        }
    }
}

/// What a suite's JSON document says beside its runs.
pub struct SuiteOutcome<'a> {
    pub suite: &'a Suite,
    pub file: &'a str,
    pub suite_id: &'a str,
    pub plan: &'a str,
    pub end: SuiteEnd,
    pub elapsed: std::time::Duration,
    /// The HTML report written, if any.
    pub report: Option<String>,
    /// The side that names this suite's runs for `compare`.
    pub side: String,
}

/// The item of the suite a stored run belongs to.
fn item_of<'a>(suite: &'a Suite, run: &StoredRun) -> (String, Option<&'a SuiteItem>) {
    let index = run.summary.tags.get(SUITE_ITEM_TAG).cloned().unwrap_or_default();
    let item = index.parse::<usize>().ok().and_then(|i| suite.items.get(i.wrapping_sub(1)));
    (index, item)
}

fn noisy(run: &StoredRun) -> bool {
    run.results.iter().any(|r| Summary::of(&r.record.samples).is_some_and(|s| s.is_noisy()))
}

/// One line per run: its workload, matrix values, status, headline figure, whether it was noisy, and whether other
/// work disturbed it (with the sampler's figures); then the environment once, with the CPUs it could use.
pub fn scorecard(suite: &Suite, runs: &[StoredRun]) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["#", "WORKLOAD", "SETTING", "STATUS", "HEADLINE", "NOISY", "DISTURBED"],
        &[Right, Left, Left, Left, Left, Left, Left],
    );
    for run in runs {
        let (index, item) = item_of(suite, run);
        let setting = item
            .map(|i| i.matrix.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
            .unwrap_or_default();
        table.row(vec![
            index,
            run.summary.workload.clone(),
            setting,
            run.summary.status.to_string(),
            WORKLOADS.of_run(run).headline(run),
            if noisy(run) { "noisy (CV > 5%)".into() } else { String::new() },
            disturbed_words(run).unwrap_or_default(),
        ]);
    }
    let mut out = heading(&format!("Scorecard: suite {}", suite.name));
    out.push('\n');
    out.push_str(&table.render());
    if let Some(run) = runs.first() {
        out.push_str(&format!("Environment: {}\n", run.fingerprint.one_line()));
    }
    out
}

/// The scorecard as one JSON document: the suite, how it ended, the report, and each run's scorecard line with the
/// run whole (as `results show --json` prints it).
pub fn document(outcome: &SuiteOutcome<'_>, runs: &[StoredRun]) -> anyhow::Result<Value> {
    let runs = runs
        .iter()
        .map(|run| {
            let (index, item) = item_of(outcome.suite, run);
            Ok(json!({
                "index": index.parse::<usize>().ok(),
                "workload": run.summary.workload,
                "setting": item.map(|i| i.matrix.clone()).unwrap_or_default(),
                "status": run.summary.status.to_string(),
                "headline": WORKLOADS.of_run(run).headline(run),
                "noisy": noisy(run),
                "disturbed": disturbed_words(run),
                "run": serde_json::to_value(run)?,
            }))
        })
        .collect::<anyhow::Result<Vec<Value>>>()?;
    Ok(json!({
        "suite": outcome.suite.name,
        "file": outcome.file,
        "suite_id": outcome.suite_id,
        "plan": outcome.plan,
        "status": outcome.end.word(),
        "planned_runs": outcome.suite.items.len(),
        "elapsed_s": outcome.elapsed.as_secs_f64(),
        "report": outcome.report,
        "compare_side": outcome.side,
        "runs": runs,
    }))
}

/// A suite's plan as JSON (`run --dry-run --json`): each run's command line, nothing run.
pub fn plan_document(suite: &Suite, file: &str, commands: &[String]) -> Value {
    json!({
        "suite": suite.name,
        "file": file,
        "plan": suite.plan_hash(),
        "runs": suite.items.iter().zip(commands).map(|(item, command)| json!({
            "index": item.index,
            "workload": item.workload,
            "setting": item.matrix,
            "command": command,
        })).collect::<Vec<_>>(),
    })
}

/// A run's DISTURBED cell: none when quiet; `yes` with the sampler's figures when other work disturbed it.
fn disturbed_words(run: &StoredRun) -> Option<String> {
    if !run.summary.disturbed {
        return None;
    }
    Some(match run.series.as_ref().and_then(|s| s.disturbance()) {
        Some(found) => format!("yes: {}", found.reason.trim_start_matches("disturbed: ")),
        None => "yes".to_string(),
    })
}
