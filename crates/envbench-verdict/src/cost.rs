//! What the work costs: a side's price per hour (from its runs' `price_per_hour` tag), the work per unit of cost of a
//! side against the baseline's, and what one unit of a workload's work (`1,000 NOPM`, `QphH@Size`) costs on each.

use crate::side::Side;
use crate::words::SAME_WITHIN;
use envbench_core::model::StoredRun;
use envbench_core::stats::{Summary, geometric_mean};
use envbench_core::workload::Registry;
use serde::Serialize;

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
    registry.read_back(workload).cost_units().iter().find_map(|unit| {
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
pub fn cost_words(speed: f64, prices: [f64; 2], letters: (&str, &str)) -> String {
    let factor = work_per_cost(speed, prices);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_per_unit_of_cost_is_speed_over_price() {
        // 1.52x faster at 2.10 against 1.84 an hour: 1.33x the work for the money.
        assert!((work_per_cost(1.52, [1.84, 2.10]) - 1.3318).abs() < 1e-3);
        assert!((work_per_cost(1.0, [1.0, 2.0]) - 0.5).abs() < 1e-12);
        assert_eq!(number_words(1.84), "1.84");
        assert_eq!(number_words(2.0), "2");
    }
}
