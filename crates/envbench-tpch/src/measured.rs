//! What a tpch run hands the driver ([`TpchMeasured`]): its result records (a thread sweep's under `T=N`, with
//! speedup and parallel efficiency), the outcome document stored beside them, the rendering for people and how it
//! ended.

use crate::render::{render, render_sweep};
use crate::results::TpchOutcome;
use crate::results::{EFFICIENCY_METRIC, SPEEDUP_METRIC, THREADS_KEY, ThreadPoint, WORKLOAD, thread_test_id};
use envbench_core::model::ResultRecord;
use envbench_core::sampler::SamplerSeries;
use envbench_core::workload::Measured;
use serde_json::{Value, json};

pub(crate) struct TpchMeasured {
    /// The run's outcome (with a thread sweep: the last count's).
    pub(crate) outcome: TpchOutcome,
    pub(crate) cache: &'static str,
    pub(crate) generation: Option<crate::data::GenerationInfo>,
    /// With `--threads 1,2,4`: the power test at each count.
    pub(crate) sweep: Vec<ThreadPoint>,
}

impl TpchMeasured {
    /// A run on a server's tables with warm caches (a fleet's: its agents do not drop the server's caches).
    pub(crate) fn warm(outcome: TpchOutcome) -> TpchMeasured {
        TpchMeasured { outcome, cache: "warm", generation: None, sweep: Vec::new() }
    }
}

impl Measured for TpchMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = if self.sweep.is_empty() { self.outcome.records() } else { sweep_records(&self.sweep) };
        for record in &mut records {
            if let Some(parameters) = record.parameters.as_object_mut() {
                parameters.insert("cache".into(), json!(self.cache));
            }
        }
        records
    }

    /// The outcome with its cache state and data generation, and a thread sweep's steps.
    fn document(&self) -> Option<(&'static str, Value)> {
        let mut document = json!({ "outcome": &self.outcome, "cache": self.cache, "generation": self.generation });
        if !self.sweep.is_empty() {
            document[THREADS_KEY] = json!(&self.sweep);
        }
        Some((WORKLOAD, document))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        if self.sweep.is_empty() {
            render(&self.outcome, series, self.cache)
        } else {
            render_sweep(&self.sweep, series, self.cache)
        }
    }

    fn ending(&self) -> envbench_core::workload::Ending {
        match self.outcome.failures.len() {
            0 => envbench_core::workload::Ending::Complete,
            // Everything is stored; the exit status tells scripts that not every query answered.
            n => envbench_core::workload::Ending::CompleteWithFailures(format!(
                "{n} quer{} failed or gave a wrong answer",
                if n == 1 { "y" } else { "ies" }
            )),
        }
    }
}

/// A sweep's records: each count's queries and geomean under `T=N` (with `threads` among the parameters), and each
/// count's speedup and parallel efficiency over the first.
fn sweep_records(points: &[ThreadPoint]) -> Vec<ResultRecord> {
    let Some(first) = points.first() else { return Vec::new() };
    let mut records = Vec::new();
    for point in points {
        let prefix = thread_test_id(point.threads);
        let mut own = point.outcome.records();
        for record in &mut own {
            record.test_id = format!("{prefix} {}", record.test_id);
            record.parameters["threads"] = json!(point.threads);
        }
        if let Some(template) = own.first().cloned() {
            let figures = [
                (SPEEDUP_METRIC, "x", point.speedup_over(first)),
                (EFFICIENCY_METRIC, "%", point.efficiency_over(first)),
            ];
            for (metric, unit, value) in figures {
                let Some(value) = value else { continue };
                own.push(ResultRecord {
                    test_id: prefix.clone(),
                    metric: metric.into(),
                    unit: unit.into(),
                    direction: envbench_core::model::Direction::HigherIsBetter,
                    samples: vec![value],
                    flags: Vec::new(),
                    ..template.clone()
                });
            }
        }
        records.extend(own);
    }
    records
}
