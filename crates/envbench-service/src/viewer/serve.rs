//! Serving the viewer: its routes (the pages, the downloads, and the `/api/v1` routes it is given), the guard in
//! front of them (only requests addressed to the viewer's own address or names, every response forbidding scripts,
//! framing and sniffing), and the listeners: plain HTTP or HTTPS, each connection with a header read timeout, and
//! the connections in flight capped per peer and in all, so that slow clients cannot take every descriptor the
//! process has before any of them shows a token.

use super::board::leaderboard_page;
use super::environments::{environment_page, environments_page, suites_page};
use super::pages::{compare_json, compare_markdown, compare_page, list_page, report_download, run_page};
use super::respond::{Viewer, html, navigation};
use crate::viewer_error::ViewerError;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use envbench_core::workload::Registry;
use envbench_report::html::page;
use envbench_store::StoreLocation;
use maud::html as markup;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

/// Where `serve` listens unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// The content security policy of every page: inline styles and SVG only; no scripts, no loads, no frames.
pub(super) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// What a viewer serves beside its pages: the `/api/v1` routes (envbench-service's `api::router`), and the host
/// names it answers for beyond the address it listens on (the public name of a service behind a reverse proxy).
#[derive(Default)]
pub struct Extras {
    pub api: Option<Router>,
    pub hosts: Vec<String>,
    /// Serve HTTPS with these settings ([`crate::tls::load_tls`]) instead of plain HTTP.
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
pub(super) struct Addressed {
    listening: SocketAddr,
    hosts: Arc<Vec<String>>,
}

/// Refuse requests not addressed to the viewer (DNS rebinding) or with more than one `Host` (RFC 9112 3.2: a 400),
/// and mark every response as not to be scripted, framed or sniffed.
pub(super) async fn guard(State(addressed): State<Addressed>, request: Request, next: Next) -> Response {
    let listening = addressed.listening;
    let hosts = request.headers().get_all(header::HOST).iter().count();
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let mut response = if hosts > 1 {
        let body = markup! { h1 { "Bad request" } "\n" p { "The request has more than one Host header." } };
        (StatusCode::BAD_REQUEST, html(page("envbench: bad request", body))).into_response()
    } else if host_allowed(host, &listening) || named_host(host, &addressed.hosts) {
        next.run(request).await
    } else {
        let body = markup! {
            h1 { "Not this host" } "\n"
            p {
                "This envbench viewer answers requests for " (listening) " only (and localhost when it listens on \
                 loopback), not for '" (host) "'."
            }
        };
        (StatusCode::MISDIRECTED_REQUEST, html(page("envbench: wrong host", body))).into_response()
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
pub(super) fn named_host(host: &str, hosts: &[String]) -> bool {
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
) -> Result<(), ViewerError> {
    serve_with(location, listener, workloads, Extras::default()).await
}

/// Serve the viewer with [`Extras`].
pub async fn serve_with(
    location: StoreLocation,
    listener: tokio::net::TcpListener,
    workloads: Registry,
    extras: Extras,
) -> Result<(), ViewerError> {
    let listening = listener.local_addr().map_err(|e| ViewerError::Serve(e.to_string()))?;
    let tls = extras.tls.clone();
    let router = router_with(location, workloads, listening, extras);
    match tls {
        Some(config) => {
            let listener =
                crate::tls::TlsListener::new(listener, config).map_err(|e| ViewerError::Serve(e.to_string()))?;
            serve_connections(listener, router).await
        }
        None => serve_connections(listener, router).await,
    }
}

/// How long a client may take to send a request's headers, and to begin its next request on a kept-alive
/// connection: a client that sends them byte by byte (slowloris) or sends nothing has its connection closed then.
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// The connections one peer (an IPv4 address, an IPv6 /64) may hold open at once; beyond them its new connections
/// are closed as they come, so one client cannot starve the others.
pub const MAX_CONNECTIONS_PER_PEER: usize = 32;

/// Serve each connection `listener` accepts with `router`, over HTTP/1.1 with [`HEADER_READ_TIMEOUT`] (axum::serve
/// sets no timer, so its connections wait for a slow or idle client forever), at most [`MAX_CONNECTIONS_PER_PEER`]
/// from one peer and [`max_connections`] in all.
pub(super) async fn serve_connections<L>(mut listener: L, router: Router) -> Result<(), ViewerError>
where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    let gate = Arc::new(Gate { held: Mutex::new((0, HashMap::new())), total: max_connections() });
    loop {
        let (io, peer) = listener.accept().await;
        // Over a cap, the connection is closed at once: its descriptor is back before the next accept.
        let Some(pass) = Gate::admit(&gate, peer.ip()) else { continue };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
            // A connection's end, timed out or not, is the client's business.
            let _ = builder.serve_connection(hyper_util::rt::TokioIo::new(io), service).await;
            drop(pass);
        });
    }
}

/// The connections in flight, in all and per peer.
struct Gate {
    held: Mutex<(usize, HashMap<IpAddr, usize>)>,
    total: usize,
}

/// One admitted connection's place at the [`Gate`], given back when it ends.
struct Pass {
    gate: Arc<Gate>,
    peer: IpAddr,
}

impl Gate {
    fn admit(gate: &Arc<Gate>, ip: IpAddr) -> Option<Pass> {
        let peer = peer_key(ip);
        let mut held = gate.held.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per_peer) = &mut *held;
        let mine = per_peer.entry(peer).or_insert(0);
        if *total >= gate.total || *mine >= MAX_CONNECTIONS_PER_PEER {
            return None;
        }
        *mine += 1;
        *total += 1;
        Some(Pass { gate: Arc::clone(gate), peer })
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut held = self.gate.held.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per_peer) = &mut *held;
        *total = total.saturating_sub(1);
        if let Some(mine) = per_peer.get_mut(&self.peer) {
            *mine -= 1;
            if *mine == 0 {
                per_peer.remove(&self.peer);
            }
        }
    }
}

/// Whom a connection counts against: its IPv4 address (an IPv4-mapped IPv6 one too), or its IPv6 /64, which one
/// host is commonly given whole.
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

/// The connections served at once in all: half the descriptors this process may open (the rest are the store's,
/// the listener's and the runtime's), from 64 to 4,096.
pub fn max_connections() -> usize {
    (descriptor_limit() / 2).clamp(64, 4096)
}

/// This process's soft limit on open descriptors.
fn descriptor_limit() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

/// Raise this process's soft limit on open descriptors to its hard limit (systemd's units start services at a soft
/// 1,024 beside a far higher hard limit); the soft limit now.
pub fn raise_descriptor_limit() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            // Unlimited is no count: a million is far beyond any connection cap.
            let wanted = if limit.rlim_max == libc::RLIM_INFINITY { 1 << 20 } else { limit.rlim_max };
            let raised = libc::rlimit { rlim_cur: wanted, rlim_max: limit.rlim_max };
            libc::setrlimit(libc::RLIMIT_NOFILE, &raised);
        }
    }
    descriptor_limit()
}

/// Bind the viewer's address (e.g. [`DEFAULT_LISTEN`]); port 0 picks a free port (see `local_addr`).
pub fn bind(address: &str) -> Result<TcpListener, ViewerError> {
    TcpListener::bind(address).map_err(|e| ViewerError::Listen { address: address.to_string(), reason: e.to_string() })
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
) -> Result<(), ViewerError> {
    let address = listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    raise_descriptor_limit();
    let listen_error = |e: std::io::Error| ViewerError::Listen { address: address.clone(), reason: e.to_string() };
    listener.set_nonblocking(true).map_err(listen_error)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ViewerError::Serve(e.to_string()))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(listen_error)?;
        serve_with(location, listener, workloads, extras).await
    })
}

/// A URL the viewer does not have: a page that says so and leads back, never an empty 404.
pub(super) async fn not_found(uri: axum::http::Uri) -> Response {
    let body = markup! {
        (navigation()) h1 { "No such page" } "\n"
        p { "This viewer has no page at " code { (uri.path()) } ". Start again from the " a href="/" { "list of runs" } "." }
    };
    (StatusCode::NOT_FOUND, html(page("envbench: no such page", body))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn peers_are_counted_by_address_or_64_bit_prefix() {
        let key = |text: &str| peer_key(text.parse().unwrap()).to_string();
        assert_eq!(key("192.0.2.7"), "192.0.2.7");
        assert_eq!(key("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::");
        let gate = Arc::new(Gate { held: Mutex::new((0, HashMap::new())), total: 40 });
        let one: IpAddr = "192.0.2.7".parse().unwrap();
        let passes: Vec<Pass> = (0..MAX_CONNECTIONS_PER_PEER).map(|_| Gate::admit(&gate, one).unwrap()).collect();
        assert!(Gate::admit(&gate, one).is_none(), "one peer's cap");
        let others: Vec<Pass> =
            (0..8).map(|i| Gate::admit(&gate, format!("192.0.2.{}", 100 + i).parse().unwrap()).unwrap()).collect();
        assert!(Gate::admit(&gate, "198.51.100.1".parse().unwrap()).is_none(), "the cap in all");
        drop(passes);
        assert!(Gate::admit(&gate, one).is_some(), "given back as connections end");
        drop(others);
        assert_eq!(gate.held.lock().unwrap().0, 0);
    }

    #[test]
    fn loopback_addresses() {
        assert!(is_loopback(&"127.0.0.1:8080".parse().unwrap()));
        assert!(is_loopback(&"[::1]:8080".parse().unwrap()));
        assert!(!is_loopback(&"0.0.0.0:8080".parse().unwrap()));
    }
}
