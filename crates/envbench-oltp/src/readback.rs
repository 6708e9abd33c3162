//! How stored oltp runs read back ([`ReadBack`]): the cost units, the headline, the per-second timelines and the
//! scaling curve of users against throughput and judged latency.

use crate::document::{KNEE_TEST, OltpDocument, P95_METRIC, THROUGHPUT_METRIC};
use crate::measured::TPM_WINDOW_METRIC;
use crate::workload::OltpWorkload;
use envbench_core::model::StoredRun;
use envbench_core::workload::{CurveMark, ReadBack, ScalingCurve, ScalingPoint, Timeline};

impl ReadBack for OltpWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[
            envbench_core::workload::CostUnit {
                metric: "nopm",
                tests: "",
                per: envbench_core::workload::Per::Rate(1000.0),
                words: "1,000 NOPM",
            },
            envbench_core::workload::CostUnit {
                metric: "tpm",
                tests: "",
                per: envbench_core::workload::Per::Rate(1000.0),
                words: "1,000 TPM",
            },
        ]
    }

    fn title(&self) -> Option<&'static str> {
        Some("transactions")
    }

    /// TPM over each fifth of the measured window ([`TPM_WINDOW_METRIC`]), so a verdict can test it; NOPM and TPM are
    /// one figure each over the whole window.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[TPM_WINDOW_METRIC]
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Storage, Resource::Memory]
    }

    /// One virtual user is one connection running one transaction at a time.
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["users"]
    }

    fn headline(&self, run: &StoredRun) -> String {
        // An open loop's headline is what it held: the capacity within the SLO, or the rate it could not hold.
        if let Some(Ok(document)) = OltpDocument::of(run) {
            if let Some(capacity) = &document.capacity {
                return capacity.headline(document.profile, &document.steps);
            }
            if let Some(why) = document
                .steps
                .iter()
                .find_map(|s| Some(format!("{}: {}", s.test_id(), s.open.as_ref()?.not_held(s.measured_seconds)?)))
            {
                return why;
            }
        }
        let profile = run.results.first().and_then(|r| r.record.parameters.get("profile")?.as_str().map(String::from));
        let label = if profile.as_deref() == Some("tpcb") { "TPS" } else { "NOPM" };
        let judged = if profile.as_deref() == Some("tpcb") { "p95" } else { "New-Order p95" };
        match (run.median(KNEE_TEST, THROUGHPUT_METRIC), run.median(KNEE_TEST, P95_METRIC)) {
            (Some(throughput), Some(p95)) => format!("knee {throughput:.0} {label} at {p95:.1} ms {judged}"),
            // Still measuring: no step has ended to judge, which says nothing of the latency target yet.
            _ if run.summary.status == envbench_core::model::RunStatus::Running => "running".into(),
            _ => "no step within the latency target".into(),
        }
    }

    fn tests_word(&self) -> &'static str {
        "per step and transaction"
    }

    fn timelines(&self, run: &StoredRun) -> Vec<Timeline> {
        let Some(Ok(document)) = OltpDocument::of(run) else { return Vec::new() };
        vec![Timeline {
            subject: None,
            marks: Vec::new(),
            higher_is_better: true,
            note: None,
            y_label: "transactions per second".into(),
            x_label: "seconds since the step began (ramp-up included)".into(),
            lines: document
                .steps
                .iter()
                .map(|s| {
                    let points = s.per_second.iter().enumerate().map(|(i, n)| (i as f64 + 1.0, *n)).collect();
                    let rate = s.open.as_ref().map(|o| format!(" at {:.0}/s", o.offered_tps)).unwrap_or_default();
                    (format!("{} users{rate}", s.users), points)
                })
                .collect(),
        }]
    }

    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let document = OltpDocument::of(run)?.ok()?;
        if document.steps.is_empty() {
            return None;
        }
        let profile = document.profile;
        // Open-loop steps: the response time against the rate offered, the highest within the SLO marked.
        let mut open: Vec<(usize, &crate::figures::StepFigures)> =
            document.steps.iter().enumerate().filter(|(_, s)| s.open.is_some()).collect();
        if !open.is_empty() {
            open.sort_by(|a, b| offered(a.1).total_cmp(&offered(b.1)));
            let knee = document.capacity.as_ref().and_then(|c| c.capacity_step);
            // The response time the service level names (its first level: New-Order's p99 within 20 ms, say), its
            // limit drawn; without one, the judged transaction's p95.
            let level = open.iter().find_map(|(_, s)| s.slo.first()).map(|judged| judged.level);
            let latency_label = match level {
                Some(level) => format!("{} p{} response time", level.kind.name(), crate::slo::trim(level.percentile)),
                None => format!("{} p95 response time", profile.judged_kind().name()),
            };
            return Some(ScalingCurve {
                concurrency_label: "offered rate (transactions per second)".into(),
                concurrency_symbol: "R".into(),
                throughput_label: profile.throughput_label().into(),
                latency_label,
                latency_unit: "ms".into(),
                points: open
                    .iter()
                    .map(|(_, s)| ScalingPoint {
                        concurrency: offered(s),
                        throughput: s.throughput(profile),
                        latency: match level {
                            Some(_) => s.slo.first().and_then(|j| j.measured_ms).unwrap_or(f64::NAN),
                            None => s.judged_latency_ms(profile),
                        },
                    })
                    .collect(),
                knee: knee.and_then(|k| open.iter().position(|(i, _)| *i == k)),
                latency_target: level.map(|level| level.within_ms),
                mark: if document.capacity.is_some() { CurveMark::Capacity } else { CurveMark::Knee },
            });
        }
        Some(ScalingCurve {
            concurrency_label: "virtual users".into(),
            concurrency_symbol: "U".into(),
            throughput_label: profile.throughput_label().into(),
            latency_label: format!("{} p95", profile.judged_kind().name()),
            latency_unit: "ms".into(),
            points: document
                .steps
                .iter()
                .map(|s| ScalingPoint {
                    concurrency: f64::from(s.users),
                    throughput: s.throughput(profile),
                    latency: s.judged_latency_ms(profile),
                })
                .collect(),
            knee: document.knee,
            latency_target: Some(document.target_latency_ms),
            mark: CurveMark::Knee,
        })
    }
}

/// The rate an open-loop step was offered, in transactions per second.
fn offered(step: &crate::figures::StepFigures) -> f64 {
    step.open.as_ref().map_or(0.0, |o| o.offered_tps)
}
