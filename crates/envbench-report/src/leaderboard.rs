//! A workload's leaderboard: every environment in the store ranked by its score on the workload's headline tests (as
//! an environment's rank is made, [`crate::history::scores`]), like compared with like. Runs with a built-in
//! profile's options rank apart from tuned ones (what each run kept in its provenance), and runs that were disturbed
//! or measured memory-backed storage are listed apart, never ranked among the rest. Filters narrow the field by what
//! the fingerprint says: hypervisor, storage transport, file system, CPU model, core count.

use crate::environment::{EnvironmentIdentity, environment_identity, memory_backed};
use crate::side::Side;
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::StoredRun;
use envbench_core::provenance::{Options, PROVENANCE_ATTACHMENT, RunProvenance};
use envbench_core::workload::Registry;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// An environment's latest runs of a workload, at most this many, make its figure.
pub const RUNS_PER_ENVIRONMENT: usize = 5;

/// What narrows a leaderboard: each value set, by the name of its field in [`FILTER_FIELDS`], must equal the
/// fingerprint's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Filters(BTreeMap<&'static str, String>);

/// The fields filters read from a fingerprint, in the order they are offered.
pub const FILTER_FIELDS: [(&str, &str); 5] = [
    ("hypervisor", "Hypervisor"),
    ("transport", "Storage transport"),
    ("filesystem", "File system"),
    ("cpu", "CPU model"),
    ("cores", "Cores"),
];

/// A fingerprint's value of a filter field ("bare metal" without a hypervisor, "-" where unknown).
pub fn field(fp: &Fingerprint, name: &str) -> String {
    let unknown = || "-".to_string();
    match name {
        "hypervisor" => fp.virtualization.hypervisor.clone().unwrap_or_else(|| "bare metal".into()),
        "transport" => fp
            .storage
            .as_ref()
            .and_then(|s| s.physical_devices().find_map(|d| d.transport.clone()))
            .unwrap_or_else(unknown),
        "filesystem" => fp.storage.as_ref().map(|s| s.filesystem.clone()).unwrap_or_else(unknown),
        "cpu" => {
            fp.cpu.model.as_ref().map(|m| m.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_else(unknown)
        }
        "cores" => fp.cpu.cores.map(|c| c.to_string()).unwrap_or_else(unknown),
        _ => unknown(),
    }
}

impl Filters {
    /// True when the fingerprint has every value set.
    pub fn admits(&self, fp: &Fingerprint) -> bool {
        self.0.iter().all(|(name, wanted)| field(fp, name) == *wanted)
    }

    /// Set a field by its name (an empty value clears it); false for a name that is not a filter.
    pub fn set(&mut self, name: &str, value: String) -> bool {
        let Some((name, _)) = FILTER_FIELDS.iter().find(|(field, _)| *field == name) else { return false };
        if value.is_empty() {
            self.0.remove(name);
        } else {
            self.0.insert(name, value);
        }
        true
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// Which list a run belongs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A built-in profile's options.
    Default,
    /// Options the user changed, or not recorded.
    Tuned,
    /// Disturbed by other load, or storage that is memory.
    Flagged,
}

/// How a run ranks: its options, or its flags.
pub fn class(run: &StoredRun) -> Class {
    if run.summary.disturbed || memory_backed(&run.fingerprint) {
        return Class::Flagged;
    }
    let options = run
        .attachments
        .get(PROVENANCE_ATTACHMENT)
        .and_then(|p| serde_json::from_value::<RunProvenance>(p.clone()).ok())
        .map(|p| p.options);
    match options {
        Some(Options::Default { .. }) => Class::Default,
        _ => Class::Tuned,
    }
}

/// One environment on a leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub environment: EnvironmentIdentity,
    /// 1 is the best; flagged entries have none.
    pub position: Option<usize>,
    /// Its score against the median of the list: above 1 is better; none when it shares no headline test with
    /// another environment of the list (and it is alone: 1).
    pub score: Option<f64>,
    /// Share of the others in its list it beats, in percent.
    pub percentile: Option<f64>,
    pub runs: usize,
    pub tests: usize,
    /// What an hour of it costs, when its runs say (`--tag price_per_hour=1.84`, in one currency across a store).
    pub price_per_hour: Option<f64>,
    /// The filter fields' values, in [`FILTER_FIELDS`] order.
    pub fields: Vec<String>,
}

/// A workload's leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leaderboard {
    pub workload: String,
    pub title: String,
    pub filters: Filters,
    pub default: Vec<Entry>,
    pub tuned: Vec<Entry>,
    pub flagged: Vec<Entry>,
    /// Every value each filter field takes among the workload's runs, for the filter form.
    pub choices: BTreeMap<String, BTreeSet<String>>,
}

/// Every value each filter field takes among these fingerprints.
pub fn choices<'a>(fingerprints: impl Iterator<Item = &'a Fingerprint>) -> BTreeMap<String, BTreeSet<String>> {
    let mut choices: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for fp in fingerprints {
        for (name, _) in FILTER_FIELDS {
            choices.entry(name.to_string()).or_default().insert(field(fp, name));
        }
    }
    choices
}

/// The leaderboard of `workload` over complete runs of it (newest first), narrowed by `filters`; `choices` are the
/// values the filter form offers ([`choices`] of every run of the workload).
pub fn leaderboard(
    workload: &str,
    runs: &[StoredRun],
    filters: &Filters,
    choices: BTreeMap<String, BTreeSet<String>>,
    registry: &Registry,
) -> Leaderboard {
    let mut lists: BTreeMap<Class, BTreeMap<String, (EnvironmentIdentity, Vec<StoredRun>)>> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.summary.workload == workload) {
        if !filters.admits(&run.fingerprint) {
            continue;
        }
        let identity = environment_identity(&run.fingerprint);
        let (_, kept) = lists
            .entry(class(run))
            .or_default()
            .entry(identity.id.clone())
            .or_insert_with(|| (identity.clone(), Vec::new()));
        if kept.len() < RUNS_PER_ENVIRONMENT {
            kept.push(run.clone());
        }
    }
    let mut ranked = |class: Class| -> Vec<Entry> {
        let Some(environments) = lists.remove(&class) else { return Vec::new() };
        let sides: Vec<Side> = environments.values().map(|(id, runs)| Side::new(id.id.clone(), runs.clone())).collect();
        // One environment alone is its list's median.
        let (scores, tests) = match sides.len() {
            1 => {
                let metrics = registry.headline_metrics(workload);
                let tests: BTreeSet<(&str, &str)> = sides[0]
                    .runs
                    .iter()
                    .flat_map(|r| &r.results)
                    .filter(|r| metrics.contains(&r.record.metric.as_str()))
                    .map(|r| (r.record.test_id.as_str(), r.parameters_hash.as_str()))
                    .collect();
                (vec![Some(1.0)], tests.len())
            }
            _ => crate::history::scores(&sides, workload, registry, false),
        };
        let mut entries: Vec<Entry> = environments
            .values()
            .zip(&sides)
            .zip(&scores)
            .map(|(((identity, runs), side), score)| Entry {
                environment: identity.clone(),
                position: None,
                score: *score,
                percentile: None,
                runs: runs.len(),
                tests,
                price_per_hour: crate::verdict::price_per_hour(side),
                fields: FILTER_FIELDS.iter().map(|(name, _)| field(&runs[0].fingerprint, name)).collect(),
            })
            .collect();
        // Best first; those without a score last.
        entries.sort_by(|a, b| b.score.unwrap_or(f64::NEG_INFINITY).total_cmp(&a.score.unwrap_or(f64::NEG_INFINITY)));
        if class != Class::Flagged {
            let all: Vec<f64> = entries.iter().filter_map(|e| e.score).collect();
            for entry in &mut entries {
                let Some(score) = entry.score else { continue };
                entry.position = Some(all.iter().filter(|s| **s > score).count() + 1);
                let worse = all.iter().filter(|s| **s < score).count();
                entry.percentile = (all.len() > 1).then(|| worse as f64 / (all.len() - 1) as f64 * 100.0);
            }
        }
        entries
    };
    Leaderboard {
        workload: workload.to_string(),
        title: registry.title(workload).to_string(),
        filters: filters.clone(),
        default: ranked(Class::Default),
        tuned: ranked(Class::Tuned),
        flagged: ranked(Class::Flagged),
        choices,
    }
}
