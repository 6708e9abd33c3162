//! github-action-benchmark's custom format: `[{"name", "unit", "value", "range", "extra"}]`. The action reads a file as
//! either `customBiggerIsBetter` or `customSmallerIsBetter`, so one file holds the results of one direction.

use crate::bencher::result_count;
use crate::exporter::{Export, ExportError, Exporter};
use crate::tracked::tracked;
use envbench_core::model::Direction;
use envbench_store::StoredRun;
use serde_json::{Value, json};

/// The github-action-benchmark export of the results whose better direction is `better`.
pub struct GithubActionBenchmark {
    pub better: Direction,
}

impl Exporter for GithubActionBenchmark {
    fn export(&self, runs: &[StoredRun]) -> Result<Export, ExportError> {
        let entries: Vec<Value> = tracked(runs)?
            .into_iter()
            .filter(|t| t.direction == self.better)
            .map(|t| {
                let mut extra =
                    format!("median of {} samples, min {} max {}", t.summary.count, t.summary.min, t.summary.max);
                if !t.flags.is_empty() {
                    extra.push_str(&format!("; flags: {}", t.flags.join(",")));
                }
                json!({
                    "name": format!("{}: {}", t.benchmark, t.metric),
                    "unit": t.unit,
                    "value": t.summary.median,
                    "range": format!("± {}", t.summary.stddev),
                    "extra": extra,
                })
            })
            .collect();
        Ok(Export { text: serde_json::to_string_pretty(&entries)? + "\n", rows: result_count(runs) })
    }
}
