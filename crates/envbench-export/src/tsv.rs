//! TSV: one row per raw sample, or the runs' workload's own layout when they all belong to one that has it.

use crate::cells::{tab_writer, text_of, tsv_field};
use crate::exporter::{Export, ExportError, Exporter};
use crate::native::NativeLayout;
use crate::samples::{SAMPLE_COLUMNS, sample_rows};
use envbench_core::workload::Registry;
use envbench_store::StoredRun;

/// The TSV export, which asks `workloads` for a workload's own layout first.
pub struct Tsv<'a> {
    pub workloads: &'a Registry,
}

impl Exporter for Tsv<'_> {
    fn export(&self, runs: &[StoredRun]) -> Result<Export, ExportError> {
        if let Some(native) = (NativeLayout { workloads: self.workloads }).export(runs)? {
            return Ok(native);
        }
        let rows = sample_rows(runs);
        let mut writer = tab_writer();
        writer.write_record(SAMPLE_COLUMNS)?;
        for row in &rows {
            writer.write_record(row.cells().iter().map(|cell| tsv_field(cell)))?;
        }
        Ok(Export { text: text_of(writer)?, rows: rows.len() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_and_line_breaks_become_spaces_and_formulas_stay_text() {
        assert_eq!(tsv_field("a\tb\nc"), "a b c");
        for formula in ["+1+2", "-cmd", "@SUM(A1)", "=1"] {
            assert_eq!(tsv_field(formula), format!("'{formula}"));
        }
        let mut writer = tab_writer();
        writer.write_record([tsv_field("x\"y"), tsv_field("1")]).unwrap();
        assert_eq!(text_of(writer).unwrap(), "x\"y\t1\n");
    }
}
