//! The sides of `compare` and `report`, in the local store or on a results service, read-only:
//! `https://host/label:nvme` resolves `label:nvme` there as it would here (`run:`, `tag:`, a bare label or run id)
//! when the runs it matches are one submitter's, and `https://host/alice/label:nvme` within alice's runs alone,
//! and `https://host/` alone (with leaderboard filters, `https://host/?transport=nvme`) is the service's best other
//! environment of the first local side's class (default or tuned options) on each of that side's workloads (made in
//! [`super::service`]; [`super::standings`] says where each local side would stand on that service's leaderboards).

use super::service::{Service, host_of};
use crate::usage;
use envbench_service::client::Client;
use envbench_service::remote::ServiceStore;
use envbench_store::{ResultStore, RunFilter, StoreLocation};
use envbench_verdict::{Side, VerdictError};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

/// The sides of a command, and where each came from.
pub struct Resolved {
    pub sides: Vec<Side>,
    /// For each side, the service it is on (an index into `services`), or `None` for the local store.
    pub(super) origins: Vec<Option<usize>>,
    pub(super) services: Vec<Service>,
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
            sides.push(Some(envbench_verdict::resolve_side(store, text).map_err(super::classify)?));
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
        sides[at] = Some(super::service::best_side(service, reference)?);
    }
    let sides = envbench_verdict::distinct_sides(sides.into_iter().map(|s| s.expect("resolved")).collect())
        .map_err(super::classify)?;
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
            let side = envbench_verdict::resolve_side(&service.store.of_submitter(name), selector)
                .map_err(|e| on_the_service(e, base, Some(name)))?;
            (side, format!("{base}/{name}"))
        }
        None => {
            let side =
                envbench_verdict::resolve_side(&service.store, selector).map_err(|e| on_the_service(e, base, None))?;
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
fn on_the_service(error: VerdictError, base: &str, submitter: Option<&str>) -> anyhow::Error {
    let (within, list) = match submitter {
        Some(name) => (format!("{base}/{name}"), format!("{base}/?submitter={name}")),
        None => (base.to_string(), format!("{base}/")),
    };
    match error {
        VerdictError::BadSide(_) | VerdictError::EmptySide(..) | VerdictError::AmbiguousSide(_) => {
            usage(format!("{within}: {error}"))
        }
        VerdictError::Store(envbench_store::StoreError::NoSuchRun(id)) => {
            usage(format!("{within}: no run matches '{id}' there; the list of runs is at {list}"))
        }
        other => anyhow::Error::from(other).context(format!("reading {base}")),
    }
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
    Ok(match run.tags.get(envbench_verdict::SUITE_TAG) {
        Some(suite) => format!("tag:{}={suite}", envbench_verdict::SUITE_TAG),
        None => format!("run:{}", run.uuid),
    })
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
