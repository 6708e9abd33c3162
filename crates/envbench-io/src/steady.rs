//! Whether a sustained write test's speed lasts: SNIA's steady-state rule over a per-second series, the burst and
//! sustained figures, and the cliff where throughput fell by more than half (an SSD's SLC cache filling, a cloud
//! volume's burst credits running out, a controller cache filling).
//!
//! SNIA's Solid State Storage Performance Test Specification calls a measurement window steady when, over five
//! consecutive rounds, the range of the round values is within 20% of their mean and the excursion of their
//! least-squares line across the window is within 10% of it. Its rounds are one minute long; shorter runs scale them
//! down ([`round_seconds`]) so a 60-second run is still judged over five rounds.

use serde::{Deserialize, Serialize};

/// Rounds in SNIA's measurement window.
pub const WINDOW_ROUNDS: usize = 5;
/// The largest range of the window's round values, as a fraction of their mean.
pub const MAX_RANGE: f64 = 0.20;
/// The largest excursion of the window's best-fit line (slope times the window's span), as a fraction of the mean.
pub const MAX_SLOPE_EXCURSION: f64 = 0.10;
/// The seconds from the start whose throughput is the burst figure.
pub const BURST_SECONDS: usize = 30;
/// A cliff is throughput below this fraction of the burst figure...
pub const CLIFF_FRACTION: f64 = 0.5;
/// ... over a moving average of this many seconds...
const CLIFF_SMOOTHING_SECONDS: usize = 5;
/// ... that stays below it for at least this many seconds (or to the end of the run): a dip is not a cliff.
const CLIFF_HOLD_SECONDS: usize = 10;

/// The length of a round for a run of `total_seconds`: SNIA's minute for runs of ten minutes or more, a tenth of the
/// run for shorter ones (so the five-round window covers the second half), at least one second.
pub fn round_seconds(total_seconds: usize) -> usize {
    (total_seconds / 10).clamp(1, 60)
}

/// A measurement window that met SNIA's steady-state rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The window's first and last second (end exclusive), from the start of the series.
    pub start_s: usize,
    pub end_s: usize,
    pub round_s: usize,
    /// The mean of the window's rounds: the sustained figure.
    pub mean: f64,
    /// The range of the round values, in percent of the mean.
    pub range_percent: f64,
    /// The excursion of the best-fit line across the window, in percent of the mean.
    pub slope_percent: f64,
}

/// The round values of a per-second series: the mean of each whole round.
fn rounds(series: &[f64], round_s: usize) -> Vec<f64> {
    series.chunks_exact(round_s).map(|round| round.iter().sum::<f64>() / round_s as f64).collect()
}

/// The least-squares slope of `values` against 0, 1, 2, ...
fn slope(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / n;
    let (mut covariance, mut variance) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - mean_x;
        covariance += dx * (y - mean_y);
        variance += dx * dx;
    }
    if variance == 0.0 { 0.0 } else { covariance / variance }
}

/// The first window of [`WINDOW_ROUNDS`] rounds that is steady, judged on rounds of `round_s` seconds; `None` when
/// no window is (the result is then flagged `not-steady`).
pub fn find_steady_state(series: &[f64], round_s: usize) -> Option<SteadyState> {
    let round_s = round_s.max(1);
    let values = rounds(series, round_s);
    values.windows(WINDOW_ROUNDS).enumerate().find_map(|(first, window)| {
        let mean = window.iter().sum::<f64>() / window.len() as f64;
        if mean <= 0.0 {
            return None;
        }
        let (min, max) = window.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        let range = (max - min) / mean;
        let excursion = (slope(window) * (window.len() - 1) as f64).abs() / mean;
        (range <= MAX_RANGE && excursion <= MAX_SLOPE_EXCURSION).then(|| SteadyState {
            start_s: first * round_s,
            end_s: (first + WINDOW_ROUNDS) * round_s,
            round_s,
            mean,
            range_percent: range * 100.0,
            slope_percent: excursion * 100.0,
        })
    })
}

/// The mean of the first [`BURST_SECONDS`] (or of the whole series when it is shorter).
pub fn burst(series: &[f64]) -> Option<f64> {
    let head = &series[..series.len().min(BURST_SECONDS)];
    (!head.is_empty()).then(|| head.iter().sum::<f64>() / head.len() as f64)
}

/// Where throughput fell by more than half.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// The second (from the start) at which the smoothed throughput first fell below half the burst figure.
    pub at_s: usize,
    /// What had been written by then, in the series' unit times seconds (MB when the series is MB/s).
    pub written_before: f64,
    /// The burst figure, and the mean after the cliff.
    pub before: f64,
    pub after: f64,
}

/// The cliff of a per-second throughput series: the first second from which the five-second moving average stays
/// below half the burst figure for at least ten seconds (or to the end). `None` when the speed held.
pub fn find_cliff(series: &[f64]) -> Option<Cliff> {
    let before = burst(series)?;
    if before <= 0.0 || series.len() < CLIFF_SMOOTHING_SECONDS {
        return None;
    }
    let smoothed: Vec<f64> = series
        .windows(CLIFF_SMOOTHING_SECONDS)
        .map(|w| w.iter().sum::<f64>() / CLIFF_SMOOTHING_SECONDS as f64)
        .collect();
    let limit = before * CLIFF_FRACTION;
    let start = (0..smoothed.len()).find(|&i| {
        let held = &smoothed[i..smoothed.len().min(i + CLIFF_HOLD_SECONDS)];
        held.iter().all(|v| *v < limit) && (held.len() == CLIFF_HOLD_SECONDS || i + held.len() == smoothed.len())
    })?;
    // The moving average at `start` covers seconds start..start+5: the fall is at the first of them below the limit.
    let at_s = (start..start + CLIFF_SMOOTHING_SECONDS).find(|&s| series[s] < limit).unwrap_or(start);
    let after_values = &series[at_s..];
    Some(Cliff {
        at_s,
        written_before: series[..at_s].iter().sum(),
        before,
        after: after_values.iter().sum::<f64>() / after_values.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A series with a little deterministic ripple (+-2%).
    fn rippled(values: impl Iterator<Item = f64>) -> Vec<f64> {
        values.enumerate().map(|(i, v)| v * (1.0 + 0.02 * ((i * 7919 % 13) as f64 / 6.0 - 1.0))).collect()
    }

    #[test]
    fn rounds_scale_down_for_short_runs() {
        assert_eq!(round_seconds(600), 60);
        assert_eq!(round_seconds(3600), 60);
        assert_eq!(round_seconds(60), 6);
        assert_eq!(round_seconds(5), 1);
    }

    #[test]
    fn a_flat_series_is_steady_from_the_start_and_has_no_cliff() {
        let series = rippled(std::iter::repeat_n(500.0, 600));
        let steady = find_steady_state(&series, round_seconds(series.len())).unwrap();
        assert_eq!((steady.start_s, steady.end_s, steady.round_s), (0, 300, 60));
        assert!((steady.mean - 500.0).abs() < 10.0);
        assert!(steady.range_percent < 20.0 && steady.slope_percent < 10.0);
        assert_eq!(find_cliff(&series), None);
        assert!((burst(&series).unwrap() - 500.0).abs() < 10.0);
    }

    #[test]
    fn a_slow_drift_never_settles() {
        // From 1000 MB/s down to 400 over ten minutes: each five-minute window loses about 30% of its mean.
        let series = rippled((0..600).map(|s| 1000.0 - s as f64));
        assert_eq!(find_steady_state(&series, 60), None);
        // It never halves within a hold, until near the end where it does.
        let cliff = find_cliff(&series).unwrap();
        assert!(cliff.at_s > 480, "{cliff:?}");
    }

    #[test]
    fn a_step_down_is_a_cliff_and_steady_state_comes_after_it() {
        // An SLC cache: 2000 MB/s for 120 s, then 400 MB/s.
        let series = rippled((0..600).map(|s| if s < 120 { 2000.0 } else { 400.0 }));
        let cliff = find_cliff(&series).unwrap();
        assert_eq!(cliff.at_s, 120);
        assert!((cliff.written_before - 240_000.0).abs() < 5_000.0, "{cliff:?}");
        assert!((cliff.before - 2000.0).abs() < 40.0 && (cliff.after - 400.0).abs() < 10.0);
        let steady = find_steady_state(&series, 60).unwrap();
        assert_eq!(steady.start_s, 120, "the first window wholly after the step");
        assert!((steady.mean - 400.0).abs() < 10.0);
    }

    #[test]
    fn a_short_dip_is_not_a_cliff() {
        let mut series = rippled(std::iter::repeat_n(800.0, 120));
        for value in &mut series[60..66] {
            *value = 100.0;
        }
        assert_eq!(find_cliff(&series), None);
        // A fall in the last seconds still counts, though it cannot be held for ten.
        let mut ending = rippled(std::iter::repeat_n(800.0, 60));
        for value in &mut ending[54..] {
            *value = 50.0;
        }
        assert_eq!(find_cliff(&ending).unwrap().at_s, 54);
    }

    #[test]
    fn empty_and_zero_series_have_no_verdict() {
        assert_eq!(find_steady_state(&[], 60), None);
        assert_eq!(find_steady_state(&[0.0; 600], 60), None);
        assert_eq!(find_cliff(&[]), None);
        assert_eq!(burst(&[]), None);
    }
}
