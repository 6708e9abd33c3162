//! Text for people: aligned tables, `name  value` sections, headings and numbers, written once for every workload's
//! human output. Everything here returns strings; printing is the binary's.
//!
//! Text that came from users or from a store (labels, tags, host names, command lines) may hold control characters;
//! [`printable`] shows them as escapes, and tables do it for every cell, so nothing a user typed can move the
//! terminal's cursor or change its colours.

use std::io::IsTerminal;

/// Cells of a table wider than this are cut, with `…` at the end: one long label must not widen every row.
pub const MAX_CELL_CHARS: usize = 100;

/// True when styling is allowed on standard output: a terminal, and `NO_COLOR` unset or empty.
pub fn styled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// A heading line, bold when styling is allowed.
pub fn heading(text: &str) -> String {
    if styled() { format!("\x1b[1m{text}\x1b[0m") } else { text.to_string() }
}

/// Text with its control characters (ESC, CR, BEL, line breaks, tabs, DEL, C1 controls) shown as escapes such as
/// `\x1b`, `\r` and `\n`, so it prints on one line and cannot drive the terminal.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// The longest name a user gives envbench: a label, a tag key or value, an exec or step name, a suite's name.
pub const MAX_NAME_CHARS: usize = 200;

/// True for characters that change how the text around them is shown without being seen themselves: bidirectional
/// overrides and isolates (U+202A-U+202E, U+2066-U+2069, which can make `evil` read as `live`), line and paragraph
/// separators (U+2028, U+2029, which break a line where no line break shows), and other format characters.
fn is_deceptive(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}'
        | '\u{061c}')
}

/// True for characters that print as nothing: zero-width spaces and joiners, the byte-order mark, soft hyphens,
/// and the like. A name made only of these looks empty.
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}' | '\u{034f}'
            | '\u{180e}' | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}')
        || is_deceptive(c)
}

/// Check a name a user gives (a label, a tag, an exec or step name): printable (no control characters), no
/// bidirectional overrides or line separators, not only invisible characters, and at most [`MAX_NAME_CHARS`]
/// characters. The error names `option` and says what to do.
pub fn check_name(option: &str, text: &str) -> Result<(), String> {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!("{option} holds a control character ({}); use printable text", printable(&c.to_string())));
    }
    if let Some(c) = text.chars().find(|&c| is_deceptive(c)) {
        return Err(format!(
            "{option} holds U+{:04X}, a character that reorders or breaks the text around it; use plain text",
            u32::from(c)
        ));
    }
    if text.chars().all(is_invisible) {
        return Err(format!("{option} is empty or only invisible characters; give a name people can read"));
    }
    let length = text.chars().count();
    if length > MAX_NAME_CHARS {
        return Err(format!("{option} is {length} characters long; keep it to {MAX_NAME_CHARS}"));
    }
    Ok(())
}

/// Check free text kept with a run (a command line, a reason, a fingerprint's values): line breaks and tabs may stand
/// in it, other control characters (an escape sequence) and characters that reorder the text around it may not, and
/// it is at most `max_chars` characters. The error names `what` and says what to do.
pub fn check_text(what: &str, text: &str, max_chars: usize) -> Result<(), String> {
    if let Some(c) = text.chars().find(|&c| (c.is_control() && !matches!(c, '\n' | '\t')) || is_deceptive(c)) {
        return Err(format!(
            "{what} holds {} (U+{:04X}), which changes how the text around it shows; send text as envbench writes it",
            if c.is_control() { "a control character" } else { "a character that reorders or breaks text" },
            u32::from(c)
        ));
    }
    let length = text.chars().count();
    if length > max_chars {
        return Err(format!("{what} is {length} characters long; it is at most {max_chars}"));
    }
    Ok(())
}

/// The styling sequences envbench itself writes (bold headings): the only escape sequences [`terminal_text`] lets
/// through. They change no more than the weight of the text.
const OWN_STYLES: [&str; 2] = ["\x1b[1m", "\x1b[0m"];

/// Text made safe for a terminal, applied once at the output boundary to everything envbench writes to standard
/// output and standard error: line breaks and tabs stay, envbench's own bold stays, and every other control character
/// (C0 as `\x1b`, `\r`; DEL and C1 controls such as U+009B as `\u009b`) and every character that reorders or breaks
/// the text around it (bidi overrides, line separators, as `\u202e`) is shown escaped, so nothing a user, a store
/// or a child process wrote can move the cursor, clear the screen, set the terminal's title or disguise text. The
/// `\uXXXX` form is also a valid JSON escape of the same character, so JSON output stays valid and means the same.
pub fn terminal_text(text: &str) -> String {
    let needs_escape = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_deceptive(c);
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(style) = OWN_STYLES.iter().find(|style| rest.starts_with(**style)) {
            out.push_str(style);
            rest = &rest[style.len()..];
            continue;
        }
        match c {
            '\r' => out.push_str("\\r"),
            c if c.is_control() && u32::from(c) < 0x20 && c != '\n' && c != '\t' => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)))
            }
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// At most `limit` characters of `text`, the last being `…` when it was cut.
pub fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut out: String = text.chars().take(limit.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of text cells, printed with columns aligned to their widest cell. Cells are made printable and cut at
/// [`MAX_CELL_CHARS`].
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
        self.rows.push(cells.iter().map(|cell| truncate(&printable(cell), MAX_CELL_CHARS)).collect());
    }

    /// True when no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
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
        self.lines.push((name.to_string(), value.map(|v| printable(&v)).unwrap_or_else(|| "not exposed".to_string())));
        self
    }

    pub fn render(&self, name_width: usize) -> String {
        let mut out = heading(&printable(&self.title));
        out.push('\n');
        for (name, value) in &self.lines {
            out.push_str(&format!("  {name:<name_width$}  {value}\n"));
        }
        out
    }
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

/// Millions and thousands the way a progress line wants them: `1.25 M`, `3.4 k`, `12`.
pub fn count(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2} M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1} k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

/// Microseconds for people: `85 µs`, `3.97 ms`.
pub fn micros(us: f64) -> String {
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.0} µs") }
}

/// A long task's time in words, to the second: `45 s`, `3m 05s`.
pub fn duration_words(elapsed: std::time::Duration) -> String {
    let s = elapsed.as_secs();
    if s < 60 { format!("{s} s") } else { format!("{}m {:02}s", s / 60, s % 60) }
}

/// How far a series of `total` tasks is before its next one, when `done` have finished in `elapsed`: the time so far
/// and about how long is left, each task left taking the mean of those done (nothing before the first has ended).
pub fn pace_words(elapsed: std::time::Duration, done: usize, total: usize) -> String {
    if done == 0 {
        return String::new();
    }
    let left = elapsed.mul_f64(total.saturating_sub(done) as f64 / done as f64);
    format!("  ({} so far, about {} left at this pace)", duration_words(elapsed), duration_words(left))
}

/// Work of a known size, as a live line shows it: a bar, the share done, the time so far and, once a twentieth is
/// done, about how long is left at the pace so far: `[######--------------]  30%, 12 s so far, about 28 s left`.
pub fn progress_bar(done: u64, total: u64, elapsed: std::time::Duration) -> String {
    const WIDTH: u64 = 20;
    let share = if total == 0 { 1.0 } else { (done.min(total) as f64 / total as f64).clamp(0.0, 1.0) };
    let filled = (share * WIDTH as f64).floor() as u64;
    let bar: String = (0..WIDTH).map(|i| if i < filled { '#' } else { '-' }).collect();
    let words = duration_words;
    let left = if (0.05..1.0).contains(&share) {
        format!(", about {} left", words(elapsed.mul_f64((1.0 - share) / share)))
    } else {
        String::new()
    };
    format!("[{bar}] {:>3.0}%, {} so far{left}", share * 100.0, words(elapsed))
}

/// `s` when a count needs a plural ending.
pub fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Text as a URL component (a query value, a path segment): every byte but unreserved ASCII (RFC 3986) `%XX`-escaped,
/// so it is also safe in an HTML attribute.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Close names for an error message: up to three `candidates` within a small edit distance of `wanted` (ignoring
/// case; a prefix of one or the other counts as close), best first.
pub fn suggestions<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted_lower = wanted.trim().to_lowercase();
    if wanted_lower.is_empty() {
        return Vec::new();
    }
    let limit = (wanted_lower.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let distance = if lower.starts_with(&wanted_lower) || wanted_lower.starts_with(&lower) {
                lower.len().abs_diff(wanted_lower.len()).min(1)
            } else {
                edit_distance(&wanted_lower, &lower)
            };
            (distance <= limit).then_some((distance, name))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored.into_iter().take(3).map(|(_, name)| name.to_string()).collect()
}

/// Suggestions as "; did you mean A, B?" (empty when there are none).
pub fn did_you_mean(names: &[String]) -> String {
    if names.is_empty() { String::new() } else { format!("; did you mean {}?", names.join(", ")) }
}

/// Items for a sentence: `A`, `A and B`, `A, B and C`.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_series_of_tasks_says_its_time_so_far_and_what_is_left_at_its_pace() {
        use super::pace_words;
        use std::time::Duration;
        assert_eq!(pace_words(Duration::from_secs(3), 0, 6), "", "no pace before a task has finished");
        assert_eq!(pace_words(Duration::from_secs(90), 2, 6), "  (1m 30s so far, about 3m 00s left at this pace)");
        assert_eq!(pace_words(Duration::from_secs(40), 5, 6), "  (40 s so far, about 8 s left at this pace)");
    }

    #[test]
    fn a_progress_bar_says_how_far_and_how_long_is_left() {
        use super::progress_bar;
        use std::time::Duration;
        assert_eq!(
            progress_bar(30, 100, Duration::from_secs(12)),
            "[######--------------]  30%, 12 s so far, about 28 s left"
        );
        assert_eq!(progress_bar(1, 100, Duration::from_secs(2)), "[--------------------]   1%, 2 s so far");
        assert_eq!(progress_bar(100, 100, Duration::from_secs(90)), "[####################] 100%, 1m 30s so far");
        assert_eq!(progress_bar(5, 0, Duration::ZERO), "[####################] 100%, 0 s so far");
    }

    #[test]
    fn close_names_are_suggested() {
        let names = ["Actual", "Budget", "Forecast", "quick", "standard"];
        assert_eq!(super::suggestions("Actaul", names), vec!["Actual"]);
        assert_eq!(super::suggestions("budget", names), vec!["Budget"]);
        assert_eq!(super::suggestions("quik", names), vec!["quick"]);
        assert!(super::suggestions("Zebra", names).is_empty());
        assert!(super::suggestions("", names).is_empty());
        assert_eq!(super::edit_distance("kitten", "sitting"), 3);
        assert_eq!(super::did_you_mean(&["quick".into()]), "; did you mean quick?");
        assert_eq!(super::and_list(&["Memory"]), "Memory");
        assert_eq!(super::and_list(&["Memory", "Kernel", "Filesystem"]), "Memory, Kernel and Filesystem");
    }

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
    fn cells_cannot_drive_the_terminal_or_widen_the_table() {
        let mut table = Table::new(&["LABEL"], &[Align::Left]);
        table.row(vec!["evil\x1b[2J\rbell\x07\nnext".into()]);
        table.row(vec!["x".repeat(100_000)]);
        let text = table.render();
        assert!(!text.contains('\x1b') && !text.contains('\r') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains(r"evil\x1b[2J\rbell\x07\nnext"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= MAX_CELL_CHARS), "a long cell is cut");
        assert!(text.contains('…'));
    }

    /// The battery's finding D10: whatever reaches the terminal cannot drive it.
    #[test]
    fn the_output_boundary_escapes_what_could_drive_the_terminal() {
        let text = "heading\x1b[1mbold\x1b[0m\n\tcell \x1b[2J\x1b]0;title\x07 csi\u{9b}2J del\u{7f} \u{202e}evil\r";
        let safe = terminal_text(text);
        assert_eq!(
            safe,
            "heading\x1b[1mbold\x1b[0m\n\tcell \\x1b[2J\\x1b]0;title\\x07 csi\\u009b2J del\\u007f \\u202eevil\\r"
        );
        let json = serde_json::json!({"label": "a\u{9b}b\u{202e}c\x1b"}).to_string();
        let shown = terminal_text(&json);
        assert!(!shown.contains('\u{9b}') && !shown.contains('\u{202e}'), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(back["label"], "a\u{9b}b\u{202e}c\x1b", "and it means the same");
        assert_eq!(terminal_text("plain text\n"), "plain text\n");
    }

    #[test]
    fn names_must_show_as_what_they_are() {
        assert!(check_name("--label", "physical-p3605").is_ok());
        assert!(check_name("--label", "vm \u{e9}t\u{e9} 2").is_ok());
        for (bad, expected) in [
            ("evil\x1b[2J", "control character (\\x1b)"),
            ("a\u{9b}b", "control character (\\x9b)"),
            ("\u{202e}lave", "U+202E"),
            ("one\u{2028}two", "U+2028"),
            ("\u{200b}\u{200b}", "only invisible"),
            ("   ", "only invisible"),
            ("", "only invisible"),
        ] {
            let message = check_name("--label", bad).unwrap_err();
            assert!(message.contains(expected) && message.starts_with("--label"), "{bad:?}: {message}");
        }
        assert!(check_name("--name", &"x".repeat(5000)).unwrap_err().contains("5000 characters long"));
    }

    #[test]
    fn numbers_by_magnitude() {
        assert_eq!(number(101234.4), "101234");
        assert_eq!(number(123.45), "123.5");
        assert_eq!(number(8.123), "8.12");
        assert_eq!(number(0.1234), "0.123");
        assert_eq!(count(1_250_000.0), "1.25 M");
        assert_eq!(micros(3970.0), "3.97 ms");
    }
}
