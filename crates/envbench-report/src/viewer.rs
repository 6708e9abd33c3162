//! The read-only web viewer: list and filter runs, show a run, compare runs picked with checkboxes, download the
//! HTML report. Pages are plain server-rendered HTML (forms and links, no scripts), drawn by the same code as the
//! report. The store is opened per request, in a blocking task, so any backend works (SQLite handles are not `Sync`).
//!
//! It answers only requests addressed to it: a `Host` that is not the address it listens on (or `localhost` on
//! loopback) is refused, so a web page cannot read the store through DNS rebinding; and every response forbids
//! scripts, framing and content sniffing.

use crate::compare::compare;
use crate::environment::EnvironmentIdentity;
use crate::error::ReportError;
use crate::history::{
    RANK_MIN_ENVIRONMENTS, SUITE_TAG, environment_summaries, histories, ordinal, ranks, run_identity, suite_summaries,
};
use crate::html::{cell, escape, num, page, table};
use crate::leaderboard::Class;
use crate::render::{render_json, render_markdown};
use crate::report::{render_report_for, report_sections};
use crate::side::{Side, resolve_side, run_name, unique_names};
use axum::Router;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use envbench_core::model::parse_tag;
use envbench_core::text::percent_encode;
use envbench_core::workload::Registry;
use envbench_store::{ResultStore, RunFilter, StoreError, StoreLocation, open_store};
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

/// Where `serve` listens unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// An environment's history shows at most its latest this many runs of each workload.
const HISTORY_RUNS: usize = 30;

/// At most this many runs are listed on one page.
const LIST_LIMIT: usize = 500;

/// What every request handler needs: the store, and the workloads' own views.
struct Viewer {
    location: StoreLocation,
    workloads: Registry,
}

/// The content security policy of every page: inline styles and SVG only; no scripts, no loads, no frames.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// What a viewer serves beside its pages: a results service's API routes, and the host names it answers for beyond
/// the address it listens on (the public name of a service behind a reverse proxy).
#[derive(Default)]
pub struct Extras {
    pub api: Option<Router>,
    pub hosts: Vec<String>,
    /// Serve HTTPS with these settings ([`crate::load_tls`]) instead of plain HTTP.
    pub tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
}

/// The viewer's routes over the store at `location`, read-only, for requests addressed to `listening`:
/// `/` (runs, filterable by label, tag, host, workload, date), `/run/{id}`, `/compare?run=ID&side=SPEC...`,
/// `/report.html?...` (the report as a download), `/compare.json?...` and `/compare.md?...`.
pub fn router(location: StoreLocation, workloads: Registry, listening: SocketAddr) -> Router {
    router_with(location, workloads, listening, Extras::default())
}

/// The viewer's routes with [`Extras`].
pub fn router_with(location: StoreLocation, workloads: Registry, listening: SocketAddr, extras: Extras) -> Router {
    let pages = Router::new()
        .route("/", get(list_page))
        .route("/run/{id}", get(run_page))
        .route("/suites", get(suites_page))
        .route("/environments", get(environments_page))
        .route("/environment/{id}", get(environment_page))
        .route("/leaderboard", get(leaderboard_page))
        .route("/compare", get(compare_page))
        .route("/report.html", get(report_download))
        .route("/compare.json", get(compare_json))
        .route("/compare.md", get(compare_markdown))
        .route("/api/v1/runs", get(api_runs))
        .route("/api/v1/runs/{id}", get(api_run))
        .route("/api/v1/leaderboard", get(api_leaderboard))
        .with_state(Arc::new(Viewer { location, workloads }));
    let routes = match extras.api {
        Some(api) => pages.merge(api),
        None => pages,
    };
    let addressed = Addressed { listening, hosts: Arc::new(extras.hosts) };
    routes.fallback(not_found).layer(middleware::from_fn_with_state(addressed, guard))
}

/// Whom the viewer answers: its address, and the names it was given.
#[derive(Clone)]
struct Addressed {
    listening: SocketAddr,
    hosts: Arc<Vec<String>>,
}

/// Refuse requests not addressed to the viewer (DNS rebinding) or with more than one `Host` (RFC 9112 3.2: a 400),
/// and mark every response as not to be scripted, framed or sniffed.
async fn guard(State(addressed): State<Addressed>, request: Request, next: Next) -> Response {
    let listening = addressed.listening;
    let hosts = request.headers().get_all(header::HOST).iter().count();
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let mut response = if hosts > 1 {
        let body = "<h1>Bad request</h1>\n<p>The request has more than one Host header.</p>";
        (StatusCode::BAD_REQUEST, html(page("envbench: bad request", body))).into_response()
    } else if host_allowed(host, &listening) || named_host(host, &addressed.hosts) {
        next.run(request).await
    } else {
        let body = format!(
            "<h1>Not this host</h1>\n<p>This envbench viewer answers requests for {listening} only (and localhost \
             when it listens on loopback), not for '{}'.</p>",
            escape(host)
        );
        (StatusCode::MISDIRECTED_REQUEST, html(page("envbench: wrong host", &body))).into_response()
    };
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// True for a `Host` header naming the address the viewer listens on: its port, and its IP address (any IP address
/// of this machine when it listens on all of them), or `localhost` when it listens on loopback. Names other than
/// `localhost` are refused: DNS rebinding needs one.
pub fn host_allowed(host: &str, listening: &SocketAddr) -> bool {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && !port.contains(']') => (name, port.parse::<u16>().ok()),
        _ => (host, Some(80)),
    };
    if port != Some(listening.port()) {
        return false;
    }
    let ip = listening.ip();
    if name.eq_ignore_ascii_case("localhost") {
        return ip.is_loopback() || ip.is_unspecified();
    }
    match name.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
        Ok(asked) => ip.is_unspecified() || asked == ip || (asked.is_loopback() && ip.is_loopback()),
        Err(_) => false,
    }
}

/// True for a `Host` header naming one of `hosts`, with or without a port.
fn named_host(host: &str, hosts: &[String]) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    !name.is_empty() && hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// Serve the viewer on a bound listener until the task is dropped or the listener fails.
pub async fn serve(
    location: StoreLocation,
    listener: tokio::net::TcpListener,
    workloads: Registry,
) -> Result<(), ReportError> {
    serve_with(location, listener, workloads, Extras::default()).await
}

/// Serve the viewer with [`Extras`].
pub async fn serve_with(
    location: StoreLocation,
    listener: tokio::net::TcpListener,
    workloads: Registry,
    extras: Extras,
) -> Result<(), ReportError> {
    let listening = listener.local_addr().map_err(|e| ReportError::Serve(e.to_string()))?;
    let tls = extras.tls.clone();
    let router = router_with(location, workloads, listening, extras);
    match tls {
        Some(config) => {
            let listener =
                crate::tls::TlsListener::new(listener, config).map_err(|e| ReportError::Serve(e.to_string()))?;
            serve_connections(listener, router).await
        }
        None => serve_connections(listener, router).await,
    }
}

/// How long a client may take to send a request's headers, and to begin its next request on a kept-alive
/// connection: a client that sends them byte by byte (slowloris) or sends nothing has its connection closed then.
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// Serve each connection `listener` accepts with `router`, over HTTP/1.1 with [`HEADER_READ_TIMEOUT`] (axum::serve
/// sets no timer, so its connections wait for a slow or idle client forever).
async fn serve_connections<L>(mut listener: L, router: Router) -> Result<(), ReportError>
where
    L: axum::serve::Listener,
{
    loop {
        let (io, _peer) = listener.accept().await;
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
            // A connection's end, timed out or not, is the client's business.
            let _ = builder.serve_connection(hyper_util::rt::TokioIo::new(io), service).await;
        });
    }
}

/// Bind the viewer's address (e.g. [`DEFAULT_LISTEN`]); port 0 picks a free port (see `local_addr`).
pub fn bind(address: &str) -> Result<TcpListener, ReportError> {
    TcpListener::bind(address).map_err(|e| ReportError::Listen { address: address.to_string(), reason: e.to_string() })
}

/// True when an address is reachable from this machine only. Anything else exposes the store's runs (host names,
/// hardware, labels) to the network: the caller should warn.
pub fn is_loopback(address: &SocketAddr) -> bool {
    address.ip().is_loopback()
}

/// Serve on a listener from [`bind`] with a runtime of its own, blocking until the server stops (for a synchronous
/// binary: bind, print the address, then call this).
pub fn serve_blocking(
    location: StoreLocation,
    listener: TcpListener,
    workloads: Registry,
    extras: Extras,
) -> Result<(), ReportError> {
    let address = listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    let listen_error = |e: std::io::Error| ReportError::Listen { address: address.clone(), reason: e.to_string() };
    listener.set_nonblocking(true).map_err(listen_error)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ReportError::Serve(e.to_string()))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(listen_error)?;
        serve_with(location, listener, workloads, extras).await
    })
}

type Shared = State<Arc<Viewer>>;

/// Run store work on a blocking thread and turn its outcome into a response.
async fn with_store(
    viewer: Arc<Viewer>,
    work: impl FnOnce(&dyn ResultStore, &Registry) -> Result<Response, ReportError> + Send + 'static,
) -> Response {
    with_store_or(viewer, Loads::Digested, work, error_page).await
}

/// How the work of a request loads runs: as pages show them (a result with many samples as its digest, so a page
/// costs the same however many samples a run has), or whole (the read API's one run: every sample).
#[derive(Clone, Copy, PartialEq)]
enum Loads {
    Digested,
    Whole,
}

/// [`with_store`] with errors answered by `failed`.
async fn with_store_or(
    viewer: Arc<Viewer>,
    loads: Loads,
    work: impl FnOnce(&dyn ResultStore, &Registry) -> Result<Response, ReportError> + Send + 'static,
    failed: fn(&ReportError) -> Response,
) -> Response {
    let outcome = tokio::task::spawn_blocking(move || {
        let store = open_store(&viewer.location, false)?;
        match loads {
            Loads::Digested => work(&envbench_store::PagesView(store.as_ref()), &viewer.workloads),
            Loads::Whole => work(store.as_ref(), &viewer.workloads),
        }
    })
    .await;
    match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => failed(&error),
        Err(join) => failed(&ReportError::Serve(join.to_string())),
    }
}

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// The status of an error's answer: 404 for what is not here, 400 for what was asked wrong (an ambiguous run id is
/// 409 to the API, which a client tells apart from a missing run).
fn error_status(error: &ReportError) -> StatusCode {
    match error {
        ReportError::Store(StoreError::NoSuchRun(_)) | ReportError::EmptySide(..) => StatusCode::NOT_FOUND,
        ReportError::Store(StoreError::AmbiguousRun { .. })
        | ReportError::BadSide(_)
        | ReportError::AmbiguousSide(_)
        | ReportError::TooFewSides(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// An API error: `{"error": "..."}` with its status.
fn error_json(error: &ReportError) -> Response {
    let status = match error {
        ReportError::Store(StoreError::AmbiguousRun { .. }) => StatusCode::CONFLICT,
        other => error_status(other),
    };
    (status, axum::Json(serde_json::json!({ "error": error.to_string() }))).into_response()
}

fn error_page(error: &ReportError) -> Response {
    let status = error_status(error);
    let body = format!("{}<h1>Cannot show this</h1>\n<p>{}</p>", navigation(), escape(&error.to_string()));
    (status, html(page("envbench: error", &body))).into_response()
}

/// A URL the viewer does not have: a page that says so and leads back, never an empty 404.
async fn not_found(uri: axum::http::Uri) -> Response {
    let body = format!(
        "{}<h1>No such page</h1>\n<p>This viewer has no page at <code>{}</code>. Start again from the \
         <a href=\"/\">list of runs</a>.</p>",
        navigation(),
        escape(uri.path())
    );
    (StatusCode::NOT_FOUND, html(page("envbench: no such page", &body))).into_response()
}

fn navigation() -> String {
    "<nav><a href=\"/\">Runs</a> <a href=\"/suites\">Suites</a> <a href=\"/environments\">Environments</a> \
     <a href=\"/leaderboard\">Leaderboard</a></nav>\n"
        .to_string()
}

/// `/leaderboard?workload=W&hypervisor=...`: every environment ranked on one workload, default and tuned options
/// apart, flagged runs listed apart; filters by what the fingerprints say.
async fn leaderboard_page(State(viewer): Shared, RawQuery(query): RawQuery) -> Response {
    use crate::leaderboard::FILTER_FIELDS;
    let query = parse_query(query.as_deref());
    with_store(viewer, move |store, workloads| {
        let mut body = navigation();
        check_leaderboard_query(&query, workloads)?;
        let Some((board, present)) = load_leaderboard(store, workloads, &query)? else {
            body.push_str("<h1>Leaderboard</h1>\n<p>No complete runs yet.</p>\n");
            return Ok(html(page("envbench leaderboard", &body)));
        };
        let workload = board.workload.as_str();
        body.push_str(&format!("<h1>Leaderboard: {}</h1>\n", escape(&board.title)));
        let links: Vec<String> = present
            .iter()
            .map(|w| {
                if *w == workload {
                    format!("<strong>{}</strong>", escape(w))
                } else {
                    format!("<a href=\"/leaderboard?workload={}\">{}</a>", percent_encode(w), escape(w))
                }
            })
            .collect();
        body.push_str(&format!("<p>Workloads: {}</p>\n", links.join(" · ")));
        body.push_str(&format!(
            "<form method=\"get\" action=\"/leaderboard\"><input type=\"hidden\" name=\"workload\" value=\"{}\">",
            escape(workload)
        ));
        for (name, label) in FILTER_FIELDS {
            let chosen = board.filters.get(name);
            let mut select =
                format!("<label>{} <select name=\"{name}\"><option value=\"\">any</option>", escape(label));
            for value in board.choices.get(name).into_iter().flatten() {
                let selected = if chosen == Some(value.as_str()) { " selected" } else { "" };
                select.push_str(&format!("<option{selected}>{}</option>", escape(value)));
            }
            select.push_str("</select></label> ");
            body.push_str(&select);
        }
        body.push_str("<button type=\"submit\">Filter</button></form>\n");
        body.push_str(
            "<p class=\"note\">Each environment's score: its median on every headline test against the median of the \
             environments in its list, direction-aware, as a geometric mean (1.20x faster than the median: its tests \
             run 1.20 times as fast as the middle environment's). An environment's figure is its latest runs (at most \
             5); on a service, each submitter's runs of it are an entry of their own, so nobody's uploads move \
             another's figure. Runs with a built-in profile's options and tuned runs are ranked apart; disturbed runs \
             and memory-backed storage are listed apart, unranked.</p>\n",
        );
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
        for (title, entries, none) in sections {
            body.push_str(&format!("<h2>{}</h2>\n", escape(title)));
            if entries.is_empty() {
                body.push_str(&format!("<p>{}</p>\n", escape(&none)));
                continue;
            }
            let others = entries.len().saturating_sub(1);
            let rows: Vec<String> = entries
                .iter()
                .map(|e| {
                    let mut row = format!(
                        "<tr>{}<td>{}{}{}</td>{}{}{}{}",
                        num(&e.position.map(ordinal).unwrap_or_else(|| "-".into())),
                        entry_name(e),
                        match e.flagged_runs {
                            0 => String::new(),
                            n => format!(
                                " <span class=\"note\">({n} flagged run{} left out)</span>",
                                envbench_core::text::plural(n)
                            ),
                        },
                        e.submitter.as_ref().map_or(String::new(), |s| format!(
                            " <span class=\"submitter\">by <a href=\"/?submitter={}\">{}</a></span>",
                            percent_encode(s),
                            escape(s)
                        )),
                        num(&e.score.map(crate::leaderboard::score_words).unwrap_or_else(|| "-".into())),
                        num(&e.percentile.map(|p| format!("{p:.0}% of {others}")).unwrap_or_else(|| "-".into())),
                        num(&e.runs.len().to_string()),
                        num(&e.tests.to_string()),
                    );
                    if priced {
                        let per_price =
                            e.score.zip(e.price_per_hour).map(|(score, price)| format!("{:.3}", score / price));
                        row.push_str(&num(&e.price_per_hour.map(|p| p.to_string()).unwrap_or_else(|| "-".into())));
                        if board.cost_unit.is_some() {
                            let cost = e.unit_cost.map(crate::verdict::cost_number);
                            row.push_str(&num(&cost.unwrap_or_else(|| "-".into())));
                        }
                        row.push_str(&num(&per_price.unwrap_or_else(|| "-".into())));
                    }
                    for value in &e.fields {
                        row.push_str(&cell(value));
                    }
                    row.push_str("</tr>");
                    row
                })
                .collect();
            body.push_str(&table(&headings, &rows));
        }
        Ok(html(page(&format!("envbench leaderboard: {}", board.title), &body)))
    })
    .await
}

/// A leaderboard entry's name: its labels, linked to its environment page, with the fingerprint's name beneath; the
/// fingerprint's name alone when its runs carry no label.
fn entry_name(entry: &crate::leaderboard::Entry) -> String {
    let link = |text: &str| format!("<a href=\"/environment/{}\">{}</a>", escape(&entry.environment.id), escape(text));
    if entry.labels.is_empty() {
        return link(&entry.environment.name);
    }
    let mut labels = entry.labels.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if entry.labels.len() > 3 {
        labels.push_str(&format!(" +{}", entry.labels.len() - 3));
    }
    format!("{}<br><span class=\"fingerprint\">{}</span>", link(&labels), escape(&entry.environment.name))
}

/// Why a leaderboard list is empty, in words: filters that leave nothing, runs that are all flagged (the usual
/// reason on a busy host), or no run with those options at all.
fn empty_list_reason(board: &crate::leaderboard::Leaderboard, class: Class) -> String {
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
fn check_leaderboard_query(query: &[(String, String)], workloads: &Registry) -> Result<(), ReportError> {
    let mut taken = vec!["workload"];
    taken.extend(crate::leaderboard::FILTER_FIELDS.iter().map(|(name, _)| *name));
    only_parameters(query, &taken)?;
    known_workload(query, workloads)
}

/// The leaderboard a query asks for (`workload=W`, the first workload with a complete run when none is named, and
/// any filters), and the workloads that have complete runs; `None` when the store has no complete run.
fn load_leaderboard(
    store: &dyn ResultStore,
    workloads: &Registry,
    query: &[(String, String)],
) -> Result<Option<(crate::leaderboard::Leaderboard, Vec<String>)>, ReportError> {
    use crate::leaderboard::{FILTER_FIELDS, Filters, RUNS_PER_ENVIRONMENT, choices, leaderboard};
    // Only the runs of the workload asked for, when one is: a store of many workloads lists less.
    let asked = first(query, "workload");
    let summaries = store.list_runs(&RunFilter { workload: asked.map(str::to_string), ..Default::default() })?;
    let environments = store.environments()?;
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
    let Some(workload) = asked.or(present.first().map(String::as_str)) else { return Ok(None) };
    if !complete.iter().any(|r| r.workload == workload) {
        return Err(ReportError::EmptySide(
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
    let offered = choices(of_workload.iter().filter_map(|r| environments.of(&r.uuid)));
    let mut taken: BTreeMap<crate::leaderboard::EntryKey, usize> = BTreeMap::new();
    let mut runs = Vec::new();
    for summary in &of_workload {
        let Some(fp) = environments.of(&summary.uuid).filter(|fp| filters.admits(fp)) else { continue };
        let key = (crate::environment::environment_identity(fp).id, summary.submitter.clone());
        let count = taken.entry(key).or_default();
        if *count < 2 * RUNS_PER_ENVIRONMENT {
            *count += 1;
            runs.push(store.load_run(&summary.uuid)?);
        }
    }
    Ok(Some((leaderboard(workload, &runs, &filters, offered, workloads), present)))
}

/// `key=value&key=value` with percent-decoding and `+` as space; repeated keys kept in order.
fn parse_query(query: Option<&str>) -> Vec<(String, String)> {
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

fn first<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query.iter().find(|(k, v)| k == key && !v.trim().is_empty()).map(|(_, v)| v.trim())
}

fn all<'a>(query: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    query.iter().filter(|(k, v)| k == key && !v.trim().is_empty()).map(|(_, v)| v.trim()).collect()
}

async fn list_page(State(location): Shared, RawQuery(query): RawQuery) -> Response {
    let query = parse_query(query.as_deref());
    with_store(location, move |store, workloads| {
        let mut tags = BTreeMap::new();
        for text in first(&query, "tag").unwrap_or("").split(',').filter(|t| !t.trim().is_empty()) {
            let (key, value) = parse_tag(text).map_err(ReportError::BadSide)?;
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
        let runs: Vec<_> = store
            .list_runs(&filter)?
            .into_iter()
            .filter(|r| from.is_none_or(|from| r.started_at.get(..10).unwrap_or("") >= from))
            .filter(|r| to.is_none_or(|to| r.started_at.get(..10).unwrap_or("") <= to))
            .take(LIST_LIMIT)
            .collect();
        let environments = store.environments()?;
        let value = |key: &str| escape(first(&query, key).unwrap_or(""));
        let mut body = navigation();
        body.push_str("<h1>envbench runs</h1>\n");
        body.push_str(&format!(
            "<form class=\"filters\" method=\"get\" action=\"/\">\
             <label>Label <input type=\"text\" name=\"label\" value=\"{}\"></label>\
             <label>Tags <input type=\"text\" name=\"tag\" value=\"{}\" placeholder=\"key=value,key=value\"></label>\
             <label>Host <input type=\"text\" name=\"host\" value=\"{}\"></label>\
             <label>Workload <input type=\"text\" name=\"workload\" value=\"{}\"></label>\
             <label>From <input type=\"date\" name=\"from\" value=\"{}\"></label>\
             <label>To <input type=\"date\" name=\"to\" value=\"{}\"></label>\
             <button type=\"submit\">Filter</button> <a href=\"/\">clear</a></form>\n",
            value("label"),
            value("tag"),
            value("host"),
            value("workload"),
            value("from"),
            value("to")
        ));
        body.push_str(
            "<form method=\"get\" action=\"/compare\">\n<p>Tick runs to compare (each ticked run is one side, the \
             first is the baseline), or name sides below by label, tags (key=value) or run id; a side named by label \
             or tags pools the samples of all its complete runs.</p>\n",
        );
        // Each run's headline figure, as its workload words it (the scorecard's line).
        let headlines: Vec<String> = runs
            .iter()
            .map(|r| store.load_run(&r.uuid).map(|run| workloads.headline(&run)))
            .collect::<Result<_, _>>()?;
        let rows: Vec<String> = runs
            .iter()
            .zip(&headlines)
            .map(|(r, headline)| {
                let tags = crate::history::user_tags(&r.tags, ", ");
                format!(
                    "<tr><td><input type=\"checkbox\" name=\"run\" value=\"{}\" aria-label=\"compare {}\"></td>\
                     <td><a href=\"/run/{}\">{}</a></td>{}{}{}{}{}{}{}{}</tr>",
                    escape(&r.uuid),
                    escape(&r.uuid),
                    escape(&r.uuid),
                    escape(r.uuid.get(..8).unwrap_or(&r.uuid)),
                    cell(&r.started_at.replace('T', " ")),
                    cell(&r.workload),
                    cell(headline),
                    cell(&if r.disturbed { format!("{} (disturbed)", r.status) } else { r.status.to_string() }),
                    cell(r.label.as_deref().unwrap_or("")),
                    cell(&tags),
                    environment_cell(run_identity(r, &environments).as_ref(), r.host.as_deref()),
                    num(&r.result_count.to_string())
                )
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
        if runs.is_empty() {
            body.push_str("<p>No runs match.</p>\n");
        } else {
            body.push_str(&table(&headings, &rows));
        }
        body.push_str(
            "<p><label>Side <input type=\"text\" name=\"side\" placeholder=\"label, key=value or run id\"></label> \
             <label>Side <input type=\"text\" name=\"side\" placeholder=\"label, key=value or run id\"></label> \
             <button type=\"submit\">Compare</button></p>\n</form>\n",
        );
        Ok(html(page("envbench runs", &body)))
    })
    .await
}

async fn run_page(State(location): Shared, Path(id): Path<String>) -> Response {
    with_store(location, move |store, workloads| {
        let run = store.load_run(&store.find_run(&id)?)?;
        let uuid = run.summary.uuid.clone();
        let side = Side::new(run_name(&run), vec![run]);
        let sides = [side];
        let comparison = compare(&sides, workloads);
        let mut body = navigation();
        body.push_str(&format!(
            "<h1>Run {}</h1>\n<p><a href=\"/report.html?run={}\">Download this run's report</a></p>\n",
            escape(&sides[0].name),
            escape(&uuid)
        ));
        let run = &sides[0].runs[0];
        let tags = run.summary.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
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
            ("Tags", tags),
            ("Submitter", run.summary.submitter.clone().unwrap_or_else(|| "-".into())),
            ("Command", run.command_line.clone()),
            ("envbench", run.tool_version.clone()),
        ];
        let disturbance = run.series.as_ref().and_then(|s| s.disturbance()).map(|d| ("Disturbed", d.reason));
        let rows: Vec<String> = facts
            .iter()
            .cloned()
            .chain(disturbance)
            .map(|(k, v)| format!("<tr><th scope=\"row\">{}</th>{}</tr>", escape(k), cell(&v)))
            .collect();
        body.push_str(&table(&["".to_string(), "".to_string()], &rows));
        let digested =
            run.results.iter().filter(|r| r.record.flags.iter().any(|f| envbench_store::is_digest_flag(f))).count();
        if digested > 0 {
            body.push_str(&format!(
                "<p class=\"note\">{digested} of its results have more than {} samples: this page shows each from a \
                 digest of {} order statistics (its minimum, median and maximum exact), so that it costs what any \
                 page costs. <a href=\"/api/v1/runs/{}\">The run as kept</a> has every sample.</p>\n",
                envbench_store::DIGEST_ABOVE,
                envbench_store::DIGEST_POINTS,
                escape(&uuid)
            ));
        }
        if run.summary.status == envbench_core::model::RunStatus::Complete {
            let query = [("workload".to_string(), run.summary.workload.clone())];
            if let Some((board, _)) = load_leaderboard(store, workloads, &query)? {
                body.push_str(&percentiles_section(&board, run, workloads));
            }
        }
        body.push_str(&report_sections(&comparison, &sides, workloads));
        Ok(html(page(&format!("envbench run {}", sides[0].name), &body)))
    })
    .await
}

/// Where a run stands on each of its headline tests (the test with its parameters' hash) among the environments of
/// its class in this store.
fn percentiles_section(
    board: &crate::leaderboard::Leaderboard,
    run: &envbench_core::model::StoredRun,
    workloads: &Registry,
) -> String {
    use crate::leaderboard::{Class, class, test_percentiles};
    let class = class(run);
    let mut body = "<h2>Among the environments here</h2>\n".to_string();
    if class == Class::Flagged {
        body.push_str(
            "<p>Not ranked: this run is flagged (disturbed by other load, or its storage is memory), and flagged runs \
             are listed apart on the <a href=\"/leaderboard\">leaderboard</a>.</p>\n",
        );
        return body;
    }
    let percentiles = test_percentiles(board, run, workloads);
    if percentiles.iter().all(|p| p.percentile.is_none()) {
        body.push_str(&format!(
            "<p>No other environment with {} ran these tests with these parameters yet.</p>\n",
            class.words()
        ));
        return body;
    }
    body.push_str(&format!(
        "<p class=\"note\">Each headline test, matched by its parameters' hash, against every other environment's \
         median of it among runs with {} (each environment's latest runs, at most {}): the share of them this run \
         beats. See the <a href=\"/leaderboard?workload={}\">leaderboard</a>.</p>\n",
        class.words(),
        crate::leaderboard::RUNS_PER_ENVIRONMENT,
        percent_encode(&board.workload)
    ));
    let headings: Vec<String> =
        ["Test", "Metric", "This run", "Median of the others", "Environments", "Beats"].map(String::from).to_vec();
    let rows: Vec<String> = percentiles
        .iter()
        .map(|p| {
            let unit = |v: f64| format!("{} {}", crate::render::number(v), p.test.unit);
            format!(
                "<tr>{}{}{}{}{}{}</tr>",
                cell(&p.test.name()),
                cell(&p.test.metric),
                num(&unit(p.value)),
                num(&p.median_of_environments.map(unit).unwrap_or_else(|| "-".into())),
                num(&p.environments.to_string()),
                num(&p.percentile.map(|v| format!("{v:.0}%")).unwrap_or_else(|| "-".into())),
            )
        })
        .collect();
    body.push_str(&table(&headings, &rows));
    body
}

/// An environment's name linking to its history, with the host name.
fn environment_cell(identity: Option<&EnvironmentIdentity>, host: Option<&str>) -> String {
    let host = host.map(|h| format!(" <span class=\"note\">({})</span>", escape(h))).unwrap_or_default();
    match identity {
        Some(identity) => {
            format!("<td><a href=\"/environment/{}\">{}</a>{host}</td>", escape(&identity.id), escape(&identity.name))
        }
        None => format!("<td>?{host}</td>"),
    }
}

async fn suites_page(State(viewer): Shared) -> Response {
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

async fn environments_page(State(viewer): Shared) -> Response {
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

async fn environment_page(State(viewer): Shared, Path(id): Path<String>) -> Response {
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
            let keep = if *environment == id { HISTORY_RUNS } else { crate::leaderboard::RUNS_PER_ENVIRONMENT };
            let mut runs = Vec::new();
            for uuid in &uuids[uuids.len().saturating_sub(keep)..] {
                runs.push(store.load_run(uuid)?);
            }
            let ranked = runs.len().saturating_sub(crate::leaderboard::RUNS_PER_ENVIRONMENT);
            by_environment.entry(environment.to_string()).or_default().extend(runs[ranked..].iter().cloned());
            if *environment == id {
                own_history.extend(runs);
            }
        }
        let Some(identity) = identity else {
            return Err(ReportError::EmptySide(
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
            let next_to = |neighbour: &Option<crate::history::Neighbour>, place: &str| {
                neighbour.as_ref().map(|n| {
                    let words = match crate::verdict::speed_words(n.factor) {
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
        let mut charts = crate::report::Charts::default();
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
                        .map(|v| num(&v.map(crate::render::number).unwrap_or_else(|| "-".into())))
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

/// The sides a compare request names: every `side=` spec, then every ticked `run=`.
fn requested_sides(store: &dyn ResultStore, query: &[(String, String)]) -> Result<Vec<Side>, ReportError> {
    let mut sides = Vec::new();
    for spec in all(query, "side") {
        sides.push(resolve_side(store, spec)?);
    }
    for id in all(query, "run") {
        sides.push(resolve_side(store, &format!("run:{id}"))?);
    }
    if sides.len() < 2 {
        return Err(ReportError::TooFewSides(sides.len()));
    }
    unique_names(&mut sides);
    Ok(sides)
}

async fn compare_page(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    let raw = raw.unwrap_or_default();
    with_store(location, move |store, workloads| {
        let sides = requested_sides(store, &query)?;
        let comparison = compare(&sides, workloads);
        let names: Vec<&str> = sides.iter().map(|s| s.name.as_str()).collect();
        let title = format!("Compare {}", names.join(" vs "));
        let raw = escape(&raw);
        let mut body = navigation();
        body.push_str(&format!(
            "<h1>{}</h1>\n<p class=\"no-print\"><a href=\"/report.html?{raw}\">Download the HTML report</a> · \
             <a href=\"/compare.md?{raw}\">Markdown</a> · <a href=\"/compare.json?{raw}\">JSON</a></p>\n",
            escape(&title)
        ));
        body.push_str(&report_sections(&comparison, &sides, workloads));
        Ok(html(page(&title, &body)))
    })
    .await
}

async fn report_download(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    with_store(location, move |store, workloads| {
        // One run alone is a report too (the run page links it).
        let sides = match requested_sides(store, &query) {
            Err(ReportError::TooFewSides(1)) => {
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

async fn compare_json(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    with_store(location, move |store, workloads| {
        let comparison = compare(&requested_sides(store, &query)?, workloads);
        Ok(([(header::CONTENT_TYPE, "application/json")], render_json(&comparison)).into_response())
    })
    .await
}

async fn compare_markdown(State(location): Shared, RawQuery(raw): RawQuery) -> Response {
    let query = parse_query(raw.as_deref());
    with_store(location, move |store, workloads| {
        let comparison = compare(&requested_sides(store, &query)?, workloads);
        Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], render_markdown(&comparison)).into_response())
    })
    .await
}

/// The most runs `GET /api/v1/runs` lists at once.
const MAX_LIMIT: usize = 10_000;

/// Refuse a query with a parameter the endpoint does not take: a misspelt filter would otherwise be ignored, and the
/// answer read as filtered.
fn only_parameters(query: &[(String, String)], taken: &[&str]) -> Result<(), ReportError> {
    match query.iter().find(|(key, _)| !taken.contains(&key.as_str())) {
        Some((key, _)) => Err(ReportError::BadSide(format!(
            "unknown parameter '{}': this takes {}",
            envbench_core::text::truncate(&envbench_core::text::printable(key), 40),
            taken.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Refuse `workload=W` for a workload envbench does not have.
fn known_workload(query: &[(String, String)], workloads: &Registry) -> Result<(), ReportError> {
    match first(query, "workload") {
        Some(asked) if !workloads.names().contains(&asked) => Err(ReportError::BadSide(format!(
            "workload '{}' is not one of envbench's: {}",
            envbench_core::text::truncate(&envbench_core::text::printable(asked), 40),
            workloads.names().join(", ")
        ))),
        _ => Ok(()),
    }
}

/// `GET /api/v1/runs?label=L&tag=k=v&workload=W&host=H&submitter=S&limit=N`: the runs that match, newest first, as
/// listed (what `compare` and `report` resolve a side on a service with; `submitter` keeps to one submitter's runs).
async fn api_runs(State(viewer): Shared, RawQuery(raw): RawQuery) -> Response {
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
async fn api_run(State(viewer): Shared, Path(id): Path<String>) -> Response {
    let work = move |store: &dyn ResultStore, _: &Registry| {
        Ok(axum::Json(store.load_run(&store.find_run(&id)?)?).into_response())
    };
    with_store_or(viewer, Loads::Whole, work, error_json).await
}

/// `GET /api/v1/leaderboard?workload=W&hypervisor=...`: the leaderboard's lists with each environment's headline
/// medians and the runs behind them, so a client can rank a run of its own among them without sending it anywhere.
async fn api_leaderboard(State(viewer): Shared, RawQuery(raw): RawQuery) -> Response {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn only_the_listening_host_is_served() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        for host in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "127.0.0.2:8080"] {
            assert!(host_allowed(host, &loopback), "{host}");
        }
        for host in ["evil.example:8080", "127.0.0.1:9090", "localhost", "", "10.0.0.5:8080", "attacker.com"] {
            assert!(!host_allowed(host, &loopback), "{host}");
        }
        let everywhere: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(host_allowed("192.168.1.7:8080", &everywhere));
        assert!(!host_allowed("rebind.example:8080", &everywhere));
        let port80: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert!(host_allowed("localhost", &port80));
    }

    #[test]
    fn loopback_addresses() {
        assert!(is_loopback(&"127.0.0.1:8080".parse().unwrap()));
        assert!(is_loopback(&"[::1]:8080".parse().unwrap()));
        assert!(!is_loopback(&"0.0.0.0:8080".parse().unwrap()));
    }
}
