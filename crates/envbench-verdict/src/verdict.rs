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
//!
//! The interval itself is worked out in `interval`, the explaining sentences in `explain`, what the work costs in
//! `cost`; the `--fail-if-worse` gate over these verdicts is in `gate`.

use crate::cost::{UnitCost, cost_words, price_per_hour, unit_costs, work_per_cost};
use crate::environment::EnvironmentField;
use crate::explain::{Machine, explain, pair_differences, serial_evidence};
use crate::interval::{IntervalBasis, SidesSamples, change_interval, seed};
use crate::rows::{ComparisonRow, Significance, beyond, is_cross_check};
use crate::side::Side;
use crate::words::{cost_number, speed_words};
use envbench_core::model::{MetricKind, StoredRun, metric_kind};
use envbench_core::sampler::DISTURBED_FLAG;
use envbench_core::stats::{Summary, geometric_mean};
use envbench_core::workload::Registry;
use serde::Serialize;

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
    /// Said once under the workloads when one cannot tell for noise: what would let it tell, as fits the two sides
    /// (a side pinned to fewer CPUs on purpose is not told to pin).
    pub advice: Option<String>,
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
    /// What would let it tell, where it is the workload's own: `rerun with --repeat 5`. Advice for noise is the
    /// sides' ([`SideVerdict::advice`]), said once.
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
            Decision::CannotTell => {
                let reason = self.reason.as_deref().unwrap_or("too few samples");
                let advice = self.advice.as_ref().map_or(String::new(), |advice| format!("; {advice}"));
                // `self.interval` is a speed factor's: above 1 is faster.
                match self.interval {
                    // The interval lies on one side of "the same": the estimate and its direction are, only whether the change passes the margin is not (the line gives the interval).
                    Some((low, high)) if low > 1.0 || high < 1.0 => format!(
                        "cannot tell, probably {}, but maybe within noise: {reason}{advice}",
                        speed_words(self.ratio)
                    ),
                    _ => format!("cannot tell: {reason}{advice}"),
                }
            }
        }
    }
}

/// The tests of a comparison that make a workload's verdict: per test (and parameter set), the first of the
/// workload's headline metrics it has, or its first time or rate when the workload names none (a spread or a count
/// says nothing of speed). Cross-checks by other tools are left out.
pub fn headline_rows<'a>(rows: &'a [ComparisonRow], workload: &str, registry: &Registry) -> Vec<&'a ComparisonRow> {
    let preferred = registry.read_back(workload).headline_metrics();
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
                        &verdict.title,
                        verdict.better + verdict.worse,
                        registry.read_back(workload).governed_by(),
                        (&machines[0], &machines[side]),
                        (&letters[0], &letters[side]),
                        &serial,
                        &pair_differences(environment, side),
                    );
                    verdict.explanations.splice(0..0, slower_words(&slower_tests(rows, workload, side, registry)));
                    if let (Some(base), Some(other)) = (price_per_hour(&sides[0]), price_per_hour(&sides[side])) {
                        verdict.cost = Some(work_per_cost(verdict.ratio, [base, other]));
                        verdict.explanations.push(cost_words(
                            verdict.ratio,
                            [base, other],
                            (&letters[0], &letters[side]),
                        ));
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
            // The advice for noise is the sides', said once; a workload keeps only its own (the option that gives it
            // more samples).
            let mut workloads = workloads;
            let noisy = workloads.iter().any(|w| w.advice.as_deref() == Some(QUIET));
            let advice = noisy.then(|| {
                let pinned: Vec<&str> = [(0, &letters[0]), (side, &letters[side])]
                    .into_iter()
                    .filter(|(i, _)| machines[*i].pinned())
                    .map(|(_, l)| l.as_str())
                    .collect();
                noise_advice(&pinned)
            });
            for workload in &mut workloads {
                if workload.advice.as_deref() == Some(QUIET) {
                    workload.advice = None;
                }
            }
            SideVerdict {
                letter: letters[side].clone(),
                name: sides[side].name.clone(),
                workloads,
                caution,
                disturbance,
                advice,
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
        (
            Decision::CannotTell,
            Some(samples),
            Some(format!("rerun with {}", registry.read_back(workload).more_samples())),
        )
    } else {
        let disturbed = [is_disturbed(headline, 0), is_disturbed(headline, side)];
        let spread = [0, side].map(|index| runs_disagree(headline, index));
        decide(interval, registry.read_back(workload).noise_margin(), disturbed, spread, letters)
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

/// The workload's tests that got significantly slower on `side`, by the metric it names them by, the worst first and
/// as many as it names ([`envbench_core::workload::ReadBack::slower_tests_named`]): none for most workloads.
fn slower_tests(rows: &[ComparisonRow], workload: &str, side: usize, registry: &Registry) -> Vec<(String, f64)> {
    let Some((metric, count)) = registry.read_back(workload).slower_tests_named() else { return Vec::new() };
    let mut slower: Vec<(String, f64)> = rows
        .iter()
        .filter(|row| row.workload == workload && row.metric == metric)
        .filter_map(|row| {
            let change = row.cells.get(side)?.as_ref()?.change.as_ref()?;
            let ratio = change.ratio?;
            (change.significance == Significance::Significant && ratio < 1.0).then(|| (row.test_name(), ratio))
        })
        .collect();
    slower.sort_by(|a, b| a.1.total_cmp(&b.1));
    slower.truncate(count);
    slower
}

/// The sentence that names the tests that got slower, the worst first (`None` when there are none to name).
fn slower_words(slower: &[(String, f64)]) -> Option<String> {
    (!slower.is_empty()).then(|| {
        let named: Vec<String> =
            slower.iter().map(|(test, ratio)| format!("{test}: {}", speed_words(*ratio))).collect();
        format!("Slower, the worst first: {}.", named.join("; "))
    })
}

/// The advice of a workload that cannot tell for noise, as [`decide`] gives it; a side's verdict says it once, in the
/// words [`noise_advice`] fits to the sides.
const QUIET: &str = "run each side again when the host is quiet (envbench flags the runs it finds disturbed), or \
                     pin each to CPUs of its own (taskset -c)";

/// What lets a verdict tell through noise, for sides of which `pinned` run held to fewer CPUs than their machine
/// has: a pin is the environment being compared, so the pinned are never told to pin.
fn noise_advice(pinned: &[&str]) -> String {
    match pinned {
        [] => QUIET.to_string(),
        [one] => format!(
            "run each side again when the host is quiet (envbench flags the runs it finds disturbed), and more runs \
             under each label narrow the interval; {one} is pinned to fewer CPUs on purpose, which is the environment \
             compared, not noise"
        ),
        _ => format!(
            "run each side again when the host is quiet (envbench flags the runs it finds disturbed), and more runs \
             under each label narrow the interval; {} are pinned to fewer CPUs on purpose, which is the environment \
             compared, not noise",
            pinned.join(" and ")
        ),
    }
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
    let quiet = QUIET;
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
    if low > 1.0 || high < 1.0 {
        return cannot(format!("{why}the 95% interval reaches inside {margin_words}"));
    }
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
pub fn disturbance_count(side: &Side) -> Option<String> {
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
         cannot show. Run each again under its label (two more make three): compare takes every run of a label, \
         and each interval then weighs how much the runs differ."
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
#[cfg(test)]
mod tests {
    use super::*;

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
}
