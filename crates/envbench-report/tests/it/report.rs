//! Comparison, renderers and the HTML report on a real SQLite store holding runs of several workloads.

use crate::common;

use common::{HOSTILE_HOST, HOSTILE_LABEL, HOSTILE_TAG, assert_well_formed, build, chart_kinds};
use envbench_core::model::Direction;
use envbench_report::{Format, render, render_report};
use envbench_store::{ResultStore, SqliteStore};
use envbench_verdict::{Side, Significance, VerdictError, compare, resolve_side, resolve_sides};

fn sides(store: &dyn ResultStore, specs: &[&str]) -> Vec<Side> {
    resolve_sides(store, &specs.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

#[test]
fn sides_resolve_by_label_tags_and_run_id() {
    let fixture = build("resolve");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let by_label = resolve_side(&store, "virtual").unwrap();
    // Complete runs only: the failed and the running "virtual" runs stay out.
    assert_eq!(by_label.runs.len(), 5);
    assert!(by_label.runs.iter().all(|r| r.summary.status == envbench_core::RunStatus::Complete));
    assert_eq!(resolve_side(&store, "env=physical").unwrap().runs.len(), 5);
    assert_eq!(resolve_side(&store, "tag:env=physical").unwrap().runs.len(), 5);
    let by_run = resolve_side(&store, &fixture.physical_disk[0][..8]).unwrap();
    assert_eq!(by_run.runs.len(), 1);
    assert_eq!(by_run.name, format!("physical-p3605 ({})", &fixture.physical_disk[0][..8]));
    assert!(matches!(resolve_side(&store, "nobody"), Err(VerdictError::EmptySide(..))));
    assert!(matches!(resolve_side(&store, "run:ffffffff"), Err(VerdictError::Store(_))));
    assert!(matches!(resolve_side(&store, "tag:=x"), Err(VerdictError::BadSide(_))));
    // The same runs twice compare nothing: refused, naming both sides (a verdict would read "unchanged").
    let twice = resolve_sides(&store, &["virtual".to_string(), "label:virtual".to_string()]);
    assert!(
        matches!(&twice, Err(VerdictError::BadSide(m)) if m.contains("'virtual' and 'label:virtual' are the same runs")),
        "{twice:?}"
    );
    // Sides of different runs that happen to share a name get distinct names.
    let mut named = vec![Side::new("nvme", Vec::new()), Side::new("nvme", Vec::new())];
    envbench_verdict::unique_names(&mut named);
    assert_eq!((named[0].name.as_str(), named[1].name.as_str()), ("nvme", "nvme #2"));
}

#[test]
fn matched_results_are_compared_with_direction_and_significance() {
    let fixture = build("compare");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let comparison = compare(&sides(&store, &["physical-p3605", "virtual"]), &common::WORKLOADS);
    let row = |workload: &str, test: &str, metric: &str| {
        comparison
            .rows
            .iter()
            .find(|r| r.workload == workload && r.test_id == test && r.metric == metric)
            .unwrap_or_else(|| panic!("{workload} {test} {metric} missing"))
    };

    let throughput = row("disk", "SEQ1M Q8T1 read", "throughput");
    let (a, b) = (throughput.cells[0].as_ref().unwrap(), throughput.cells[1].as_ref().unwrap());
    assert_eq!((a.samples.len(), a.runs), (6, 2), "two runs of three samples pool");
    assert!((a.summary.median - 3200.0 * 1.004).abs() < 1e-9);
    assert!((b.summary.median - 3200.0 * 0.8 * 1.004).abs() < 1e-9);
    assert!(a.change.is_none(), "the baseline has no change");
    let change = b.change.as_ref().unwrap();
    assert!((change.better_percent.unwrap() + 20.0).abs() < 1e-9, "{:?}", change.better_percent);
    assert_eq!(change.significance, Significance::Significant);
    // 6 against 6, completely separated: the exact two-sided p is 2 / C(12, 6).
    assert!((change.p_value.unwrap() - 2.0 / 924.0).abs() < 1e-12);

    // Lower is better for latency: slower latency on B is worse, by the inverted ratio.
    let latency = row("disk", "RND4K Q32T1 read", "latency_p99");
    assert_eq!(latency.direction, Direction::LowerIsBetter);
    let change = latency.cells[1].as_ref().unwrap().change.as_ref().unwrap();
    assert!((change.ratio.unwrap() - 0.8).abs() < 1e-9);

    // One sample a side (a ranread step) can never be significant.
    let step = row("ranread", "J=4", "iops");
    assert_eq!(step.cells[1].as_ref().unwrap().change.as_ref().unwrap().significance, Significance::TooFewSamples);
    // Three against three: Mann-Whitney cannot reach p < 0.05 (its smallest p is 0.1), so Welch's t-test on
    // logarithms decides.
    let cube = row("cube", "4 aggregation", "elapsed");
    let change = cube.cells[1].as_ref().unwrap().change.as_ref().unwrap();
    assert_eq!(change.method, Some(envbench_core::stats::PValueMethod::WelchLog));
    assert_ne!(change.significance, Significance::TooFewSamples);

    // Geometric mean of the direction-aware ratios per workload and metric.
    let geomean = comparison.geomeans.iter().find(|g| g.workload == "disk" && g.metric == "throughput").unwrap();
    let cell = geomean.cells[1].as_ref().unwrap();
    assert_eq!(cell.tests, 2);
    assert!((cell.ratio - 0.8).abs() < 1e-9);
    assert!(geomean.cells[0].is_none());

    // Natural order of tests: Q1, Q2, Q10.
    let queries: Vec<&str> =
        comparison.rows.iter().filter(|r| r.workload == "tpch").map(|r| r.test_id.as_str()).collect();
    assert_eq!(queries, vec!["Q1", "Q2", "Q10"]);

    // What differs between the environments.
    let differences = comparison.differences.join("\n");
    for expected in ["SMT: on (active) vs off (inactive)", "Hypervisor: none (bare metal) vs kvm", "Mount options"] {
        assert!(differences.contains(expected), "{expected} missing in:\n{differences}");
    }
    assert!(!differences.contains("Host"), "host names are not an environment difference");
}

#[test]
fn different_parameters_are_never_matched() {
    let fixture = build("unmatched");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let comparison = compare(&sides(&store, &["physical-p3605", "virtual"]), &common::WORKLOADS);
    assert!(comparison.rows.iter().all(|r| r.test_id != "RND4K Q1T1 read"));
    let unmatched: Vec<_> = comparison.unmatched.iter().filter(|u| u.test_id == "RND4K Q1T1 read").collect();
    assert_eq!(unmatched.len(), 2);
    for (side, other) in [("physical-p3605", "B"), ("virtual", "A")] {
        let entry = unmatched.iter().find(|u| u.side == side).unwrap();
        assert_eq!(entry.reason, format!("parameters differ from {other}"));
    }
}

#[test]
fn different_workload_versions_are_never_matched() {
    let fixture = build("versions");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let mut sides = sides(&store, &["physical-p3605", "virtual"]);
    for run in &mut sides[1].runs {
        for result in &mut run.results {
            if result.record.workload == "cube" {
                result.record.workload_version = 2;
            }
        }
    }
    let comparison = compare(&sides, &common::WORKLOADS);
    assert!(comparison.rows.iter().all(|r| r.workload != "cube"));
    assert!(
        comparison
            .unmatched
            .iter()
            .filter(|u| u.workload == "cube")
            .all(|u| u.reason.starts_with("workload version differs"))
    );
}

#[test]
fn text_markdown_and_json_say_the_same() {
    let fixture = build("renderers");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let comparison = compare(&sides(&store, &["physical-p3605", "virtual"]), &common::WORKLOADS);
    let text = render(&comparison, Format::Text);
    assert!(text.contains("A (baseline): physical-p3605"), "{text}");
    assert!(text.contains("1.25x slower") && !text.contains("% worse"), "{text}");
    assert!(text.contains("p=0.002"), "{text}");
    assert!(text.contains(" ~"), "not significant shows ~:\n{text}");
    assert!(text.contains("geomean"), "{text}");
    assert!(text.contains("parameters differ from B"), "{text}");
    assert!(text.contains("SMT: on (active) vs off (inactive)"), "{text}");

    let markdown = render(&comparison, Format::Markdown);
    assert!(markdown.contains("| TEST | METRIC | UNIT | A median |"), "{markdown}");
    assert!(markdown.contains("**geomean**"), "{markdown}");

    let json: serde_json::Value = serde_json::from_str(&render(&comparison, Format::Json)).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), comparison.rows.len());
    assert_eq!(json["sides"][1]["name"], "virtual");
    assert_eq!(json["alpha"], 0.05);
}

#[test]
fn report_is_self_contained_well_formed_html_with_every_chart() {
    let fixture = build("report");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let html = render_report(&sides(&store, &["physical-p3605", "virtual"]), &common::WORKLOADS);
    // Kept for looking at: target/tmp/report-tests/report/report.html.
    std::fs::write(fixture.path.with_file_name("report.html"), &html).unwrap();
    assert_well_formed(&html);
    // (Quotes are always escaped in text, so a quoted src or href can only be a real attribute.)
    for external in ["http://", "https://", "<script", "<link", "@import", "src=\"", "href=\""] {
        assert!(!html.contains(external), "the report must not load anything: found {external}");
    }
    let kinds = chart_kinds(&html);
    let expected: Vec<(&str, usize)> = vec![
        // Per metric and magnitude (values more than 10x apart get their own chart): disk's throughput and five
        // latency metrics two each (SEQ1M against RND4K and the Q1 test); cube and tpch elapsed; ranread's IOPS and
        // mean latency (the last step's collapse) two each.
        ("bars", 16),
        // one per disk test with percentiles
        ("percentiles", 2),
        ("ranread-iops", 1),
        ("ranread-latency", 1),
        // Changes against the baseline: one per workload by its headline metric, one per other metric of disk (5)
        // and ranread (1).
        ("relative", 10),
        ("sampler-cpu", 1),
        ("sampler-iops", 1),
        ("sampler-mbps", 1),
        ("verdict", 1),
    ];
    assert_eq!(kinds.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(), expected);
    assert!(html.contains("knee J=8"), "the knee is marked");
    assert!(html.contains("target 10 ms"), "the latency target is drawn");
    // Human names in titles: the workload's title and "elapsed time", never `elapsed` or `latency_p99`.
    assert!(html.contains("OLAP cube: elapsed time per step"));
    assert!(html.contains("analytic queries: elapsed time per query"));
    assert!(html.contains("change of latency p99.9 per test"));
    for title in html.split("<title id=").skip(1).map(|t| t.split("</title>").next().unwrap()) {
        assert!(!title.contains('_'), "a chart title with a stored name: {title}");
    }
    // One headline chart per workload; the rest one click away.
    for section in html.split("<section class=\"workload\"").skip(1) {
        let shown = section.split("<details").next().unwrap();
        assert_eq!(shown.matches("<svg").count(), 1, "one headline chart per workload:\n{shown}");
    }
    assert!(html.contains("class=\"differs\""), "differing environment rows are highlighted");
    // Patterns as well as colours, for print and colour-blind readers.
    assert!(html.contains("-p1\" patternUnits=\"userSpaceOnUse\""));
}

#[test]
fn labels_tags_and_host_names_are_escaped_everywhere() {
    let fixture = build("escaping");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let hostile = resolve_side(&store, &fixture.hostile).unwrap();
    let virtual_side = resolve_side(&store, "virtual").unwrap();
    assert_eq!(hostile.runs[0].summary.tags["note"], HOSTILE_TAG);
    let sides = vec![
        Side::new(HOSTILE_LABEL, hostile.runs.clone()),
        Side::new(format!("tag {HOSTILE_TAG}"), virtual_side.runs),
    ];
    let html = render_report(&sides, &common::WORKLOADS);
    assert_well_formed(&html);
    for raw in [HOSTILE_LABEL, HOSTILE_TAG, HOSTILE_HOST] {
        assert!(!html.contains(raw), "{raw} must be escaped");
    }
    // maud escapes what could end text or a (double-quoted) attribute; an apostrophe can do neither.
    assert!(html.contains("&lt;script&gt;alert('label')&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    let markdown = render(&compare(&sides, &common::WORKLOADS), Format::Markdown);
    assert!(!markdown.contains("<script>"), "{markdown}");
}

#[test]
fn one_run_alone_makes_a_report() {
    let fixture = build("single");
    let store = SqliteStore::open(&fixture.path, false).unwrap();
    let side = resolve_side(&store, &fixture.virtual_disk[0]).unwrap();
    let html = render_report(&[side], &common::WORKLOADS);
    assert_well_formed(&html);
    let kinds = chart_kinds(&html);
    // Throughput and five latency metrics of two tests, two magnitudes each: only the throughput's two tests share a
    // chart; each other chart would be one bar, so it is a number in the single figures' table.
    assert_eq!(kinds.get("bars"), Some(&1), "{kinds:?}");
    assert!(html.contains("<h3>Single figures</h3>") && html.contains("latency p99.9"), "{html}");
    assert_eq!(kinds.get("relative"), None, "nothing to change against");
    assert_eq!(kinds.get("percentiles"), Some(&2));
    assert!(!html.contains("class=\"differs\""));
}
