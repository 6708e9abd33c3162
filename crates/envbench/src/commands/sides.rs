//! The sides of `compare` and `report`, in the local store or on a results service, read-only:
//! `https://host/label:nvme` resolves `label:nvme` there as it would here (`run:`, `tag:`, a bare label or run id)
//! when the runs it matches are one submitter's, and `https://host/alice/label:nvme` within alice's runs alone,
//! and `https://host/` alone (with leaderboard filters, `https://host/?transport=nvme`) is the service's best other
//! environment of the first local side's class (default or tuned options) on each of that side's workloads. Where
//! any side is on a service, compare also says where each local side would stand on that service's leaderboards,
//! ranked there from the leaderboard's medians: nothing of the local store is sent.

use crate::registry::WORKLOADS;
use crate::usage;
use envbench_report::leaderboard::{Leaderboard, Standing, options_class, standing};
use envbench_report::{ReportError, Side};
use envbench_service::client::{Client, ClientError};
use envbench_service::remote::ServiceStore;
use envbench_store::{ResultStore, RunFilter, StoreLocation};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

/// A service some side was named on.
struct Service {
    /// `https://host[:port]`, as given.
    base: String,
    store: ServiceStore,
    /// Leaderboards fetched under `filters`, by workload (`None`: the service has no complete run of it).
    boards: RefCell<BTreeMap<String, Option<Leaderboard>>>,
    /// The leaderboard filters the user gave with the bare URL (`transport=nvme`), for its best side and standings.
    filters: String,
}

impl Service {
    fn board(&self, workload: &str) -> anyhow::Result<Option<Leaderboard>> {
        if let Some(board) = self.boards.borrow().get(workload) {
            return Ok(board.clone());
        }
        let mut path = format!("/api/v1/leaderboard?workload={}", envbench_core::text::percent_encode(workload));
        if !self.filters.is_empty() {
            path.push('&');
            path.push_str(&self.filters);
        }
        let board = match self.store.client().get::<Leaderboard>(&path) {
            Ok(board) => Some(board),
            // An envbench service says it has no complete run of the workload; any other 404 is not one's.
            Err(ClientError::Refused { status: 404, message, .. }) if message.contains("no complete run") => None,
            Err(ClientError::Refused { status: 404, url, message }) => {
                return Err(ClientError::NotAService {
                    url,
                    reason: format!(
                        "it has no leaderboard API (404: {}); is this the address of an envbench service?",
                        envbench_core::text::truncate(&envbench_core::text::printable(&message), 120)
                    ),
                }
                .into());
            }
            Err(error) => return Err(error.into()),
        };
        self.boards.borrow_mut().insert(workload.to_string(), board.clone());
        Ok(board)
    }
}

/// The sides of a command, and where each came from.
pub struct Resolved {
    pub sides: Vec<Side>,
    /// For each side, the service it is on (an index into `services`), or `None` for the local store.
    origins: Vec<Option<usize>>,
    services: Vec<Service>,
}

/// Where a local side stands on a service's leaderboards.
#[derive(Serialize)]
pub struct SideStanding {
    pub service: String,
    pub filters: String,
    pub side: String,
    pub workloads: Vec<Standing>,
}

/// A side named on a service: its base URL, and what follows it (a selector, or `?filters`, or nothing).
fn on_service(text: &str) -> Option<(String, String)> {
    let lower = text.trim().to_ascii_lowercase();
    let scheme_length = ["https://", "http://"].into_iter().find(|s| lower.starts_with(s))?.len();
    let text = text.trim();
    let rest = &text[scheme_length..];
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let base = text[..scheme_length + end].to_string();
    let after = &rest[end..];
    Some((base, after.strip_prefix('/').unwrap_or(after).to_string()))
}

/// True when a side is named on a service.
pub fn is_service_side(text: &str) -> bool {
    on_service(text).is_some()
}

/// Resolve every side: local ones in the store at `location` (opened only when one is local), the rest on their
/// services. One service URL alone compares the latest local run (its whole suite, when it was one) with it.
pub fn resolve(location: &StoreLocation, texts: &[String], ca_cert: Option<&Path>) -> anyhow::Result<Resolved> {
    if ca_cert.is_some() && !texts.iter().any(|t| is_service_side(t)) {
        return Err(usage("--ca-cert is for a side on a results service (https://host/...); no side names one"));
    }
    let ca = ca_cert
        .map(|path| crate::files::read_small_file(path, "--ca-cert", crate::files::PEM_MAX_BYTES))
        .transpose()?;
    let mut texts = texts.to_vec();
    if texts.len() == 1 && is_service_side(&texts[0]) {
        texts.insert(0, latest_local(location)?);
    }
    let mut local: Option<Box<dyn ResultStore>> = None;
    let mut services: Vec<Service> = Vec::new();
    let mut sides: Vec<Option<Side>> = Vec::new();
    let mut origins = Vec::new();
    let mut best: Vec<(usize, String)> = Vec::new();
    for text in &texts {
        let Some((base, after)) = on_service(text) else {
            if local.is_none() {
                local = Some(super::store(location, false)?);
            }
            let store = local.as_deref().expect("opened");
            sides.push(Some(envbench_report::resolve_side(store, text).map_err(super::compare::classify)?));
            origins.push(None);
            continue;
        };
        let (selector, filters) = match after.strip_prefix('?') {
            Some(query) => (String::new(), query.to_string()),
            None => (after.clone(), String::new()),
        };
        let filters = filters.split('&').filter(|p| !p.is_empty() && !p.starts_with("workload=")).collect::<Vec<_>>();
        let filters = filters.join("&");
        let index = match services.iter().position(|s| s.base == base && s.filters == filters) {
            Some(index) => index,
            None => {
                let client =
                    Client::new(&base, None, ca.as_deref().map(str::as_bytes)).map_err(|e| usage(e.to_string()))?;
                services.push(Service {
                    base: base.clone(),
                    store: ServiceStore::new(client),
                    boards: RefCell::new(BTreeMap::new()),
                    filters,
                });
                services.len() - 1
            }
        };
        origins.push(Some(index));
        if selector.is_empty() {
            best.push((sides.len(), text.clone()));
            sides.push(None);
        } else {
            sides.push(Some(service_side(&services[index], &selector)?));
        }
    }
    for (at, text) in best {
        let Some(reference) = sides.iter().zip(&origins).find_map(|(s, o)| s.as_ref().filter(|_| o.is_none())) else {
            return Err(usage(format!(
                "'{text}' names the service's best environment for the workloads of a side of your own: give one too \
                 (a run id, a label or tags in your store)"
            )));
        };
        let service = &services[origins[at].expect("a service side")];
        sides[at] = Some(best_side(service, reference)?);
    }
    let sides = envbench_report::distinct_sides(sides.into_iter().map(|s| s.expect("resolved")).collect())
        .map_err(super::compare::classify)?;
    Ok(Resolved { sides, origins, services })
}

/// The submitter a side on a service names (`alice/label:nvme`), and the selector after it; a first part that holds
/// `:` or `=` (`label:a/b`) is the selector's own.
fn split_submitter(selector: &str) -> (Option<&str>, &str) {
    match selector.split_once('/') {
        Some((name, rest)) if envbench_service::is_submitter_name(name) => (Some(name), rest),
        _ => (None, selector),
    }
}

/// A side named on a service: within one submitter's runs when it names one (`alice/label:nvme`); otherwise the runs
/// it matches must all be one submitter's, or it is refused with the submitters to choose from (a label or a suite
/// on a service is its submitter's: another submitter may upload runs with the same one).
fn service_side(service: &Service, selector: &str) -> anyhow::Result<Side> {
    let base = &service.base;
    let (submitter, selector) = split_submitter(selector);
    let (mut side, within) = match submitter {
        Some(name) if selector.is_empty() => {
            return Err(usage(format!(
                "{base}/{name}/: name a side of {name}'s after it, as {base}/{name}/label:NAME (a label, tags, or a \
                 run id)"
            )));
        }
        Some(name) => {
            let side = envbench_report::resolve_side(&service.store.of_submitter(name), selector)
                .map_err(|e| on_the_service(e, base, Some(name)))?;
            (side, format!("{base}/{name}"))
        }
        None => {
            let side =
                envbench_report::resolve_side(&service.store, selector).map_err(|e| on_the_service(e, base, None))?;
            (side, base.clone())
        }
    };
    let submitters: std::collections::BTreeSet<Option<&str>> =
        side.runs.iter().map(|r| r.summary.submitter.as_deref()).collect();
    if submitters.len() > 1 {
        let names: Vec<String> =
            submitters.iter().map(|s| s.map_or("(the service's own runs)".to_string(), |s| format!("'{s}'"))).collect();
        let example = submitters.iter().flatten().next().copied().unwrap_or("NAME");
        return Err(usage(format!(
            "{within}: '{selector}' matches the runs of {} submitters ({}); a side is one submitter's runs: name \
             one, as {base}/{example}/{selector}",
            submitters.len(),
            names.join(", ")
        )));
    }
    side.name = match submitters.first().copied().flatten() {
        Some(name) => format!("{} by {name} on {}", side.name, host_of(base)),
        None => format!("{} on {}", side.name, host_of(base)),
    };
    Ok(side)
}

/// A side on a service (within one submitter's runs, when it names one) refers to the service in its error.
fn on_the_service(error: ReportError, base: &str, submitter: Option<&str>) -> anyhow::Error {
    let (within, list) = match submitter {
        Some(name) => (format!("{base}/{name}"), format!("{base}/?submitter={name}")),
        None => (base.to_string(), format!("{base}/")),
    };
    match error {
        ReportError::BadSide(_) | ReportError::EmptySide(..) | ReportError::AmbiguousSide(_) => {
            usage(format!("{within}: {error}"))
        }
        ReportError::Store(envbench_store::StoreError::NoSuchRun(id)) => {
            usage(format!("{within}: no run matches '{id}' there; the list of runs is at {list}"))
        }
        other => anyhow::Error::from(other).context(format!("reading {base}")),
    }
}

/// `host[:port]` of a base URL.
fn host_of(base: &str) -> &str {
    base.split_once("://").map_or(base, |(_, host)| host)
}

/// The latest local run as a side: its whole suite when it was part of one.
fn latest_local(location: &StoreLocation) -> anyhow::Result<String> {
    let store = super::store(location, false)?;
    let latest = store.list_runs(&RunFilter { limit: Some(1), ..Default::default() })?;
    let Some(run) = latest.first() else {
        return Err(usage(format!(
            "{}: no runs to compare with the service yet; run a workload first (envbench run)",
            location.display()
        )));
    };
    Ok(match run.tags.get(envbench_report::SUITE_TAG) {
        Some(suite) => format!("tag:{}={suite}", envbench_report::SUITE_TAG),
        None => format!("run:{}", run.uuid),
    })
}

/// The service's best environment other than `reference`'s, in the list its options put it on (default or tuned), on
/// each workload `reference` ran: the latest runs that make that environment's figure there.
fn best_side(service: &Service, reference: &Side) -> anyhow::Result<Side> {
    // A flagged side is still compared with the best of its options' list: the standing says it is flagged.
    let class = options_class(&reference.runs);
    let own = reference.runs.first().map(|r| envbench_report::environment_identity(&r.fingerprint).id);
    let workloads = envbench_report::workloads_of(&reference.runs);
    let mut runs = Vec::new();
    let mut flagged = 0;
    for workload in &workloads {
        let Some(board) = service.board(workload)? else { continue };
        flagged += board.flagged.iter().filter(|e| Some(&e.environment.id) != own.as_ref()).count();
        let Some(leader) = board.list(class).iter().find(|e| Some(&e.environment.id) != own.as_ref()) else {
            continue;
        };
        for uuid in &leader.runs {
            runs.push(service.store.load_run(uuid)?);
        }
    }
    if runs.is_empty() {
        return Err(usage(format!(
            "{}{}: no other environment with {} ran {} there{}{}",
            service.base,
            if service.filters.is_empty() { String::new() } else { format!("/?{}", service.filters) },
            class.words(),
            workloads.join(", "),
            if service.filters.is_empty() { "" } else { " with these filters" },
            match flagged {
                0 => String::new(),
                n => format!(
                    " (besides {n} flagged, disturbed or on memory-backed storage, which are never the best); name one \
                     with https://host/label:NAME to compare with it anyway"
                ),
            }
        )));
    }
    // Oldest first, as a side's runs are.
    runs.sort_by(|a, b| a.summary.started_at.cmp(&b.summary.started_at));
    let filters = if service.filters.is_empty() { String::new() } else { format!(" ({})", service.filters) };
    let by = runs.first().and_then(|r| r.summary.submitter.as_ref()).map_or(String::new(), |s| format!(" by {s}"));
    Ok(Side::new(format!("best on {}{by}{filters}", host_of(&service.base)), runs))
}

impl Resolved {
    /// Where each local side stands on each service's leaderboards of its workloads.
    pub fn standings(&self) -> anyhow::Result<Vec<SideStanding>> {
        let mut all = Vec::new();
        for service in &self.services {
            for (side, _) in self.sides.iter().zip(&self.origins).filter(|(_, o)| o.is_none()) {
                let mut standings = Vec::new();
                for workload in envbench_report::workloads_of(&side.runs) {
                    let Some(board) = service.board(workload)? else { continue };
                    let runs = side.runs.iter().filter(|r| r.summary.workload == workload).cloned().collect();
                    standings.push(standing(&board, &Side::new(side.name.clone(), runs), &WORKLOADS));
                }
                all.push(SideStanding {
                    service: service.base.clone(),
                    filters: service.filters.clone(),
                    side: side.name.clone(),
                    workloads: standings,
                });
            }
        }
        Ok(all)
    }
}

/// Standings for people, one block per side and service.
pub fn standings_text(standings: &[SideStanding], markdown: bool) -> String {
    let mut text = String::new();
    for block in standings {
        let filters = if block.filters.is_empty() { String::new() } else { format!(", filtered by {}", block.filters) };
        if markdown {
            text.push_str(&format!("\n### {} on {}{filters}\n\n", block.side, block.service));
        } else {
            text.push_str(&format!("\nStanding of {} on {}{filters}:\n", block.side, block.service));
        }
        if block.workloads.is_empty() {
            text.push_str(if markdown { "- " } else { "  " });
            text.push_str("no run of these workloads there yet\n");
        }
        for standing in &block.workloads {
            text.push_str(if markdown { "- " } else { "  " });
            text.push_str(&standing.line());
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_sides_split_into_base_and_selector() {
        let split = |t: &str| on_service(t).map(|(b, s)| format!("{b} | {s}"));
        assert_eq!(
            split("https://results.example.com/label:nvme").unwrap(),
            "https://results.example.com | label:nvme"
        );
        assert_eq!(split("http://127.0.0.1:8080/").unwrap(), "http://127.0.0.1:8080 | ");
        assert_eq!(split("HTTPS://h:1").unwrap(), "HTTPS://h:1 | ");
        assert_eq!(split("https://h/?transport=nvme").unwrap(), "https://h | ?transport=nvme");
        assert_eq!(split("https://h?transport=nvme").unwrap(), "https://h | ?transport=nvme");
        assert_eq!(split("https://h/tag:ht=off,disk=nvme").unwrap(), "https://h | tag:ht=off,disk=nvme");
        assert_eq!(split("label:nvme"), None);
        assert_eq!(split("ht=off"), None);
    }
}
