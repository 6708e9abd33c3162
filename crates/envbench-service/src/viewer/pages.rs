//! The viewer's pages of runs and comparisons: the list of runs (filterable by label, tag, host, workload and date), a
//! run's page, a comparison of the runs picked, and its downloads (the HTML report, Markdown, JSON).

use super::board::{load_leaderboard, percentiles_section};
use super::respond::{Shared, all, first, html, navigation, parse_query, with_store};
use crate::viewer_error::ViewerError;
use axum::extract::{Path, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use envbench_core::model::parse_tag;
use envbench_report::html::{cell, num, page, table};
use envbench_report::run_identity;
use envbench_report::{render_json, render_markdown};
use envbench_report::{render_report_for, report_sections};
use envbench_store::{ReadEnvironments, RunFilter};
use envbench_verdict::EnvironmentIdentity;
use envbench_verdict::VerdictError;
use envbench_verdict::compare;
use envbench_verdict::{Side, resolve_side, run_name, unique_names};
use maud::{Markup, html as markup};
use std::collections::BTreeMap;

/// At most this many runs are listed on one page.
pub(super) const LIST_LIMIT: usize = 500;

pub(super) async fn list_page(State(location): Shared, RawQuery(query): RawQuery) -> Response {
    let query = parse_query(query.as_deref());
    with_store(location, move |store, workloads| {
        let mut tags = BTreeMap::new();
        for text in first(&query, "tag").unwrap_or("").split(',').filter(|t| !t.trim().is_empty()) {
            let (key, value) = parse_tag(text).map_err(VerdictError::BadSide)?;
            tags.insert(key, value);
        }
        let filter = RunFilter {
            workload: first(&query, "workload").map(String::from),
            label: first(&query, "label").map(String::from),
            tags,
            host: first(&query, "host").map(String::from),
            submitter: first(&query, "submitter").map(String::from),
            limit: None,
        };
        let (from, to) = (first(&query, "from"), first(&query, "to"));
        // Without dates, the store reads the newest runs only.
        let filter = RunFilter { limit: (from.is_none() && to.is_none()).then_some(LIST_LIMIT), ..filter };
        let runs: Vec<_> = store
            .list_runs(&filter)?
            .into_iter()
            .filter(|r| from.is_none_or(|from| r.started_at.get(..10).unwrap_or("") >= from))
            .filter(|r| to.is_none_or(|to| r.started_at.get(..10).unwrap_or("") <= to))
            .take(LIST_LIMIT)
            .collect();
        let environments = store.environments_of(&runs.iter().map(|r| r.uuid.as_str()).collect::<Vec<_>>())?;
        let value = |key: &str| first(&query, key).unwrap_or("").to_string();
        // Each run's headline figure, as its workload words it (the scorecard's line).
        let headlines: Vec<String> = runs
            .iter()
            .map(|r| store.load_run(&r.uuid).map(|run| workloads.of_run(&run).headline(&run)))
            .collect::<Result<_, _>>()?;
        let rows: Vec<Markup> = runs
            .iter()
            .zip(&headlines)
            .map(|(r, headline)| {
                let tags = envbench_report::user_tags(&r.tags, ", ");
                markup! {
                    tr {
                        td { input type="checkbox" name="run" value=(r.uuid) aria-label={ "compare " (r.uuid) }; }
                        td { a href={ "/run/" (r.uuid) } { (r.uuid.get(..8).unwrap_or(&r.uuid)) } }
                        (cell(&r.started_at.replace('T', " ")))
                        (cell(&r.workload))
                        (cell(headline))
                        (cell(&if r.disturbed { format!("{} (disturbed)", r.status) } else { r.status.to_string() }))
                        (cell(r.label.as_deref().unwrap_or("")))
                        (cell(&tags))
                        (environment_cell(run_identity(r, &environments).as_ref(), r.host.as_deref()))
                        (num(&r.result_count.to_string()))
                    }
                }
            })
            .collect();
        let headings: Vec<String> = [
            "",
            "Run",
            "Started (UTC)",
            "Workload",
            "Headline",
            "Status",
            "Label",
            "Tags",
            "Environment (host)",
            "Results",
        ]
        .map(String::from)
        .to_vec();
        let side_input = markup! {
            label { "Side " input type="text" name="side" placeholder="label, key=value or run id"; }
        };
        let body = markup! {
            (navigation())
            h1 { "envbench runs" } "\n"
            form class="filters" method="get" action="/" {
                label { "Label " input type="text" name="label" value=(value("label")); }
                label { "Tags " input type="text" name="tag" value=(value("tag")) placeholder="key=value,key=value"; }
                label { "Host " input type="text" name="host" value=(value("host")); }
                label { "Workload " input type="text" name="workload" value=(value("workload")); }
                label { "From " input type="date" name="from" value=(value("from")); }
                label { "To " input type="date" name="to" value=(value("to")); }
                button type="submit" { "Filter" } " " a href="/" { "clear" }
            }
            "\n"
            form method="get" action="/compare" {
                "\n"
                p {
                    "Tick runs to compare (each ticked run is one side, the first is the baseline), or name sides \
                     below by label, tags (key=value) or run id; a side named by label or tags holds all its complete \
                     runs, and the verdict's interval resamples whole runs."
                }
                "\n"
                @if runs.is_empty() { p { "No runs match." } "\n" } @else { (table(&headings, &rows)) }
                p { (side_input) " " (side_input) " " button type="submit" { "Compare" } }
                "\n"
            }
            "\n"
        };
        Ok(html(page("envbench runs", body)))
    })
    .await
}

pub(super) async fn run_page(State(location): Shared, Path(id): Path<String>) -> Response {
    with_store(location, move |store, workloads| {
        let run = store.load_run(&store.find_run(&id)?)?;
        let uuid = run.summary.uuid.clone();
        let side = Side::new(run_name(&run), vec![run]);
        let sides = [side];
        let comparison = compare(&sides, workloads);
        let run = &sides[0].runs[0];
        // The user's own tags; a suite's bookkeeping (its id, plan hash and item) is said as the suite it ran in.
        let is_suite_tag = |key: &str| key == "suite" || key.starts_with("suite.");
        let tags = run
            .summary
            .tags
            .iter()
            .filter(|(k, _)| !is_suite_tag(k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let tag = |key: &str| run.summary.tags.get(key).cloned();
        let suite = tag("suite").map(|id| {
            let name = tag("suite.name").unwrap_or_else(|| "a suite".into());
            let item = tag("suite.item").map_or(String::new(), |item| format!(", its run {item}"));
            format!("{name}{item} (suite {})", id.chars().take(8).collect::<String>())
        });
        let facts = [
            ("Run", uuid.clone()),
            ("Workload", run.summary.workload.clone()),
            (
                "Status",
                run.summary
                    .status_reason
                    .as_ref()
                    .map_or(run.summary.status.to_string(), |r| format!("{} ({r})", run.summary.status)),
            ),
            ("Started", run.summary.started_at.clone()),
            ("Ended", run.summary.ended_at.clone().unwrap_or_else(|| "-".into())),
            ("Label", run.summary.label.clone().unwrap_or_default()),
            ("Tags", if tags.is_empty() { "-".into() } else { tags }),
            ("Suite", suite.unwrap_or_else(|| "-".into())),
            ("Submitter", run.summary.submitter.clone().unwrap_or_else(|| "-".into())),
            ("Command", run.command_line.clone()),
            ("envbench", run.tool_version.clone()),
        ];
        let disturbance = run.series.as_ref().and_then(|s| s.disturbance()).map(|d| ("Disturbed", d.reason));
        let rows: Vec<Markup> = facts
            .iter()
            .cloned()
            .chain(disturbance)
            .map(|(k, v)| markup! { tr { th scope="row" { (k) } (cell(&v)) } })
            .collect();
        let digested =
            run.results.iter().filter(|r| r.record.flags.iter().any(|f| envbench_store::is_digest_flag(f))).count();
        let mut percentiles = None;
        if run.summary.status == envbench_core::model::RunStatus::Complete {
            let query = [("workload".to_string(), run.summary.workload.clone())];
            if let Some((board, _)) = load_leaderboard(store, workloads, &query)? {
                percentiles = Some(percentiles_section(&board, run, workloads));
            }
        }
        let body = markup! {
            (navigation())
            h1 { "Run " (sides[0].name) } "\n"
            p { a href={ "/report.html?run=" (uuid) } { "Download this run's report" } } "\n"
            (table(&["".to_string(), "".to_string()], &rows))
            @if digested > 0 {
                p class="note" {
                    (digested) " of its results have more than " (envbench_store::DIGEST_ABOVE) " samples: this page \
                    shows each from a digest of " (envbench_store::DIGEST_POINTS) " order statistics (its minimum, \
                    median and maximum exact), so that it costs what any page costs. "
                    a href={ "/api/v1/runs/" (uuid) } { "The run as kept" } " has every sample."
                }
                "\n"
            }
            @if let Some(percentiles) = percentiles { (percentiles) }
            (report_sections(&comparison, &sides, workloads))
        };
        Ok(html(page(&format!("envbench run {}", sides[0].name), body)))
    })
    .await
}

/// An environment's name linking to its history, with the host name.
pub(super) fn environment_cell(identity: Option<&EnvironmentIdentity>, host: Option<&str>) -> Markup {
    markup! {
        td {
            @if let Some(identity) = identity {
                a href={ "/environment/" (identity.id) } { (identity.name) }
            } @else {
                "?"
            }
            @if let Some(host) = host { " " span class="note" { "(" (host) ")" } }
        }
    }
}

/// The sides a compare request names: every `side=` spec, then every ticked `run=`.
pub(super) fn requested_sides(
    store: &dyn ReadEnvironments,
    query: &[(String, String)],
) -> Result<Vec<Side>, ViewerError> {
    let mut sides = Vec::new();
    for spec in all(query, "side") {
        sides.push(resolve_side(store, spec)?);
    }
    for id in all(query, "run") {
        sides.push(resolve_side(store, &format!("run:{id}"))?);
    }
    if sides.len() < 2 {
        return Err(VerdictError::TooFewSides(sides.len()).into());
    }
    unique_names(&mut sides);
    Ok(sides)
}

pub(super) async fn compare_page(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    let raw = raw.unwrap_or_default();
    with_store(location, move |store, workloads| {
        let sides = requested_sides(store, &query)?;
        let comparison = compare(&sides, workloads);
        let names: Vec<&str> = sides.iter().map(|s| s.name.as_str()).collect();
        let title = format!("Compare {}", names.join(" vs "));
        let body = markup! {
            (navigation())
            h1 { (title) } "\n"
            p class="no-print" {
                a href={ "/report.html?" (raw) } { "Download the HTML report" } " · "
                a href={ "/compare.md?" (raw) } { "Markdown" } " · " a href={ "/compare.json?" (raw) } { "JSON" }
            }
            "\n"
            (report_sections(&comparison, &sides, workloads))
        };
        Ok(html(page(&title, body)))
    })
    .await
}

pub(super) async fn report_download(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    with_store(location, move |store, workloads| {
        // One run alone is a report too (the run page links it).
        let sides = match requested_sides(store, &query) {
            Err(ViewerError::Verdict(VerdictError::TooFewSides(1))) => {
                let id = all(&query, "run").first().or(all(&query, "side").first()).copied().unwrap_or_default();
                vec![resolve_side(store, id)?]
            }
            other => other?,
        };
        let report = render_report_for(&compare(&sides, workloads), &sides, workloads);
        Ok((
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_DISPOSITION, "attachment; filename=\"envbench-report.html\""),
            ],
            report,
        )
            .into_response())
    })
    .await
}

pub(super) async fn compare_json(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    with_store(location, move |store, workloads| {
        let comparison = compare(&requested_sides(store, &query)?, workloads);
        Ok(([(header::CONTENT_TYPE, "application/json")], render_json(&comparison)).into_response())
    })
    .await
}

pub(super) async fn compare_markdown(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    with_store(location, move |store, workloads| {
        let comparison = compare(&requested_sides(store, &query)?, workloads);
        Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], render_markdown(&comparison)).into_response())
    })
    .await
}
