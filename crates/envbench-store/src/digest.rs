//! What pages show of a result with many samples: a digest of its order statistics, kept beside the samples when the
//! result is stored, so that a page costs the same however many samples a run has. The samples themselves are never
//! changed or dropped: `load_run` (and the read API, export, push, compare) gives every one of them.

use envbench_core::stats::Summary;

/// Results with more samples than this are shown on pages from their digest.
pub const DIGEST_ABOVE: usize = 1_000;

/// The order statistics a digest holds: the minimum, the maximum, the median and the 998 evenly spaced between.
pub const DIGEST_POINTS: usize = 1_001;

/// The flag a result shown from its digest carries on pages (`digest of 400001 samples`).
pub fn digest_flag(samples: usize) -> String {
    format!("{DIGEST_FLAG_PREFIX}{samples} samples")
}

/// How every [`digest_flag`] begins.
const DIGEST_FLAG_PREFIX: &str = "digest of ";

/// True for a flag [`digest_flag`] made.
pub fn is_digest_flag(flag: &str) -> bool {
    flag.starts_with(DIGEST_FLAG_PREFIX)
}

/// The digest of `samples`: [`DIGEST_POINTS`] order statistics, ascending, evenly spaced by rank from the minimum to
/// the maximum, the middle one the exact median (as [`Summary`] computes it), so that the median of the digest is the
/// median of the samples, bit for bit. `None` for a result small enough to show whole, or with a NaN.
pub fn sample_digest(samples: &[f64]) -> Option<Vec<f64>> {
    if samples.len() <= DIGEST_ABOVE {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    // Summary sorts its own copy again; of one already sorted, that is a single pass.
    let median = Summary::of(&sorted)?.median;
    let last = sorted.len() - 1;
    let steps = DIGEST_POINTS - 1;
    let mut points: Vec<f64> = (0..DIGEST_POINTS).map(|i| sorted[(i * last + steps / 2) / steps]).collect();
    points[DIGEST_POINTS / 2] = median;
    Some(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_keeps_the_extremes_and_the_exact_median() {
        assert_eq!(sample_digest(&[1.0; DIGEST_ABOVE]), None);
        for count in [DIGEST_ABOVE + 1, 4_000, 400_001] {
            // A shuffled, skewed series: the digest is ranked, not the first samples.
            let samples: Vec<f64> = (0..count).map(|i| ((i * 7_919) % count) as f64).map(|v| v * v / 3.0).collect();
            let digest = sample_digest(&samples).unwrap();
            let summary = Summary::of(&samples).unwrap();
            let shown = Summary::of(&digest).unwrap();
            assert_eq!(digest.len(), DIGEST_POINTS);
            assert_eq!((shown.min, shown.max), (summary.min, summary.max));
            assert_eq!(shown.median.to_bits(), summary.median.to_bits(), "{count} samples");
            assert!(digest.windows(2).all(|w| w[0] <= w[1]), "ascending");
            // The 90th percentile of the digest is the samples' to within a thousandth of their ranks.
            let rank = |v: f64| samples.iter().filter(|s| **s < v).count() as f64 / count as f64;
            assert!((rank(digest[900]) - 0.9).abs() <= 0.001, "{}", rank(digest[900]));
        }
    }
}
