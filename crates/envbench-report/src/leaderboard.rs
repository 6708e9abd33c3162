//! A workload's leaderboard: every environment in the store ranked by its score on the workload's headline tests (as
//! an environment's rank is made, [`crate::history::scores`]), like compared with like. Runs with a built-in
//! profile's options rank apart from tuned ones (what each run kept in its provenance), and runs that were disturbed
//! or measured memory-backed storage are listed apart, never ranked among the rest. Filters narrow the field by what
//! the fingerprint says: hypervisor, storage transport, file system, CPU model, core count.

use crate::history::{HeadlineTest, headline_medians, scores_of};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::StoredRun;
use envbench_core::provenance::{Options, PROVENANCE_ATTACHMENT, RunProvenance};
use envbench_core::workload::Registry;
use envbench_verdict::Side;
use envbench_verdict::{EnvironmentIdentity, environment_identity, memory_backed};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// An environment's latest runs of a workload, at most this many, make its figure.
pub const RUNS_PER_ENVIRONMENT: usize = 5;

/// What narrows a leaderboard: each value set, by the name of its field in [`FILTER_FIELDS`], must equal the
/// fingerprint's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Filters(BTreeMap<String, String>);

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
        if !FILTER_FIELDS.iter().any(|(field, _)| *field == name) {
            return false;
        }
        if value.is_empty() {
            self.0.remove(name);
        } else {
            self.0.insert(name.to_string(), value);
        }
        true
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The filters set, as `name=value` pairs (for a URL's query, or for people).
    pub fn pairs(&self) -> Vec<(&str, &str)> {
        self.0.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect()
    }
}

/// Which list a run belongs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A built-in profile's options.
    Default,
    /// Options the user changed, or not recorded.
    Tuned,
    /// Disturbed by other load, or storage that is memory.
    Flagged,
}

impl Class {
    /// The list's name for people.
    pub fn words(self) -> &'static str {
        match self {
            Class::Default => "default options",
            Class::Tuned => "tuned options",
            Class::Flagged => "flagged (disturbed, or memory-backed storage)",
        }
    }
}

/// The class of a side's runs together: flagged when any is, default when all are, tuned otherwise.
pub fn side_class(runs: &[StoredRun]) -> Class {
    runs.iter().map(class).max().unwrap_or(Class::Tuned)
}

/// The list a side's options alone would put it on, flags or not: default when every run kept a built-in profile's
/// options, tuned otherwise.
pub fn options_class(runs: &[StoredRun]) -> Class {
    runs.iter().map(run_options_class).max().unwrap_or(Class::Tuned)
}

/// How a run ranks: its options, or its flags.
pub fn class(run: &StoredRun) -> Class {
    if run.summary.disturbed || memory_backed(&run.fingerprint) {
        return Class::Flagged;
    }
    run_options_class(run)
}

/// Default or tuned, by what the run kept of its options.
fn run_options_class(run: &StoredRun) -> Class {
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

/// One environment on a leaderboard, as one submitter's runs show it: on a results service, runs another submitter
/// sent with the same fingerprint are an entry of their own, and never move this one's figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub environment: EnvironmentIdentity,
    /// Who uploaded its runs (none: runs made or imported where they are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitter: Option<String>,
    /// 1 is the best; flagged entries have none.
    pub position: Option<usize>,
    /// Its score against the median of the list: above 1 is better; none when it shares no headline test with
    /// another environment of the list (and it is alone: 1).
    pub score: Option<f64>,
    /// Share of the others in its list it beats, in percent.
    pub percentile: Option<f64>,
    /// The runs that make its figure, newest first.
    pub runs: Vec<String>,
    pub tests: usize,
    /// Its median of each headline test, by [`HeadlineTest::key`]: what its score is made of, and what a run
    /// elsewhere is ranked against ([`standing`]).
    pub medians: BTreeMap<String, f64>,
    /// What an hour of it costs, when its runs say (`--tag price_per_hour=1.84`, in one currency across a store).
    pub price_per_hour: Option<f64>,
    /// With a price: what one [`Leaderboard::cost_unit`] of work costs on it.
    #[serde(default)]
    pub unit_cost: Option<f64>,
    /// The filter fields' values, in [`FILTER_FIELDS`] order.
    pub fields: Vec<String>,
    /// The labels its runs carry, most used first: what people call it (the identity's name is the fingerprint).
    #[serde(default)]
    pub labels: Vec<String>,
    /// The list its options put it on (default or tuned), flags or not: for a flagged entry, where it would rank.
    #[serde(default)]
    pub options: Option<Class>,
    /// Its flagged runs (disturbed, or memory-backed storage) left out of its figure: an environment with runs that
    /// rank is listed once, where they rank, and never also among the flagged.
    #[serde(default)]
    pub flagged_runs: usize,
}

/// A workload's leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Leaderboard {
    pub workload: String,
    pub title: String,
    pub filters: Filters,
    /// The headline tests of the entries' medians, by [`HeadlineTest::key`].
    pub tests: BTreeMap<String, HeadlineTest>,
    /// What the entries' unit cost is per (`1,000 NOPM`), when the workload quotes one its runs measured.
    #[serde(default)]
    pub cost_unit: Option<String>,
    pub default: Vec<Entry>,
    pub tuned: Vec<Entry>,
    pub flagged: Vec<Entry>,
    /// Every value each filter field takes among the workload's runs, for the filter form.
    pub choices: BTreeMap<String, BTreeSet<String>>,
}

/// What makes one entry of a leaderboard: an environment (its identity's id) and who uploaded its runs.
pub type EntryKey = (String, Option<String>);

/// The labels of these runs, most used first (ties in the order they first appear).
fn labels_of(runs: &[StoredRun]) -> Vec<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for label in runs.iter().filter_map(|r| r.summary.label.as_ref()) {
        match counts.iter_mut().find(|(l, _)| l == label) {
            Some((_, count)) => *count += 1,
            None => counts.push((label.clone(), 1)),
        }
    }
    counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    counts.into_iter().map(|(label, _)| label).collect()
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
    let mut lists: BTreeMap<Class, BTreeMap<EntryKey, (EnvironmentIdentity, Vec<StoredRun>)>> = BTreeMap::new();
    let mut flagged_runs: BTreeMap<EntryKey, usize> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.summary.workload == workload) {
        if !filters.admits(&run.fingerprint) {
            continue;
        }
        let identity = environment_identity(&run.fingerprint);
        let key = (identity.id.clone(), run.summary.submitter.clone());
        let class = class(run);
        if class == Class::Flagged {
            *flagged_runs.entry(key.clone()).or_default() += 1;
        }
        let (_, kept) = lists.entry(class).or_default().entry(key).or_insert_with(|| (identity.clone(), Vec::new()));
        if kept.len() < RUNS_PER_ENVIRONMENT {
            kept.push(run.clone());
        }
    }
    // An environment is listed once: where runs of it rank, with its flagged ones counted beside; among the flagged
    // only when every run of it is.
    let ranking: BTreeSet<EntryKey> =
        [Class::Default, Class::Tuned].iter().filter_map(|c| lists.get(c)).flat_map(|l| l.keys().cloned()).collect();
    if let Some(flagged) = lists.get_mut(&Class::Flagged) {
        flagged.retain(|key, _| !ranking.contains(key));
    }
    let mut tests: BTreeMap<String, HeadlineTest> = BTreeMap::new();
    let unit =
        registry.read_back(workload).cost_units().iter().find(|unit| {
            runs.iter().flat_map(|r| &r.results).any(|r| unit.measures(&r.record.test_id, &r.record.metric))
        });
    let unit_cost = |runs: &[StoredRun], price: Option<f64>| -> Option<f64> {
        let unit = unit?;
        let medians: Vec<f64> = envbench_verdict::unit_medians(runs, unit).into_values().collect();
        unit.cost(price?, envbench_core::stats::geometric_mean(&medians)?)
    };
    let mut ranked = |class: Class| -> Vec<Entry> {
        let Some(environments) = lists.remove(&class) else { return Vec::new() };
        let sides: Vec<Side> = environments
            .iter()
            .map(|((id, submitter), (_, runs))| {
                Side::new(submitter.as_ref().map_or(id.clone(), |s| format!("{id} by {s}")), runs.clone())
            })
            .collect();
        let rows = headline_medians(&sides, workload, registry);
        let mut medians: Vec<BTreeMap<String, f64>> = vec![BTreeMap::new(); sides.len()];
        for (test, cells) in &rows {
            for (side, median) in cells.iter().enumerate() {
                if let Some(median) = median {
                    medians[side].insert(test.key(), *median);
                }
            }
            tests.entry(test.key()).or_insert_with(|| test.clone());
        }
        // One environment alone is its list's median.
        let (scores, tests) = match sides.len() {
            1 => (vec![Some(1.0)], rows.len()),
            _ => {
                let directed: Vec<_> = rows.into_iter().map(|(test, cells)| (test.direction, cells)).collect();
                scores_of(&directed, sides.len(), false)
            }
        };
        let mut entries: Vec<Entry> = environments
            .iter()
            .zip(&sides)
            .zip(&scores)
            .zip(medians)
            .map(|((((key, (identity, runs)), side), score), medians)| {
                let price_per_hour = envbench_verdict::price_per_hour(side);
                Entry {
                    environment: identity.clone(),
                    submitter: runs[0].summary.submitter.clone(),
                    position: None,
                    score: *score,
                    percentile: None,
                    runs: runs.iter().map(|r| r.summary.uuid.clone()).collect(),
                    tests,
                    medians,
                    price_per_hour,
                    unit_cost: unit_cost(runs, price_per_hour),
                    fields: FILTER_FIELDS.iter().map(|(name, _)| field(&runs[0].fingerprint, name)).collect(),
                    labels: labels_of(runs),
                    options: Some(options_class(runs)),
                    flagged_runs: if class == Class::Flagged { 0 } else { flagged_runs.get(key).copied().unwrap_or(0) },
                }
            })
            .collect();
        // Best first; those without a score last.
        entries.sort_by(|a, b| b.score.unwrap_or(f64::NEG_INFINITY).total_cmp(&a.score.unwrap_or(f64::NEG_INFINITY)));
        if class != Class::Flagged {
            let all: Vec<f64> = entries.iter().filter_map(|e| e.score).collect();
            for entry in &mut entries {
                let Some(score) = entry.score else { continue };
                (entry.position, entry.percentile) = place(score, &all);
            }
        }
        entries
    };
    let (default, tuned, flagged) = (ranked(Class::Default), ranked(Class::Tuned), ranked(Class::Flagged));
    Leaderboard {
        workload: workload.to_string(),
        title: registry.title(workload).to_string(),
        filters: filters.clone(),
        tests,
        cost_unit: unit.map(|u| u.words.to_string()),
        default,
        tuned,
        flagged,
        choices,
    }
}

impl Leaderboard {
    /// The list of a class.
    pub fn list(&self, class: Class) -> &[Entry] {
        match class {
            Class::Default => &self.default,
            Class::Tuned => &self.tuned,
            Class::Flagged => &self.flagged,
        }
    }
}

/// Where a side of runs from elsewhere (a local store) would stand on a leaderboard: ranked in the list of its class
/// against every other environment of it, its score made as the leaderboard's are (its median on every headline test
/// it shares with the list, against the median of all). Its own environment's entry, when the leaderboard has one, is
/// left out: the side stands in for it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    pub workload: String,
    pub title: String,
    pub class: Class,
    pub environment: EnvironmentIdentity,
    /// 1 is the best; none when flagged, or when it shares no headline test with the list.
    pub position: Option<usize>,
    /// How many environments it is ranked among, itself included.
    pub of: usize,
    pub score: Option<f64>,
    /// Share of the others it beats, in percent.
    pub percentile: Option<f64>,
    pub tests: usize,
    /// The list's best environment.
    pub leader: Option<EnvironmentIdentity>,
}

impl Standing {
    /// One line for people: `Storage suite: 3rd of 12 environments with default options (beats 82% of the 11 others;
    /// 1.21x faster than the median over 9 headline tests); best: ...`.
    pub fn line(&self) -> String {
        let leader = self.leader.as_ref().map(|l| format!("; best: {}", l.name)).unwrap_or_default();
        match (self.class, self.position, self.score) {
            (Class::Flagged, ..) => format!(
                "{}: not ranked: its runs are flagged (disturbed, or memory-backed storage), and flagged runs are \
                 listed apart{leader}",
                self.title
            ),
            (_, Some(position), Some(score)) => format!(
                "{}: {} of {} environments with {} (beats {:.0}% of {}; {} over {} headline test{}){leader}",
                self.title,
                envbench_verdict::ordinal(position),
                self.of,
                self.class.words(),
                self.percentile.unwrap_or(100.0),
                if self.of == 2 { "the other".to_string() } else { format!("the {} others", self.of - 1) },
                score_words(score),
                self.tests,
                if self.tests == 1 { "" } else { "s" }
            ),
            _ => format!(
                "{}: not ranked: no other environment with {} shares a headline test with it{leader}",
                self.title,
                self.class.words()
            ),
        }
    }
}

/// A score in the verdict's words: `1.21x faster than the median`, `1.10x slower than the median`, `the median`.
pub fn score_words(score: f64) -> String {
    match envbench_verdict::factor_words(score, envbench_core::model::MetricKind::Speed) {
        words if words == "same" => "the median".to_string(),
        words => format!("{words} than the median"),
    }
}

/// Where `score` places among `all` the scores of a list (itself included): its position (1 is the best; ties share
/// one) and the share of the others it beats, in percent (none when it is alone).
fn place(score: f64, all: &[f64]) -> (Option<usize>, Option<f64>) {
    let position = all.iter().filter(|s| **s > score).count() + 1;
    let worse = all.iter().filter(|s| **s < score).count();
    (Some(position), (all.len() > 1).then(|| worse as f64 / (all.len() - 1) as f64 * 100.0))
}

/// Where `side` stands on `board` ([`Standing`]).
pub fn standing(board: &Leaderboard, side: &Side, registry: &Registry) -> Standing {
    let class = side_class(&side.runs);
    let environment = side
        .runs
        .first()
        .map(|r| environment_identity(&r.fingerprint))
        .unwrap_or_else(|| EnvironmentIdentity { id: "-".into(), name: side.name.clone() });
    let others: Vec<&Entry> = board.list(class).iter().filter(|e| e.environment.id != environment.id).collect();
    // Flagged entries are never anyone's best: a flagged side's best is that of the list its options put it on.
    let leader_list = if class == Class::Flagged { options_class(&side.runs) } else { class };
    let mut standing = Standing {
        workload: board.workload.clone(),
        title: board.title.clone(),
        class,
        position: None,
        of: others.len() + 1,
        score: None,
        percentile: None,
        tests: 0,
        leader: board.list(leader_list).first().map(|e| e.environment.clone()),
        environment,
    };
    if class == Class::Flagged {
        return standing;
    }
    let own: BTreeMap<String, f64> = headline_medians(std::slice::from_ref(side), &board.workload, registry)
        .into_iter()
        .filter_map(|(test, cells)| cells[0].map(|median| (test.key(), median)))
        .collect();
    let rows: Vec<_> = board
        .tests
        .iter()
        .map(|(key, test)| {
            let cells = std::iter::once(own.get(key).copied())
                .chain(others.iter().map(|e| e.medians.get(key).copied()))
                .collect::<Vec<_>>();
            (test.direction, cells)
        })
        .collect();
    let (scores, tests) = scores_of(&rows, others.len() + 1, true);
    standing.tests = tests;
    if let Some(score) = scores[0] {
        let all: Vec<f64> = scores.iter().flatten().copied().collect();
        standing.of = all.len();
        standing.score = Some(score);
        (standing.position, standing.percentile) = place(score, &all);
    }
    standing
}

/// A run's percentile on each of its headline tests among the environments of its class: for the run page, as
/// OpenBenchmarking.org shows a result among all others of the same test and arguments.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestPercentile {
    pub test: HeadlineTest,
    /// The run's own median of the test.
    pub value: f64,
    /// The other environments' medians of it (its own environment left out).
    pub environments: usize,
    pub median_of_environments: Option<f64>,
    /// Share of those environments it beats, in percent; none when there is no other.
    pub percentile: Option<f64>,
}

/// [`TestPercentile`] of each headline test of `run` against `board` (the leaderboard of its workload).
pub fn test_percentiles(board: &Leaderboard, run: &StoredRun, registry: &Registry) -> Vec<TestPercentile> {
    let class = class(run);
    let own_id = environment_identity(&run.fingerprint).id;
    let others: Vec<&Entry> = board.list(class).iter().filter(|e| e.environment.id != own_id).collect();
    let side = Side::new("run", vec![run.clone()]);
    headline_medians(std::slice::from_ref(&side), &board.workload, registry)
        .into_iter()
        .filter_map(|(test, cells)| {
            let value = cells[0]?;
            let key = test.key();
            let mut theirs: Vec<f64> = others.iter().filter_map(|e| e.medians.get(&key).copied()).collect();
            theirs.sort_by(f64::total_cmp);
            let beaten = theirs
                .iter()
                .filter(|other| {
                    envbench_verdict::directed_ratio(**other, value, test.direction).is_some_and(|f| f > 1.0)
                })
                .count();
            Some(TestPercentile {
                environments: theirs.len(),
                median_of_environments: envbench_core::stats::Summary::of(&theirs).map(|s| s.median),
                percentile: (!theirs.is_empty()).then(|| beaten as f64 / theirs.len() as f64 * 100.0),
                test,
                value,
            })
        })
        .collect()
}
