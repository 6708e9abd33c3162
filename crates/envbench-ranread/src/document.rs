//! What a ranread run keeps and shows: the names its results go by (the workload, each step's test, the knee's), the
//! document kept with a run and what makes two sweeps comparable, what a run measured ([`RanreadMeasured`]) and the
//! table with the knee and the verdict.

use crate::records::{WORKLOAD, results, step_test_id};
use crate::{StepLimit, SweepOutcome};
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::workload::Measured;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What results are matched by: two sweeps compare only when these are equal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Comparable {
    File { block_bytes: u64, file_size_bytes: u64, direct: bool, engine: String, limit: StepLimit },
    Postgres { block_bytes: u64, table_pages: i64, limit: StepLimit },
}

impl Comparable {
    pub fn limit(&self) -> StepLimit {
        match self {
            Comparable::File { limit, .. } | Comparable::Postgres { limit, .. } => *limit,
        }
    }
}

/// What a ranread run keeps as its attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RanreadDocument {
    /// What was read: the database file, or the table and database.
    pub target: String,
    pub parameters: Comparable,
    pub outcome: SweepOutcome,
}

impl RanreadDocument {
    /// The document of a stored run: `None` when it has none, `Err` when it cannot be read.
    pub fn of(run: &StoredRun) -> Option<Result<RanreadDocument, String>> {
        let value = run.attachments.get(WORKLOAD)?;
        Some(
            serde_json::from_value(value.clone())
                .map_err(|e| format!("run {}: its ranread record cannot be read ({e})", run.summary.uuid)),
        )
    }
}

pub(crate) struct RanreadMeasured {
    pub(crate) document: RanreadDocument,
    pub(crate) flags: Vec<String>,
}

impl Measured for RanreadMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = results(&self.document.outcome, &json!(self.document.parameters));
        for record in &mut records {
            record.flags.extend(self.flags.iter().cloned());
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, json!(&self.document)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.document.outcome, series, &self.document.target)
    }
}

/// A table per step, the knee, the verdict, and the reference guidance.
pub fn render(outcome: &SweepOutcome, series: &SamplerSeries, target: &str) -> String {
    let database = outcome.steps.iter().any(|s| s.database.is_some());
    let mut headers =
        vec!["JOBS", "IOPS", "MEAN ms", "P50 ms", "P99 ms", "MAX ms", "JOB CV", "DEVICE r/s", "r_await ms"];
    if database {
        headers.extend(["HEAP READ", "HEAP HIT", "READ %"]);
    }
    let aligns = vec![Align::Right; headers.len()];
    let mut table = Table::new(&headers, &aligns);
    for (index, step) in outcome.steps.iter().enumerate() {
        let device = series.step(&step_test_id(step.jobs)).and_then(|s| s.disks.first());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparability_names_the_mode() {
        let parameters = Comparable::Postgres { block_bytes: 8192, table_pages: 10, limit: StepLimit::Iterations(5) };
        let value = json!(parameters);
        assert_eq!(value["mode"], "postgres");
        assert_eq!(value["block_bytes"], 8192);
        assert_eq!(serde_json::from_value::<Comparable>(value).unwrap(), parameters);
    }
}
