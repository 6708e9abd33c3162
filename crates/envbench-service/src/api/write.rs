//! The write half of `/api/v1`, a results service's: what one upload may hold, which runs the service has, and the
//! uploads themselves (each run re-checked, [`check_upload`], and kept with its submitter or refused with the
//! reason). Its routes are in [`super::router`].

use super::refuse;
use crate::checks::check_upload;
use crate::tokens::token_sha256;
use crate::upload::{UPLOAD_FORMAT, UploadBody, UploadedRun, content_sha256};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use envbench_store::{Received, StoreLocation, TokenCheck, UploadOutcome, open_upload_store};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What one upload, and one token, may send.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// The largest request body.
    pub max_body_bytes: u64,
    /// The most runs in one upload.
    pub max_runs_per_upload: usize,
    /// The most uploads (requests) one token may make in an hour.
    pub max_uploads_per_hour: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_body_bytes: 32 << 20, max_runs_per_upload: 100, max_uploads_per_hour: 120 }
    }
}

/// One run's outcome in an upload's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// The run's uuid, or its place in the upload when it has none that can be read.
    pub run: String,
    /// `accepted`, `already_present` or `refused`.
    pub outcome: String,
    pub reason: Option<String>,
}

/// The answer to an upload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UploadAnswer {
    pub submitter: String,
    pub runs: Vec<RunOutcome>,
}

/// The answer to `POST /api/v1/known`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Known {
    pub runs: Vec<String>,
}

/// The answer to every request the API refuses as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
}

pub(super) struct Service {
    location: StoreLocation,
    workloads: Vec<String>,
    limits: Limits,
    /// Each token's uploads in the last hour, by token id.
    recent: Mutex<HashMap<i64, VecDeque<Instant>>>,
}

/// The state of the write routes: the store at `location`, knowing `workloads`, uploads held to `limits`.
pub(super) fn service(location: StoreLocation, workloads: Vec<String>, limits: Limits) -> Arc<Service> {
    Arc::new(Service { location, workloads, limits, recent: Mutex::new(HashMap::new()) })
}

pub(super) async fn limits_of(State(service): State<Arc<Service>>) -> Response {
    axum::Json(service.limits).into_response()
}

/// Why store work on a blocking thread failed: the server's fault (500), with its message.
struct Failure(String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        refuse(StatusCode::INTERNAL_SERVER_ERROR, self.0)
    }
}

/// Run store work on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(failure)) => Err(failure.into_response()),
        Err(join) => {
            log(&format!("envbench serve: a request's work ended abnormally: {join}"));
            Err(Failure("the service failed on this request; its operator's log says why".into()).into_response())
        }
    }
}

/// A line for the operator on the service's standard error, which may be closed: then it is lost, and nothing fails.
fn log(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// A store failure: the whole error (which names the store, its URL among it) goes to the service's log, and the
/// client learns only that the store failed, never where the store is.
fn store_failure(error: impl std::fmt::Display) -> Failure {
    log(&envbench_core::secrets::redact_secrets(&format!("envbench serve: the store failed: {error}")));
    Failure("the service's store failed; its operator's log says why. Try again later".into())
}

/// How long a body may take to arrive: a grace for the network, then at least [`BODY_MIN_BYTES_PER_S`] of what it
/// announced (a client that sends a byte every few seconds holds its connection no longer than this).
pub const BODY_GRACE: Duration = Duration::from_secs(10);
pub const BODY_MIN_BYTES_PER_S: u64 = 256 << 10;

/// Why a body was not read.
enum BodyRefusal {
    TooLarge,
    TooSlow(Duration),
}

/// Read a request's body of at most `limit` bytes within its deadline: [`BODY_GRACE`] and the time its announced
/// length takes at [`BODY_MIN_BYTES_PER_S`] (the grace alone when it announced none).
async fn read_body(headers: &HeaderMap, body: Body, limit: u64) -> Result<axum::body::Bytes, BodyRefusal> {
    let announced = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let deadline = BODY_GRACE + Duration::from_secs(announced.unwrap_or(0).min(limit) / BODY_MIN_BYTES_PER_S);
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, usize::try_from(limit).unwrap_or(usize::MAX))).await
    {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(BodyRefusal::TooLarge),
        Err(_) => Err(BodyRefusal::TooSlow(deadline)),
    }
}

/// The refusal of a body that took longer than its deadline.
fn too_slow(deadline: Duration) -> Response {
    refuse(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "the request's body did not arrive within {} s (at least {} KiB/s after {} s); send it again on a faster \
             connection",
            deadline.as_secs(),
            BODY_MIN_BYTES_PER_S >> 10,
            BODY_GRACE.as_secs()
        ),
    )
}

pub(super) async fn known(State(service): State<Arc<Service>>, headers: HeaderMap, body: Body) -> Response {
    let bytes = match read_body(&headers, body, 1 << 20).await {
        Ok(bytes) => bytes,
        Err(BodyRefusal::TooLarge) => {
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, "ask about at most 1 MiB of run ids at a time");
        }
        Err(BodyRefusal::TooSlow(deadline)) => return too_slow(deadline),
    };
    let asked: Known = match serde_json::from_slice(&bytes) {
        Ok(asked) => asked,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("not a list of run ids: {e}")),
    };
    let location = service.location.clone();
    let answer = blocking(move || {
        let store = open_upload_store(&location, false).map_err(store_failure)?;
        let mut present = Vec::new();
        for uuid in asked.runs {
            match store.find_run(&uuid) {
                Ok(found) if found == uuid => present.push(uuid),
                _ => {}
            }
        }
        Ok(Known { runs: present })
    })
    .await;
    match answer {
        Ok(known) => axum::Json(known).into_response(),
        Err(response) => response,
    }
}

/// The bearer token of a request.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token.trim())
}

fn now_s() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

impl Service {
    /// Count an upload of a token against its hourly limit: how long to wait when it is over.
    fn over_limit(&self, token_id: i64) -> Option<Duration> {
        let hour = Duration::from_secs(3600);
        let now = Instant::now();
        let mut recent = self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let times = recent.entry(token_id).or_default();
        while times.front().is_some_and(|t| now.duration_since(*t) >= hour) {
            times.pop_front();
        }
        if times.len() >= self.limits.max_uploads_per_hour as usize {
            return Some(hour.saturating_sub(now.duration_since(*times.front()?)));
        }
        times.push_back(now);
        None
    }
}

pub(super) async fn upload(State(service): State<Arc<Service>>, headers: HeaderMap, body: Body) -> Response {
    let limits = service.limits;
    let Some(token) = bearer(&headers).map(str::to_string) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "an upload needs a token: `Authorization: Bearer TOKEN` (envbench push URL --token-file FILE); the \
             service's operator makes one with `envbench results token create --name NAME`",
        );
    };
    // Said before the body is read: a body announced too large is not read at all.
    let announced = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the upload is larger than this service takes ({} bytes); send fewer runs at a time",
                limits.max_body_bytes
            ),
        )
    };
    if announced.is_some_and(|length| length > limits.max_body_bytes) {
        return too_large();
    }
    let location = service.location.clone();
    let check = blocking(move || {
        let store = open_upload_store(&location, false).map_err(store_failure)?;
        store.check_token(&token_sha256(&token)).map_err(store_failure)
    })
    .await;
    let (token_id, submitter) = match check {
        Ok(TokenCheck::Live { id, name }) => (id, name),
        Ok(TokenCheck::Revoked { name, revoked_at }) => {
            return refuse(
                StatusCode::FORBIDDEN,
                format!("the token of '{name}' was revoked at {revoked_at}; ask the service's operator for a new one"),
            );
        }
        Ok(TokenCheck::Unknown) => {
            return refuse(StatusCode::UNAUTHORIZED, "this service does not know the token; check --token-file");
        }
        Err(response) => return response,
    };
    if let Some(wait) = service.over_limit(token_id) {
        let mut response = refuse(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "'{submitter}' has made {} uploads in the last hour, this service's limit; try again in {} s",
                limits.max_uploads_per_hour,
                wait.as_secs() + 1
            ),
        );
        if let Ok(value) = HeaderValue::from_str(&(wait.as_secs() + 1).to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    let bytes = match read_body(&headers, body, limits.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(BodyRefusal::TooLarge) => return too_large(),
        Err(BodyRefusal::TooSlow(deadline)) => return too_slow(deadline),
    };
    let mut document: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(document) => document,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("the upload is not JSON: {e}")),
    };
    if document.get("format").and_then(serde_json::Value::as_u64) != Some(u64::from(UPLOAD_FORMAT)) {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!("the upload is not of format {UPLOAD_FORMAT}, the one this service reads; upgrade the client"),
        );
    }
    // The upload is `{"format": 1, "runs": [...]}` and nothing else, as each run refuses fields it does not know.
    if let Some(unknown) =
        document.as_object().and_then(|o| o.keys().find(|k| !matches!(k.as_str(), "format" | "runs")))
    {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!(
                "unknown field '{}' in the upload: it holds only format and runs",
                envbench_core::text::truncate(&envbench_core::text::printable(unknown), 40)
            ),
        );
    }
    let Some(serde_json::Value::Array(runs)) = document.get_mut("runs").map(serde_json::Value::take) else {
        return refuse(StatusCode::BAD_REQUEST, "the upload holds no list of runs");
    };
    if runs.len() > limits.max_runs_per_upload {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "{} runs in one upload are more than this service takes ({}); send fewer at a time",
                runs.len(),
                limits.max_runs_per_upload
            ),
        );
    }
    let location = service.location.clone();
    let workloads = service.workloads.clone();
    let answer = blocking(move || {
        let mut store = open_upload_store(&location, false).map_err(store_failure)?;
        let known: Vec<&str> = workloads.iter().map(String::as_str).collect();
        let mut answer = UploadAnswer { submitter, runs: Vec::new() };
        for (index, value) in runs.into_iter().enumerate() {
            let name = value
                .pointer("/run/uuid")
                .and_then(serde_json::Value::as_str)
                .map_or_else(|| format!("#{}", index + 1), envbench_core::text::printable);
            let outcome = |outcome: &str, reason: Option<String>| RunOutcome {
                run: name.clone(),
                outcome: outcome.to_string(),
                reason,
            };
            let sent = value.clone();
            let fingerprint = sent.pointer("/run/fingerprint").unwrap_or(&serde_json::Value::Null);
            let typed: Result<UploadedRun, String> =
                serde_json::from_value(value).map_err(|e| format!("not an uploaded run: {e}"));
            let checked = typed.and_then(|run| {
                let kept = serde_json::to_value(&run).map_err(|e| format!("not an uploaded run: {e}"))?;
                if let Some(path) = crate::checks::unknown_field(&sent, &kept) {
                    return Err(format!(
                        "unknown field '{}': this service keeps only the fields envbench writes, and would drop it",
                        envbench_core::text::truncate(&envbench_core::text::printable(&path), 80)
                    ));
                }
                check_upload(&run, fingerprint, now_s() as i64, &known)?;
                Ok(run)
            });
            let run = match checked {
                Ok(run) => run,
                Err(reason) => {
                    answer.runs.push(outcome("refused", Some(reason)));
                    continue;
                }
            };
            let provenance = serde_json::to_value(&run.provenance).unwrap_or_default();
            let digest = content_sha256(&run.run);
            let received = Received { token_id, content_sha256: &digest, provenance: &provenance, received_s: now_s() };
            answer.runs.push(match store.import_upload(&run.run, &received).map_err(store_failure)? {
                UploadOutcome::Imported => outcome("accepted", None),
                UploadOutcome::AlreadyPresent => outcome("already_present", None),
                UploadOutcome::CopyOf(other) => outcome(
                    "refused",
                    Some(format!("the same results are here already, as run {other}: a copy is not another run")),
                ),
                UploadOutcome::SuiteOfAnother { suite, submitter } => outcome(
                    "refused",
                    Some(format!(
                        "its suite {suite} holds runs {}: a suite is one submitter's; run the suite again to make \
                         one of your own",
                        match submitter {
                            Some(name) => format!("that '{name}' sent"),
                            None => "this service did not receive from you".to_string(),
                        }
                    )),
                ),
            });
        }
        Ok(answer)
    })
    .await;
    match answer {
        Ok(answer) => {
            let status = if answer.runs.iter().any(|r| r.outcome == "refused") {
                StatusCode::UNPROCESSABLE_ENTITY
            } else {
                StatusCode::OK
            };
            (status, axum::Json(answer)).into_response()
        }
        Err(response) => response,
    }
}

/// An upload of `runs`, as a client sends it.
pub fn upload_body(runs: Vec<UploadedRun>) -> UploadBody {
    UploadBody { format: UPLOAD_FORMAT, runs }
}
