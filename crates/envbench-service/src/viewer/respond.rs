//! What every request handler of the viewer shares: the state (where the store is, the workloads), store work on a
//! blocking thread turned into a response, HTML and error pages, the navigation bar, and reading and checking a query
//! string.

use crate::viewer_error::ViewerError;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use envbench_core::workload::Registry;
use envbench_report::html::page;
use envbench_store::{ReadEnvironments, StoreError, StoreLocation, open_store};
use envbench_verdict::VerdictError;
use maud::{Markup, html as markup};
use std::sync::Arc;

/// What every request handler needs: the store, and the workloads' own views.
pub(super) struct Viewer {
    pub(super) location: StoreLocation,
    pub(super) workloads: Registry,
}

pub(super) type Shared = State<Arc<Viewer>>;

/// Run store work on a blocking thread and turn its outcome into a response (an error as a page). Runs load as pages
/// show them: a result with many samples as its digest, so a page costs the same however many samples a run has.
pub(super) async fn with_store(
    viewer: Arc<Viewer>,
    work: impl FnOnce(&dyn ReadEnvironments, &Registry) -> Result<Response, ViewerError> + Send + 'static,
) -> Response {
    let outcome = tokio::task::spawn_blocking(move || {
        let store = open_store(&viewer.location, false)?;
        work(&envbench_store::PagesView(store.as_ref()), &viewer.workloads)
    })
    .await;
    match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => error_page(&error),
        Err(join) => error_page(&ViewerError::Serve(join.to_string())),
    }
}

pub(super) fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// The status of an error's answer: 404 for what is not here, 400 for what was asked wrong (an ambiguous run id is
/// 409 to the API, which a client tells apart from a missing run).
pub(crate) fn error_status(error: &ViewerError) -> StatusCode {
    match error {
        ViewerError::Verdict(VerdictError::Store(StoreError::NoSuchRun(_)) | VerdictError::EmptySide(..))
        | ViewerError::NotFound(..) => StatusCode::NOT_FOUND,
        ViewerError::BadRequest(_) => StatusCode::BAD_REQUEST,
        ViewerError::Verdict(
            VerdictError::Store(StoreError::AmbiguousRun { .. })
            | VerdictError::BadSide(_)
            | VerdictError::AmbiguousSide(_)
            | VerdictError::TooFewSides(_),
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub(super) fn error_page(error: &ViewerError) -> Response {
    let status = error_status(error);
    let body = markup! { (navigation()) h1 { "Cannot show this" } "\n" p { (error.to_string()) } };
    (status, html(page("envbench: error", body))).into_response()
}

pub(super) fn navigation() -> Markup {
    markup! {
        nav {
            a href="/" { "Runs" } " " a href="/suites" { "Suites" } " " a href="/environments" { "Environments" } " "
            a href="/leaderboard" { "Leaderboard" }
        }
        "\n"
    }
}

/// `key=value&key=value` with percent-decoding and `+` as space; repeated keys kept in order.
pub(crate) fn parse_query(query: Option<&str>) -> Vec<(String, String)> {
    fn hex(byte: &u8) -> Option<u8> {
        (*byte as char).to_digit(16).map(|d| d as u8)
    }
    fn decode(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' => match (bytes.get(i + 1).and_then(hex), bytes.get(i + 2).and_then(hex)) {
                    (Some(high), Some(low)) => {
                        out.push(high << 4 | low);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                },
                byte => out.push(byte),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    query
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

pub(crate) fn first<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query.iter().find(|(k, v)| k == key && !v.trim().is_empty()).map(|(_, v)| v.trim())
}

pub(crate) fn all<'a>(query: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    query.iter().filter(|(k, v)| k == key && !v.trim().is_empty()).map(|(_, v)| v.trim()).collect()
}

/// Refuse a query with a parameter the endpoint does not take: a misspelt filter would otherwise be ignored, and the
/// answer read as filtered.
pub(crate) fn only_parameters(query: &[(String, String)], taken: &[&str]) -> Result<(), ViewerError> {
    match query.iter().find(|(key, _)| !taken.contains(&key.as_str())) {
        Some((key, _)) => Err(ViewerError::BadRequest(format!(
            "unknown parameter '{}': this takes {}",
            envbench_core::text::truncate(&envbench_core::text::printable(key), 40),
            taken.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Refuse `workload=W` for a workload envbench does not have.
pub(crate) fn known_workload(query: &[(String, String)], workloads: &Registry) -> Result<(), ViewerError> {
    match first(query, "workload") {
        Some(asked) if !workloads.names().contains(&asked) => Err(ViewerError::BadRequest(format!(
            "workload '{}' is not one of envbench's: {}",
            envbench_core::text::truncate(&envbench_core::text::printable(asked), 40),
            workloads.names().join(", ")
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_core::text::percent_encode;

    #[test]
    fn query_strings_decode_and_repeat() {
        let parsed = parse_query(Some("run=abc&run=def&side=ht%3Doff&label=a+b&x=%zz&empty="));
        assert_eq!(all(&parsed, "run"), vec!["abc", "def"]);
        assert_eq!(first(&parsed, "side"), Some("ht=off"));
        assert_eq!(first(&parsed, "label"), Some("a b"));
        assert_eq!(first(&parsed, "x"), Some("%zz"));
        assert_eq!(first(&parsed, "empty"), None);
        assert!(parse_query(None).is_empty());
    }

    #[test]
    fn query_values_are_percent_encoded_and_decode_back() {
        let side = "suite=a&b+c#d%e,f \"<x>";
        let encoded = percent_encode(side);
        assert!(encoded.chars().all(|c| c.is_ascii_alphanumeric() || "%-_.~".contains(c)), "{encoded}");
        assert_eq!(first(&parse_query(Some(&format!("side={encoded}"))), "side"), Some(side));
    }
}
