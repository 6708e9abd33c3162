//! Terminal output: aligned tables, section headings, and the few styles we use (bold headings only when standard
//! output is a terminal and `NO_COLOR` is unset).

use std::io::IsTerminal;

/// True when styling is allowed on standard output.
pub fn styled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// True when standard error is a terminal, where progress may redraw one line.
pub fn live_progress() -> bool {
    std::io::stderr().is_terminal()
}

/// Redraw the progress line on standard error (only on a terminal: logs get the finished lines alone).
pub fn progress(text: &str) {
    if live_progress() {
        eprint!("\r\x1b[2K{text}");
    }
}

/// Print a finished line on standard error, replacing the progress line when there is one.
pub fn progress_line(text: &str) {
    if live_progress() {
        eprint!("\r\x1b[2K");
    }
    eprintln!("{text}");
}

/// A heading line, bold when styling is allowed.
pub fn heading(text: &str) -> String {
    if styled() { format!("\x1b[1m{text}\x1b[0m") } else { text.to_string() }
}

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of text cells, printed with columns aligned to their widest cell.
pub struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers; `aligns` gives each column's alignment.
    pub fn new(headers: &[&str], aligns: &[Align]) -> Table {
        Table { headers: headers.iter().map(|h| h.to_string()).collect(), aligns: aligns.to_vec(), rows: Vec::new() }
    }

    /// Add a row (missing cells print empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, two spaces between columns, no trailing spaces.
    pub fn render(&self) -> String {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = width - cell.chars().count();
                if i > 0 {
                    text.push_str("  ");
                }
                match self.aligns.get(i).copied().unwrap_or(Align::Left) {
                    Align::Left => {
                        text.push_str(cell);
                        text.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        text.push_str(&" ".repeat(pad));
                        text.push_str(cell);
                    }
                }
            }
            text.trim_end().to_string()
        };
        let mut out = heading(&line(&self.headers));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }
}

/// Aligned `name  value` lines under a heading.
pub struct Section {
    title: String,
    lines: Vec<(String, String)>,
}

impl Section {
    pub fn new(title: impl Into<String>) -> Section {
        Section { title: title.into(), lines: Vec::new() }
    }

    /// Add a line; `None` values print as "not exposed" so a reader knows the field exists but was hidden.
    pub fn line(&mut self, name: &str, value: Option<String>) -> &mut Section {
        self.lines.push((name.to_string(), value.unwrap_or_else(|| "not exposed".to_string())));
        self
    }

    pub fn render(&self, name_width: usize) -> String {
        let mut out = heading(&self.title);
        out.push('\n');
        for (name, value) in &self.lines {
            out.push_str(&format!("  {name:<name_width$}  {value}\n"));
        }
        out
    }
}

/// An error and its causes on one line: `outer: inner: innermost`.
pub fn error_chain(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// A number with a fixed count of decimals chosen by magnitude, for tables of measurements.
pub fn number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1000.0 {
        format!("{value:.0}")
    } else if magnitude >= 100.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let mut table = Table::new(&["TEST", "MB/s"], &[Align::Left, Align::Right]);
        table.row(vec!["SEQ1M Q8T1 read".into(), "2110.5".into()]);
        table.row(vec!["RND4K Q1T1 read".into(), "45.1".into()]);
        let text = table.render();
        assert_eq!(text, "TEST               MB/s\nSEQ1M Q8T1 read  2110.5\nRND4K Q1T1 read    45.1\n");
    }

    #[test]
    fn numbers_by_magnitude() {
        assert_eq!(number(101234.4), "101234");
        assert_eq!(number(123.45), "123.5");
        assert_eq!(number(8.123), "8.12");
        assert_eq!(number(0.1234), "0.123");
    }
}
