//! JSON: one object per raw sample, in an array.

use crate::exporter::{Export, ExportError, Exporter};
use crate::samples::sample_rows;
use envbench_store::StoredRun;

/// The JSON export.
pub struct Json;

impl Exporter for Json {
    fn export(&self, runs: &[StoredRun]) -> Result<Export, ExportError> {
        let rows = sample_rows(runs);
        Ok(Export { text: serde_json::to_string_pretty(&rows)? + "\n", rows: rows.len() })
    }
}
