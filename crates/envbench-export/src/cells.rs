//! Cells as a spreadsheet reads them safely, and the csv writers every delimited export writes them with.

use crate::exporter::ExportError;

/// A cell a spreadsheet will not run as a formula: text beginning with `=`, `+`, `-`, `@`, a tab or a carriage return
/// (a label such as `=HYPERLINK(...)`) gets a leading `'`, as OWASP advises for CSV exports. Numbers, negative ones
/// included, are left as they are.
pub(crate) fn spreadsheet_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && text.parse::<f64>().is_err() { format!("'{text}").into() } else { text.into() }
}

/// A writer of tab-separated lines that quotes nothing: [`tsv_field`] leaves no tab or line break in a cell.
pub(crate) fn tab_writer() -> ::csv::Writer<Vec<u8>> {
    ::csv::WriterBuilder::new().delimiter(b'\t').quote_style(::csv::QuoteStyle::Never).from_writer(Vec::new())
}

/// Tabs and line breaks cannot appear inside a TSV field: they become spaces; then [`spreadsheet_safe`].
pub(crate) fn tsv_field(text: &str) -> String {
    spreadsheet_safe(&text.replace(['\t', '\n', '\r'], " ")).into_owned()
}

/// The text a csv writer holds.
pub(crate) fn text_of(writer: ::csv::Writer<Vec<u8>>) -> Result<String, ExportError> {
    let bytes = writer.into_inner().map_err(|e| ExportError::Csv(e.into_error().into()))?;
    Ok(String::from_utf8(bytes).expect("the cells are text"))
}
