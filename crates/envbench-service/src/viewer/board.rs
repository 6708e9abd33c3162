//! The leaderboard in the viewer: its page (every environment ranked on one workload, default and tuned options apart,
//! flagged runs listed apart, filters by what the fingerprints say), loading the board a query asks for (shared with
//! the read API), and a run's place among the environments on its own page.

use super::respond::{Shared, first, html, known_workload, navigation, only_parameters, parse_query, with_store};
use crate::viewer_error::ViewerError;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use envbench_core::text::percent_encode;
use envbench_core::workload::Registry;
use envbench_report::html::{cell, num, page, table};
use envbench_report::leaderboard::Class;
use envbench_store::{ReadEnvironments, RunFilter};
use envbench_verdict::ordinal;
use maud::{Markup, html as markup};
use std::collections::BTreeMap;

/// `/leaderboard?workload=W&hypervisor=...`: every environment ranked on one workload, default and tuned options
/// apart, flagged runs listed apart; filters by what the fingerprints say.
pub(super) async fn leaderboard_page(State(viewer): Shared, RawQuery(query): RawQuery) -> Response {
    use envbench_report::leaderboard::FILTER_FIELDS;
    let query = parse_query(query.as_deref());
    with_store(viewer, move |store, workloads| {
        check_leaderboard_query(&query, workloads)?;
        let Some((board, present)) = load_leaderboard(store, workloads, &query)? else {
            let body = markup! { (navigation()) h1 { "Leaderboard" } "\n" p { "No complete runs yet." } "\n" };
            return Ok(html(page("envbench leaderboard", body)));
        };
        let workload = board.workload.as_str();
        let priced =
            [&board.default, &board.tuned, &board.flagged].iter().any(|l| l.iter().any(|e| e.price_per_hour.is_some()));
        let headings: Vec<String> = ["#", "Environment", "Score", "Beats", "Runs", "Tests"]
            .into_iter()
            .map(String::from)
            .chain(
                priced
                    .then(|| {
                        let per = board.cost_unit.as_ref().map(|u| format!("Cost per {u}"));
                        ["Price/h".to_string()].into_iter().chain(per).chain(["Score per price".to_string()])
                    })
                    .into_iter()
                    .flatten(),
            )
            .chain(FILTER_FIELDS.iter().map(|(_, label)| label.to_string()))
            .collect();
        let sections = [
            ("Default options", &board.default, empty_list_reason(&board, Class::Default)),
            ("Tuned options", &board.tuned, empty_list_reason(&board, Class::Tuned)),
            ("Flagged: disturbed, or memory-backed storage (not ranked)", &board.flagged, "None.".to_string()),
        ];
        let dash = || "-".to_string();
        let row = |e: &envbench_report::leaderboard::Entry, others: usize| {
            let per_price = e.score.zip(e.price_per_hour).map(|(score, price)| format!("{:.3}", score / price));
            markup! {
                tr {
                    (num(&e.position.map(ordinal).unwrap_or_else(dash)))
                    td {
                        (entry_name(e))
                        @if e.flagged_runs > 0 {
                            " " span class="note" {
                                "(" (e.flagged_runs) " flagged run" (envbench_core::text::plural(e.flagged_runs))
                                " left out)"
                            }
                        }
                        @if let Some(submitter) = &e.submitter {
                            " " span class="submitter" {
                                "by " a href={ "/?submitter=" (percent_encode(submitter)) } { (submitter) }
                            }
                        }
                    }
                    (num(&e.score.map(envbench_report::leaderboard::score_words).unwrap_or_else(dash)))
                    (num(&e.percentile.map(|p| format!("{p:.0}% of {others}")).unwrap_or_else(dash)))
                    (num(&e.runs.len().to_string()))
                    (num(&e.tests.to_string()))
                    @if priced {
                        (num(&e.price_per_hour.map(|p| p.to_string()).unwrap_or_else(dash)))
                        @if board.cost_unit.is_some() {
                            (num(&e.unit_cost.map(envbench_verdict::cost_number).unwrap_or_else(dash)))
                        }
                        (num(&per_price.unwrap_or_else(dash)))
                    }
                    @for value in &e.fields { (cell(value)) }
                }
            }
        };
        let body = markup! {
            (navigation())
            h1 { "Leaderboard: " (board.title) } "\n"
            p {
                "Workloads: "
                @for (at, w) in present.iter().enumerate() {
                    @if at > 0 { " · " }
                    @if *w == workload {
                        strong { (w) }
                    } @else {
                        a href={ "/leaderboard?workload=" (percent_encode(w)) } { (w) }
                    }
                }
            }
            "\n"
            form method="get" action="/leaderboard" {
                input type="hidden" name="workload" value=(workload);
                @for (name, label) in FILTER_FIELDS {
                    @let chosen = board.filters.get(name);
                    label {
                        (label) " "
                        select name=(name) {
                            option value="" { "any" }
                            @for value in board.choices.get(name).into_iter().flatten() {
                                option selected[chosen == Some(value.as_str())] { (value) }
                            }
                        }
                    }
                    " "
                }
                button type="submit" { "Filter" }
            }
            "\n"
            p class="note" {
                "Each environment's score: its median on every headline test against the median of the environments \
                 in its list, direction-aware, as a geometric mean (1.20x faster than the median: its tests run 1.20 \
                 times as fast as the middle environment's). An environment's figure is its latest runs (at most 5); \
                 on a service, each submitter's runs of it are an entry of their own, so nobody's uploads move \
                 another's figure. Runs with a built-in profile's options and tuned runs are ranked apart; disturbed \
                 runs and memory-backed storage are listed apart, unranked."
            }
            "\n"
            @for (title, entries, none) in &sections {
                h2 { (title) } "\n"
                @if entries.is_empty() {
                    p { (none) } "\n"
                } @else {
                    @let rows: Vec<Markup> =
                        entries.iter().map(|e| row(e, entries.len().saturating_sub(1))).collect();
                    (table(&headings, &rows))
                }
            }
        };
        Ok(html(page(&format!("envbench leaderboard: {}", board.title), body)))
    })
    .await
}

/// A leaderboard entry's name: its labels, linked to its environment page, with the fingerprint's name beneath; the
/// fingerprint's name alone when its runs carry no label.
pub(super) fn entry_name(entry: &envbench_report::leaderboard::Entry) -> Markup {
    let link = |text: &str| markup! { a href={ "/environment/" (entry.environment.id) } { (text) } };
    if entry.labels.is_empty() {
        return link(&entry.environment.name);
    }
    let mut labels = entry.labels.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if entry.labels.len() > 3 {
        labels.push_str(&format!(" +{}", entry.labels.len() - 3));
    }
    markup! { (link(&labels)) br; span class="fingerprint" { (entry.environment.name) } }
}

/// Why a leaderboard list is empty, in words: filters that leave nothing, runs that are all flagged (the usual
/// reason on a busy host), or no run with those options at all.
pub(super) fn empty_list_reason(board: &envbench_report::leaderboard::Leaderboard, class: Class) -> String {
    let options = match class {
        Class::Default => "with a built-in profile's options",
        _ => "with tuned options",
    };
    let flagged = board.flagged.iter().filter(|e| e.options == Some(class)).count();
    let filtered = if board.filters.pairs().is_empty() { "" } else { " that passes these filters" };
    match flagged {
        0 if filtered.is_empty() => format!("No run of this workload {options} here yet."),
        0 => format!("No run {options} passes these filters."),
        n => format!(
            "None ranks: every run {options}{filtered} is flagged ({n} environment{}, listed under Flagged below: \
             disturbed by other load, or on memory-backed storage). Run again when the host is quiet.",
            envbench_core::text::plural(n)
        ),
    }
}

/// Refuse a leaderboard query with a parameter it does not take or a workload envbench does not have.
pub(crate) fn check_leaderboard_query(query: &[(String, String)], workloads: &Registry) -> Result<(), ViewerError> {
    let mut taken = vec!["workload"];
    taken.extend(envbench_report::leaderboard::FILTER_FIELDS.iter().map(|(name, _)| *name));
    only_parameters(query, &taken)?;
    known_workload(query, workloads)
}

/// The leaderboard a query asks for (`workload=W`, the first workload with a complete run when none is named, and
/// any filters), and the workloads that have complete runs; `None` when the store has no complete run.
pub(crate) fn load_leaderboard(
    store: &dyn ReadEnvironments,
    workloads: &Registry,
    query: &[(String, String)],
) -> Result<Option<(envbench_report::leaderboard::Leaderboard, Vec<String>)>, ViewerError> {
    use envbench_report::leaderboard::{FILTER_FIELDS, Filters, RUNS_PER_ENVIRONMENT, choices, leaderboard};
    // Only the runs of the workload asked for, when one is: a store of many workloads lists less.
    let asked = first(query, "workload");
    let summaries = store.list_runs(&RunFilter { workload: asked.map(str::to_string), ..Default::default() })?;
    let complete: Vec<&envbench_core::model::RunSummary> =
        summaries.iter().filter(|r| r.status == envbench_core::model::RunStatus::Complete).collect();
    let present: Vec<String> = match asked {
        // The links to the other workloads' leaderboards: each workload with a run.
        Some(_) => {
            let mut present = Vec::new();
            for name in workloads.names() {
                let filter = RunFilter { workload: Some(name.to_string()), limit: Some(1), ..Default::default() };
                if !store.list_runs(&filter)?.is_empty() {
                    present.push(name.to_string());
                }
            }
            present
        }
        None => workloads
            .names()
            .into_iter()
            .filter(|w| complete.iter().any(|r| r.workload == *w))
            .map(str::to_string)
            .collect(),
    };
    // Opened without a workload: the first whose runs hold results to rank (sysinfo's hold none), else the first.
    let ranked = present.iter().find(|w| complete.iter().any(|r| r.workload == **w && r.result_count > 0));
    let Some(workload) = asked.or(ranked.or(present.first()).map(String::as_str)) else { return Ok(None) };
    if !complete.iter().any(|r| r.workload == workload) {
        return Err(ViewerError::NotFound(
            format!("leaderboard of '{workload}' (no complete run of it here)"),
            String::new(),
        ));
    }
    let mut filters = Filters::default();
    for (name, _) in FILTER_FIELDS {
        if let Some(value) = first(query, name) {
            filters.set(name, value.to_string());
        }
    }
    // The newest runs of each environment that passes the filters, read from the fingerprints alone: a store of
    // thousands of runs loads only what ranks.
    let of_workload: Vec<&&envbench_core::model::RunSummary> =
        complete.iter().filter(|r| r.workload == workload).collect();
    let environments = store.environments_of(&of_workload.iter().map(|r| r.uuid.as_str()).collect::<Vec<_>>())?;
    // Each environment once, however many runs it has: what the form offers, which pass the filters, and who it is.
    let used: BTreeMap<&str, &envbench_core::fingerprint::Fingerprint> = environments
        .runs
        .values()
        .filter_map(|hash| Some((hash.as_str(), environments.fingerprints.get(hash)?)))
        .collect();
    let offered = choices(used.values().copied());
    let admitted: std::collections::BTreeSet<&str> =
        used.iter().filter(|(_, fp)| filters.admits(fp)).map(|(hash, _)| *hash).collect();
    let identities = envbench_report::Identities::new(&environments);
    let mut taken: BTreeMap<envbench_report::leaderboard::EntryKey, usize> = BTreeMap::new();
    let mut runs = Vec::new();
    for summary in &of_workload {
        let admits = environments.runs.get(&summary.uuid).is_some_and(|hash| admitted.contains(hash.as_str()));
        let Some(identity) = identities.of(summary).filter(|_| admits) else { continue };
        let key = (identity.id.clone(), summary.submitter.clone());
        let count = taken.entry(key).or_default();
        if *count < 2 * RUNS_PER_ENVIRONMENT {
            *count += 1;
            runs.push(store.load_run(&summary.uuid)?);
        }
    }
    Ok(Some((leaderboard(workload, &runs, &filters, offered, workloads), present)))
}

/// Where a run stands on each of its headline tests (the test with its parameters' hash) among the environments of
/// its class in this store.
pub(super) fn percentiles_section(
    board: &envbench_report::leaderboard::Leaderboard,
    run: &envbench_core::model::StoredRun,
    workloads: &Registry,
) -> Markup {
    use envbench_report::leaderboard::{Class, class, test_percentiles};
    let class = class(run);
    let heading = markup! { h2 { "Among the environments here" } "\n" };
    if class == Class::Flagged {
        return markup! {
            (heading)
            p {
                "Not ranked: this run is flagged (disturbed by other load, or its storage is memory), and flagged \
                 runs are listed apart on the " a href="/leaderboard" { "leaderboard" } "."
            }
            "\n"
        };
    }
    let percentiles = test_percentiles(board, run, workloads);
    if percentiles.iter().all(|p| p.percentile.is_none()) {
        return markup! {
            (heading) p { "No other environment with " (class.words()) " ran these tests with these parameters yet." } "\n"
        };
    }
    let headings: Vec<String> =
        ["Test", "Metric", "This run", "Median of the others", "Environments", "Beats"].map(String::from).to_vec();
    let rows: Vec<Markup> = percentiles
        .iter()
        .map(|p| {
            let unit = |v: f64| format!("{} {}", envbench_verdict::number(v), p.test.unit);
            markup! {
                tr {
                    (cell(&p.test.name()))
                    (cell(&p.test.metric))
                    (num(&unit(p.value)))
                    (num(&p.median_of_environments.map(unit).unwrap_or_else(|| "-".into())))
                    (num(&p.environments.to_string()))
                    (num(&p.percentile.map(|v| format!("{v:.0}%")).unwrap_or_else(|| "-".into())))
                }
            }
        })
        .collect();
    markup! {
        (heading)
        p class="note" {
            "Each headline test, matched by its parameters' hash, against every other environment's median of it \
             among runs with " (class.words()) " (each environment's latest runs, at most "
            (envbench_report::leaderboard::RUNS_PER_ENVIRONMENT) "): the share of them this run beats. See the "
            a href={ "/leaderboard?workload=" (percent_encode(&board.workload)) } { "leaderboard" } "."
        }
        "\n"
        (table(&headings, &rows))
    }
}
