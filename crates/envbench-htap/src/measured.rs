//! An htap run's results as the driver stores them ([`HtapMeasured`]): the records of each step (NOPM, TPM windows,
//! New-Order latency, queries per hour, each query's latency, what the streams cost), and how the run ended.

use crate::document::{HtapDocument, HtapStep, step_test_id};
use crate::render::render;
use crate::source::{SOURCE, WORKLOAD};
use envbench_core::model::{Direction, ResultRecord};
use envbench_core::sampler::SamplerSeries;
use envbench_core::workload::{Ending, Measured};
use envbench_oltp::{
    AgentSteps, TPM_WINDOW_METRIC, TPM_WINDOWS, add_transaction_parameters, consistency::Check, window_rates,
};
use serde_json::{Value, json};

pub(crate) struct HtapMeasured {
    document: HtapDocument,
    /// A fleet agent's own run: the agent's name and the fleet's name of each step.
    fleet_agent: Option<AgentSteps>,
}

impl HtapMeasured {
    pub(crate) fn new(document: HtapDocument) -> HtapMeasured {
        HtapMeasured { document, fleet_agent: None }
    }

    /// A fleet agent's share of the fleet's steps, named `steps`.
    pub(crate) fn fleet_agent(document: HtapDocument, steps: AgentSteps) -> HtapMeasured {
        HtapMeasured { document, fleet_agent: Some(steps) }
    }

    fn parameters(&self, step: &HtapStep) -> Value {
        let d = &self.document;
        let mut parameters = json!({
            "target": d.dialect,
            "scale": d.scale,
            "ramp_s": d.ramp_seconds,
            "duration_s": d.duration_seconds,
            "keying_thinking": d.keying_thinking,
            "users": step.users,
            "analytic_users": step.streams,
        });
        add_transaction_parameters(&mut parameters, d.mode, d.all_warehouses, d.mix, d.partitions, &d.drive);
        parameters
    }
}

impl Measured for HtapMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
        let d = &self.document;
        let interference = d.interference();
        let mut records = Vec::new();
        for (index, step) in d.steps.iter().enumerate() {
            let mut parameters = self.parameters(step);
            let test = match &self.fleet_agent {
                Some(agent) => agent.test_id(index, &mut parameters, || step_test_id(step.users, step.streams)),
                None => step_test_id(step.users, step.streams),
            };
            if let Some(oltp) = &step.oltp {
                if let Some(nopm) = oltp.nopm {
                    records.push(SOURCE.record(&test, &parameters, "nopm", "NOPM", Higher, vec![nopm]));
                }
                let first = oltp.ramp_seconds.ceil() as usize;
                if let Some(windows) = window_rates(oltp.per_second.get(first..).unwrap_or_default(), TPM_WINDOWS) {
                    records.push(SOURCE.record(&test, &parameters, TPM_WINDOW_METRIC, "TPM", Higher, windows));
                }
                for (metric, value) in
                    [("new_order_p95", step.new_order(|k| k.p95_ms)), ("new_order_p99", step.new_order(|k| k.p99_ms))]
                {
                    if let Some(value) = value {
                        records.push(SOURCE.record(&test, &parameters, metric, "ms", Lower, vec![value]));
                    }
                }
            }
            if step.streams > 0 {
                let analytics = &step.analytics;
                records.push(SOURCE.record(
                    &test,
                    &parameters,
                    "queries_per_hour",
                    "Qph",
                    Higher,
                    vec![analytics.queries_per_hour],
                ));
                records.push(SOURCE.record(
                    &test,
                    &parameters,
                    "query_timeouts",
                    "count",
                    Lower,
                    vec![analytics.timeouts as f64],
                ));
                for query in analytics.queries.iter().filter(|q| q.count > 0) {
                    let test = format!("{test} Q{}", query.query);
                    records.push(SOURCE.record(
                        &test,
                        &parameters,
                        "latency_median",
                        "ms",
                        Lower,
                        vec![query.median_ms],
                    ));
                    records.push(SOURCE.record(&test, &parameters, "latency_p95", "ms", Lower, vec![query.p95_ms]));
                }
            }
            // What the streams cost is the fleet's, not one host's share of it.
            if let Some(i) = interference
                .iter()
                .find(|i| i.streams == step.streams && step.users > 0 && step.streams > 0)
                .filter(|_| self.fleet_agent.is_none())
            {
                if let Some(cost) = i.nopm_cost_percent {
                    records.push(SOURCE.record(&test, &parameters, "nopm_cost", "%", Lower, vec![cost]));
                }
                if let Some(slowdown) = i.analytics_slowdown {
                    records.push(SOURCE.record(&test, &parameters, "analytics_slowdown", "x", Lower, vec![slowdown]));
                }
            }
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, serde_json::to_value(&self.document).expect("the htap document serializes")))
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(&self.document)
    }

    fn ending(&self) -> Ending {
        let d = &self.document;
        let failed: Vec<&Check> = d.consistency.iter().filter(|c| !c.passed).collect();
        if !failed.is_empty() {
            return Ending::Failed(format!(
                "the consistency check failed: {}",
                failed.iter().map(|c| format!("{} ({})", c.name, c.detail)).collect::<Vec<_>>().join("; ")
            ));
        }
        if d.steps.is_empty() {
            return Ending::Failed("no step was measured".into());
        }
        let failures: u64 = d.steps.iter().map(|s| s.analytics.failures).sum();
        let failed_transactions: u64 = d.steps.iter().filter_map(|s| s.oltp.as_ref()).map(|o| o.failures).sum();
        if failures + failed_transactions > 0 {
            let first = d
                .steps
                .iter()
                .find_map(|s| s.analytics.first_failure.clone().or_else(|| s.oltp.as_ref()?.first_failure.clone()))
                .unwrap_or_default();
            return Ending::CompleteWithFailures(format!(
                "{failures} analytic queries and {failed_transactions} transactions failed; the first: {first}"
            ));
        }
        Ending::Complete
    }
}
