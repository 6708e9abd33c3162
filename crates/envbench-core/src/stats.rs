//! Statistics rules of the specification: keep raw samples, summarize with mean and median, show spread
//! (min..max and coefficient of variation), flag a coefficient of variation over 5% as noisy.

use serde::{Deserialize, Serialize};

/// Above this coefficient of variation a test is flagged as noisy.
pub const NOISY_CV: f64 = 0.05;

/// A summary of raw samples. `cv` is the sample standard deviation over the mean (0 for fewer than two samples).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub stddev: f64,
    pub cv: f64,
}

impl Summary {
    /// Summarize samples; `None` when there are none (or any is not a number).
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|v| v.is_nan()) {
            return None;
        }
        let count = samples.len();
        let mean = samples.iter().sum::<f64>() / count as f64;
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = if count % 2 == 1 { sorted[count / 2] } else { (sorted[count / 2 - 1] + sorted[count / 2]) / 2.0 };
        let stddev = if count > 1 {
            (samples.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1) as f64).sqrt()
        } else {
            0.0
        };
        let cv = if mean != 0.0 { stddev / mean.abs() } else { 0.0 };
        Some(Summary { count, mean, median, min: sorted[0], max: sorted[count - 1], stddev, cv })
    }

    /// True when the coefficient of variation exceeds 5%.
    pub fn is_noisy(&self) -> bool {
        self.cv > NOISY_CV
    }
}

/// The geometric mean of positive values; `None` when empty or when any value is not positive.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.count, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert!((s.stddev - 2.138089935299395).abs() < 1e-12);
        assert!((s.cv - 0.427617987059879).abs() < 1e-12);
        assert!(s.is_noisy());
    }

    #[test]
    fn single_sample_has_no_spread() {
        let s = Summary::of(&[3.0]).unwrap();
        assert_eq!((s.median, s.stddev, s.cv), (3.0, 0.0, 0.0));
        assert!(!s.is_noisy());
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn geometric_mean_of_known_values() {
        assert!((geometric_mean(&[1.0, 10.0, 100.0]).unwrap() - 10.0).abs() < 1e-12);
        assert!(geometric_mean(&[1.0, 0.0]).is_none());
        assert!(geometric_mean(&[]).is_none());
    }
}
