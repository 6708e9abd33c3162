//! How stored htap runs read back ([`ReadBack`]): the cost unit, the headline (the verdict) and the interference
//! curve of NOPM and New-Order p95 against analytic streams.

use crate::document::{HtapStep, document};
use crate::workload::HtapWorkload;
use envbench_core::model::StoredRun;
use envbench_core::workload::{ReadBack, ScalingCurve, ScalingPoint};
use envbench_oltp::TPM_WINDOW_METRIC;
use serde_json::Value;

impl ReadBack for HtapWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: "nopm",
            tests: "",
            per: envbench_core::workload::Per::Rate(1000.0),
            words: "1,000 NOPM",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("transactions with analytics")
    }

    fn headline_metrics(&self) -> &'static [&'static str] {
        &[TPM_WINDOW_METRIC]
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Storage, Resource::Memory]
    }

    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["users", "analytic_users"]
    }

    /// One transactional user and no stream, or one stream alone: one session at a time.
    fn single_threaded(&self, _test_id: &str, parameters: &Value) -> bool {
        let count = |knob: &str| parameters.get(knob).and_then(Value::as_u64).unwrap_or(0);
        count("users") + count("analytic_users") == 1
    }

    fn headline(&self, run: &StoredRun) -> String {
        match document(run) {
            Some(Ok(d)) => d.verdict().unwrap_or_else(|| {
                d.baseline().and_then(HtapStep::nopm).map_or("no step measured".into(), |n| format!("{n:.0} NOPM"))
            }),
            Some(Err(e)) => e,
            None => "no htap record".into(),
        }
    }

    fn tests_word(&self) -> &'static str {
        "per step and query"
    }

    /// The interference curve: NOPM and New-Order p95 against analytic streams.
    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let d = document(run)?.ok()?;
        let points: Vec<ScalingPoint> = d
            .steps
            .iter()
            .filter(|s| s.users > 0)
            .map(|s| ScalingPoint {
                concurrency: f64::from(s.streams),
                throughput: s.nopm().unwrap_or(0.0),
                latency: s.new_order(|k| k.p95_ms).unwrap_or(0.0),
            })
            .collect();
        (!points.is_empty()).then(|| ScalingCurve {
            concurrency_label: "analytic streams".into(),
            concurrency_symbol: "A".into(),
            throughput_label: "NOPM".into(),
            latency_label: "New-Order p95".into(),
            latency_unit: "ms".into(),
            points,
            knee: None,
            latency_target: None,
            mark: envbench_core::workload::CurveMark::Knee,
        })
    }
}
