//! The viewer's read API, JSON under `/api/v1`: the runs that match a filter, one run with every sample, and a
//! workload's leaderboard. Errors answer `{"error": ...}` with their status.

use super::board::{check_leaderboard_query, load_leaderboard};
use super::respond::{
    Loads, Shared, all, error_json, first, known_workload, only_parameters, parse_query, with_store_or,
};
use crate::error::ReportError;
use axum::extract::{Path, RawQuery, State};
use axum::response::IntoResponse;
use axum::response::Response;
use envbench_core::model::parse_tag;
use envbench_core::workload::Registry;
use envbench_store::{ResultStore, RunFilter};

/// The most runs `GET /api/v1/runs` lists at once.
pub(super) const MAX_LIMIT: usize = 10_000;

/// `GET /api/v1/runs?label=L&tag=k=v&workload=W&host=H&submitter=S&limit=N`: the runs that match, newest first, as
/// listed (what `compare` and `report` resolve a side on a service with; `submitter` keeps to one submitter's runs).
pub(super) async fn api_runs(State(viewer): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    let work = move |store: &dyn ResultStore, workloads: &Registry| {
        only_parameters(&query, &["label", "tag", "workload", "host", "submitter", "limit"])?;
        known_workload(&query, workloads)?;
        let mut filter = RunFilter {
            workload: first(&query, "workload").map(str::to_string),
            label: first(&query, "label").map(str::to_string),
            host: first(&query, "host").map(str::to_string),
            submitter: first(&query, "submitter").map(str::to_string),
            ..Default::default()
        };
        for pair in all(&query, "tag") {
            let (key, value) = parse_tag(pair).map_err(ReportError::BadSide)?;
            filter.tags.insert(key, value);
        }
        if let Some(limit) = first(&query, "limit") {
            let bad = || ReportError::BadSide(format!("limit '{limit}': give a count from 1 to {MAX_LIMIT}"));
            let limit: usize = limit.parse().map_err(|_| bad())?;
            if !(1..=MAX_LIMIT).contains(&limit) {
                return Err(bad());
            }
            filter.limit = Some(limit);
        }
        Ok(axum::Json(store.list_runs(&filter)?).into_response())
    };
    with_store_or(viewer, Loads::Digested, work, error_json).await
}

/// `GET /api/v1/runs/{id}`: one run (by its id or a unique prefix of one) with everything kept about it: results
/// with every sample, the fingerprint, the sampler's series, the attachments.
pub(super) async fn api_run(State(viewer): Shared, Path(id): Path<String>) -> Response {
    let work = move |store: &dyn ResultStore, _: &Registry| {
        Ok(axum::Json(store.load_run(&store.find_run(&id)?)?).into_response())
    };
    with_store_or(viewer, Loads::Whole, work, error_json).await
}

/// `GET /api/v1/leaderboard?workload=W&hypervisor=...`: the leaderboard's lists with each environment's headline
/// medians and the runs behind them, so a client can rank a run of its own among them without sending it anywhere.
pub(super) async fn api_leaderboard(State(viewer): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    let work = move |store: &dyn ResultStore, workloads: &Registry| {
        check_leaderboard_query(&query, workloads)?;
        match load_leaderboard(store, workloads, &query)? {
            Some((board, _)) => Ok(axum::Json(board).into_response()),
            None => Err(ReportError::EmptySide("leaderboard (no complete run here yet)".into(), String::new())),
        }
    };
    with_store_or(viewer, Loads::Digested, work, error_json).await
}
