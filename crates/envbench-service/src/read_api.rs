//! What the read half of `/api/v1` answers, as plain functions over a store: the runs that match a filter, one run
//! with every sample, and a workload's leaderboard. The routes, their HTTP and the client are envbench-service's
//! (`envbench_service::api`, with the write half beside them); what a read answers is the viewer's own model of the
//! store, so it is written here, beside the pages that show the same runs and leaderboards.

use crate::viewer::board::{check_leaderboard_query, load_leaderboard};
use crate::viewer::respond::{all, first, known_workload, only_parameters, parse_query};
use crate::viewer_error::ViewerError;
use envbench_core::model::{RunSummary, StoredRun, parse_tag};
use envbench_core::workload::Registry;
use envbench_report::leaderboard::Leaderboard;
use envbench_store::{ReadRuns, RunFilter, StoreError, StoreLocation, open_store};
use envbench_verdict::VerdictError;

/// The most runs `GET /api/v1/runs` lists at once.
pub const MAX_LIMIT: usize = 10_000;

/// `GET /api/v1/runs?label=L&tag=k=v&workload=W&host=H&submitter=S&limit=N` (`query` as it came, undecoded): the runs
/// that match, newest first, as listed (what `compare` and `report` resolve a side on a service with; `submitter`
/// keeps to one submitter's runs).
pub fn runs(
    location: &StoreLocation,
    workloads: &Registry,
    query: Option<&str>,
) -> Result<Vec<RunSummary>, ViewerError> {
    let query = parse_query(query);
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
        let (key, value) = parse_tag(pair).map_err(VerdictError::BadSide)?;
        filter.tags.insert(key, value);
    }
    if let Some(limit) = first(&query, "limit") {
        let bad = || VerdictError::BadSide(format!("limit '{limit}': give a count from 1 to {MAX_LIMIT}"));
        let limit: usize = limit.parse().map_err(|_| bad())?;
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(bad().into());
        }
        filter.limit = Some(limit);
    }
    let store = open_store(location, false)?;
    Ok(envbench_store::PagesView(store.as_ref()).list_runs(&filter)?)
}

/// `GET /api/v1/runs/{id}`: one run (by its id or a unique prefix of one) with everything kept about it: results
/// with every sample, the fingerprint, the sampler's series, the attachments.
pub fn run(location: &StoreLocation, id: &str) -> Result<StoredRun, ViewerError> {
    let store = open_store(location, false)?;
    Ok(store.load_run(&store.find_run(id)?)?)
}

/// `GET /api/v1/leaderboard?workload=W&hypervisor=...`: the leaderboard's lists with each environment's headline
/// medians and the runs behind them, so a client can rank a run of its own among them without sending it anywhere.
pub fn leaderboard(
    location: &StoreLocation,
    workloads: &Registry,
    query: Option<&str>,
) -> Result<Leaderboard, ViewerError> {
    let query = parse_query(query);
    check_leaderboard_query(&query, workloads)?;
    let store = open_store(location, false)?;
    match load_leaderboard(&envbench_store::PagesView(store.as_ref()), workloads, &query)? {
        Some((board, _)) => Ok(board),
        None => Err(VerdictError::EmptySide("leaderboard (no complete run here yet)".into(), String::new()).into()),
    }
}

/// The HTTP status a read's error answers with: 404 for what is not here, 409 for a run id that names more than one
/// run (which a client tells apart from a missing one), 400 for what was asked wrong, 500 for the rest.
pub fn error_status(error: &ViewerError) -> u16 {
    match error {
        ViewerError::Verdict(VerdictError::Store(StoreError::AmbiguousRun { .. })) => 409,
        other => crate::viewer::respond::error_status(other).as_u16(),
    }
}
