//! `/api/v1`, the whole of it: the routes, what each answers and its JSON types; the client that calls them is
//! [`crate::client`] (with [`crate::remote`], a service read as a store).
//!
//! Read, served by every viewer (`envbench serve`) and every service ([`read`], answered by envbench-report's model
//! of the store, the same the pages show):
//! - `GET /api/v1/runs?label=L&tag=k=v&workload=W&host=H&submitter=S&limit=N`: the runs that match, newest first.
//! - `GET /api/v1/runs/{id}`: one run (by its id or a unique prefix) with every sample and all kept about it.
//! - `GET /api/v1/leaderboard?workload=W&...`: a workload's leaderboard, each environment's medians and its runs.
//!
//! Write, served by a service that accepts uploads ([`write`]):
//! - `GET /api/v1/limits`: what one upload may hold, for clients to size their batches.
//! - `POST /api/v1/known` with `{"runs": [uuid...]}`: which of these runs the service has, so a client sends only
//!   the others.
//! - `POST /api/v1/runs` with `Authorization: Bearer TOKEN` and an [`UploadBody`](crate::UploadBody): each run is
//!   re-checked and kept with its submitter, or refused with the reason. The answer lists every run's outcome: 200
//!   when none was refused, 422 when one was; 401 or 403 for a missing, unknown or revoked token; 413 for a body or a
//!   batch over the limits; 429, with `Retry-After`, past a token's uploads per hour.
//!
//! Every refusal answers `{"error": ...}` ([`ApiError`]) with its status.

mod read;
mod write;

pub use write::{ApiError, Known, Limits, RunOutcome, UploadAnswer, upload_body};

use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use envbench_core::workload::Registry;
use envbench_store::StoreLocation;
use std::sync::Arc;

/// Every refusal of the API, read or write: `{"error": ...}` ([`ApiError`]) with its status.
fn refuse(status: StatusCode, error: impl Into<String>) -> Response {
    (status, axum::Json(ApiError { error: error.into() })).into_response()
}

/// The `/api/v1` routes over the store at `location`, knowing `workloads`: the read routes always, and the write
/// routes when the service accepts uploads, held to `uploads`.
pub fn router(location: StoreLocation, workloads: Registry, uploads: Option<Limits>) -> Router {
    let names = workloads.names().into_iter().map(str::to_string).collect();
    let reads = Router::new()
        .route("/api/v1/runs", get(read::runs))
        .route("/api/v1/runs/{id}", get(read::run))
        .route("/api/v1/leaderboard", get(read::leaderboard))
        .with_state(Arc::new(read::Reader { location: location.clone(), workloads }));
    let Some(limits) = uploads else { return reads };
    let writes = Router::new()
        .route("/api/v1/limits", get(write::limits_of))
        .route("/api/v1/known", post(write::known))
        .route("/api/v1/runs", post(write::upload))
        .with_state(write::service(location, names, limits));
    reads.merge(writes)
}
