//! A sequence's results in the core model: one `elapsed` record per step and outcome, and the total.

use crate::bench::{SequenceOutcome, Step, ThreadKnob};
use crate::names::{ELAPSED_METRIC, SOURCE, TOTAL_TEST};
use envbench_core::{Direction, ResultRecord};
use serde_json::{Value, json};

/// The parameters of a step's result: everything that defines it, including only the thread setting that governs
/// the step (so a calc_threads sweep does not split the load results).
fn parameters(outcome: &SequenceOutcome, knobs: &[ThreadKnob]) -> Value {
    let mut parameters = json!({
        "scale": outcome.scale,
        "seed": outcome.seed,
        "compression": outcome.compression.as_str(),
        "data_cache_bytes": outcome.data_cache_bytes,
        "direct": outcome.direct_io,
        "repeat": outcome.repetitions.len(),
    });
    for knob in knobs {
        parameters[knob.name()] = json!(knob.get(&outcome.threads));
    }
    parameters
}

/// Results in the core model: per outcome, one `elapsed` record (seconds, one sample per repetition) per step,
/// plus a `total` record whose parameters carry every thread setting.
pub fn result_records(outcomes: &[SequenceOutcome]) -> Vec<ResultRecord> {
    let record = |test_id: &str, parameters: Value, samples: Vec<f64>| {
        SOURCE.record(test_id, &parameters, ELAPSED_METRIC, "s", Direction::LowerIsBetter, samples)
    };
    let mut records = Vec::new();
    for outcome in outcomes {
        for step in Step::ALL {
            let knobs: Vec<ThreadKnob> = step.knob().into_iter().collect();
            records.push(record(step.name(), parameters(outcome, &knobs), outcome.seconds_of(step)));
        }
        let totals = outcome.repetitions.iter().map(|r| r.total_seconds).collect();
        records.push(record(TOTAL_TEST, parameters(outcome, &ThreadKnob::ALL), totals));
    }
    records
}
