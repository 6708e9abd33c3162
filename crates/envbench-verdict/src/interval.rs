//! The 95% interval of a workload's change between two sides. With several runs a side, the runs are the samples
//! (Welch's t on each run's score), since two runs of one environment differ by more than one run's samples show;
//! with one run a side, a bootstrap of every test's samples on both sides, resampled a fixed number of times with a
//! fixed seed, so the same store always gives the same interval.

use crate::rows::directed_ratio;
use envbench_core::model::Direction;
use envbench_core::stats::{Summary, student_t_critical, welch_satterthwaite};
use serde::Serialize;
use std::collections::BTreeMap;

/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

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
            if let Some(ratio) = directed_ratio(b, s, *direction) {
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
pub(crate) fn seed(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
