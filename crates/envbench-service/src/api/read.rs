//! The read half of `/api/v1`: each route's store work on a blocking thread, answered as JSON, or as
//! `{"error": ...}` with the status of what went wrong. What a read answers is envbench-report's
//! ([`crate::read_api`]), the same model of the store the viewer's pages show.

use super::refuse;
use crate::read_api;
use crate::viewer_error::ViewerError;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use envbench_core::workload::Registry;
use envbench_store::StoreLocation;
use serde::Serialize;
use std::sync::Arc;

/// What the read routes need: the store, and the workloads' own views.
pub(super) struct Reader {
    pub(super) location: StoreLocation,
    pub(super) workloads: Registry,
}

type Shared = State<Arc<Reader>>;

/// Run a read on a blocking thread (the store's handles are not `Sync`) and answer with its JSON or its error.
async fn answer<T: Serialize + Send + 'static>(
    read: impl FnOnce() -> Result<T, ViewerError> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(read).await {
        Ok(Ok(value)) => axum::Json(value).into_response(),
        Ok(Err(error)) => {
            let status = StatusCode::from_u16(read_api::error_status(&error));
            refuse(status.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), error.to_string())
        }
        Err(join) => refuse(StatusCode::INTERNAL_SERVER_ERROR, ViewerError::Serve(join.to_string()).to_string()),
    }
}

/// `GET /api/v1/runs?...` ([`read_api::runs`]).
pub(super) async fn runs(State(reader): Shared, RawQuery(query): RawQuery) -> Response {
    answer(move || read_api::runs(&reader.location, &reader.workloads, query.as_deref())).await
}

/// `GET /api/v1/runs/{id}` ([`read_api::run`]).
pub(super) async fn run(State(reader): Shared, Path(id): Path<String>) -> Response {
    answer(move || read_api::run(&reader.location, &id)).await
}

/// `GET /api/v1/leaderboard?...` ([`read_api::leaderboard`]).
pub(super) async fn leaderboard(State(reader): Shared, RawQuery(query): RawQuery) -> Response {
    answer(move || read_api::leaderboard(&reader.location, &reader.workloads, query.as_deref())).await
}
