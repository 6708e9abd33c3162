//! Per-I/O completion latency: an HDR histogram in nanoseconds (3 significant digits), mergeable across threads and
//! runs, with the exact count, sum and maximum kept beside it so mean and max are not rounded to bucket edges.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The largest latency the histogram resolves: one hour. Longer ones are counted in the top bucket (the exact
/// maximum is still kept).
const HIGHEST_TRACKABLE_NS: u64 = 3_600_000_000_000;

/// Latencies of many I/Os.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    histogram: Histogram<u64>,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> LatencyHistogram {
        let histogram =
            Histogram::new_with_bounds(1, HIGHEST_TRACKABLE_NS, 3).expect("constant histogram bounds are valid");
        LatencyHistogram { histogram, sum_ns: 0, max_ns: 0 }
    }

    /// Record one latency.
    #[inline]
    pub fn record_ns(&mut self, latency_ns: u64) {
        self.histogram.saturating_record(latency_ns.max(1));
        self.sum_ns += u128::from(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
    }

    /// Add every latency of `other` to this one.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.histogram.add(&other.histogram).expect("histograms with the same bounds always merge");
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Forget every latency recorded (keeps the allocation).
    pub fn reset(&mut self) {
        self.histogram.reset();
        self.sum_ns = 0;
        self.max_ns = 0;
    }

    /// How many latencies were recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The exact largest latency, 0 when empty.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The exact mean, 0 when empty.
    pub fn mean_ns(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            count => self.sum_ns as f64 / count as f64,
        }
    }

    /// The latency at `quantile` (0..=1), to 3 significant digits, and never above the exact largest: the
    /// histogram answers with the top of a value's bucket, which for the largest values (a p99 of a few hundred
    /// transactions is their max) lies above what was recorded, a percentile beyond the max that cannot be.
    pub fn quantile_ns(&self, quantile: f64) -> u64 {
        self.histogram.value_at_quantile(quantile).min(self.max_ns)
    }

    /// Mean, percentiles and max in microseconds.
    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            count: self.count(),
            mean_us: self.mean_ns() / 1000.0,
            p50_us: us(self.quantile_ns(0.50)),
            p90_us: us(self.quantile_ns(0.90)),
            p99_us: us(self.quantile_ns(0.99)),
            p99_9_us: us(self.quantile_ns(0.999)),
            max_us: us(self.max_ns),
        }
    }
}

/// A histogram as it is stored and sent between hosts: each recorded bucket (its highest equivalent value, in ns)
/// with its count, and the exact sum and maximum. Histograms read back from documents merge exactly as the originals
/// would have: a fleet's latency percentiles are those of every I/O of every host, not an average of percentiles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramDocument {
    pub sum_ns: u64,
    pub max_ns: u64,
    /// (bucket value in ns, count), ascending.
    pub buckets: Vec<(u64, u64)>,
}

impl LatencyHistogram {
    /// The histogram as a document.
    pub fn to_document(&self) -> HistogramDocument {
        HistogramDocument {
            sum_ns: u64::try_from(self.sum_ns).unwrap_or(u64::MAX),
            max_ns: self.max_ns,
            buckets: self
                .histogram
                .iter_recorded()
                .map(|bucket| (bucket.value_iterated_to(), bucket.count_at_value()))
                .collect(),
        }
    }

    /// The histogram a document describes.
    pub fn from_document(document: &HistogramDocument) -> LatencyHistogram {
        let mut histogram = LatencyHistogram::new();
        for &(value, count) in &document.buckets {
            histogram.histogram.saturating_record_n(value.max(1), count);
        }
        histogram.sum_ns = u128::from(document.sum_ns);
        histogram.max_ns = document.max_ns;
        histogram
    }
}

/// A latency distribution summed up, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// How many I/Os it covers.
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A percentile is never above the max: with few values the top one's bucket ends above it (#66: a loaded host's
    /// few New-Orders showed a p99 past their max).
    #[test]
    fn no_percentile_lies_above_the_largest_latency() {
        let mut histogram = LatencyHistogram::new();
        for value in [1_000u64, 28_123_457, 28_123_999] {
            histogram.record_ns(value);
        }
        assert!(histogram.histogram.value_at_quantile(0.99) > histogram.max_ns(), "the bucket's top is above the max");
        for quantile in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert!(histogram.quantile_ns(quantile) <= histogram.max_ns(), "{quantile}");
        }
        assert_eq!(histogram.quantile_ns(1.0), 28_123_999);
        let summary = histogram.summary();
        assert!(
            summary.p50_us <= summary.p90_us
                && summary.p99_us <= summary.p99_9_us
                && summary.p99_9_us <= summary.max_us
        );
    }

    #[test]
    fn merging_equals_recording_the_union() {
        let first_values = [1_000u64, 2_000, 3_000, 250_000];
        let second_values = [500u64, 9_999_999, 42_000];
        let mut first = LatencyHistogram::new();
        let mut second = LatencyHistogram::new();
        let mut union = LatencyHistogram::new();
        for &value in &first_values {
            first.record_ns(value);
            union.record_ns(value);
        }
        for &value in &second_values {
            second.record_ns(value);
            union.record_ns(value);
        }
        first.merge(&second);
        assert_eq!(first.count(), 7);
        assert_eq!(first.count(), union.count());
        assert_eq!(first.max_ns(), 9_999_999);
        assert_eq!(first.max_ns(), union.max_ns());
        assert_eq!(first.mean_ns(), union.mean_ns());
        for quantile in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(first.quantile_ns(quantile), union.quantile_ns(quantile), "quantile {quantile}");
        }
        assert_eq!(first.summary(), union.summary());
    }

    #[test]
    fn a_histogram_survives_its_document_and_merges_the_same() {
        let mut first = LatencyHistogram::new();
        let mut second = LatencyHistogram::new();
        for value in (1..5000u64).map(|v| v * 997) {
            first.record_ns(value);
            second.record_ns(value * 3 + 17);
        }
        let text = serde_json::to_string(&first.to_document()).unwrap();
        let back = LatencyHistogram::from_document(&serde_json::from_str(&text).unwrap());
        assert_eq!(back.summary(), first.summary());
        let mut merged = LatencyHistogram::from_document(&first.to_document());
        merged.merge(&LatencyHistogram::from_document(&second.to_document()));
        first.merge(&second);
        assert_eq!(merged.summary(), first.summary());
        assert_eq!(merged.count(), 9998);
    }

    #[test]
    fn summary_is_in_microseconds() {
        let mut histogram = LatencyHistogram::new();
        for value in 1..=1000u64 {
            histogram.record_ns(value * 1000);
        }
        let summary = histogram.summary();
        assert_eq!(summary.count, 1000);
        assert!((summary.mean_us - 500.5).abs() < 1e-9);
        assert!((summary.p50_us - 500.0).abs() <= 0.5, "{summary:?}");
        assert!((summary.p99_us - 990.0).abs() <= 1.0, "{summary:?}");
        assert_eq!(summary.max_us, 1000.0);
    }

    #[test]
    fn empty_histogram_summarizes_to_zero() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
    }
}
