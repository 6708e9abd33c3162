//! The viewer's pages of suites and environments: the suites (the runs of one `envbench run`), the environments (runs
//! grouped by machine identity), and one environment's history per workload with where it ranks among the others.

use super::respond::{Shared, html, navigation, with_store};
use crate::viewer_error::ViewerError;
use axum::extract::{Path, State};
use axum::response::Response;
use envbench_core::text::percent_encode;
use envbench_report::html::{cell, escape, num, page, table};
use envbench_report::{RANK_MIN_ENVIRONMENTS, environment_summaries, histories, ranks, run_identity, suite_summaries};
use envbench_store::RunFilter;
use envbench_verdict::EnvironmentIdentity;
use envbench_verdict::ordinal;
use envbench_verdict::{SUITE_TAG, run_name};
use std::collections::BTreeMap;

/// An environment's history shows at most its latest this many runs of each workload.
pub(super) const HISTORY_RUNS: usize = 30;

pub(super) async fn suites_page(State(viewer): Shared) -> Response {
    with_store(viewer, move |store, _| {
        let runs = store.list_runs(&RunFilter::default())?;
        let environments = store.environments()?;
        let suites = suite_summaries(&runs, &environments);
        let mut body = navigation();
        body.push_str(
            "<h1>Suites</h1>\n<p>Each <code>envbench run</code> is a suite: its runs share a suite id. Compare a suite \
             with the one of the same name before it in one click, or tick two and compare them.</p>\n\
             <form method=\"get\" action=\"/compare\">\n",
        );
        if suites.is_empty() {
            body.push_str("<p>No suites yet: <code>envbench run</code> runs one.</p>\n");
        }
        let rows: Vec<String> = suites
            .iter()
            .map(|suite| {
                let side = format!("{SUITE_TAG}={}", suite.id);
                let previous = suite
                    .previous
                    .as_ref()
                    .map(|p| {
                        format!(
                            "<a href=\"/compare?side={}&amp;side={}\">compare with the previous {}</a>",
                            percent_encode(&format!("{SUITE_TAG}={p}")),
                            percent_encode(&side),
                            escape(&suite.name)
                        )
                    })
                    .unwrap_or_default();
                let environments: Vec<String> = suite
                    .environments
                    .iter()
                    .map(|e| format!("<a href=\"/environment/{}\">{}</a>", escape(&e.id), escape(&e.name)))
                    .collect();
                format!(
                    "<tr><td><input type=\"checkbox\" name=\"side\" value=\"{}\" aria-label=\"compare suite {}\"></td>\
                     <td><b>{}</b><br><span class=\"note\">suite {}</span></td>{}<td>{}</td><td><a \
                     href=\"/report.html?side={}\">report</a> {previous}</td></tr>",
                    escape(&side),
                    escape(&suite.title()),
                    escape(&suite.title()),
                    escape(&suite.id),
                    cell(&format!("{} ({} complete)", suite.runs, suite.complete)),
                    environments.join("; "),
                    percent_encode(&side),
                )
            })
            .collect();
        if !rows.is_empty() {
            let headings: Vec<String> =
                ["", "Suite (label, name, start UTC)", "Runs", "Environment", ""].map(String::from).to_vec();
            body.push_str(&table(&headings, &rows));
            body.push_str("<p><button type=\"submit\">Compare the ticked suites</button></p>\n");
        }
        body.push_str("</form>\n");
        Ok(html(page("envbench suites", &body)))
    })
    .await
}

pub(super) async fn environments_page(State(viewer): Shared) -> Response {
    with_store(viewer, move |store, _| {
        let runs = store.list_runs(&RunFilter::default())?;
        let environments = environment_summaries(&runs, &store.environments()?);
        let mut body = navigation();
        body.push_str(
            "<h1>Environments</h1>\n<p>An environment is what its fingerprint says: CPU model and count, memory, \
             hypervisor, and the file system and device under the data directory, whatever the host is called.</p>\n",
        );
        let rows: Vec<String> = environments
            .iter()
            .map(|e| {
                format!(
                    "<tr><td><a href=\"/environment/{}\">{}</a></td>{}{}{}{}{}</tr>",
                    escape(&e.identity.id),
                    escape(&e.identity.name),
                    cell(&e.labels.join(", ")),
                    cell(&e.hosts.join(", ")),
                    cell(&e.workloads.join(", ")),
                    num(&e.runs.to_string()),
                    cell(&e.last_run_at.replace('T', " "))
                )
            })
            .collect();
        if rows.is_empty() {
            body.push_str("<p>No runs yet.</p>\n");
        } else {
            let headings: Vec<String> =
                ["Environment", "Labels", "Hosts", "Workloads", "Runs", "Last run (UTC)"].map(String::from).to_vec();
            body.push_str(&table(&headings, &rows));
        }
        Ok(html(page("envbench environments", &body)))
    })
    .await
}

pub(super) async fn environment_page(State(viewer): Shared, Path(id): Path<String>) -> Response {
    with_store(viewer, move |store, workloads| {
        let summaries = store.list_runs(&RunFilter::default())?;
        let environments = store.environments()?;
        // Oldest first, so runs that started in the same instant keep the order they were stored in; complete runs
        // only, and of other environments only the workloads this one ran (what its rank compares).
        let complete: Vec<(&envbench_core::model::RunSummary, EnvironmentIdentity)> = summaries
            .iter()
            .rev()
            .filter(|r| r.status == envbench_core::model::RunStatus::Complete)
            .filter_map(|r| Some((r, run_identity(r, &environments)?)))
            .collect();
        let identity = complete.iter().find(|(_, own)| own.id == id).map(|(_, own)| own.clone());
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
        let mut body = navigation();
        body.push_str(&format!(
            "<h1>{}</h1>\n<p class=\"note\">Environment {}</p>\n",
            escape(&identity.name),
            escape(&id)
        ));
        let ranked = ranks(&id, &by_environment, workloads);
        body.push_str("<h2>Rank among the store's environments</h2>\n");
        if ranked.is_empty() {
            body.push_str(&format!(
                "<p>A rank needs at least {RANK_MIN_ENVIRONMENTS} environments that ran the same tests (same workload \
                 version and parameters); {} environment{} in this store ran these workloads.</p>\n",
                by_environment.len(),
                if by_environment.len() == 1 { "" } else { "s" }
            ));
        } else {
            body.push_str("<ul class=\"ranks\">\n");
            let name_of = |environment: &str| {
                complete
                    .iter()
                    .find(|(_, own)| own.id == environment)
                    .map_or(environment.to_string(), |(_, own)| own.name.clone())
            };
            let next_to = |neighbour: &Option<envbench_report::Neighbour>, place: &str| {
                neighbour.as_ref().map(|n| {
                    let words = match envbench_verdict::speed_words(n.factor) {
                        same if same == "about the same" => "about the same as".to_string(),
                        words => format!("{words} than"),
                    };
                    format!(
                        "; {} <a href=\"/environment/{}\">{}</a>, {place}",
                        escape(&words),
                        escape(&n.environment),
                        escape(&name_of(&n.environment))
                    )
                })
            };
            for rank in &ranked {
                body.push_str(&format!(
                    "<li><b>{}</b>: {} of {} environments{} — faster than {:.0}% of the others{}{} ({} headline \
                     test{})</li>\n",
                    escape(&rank.title),
                    ordinal(rank.position),
                    rank.of,
                    rank.among.as_ref().map(|among| format!(" ({})", escape(among))).unwrap_or_default(),
                    rank.percentile,
                    next_to(&rank.above, "the next above").unwrap_or_default(),
                    next_to(&rank.below, "the next below").unwrap_or_default(),
                    rank.tests,
                    if rank.tests == 1 { "" } else { "s" }
                ));
            }
            body.push_str("</ul>\n");
        }
        let mut charts = envbench_report::Charts::default();
        for history in histories(&own_history, workloads) {
            body.push_str(&format!("<h2>History: {}</h2>\n", escape(workloads.title(&history.workload))));
            body.push_str(&charts.lines(
                "history",
                &history.chart,
                "Each complete run of this environment (its latest 30) against its first, test by test (headline \
                 figures; above 1 is better): a change in the environment shows as a step.",
            ));
            let mut headings = vec!["Test".to_string(), "Unit".to_string()];
            headings.extend(history.runs.iter().map(|(name, at)| format!("{name} {}", at.replace('T', " "))));
            let rows: Vec<String> = history
                .table
                .iter()
                .map(|(test, unit, values)| {
                    let cells: String = values
                        .iter()
                        .map(|v| num(&v.map(envbench_verdict::number).unwrap_or_else(|| "-".into())))
                        .collect();
                    format!("<tr>{}{}{cells}</tr>", cell(test), cell(unit))
                })
                .collect();
            body.push_str(&format!(
                "<details><summary>Medians run by run</summary>{}</details>\n",
                table(&headings, &rows)
            ));
        }
        let all = complete.iter().filter(|(_, own)| own.id == id).count();
        let runs: Vec<String> = own_history
            .iter()
            .map(|r| {
                format!(
                    "<tr><td><a href=\"/run/{}\">{}</a></td>{}{}</tr>",
                    escape(&r.summary.uuid),
                    escape(&run_name(r)),
                    cell(&r.summary.workload),
                    cell(&r.summary.started_at.replace('T', " "))
                )
            })
            .collect();
        let shown =
            if own_history.len() < all { format!(" (its latest {} shown)", own_history.len()) } else { String::new() };
        body.push_str(&format!(
            "<details><summary>{all} complete run{}{shown}</summary>{}</details>\n",
            if all == 1 { "" } else { "s" },
            table(&["Run".to_string(), "Workload".to_string(), "Started (UTC)".to_string()], &runs)
        ));
        Ok(html(page(&format!("envbench environment {}", identity.name), &body)))
    })
    .await
}
