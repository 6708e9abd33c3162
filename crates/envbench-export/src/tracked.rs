//! What the continuous benchmarking trackers share: each holds one value per benchmark, so an export is of one run or
//! one suite's runs, and a test measured twice is refused, never averaged.

use crate::exporter::ExportError;
use envbench_core::model::Direction;
use envbench_core::stats::Summary;
use envbench_store::StoredRun;
use std::collections::{BTreeMap, BTreeSet};

/// One result as a tracker sees it: its name, and the summary of its samples.
pub(crate) struct Tracked<'a> {
    pub benchmark: String,
    pub metric: &'a str,
    pub unit: &'a str,
    pub direction: Direction,
    pub summary: Summary,
    pub flags: &'a [String],
}

/// Every result of the runs with a benchmark name unique within the export: `workload/test`, with the parameters'
/// hash added where the same test appears with other parameters (a thread sweep). The same test, metric and
/// parameters twice is refused: a tracker keeps one value per benchmark.
pub(crate) fn tracked(runs: &[StoredRun]) -> Result<Vec<Tracked<'_>>, ExportError> {
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
                return Err(ExportError::MeasuredTwice { benchmark, metric: r.metric.clone() });
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
