//! A matched result across the sides and each side's figures for it: the row, its cells, a cell's change against the
//! baseline and whether that change can be trusted, with the rules that decide it (significance, the noise margin,
//! direction-aware ratios). The comparison builds these rows; the verdict, the renderers and the charts read them.

use envbench_core::model::Direction;
use envbench_core::stats::{NOISE_MARGIN, PValueMethod, SIGNIFICANCE_ALPHA, Summary};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One matched result across the sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub workload: String,
    pub workload_version: u32,
    pub test_id: String,
    /// When the same test appears with different parameters (e.g. a thread sweep), the parameters that tell the
    /// variants apart, e.g. `calc_threads=4`.
    pub variant: Option<String>,
    pub parameters: Value,
    pub parameters_hash: String,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    /// One cell per side, `None` where the side lacks this result.
    pub cells: Vec<Option<Cell>>,
}

impl ComparisonRow {
    /// The test name with its variant, for tables and charts.
    pub fn test_name(&self) -> String {
        match &self.variant {
            Some(variant) => format!("{} [{variant}]", self.test_id),
            None => self.test_id.clone(),
        }
    }
}

/// One side's figures for one result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Every sample of every run of the side, pooled.
    pub samples: Vec<f64>,
    /// The same samples run by run, by run id (runs with samples only), so the verdict's interval can take whole
    /// runs as its samples: two runs of one environment differ by more than one run's samples do.
    #[serde(skip)]
    pub run_samples: BTreeMap<String, Vec<f64>>,
    /// How many runs contributed samples.
    pub runs: usize,
    pub summary: Summary,
    /// Coefficient of variation over 5%.
    pub noisy: bool,
    /// The records' own flags (e.g. `cache-inflated`), from every run.
    pub flags: Vec<String>,
    /// Against the baseline; `None` for the baseline itself or when the baseline lacks this result.
    pub change: Option<Change>,
}

/// A side against the baseline for one result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// Side median over baseline median, inverted for lower-is-better metrics: above 1 is better.
    pub ratio: Option<f64>,
    /// How much better (positive) or worse (negative) the side is, in percent of the baseline.
    pub better_percent: Option<f64>,
    pub significance: Significance,
    /// The two-sided p-value, when the samples allowed a test.
    pub p_value: Option<f64>,
    pub method: Option<PValueMethod>,
}

/// Whether a change can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Significance {
    /// p below alpha and the change beyond the noise margin.
    Significant,
    /// p at or above alpha: shown as `~`.
    NotSignificant,
    /// p below alpha but the change within the noise margin ([`NOISE_MARGIN`]), what two runs of one environment
    /// differ by: shown as `~`, counted as about the same.
    Negligible,
    /// A single sample on a side: nothing can be tested, shown as `?` and counted as "cannot tell", never as
    /// unchanged.
    TooFewSamples,
}

impl Significance {
    /// `~` unless significant.
    pub fn is_significant(self) -> bool {
        self == Significance::Significant
    }
}

/// A p-value and a change as a significance: below alpha and beyond the noise margin, or not.
pub fn significance(p_value: f64, ratio: Option<f64>) -> Significance {
    if p_value >= SIGNIFICANCE_ALPHA {
        Significance::NotSignificant
    } else if ratio.is_some_and(beyond_noise) {
        Significance::Significant
    } else {
        Significance::Negligible
    }
}

/// True when a speed factor differs from 1 by more than [`NOISE_MARGIN`], in either direction alike (1.05x faster
/// and 1.05x slower are the same distance).
pub fn beyond_noise(ratio: f64) -> bool {
    beyond(ratio, NOISE_MARGIN)
}

/// True when a speed factor differs from 1 by more than `margin`, either way.
pub fn beyond(ratio: f64, margin: f64) -> bool {
    ratio.is_finite() && ratio > 0.0 && ratio.ln().abs() > (1.0 + margin).ln()
}

/// Side over baseline, inverted when lower is better, so that above 1 always means better. `None` when either is not
/// positive (a ratio of a zero or negative median means nothing).
pub fn directed_ratio(baseline: f64, side: f64, direction: Direction) -> Option<f64> {
    if baseline <= 0.0 || side <= 0.0 || !baseline.is_finite() || !side.is_finite() {
        return None;
    }
    Some(match direction {
        Direction::HigherIsBetter => side / baseline,
        Direction::LowerIsBetter => baseline / side,
    })
}

/// True for a result another tool measured beside envbench's own (fio, pg_test_fsync: flagged `*-cross-check`): a
/// reference for the tool, not one more test of the environment.
pub fn is_cross_check(row: &ComparisonRow) -> bool {
    row.cells.iter().flatten().any(|cell| cell.flags.iter().any(|flag| flag.ends_with("cross-check")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_point_the_better_way() {
        assert_eq!(directed_ratio(100.0, 110.0, Direction::HigherIsBetter), Some(1.1));
        assert_eq!(directed_ratio(2.0, 1.0, Direction::LowerIsBetter), Some(2.0));
        assert_eq!(directed_ratio(0.0, 1.0, Direction::LowerIsBetter), None);
    }
}
