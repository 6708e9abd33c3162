//! HTML building blocks shared by the report and the web viewer: the page frame with its inline style sheet, and
//! tables. Every page is built with maud's `html!`, which escapes each value it inserts, so nothing is escaped by
//! hand. Nothing here loads anything from the network: no scripts, fonts or images.

use maud::{DOCTYPE, Markup, PreEscaped, html};

/// The style sheet of every page: print-friendly, system fonts only.
pub const STYLE: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5rem auto; max-width: 1180px;
       padding: 0 1rem; color: #111; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #bbb; }
h3 { font-size: 1.05rem; margin-top: 1.5rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
th, td { border: 1px solid #ccc; padding: .2rem .45rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.geomean td { font-weight: bold; background: #f7f7f7; }
.better { color: #005a8c; } .worse { color: #a33a00; }
.better::before { content: "▲ "; } .worse::before { content: "▼ "; }
.noisy { text-decoration: underline dotted; }
tr.differs td, tr.differs th { background: #fff3c4; }
tr.differs th::after { content: " ≠"; }
.note { color: #444; font-size: .85rem; }
.fingerprint { color: #555; font-size: .8rem; }
figure.chart { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; overflow-x: auto; max-width: 100%; }
svg.chart { max-width: 100%; height: auto; font-family: inherit; }
svg .chart-title { font-size: 14px; font-weight: bold; }
svg .legend, svg .tick, svg .category, svg .axis-label { font-size: 11px; fill: #222; }
svg .value { font-size: 9.5px; fill: #111; }
svg .grid { stroke: #ddd; stroke-width: 1; }
svg .axis { stroke: #333; stroke-width: 1; }
svg .whisker { stroke: #000; stroke-width: 1.2; fill: none; }
svg .line { fill: none; stroke-width: 2; }
svg .reference { stroke: #a33a00; stroke-width: 1.5; stroke-dasharray: 5 4; }
svg .reference-label, svg .mark-label { font-size: 11px; font-weight: bold; fill: #111; }
svg .mark { fill: none; stroke: #000; stroke-width: 2; }
svg .span { fill: #2a7ab0; fill-opacity: 0.12; stroke: none; }
form.filters label { margin-right: .8rem; display: inline-block; }
form.filters input[type=text], form.filters input[type=date] { width: 9rem; }
nav a { margin-right: 1rem; }
div.wide { overflow-x: auto; max-width: 100%; }
details { margin: .6rem 0; } details > summary { cursor: pointer; color: #0b4f7c; }
details > summary h2 { display: inline; border: none; font-size: 1.25rem; }
section#verdict { border: 2px solid #0b4f7c; border-radius: 6px; padding: .2rem 1rem .6rem; margin: 1rem 0 2rem; }
section#verdict h2 { margin-top: .6rem; border: none; }
ul.verdict > li { margin: .45rem 0; overflow-wrap: anywhere; } ul.verdict ul { margin: .2rem 0; }
span.same { color: #444; }
p.caution { border-left: 3px solid #a36b00; padding-left: .6rem; color: #333; overflow-wrap: anywhere; }
div.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: .8rem; }
div.card { border: 1px solid #bbb; border-radius: 6px; padding: .6rem .8rem; overflow-wrap: anywhere; }
div.card .card-title { font-weight: bold; } div.card .headline { font-size: 1.05rem; margin: .3rem 0; }
div.card.noisy-card { border-color: #a33a00; } div.card .flag { color: #a33a00; font-size: .85rem; }
ul.sides li, li { overflow-wrap: anywhere; }
td.grid { line-height: 1.25; } td.grid b { font-size: 1.05rem; }
div.disk-grid table th[scope=row] { white-space: nowrap; }
@media (max-width: 600px) { body { margin: .5rem auto; padding: 0 .5rem; } h1 { font-size: 1.2rem; }
  form.filters input[type=text], form.filters input[type=date] { width: 7rem; } }
@media print { body { max-width: none; margin: 0; } nav, form, .no-print { display: none; } h2 { break-after: avoid; } }
"#;

/// The tag that marks a page as envbench's, so a later `report -o` knows it may replace the file.
const GENERATOR: &str = "<meta name=\"generator\" content=\"envbench\">";

/// True when `head`, the start of a file, is a page envbench wrote: one with its generator tag, or one written before
/// the tag existed (its style sheet is envbench's).
pub fn is_envbench_page(head: &str) -> bool {
    head.starts_with("<!DOCTYPE html>")
        && (head.contains(GENERATOR) || STYLE.lines().filter(|l| l.len() > 40).take(3).all(|l| head.contains(l)))
}

/// A complete page around `body`.
pub fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n" head {
                "\n" meta charset="utf-8";
                "\n" meta name="generator" content="envbench";
                "\n" meta name="viewport" content="width=device-width, initial-scale=1";
                "\n" title { (title) }
                "\n" style { (PreEscaped(STYLE)) }
                "\n"
            }
            "\n" body { "\n" (body) "\n" }
            "\n"
        }
        "\n"
    }
    .into_string()
}

/// A table: headings and rows (each a `tr`). Cells starting with a number-like text are right-aligned by the caller
/// through [`num`]. The table scrolls sideways inside its own box on a narrow screen, so the page never does.
pub fn table(headings: &[String], rows: &[Markup]) -> Markup {
    html! {
        div.wide {
            table {
                "\n" thead { tr { @for heading in headings { th scope="col" { (heading) } } } }
                "\n" tbody { "\n" @for row in rows { (row) "\n" } }
                "\n"
            }
        }
        "\n"
    }
}

/// A right-aligned numeric cell.
pub fn num(text: &str) -> Markup {
    html! { td.num { (text) } }
}

/// A plain cell.
pub fn cell(text: &str) -> Markup {
    html! { td { (text) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_quotes_stay_inside_attributes() {
        assert_eq!(
            cell(r#"<script>alert("x")</script> & 'y'"#).into_string(),
            "<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'y'</td>"
        );
        let page = page("a \"title\" <b>", html! { p title=(r#"say "hi" & <go>"#) { "x" } });
        assert!(page.contains("<title>a &quot;title&quot; &lt;b&gt;</title>"), "{page}");
        assert!(page.contains(r#"<p title="say &quot;hi&quot; &amp; &lt;go&gt;">x</p>"#), "{page}");
        assert!(is_envbench_page(&page));
    }
}
