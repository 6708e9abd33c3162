//! Comparing environments, PTS-style: results match when workload, workload version, test id, the hash of the
//! parameters and the metric all match; everything else is listed as unmatched and never compared.
//!
//! The first side is the baseline. Per matched result and side: the median of the pooled samples, spread, and against
//! the baseline the change of the medians in the better direction, tested by the test the sample counts allow
//! (Mann-Whitney U with 5 or more a side, Welch's t-test on logarithms with 2 to 4) and called a change only beyond
//! the noise margin two runs of one environment differ by. Per workload and metric a geometric mean of the
//! direction-aware ratios of times and rates sums the tests up. Metrics are not mixed in one mean: throughput and IOPS
//! of the same test move together and would count twice, and a latency percentile is not a throughput.

use crate::environment::{EnvironmentField, differences, environment_identity, environment_table, side_notes};
use crate::rows::{Cell, Change, ComparisonRow, Significance, beyond, directed_ratio, significance};
use crate::side::{Side, run_name};
use crate::verdict::{SideVerdict, verdicts};
use crate::words::{natural_cmp, side_letter};
use envbench_core::model::{Direction, MetricKind, metric_kind};
use envbench_core::stats::{SIGNIFICANCE_ALPHA, Summary, compare_samples, geometric_mean};
use envbench_core::workload::Registry;
use serde::Serialize;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// A whole comparison: what the renderers (text, Markdown, JSON, HTML) show.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub sides: Vec<SideInfo>,
    /// The answer first: every side against the baseline, per workload (empty with one side).
    pub verdicts: Vec<SideVerdict>,
    /// The significance level of the Mann-Whitney U tests.
    pub alpha: f64,
    /// Matched results: present on at least two sides, in workload, test (natural order) and metric order.
    pub rows: Vec<ComparisonRow>,
    /// Per workload and metric, the geometric mean of the per-test ratios against the baseline.
    pub geomeans: Vec<GeomeanRow>,
    /// Results present on one side only, with the reason they match nothing.
    pub unmatched: Vec<UnmatchedResult>,
    /// The environment of every side, field by field.
    pub environment: Vec<EnvironmentField>,
    /// What differs between the environments, one short line each, then what limits each side's process below its
    /// machine, in words.
    pub differences: Vec<String>,
}

/// A side as the comparison names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideInfo {
    pub name: String,
    /// A, B, C... used in column headings.
    pub letter: String,
    pub runs: Vec<RunInfo>,
}

/// One run of a side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunInfo {
    pub uuid: String,
    pub name: String,
    pub workload: String,
    pub started_at: String,
    pub status: String,
    pub host: Option<String>,
    /// The environment identity's name (CPU, memory, hypervisor, storage), where the host name alone cannot tell
    /// two machines apart.
    pub environment: String,
    pub environment_id: String,
    /// The suite it ran in (`envbench run`), whose runs of each workload count as one run the user made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
}

/// The geometric mean of the per-test ratios of one workload and metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GeomeanRow {
    pub workload: String,
    pub metric: String,
    pub direction: Direction,
    /// One per side; `None` for the baseline and for sides sharing no test with it.
    pub cells: Vec<Option<GeomeanCell>>,
}

/// The parameter that names how a workload measured (OLTP: `procedures`; absent for its default, client-side
/// statements). Results of different modes are never compared.
pub const MODE_PARAMETER: &str = "mode";

/// How the reason of a result measured in another mode than the other side's begins.
const DIFFERENT_MODES: &str = "different modes";

/// One side's geometric mean against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GeomeanCell {
    /// Above 1 is better.
    pub ratio: f64,
    pub better_percent: f64,
    /// How many tests went into the mean.
    pub tests: usize,
}

/// A result that matches nothing on the other sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnmatchedResult {
    pub side: String,
    pub workload: String,
    pub workload_version: u32,
    pub test_id: String,
    pub metric: String,
    pub parameters_hash: String,
    /// Why it matches nothing, e.g. `parameters differ from B`.
    pub reason: String,
}

impl UnmatchedResult {
    /// True when it matches nothing because the other side measured in another mode ([`MODE_PARAMETER`]).
    pub fn is_other_mode(&self) -> bool {
        self.reason.starts_with(DIFFERENT_MODES)
    }
}

/// What a result matches by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct MatchKey {
    workload: String,
    workload_version: u32,
    test_id: String,
    parameters_hash: String,
    metric: String,
    unit: String,
    direction: &'static str,
}

struct Pooled {
    samples: Vec<f64>,
    /// Each run's samples, by run id: every run that gave a result, even one without a finite sample.
    per_run: BTreeMap<String, Vec<f64>>,
    flags: Vec<String>,
    parameters: Value,
    direction: Direction,
}

/// Compare sides; the first is the baseline. One side gives a comparison with no changes (used by one-run reports).
/// The registry gives the verdict each workload's headline metrics, title and what governs it.
pub fn compare(sides: &[Side], registry: &Registry) -> Comparison {
    let mut comparison = compare_results(sides);
    // A workload whose runs differ more from run to run (storage) needs a larger change to call one.
    for row in &mut comparison.rows {
        let margin = registry.read_back(&row.workload).noise_margin();
        for change in row.cells.iter_mut().flatten().filter_map(|c| c.change.as_mut()) {
            if change.significance == Significance::Significant && !change.ratio.is_some_and(|r| beyond(r, margin)) {
                change.significance = Significance::Negligible;
            }
        }
    }
    let letters: Vec<String> = comparison.sides.iter().map(|s| s.letter.clone()).collect();
    comparison.verdicts = verdicts(&comparison.rows, sides, &letters, &comparison.environment, registry);
    comparison
}

/// The matched results of some sides without the verdict (its bootstrap is the costly part), for pages that only
/// read the rows: an environment's history, its rank.
pub fn compare_results(sides: &[Side]) -> Comparison {
    let pooled: Vec<BTreeMap<MatchKey, Pooled>> = sides.iter().map(pool).collect();
    let mut order = KeyOrder::default();
    for side in sides {
        for run in &side.runs {
            for result in &run.results {
                order.see(&result.record.workload, &result.record.metric);
            }
        }
    }
    let mut keys: Vec<&MatchKey> = pooled.iter().flat_map(|p| p.keys()).collect::<BTreeSet<_>>().into_iter().collect();
    keys.sort_by(|a, b| order.compare(a, b));

    let mut rows = Vec::new();
    let mut unmatched = Vec::new();
    for key in keys {
        let present: Vec<usize> = (0..sides.len()).filter(|&i| pooled[i].contains_key(key)).collect();
        if present.len() < 2 && sides.len() > 1 {
            let side = present[0];
            unmatched.push(UnmatchedResult {
                side: sides[side].name.clone(),
                workload: key.workload.clone(),
                workload_version: key.workload_version,
                test_id: key.test_id.clone(),
                metric: key.metric.clone(),
                parameters_hash: key.parameters_hash.clone(),
                reason: unmatched_reason(key, side, &pooled),
            });
            continue;
        }
        let first = &pooled[present[0]][key];
        let cells: Vec<Option<Cell>> = (0..sides.len())
            .map(|i| pooled[i].get(key).and_then(|p| cell(p, pooled[0].get(key).filter(|_| i > 0), first.direction)))
            .collect();
        rows.push(ComparisonRow {
            workload: key.workload.clone(),
            workload_version: key.workload_version,
            test_id: key.test_id.clone(),
            variant: None,
            parameters: first.parameters.clone(),
            parameters_hash: key.parameters_hash.clone(),
            metric: key.metric.clone(),
            unit: key.unit.clone(),
            direction: first.direction,
            cells,
        });
    }
    name_variants(&mut rows);
    let geomeans = geomeans(&rows, sides.len());
    let environment = environment_table(sides);
    Comparison {
        verdicts: Vec::new(),
        sides: sides
            .iter()
            .enumerate()
            .map(|(i, side)| SideInfo {
                name: side.name.clone(),
                letter: side_letter(i),
                runs: side
                    .runs
                    .iter()
                    .map(|run| {
                        let identity = environment_identity(&run.fingerprint);
                        RunInfo {
                            environment: identity.name,
                            environment_id: identity.id,
                            uuid: run.summary.uuid.clone(),
                            name: run_name(run),
                            workload: run.summary.workload.clone(),
                            started_at: run.summary.started_at.clone(),
                            status: run.summary.status.to_string(),
                            host: run.summary.host.clone(),
                            suite: crate::side::suite_of(run).map(str::to_string),
                        }
                    })
                    .collect(),
            })
            .collect(),
        alpha: SIGNIFICANCE_ALPHA,
        rows,
        geomeans,
        unmatched,
        differences: [differences(&environment), side_notes(sides)].concat(),
        environment,
    }
}

fn pool(side: &Side) -> BTreeMap<MatchKey, Pooled> {
    let mut pooled: BTreeMap<MatchKey, Pooled> = BTreeMap::new();
    for run in &side.runs {
        for result in &run.results {
            let r = &result.record;
            let key = MatchKey {
                workload: r.workload.clone(),
                workload_version: r.workload_version,
                test_id: r.test_id.clone(),
                parameters_hash: result.parameters_hash.clone(),
                metric: r.metric.clone(),
                unit: r.unit.clone(),
                direction: r.direction.as_str(),
            };
            let entry = pooled.entry(key).or_insert_with(|| Pooled {
                samples: Vec::new(),
                per_run: BTreeMap::new(),
                flags: Vec::new(),
                parameters: r.parameters.clone(),
                direction: r.direction,
            });
            let finite = r.samples.iter().copied().filter(|v| v.is_finite());
            entry.per_run.entry(run.summary.uuid.clone()).or_default().extend(finite.clone());
            entry.samples.extend(finite);
            for flag in &r.flags {
                if !entry.flags.contains(flag) {
                    entry.flags.push(flag.clone());
                }
            }
        }
    }
    pooled
}

fn cell(side: &Pooled, baseline: Option<&Pooled>, direction: Direction) -> Option<Cell> {
    let summary = Summary::of(&side.samples)?;
    let change = baseline.and_then(|base| {
        let base_summary = Summary::of(&base.samples)?;
        let ratio = directed_ratio(base_summary.median, summary.median, direction);
        let (significance, p_value, method) = match compare_samples(&base.samples, &side.samples) {
            None => (Significance::TooFewSamples, None, None),
            Some(test) => (significance(test.p_value, ratio), Some(test.p_value), Some(test.method)),
        };
        Some(Change { ratio, better_percent: ratio.map(|r| (r - 1.0) * 100.0), significance, p_value, method })
    });
    Some(Cell {
        samples: side.samples.clone(),
        run_samples: side
            .per_run
            .iter()
            .filter(|(_, s)| !s.is_empty())
            .map(|(id, s)| (id.clone(), s.clone()))
            .collect(),
        runs: side.per_run.len(),
        noisy: summary.is_noisy(),
        summary,
        flags: side.flags.clone(),
        change,
    })
}

/// Geometric means of times and rates only: a mean of coefficients of variation or of failure counts says nothing.
fn geomeans(rows: &[ComparisonRow], side_count: usize) -> Vec<GeomeanRow> {
    let mut groups: Vec<GeomeanRow> = Vec::new();
    for row in rows.iter().filter(|r| metric_kind(&r.metric, &r.unit) == MetricKind::Speed) {
        if !groups.iter().any(|g| g.workload == row.workload && g.metric == row.metric) {
            groups.push(GeomeanRow {
                workload: row.workload.clone(),
                metric: row.metric.clone(),
                direction: row.direction,
                cells: Vec::new(),
            });
        }
    }
    for group in &mut groups {
        group.cells = (0..side_count)
            .map(|side| {
                let ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.workload == group.workload && r.metric == group.metric)
                    .filter_map(|r| r.cells[side].as_ref()?.change.as_ref()?.ratio)
                    .collect();
                let ratio = geometric_mean(&ratios)?;
                Some(GeomeanCell { ratio, better_percent: (ratio - 1.0) * 100.0, tests: ratios.len() })
            })
            .collect();
    }
    groups.retain(|g| g.cells.iter().any(Option::is_some));
    groups
}

fn unmatched_reason(key: &MatchKey, side: usize, pooled: &[BTreeMap<MatchKey, Pooled>]) -> String {
    let others: Vec<(usize, &MatchKey)> = pooled
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != side)
        .flat_map(|(i, p)| p.keys().map(move |k| (i, k)))
        .filter(|(_, k)| k.workload == key.workload && k.test_id == key.test_id && k.metric == key.metric)
        .collect();
    let letters = |filter: &dyn Fn(&MatchKey) -> bool| {
        let letters: BTreeSet<String> =
            others.iter().filter(|(_, k)| filter(k)).map(|(i, _)| side_letter(*i)).collect();
        letters.into_iter().collect::<Vec<_>>().join(", ")
    };
    let version = letters(&|k| k.workload_version != key.workload_version);
    if !version.is_empty() {
        return format!("workload version differs from {version}");
    }
    let parameters = letters(&|k| k.parameters_hash != key.parameters_hash);
    if !parameters.is_empty() {
        // A workload measured in another mode (OLTP's client-side statements against stored procedures) measured
        // something else: said so, never left to read as a difference of settings.
        let mode_of = |parameters: &Value| parameters.get(MODE_PARAMETER).and_then(Value::as_str).map(str::to_string);
        let this = pooled[side].get(key).and_then(|p| mode_of(&p.parameters));
        let other = others
            .iter()
            .filter(|(_, k)| k.parameters_hash != key.parameters_hash)
            .filter_map(|(i, k)| pooled[*i].get(*k))
            .map(|p| mode_of(&p.parameters))
            .find(|mode| *mode != this);
        if let Some(other) = other {
            let shown = |mode: Option<String>| mode.unwrap_or_else(|| "the default".into());
            return format!(
                "{DIFFERENT_MODES} ({} against {} in {parameters}), not comparable",
                shown(this),
                shown(other)
            );
        }
        return format!("parameters differ from {parameters}");
    }
    let unit = letters(&|k| k.unit != key.unit || k.direction != key.direction);
    if !unit.is_empty() {
        return format!("unit or direction differs from {unit}");
    }
    "no other side has this test".to_string()
}

/// Label rows whose test id appears with several parameter sets by the parameters that tell them apart.
fn name_variants(rows: &mut [ComparisonRow]) {
    let mut hashes: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (index, row) in rows.iter().enumerate() {
        hashes.entry((row.workload.clone(), row.test_id.clone())).or_default().push(index);
    }
    for indices in hashes.values() {
        let distinct: BTreeSet<&str> = indices.iter().map(|&i| rows[i].parameters_hash.as_str()).collect();
        if distinct.len() < 2 {
            continue;
        }
        let keys: BTreeSet<String> =
            indices.iter().filter_map(|&i| rows[i].parameters.as_object()).flat_map(|o| o.keys().cloned()).collect();
        let differing: Vec<String> = keys
            .into_iter()
            .filter(|key| {
                let values: BTreeSet<String> = indices
                    .iter()
                    .map(|&i| rows[i].parameters.get(key).map(Value::to_string).unwrap_or_default())
                    .collect();
                values.len() > 1
            })
            .collect();
        for &i in indices {
            let label = differing
                .iter()
                .map(|key| match rows[i].parameters.get(key) {
                    Some(Value::String(s)) => format!("{key}={s}"),
                    Some(value) => format!("{key}={value}"),
                    None => format!("{key}=-"),
                })
                .collect::<Vec<_>>()
                .join(", ");
            rows[i].variant = Some(if label.is_empty() { rows[i].parameters_hash[..8].to_string() } else { label });
        }
    }
}

/// Workloads and metrics in the order they were first seen (so `disk` shows throughput before latency), tests in
/// natural order (`J=2` before `J=16`, `Q2` before `Q10`).
#[derive(Default)]
struct KeyOrder {
    workloads: Vec<String>,
    metrics: Vec<(String, String)>,
}

impl KeyOrder {
    fn see(&mut self, workload: &str, metric: &str) {
        if !self.workloads.iter().any(|w| w == workload) {
            self.workloads.push(workload.to_string());
        }
        if !self.metrics.iter().any(|(w, m)| w == workload && m == metric) {
            self.metrics.push((workload.to_string(), metric.to_string()));
        }
    }

    fn compare(&self, a: &MatchKey, b: &MatchKey) -> Ordering {
        let workload = |k: &MatchKey| self.workloads.iter().position(|w| *w == k.workload);
        let metric = |k: &MatchKey| self.metrics.iter().position(|(w, m)| *w == k.workload && *m == k.metric);
        workload(a)
            .cmp(&workload(b))
            .then_with(|| natural_cmp(&a.test_id, &b.test_id))
            .then_with(|| a.parameters_hash.cmp(&b.parameters_hash))
            .then_with(|| metric(a).cmp(&metric(b)))
            .then_with(|| a.cmp(b))
    }
}
