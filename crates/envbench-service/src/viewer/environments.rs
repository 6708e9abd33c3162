//! The viewer's pages of suites and environments: the suites (the runs of one `envbench run`), the environments (runs
//! grouped by machine identity), and one environment's history per workload with where it ranks among the others.

use super::respond::{Shared, html, navigation, with_store};
use crate::viewer_error::ViewerError;
use axum::extract::{Path, State};
use axum::response::Response;
use envbench_core::model::RunSummary;
use envbench_core::text::percent_encode;
use envbench_report::html::{cell, num, page, table};
use envbench_report::{Identities, RANK_MIN_ENVIRONMENTS, environment_summaries, histories, ranks, suite_summaries};
use envbench_store::{ReadEnvironments, RunFilter};
use envbench_verdict::EnvironmentIdentity;
use envbench_verdict::ordinal;
use envbench_verdict::{SUITE_TAG, run_name};
use maud::{Markup, html as markup};
use std::collections::BTreeMap;

/// An environment's history shows at most its latest this many runs of each workload.
pub(super) const HISTORY_RUNS: usize = 30;

/// The suites page shows the newest this many suites.
pub(super) const SUITES_SHOWN: usize = 100;

/// The newest suites, at most [`SUITES_SHOWN`], each with every run it holds, and whether older suites exist: the
/// suites by the index of tag values, then each one's runs by its tag, so a store of many runs is not read whole.
fn newest_suites(store: &dyn ReadEnvironments) -> Result<(Vec<RunSummary>, bool), ViewerError> {
    let mut ids = store.newest_tag_values(SUITE_TAG, SUITES_SHOWN + 1)?;
    let older = ids.len() > SUITES_SHOWN;
    ids.truncate(SUITES_SHOWN);
    let mut runs = Vec::new();
    for id in ids {
        let tags = [(SUITE_TAG.to_string(), id)].into();
        runs.extend(store.list_runs(&RunFilter { tags, ..Default::default() })?);
    }
    Ok((runs, older))
}

pub(super) async fn suites_page(State(viewer): Shared) -> Response {
    with_store(viewer, move |store, _| {
        let (runs, older) = newest_suites(store)?;
        let environments = store.environments_of(&runs.iter().map(|r| r.uuid.as_str()).collect::<Vec<_>>())?;
        let suites = suite_summaries(&runs, &environments);
        let rows: Vec<Markup> = suites
            .iter()
            .map(|suite| {
                let side = format!("{SUITE_TAG}={}", suite.id);
                markup! {
                    tr {
                        td {
                            input type="checkbox" name="side" value=(side) aria-label={ "compare suite " (suite.title()) };
                        }
                        td { b { (suite.title()) } br; span class="note" { "suite " (suite.id) } }
                        (cell(&format!("{} ({} complete)", suite.runs, suite.complete)))
                        td {
                            @for (at, e) in suite.environments.iter().enumerate() {
                                @if at > 0 { "; " }
                                a href={ "/environment/" (e.id) } { (e.name) }
                            }
                        }
                        td {
                            a href={ "/report.html?side=" (percent_encode(&side)) } { "report" } " "
                            @if let Some(previous) = &suite.previous {
                                a href={
                                    "/compare?side=" (percent_encode(&format!("{SUITE_TAG}={previous}"))) "&side="
                                    (percent_encode(&side))
                                } { "compare with the previous " (suite.name) }
                            }
                        }
                    }
                }
            })
            .collect();
        let headings: Vec<String> =
            ["", "Suite (label, name, start UTC)", "Runs", "Environment", ""].map(String::from).to_vec();
        let body = markup! {
            (navigation())
            h1 { "Suites" } "\n"
            p {
                "Each " code { "envbench run" } " is a suite: its runs share a suite id. Compare a suite with the one \
                 of the same name before it in one click, or tick two and compare them."
            }
            "\n"
            form method="get" action="/compare" {
                "\n"
                @if suites.is_empty() { p { "No suites yet: " code { "envbench run" } " runs one." } "\n" }
                @if !rows.is_empty() {
                    (table(&headings, &rows))
                    @if older {
                        p class="note" {
                            "The newest " (SUITES_SHOWN) " suites; older ones are in the "
                            a href="/" { "run list" } ", found by their tag (suite=ID)."
                        }
                        "\n"
                    }
                    p { button type="submit" { "Compare the ticked suites" } } "\n"
                }
            }
            "\n"
        };
        Ok(html(page("envbench suites", body)))
    })
    .await
}

pub(super) async fn environments_page(State(viewer): Shared) -> Response {
    with_store(viewer, move |store, _| {
        let (fingerprints, tallies) = store.fingerprint_tallies()?;
        let environments = environment_summaries(&fingerprints, &tallies);
        let rows: Vec<Markup> = environments
            .iter()
            .map(|e| {
                markup! {
                    tr {
                        td { a href={ "/environment/" (e.identity.id) } { (e.identity.name) } }
                        (cell(&e.labels.join(", ")))
                        (cell(&e.hosts.join(", ")))
                        (cell(&e.workloads.join(", ")))
                        (num(&e.runs.to_string()))
                        (cell(&e.last_run_at.replace('T', " ")))
                    }
                }
            })
            .collect();
        let headings: Vec<String> =
            ["Environment", "Labels", "Hosts", "Workloads", "Runs", "Last run (UTC)"].map(String::from).to_vec();
        let body = markup! {
            (navigation())
            h1 { "Environments" } "\n"
            p {
                "An environment is what its fingerprint says: CPU model and count, memory, hypervisor, and the file \
                 system and device under the data directory, whatever the host is called."
            }
            "\n"
            @if rows.is_empty() { p { "No runs yet." } "\n" } @else { (table(&headings, &rows)) }
        };
        Ok(html(page("envbench environments", body)))
    })
    .await
}

pub(super) async fn environment_page(State(viewer): Shared, Path(id): Path<String>) -> Response {
    with_store(viewer, move |store, workloads| {
        let summaries = store.list_runs(&RunFilter::default())?;
        let environments = store.environments()?;
        let identities = Identities::new(&environments);
        // Oldest first, so runs that started in the same instant keep the order they were stored in; complete runs
        // only, and of other environments only the workloads this one ran (what its rank compares).
        let complete: Vec<(&envbench_core::model::RunSummary, &EnvironmentIdentity)> = summaries
            .iter()
            .rev()
            .filter(|r| r.status == envbench_core::model::RunStatus::Complete)
            .filter_map(|r| Some((r, identities.of(r)?)))
            .collect();
        let identity = complete.iter().find(|(_, own)| own.id == id).map(|(_, own)| (*own).clone());
        let own_workloads: Vec<&str> =
            complete.iter().filter(|(_, own)| own.id == id).map(|(r, _)| r.workload.as_str()).collect();
        // Of each environment, its latest runs of each workload rank it (as on the leaderboard); of this one, its
        // latest runs of each make its history. A store of thousands of runs loads only those.
        let mut latest: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
        for (summary, own) in complete.iter().filter(|(r, _)| own_workloads.contains(&r.workload.as_str())) {
            latest.entry((own.id.as_str(), summary.workload.as_str())).or_default().push(summary.uuid.as_str());
        }
        let mut by_environment: BTreeMap<String, Vec<envbench_store::StoredRun>> = BTreeMap::new();
        let mut own_history: Vec<envbench_store::StoredRun> = Vec::new();
        for ((environment, _), uuids) in &latest {
            let keep =
                if *environment == id { HISTORY_RUNS } else { envbench_report::leaderboard::RUNS_PER_ENVIRONMENT };
            let mut runs = Vec::new();
            for uuid in &uuids[uuids.len().saturating_sub(keep)..] {
                runs.push(store.load_run(uuid)?);
            }
            let ranked = runs.len().saturating_sub(envbench_report::leaderboard::RUNS_PER_ENVIRONMENT);
            by_environment.entry(environment.to_string()).or_default().extend(runs[ranked..].iter().cloned());
            if *environment == id {
                own_history.extend(runs);
            }
        }
        let Some(identity) = identity else {
            return Err(ViewerError::NotFound(
                format!("environment {id} (no complete run in this store)"),
                String::new(),
            ));
        };
        let ranked = ranks(&id, &by_environment, workloads);
        let name_of = |environment: &str| {
            complete
                .iter()
                .find(|(_, own)| own.id == environment)
                .map_or(environment.to_string(), |(_, own)| own.name.clone())
        };
        let next_to = |neighbour: &Option<envbench_report::Neighbour>, place: &str| {
            markup! {
                @if let Some(n) = neighbour {
                    @let words = match envbench_verdict::speed_words(n.factor) {
                        same if same == "about the same" => "about the same as".to_string(),
                        words => format!("{words} than"),
                    };
                    "; " (words) " " a href={ "/environment/" (n.environment) } { (name_of(&n.environment)) } ", "
                    (place)
                }
            }
        };
        let mut charts = envbench_report::Charts::default();
        let mut history_sections = Vec::new();
        for history in histories(&own_history, workloads) {
            let chart = charts.lines(
                "history",
                &history.chart,
                "Each complete run of this environment (its latest 30) against its first, test by test (headline \
                 figures; above 1 is better): a change in the environment shows as a step.",
            );
            let mut headings = vec!["Test".to_string(), "Unit".to_string()];
            headings.extend(history.runs.iter().map(|(name, at)| format!("{name} {}", at.replace('T', " "))));
            let rows: Vec<Markup> = history
                .table
                .iter()
                .map(|(test, unit, values)| {
                    markup! {
                        tr {
                            (cell(test)) (cell(unit))
                            @for v in values { (num(&v.map(envbench_verdict::number).unwrap_or_else(|| "-".into()))) }
                        }
                    }
                })
                .collect();
            history_sections.push(markup! {
                h2 { "History: " (workloads.title(&history.workload)) } "\n"
                (chart)
                details { summary { "Medians run by run" } (table(&headings, &rows)) } "\n"
            });
        }
        if history_sections.is_empty() {
            history_sections.push(markup! {
                h2 { "History" } "\n"
                p class="note" {
                    "A workload's history is drawn once this environment has two complete runs of it; each run \
                     here is the first of its workload."
                }
                "\n"
            });
        }
        let all = complete.iter().filter(|(_, own)| own.id == id).count();
        let runs: Vec<Markup> = own_history
            .iter()
            .map(|r| {
                markup! {
                    tr {
                        td { a href={ "/run/" (r.summary.uuid) } { (run_name(r)) } }
                        (cell(&r.summary.workload))
                        (cell(&r.summary.started_at.replace('T', " ")))
                    }
                }
            })
            .collect();
        let shown =
            if own_history.len() < all { format!(" (its latest {} shown)", own_history.len()) } else { String::new() };
        let environments = by_environment.len();
        let body = markup! {
            (navigation())
            h1 { (identity.name) } "\n"
            p class="note" { "Environment " (id) } "\n"
            h2 { "Rank among the store's environments" } "\n"
            @if ranked.is_empty() {
                p {
                    "A rank needs at least " (RANK_MIN_ENVIRONMENTS) " environments that ran the same tests (same \
                     workload version and parameters); " (environments) " environment" @if environments != 1 { "s" }
                    " in this store ran these workloads."
                }
                "\n"
            } @else {
                ul class="ranks" {
                    "\n"
                    @for rank in &ranked {
                        li {
                            b { (rank.title) } ": " (ordinal(rank.position)) " of " (rank.of) " environments"
                            @if let Some(among) = &rank.among { " (" (among) ")" }
                            " — faster than " (format!("{:.0}", rank.percentile)) "% of the others"
                            (next_to(&rank.above, "the next above")) (next_to(&rank.below, "the next below"))
                            " (" (rank.tests) " headline test" @if rank.tests != 1 { "s" } ")"
                        }
                        "\n"
                    }
                }
                "\n"
            }
            @for section in &history_sections { (section) }
            details {
                summary { (all) " complete run" @if all != 1 { "s" } (shown) }
                (table(&["Run".to_string(), "Workload".to_string(), "Started (UTC)".to_string()], &runs))
            }
            "\n"
        };
        Ok(html(page(&format!("envbench environment {}", identity.name), body)))
    })
    .await
}
