//! A comparison as text: a terminal table, Markdown for pasting into tickets, or JSON for machines. The HTML report
//! (in `report`) shows the same cells through [`cells`], so every format says the same thing.

use envbench_core::model::{Direction, MetricKind, metric_kind};
use envbench_verdict::{Change, ComparisonRow, Significance};
use envbench_verdict::{Comparison, GeomeanRow};
use envbench_verdict::{SideVerdict, WorkloadVerdict};
use envbench_verdict::{factor_words, interval_words, number, speed_words};

/// The output formats of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Text,
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// The whole [`Comparison`], pretty-printed.
    Json,
}

/// Render a comparison in a format.
pub fn render(comparison: &Comparison, format: Format) -> String {
    match format {
        Format::Text => render_text(comparison),
        Format::Markdown => render_markdown(comparison),
        Format::Json => render_json(comparison),
    }
}

/// The comparison as JSON (every sample included).
pub fn render_json(comparison: &Comparison) -> String {
    serde_json::to_string_pretty(comparison).expect("a comparison serializes") + "\n"
}

/// A metric's name for people, as charts and the report say it: `latency_p99_9` is "latency p99.9",
/// `client_cpu_per_transaction` "client CPU per transaction", `iops` "IOPS". Tables and JSON keep the stored name,
/// which scripts match on.
pub fn metric_title(metric: &str) -> String {
    const WHOLE: [(&str, &str); 13] = [
        ("latency_mean", "mean latency"),
        ("latency_max", "max latency"),
        ("throughput", "throughput"),
        ("burst_throughput", "burst throughput"),
        ("job_cv", "job-to-job spread (cv)"),
        ("tpm", "TPM"),
        ("tpm_window", "TPM per window"),
        ("iops_window", "IOPS per window"),
        ("db_tpm", "database TPM"),
        ("nopm", "NOPM"),
        ("qph", "queries per hour"),
        ("elapsed", "elapsed time"),
        ("speedup", "speed-up"),
    ];
    if let Some((_, title)) = WHOLE.iter().find(|(name, _)| *name == metric) {
        return title.to_string();
    }
    let words: Vec<String> = metric
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|word| match word {
            "iops" => "IOPS".to_string(),
            "cpu" => "CPU".to_string(),
            "io" => "I/O".to_string(),
            "tpm" => "TPM".to_string(),
            "nopm" => "NOPM".to_string(),
            "mb" => "MB".to_string(),
            "gb" => "GB".to_string(),
            "db" => "database".to_string(),
            "cv" => "(cv)".to_string(),
            "s" => "s".to_string(),
            "avg" => "mean".to_string(),
            "qps" => "queries/s".to_string(),
            other => other.to_string(),
        })
        .collect();
    // A percentile's decimal part is its own word in the stored name: p99_9 is p99.9.
    let mut joined: Vec<String> = Vec::new();
    for word in words {
        match joined.last_mut() {
            Some(last) if word.chars().all(|c| c.is_ascii_digit()) && last.starts_with('p') => {
                last.push('.');
                last.push_str(&word);
            }
            _ => joined.push(word),
        }
    }
    let title = joined.join(" ");
    match title.strip_suffix(" per s") {
        Some(rate) => format!("{rate} per second"),
        None => title,
    }
}

/// A p-value as shown: `p=0.008`, `p<0.001`.
pub fn p_value_text(p: f64) -> String {
    if p < 0.001 { "p<0.001".to_string() } else { format!("p={p:.3}") }
}

/// The column headings of the comparison table.
pub fn headings(comparison: &Comparison) -> Vec<String> {
    let mut headings = vec!["TEST".to_string(), "METRIC".to_string(), "UNIT".to_string()];
    let baseline = comparison.sides.first().map(|s| s.letter.clone()).unwrap_or_default();
    for (i, side) in comparison.sides.iter().enumerate() {
        headings.push(format!("{} median", side.letter));
        headings.push(format!("{} cv", side.letter));
        if i > 0 {
            headings.push(format!("{} vs {baseline}", side.letter));
            headings.push(format!("{} sig", side.letter));
        }
    }
    headings.push("FLAGS".to_string());
    headings
}

/// The cells of one comparison row, in the order of [`headings`]. A noisy coefficient of variation ends in `!`; a
/// change that is not significant (or has too few samples to tell) shows `~` as its significance.
pub fn cells(row: &ComparisonRow) -> Vec<String> {
    let mut cells = vec![row.test_name(), row.metric.clone(), row.unit.clone()];
    let mut flags: Vec<String> = Vec::new();
    for (i, cell) in row.cells.iter().enumerate() {
        match cell {
            Some(cell) => {
                cells.push(number(cell.summary.median));
                cells.push(if cell.summary.count < 2 {
                    "-".to_string()
                } else {
                    format!("{:.1}%{}", cell.summary.cv * 100.0, if cell.noisy { "!" } else { "" })
                });
                for flag in &cell.flags {
                    if !flags.contains(flag) {
                        flags.push(flag.clone());
                    }
                }
            }
            None => cells.extend(["-".to_string(), "-".to_string()]),
        }
        if i > 0 {
            match cell.as_ref().and_then(|c| c.change.as_ref()) {
                Some(change) => {
                    cells.push(change_text(change, row.direction, metric_kind(&row.metric, &row.unit)));
                    cells.push(significance_text(change.significance, change.p_value));
                }
                None => cells.extend(["-".to_string(), "-".to_string()]),
            }
        }
    }
    cells.push(flags.join(","));
    cells
}

/// A change as every table shows it: a factor in the metric's own words, with the direction of "better" per metric
/// (`1.12x faster` for a rate that rose or a time that fell, `1.50x slower`, `2.50x less variable` for a spread,
/// `1.12x better` for anything else), as the verdict says it: never a bare ratio or a signed percent.
pub fn change_text(change: &Change, _direction: Direction, kind: MetricKind) -> String {
    match change.ratio {
        Some(ratio) => factor_words(ratio, kind),
        None => "-".to_string(),
    }
}

/// True when a change text says better (for styling).
pub fn says_better(text: &str) -> bool {
    text.contains("better") || text.contains("faster") || text.contains("less variable")
}

/// True when a change text says worse.
pub fn says_worse(text: &str) -> bool {
    text.contains("worse") || text.contains("slower") || text.contains("more variable")
}

/// `p=0.008` when significant, `?` with a single sample on a side (nothing can be tested), `~` otherwise.
pub fn significance_text(significance: Significance, p_value: Option<f64>) -> String {
    match (significance, p_value) {
        (Significance::Significant, Some(p)) => p_value_text(p),
        (Significance::TooFewSamples, _) => "?".to_string(),
        _ => "~".to_string(),
    }
}

/// The cells of a geometric-mean row, in the order of [`headings`]: the baseline, then each side's speed factor
/// against it in words, as the verdict says it, with the count of tests it is made of.
pub fn geomean_cells(row: &GeomeanRow) -> Vec<String> {
    let mut cells = vec!["geomean".to_string(), row.metric.clone(), "speed factor".to_string()];
    for (i, cell) in row.cells.iter().enumerate() {
        if i == 0 {
            cells.extend(["baseline".to_string(), String::new()]);
            continue;
        }
        match cell {
            Some(cell) => {
                cells.extend([String::new(), String::new()]);
                cells.push(speed_words(cell.ratio));
                cells.push(format!("{} tests", cell.tests));
            }
            None => cells.extend(["-", "", "-", ""].map(String::from)),
        }
    }
    cells.push(String::new());
    cells
}

/// A side's line names at most this many of its runs.
const SHOWN_RUNS: usize = 6;

/// The runs of every side, one line each.
fn side_lines(comparison: &Comparison) -> Vec<String> {
    comparison
        .sides
        .iter()
        .map(|side| {
            let count = side.runs.len();
            let mut runs = side.runs.iter().take(SHOWN_RUNS).map(|r| r.name.clone()).collect::<Vec<_>>().join(", ");
            if count > SHOWN_RUNS {
                runs.push_str(&format!(" and {} more", count - SHOWN_RUNS));
            }
            let mut environments: Vec<&str> = Vec::new();
            for run in &side.runs {
                if !environments.contains(&run.environment.as_str()) {
                    environments.push(&run.environment);
                }
            }
            let made = envbench_verdict::runs_made(side.runs.iter().map(|r| (r.uuid.as_str(), r.suite.as_deref())));
            format!(
                "{}{}: {} — {}: {runs} — on {}",
                side.letter,
                if side.letter == "A" { " (baseline)" } else { "" },
                side.name,
                envbench_verdict::run_count_words(made, count),
                environments.join("; ")
            )
        })
        .collect()
}

/// How changes are written, said once.
pub const LEGEND: &str = "Medians of all samples of each side. \"vs\": how the median itself changed against A (+ more, \
- less) and whether that is better; for times the speed factor (-78% = 4.5x faster), for coefficients of variation \
less or more variable. \"sig\": the two-sided p-value when below 0.05 and the change is beyond the noise margin \
(5%; 20% for storage: two runs of one environment differ by that much); Mann-Whitney U with 5 or more samples a side, Welch's t-test on \
logarithms with 2 to 4. ~: no change beyond noise; ?: one sample on a side, nothing can be tested. cv: coefficient of \
variation; ! marks noisy (over 5%). geomean and the verdict: geometric mean of the per-test speed factors of times and \
rates against A (above 1 is better: more work per second or less time).";

/// The verdict of one workload in one line: its change, then [`verdict_evidence`].
pub fn verdict_line(verdict: &WorkloadVerdict) -> String {
    format!("{}; {}", verdict.change_words(), verdict_evidence(verdict))
}

/// What a workload's verdict rests on: its interval, its tests' counts and the metric it is made of.
pub fn verdict_evidence(verdict: &WorkloadVerdict) -> String {
    format!(
        "{}; {} better, {} worse, {} unchanged of {} test{}{} (by {})",
        interval_words(verdict.interval),
        verdict.better,
        verdict.worse,
        verdict.unchanged,
        verdict.tests,
        if verdict.tests == 1 { "" } else { "s" },
        if verdict.cannot_tell > 0 {
            format!(", {} with one sample a side (cannot tell)", verdict.cannot_tell)
        } else {
            String::new()
        },
        verdict.metrics.iter().map(|m| metric_title(m)).collect::<Vec<_>>().join(", ")
    )
}

/// The heading of a side's verdict: `B: virtual against A: physical`.
pub fn verdict_heading(comparison: &Comparison, verdict: &SideVerdict) -> String {
    let baseline = comparison.sides.first().map(|s| format!("{}: {}", s.letter, s.name)).unwrap_or_default();
    format!("{}: {} against {baseline}", verdict.letter, verdict.name)
}

fn verdict_text(comparison: &Comparison) -> String {
    let mut out = String::new();
    for side in &comparison.verdicts {
        out.push_str(&format!("VERDICT {}\n", verdict_heading(comparison, side)));
        if side.workloads.is_empty() {
            out.push_str("  no result matches the baseline\n");
        }
        let width = side.workloads.iter().map(|w| w.title.chars().count()).max().unwrap_or(0);
        for workload in &side.workloads {
            let pad = " ".repeat(width - workload.title.chars().count());
            out.push_str(&format!("  {}{pad}  {}\n", workload.title, verdict_line(workload)));
            for sentence in &workload.explanations {
                out.push_str(&format!("  {}    - {sentence}\n", " ".repeat(width)));
            }
        }
        for sentence in &side.disturbance {
            out.push_str(&format!("  Disturbed: {sentence}.\n"));
        }
        if let Some(advice) = &side.advice {
            out.push_str(&format!("  To tell: {advice}.\n"));
        }
        if let Some(caution) = &side.caution {
            out.push_str(&format!("  Note: {caution}\n"));
        }
        out.push('\n');
    }
    out
}

/// The comparison as aligned text for a terminal.
pub fn render_text(comparison: &Comparison) -> String {
    let mut out = String::new();
    for line in side_lines(comparison) {
        out.push_str(&line);
        out.push('\n');
    }
    if !comparison.verdicts.is_empty() {
        out.push('\n');
        out.push_str(&verdict_text(comparison));
        out.push_str("DETAILS per test\n");
    }
    let headings = headings(comparison);
    let right: Vec<bool> = headings.iter().map(|h| h.ends_with(" median") || h.ends_with(" cv")).collect();
    for workload in workloads(comparison) {
        out.push('\n');
        out.push_str(&format!("{workload}\n"));
        let mut rows: Vec<Vec<String>> = comparison.rows.iter().filter(|r| r.workload == workload).map(cells).collect();
        rows.extend(comparison.geomeans.iter().filter(|g| g.workload == workload).map(geomean_cells));
        out.push_str(&aligned(&headings, &rows, &right));
    }
    if comparison.rows.is_empty() {
        out.push_str("\nNo result matches across the sides.\n");
    }
    if !comparison.unmatched.is_empty() {
        out.push_str(&format!(
            "\nNot compared ({} results match nothing on the other sides):\n",
            comparison.unmatched.len()
        ));
        for u in &comparison.unmatched {
            out.push_str(&format!("  {}: {} {} {} — {}\n", u.side, u.workload, u.test_id, u.metric, u.reason));
        }
    }
    out.push_str("\nEnvironment differences:\n");
    if comparison.differences.is_empty() {
        out.push_str("  none found in the fingerprints\n");
    }
    for difference in &comparison.differences {
        out.push_str(&format!("  {difference}\n"));
    }
    out.push('\n');
    out.push_str(LEGEND);
    out.push('\n');
    out
}

/// The comparison as Markdown, for tickets.
pub fn render_markdown(comparison: &Comparison) -> String {
    let mut out = String::from("## envbench comparison\n\n");
    for line in side_lines(comparison) {
        out.push_str(&format!("- {}\n", markdown_escape(&line)));
    }
    for side in &comparison.verdicts {
        out.push_str(&format!("\n### Verdict: {}\n\n", markdown_escape(&verdict_heading(comparison, side))));
        for workload in &side.workloads {
            out.push_str(&format!(
                "- **{}**: {}\n",
                markdown_escape(&workload.title),
                markdown_escape(&verdict_line(workload))
            ));
            for sentence in &workload.explanations {
                out.push_str(&format!("  - {}\n", markdown_escape(sentence)));
            }
        }
        for sentence in &side.disturbance {
            out.push_str(&format!("\n> **Disturbed:** {}.\n", markdown_escape(sentence)));
        }
        if let Some(advice) = &side.advice {
            out.push_str(&format!("\n> **To tell:** {}.\n", markdown_escape(advice)));
        }
        if let Some(caution) = &side.caution {
            out.push_str(&format!("\n> {}\n", markdown_escape(caution)));
        }
    }
    let headings = headings(comparison);
    for workload in workloads(comparison) {
        out.push_str(&format!("\n### {}\n\n", markdown_escape(&workload)));
        out.push_str(&markdown_row(&headings));
        out.push_str(&format!("|{}\n", headings.iter().map(|_| " --- |").collect::<String>()));
        for row in comparison.rows.iter().filter(|r| r.workload == workload) {
            out.push_str(&markdown_row(&cells(row)));
        }
        for row in comparison.geomeans.iter().filter(|g| g.workload == workload) {
            let bold: Vec<String> = geomean_cells(row)
                .iter()
                .map(|c| if c.is_empty() { String::new() } else { format!("**{}**", markdown_escape(c)) })
                .collect();
            out.push_str(&format!("| {} |\n", bold.join(" | ")));
        }
    }
    if !comparison.unmatched.is_empty() {
        out.push_str("\n### Not compared\n\n");
        for u in &comparison.unmatched {
            out.push_str(&format!(
                "- {}: {} {} {} — {}\n",
                markdown_escape(&u.side),
                markdown_escape(&u.workload),
                markdown_escape(&u.test_id),
                markdown_escape(&u.metric),
                markdown_escape(&u.reason)
            ));
        }
    }
    out.push_str("\n### Environment differences\n\n");
    if comparison.differences.is_empty() {
        out.push_str("- none found in the fingerprints\n");
    }
    for difference in &comparison.differences {
        out.push_str(&format!("- {}\n", markdown_escape(difference)));
    }
    out.push_str(&format!("\n{}\n", markdown_escape(LEGEND)));
    out
}

/// Workloads in the order of the rows.
pub fn workloads(comparison: &Comparison) -> Vec<String> {
    let mut workloads: Vec<String> = Vec::new();
    for row in &comparison.rows {
        if !workloads.contains(&row.workload) {
            workloads.push(row.workload.clone());
        }
    }
    workloads
}

fn aligned(headings: &[String], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = headings.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut text = String::from("  ");
        for (i, width) in widths.iter().enumerate() {
            let cell = cells.get(i).map(String::as_str).unwrap_or("");
            let pad = " ".repeat(width - cell.chars().count());
            if i > 0 {
                text.push_str("  ");
            }
            if right[i] {
                text.push_str(&pad);
                text.push_str(cell);
            } else {
                text.push_str(cell);
                text.push_str(&pad);
            }
        }
        text.trim_end().to_string() + "\n"
    };
    let mut out = line(headings);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

fn markdown_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.iter().map(|c| markdown_escape(c)).collect::<Vec<_>>().join(" | "))
}

/// Escape what Markdown would otherwise read as markup (and HTML, which Markdown passes through).
pub fn markdown_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_for_people() {
        assert_eq!(metric_title("latency_p99"), "latency p99");
        assert_eq!(metric_title("latency_p99_9"), "latency p99.9");
        assert_eq!(metric_title("latency_mean"), "mean latency");
        assert_eq!(metric_title("client_cpu_per_transaction"), "client CPU per transaction");
        assert_eq!(metric_title("cpu_per_io"), "CPU per I/O");
        assert_eq!(metric_title("iops"), "IOPS");
        assert_eq!(metric_title("commits_per_s"), "commits per second");
        assert_eq!(metric_title("job_cv"), "job-to-job spread (cv)");
    }

    #[test]
    fn markdown_special_characters_are_escaped() {
        assert_eq!(markdown_escape("a|b <i>*x*</i>"), "a\\|b &lt;i&gt;\\*x\\*&lt;/i&gt;");
    }
}
