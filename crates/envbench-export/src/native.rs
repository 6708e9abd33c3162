//! A workload's own export layout (RanRead's, which its analysis spreadsheet expects), for runs that all belong to
//! one workload that has it.

use crate::cells::{tab_writer, text_of, tsv_field};
use crate::exporter::{Export, ExportError};
use envbench_core::workload::Registry;
use envbench_store::StoredRun;

/// The layout a workload of `workloads` gives its own runs.
pub struct NativeLayout<'a> {
    pub workloads: &'a Registry,
}

impl NativeLayout<'_> {
    /// The runs in their workload's own tab-separated layout; `None` when they are of several workloads, or of one
    /// without a layout of its own.
    pub fn export(&self, runs: &[StoredRun]) -> Result<Option<Export>, ExportError> {
        let Some(first) = runs.first() else { return Ok(None) };
        if runs.iter().any(|r| r.summary.workload != first.summary.workload) {
            return Ok(None);
        }
        let workload = self.workloads.read_back(&first.summary.workload);
        let mut writer = tab_writer();
        let mut rows = 0;
        for (index, run) in runs.iter().enumerate() {
            let Some(table) = workload.native_tsv(run) else { return Ok(None) };
            let table = table.map_err(ExportError::Layout)?;
            if index == 0 {
                writer.write_record(&table.header)?;
            }
            for row in table.rows {
                writer.write_record(row.iter().map(|cell| tsv_field(cell)))?;
                rows += 1;
            }
        }
        Ok(Some(Export { text: text_of(writer)?, rows }))
    }
}
