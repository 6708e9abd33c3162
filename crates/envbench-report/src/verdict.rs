//! The answer first. For every side against the baseline and every workload: the geometric-mean change of the
//! workload's headline figures with a 95% interval, how many of its tests are significantly better, worse or
//! unchanged, and the environment differences that plausibly explain the change, one sentence each.
//!
//! Changes here are speed factors (directed ratios): above 1 the side did more work per second or took less time.
//! When a side has several runs, the runs are the interval's samples (Welch's t on each run's score, see
//! [`change_interval`]), since two runs of one environment differ by more than one run's samples show. With one run a
//! side, the interval resamples every test's samples on both sides (with replacement, the medians' ratio recomputed,
//! the geometric mean taken again) a fixed number of times with a fixed seed, so the same store always gives the same
//! verdict, and the verdict says that one run cannot show how much runs differ.
//!
//! A workload is called faster or slower only when its interval leaves out 1 and its change is beyond the noise
//! margin two runs of one environment differ by; a workload whose tests have a single sample on a side cannot be
//! told, says so and names the option that gives more samples. It is never counted as unchanged.

use crate::compare::{ComparisonRow, Significance, beyond, natural_cmp};
use crate::environment::{EnvironmentField, LIMIT_FIELDS, limit_sentences};
use crate::side::Side;
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{Direction, MetricKind, StoredRun, metric_kind};
use envbench_core::sampler::DISTURBED_FLAG;
use envbench_core::stats::{Summary, geometric_mean, student_t_critical, welch_satterthwaite};
use envbench_core::workload::{Registry, Resource};
use serde::Serialize;
use std::collections::BTreeMap;

/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

/// A change within this factor of 1 is "about the same" in sentences.
const SAME_WITHIN: f64 = 0.02;

/// At most this many tests are named as evidence in one sentence.
const NAMED_TESTS: usize = 3;

/// One side against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideVerdict {
    pub letter: String,
    pub name: String,
    pub workloads: Vec<WorkloadVerdict>,
    /// Said once under the workloads when a change was called on one run a side: how to make it surer.
    pub caution: Option<String>,
    /// Said once under the workloads, one sentence for each of the two sides (the baseline, this side) whose runs
    /// other work disturbed while they measured, with how many runs and by how much.
    pub disturbance: Vec<String>,
}

/// One workload of one side against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadVerdict {
    pub workload: String,
    /// The workload's name for people, e.g. `analytic queries`.
    pub title: String,
    /// The metrics the verdict is made of (each test's headline figure).
    pub metrics: Vec<String>,
    /// Tests in the geometric mean.
    pub tests: usize,
    /// Geometric mean of the tests' speed factors: above 1 is better.
    pub ratio: f64,
    /// The 95% interval of `ratio` ([`change_interval`]); `None` with a single sample per side.
    pub interval: Option<(f64, f64)>,
    /// What the interval's spread was measured from: the runs, or one run's samples.
    pub interval_basis: Option<IntervalBasis>,
    /// What the verdict decided.
    pub decision: Decision,
    /// Why it cannot tell (always given then): `1 sample each`, `the runs of B disagree by 2.0x, and the 95% interval
    /// is wider than the noise margin (5%)`, `B was disturbed and came out slower`.
    pub reason: Option<String>,
    /// What would let it tell (always given when it cannot): `rerun with --repeat 5`, `run each side again when the
    /// host is quiet`.
    pub advice: Option<String>,
    /// Significantly better tests.
    pub better: usize,
    /// Significantly worse tests.
    pub worse: usize,
    /// Tests without a significant change beyond the noise margin.
    pub unchanged: usize,
    /// Tests with a single sample on a side: nothing can be said of them, and they are not counted as unchanged.
    pub cannot_tell: usize,
    /// The fewest runs behind a test on the baseline and on the side: with one run a side, nothing measures how much
    /// two runs of one environment differ.
    pub runs: [usize; 2],
    /// E.g. `analytic queries 1.50x slower on B`.
    pub summary: String,
    /// The environment differences that plausibly explain the change, one sentence each.
    pub explanations: Vec<String>,
    /// With a price per hour on both sides (`--tag price_per_hour=1.84`): the work the side does per unit of cost
    /// against the baseline's (above 1: more work for the money).
    pub cost: Option<f64>,
    /// With those prices, and a unit of work the workload is quoted in that both sides measured: what one unit
    /// costs on the baseline and on the side.
    pub unit_cost: Option<UnitCost>,
}

/// What one unit of work costs on each side of a verdict: `per 1,000 NOPM: 0.0215 on A, 0.018 on B`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnitCost {
    /// `1,000 NOPM`, `QphH@Size`.
    pub per: String,
    /// On the baseline and on the side, in the currency of the price.
    pub costs: [f64; 2],
}

/// Each test's median of a cost unit's metric over these runs' pooled samples, by test and parameters' hash.
pub fn unit_medians<'a>(
    runs: impl IntoIterator<Item = &'a StoredRun>,
    unit: &envbench_core::workload::CostUnit,
) -> std::collections::BTreeMap<(String, String), f64> {
    let mut pooled: std::collections::BTreeMap<(String, String), Vec<f64>> = std::collections::BTreeMap::new();
    for result in runs.into_iter().flat_map(|r| &r.results) {
        if unit.measures(&result.record.test_id, &result.record.metric) {
            pooled
                .entry((result.record.test_id.clone(), result.parameters_hash.clone()))
                .or_default()
                .extend(&result.record.samples);
        }
    }
    pooled.into_iter().filter_map(|(key, samples)| Some((key, Summary::of(&samples)?.median))).collect()
}

/// What a unit of work costs on each of two sides at these prices: the workload's first cost unit both measured on
/// the same tests, its value a geometric mean over those tests.
pub fn unit_costs(sides: [&Side; 2], prices: [f64; 2], workload: &str, registry: &Registry) -> Option<UnitCost> {
    registry.cost_units(workload).iter().find_map(|unit| {
        let of_workload =
            |side: &'_ Side| unit_medians(side.runs.iter().filter(|r| r.summary.workload == workload), unit);
        let (a, b) = (of_workload(sides[0]), of_workload(sides[1]));
        let shared: Vec<&(String, String)> = a.keys().filter(|k| b.contains_key(*k)).collect();
        let value = |medians: &std::collections::BTreeMap<(String, String), f64>| {
            geometric_mean(&shared.iter().map(|k| medians[*k]).collect::<Vec<_>>())
        };
        let costs = [unit.cost(prices[0], value(&a)?)?, unit.cost(prices[1], value(&b)?)?];
        Some(UnitCost { per: unit.words.to_string(), costs })
    })
}

/// An amount of money for people: three significant digits, at least two decimals, never an exponent (`0.00025`,
/// `0.02`, `12.35`).
pub fn cost_number(value: f64) -> String {
    if !value.is_finite() || value <= 0.0 {
        return crate::render::number(value);
    }
    let decimals = (2 - value.log10().floor() as i32).max(2) as usize;
    let text = format!("{value:.decimals$}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let fraction = fraction.trim_end_matches('0');
    format!("{whole}.{fraction:0<2}")
}

/// The tag that states what an hour of an environment costs, in any currency (the same on every side).
pub const PRICE_TAG: &str = "price_per_hour";

/// A side's price per hour: the one every run of it states, positive.
pub fn price_per_hour(side: &Side) -> Option<f64> {
    let mut prices = side.runs.iter().map(|r| r.summary.tags.get(PRICE_TAG).and_then(|p| p.trim().parse::<f64>().ok()));
    let first = prices.next()??;
    (first.is_finite() && first > 0.0 && prices.all(|p| p == Some(first))).then_some(first)
}

/// The work per unit of cost of a side against the baseline's: its speed factor over its price factor.
pub fn work_per_cost(speed: f64, prices: [f64; 2]) -> f64 {
    speed / (prices[1] / prices[0])
}

/// `At 1.84 an hour on A and 2.10 on B, B does 1.33x the work per unit of cost.`
fn cost_words(verdict: &WorkloadVerdict, prices: [f64; 2], letters: (&str, &str)) -> String {
    let factor = work_per_cost(verdict.ratio, prices);
    let (a, b) = letters;
    let words = if (factor - 1.0).abs() < SAME_WITHIN {
        "about the same work per unit of cost".to_string()
    } else if factor > 1.0 {
        format!("{factor:.2}x the work per unit of cost")
    } else {
        format!("{:.2}x less work per unit of cost", 1.0 / factor)
    };
    format!("At {} an hour on {a} and {} on {b}, {b} does {words}.", number_words(prices[0]), number_words(prices[1]))
}

fn number_words(value: f64) -> String {
    let text = format!("{value:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What a workload's verdict says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Its whole interval lies above the noise margin.
    Faster,
    /// Its whole interval lies below the noise margin.
    Slower,
    /// Its whole interval lies inside the noise margin, and neither side was disturbed: "within noise".
    Same,
    /// None of these: too few samples, an interval wider than the margin or across its edge, or one inside it with a
    /// side disturbed. [`WorkloadVerdict::reason`] says which, [`WorkloadVerdict::advice`] what to do.
    CannotTell,
}

/// A test's speed factor and its 95% interval (for the relative charts).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestChange {
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
    pub significant: bool,
}

/// `1.50x faster`, `1.08x slower`, `about the same` (within 2%): a speed factor in words.
pub fn speed_words(ratio: f64) -> String {
    change_words(ratio, MetricKind::Speed)
}

/// A directed ratio (above 1 is better) as a factor in the metric's words, however small: `1.18x slower`, `2.50x
/// less variable`, `1.12x better`; `same` when it rounds to 1.00x. One vocabulary for every table: never a bare
/// ratio, never a signed percent.
pub fn factor_words(ratio: f64, kind: MetricKind) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "-".to_string();
    }
    let (up, down) = match kind {
        MetricKind::Speed => ("faster", "slower"),
        MetricKind::Dispersion => ("less variable", "more variable"),
        MetricKind::Other => ("better", "worse"),
    };
    let factor = if ratio >= 1.0 { ratio } else { 1.0 / ratio };
    if factor < 1.005 { "same".to_string() } else { format!("{factor:.2}x {}", if ratio >= 1.0 { up } else { down }) }
}

impl WorkloadVerdict {
    /// The change in words, as decided: `1.52x faster`, `about the same`, `about the same (4% faster, within
    /// noise)`, `cannot tell: 1 sample each; rerun with --repeat 5`.
    pub fn change_words(&self) -> String {
        match self.decision {
            Decision::Faster | Decision::Slower => speed_words(self.ratio),
            Decision::Same => match speed_words(self.ratio) {
                words if words == "about the same" => words,
                words => format!("about the same ({words}, within noise)"),
            },
            Decision::CannotTell => format!(
                "cannot tell: {}; {}",
                self.reason.as_deref().unwrap_or("too few samples"),
                self.advice.as_deref().unwrap_or("run each side again")
            ),
        }
    }
}

/// An interval of speed factors in the words of the headline: `95% interval 1.16x to 1.59x slower`, `95% interval
/// 1.05x slower to 1.12x faster`.
pub fn interval_words(interval: Option<(f64, f64)>) -> String {
    match interval {
        Some((low, high)) if low >= 1.0 => format!("95% interval {low:.2}x to {high:.2}x faster"),
        Some((low, high)) if high <= 1.0 => format!("95% interval {:.2}x to {:.2}x slower", 1.0 / high, 1.0 / low),
        Some((low, high)) => format!("95% interval {:.2}x slower to {high:.2}x faster", 1.0 / low),
        None => "no interval (one sample a side)".to_string(),
    }
}

/// The change of a metric in its own words: a speed factor for times and rates (`1.18x slower`), `2.10x less
/// variable` for a spread, `1.12x better` for anything else; `about the same` within 2%. `ratio` is directed: above 1
/// is better.
pub fn change_words(ratio: f64, kind: MetricKind) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "-".to_string();
    }
    if (ratio - 1.0).abs() < SAME_WITHIN && (1.0 / ratio - 1.0).abs() < SAME_WITHIN {
        "about the same".to_string()
    } else {
        factor_words(ratio, kind)
    }
}

/// True for a result another tool measured beside envbench's own (fio, pg_test_fsync: flagged `*-cross-check`): a
/// reference for the tool, not one more test of the environment.
pub fn is_cross_check(row: &ComparisonRow) -> bool {
    row.cells.iter().flatten().any(|cell| cell.flags.iter().any(|flag| flag.ends_with("cross-check")))
}

/// The tests of a comparison that make a workload's verdict: per test (and parameter set), the first of the
/// workload's headline metrics it has, or its first time or rate when the workload names none (a spread or a count
/// says nothing of speed). Cross-checks by other tools are left out.
pub fn headline_rows<'a>(rows: &'a [ComparisonRow], workload: &str, registry: &Registry) -> Vec<&'a ComparisonRow> {
    let preferred = registry.headline_metrics(workload);
    let mut chosen: Vec<&ComparisonRow> = Vec::new();
    for row in rows.iter().filter(|r| r.workload == workload && !is_cross_check(r)) {
        let rank = |r: &ComparisonRow| preferred.iter().position(|m| *m == r.metric);
        if !preferred.is_empty() && rank(row).is_none() {
            continue;
        }
        if preferred.is_empty() && metric_kind(&row.metric, &row.unit) != MetricKind::Speed {
            continue;
        }
        match chosen.iter().position(|c| c.test_id == row.test_id && c.parameters_hash == row.parameters_hash) {
            Some(at) => {
                if rank(row) < rank(chosen[at]) {
                    chosen[at] = row;
                }
            }
            None => chosen.push(row),
        }
    }
    chosen
}

/// The verdict of every side against the first.
pub fn verdicts(
    rows: &[ComparisonRow],
    sides: &[Side],
    letters: &[String],
    environment: &[EnvironmentField],
    registry: &Registry,
) -> Vec<SideVerdict> {
    let mut workloads: Vec<&str> = Vec::new();
    for row in rows {
        if !workloads.contains(&row.workload.as_str()) {
            workloads.push(&row.workload);
        }
    }
    let machines: Vec<Machine> = sides.iter().map(Machine::of).collect();
    (1..sides.len())
        .map(|side| {
            let workloads: Vec<WorkloadVerdict> = workloads
                .iter()
                .filter_map(|workload| {
                    let serial = serial_evidence(rows, workload, side, registry);
                    let headline = headline_rows(rows, workload, registry);
                    let pair = (letters[0].as_str(), letters.get(side).map(String::as_str).unwrap_or("?"));
                    let mut verdict = workload_verdict(&headline, side, pair, workload, registry)?;
                    verdict.summary = format!(
                        "{} {} on {}",
                        verdict.title,
                        verdict.change_words(),
                        letters.get(side).map(String::as_str).unwrap_or("?")
                    );
                    verdict.explanations = explain(
                        &verdict,
                        registry.governed_by(workload),
                        (&machines[0], &machines[side]),
                        (&letters[0], &letters[side]),
                        &serial,
                        &pair_differences(environment, side),
                    );
                    if let (Some(base), Some(other)) = (price_per_hour(&sides[0]), price_per_hour(&sides[side])) {
                        verdict.cost = Some(work_per_cost(verdict.ratio, [base, other]));
                        verdict.explanations.push(cost_words(&verdict, [base, other], (&letters[0], &letters[side])));
                        verdict.unit_cost = unit_costs([&sides[0], &sides[side]], [base, other], workload, registry);
                        if let Some(unit) = &verdict.unit_cost {
                            verdict.explanations.push(format!(
                                "Per {}: {} on {} and {} on {}.",
                                unit.per,
                                cost_number(unit.costs[0]),
                                letters[0],
                                cost_number(unit.costs[1]),
                                letters[side]
                            ));
                        }
                    }
                    Some(verdict)
                })
                .collect();
            let caution = single_runs(&workloads, (&letters[0], &letters[side]));
            let disturbance = [(0, &letters[0]), (side, &letters[side])]
                .into_iter()
                .filter_map(|(i, l)| disturbed_side(&sides[i], l))
                .collect();
            SideVerdict {
                letter: letters[side].clone(),
                name: sides[side].name.clone(),
                workloads,
                caution,
                disturbance,
            }
        })
        .collect()
}

/// The figures of one workload of `side`, without its sentences.
fn workload_verdict(
    headline: &[&ComparisonRow],
    side: usize,
    letters: (&str, &str),
    workload: &str,
    registry: &Registry,
) -> Option<WorkloadVerdict> {
    let mut pairs: Vec<SidesSamples> = Vec::new();
    let (mut better, mut worse, mut unchanged, mut cannot_tell) = (0, 0, 0, 0);
    let mut metrics: Vec<String> = Vec::new();
    let mut ratios = Vec::new();
    // The fewest samples of a test on each side, for the advice, and the fewest runs.
    let (mut fewest_base, mut fewest_side) = (usize::MAX, usize::MAX);
    let mut runs = [usize::MAX; 2];
    for row in headline {
        let (Some(base), Some(cell)) = (row.cells[0].as_ref(), row.cells.get(side).and_then(Option::as_ref)) else {
            continue;
        };
        let Some(change) = cell.change.as_ref() else { continue };
        let Some(ratio) = change.ratio else { continue };
        ratios.push(ratio);
        pairs.push((&base.run_samples, &cell.run_samples, row.direction));
        fewest_base = fewest_base.min(base.samples.len());
        fewest_side = fewest_side.min(cell.samples.len());
        runs = [runs[0].min(base.runs), runs[1].min(cell.runs)];
        if !metrics.contains(&row.metric) {
            metrics.push(row.metric.clone());
        }
        match change.significance {
            Significance::Significant if ratio > 1.0 => better += 1,
            Significance::Significant if ratio < 1.0 => worse += 1,
            Significance::TooFewSamples => cannot_tell += 1,
            _ => unchanged += 1,
        }
    }
    let ratio = geometric_mean(&ratios)?;
    let (interval, interval_basis) = change_interval(&pairs, seed(&[workload, &side.to_string()])).unzip();
    let testable = ratios.len() - cannot_tell;
    let (decision, reason, advice) = if testable == 0 {
        let samples = if fewest_base == fewest_side {
            format!("{fewest_base} sample{} each", if fewest_base == 1 { "" } else { "s" })
        } else {
            let (a, b) = letters;
            format!("{fewest_base} sample{} on {a}, {fewest_side} on {b}", if fewest_base == 1 { "" } else { "s" })
        };
        (Decision::CannotTell, Some(samples), Some(format!("rerun with {}", registry.more_samples(workload))))
    } else {
        let disturbed = [is_disturbed(headline, 0), is_disturbed(headline, side)];
        let spread = [0, side].map(|index| runs_disagree(headline, index));
        decide(interval, registry.noise_margin(workload), disturbed, spread, letters)
    };
    Some(WorkloadVerdict {
        workload: workload.to_string(),
        title: registry.title(workload).to_string(),
        metrics,
        tests: ratios.len(),
        ratio,
        interval,
        interval_basis,
        decision,
        reason,
        advice,
        better,
        worse,
        unchanged,
        cannot_tell,
        runs,
        summary: String::new(),
        explanations: Vec::new(),
        cost: None,
        unit_cost: None,
    })
}

/// The decision on a workload's interval of speed factors (`None`: no spread could be measured), its noise margin,
/// whether each side (baseline, side) was disturbed, and how far each side's runs disagree at most (`None`: one run):
/// with the reason and the advice when it cannot tell.
///
/// Disturbance only slows the side it hits, so an interval inside the margin with a side disturbed may hide a change
/// the other work made up for: it cannot tell. An interval beyond the margin stays decided, disturbed or not (a
/// regression gate on a busy CI host still fails on a real slowdown); the side's disturbance block says that part of
/// such a change may be the other work's.
fn decide(
    interval: Option<(f64, f64)>,
    margin: f64,
    disturbed: [bool; 2],
    spread: [Option<f64>; 2],
    letters: (&str, &str),
) -> (Decision, Option<String>, Option<String>) {
    let (a, b) = letters;
    let quiet = "run each side again when the host is quiet (envbench flags the runs it finds disturbed), or pin each \
                 to CPUs of its own (taskset -c)";
    let Some((low, high)) = interval else {
        return (Decision::CannotTell, Some("no spread could be measured".into()), Some(quiet.into()));
    };
    let (top, bottom) = (1.0 + margin, 1.0 / (1.0 + margin));
    let cannot = |reason: String| (Decision::CannotTell, Some(reason), Some(quiet.to_string()));
    let margin_words = format!("the noise margin ({:.0}%)", margin * 100.0);
    if low > top {
        return (Decision::Faster, None, None);
    }
    if high < bottom {
        return (Decision::Slower, None, None);
    }
    if low >= bottom && high <= top {
        let hit: Vec<&str> =
            [(disturbed[0], a), (disturbed[1], b)].into_iter().filter(|(d, _)| *d).map(|(_, l)| l).collect();
        if hit.is_empty() {
            return (Decision::Same, None, None);
        }
        return cannot(format!(
            "{} disturbed while it measured, which can hide a change as large as {margin_words}",
            match hit.as_slice() {
                [one] => format!("{one} was"),
                _ => format!("{a} and {b} were"),
            }
        ));
    }
    // The interval reaches past the margin's edge: wider than the margin, or across its edge.
    let disagreeing: Vec<String> = [(spread[0], a), (spread[1], b)]
        .into_iter()
        .filter_map(|(factor, letter)| {
            factor.filter(|f| beyond(*f, margin)).map(|f| format!("the runs of {letter} disagree by {f:.2}x"))
        })
        .collect();
    let why = if disagreeing.is_empty() { String::new() } else { format!("{}, so ", disagreeing.join(" and ")) };
    cannot(format!("{why}the 95% interval is wider than {margin_words} or reaches across it"))
}

/// True when a side's results of these tests carry [`DISTURBED_FLAG`].
fn is_disturbed(headline: &[&ComparisonRow], index: usize) -> bool {
    headline.iter().any(|row| {
        row.cells.get(index).and_then(Option::as_ref).is_some_and(|c| c.flags.iter().any(|f| f == DISTURBED_FLAG))
    })
}

/// How far the runs of one side disagree at most on these tests: the largest ratio of one run's median to
/// another's; `None` with fewer than two runs.
fn runs_disagree(headline: &[&ComparisonRow], index: usize) -> Option<f64> {
    headline
        .iter()
        .filter_map(|row| row.cells.get(index).and_then(Option::as_ref))
        .filter_map(|cell| {
            let medians: Vec<f64> = cell
                .run_samples
                .values()
                .filter_map(|s| Summary::of(s))
                .map(|s| s.median)
                .filter(|m| *m > 0.0)
                .collect();
            let (low, high) = medians.iter().fold((f64::INFINITY, 0.0f64), |(l, h), m| (l.min(*m), h.max(*m)));
            (medians.len() > 1).then_some(high / low)
        })
        .reduce(f64::max)
}

/// The sentence for a side whose runs other work disturbed while they measured (their results carry
/// [`DISTURBED_FLAG`]): how many of its runs, and by how much (the sampler's figures of each, the first two), since
/// part of any change against it may be that work's. `None` for a side none of whose runs was disturbed.
fn disturbed_side(side: &Side, letter: &str) -> Option<String> {
    let count = disturbance_count(side)?;
    Some(format!(
        "{letter} was disturbed in {count}: other work competed for the machine while it measured (flag \
         {DISTURBED_FLAG}), so part of a change against {letter} may be that work's, and the verdict never calls it \
         the same"
    ))
}

/// How many of a side's runs other work disturbed, counted as the user made them, with the sampler's figures:
/// `2 of 3 runs (steal 12% of CPU time)`; `None` when none was.
pub(crate) fn disturbance_count(side: &Side) -> Option<String> {
    let disturbed: Vec<&StoredRun> = side
        .runs
        .iter()
        .filter(|r| r.summary.disturbed || r.results.iter().any(|x| x.record.flags.iter().any(|f| f == DISTURBED_FLAG)))
        .collect();
    if disturbed.is_empty() {
        return None;
    }
    let mut figures: Vec<String> = Vec::new();
    for run in &disturbed {
        let Some(found) = run.series.as_ref().and_then(|s| s.disturbance()) else { continue };
        let reason = found.reason.trim_start_matches("disturbed: ").to_string();
        if !figures.contains(&reason) {
            figures.push(reason);
        }
    }
    let how = match figures.len() {
        0 => String::new(),
        1 | 2 => format!(" ({})", figures.join("; ")),
        n => format!(" ({}; and {} more)", figures[..2].join("; "), n - 2),
    };
    // Counted as the user made them: a suite with a disturbed workload run is one disturbed run of the suites.
    let made = |runs: &[&StoredRun]| {
        crate::side::runs_made(runs.iter().map(|r| (r.summary.uuid.as_str(), crate::side::suite_of(r))))
    };
    let all: Vec<&StoredRun> = side.runs.iter().collect();
    let (hit, of) = (made(&disturbed), made(&all));
    let count = if of == all.len() {
        format!("{hit} of {of} run{}", if of == 1 { "" } else { "s" })
    } else {
        format!(
            "{hit} of {of} run{} ({} of {} workload runs)",
            if of == 1 { "" } else { "s" },
            disturbed.len(),
            all.len()
        )
    };
    Some(format!("{count}{how}"))
}

/// The caution for changes called between sides of which one (or both) is a single run: their intervals measured
/// how much the samples within each run vary, not how much two runs of one environment differ, and on a shared host
/// those differ more (docs/compare.md, calibration). More runs under the same label settle it.
fn single_runs(workloads: &[WorkloadVerdict], letters: (&str, &str)) -> Option<String> {
    let called: Vec<&WorkloadVerdict> =
        workloads.iter().filter(|w| matches!(w.decision, Decision::Faster | Decision::Slower)).collect();
    let single = |side: usize| called.iter().any(|w| w.runs[side] == 1);
    let (a, b) = letters;
    let who = match (single(0), single(1)) {
        (true, true) => format!("{a} and {b} are one run each"),
        (true, false) => format!("{a} is one run"),
        (false, true) => format!("{b} is one run"),
        (false, false) => return None,
    };
    Some(format!(
        "{who}: two runs of one environment on a shared host can differ beyond the noise margin, which one run \
         cannot show. Run each again under its label (two more make three): compare pools them, and each interval \
         then weighs how much the runs differ."
    ))
}

/// A test's change with its interval.
pub fn test_change(row: &ComparisonRow, side: usize) -> Option<TestChange> {
    let base = row.cells[0].as_ref()?;
    let cell = row.cells.get(side)?.as_ref()?;
    let change = cell.change.as_ref()?;
    Some(TestChange {
        ratio: change.ratio?,
        interval: change_interval(
            &[(&base.run_samples, &cell.run_samples, row.direction)],
            seed(&[&row.workload, &row.test_id, &row.parameters_hash, &row.metric, &side.to_string()]),
        )
        .map(|(interval, _)| interval),
        significant: change.significance.is_significant(),
    })
}

/// One test's samples for an interval, run by run (by run id, runs with samples only): the baseline's, the side's,
/// and which way is better.
pub type SidesSamples<'a> = (&'a BTreeMap<String, Vec<f64>>, &'a BTreeMap<String, Vec<f64>>, Direction);

/// What an interval's spread was measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalBasis {
    /// How much whole runs differ: a side of several runs (Welch's t on the runs' scores).
    Runs,
    /// How much one run's samples differ: one run a side (a bootstrap of the samples), blind to how much two runs of
    /// one environment differ.
    Samples,
}

/// The 95% interval of a change in speed factors, and what it was measured from.
///
/// When a side has two or more runs, the runs are the samples: two runs of one environment differ by more than one
/// run's samples show, and a bootstrap that draws from three runs a side, whatever it draws within them, cannot know
/// how far a fourth would fall (its intervals are too narrow; with three runs a side it called 2 of 33 A/A cube pairs
/// changed). Each run's score is the mean over the tests of the logarithm of its median (negated where lower is
/// better), from the runs that measured every test; the interval is Welch's t interval of the difference of the two
/// sides' mean scores, or, when one side is a single run, Student's with the other side's spread taken for both.
/// With one run a side it is [`bootstrap_interval`] of the samples.
pub fn change_interval(pairs: &[SidesSamples], seed: u64) -> Option<((f64, f64), IntervalBasis)> {
    match run_interval(pairs) {
        Some(interval) => Some((interval, IntervalBasis::Runs)),
        None => bootstrap_interval(pairs, seed).map(|interval| (interval, IntervalBasis::Samples)),
    }
}

/// Welch's t interval of the runs' scores ([`change_interval`]); `None` unless a side has two runs that measured
/// every test and the other at least one.
fn run_interval(pairs: &[SidesSamples]) -> Option<(f64, f64)> {
    let scores = |side: usize| -> Vec<f64> {
        fn runs<'a>(pair: &SidesSamples<'a>, side: usize) -> &'a BTreeMap<String, Vec<f64>> {
            if side == 0 { pair.0 } else { pair.1 }
        }
        let Some(first) = pairs.first() else { return Vec::new() };
        runs(first, side)
            .keys()
            .filter_map(|id| {
                let mut sum = 0.0;
                for pair in pairs {
                    let median = Summary::of(runs(pair, side).get(id)?)?.median;
                    if !(median > 0.0 && median.is_finite()) {
                        return None;
                    }
                    sum += match pair.2 {
                        Direction::HigherIsBetter => median.ln(),
                        Direction::LowerIsBetter => -median.ln(),
                    };
                }
                Some(sum / pairs.len() as f64)
            })
            .collect()
    };
    let (base, side) = (scores(0), scores(1));
    let (n_base, n_side) = (base.len() as f64, side.len() as f64);
    if base.is_empty() || side.is_empty() || base.len().max(side.len()) < 2 {
        return None;
    }
    let mean = |scores: &[f64]| scores.iter().sum::<f64>() / scores.len() as f64;
    let variance = |scores: &[f64]| {
        (scores.len() >= 2).then(|| {
            let m = mean(scores);
            scores.iter().map(|s| (s - m).powi(2)).sum::<f64>() / (scores.len() - 1) as f64
        })
    };
    let (standard_error, df) = match (variance(&base), variance(&side)) {
        (Some(base_variance), Some(side_variance)) => {
            let (a, b) = (base_variance / n_base, side_variance / n_side);
            ((a + b).sqrt(), welch_satterthwaite((a, n_base), (b, n_side)))
        }
        (Some(variance), None) => ((variance * (1.0 / n_base + 1.0)).sqrt(), n_base - 1.0),
        (None, Some(variance)) => ((variance * (1.0 + 1.0 / n_side)).sqrt(), n_side - 1.0),
        (None, None) => return None,
    };
    let t = student_t_critical(0.05, df)?;
    let difference = mean(&side) - mean(&base);
    Some(((difference - t * standard_error).exp(), (difference + t * standard_error).exp()))
}

/// The 2.5th and 97.5th percentiles of the geometric mean of the tests' speed factors over bootstrap resamples of
/// both sides' samples, given run by run (a side of one run: its samples; of several: its runs, then their samples);
/// `None` when no test has more than one sample on either side.
pub fn bootstrap_interval(pairs: &[SidesSamples], seed: u64) -> Option<(f64, f64)> {
    // Runs without samples are left out once here, not in each of the resamples.
    fn filled(runs: &BTreeMap<String, Vec<f64>>) -> Vec<&[f64]> {
        runs.values().filter(|r| !r.is_empty()).map(Vec::as_slice).collect()
    }
    let pairs: Vec<_> = pairs.iter().map(|(base, side, direction)| (filled(base), filled(side), *direction)).collect();
    let count = |runs: &[&[f64]]| runs.iter().map(|r| r.len()).sum::<usize>();
    if pairs.is_empty() || pairs.iter().all(|(base, side, _)| count(base) < 2 && count(side) < 2) {
        return None;
    }
    let mut random = SplitMix(seed);
    let mut scratch = Vec::new();
    let mut means: Vec<f64> = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let mut log_sum = 0.0;
        let mut count = 0usize;
        for (base, side, direction) in &pairs {
            let (Some(b), Some(s)) = (resampled_median(base, &mut random, &mut scratch), {
                resampled_median(side, &mut random, &mut scratch)
            }) else {
                continue;
            };
            if let Some(ratio) = crate::compare::directed_ratio(b, s, *direction) {
                log_sum += ratio.ln();
                count += 1;
            }
        }
        if count > 0 {
            means.push((log_sum / count as f64).exp());
        }
    }
    if means.is_empty() {
        return None;
    }
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((means.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// The median of one bootstrap resample of a side: its runs drawn with replacement (when it has several), then each
/// drawn run's samples drawn with replacement. `runs` holds no empty run.
fn resampled_median(runs: &[&[f64]], random: &mut SplitMix, scratch: &mut Vec<f64>) -> Option<f64> {
    match runs {
        [] => return None,
        [only] if only.len() < 2 => return only.first().copied(),
        _ => {}
    }
    scratch.clear();
    for _ in 0..runs.len() {
        // One run draws only its samples, so a single run's interval is what it always was.
        let samples = if runs.len() == 1 { runs[0] } else { runs[random.below(runs.len())] };
        scratch.extend((0..samples.len()).map(|_| samples[random.below(samples.len())]));
    }
    let (middle, odd) = (scratch.len() / 2, scratch.len() % 2 == 1);
    let (below, upper, _) = scratch.select_nth_unstable_by(middle, f64::total_cmp);
    let upper = *upper;
    Some(if odd { upper } else { (below.iter().copied().fold(f64::NEG_INFINITY, f64::max) + upper) / 2.0 })
}

/// A small, fast, seedable generator (SplitMix64): the bootstrap needs reproducibility, not cryptography.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// A seed from text (FNV-1a), so every interval is reproducible.
fn seed(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// What a side's machine offers, from its runs' fingerprints (the first run that knows).
struct Machine {
    logical_cpus: Option<u32>,
    memory_bytes: Option<u64>,
    /// The first run's fingerprint, for what limits the process (affinity, cgroup quotas).
    fingerprint: Fingerprint,
}

impl Machine {
    fn of(side: &Side) -> Machine {
        let fingerprints = || side.runs.iter().map(|r| &r.fingerprint);
        Machine {
            logical_cpus: fingerprints().find_map(|f| f.cpu.threads),
            memory_bytes: fingerprints().find_map(|f| f.memory.total_bytes),
            fingerprint: fingerprints().next().cloned().unwrap_or_default(),
        }
    }
}

/// The single-threaded tests of every workload for one side: their geometric-mean speed factor and the tests that
/// moved most, in the direction of the mean.
struct SerialEvidence {
    ratio: Option<f64>,
    named: Vec<String>,
}

/// The single-threaded tests of `workload` alone (an explanation names only the workload's own tests): their
/// speed factor together, and the ones that moved most that way.
fn serial_evidence(rows: &[ComparisonRow], workload: &str, side: usize, registry: &Registry) -> SerialEvidence {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    let mut tests: Vec<(String, f64)> = Vec::new();
    for row in rows.iter().filter(|r| {
        r.workload == workload && !is_cross_check(r) && registry.single_threaded(&r.workload, &r.test_id, &r.parameters)
    }) {
        // One figure per test: its first metric.
        let key = (row.workload.as_str(), row.test_id.as_str(), row.parameters_hash.as_str());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(ratio) = row.cells.get(side).and_then(Option::as_ref).and_then(|c| c.change.as_ref()?.ratio) {
            tests.push((row.test_name(), ratio));
        }
    }
    let ratio = geometric_mean(&tests.iter().map(|(_, r)| *r).collect::<Vec<_>>());
    let slower = ratio.is_some_and(|r| r < 1.0);
    tests.sort_by(|a, b| {
        let key = |r: f64| if slower { r } else { -r };
        key(a.1).total_cmp(&key(b.1)).then_with(|| natural_cmp(&a.0, &b.0))
    });
    let named = tests
        .into_iter()
        .filter(|(_, r)| if slower { *r < 1.0 } else { *r > 1.0 })
        .take(NAMED_TESTS)
        .map(|(name, _)| name)
        .collect();
    SerialEvidence { ratio, named }
}

/// A field that differs between the baseline and one side: its name and the two values.
struct PairDifference {
    name: String,
    baseline: String,
    side: String,
}

/// The fields whose values differ between the baseline and `side` (not merely between some two sides).
fn pair_differences(environment: &[EnvironmentField], side: usize) -> Vec<PairDifference> {
    environment
        .iter()
        .filter_map(|field| {
            let (baseline, other) = (field.values.first()?, field.values.get(side)?);
            (baseline != other).then(|| PairDifference {
                name: field.name.clone(),
                baseline: baseline.clone(),
                side: other.clone(),
            })
        })
        .collect()
}

/// Memory sizes closer than this factor are the same for a verdict (the kernel's own reservations move MemTotal).
const SAME_MEMORY_WITHIN: f64 = 1.1;

/// Which environment fields speak to which resource.
fn resource_of(field: &str) -> Option<Resource> {
    match field {
        "CPU" | "Topology" | "SMT" | "Governor" | "NUMA nodes" => Some(Resource::Cpu),
        "Memory" | "Huge pages" | "Transparent huge pages" => Some(Resource::Memory),
        "Filesystem"
        | "Mount options"
        | "Device chain"
        | "Physical devices"
        | "Network storage"
        | "I/O limits"
        | "Memory-backed storage" => Some(Resource::Storage),
        "Usable CPUs" | "CPU affinity" | "CPU quota" | "Cpuset" => Some(Resource::Cpu),
        "Memory limit" => Some(Resource::Memory),
        _ => None,
    }
}

/// Fields that differ on every machine and explain nothing.
const NOT_A_DIFFERENCE: [&str; 1] = ["Host"];

/// Fields that count for every workload: where the machine runs.
const PLATFORM_FIELDS: [&str; 4] = ["Hypervisor", "Container", "Machine", "Kernel"];

/// How many times `b` is `a`, as words: `8x the`, `half the`, `25% more`, `25% less`.
fn times_words(a: f64, b: f64) -> String {
    let factor = b / a;
    if (factor - 0.5).abs() < 0.01 {
        "half the".to_string()
    } else if factor > 1.0 && factor < 1.95 {
        format!("{:.0}% more", (factor - 1.0) * 100.0)
    } else if factor < 1.0 && factor > 0.5 {
        format!("{:.0}% less", (1.0 - factor) * 100.0)
    } else if factor >= 1.0 {
        format!("{}x the", trimmed(factor))
    } else {
        format!("1/{} the", trimmed(1.0 / factor))
    }
}

/// A factor with one decimal, without a trailing `.0`.
fn trimmed(factor: f64) -> String {
    let text = format!("{factor:.1}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The sentences that may explain a workload's change, from what differs between the two environments and what
/// the single-threaded tests did.
fn explain(
    verdict: &WorkloadVerdict,
    governed_by: &[Resource],
    machines: (&Machine, &Machine),
    letters: (&str, &str),
    serial: &SerialEvidence,
    differences: &[PairDifference],
) -> Vec<String> {
    let (base, other) = machines;
    let (a, b) = letters;
    let mut sentences = Vec::new();
    let counts = governed_by.contains(&Resource::Cpu);
    if counts {
        let cpus = match (base.logical_cpus, other.logical_cpus) {
            (Some(x), Some(y)) if x != y => {
                Some(format!("{b} has {} logical CPUs of {a} ({y} vs {x})", times_words(f64::from(x), f64::from(y))))
            }
            _ => None,
        };
        let serial_text = serial
            .ratio
            .filter(|r| (r - 1.0).abs() >= 0.05 && !serial.named.is_empty())
            .map(|r| format!("its single-threaded tests are {} ({})", speed_words(r), serial.named.join(", ")));
        let more_cpus = matches!((base.logical_cpus, other.logical_cpus), (Some(x), Some(y)) if y > x);
        let fewer_cpus = matches!((base.logical_cpus, other.logical_cpus), (Some(x), Some(y)) if y < x);
        let serial_slower = serial.ratio.is_some_and(|r| r < 1.0);
        match (cpus, serial_text) {
            (Some(cpus), Some(serial_text)) => {
                let joint = if (more_cpus && serial_slower) || (fewer_cpus && !serial_slower) { "but" } else { "and" };
                sentences.push(format!("{cpus}, {joint} {serial_text}."));
            }
            (Some(cpus), None) => sentences.push(format!("{cpus}.")),
            (None, Some(serial_text)) => sentences.push(format!("On {b}, {serial_text}.")),
            (None, None) => {}
        }
    }
    let relevant = |name: &str| match resource_of(name) {
        Some(resource) => governed_by.contains(&resource),
        None => PLATFORM_FIELDS.contains(&name),
    };
    let mut limited: Vec<Resource> = Vec::new();
    for field in differences {
        if !relevant(&field.name) || field.name == "Topology" {
            continue;
        }
        if LIMIT_FIELDS.contains(&field.name.as_str()) {
            limited.extend(resource_of(&field.name));
            continue;
        }
        if field.name == "Memory" {
            if let (Some(x), Some(y)) = (base.memory_bytes, other.memory_bytes) {
                let gib = |v: u64| v as f64 / (1u64 << 30) as f64;
                let factor = gib(y) / gib(x);
                if factor < SAME_MEMORY_WITHIN && factor > 1.0 / SAME_MEMORY_WITHIN {
                    continue;
                }
                let consequence = if factor > 1.0 {
                    "more of the data fits in its caches"
                } else {
                    "less of the data fits in its caches"
                };
                sentences.push(format!(
                    "{b} has {} memory of {a} ({:.0} vs {:.0} GiB): {consequence}.",
                    times_words(gib(x), gib(y)),
                    gib(y),
                    gib(x)
                ));
            }
            continue;
        }
        let shown = |v: &str| if v.is_empty() { "-".to_string() } else { v.to_string() };
        sentences.push(format!("{}: {} on {a}, {} on {b}.", field.name, shown(&field.baseline), shown(&field.side)));
    }
    // What holds either side below its machine, where that differs and governs the workload.
    for (letter, machine) in [(a, base), (b, other)] {
        for (resource, sentence) in limit_sentences(&machine.fingerprint, letter) {
            if limited.contains(&resource) {
                sentences.push(format!("{sentence}."));
            }
        }
    }
    if sentences.is_empty() && verdict.better + verdict.worse > 0 {
        let others: Vec<&str> = differences
            .iter()
            .filter(|d| !NOT_A_DIFFERENCE.contains(&d.name.as_str()) && !relevant(&d.name))
            .map(|d| d.name.as_str())
            .collect();
        sentences.push(if others.is_empty() {
            "Nothing envbench fingerprints differs (same hardware and settings as far as it can see): look at load \
             from elsewhere, CPU steal in the sampler charts, or a change outside the fingerprint."
                .to_string()
        } else {
            format!(
                "Nothing that governs {} differs in the fingerprints (only {} differ{}, which {} not govern it): look \
                 at load from elsewhere, CPU steal in the sampler charts, or a change outside the fingerprint.",
                verdict.title,
                envbench_core::text::and_list(&others),
                if others.len() == 1 { "s" } else { "" },
                if others.len() == 1 { "does" } else { "do" }
            )
        });
    }
    sentences
}

/// What `compare --fail-if-worse` decided: the workloads whose verdict found them significantly worse than the
/// baseline by more than the threshold (the gate fails when there is one), and a line for every other workload
/// saying why it passed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gate {
    /// The largest slowdown allowed, as a fraction (0.05 for 5%).
    pub threshold: f64,
    pub failures: Vec<String>,
    pub passes: Vec<String>,
}

impl Gate {
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// Judge every side's verdicts against a largest allowed slowdown (`threshold`, a fraction: 0.05 allows 5% slower,
/// as the verdict words it: a speed factor of 1/1.05). Only a workload the verdict calls slower (its interval below
/// 1 and its change beyond the noise margin) can fail; one it cannot tell about passes, and says so, with the advice
/// that would let it decide.
pub fn gate(verdicts: &[SideVerdict], threshold: f64) -> Gate {
    let allowed = format!("{:.0}%", threshold * 100.0);
    let mut gate = Gate { threshold, failures: Vec::new(), passes: Vec::new() };
    for side in verdicts {
        for w in &side.workloads {
            let slowdown = 1.0 / w.ratio - 1.0;
            match w.decision {
                Decision::Slower if slowdown > threshold => gate.failures.push(format!(
                    "{} ({}): more than the {allowed} allowed",
                    w.summary,
                    interval_words(w.interval)
                )),
                Decision::Slower => {
                    gate.passes.push(format!("{}: within the {allowed} allowed", w.summary));
                }
                Decision::CannotTell => gate.passes.push(format!(
                    "{}: the gate passes what it cannot decide; give each side more samples to let it",
                    w.summary
                )),
                Decision::Faster | Decision::Same => gate.passes.push(w.summary.clone()),
            }
        }
    }
    gate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_in_words() {
        assert_eq!(speed_words(1.0), "about the same");
        assert_eq!(speed_words(1.015), "about the same");
        assert_eq!(speed_words(1.08), "1.08x faster");
        assert_eq!(speed_words(2.5), "2.50x faster");
        assert_eq!(speed_words(0.5), "2.00x slower");
        assert_eq!(speed_words(1.0 / 1.1), "1.10x slower");
    }

    /// Runs by id, as a comparison's cells hold them.
    fn runs(runs: &[Vec<f64>]) -> BTreeMap<String, Vec<f64>> {
        runs.iter().enumerate().map(|(i, samples)| (format!("run{i}"), samples.clone())).collect()
    }

    #[test]
    fn bootstrap_intervals_are_reproducible_and_cover_the_change() {
        let base = runs(&[vec![100.0, 102.0, 98.0, 101.0, 99.0]]);
        let side = runs(&[vec![200.0, 204.0, 196.0, 202.0, 198.0]]);
        let pairs = [(&base, &side, Direction::HigherIsBetter)];
        let (low, high) = bootstrap_interval(&pairs, 7).unwrap();
        assert!(low <= 2.0 && 2.0 <= high && low > 1.8 && high < 2.2, "{low}..{high}");
        assert_eq!(bootstrap_interval(&pairs, 7), Some((low, high)));
        assert_eq!(change_interval(&pairs, 7), Some(((low, high), IntervalBasis::Samples)), "one run a side");
        let (one_base, one_side) = (runs(&[vec![100.0]]), runs(&[vec![200.0]]));
        let single = [(&one_base, &one_side, Direction::LowerIsBetter)];
        assert_eq!(bootstrap_interval(&single, 7), None);
        assert_eq!(change_interval(&single, 7), None);
    }

    /// Four runs a side whose samples agree within each run, one of the baseline's runs 15% faster than its others
    /// (a shared host's good minute): pooled, the samples make a tight interval that leaves out 1; taking the runs as
    /// the samples lets that run weigh as one run in four, and the interval keeps 1 inside, as it must for 6% between
    /// sides whose runs differ by 15%.
    #[test]
    fn runs_that_differ_widen_the_interval() {
        let run = |level: f64| (0..5).map(|i| level + f64::from(i) * 0.01).collect::<Vec<f64>>();
        let (base, side) =
            ([run(100.0), run(100.0), run(100.0), run(115.0)], [run(106.0), run(106.0), run(106.0), run(106.0)]);
        let pooled = |r: &[Vec<f64>]| runs(&[r.concat()]);
        let (pooled_base, pooled_side) = (pooled(&base), pooled(&side));
        let tight = change_interval(&[(&pooled_base, &pooled_side, Direction::HigherIsBetter)], 7).unwrap();
        let (base, side) = (runs(&base), runs(&side));
        let by_run = change_interval(&[(&base, &side, Direction::HigherIsBetter)], 7).unwrap();
        assert!(
            tight.0.0 > 1.0 && tight.1 == IntervalBasis::Samples,
            "pooled, the difference looks certain: {tight:?}"
        );
        assert!(by_run.0.0 < 1.0 && by_run.0.1 > 1.0, "run by run, 1 is inside: {by_run:?}");
        assert_eq!(by_run.1, IntervalBasis::Runs);
    }

    /// The run interval is Welch's t interval of the runs' scores: three runs a side at 100, 102, 98 against 110, 112,
    /// 108 (each run's samples at its level) give the interval SciPy gives for the logarithms of those levels, and a
    /// time reads the other way round. A side of one run takes the other side's spread.
    #[test]
    fn the_run_interval_is_welchs_t_on_the_runs() {
        let levels = |levels: &[f64]| runs(&levels.iter().map(|l| vec![*l, *l, *l]).collect::<Vec<_>>());
        let (base, side) = (levels(&[100.0, 102.0, 98.0]), levels(&[110.0, 112.0, 108.0]));
        let ((low, high), basis) = change_interval(&[(&base, &side, Direction::HigherIsBetter)], 7).unwrap();
        assert_eq!(basis, IntervalBasis::Runs);
        // SciPy: ttest_ind(log([110, 112, 108]), log([100, 102, 98]), equal_var=False).confidence_interval(0.95)
        // is 0.051845 to 0.138821 (df 3.96), so 1.05321 to 1.14892.
        assert!((low - 1.053_21).abs() < 1e-4 && (high - 1.148_92).abs() < 1e-4, "{low}..{high}");
        let ((slow_low, slow_high), _) = change_interval(&[(&base, &side, Direction::LowerIsBetter)], 7).unwrap();
        assert!((slow_low - 1.0 / high).abs() < 1e-9 && (slow_high - 1.0 / low).abs() < 1e-9);
        let one = levels(&[110.0]);
        let ((one_low, one_high), basis) = change_interval(&[(&base, &one, Direction::HigherIsBetter)], 7).unwrap();
        assert_eq!(basis, IntervalBasis::Runs);
        // Student's t on 2 degrees of freedom with the baseline's variance for both sides: 0.99607 to 1.21510.
        assert!((one_low - 0.996_07).abs() < 1e-4 && (one_high - 1.215_10).abs() < 1e-4, "{one_low}..{one_high}");
    }

    #[test]
    fn factors_in_words() {
        assert_eq!(times_words(2.0, 16.0), "8x the");
        assert_eq!(times_words(16.0, 8.0), "half the");
        assert_eq!(times_words(16.0, 4.0), "1/4 the");
        assert_eq!(times_words(16.0, 20.0), "25% more");
        assert_eq!(times_words(16.0, 12.0), "25% less");
    }

    /// The gate fails on a workload called slower by more than the threshold, and only on that: a smaller slowdown,
    /// a change within noise and one it cannot tell about pass, each with its reason.
    #[test]
    fn the_gate_fails_only_on_a_decided_slowdown_beyond_the_threshold() {
        let verdict = |title: &str, ratio: f64, decision: Decision| WorkloadVerdict {
            workload: title.into(),
            title: title.into(),
            metrics: vec![],
            tests: 3,
            ratio,
            interval: Some((ratio * 0.98, ratio * 1.02)),
            interval_basis: Some(IntervalBasis::Runs),
            decision,
            reason: None,
            advice: None,
            better: 0,
            worse: 0,
            unchanged: 0,
            cannot_tell: 0,
            runs: [3, 3],
            summary: format!("{title} {} on B", speed_words(ratio)),
            explanations: vec![],
            cost: None,
            unit_cost: None,
        };
        let side = |workloads| SideVerdict {
            letter: "B".into(),
            name: "b".into(),
            workloads,
            caution: None,
            disturbance: vec![],
        };
        let failing = [side(vec![
            verdict("storage", 1.0 / 1.08, Decision::Slower),
            verdict("cube", 1.0 / 1.03, Decision::Slower),
            verdict("oltp", 0.5, Decision::CannotTell),
            verdict("tpch", 0.97, Decision::Same),
        ])];
        let result = gate(&failing, 0.05);
        assert!(result.failed());
        assert_eq!(result.failures.len(), 1, "{result:?}");
        assert!(result.failures[0].starts_with("storage 1.08x slower on B (95% interval"), "{result:?}");
        assert!(result.failures[0].ends_with("more than the 5% allowed"), "{result:?}");
        assert_eq!(result.passes.len(), 3);
        assert!(result.passes[0].contains("within the 5% allowed"), "{result:?}");
        assert!(result.passes[1].contains("cannot decide"), "{result:?}");
        assert!(!gate(&failing, 0.10).failed(), "8% slower passes a 10% gate");
    }

    /// Issue #54's successor, #55: three answers. Decided only when the whole interval lies past the margin, the same
    /// only when it lies inside it; "cannot tell" otherwise, and whenever disturbance could have made the answer.
    #[test]
    fn the_verdict_says_cannot_tell_when_it_cannot() {
        let letters = ("A", "B");
        let quiet = [false, false];
        let one = [None, None];
        let decided = |interval, disturbed, spread| decide(Some(interval), 0.05, disturbed, spread, letters);
        assert_eq!(decided((0.45, 0.55), quiet, one).0, Decision::Slower);
        assert_eq!(decided((1.3, 1.6), quiet, one).0, Decision::Faster);
        assert_eq!(decided((0.98, 1.03), quiet, one).0, Decision::Same);
        // A change beyond the margin stays decided on a disturbed side (its block says part may be the other work's).
        assert_eq!(decided((0.45, 0.55), [false, true], one).0, Decision::Slower);
        assert_eq!(decided((1.3, 1.6), [true, true], one).0, Decision::Faster);
        // "About the same" on a disturbed side may hide a change: never said.
        let (decision, reason, advice) = decided((0.98, 1.03), [true, true], one);
        assert_eq!(decision, Decision::CannotTell);
        assert!(reason.unwrap().contains("A and B were disturbed"));
        assert!(advice.unwrap().contains("when the host is quiet"));
        let (_, reason, _) = decided((0.98, 1.03), [false, true], one);
        assert!(reason.unwrap().starts_with("B was disturbed while it measured"));
        // The cases: 1.51x faster in an interval from 4.95x slower to 5.51x faster, B's runs 2x apart; and
        // 1.28x slower in one from 1.91x slower to 1.06x faster. Neither is "within noise".
        let (decision, reason, _) = decided((1.0 / 4.95, 5.51), quiet, [None, Some(2.0)]);
        assert_eq!(decision, Decision::CannotTell);
        assert_eq!(
            reason.unwrap(),
            "the runs of B disagree by 2.00x, so the 95% interval is wider than the noise margin (5%) or reaches \
             across it"
        );
        assert_eq!(decided((1.0 / 1.91, 1.06), quiet, one).0, Decision::CannotTell);
        assert_eq!(decide(None, 0.05, quiet, one, letters).0, Decision::CannotTell);
    }

    #[test]
    fn costs_read_as_money() {
        let shown: Vec<String> = [0.0005, 0.00025, 0.02, 0.0215, 12.346, 1234.5, 2.0].map(cost_number).to_vec();
        assert_eq!(shown, ["0.0005", "0.00025", "0.02", "0.0215", "12.35", "1234.50", "2.00"]);
    }

    #[test]
    fn work_per_unit_of_cost_is_speed_over_price() {
        // 1.52x faster at 2.10 against 1.84 an hour: 1.33x the work for the money.
        assert!((work_per_cost(1.52, [1.84, 2.10]) - 1.3318).abs() < 1e-3);
        assert!((work_per_cost(1.0, [1.0, 2.0]) - 0.5).abs() < 1e-12);
        assert_eq!(number_words(1.84), "1.84");
        assert_eq!(number_words(2.0), "2");
    }
}
