//! CSV: one row per raw sample, quoted as RFC 4180 says (only where a field needs it), every cell spreadsheet-safe.

use crate::cells::{spreadsheet_safe, text_of};
use crate::exporter::{Export, ExportError, Exporter};
use crate::samples::{SAMPLE_COLUMNS, sample_rows};
use envbench_store::StoredRun;

/// The CSV export.
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, runs: &[StoredRun]) -> Result<Export, ExportError> {
        let rows = sample_rows(runs);
        let mut writer = ::csv::WriterBuilder::new().from_writer(Vec::new());
        writer.write_record(SAMPLE_COLUMNS)?;
        for row in &rows {
            write_safe(&mut writer, row.cells().iter().map(String::as_str))?;
        }
        Ok(Export { text: text_of(writer)?, rows: rows.len() })
    }
}

/// One CSV record of `cells`, each made spreadsheet-safe first.
fn write_safe<'a>(
    writer: &mut ::csv::Writer<Vec<u8>>,
    cells: impl IntoIterator<Item = &'a str>,
) -> Result<(), ::csv::Error> {
    for cell in cells {
        writer.write_field(spreadsheet_safe(cell).as_bytes())?;
    }
    writer.write_record(None::<&[u8]>)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv_line(cells: &[&str]) -> String {
        let mut writer = ::csv::WriterBuilder::new().from_writer(Vec::new());
        write_safe(&mut writer, cells.iter().copied()).unwrap();
        text_of(writer).unwrap()
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_line(&["plain", r#"{"a":1,"b":2}"#]), "plain,\"{\"\"a\"\":1,\"\"b\"\":2}\"\n");
        assert_eq!(csv_line(&["a\nb", "c\rd"]), "\"a\nb\",\"c\rd\"\n");
    }

    /// The battery's finding D12: a label beginning with `=` reached a spreadsheet as a formula.
    #[test]
    fn exported_text_never_runs_as_a_formula() {
        assert_eq!(csv_line(&["=HYPERLINK(\"http://x\",\"y\")"]), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"\n");
        for formula in ["+1+2", "-cmd", "@SUM(A1)", "=1"] {
            assert_eq!(csv_line(&[formula]), format!("'{formula}\n"));
        }
        assert_eq!(csv_line(&["-1.5", "1e-3"]), "-1.5,1e-3\n");
    }
}
