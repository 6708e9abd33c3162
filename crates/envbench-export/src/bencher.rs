//! Bencher Metric Format (`bencher run --adapter json`): `{"benchmark": {"measure": {"value", "lower_value",
//! "upper_value"}}}`, one benchmark per test, one measure per metric and unit; the value is the median of the samples,
//! the bounds their minimum and maximum.

use crate::exporter::{Export, ExportError, Exporter};
use crate::tracked::tracked;
use envbench_store::StoredRun;
use serde_json::{Map, Value, json};

/// The Bencher Metric Format export.
pub struct Bencher;

impl Exporter for Bencher {
    fn export(&self, runs: &[StoredRun]) -> Result<Export, ExportError> {
        let mut benchmarks: Map<String, Value> = Map::new();
        for t in tracked(runs)? {
            let measures = benchmarks.entry(t.benchmark).or_insert_with(|| json!({}));
            measures[format!("{} ({})", t.metric, t.unit)] =
                json!({ "value": t.summary.median, "lower_value": t.summary.min, "upper_value": t.summary.max });
        }
        let text = serde_json::to_string_pretty(&Value::Object(benchmarks))? + "\n";
        Ok(Export { text, rows: result_count(runs) })
    }
}

/// The results of the runs: what a tracker export counts.
pub(crate) fn result_count(runs: &[StoredRun]) -> usize {
    runs.iter().map(|r| r.results.len()).sum()
}
