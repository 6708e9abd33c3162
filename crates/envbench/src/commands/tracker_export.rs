//! `envbench results export --format bencher|github-action-benchmark`: a run's results in the JSON that continuous
//! benchmarking services read, so a CI job can track envbench's figures beside its own.
//!
//! - Bencher Metric Format: `{"benchmark": {"measure": {"value", "lower_value", "upper_value"}}}`, one benchmark per
//!   test, one measure per metric and unit; the value is the median of the samples, the bounds their minimum and
//!   maximum.
//! - github-action-benchmark's custom format: `[{"name", "unit", "value", "range", "extra"}]`. The action reads a
//!   file as either `customBiggerIsBetter` or `customSmallerIsBetter`, so one file holds the results of one
//!   direction: `--better higher` or `--better lower`.
//!
//! Each format holds one value per benchmark, so an export is of one run or one suite's runs: a test measured twice
//! is refused, never averaged.

use crate::cli::Better;
use envbench_core::model::Direction;
use envbench_core::stats::Summary;
use envbench_store::StoredRun;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// One result as a tracker sees it: its name, and the summary of its samples.
struct Tracked<'a> {
    benchmark: String,
    metric: &'a str,
    unit: &'a str,
    direction: Direction,
    summary: Summary,
    flags: &'a [String],
}

/// Every result of the runs with a benchmark name unique within the export: `workload/test`, with the parameters'
/// hash added where the same test appears with other parameters (a thread sweep). The same test, metric and
/// parameters twice is refused: a tracker keeps one value per benchmark.
fn tracked(runs: &[StoredRun]) -> anyhow::Result<Vec<Tracked<'_>>> {
    let mut variants: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for result in runs.iter().flat_map(|r| &r.results) {
        let r = &result.record;
        variants.entry((&r.workload, &r.test_id)).or_default().insert(&result.parameters_hash);
    }
    let mut seen = BTreeSet::new();
    let mut tracked = Vec::new();
    for run in runs {
        for result in &run.results {
            let r = &result.record;
            let Some(summary) = Summary::of(&r.samples) else { continue };
            let mut benchmark = format!("{}/{}", r.workload, r.test_id);
            if variants[&(r.workload.as_str(), r.test_id.as_str())].len() > 1 {
                benchmark.push_str(&format!(" [{}]", &result.parameters_hash[..8.min(result.parameters_hash.len())]));
            }
            if !seen.insert((benchmark.clone(), r.metric.clone(), r.unit.clone())) {
                anyhow::bail!(
                    "{benchmark} {} is in more than one of the runs exported, and a tracker keeps one value per \
                     benchmark: export one run, or one suite's runs (the default: the latest suite)",
                    r.metric
                );
            }
            tracked.push(Tracked {
                benchmark,
                metric: &r.metric,
                unit: &r.unit,
                direction: r.direction,
                summary,
                flags: &r.flags,
            });
        }
    }
    Ok(tracked)
}

/// Bencher Metric Format JSON.
pub fn bencher(runs: &[StoredRun]) -> anyhow::Result<String> {
    let mut benchmarks: Map<String, Value> = Map::new();
    for t in tracked(runs)? {
        let measures = benchmarks.entry(t.benchmark).or_insert_with(|| json!({}));
        measures[format!("{} ({})", t.metric, t.unit)] =
            json!({ "value": t.summary.median, "lower_value": t.summary.min, "upper_value": t.summary.max });
    }
    Ok(serde_json::to_string_pretty(&Value::Object(benchmarks))? + "\n")
}

/// github-action-benchmark's custom JSON, of the results whose better direction is `better`.
pub fn github_action_benchmark(runs: &[StoredRun], better: Better) -> anyhow::Result<String> {
    let wanted = match better {
        Better::Higher => Direction::HigherIsBetter,
        Better::Lower => Direction::LowerIsBetter,
    };
    let entries: Vec<Value> = tracked(runs)?
        .into_iter()
        .filter(|t| t.direction == wanted)
        .map(|t| {
            let mut extra =
                format!("median of {} samples, min {} max {}", t.summary.count, t.summary.min, t.summary.max);
            if !t.flags.is_empty() {
                extra.push_str(&format!("; flags: {}", t.flags.join(",")));
            }
            json!({
                "name": format!("{}: {}", t.benchmark, t.metric),
                "unit": t.unit,
                "value": t.summary.median,
                "range": format!("± {}", t.summary.stddev),
                "extra": extra,
            })
        })
        .collect();
    Ok(serde_json::to_string_pretty(&entries)? + "\n")
}
