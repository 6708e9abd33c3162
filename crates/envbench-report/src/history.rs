//! Environments and suites as people think of them: the runs of one `envbench run` grouped as a suite, the runs of one
//! machine grouped by environment identity, an environment's history per workload (so a regression after a change
//! shows), and where an environment ranks among every environment in the store that ran the same tests.

use crate::axis::Scale;
use crate::svg::{LineChart, LineSeries};
use envbench_core::model::{RunStatus, RunSummary, StoredRun};
use envbench_core::stats::geometric_mean;
use envbench_core::workload::{Registry, Resource};
use envbench_store::{FingerprintTally, RunEnvironments};
use envbench_verdict::compare_results;
use envbench_verdict::headline_rows;
use envbench_verdict::natural_cmp;
use envbench_verdict::{ComparisonRow, directed_ratio};
use envbench_verdict::{EnvironmentIdentity, environment_identity, memory_backed};
use envbench_verdict::{SUITE_NAME_TAG, SUITE_TAG, Side, run_name, suite_title, workloads_of};
use serde::Serialize;
use std::collections::BTreeMap;

/// The tags a user gave, as `key=value` joined by `separator`: the ones `envbench run` adds to find a suite's runs
/// again (`suite`, `suite.plan`, `suite.item`, `suite.name`: ids and hashes) are left out of lists people read.
pub fn user_tags(tags: &BTreeMap<String, String>, separator: &str) -> String {
    tags.iter()
        .filter(|(key, _)| key.as_str() != SUITE_TAG && !key.starts_with("suite."))
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(separator)
}

/// A history chart draws at most this many tests; the rest are in its table.
const HISTORY_LINES: usize = 8;

/// The environments of a store's runs, newest activity first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnvironmentSummary {
    pub identity: EnvironmentIdentity,
    pub runs: usize,
    pub labels: Vec<String>,
    pub hosts: Vec<String>,
    pub workloads: Vec<String>,
    pub first_run_at: String,
    pub last_run_at: String,
}

/// The identity of a run's environment, when the store knows its fingerprint.
pub fn run_identity(run: &RunSummary, environments: &RunEnvironments) -> Option<EnvironmentIdentity> {
    environments.of(&run.uuid).map(environment_identity)
}

/// The identities of a store's environments, each worked out once from its fingerprint: a store of many runs has
/// few environments.
pub struct Identities<'a> {
    environments: &'a RunEnvironments,
    by_hash: std::collections::HashMap<&'a str, EnvironmentIdentity>,
}

impl<'a> Identities<'a> {
    pub fn new(environments: &'a RunEnvironments) -> Identities<'a> {
        let by_hash =
            environments.fingerprints.iter().map(|(hash, fp)| (hash.as_str(), environment_identity(fp))).collect();
        Identities { environments, by_hash }
    }

    /// What [`run_identity`] says of `run`.
    pub fn of(&self, run: &RunSummary) -> Option<&EnvironmentIdentity> {
        self.by_hash.get(self.environments.runs.get(&run.uuid)?.as_str())
    }
}

/// Group the store's runs by environment identity, from what each fingerprint's runs add up to
/// ([`ReadEnvironments::fingerprint_tallies`](envbench_store::ReadEnvironments::fingerprint_tallies), the latest
/// fingerprint first): fingerprints that differ only where an identity does not look are one environment.
pub fn environment_summaries(environments: &RunEnvironments, tallies: &[FingerprintTally]) -> Vec<EnvironmentSummary> {
    let identities = Identities::new(environments);
    let mut groups: BTreeMap<String, EnvironmentSummary> = BTreeMap::new();
    for tally in tallies {
        let Some(identity) = identities.by_hash.get(tally.hash.as_str()) else { continue };
        let entry = groups.entry(identity.id.clone()).or_insert_with(|| EnvironmentSummary {
            identity: identity.clone(),
            runs: 0,
            labels: Vec::new(),
            hosts: Vec::new(),
            workloads: Vec::new(),
            first_run_at: tally.first_run_at.clone(),
            last_run_at: tally.last_run_at.clone(),
        });
        entry.runs += tally.runs;
        for (list, values) in [
            (&mut entry.labels, &tally.labels),
            (&mut entry.hosts, &tally.host.iter().cloned().collect()),
            (&mut entry.workloads, &tally.workloads),
        ] {
            for value in values {
                if !list.contains(value) {
                    list.push(value.clone());
                }
            }
        }
        if tally.first_run_at < entry.first_run_at {
            entry.first_run_at = tally.first_run_at.clone();
        }
        if tally.last_run_at > entry.last_run_at {
            entry.last_run_at = tally.last_run_at.clone();
        }
    }
    let mut list: Vec<EnvironmentSummary> = groups.into_values().collect();
    list.sort_by(|a, b| b.last_run_at.cmp(&a.last_run_at));
    list
}

/// The runs of one `envbench run`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SuiteSummary {
    /// The suite id (the `suite` tag).
    pub id: String,
    /// The suite's name (`quick`, `standard`, a file).
    pub name: String,
    pub started_at: String,
    pub runs: usize,
    pub complete: usize,
    pub labels: Vec<String>,
    pub environments: Vec<EnvironmentIdentity>,
    /// The id of the suite of the same name run before this one, to compare with in one click.
    pub previous: Option<String>,
}

impl SuiteSummary {
    /// How people name the suite: its label (or labels) and when it ran, e.g. `vm-local-disk (quick, 2026-11-26
    /// 14:05)`, never its id.
    pub fn title(&self) -> String {
        suite_title(&self.labels, &self.name, &self.started_at)
    }
}

/// Group runs into suites by their suite tag, newest first.
pub fn suite_summaries(runs: &[RunSummary], environments: &RunEnvironments) -> Vec<SuiteSummary> {
    let identities = Identities::new(environments);
    let mut suites: Vec<SuiteSummary> = Vec::new();
    // Each suite's place, so a store of many suites is read in one pass.
    let mut places: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for run in runs {
        let Some(id) = run.tags.get(SUITE_TAG) else { continue };
        let at = match places.get(id.as_str()) {
            Some(&at) => at,
            None => {
                places.insert(id, suites.len());
                suites.push(SuiteSummary {
                    id: id.clone(),
                    name: run.tags.get(SUITE_NAME_TAG).cloned().unwrap_or_default(),
                    started_at: run.started_at.clone(),
                    runs: 0,
                    complete: 0,
                    labels: Vec::new(),
                    environments: Vec::new(),
                    previous: None,
                });
                suites.len() - 1
            }
        };
        let suite = &mut suites[at];
        suite.runs += 1;
        if run.status == RunStatus::Complete {
            suite.complete += 1;
        }
        if run.started_at < suite.started_at {
            suite.started_at = run.started_at.clone();
        }
        if let Some(label) = &run.label
            && !suite.labels.contains(label)
        {
            suite.labels.push(label.clone());
        }
        if let Some(identity) = identities.of(run)
            && !suite.environments.contains(identity)
        {
            suite.environments.push(identity.clone());
        }
    }
    suites.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    // Oldest first, each suite's previous is the last one of its name seen before it.
    let mut last_of_name: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for suite in suites.iter_mut().rev() {
        suite.previous = last_of_name.insert(suite.name.clone(), suite.id.clone());
    }
    suites
}

/// One workload's history in one environment: each headline test's speed factor against its first run, run by run.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    pub workload: String,
    pub chart: LineChart,
    /// Per test: its name, unit, and the median of each run (`None` where the run lacks it).
    pub table: Vec<(String, String, Vec<Option<f64>>)>,
    /// The runs, oldest first: name and start time.
    pub runs: Vec<(String, String)>,
}

/// The history of every workload among `runs` (one environment's complete runs, oldest first) that ran at least twice,
/// ordered by start time; runs that started in the same instant keep the order given.
pub fn histories(runs: &[StoredRun], registry: &Registry) -> Vec<History> {
    workloads_of(runs)
        .into_iter()
        .filter_map(|workload| {
            let mut ordered: Vec<&StoredRun> = runs.iter().filter(|r| r.summary.workload == workload).collect();
            // One run is a point, not a history: it has nothing to be against.
            if ordered.len() < 2 {
                return None;
            }
            ordered.sort_by(|a, b| a.summary.started_at.cmp(&b.summary.started_at));
            let sides: Vec<Side> = ordered.iter().map(|run| Side::new(run_name(run), vec![(*run).clone()])).collect();
            let comparison = compare_results(&sides);
            let headline = headline_rows(&comparison.rows, workload, registry);
            if headline.is_empty() {
                return None;
            }
            let medians = |row: &ComparisonRow| -> Vec<Option<f64>> {
                row.cells.iter().map(|c| c.as_ref().map(|c| c.summary.median)).collect()
            };
            let series_of = |row: &ComparisonRow| -> Vec<(f64, f64)> {
                let values = medians(row);
                let Some(first) = values.iter().flatten().next().copied() else { return Vec::new() };
                values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| directed_ratio(first, (*v)?, row.direction).map(|r| (i as f64, r)))
                    .collect()
            };
            let mut lines: Vec<LineSeries> = Vec::new();
            // The workload as a whole: the geometric mean of its tests' factors, run by run.
            let all: Vec<Vec<(f64, f64)>> = headline.iter().map(|r| series_of(r)).collect();
            let overall: Vec<(f64, f64)> = (0..sides.len())
                .filter_map(|i| {
                    let factors: Vec<f64> =
                        all.iter().filter_map(|s| s.iter().find(|(x, _)| *x as usize == i).map(|p| p.1)).collect();
                    geometric_mean(&factors).map(|g| (i as f64, g))
                })
                .collect();
            lines.push(LineSeries { name: "all tests (geomean)".into(), points: overall, marked: None });
            for (row, points) in headline.iter().zip(&all).take(HISTORY_LINES) {
                lines.push(LineSeries { name: row.test_name(), points: points.clone(), marked: None });
            }
            let extra = headline.len().saturating_sub(HISTORY_LINES);
            let chart = LineChart {
                title: format!(
                    "{}: each run against the first{}",
                    registry.title(workload),
                    if extra > 0 { format!(" ({extra} more tests in the table)") } else { String::new() }
                ),
                x_label: "run, oldest first".into(),
                y_label: "speed factor against the first run (above 1 is better)".into(),
                series: lines,
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
                reference: Some((1.0, "first run".into())),
                x_names: Some(ordered.iter().map(|r| short_time(&r.summary.started_at)).collect()),
                marks: Vec::new(),
            };
            let table = headline.iter().map(|row| (row.test_name(), row.unit.clone(), medians(row))).collect();
            let runs = ordered.iter().map(|r| (run_name(r), r.summary.started_at.clone())).collect();
            Some(History { workload: workload.to_string(), chart, table, runs })
        })
        .collect()
}

/// `2026-11-23T19:05:01Z` as `11-23 19:05`.
fn short_time(at: &str) -> String {
    match (at.get(5..10), at.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time}"),
        _ => at.to_string(),
    }
}

/// Where an environment ranks among the store's environments on one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rank {
    pub workload: String,
    pub title: String,
    /// 1 is the best.
    pub position: usize,
    /// Environments ranked (this one included).
    pub of: usize,
    /// Share of the other environments this one beats, in percent.
    pub percentile: f64,
    /// Headline tests the score is made of.
    pub tests: usize,
    /// Which environments were ranked together when not all: storage results on memory-backed storage rank only
    /// among each other, e.g. `memory-backed storage only`.
    pub among: Option<String>,
    /// The environment ranked just above this one, and by how much (none when this one is first).
    pub above: Option<Neighbour>,
    /// The environment ranked just below this one (none when this one is last).
    pub below: Option<Neighbour>,
}

/// An environment next to another in a rank, and the margin between them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Neighbour {
    /// The neighbour's environment id.
    pub environment: String,
    /// This environment's score over the neighbour's, as a speed factor: above 1 is faster.
    pub factor: f64,
}

/// The environments ranked need at least this many members for a rank to say anything.
pub const RANK_MIN_ENVIRONMENTS: usize = 3;

/// Rank environment `this` on every workload: each environment's runs given (complete ones) pooled, each headline test's median
/// against the median of every environment's medians (direction-aware), the geometric mean of those factors its
/// score. Only environments sharing a test (same workload version and parameters) with `this` are ranked. For a
/// workload storage governs, memory-backed environments rank only among each other, and real storage only among
/// real storage: RAM is not faster storage.
pub fn ranks(this: &str, by_environment: &BTreeMap<String, Vec<StoredRun>>, registry: &Registry) -> Vec<Rank> {
    let Some(own) = by_environment.get(this) else { return Vec::new() };
    let mut workloads = workloads_of(own);
    workloads.sort_by(|a, b| natural_cmp(a, b));
    let in_memory = |runs: &[StoredRun]| runs.iter().any(|r| memory_backed(&r.fingerprint));
    let own_in_memory = in_memory(own);
    let mut ranks = Vec::new();
    for workload in workloads {
        let apart = registry.read_back(workload).governed_by().contains(&Resource::Storage);
        let mut ids: Vec<&String> = vec![by_environment.keys().find(|k| *k == this).expect("present")];
        let mut left_out = 0;
        for id in by_environment.keys().filter(|k| *k != this) {
            if apart && in_memory(&by_environment[id]) != own_in_memory {
                left_out += 1;
            } else {
                ids.push(id);
            }
        }
        let sides: Vec<Side> = ids
            .iter()
            .filter_map(|id| {
                let runs: Vec<StoredRun> = by_environment[*id]
                    .iter()
                    .filter(|r| r.summary.workload == workload && r.summary.status == RunStatus::Complete)
                    .cloned()
                    .collect();
                (!runs.is_empty()).then(|| Side::new((*id).clone(), runs))
            })
            .collect();
        if sides.len() < RANK_MIN_ENVIRONMENTS || sides[0].name != *this {
            continue;
        }
        let (scores, tests) = scores(&sides, workload, registry, true);
        let Some(own_score) = scores[0] else { continue };
        let ranked: Vec<f64> = scores.iter().flatten().copied().collect();
        if ranked.len() < RANK_MIN_ENVIRONMENTS {
            continue;
        }
        let neighbour = |pick: &dyn Fn(f64, f64) -> bool| {
            let mut best: Option<(usize, f64)> = None;
            for (side, score) in scores.iter().enumerate().skip(1) {
                if let Some(score) = *score
                    && pick(score, own_score)
                    && best.is_none_or(|(_, b)| (score - own_score).abs() < (b - own_score).abs())
                {
                    best = Some((side, score));
                }
            }
            best.map(|(side, score)| Neighbour { environment: sides[side].name.clone(), factor: own_score / score })
        };
        let above = neighbour(&|score, own| score > own);
        let below = neighbour(&|score, own| score < own);
        let better = ranked.iter().filter(|s| **s > own_score).count();
        let worse = ranked.iter().filter(|s| **s < own_score).count();
        ranks.push(Rank {
            workload: workload.to_string(),
            title: registry.title(workload).to_string(),
            position: better + 1,
            of: ranked.len(),
            percentile: worse as f64 / (ranked.len() - 1) as f64 * 100.0,
            tests,
            among: match (own_in_memory && apart, left_out) {
                (true, _) => Some("memory-backed storage only".to_string()),
                (false, 0) => None,
                (false, n) => Some(format!("real storage only ({n} memory-backed left out)")),
            },
            above,
            below,
        });
    }
    ranks
}

/// A headline test as ranks match it: a test, its parameters' hash and the metric that heads it.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct HeadlineTest {
    pub test_id: String,
    /// The parameters that tell variants of a test apart (`calc_threads=4`), when there are several.
    pub variant: Option<String>,
    pub parameters_hash: String,
    pub metric: String,
    pub unit: String,
    pub direction: envbench_core::model::Direction,
}

impl HeadlineTest {
    /// What the test is matched by across stores: the test, its parameters' hash and its metric.
    pub fn key(&self) -> String {
        format!("{}|{}|{}", self.test_id, self.parameters_hash, self.metric)
    }

    /// The test for people: its id and variant.
    pub fn name(&self) -> String {
        match &self.variant {
            Some(variant) => format!("{} ({variant})", self.test_id),
            None => self.test_id.clone(),
        }
    }
}

/// Every headline test of a workload any side has, with each side's median of it (`None` where it lacks it): each
/// side's own, so a test only one side ran is kept too (a run from elsewhere may be ranked on it later).
pub fn headline_medians(sides: &[Side], workload: &str, registry: &Registry) -> Vec<(HeadlineTest, Vec<Option<f64>>)> {
    let mut tests: Vec<(HeadlineTest, Vec<Option<f64>>)> = Vec::new();
    for (index, side) in sides.iter().enumerate() {
        let comparison = compare_results(std::slice::from_ref(side));
        for row in headline_rows(&comparison.rows, workload, registry) {
            let Some(median) = row.cells[0].as_ref().map(|c| c.summary.median) else { continue };
            let test = HeadlineTest {
                test_id: row.test_id.clone(),
                variant: row.variant.clone(),
                parameters_hash: row.parameters_hash.clone(),
                metric: row.metric.clone(),
                unit: row.unit.clone(),
                direction: row.direction,
            };
            let at = match tests.iter().position(|(known, _)| known.key() == test.key()) {
                Some(at) => at,
                None => {
                    tests.push((test, vec![None; sides.len()]));
                    tests.len() - 1
                }
            };
            tests[at].1[index] = Some(median);
        }
    }
    tests
}

/// Each side's score on a workload and how many headline tests it is made of: every headline test two sides share
/// (with `first_sides_tests`, only those the first side has), each side's median against the median of all sides'
/// medians (direction-aware, above 1 is better), their geometric mean. `None` for a side that shares no such test.
pub fn scores(
    sides: &[Side],
    workload: &str,
    registry: &Registry,
    first_sides_tests: bool,
) -> (Vec<Option<f64>>, usize) {
    let rows: Vec<(envbench_core::model::Direction, Vec<Option<f64>>)> = headline_medians(sides, workload, registry)
        .into_iter()
        .map(|(test, medians)| (test.direction, medians))
        .collect();
    scores_of(&rows, sides.len(), first_sides_tests)
}

/// [`scores`] from each headline test's direction and every side's median of it.
pub fn scores_of(
    rows: &[(envbench_core::model::Direction, Vec<Option<f64>>)],
    side_count: usize,
    first_sides_tests: bool,
) -> (Vec<Option<f64>>, usize) {
    let mut factors: Vec<Vec<f64>> = vec![Vec::new(); side_count];
    let mut tests = 0;
    for (direction, cells) in rows {
        if first_sides_tests && cells.first().is_none_or(Option::is_none) {
            continue;
        }
        let mut medians: Vec<f64> = cells.iter().flatten().copied().collect();
        if medians.len() < 2 {
            continue;
        }
        medians.sort_by(f64::total_cmp);
        let reference = if medians.len() % 2 == 1 {
            medians[medians.len() / 2]
        } else {
            (medians[medians.len() / 2 - 1] + medians[medians.len() / 2]) / 2.0
        };
        tests += 1;
        for (side, median) in cells.iter().enumerate() {
            if let Some(factor) = median.and_then(|m| directed_ratio(reference, m, *direction)) {
                factors[side].push(factor);
            }
        }
    }
    (factors.iter().map(|f| geometric_mean(f)).collect(), tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shortened() {
        assert_eq!(short_time("2026-11-23T19:05:01Z"), "11-23 19:05");
    }
}
