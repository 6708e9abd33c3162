//! The gate of `compare --fail-if-worse`: every side's verdicts judged against a largest allowed slowdown.

use crate::verdict::{Decision, SideVerdict};
use crate::words::interval_words;
use serde::Serialize;

/// What `compare --fail-if-worse` decided: the workloads whose verdict found them significantly worse than the
/// baseline by more than the threshold (the gate fails when there is one), and a line for every other workload
/// saying why it passed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gate {
    /// The largest slowdown allowed, as a fraction (0.05 for 5%).
    pub threshold: f64,
    pub failures: Vec<String>,
    pub passes: Vec<String>,
}

impl Gate {
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// Judge every side's verdicts against a largest allowed slowdown (`threshold`, a fraction: 0.05 allows 5% slower,
/// as the verdict words it: a speed factor of 1/1.05). Only a workload the verdict calls slower (its interval below
/// 1 and its change beyond the noise margin) can fail; one it cannot tell about passes, and says so, with the advice
/// that would let it decide.
pub fn gate(verdicts: &[SideVerdict], threshold: f64) -> Gate {
    let allowed = format!("{:.0}%", threshold * 100.0);
    let mut gate = Gate { threshold, failures: Vec::new(), passes: Vec::new() };
    for side in verdicts {
        for w in &side.workloads {
            let slowdown = 1.0 / w.ratio - 1.0;
            match w.decision {
                Decision::Slower if slowdown > threshold => gate.failures.push(format!(
                    "{} ({}): more than the {allowed} allowed",
                    w.summary,
                    interval_words(w.interval)
                )),
                Decision::Slower => {
                    gate.passes.push(format!("{}: within the {allowed} allowed", w.summary));
                }
                Decision::CannotTell => gate.passes.push(format!(
                    "{}: the gate passes what it cannot decide; give each side more samples to let it",
                    w.summary
                )),
                Decision::Faster | Decision::Same => gate.passes.push(w.summary.clone()),
            }
        }
    }
    gate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::IntervalBasis;
    use crate::verdict::WorkloadVerdict;
    use crate::words::speed_words;

    /// The gate fails on a workload called slower by more than the threshold, and only on that: a smaller slowdown,
    /// a change within noise and one it cannot tell about pass, each with its reason.
    #[test]
    fn the_gate_fails_only_on_a_decided_slowdown_beyond_the_threshold() {
        let verdict = |title: &str, ratio: f64, decision: Decision| WorkloadVerdict {
            workload: title.into(),
            title: title.into(),
            metrics: vec![],
            tests: 3,
            ratio,
            interval: Some((ratio * 0.98, ratio * 1.02)),
            interval_basis: Some(IntervalBasis::Runs),
            decision,
            reason: None,
            advice: None,
            better: 0,
            worse: 0,
            unchanged: 0,
            cannot_tell: 0,
            runs: [3, 3],
            summary: format!("{title} {} on B", speed_words(ratio)),
            explanations: vec![],
            cost: None,
            unit_cost: None,
        };
        let side = |workloads| SideVerdict {
            letter: "B".into(),
            name: "b".into(),
            workloads,
            caution: None,
            disturbance: vec![],
            advice: None,
        };
        let failing = [side(vec![
            verdict("storage", 1.0 / 1.08, Decision::Slower),
            verdict("cube", 1.0 / 1.03, Decision::Slower),
            verdict("oltp", 0.5, Decision::CannotTell),
            verdict("tpch", 0.97, Decision::Same),
        ])];
        let result = gate(&failing, 0.05);
        assert!(result.failed());
        assert_eq!(result.failures.len(), 1, "{result:?}");
        assert!(result.failures[0].starts_with("storage 1.08x slower on B (95% interval"), "{result:?}");
        assert!(result.failures[0].ends_with("more than the 5% allowed"), "{result:?}");
        assert_eq!(result.passes.len(), 3);
        assert!(result.passes[0].contains("within the 5% allowed"), "{result:?}");
        assert!(result.passes[1].contains("cannot decide"), "{result:?}");
        assert!(!gate(&failing, 0.10).failed(), "8% slower passes a 10% gate");
    }
}
