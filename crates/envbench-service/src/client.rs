//! The client side: `envbench push https://host/ --token-file FILE`. It asks the service which runs it has, checks
//! locally what it can (a run's provenance, the binary that ran it), and uploads the rest in batches within the
//! service's limits, over HTTPS (rustls) or plain HTTP, through the proxy `HTTPS_PROXY`/`HTTP_PROXY` name.

use crate::api::{ApiError, Known, Limits, UploadAnswer};
use crate::upload::{UPLOAD_FORMAT, UploadBody, UploadedRun, kept_provenance};
use envbench_core::provenance::BinaryIdentity;
use envbench_report::leaderboard::Leaderboard;
use envbench_store::{ReadRuns, StoreError};
use std::time::Duration;

/// Why talking to a service failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("'{0}' is not a service URL: give http(s)://host[:port]/")]
    BadUrl(String),
    #[error("--ca-cert: {0}")]
    BadCertificate(String),
    #[error("{url}: cannot reach the service ({reason}); check the URL, the network and any proxy (HTTPS_PROXY)")]
    Unreachable { url: String, reason: String },
    #[error("{url}: the service refused it ({status}): {message}")]
    Refused { url: String, status: u16, message: String },
    #[error("{url}: the answer is not an envbench service's ({reason})")]
    NotAService { url: String, reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A TLS refusal with what to do about it: rustls names the fault and nothing more.
fn explained(reason: String) -> String {
    if reason.contains("CaUsedAsEndEntity") {
        format!(
            "{reason}: the service's certificate is a CA's (basicConstraints CA:TRUE, as openssl req -x509 makes by \
             default), which TLS refuses as a server's own; make it with -addext basicConstraints=critical,CA:FALSE \
             and -addext subjectAltName=DNS:HOST, then give it to serve --tls-cert and to push --ca-cert"
        )
    } else {
        reason
    }
}

/// The host of a plain-HTTP URL (`http://`, any case), without its port, user or brackets; None for another scheme.
fn plain_http_host(url: &str) -> Option<String> {
    let rest = url.get(..7).filter(|scheme| scheme.eq_ignore_ascii_case("http://")).map(|_| &url[7..])?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    Some(host.to_ascii_lowercase())
}

/// True for a name or address of this host: `localhost` and loopback addresses.
fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// How long an upload may take, sent and answered: a batch of runs within the service's limits, over a slow link.
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a read may take: someone waits at a terminal for it.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read from a service.
const MAX_ANSWER_BYTES: u64 = 16 << 20;

/// A results service, reached over HTTP(S).
#[derive(Clone)]
pub struct Client {
    /// Uploads, within [`UPLOAD_TIMEOUT`].
    agent: ureq::Agent,
    /// Reads (what `compare`, `report` and `push` ask before sending), within [`READ_TIMEOUT`].
    reader: ureq::Agent,
    base: String,
    token: Option<String>,
}

impl Client {
    /// A client of the service at `url` (its root, e.g. `https://results.example.com/`), uploading with `token`,
    /// trusting `ca_pem` (PEM certificates) besides the system's roots.
    pub fn new(url: &str, token: Option<String>, ca_pem: Option<&[u8]>) -> Result<Client, ClientError> {
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("https://") || lower.starts_with("http://")) || url.contains(char::is_whitespace) {
            return Err(ClientError::BadUrl(url.to_string()));
        }
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(pem) = ca_pem {
            let mut certificates = Vec::new();
            for item in ureq::tls::parse_pem(pem) {
                match item {
                    Ok(ureq::tls::PemItem::Certificate(certificate)) => certificates.push(certificate),
                    Ok(_) => {}
                    Err(e) => return Err(ClientError::BadCertificate(e.to_string())),
                }
            }
            if certificates.is_empty() {
                return Err(ClientError::BadCertificate("the file holds no PEM certificate".into()));
            }
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certificates));
        }
        // The proxy comes from the environment (ALL_PROXY, HTTPS_PROXY, HTTP_PROXY), as ureq's default config takes it.
        let tls = tls.build();
        let agent = |timeout: Duration| {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(timeout))
                .timeout_connect(Some(Duration::from_secs(15)))
                .max_redirects(0)
                .tls_config(tls.clone())
                .build()
                .new_agent()
        };
        Ok(Client {
            agent: agent(UPLOAD_TIMEOUT),
            reader: agent(READ_TIMEOUT),
            base: url.trim_end_matches('/').to_string(),
            token,
        })
    }

    /// Why the token would cross a network in clear text: plain HTTP (the scheme in any case) to a host other than
    /// this one (`localhost`, 127.0.0.0/8, `[::1]`). None over HTTPS, to loopback, or without a token.
    pub fn clear_text_risk(&self) -> Option<String> {
        self.token.as_ref()?;
        let host = plain_http_host(&self.base)?;
        (!is_loopback(&host)).then(|| {
            format!(
                "{}: plain HTTP to another host ({host}): the token would cross the network in clear text",
                self.base
            )
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Send a request and read its answer: its status and body.
    fn exchange(&self, path: &str, body: Option<&[u8]>, with_token: bool) -> Result<(u16, String), ClientError> {
        let url = self.url(path);
        let unreachable =
            |e: ureq::Error| ClientError::Unreachable { url: url.clone(), reason: explained(e.to_string()) };
        let mut response = match body {
            Some(body) => {
                // A body the service refuses by its length is answered before it is sent.
                let mut request =
                    self.agent.post(&url).header("Content-Type", "application/json").header("Expect", "100-continue");
                if with_token && let Some(token) = &self.token {
                    request = request.header("Authorization", format!("Bearer {token}"));
                }
                request.send(body).map_err(unreachable)?
            }
            None => self.reader.get(&url).call().map_err(|e| match e {
                ureq::Error::Timeout(_) => ClientError::Unreachable {
                    url: url.clone(),
                    reason: format!(
                        "no answer within {} s: the service is stalled or overloaded, or this is not an envbench \
                         service; try again later",
                        READ_TIMEOUT.as_secs()
                    ),
                },
                e => unreachable(e),
            })?,
        };
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .map_err(|e| ClientError::NotAService { url: url.clone(), reason: e.to_string() })?;
        Ok((status, text))
    }

    /// A JSON answer of type `T` when the status is one of `accepted`; otherwise the service's refusal.
    fn answer<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        (status, text): (u16, String),
        accepted: &[u16],
    ) -> Result<T, ClientError> {
        let url = self.url(path);
        if accepted.contains(&status) {
            return serde_json::from_str(&text).map_err(|e| ClientError::NotAService { url, reason: e.to_string() });
        }
        let message = serde_json::from_str::<ApiError>(&text).map(|e| e.error).unwrap_or_else(|_| {
            let first: String = text.chars().take(200).collect();
            if first.is_empty() { "no reason given".into() } else { first }
        });
        Err(ClientError::Refused { url, status, message })
    }

    /// The service's root URL, without its trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A read: the JSON answer of `GET path` (with its query), or the service's refusal.
    pub fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.answer(path, self.exchange(path, None, false)?, &[200])
    }

    /// What the service takes in one upload.
    /// `GET /api/v1/leaderboard?workload=W&FILTERS`, `filters` as the user gave them (`transport=nvme`): `None` when
    /// the service has no complete run of the workload. A 404 that is not an envbench service's answer says so.
    pub fn leaderboard(&self, workload: &str, filters: &str) -> Result<Option<Leaderboard>, ClientError> {
        let mut path = format!("/api/v1/leaderboard?workload={}", envbench_core::text::percent_encode(workload));
        if !filters.is_empty() {
            path.push('&');
            path.push_str(filters);
        }
        match self.get::<Leaderboard>(&path) {
            Ok(board) => Ok(Some(board)),
            // An envbench service says it has no complete run of the workload; any other 404 is not one's.
            Err(ClientError::Refused { status: 404, message, .. }) if message.contains("no complete run") => Ok(None),
            Err(ClientError::Refused { status: 404, url, message }) => Err(ClientError::NotAService {
                url,
                reason: format!(
                    "it has no leaderboard API (404: {}); is this the address of an envbench service?",
                    envbench_core::text::truncate(&envbench_core::text::printable(&message), 120)
                ),
            }),
            Err(error) => Err(error),
        }
    }

    pub fn limits(&self) -> Result<Limits, ClientError> {
        let path = "/api/v1/limits";
        self.answer(path, self.exchange(path, None, false)?, &[200])
    }

    /// Which of these runs the service has.
    pub fn known(&self, runs: &[String]) -> Result<Vec<String>, ClientError> {
        let path = "/api/v1/known";
        let body = serde_json::to_vec(&Known { runs: runs.to_vec() }).expect("ids serialize");
        Ok(self.answer::<Known>(path, self.exchange(path, Some(&body), false)?, &[200])?.runs)
    }

    /// Upload a batch: each run's outcome.
    pub fn upload(&self, body: &[u8]) -> Result<UploadAnswer, ClientError> {
        let path = "/api/v1/runs";
        self.answer(path, self.exchange(path, Some(body), true)?, &[200, 422])
    }
}

/// What a push to a service did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PushedToService {
    pub submitter: Option<String>,
    pub accepted: Vec<String>,
    pub already_present: Vec<String>,
    /// Runs not uploaded, or refused by the service, with the reason.
    pub refused: Vec<(String, String)>,
    /// Runs with no results: nothing to share.
    pub empty: Vec<String>,
}

impl PushedToService {
    /// What the push did, as `envbench push --json` prints it.
    pub fn json(&self, url: &str) -> serde_json::Value {
        serde_json::json!({
            "service": url,
            "submitter": self.submitter,
            "accepted": self.accepted,
            "already_present": self.already_present,
            "refused": self.refused.iter().map(|(run, reason)| serde_json::json!({ "run": run, "reason": reason }))
                .collect::<Vec<_>>(),
            "without_results": self.empty,
        })
    }

    pub fn summary(&self, url: &str) -> String {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        format!(
            "pushed {} run{} to {url}{}; {} already there; {} refused; {} without results, not sent",
            self.accepted.len(),
            plural(self.accepted.len()),
            self.submitter.as_ref().map(|s| format!(" as '{s}'")).unwrap_or_default(),
            self.already_present.len(),
            self.refused.len(),
            self.empty.len()
        )
    }
}

/// The upload of these runs (ids or prefixes) as this binary would send it, and the runs it cannot send with the
/// reason: no provenance, or another binary ran it (whose digest this one cannot state).
pub fn upload_of(
    from: &dyn ReadRuns,
    runs: &[String],
    binary: &BinaryIdentity,
    binary_sha256: &str,
) -> Result<(UploadBody, Vec<(String, String)>), ClientError> {
    let mut body = UploadBody { format: UPLOAD_FORMAT, runs: Vec::new() };
    let mut unsent = Vec::new();
    for id in runs {
        let run = from.load_run(&from.find_run(id)?)?;
        match uploadable(run, binary, binary_sha256) {
            Ok(run) => body.runs.push(run),
            Err((uuid, reason)) => unsent.push((uuid, reason)),
        }
    }
    Ok((body, unsent))
}

/// A run as uploaded, or why it cannot be.
fn uploadable(
    run: envbench_core::StoredRun,
    binary: &BinaryIdentity,
    binary_sha256: &str,
) -> Result<UploadedRun, (String, String)> {
    let uuid = run.summary.uuid.clone();
    let kept = kept_provenance(&run).map_err(|reason| (uuid.clone(), reason))?;
    if kept.binary.as_ref() != Some(binary) {
        return Err((
            uuid,
            "another envbench binary ran it (a different build or version than this one): only the binary that ran \
             a run can state its SHA-256; push it with that binary"
                .into(),
        ));
    }
    UploadedRun::of(run, binary_sha256).map_err(|reason| (uuid, reason))
}

/// Upload runs (ids or prefixes) to a service: those it has are skipped, those without results are not sent, the
/// rest go in batches within its limits.
pub fn push(
    from: &dyn ReadRuns,
    client: &Client,
    runs: &[String],
    binary: &BinaryIdentity,
    binary_sha256: &str,
) -> Result<PushedToService, ClientError> {
    let limits = client.limits()?;
    let uuids: Vec<String> = runs.iter().map(|id| from.find_run(id)).collect::<Result<_, _>>()?;
    let known = client.known(&uuids)?;
    let mut pushed = PushedToService::default();
    let mut batch: Vec<Vec<u8>> = Vec::new();
    let mut batch_bytes = 0u64;
    // Room for the envelope around the runs.
    let room = limits.max_body_bytes.saturating_sub(1024);
    let send = |batch: &mut Vec<Vec<u8>>, pushed: &mut PushedToService| -> Result<(), ClientError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut body = format!("{{\"format\":{UPLOAD_FORMAT},\"runs\":[").into_bytes();
        for (index, run) in batch.iter().enumerate() {
            if index > 0 {
                body.push(b',');
            }
            body.extend_from_slice(run);
        }
        body.extend_from_slice(b"]}");
        batch.clear();
        let answer = client.upload(&body)?;
        pushed.submitter = Some(answer.submitter);
        for outcome in answer.runs {
            match outcome.outcome.as_str() {
                "accepted" => pushed.accepted.push(outcome.run),
                "already_present" => pushed.already_present.push(outcome.run),
                _ => pushed.refused.push((outcome.run, outcome.reason.unwrap_or_default())),
            }
        }
        Ok(())
    };
    for uuid in uuids {
        if known.contains(&uuid) {
            pushed.already_present.push(uuid);
            continue;
        }
        let run = from.load_run(&uuid)?;
        if run.summary.status == envbench_core::RunStatus::Running {
            continue;
        }
        if run.results.is_empty() {
            pushed.empty.push(uuid);
            continue;
        }
        let run = match uploadable(run, binary, binary_sha256) {
            Ok(run) => run,
            Err(refused) => {
                pushed.refused.push(refused);
                continue;
            }
        };
        let bytes = serde_json::to_vec(&run).expect("runs serialize");
        if bytes.len() as u64 > room {
            pushed.refused.push((
                uuid,
                format!(
                    "{} bytes, more than the service takes in one upload ({} bytes)",
                    bytes.len(),
                    limits.max_body_bytes
                ),
            ));
            continue;
        }
        if batch.len() >= limits.max_runs_per_upload || batch_bytes + bytes.len() as u64 + 1 > room {
            send(&mut batch, &mut pushed)?;
            batch_bytes = 0;
        }
        batch_bytes += bytes.len() as u64 + 1;
        batch.push(bytes);
    }
    send(&mut batch, &mut pushed)?;
    Ok(pushed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(url: &str) -> Option<String> {
        Client::new(url, Some("t".into()), None).unwrap().clear_text_risk()
    }

    #[test]
    fn plain_http_to_another_host_is_a_risk_in_any_case_of_the_scheme() {
        for url in ["http://results.example.com/", "HTTP://results.example.com/", "Http://10.0.0.5:8080/x"] {
            assert!(risk(url).is_some(), "{url}");
        }
        for url in [
            "http://127.0.0.1:8080/",
            "HTTP://localhost/",
            "http://[::1]:8080/",
            "http://user@127.0.0.2/",
            "https://results.example.com/",
            "HTTPS://results.example.com/",
        ] {
            assert_eq!(risk(url), None, "{url}");
        }
        let without_token = Client::new("http://results.example.com/", None, None).unwrap();
        assert_eq!(without_token.clear_text_risk(), None);
        assert_eq!(plain_http_host("http://[fe80::1]:80/").as_deref(), Some("fe80::1"));
    }

    #[test]
    fn a_ca_certificate_used_as_the_servers_own_is_explained() {
        let reason = explained("tls: invalid peer certificate: CaUsedAsEndEntity".into());
        assert!(reason.contains("basicConstraints=critical,CA:FALSE"), "{reason}");
        assert_eq!(explained("io: refused".into()), "io: refused");
    }
}
