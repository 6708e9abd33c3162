//! What an htap run keeps ([`HtapDocument`]): its steps, and how each mixed step compares with its baselines
//! ([`Interference`]) and the run's verdict in a sentence.

use crate::source::WORKLOAD;
use crate::streams::AnalyticFigures;
use envbench_core::model::StoredRun;
use envbench_core::text::number;
use envbench_oltp::{KindFigures, StepFigures, consistency::Check, load::LoadInfo, routines::Mode, transactions::Kind};
use serde::{Deserialize, Serialize};

/// The test id, and the sampler's step name, of a step.
pub fn step_test_id(users: u32, streams: u32) -> String {
    format!("U={users} A={streams}")
}

/// One step: transactional users and analytic streams over one measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtapStep {
    pub users: u32,
    pub streams: u32,
    /// The transactional users' figures (none in an analytics-alone step).
    pub oltp: Option<StepFigures>,
    pub analytics: AnalyticFigures,
}

impl HtapStep {
    pub(crate) fn nopm(&self) -> Option<f64> {
        self.oltp.as_ref().and_then(|o| o.nopm)
    }

    pub(crate) fn new_order(&self, quantile: fn(&KindFigures) -> f64) -> Option<f64> {
        self.oltp.as_ref().and_then(|o| o.kind(Kind::NewOrder)).filter(|k| k.count > 0).map(quantile)
    }

    /// The step's line of progress.
    pub(crate) fn line(&self) -> String {
        let oltp = match &self.oltp {
            Some(o) => {
                let open = o.open.as_ref().map(|open| {
                    let service = self.new_order(|k| k.service.as_ref().map_or(0.0, |s| s.p95_ms)).unwrap_or(0.0);
                    let held = open.not_held(o.measured_seconds).map(|why| format!("; {why}")).unwrap_or_default();
                    format!(" response (service {service:.1} ms) at {}/s{held}", number(open.offered_tps))
                });
                format!(
                    "{:>9} NOPM, New-Order p95 {:.1} ms{}",
                    number(o.nopm.unwrap_or(0.0)),
                    self.new_order(|k| k.p95_ms).unwrap_or(0.0),
                    open.unwrap_or_default()
                )
            }
            None => "no transactions".to_string(),
        };
        let analytics = match self.streams {
            0 => "no analytic queries".to_string(),
            _ => format!(
                "{} queries/h ({} completed, {} timed out{})",
                number(self.analytics.queries_per_hour),
                self.analytics.completed,
                self.analytics.timeouts,
                match self.analytics.unfinished {
                    0 => String::new(),
                    running => format!(", {running} still running at the window's end"),
                }
            ),
        };
        format!(
            "  {:>4} user{}, {:>2} stream{}: {oltp}; {analytics}",
            self.users,
            envbench_core::text::plural(self.users as usize),
            self.streams,
            envbench_core::text::plural(self.streams as usize)
        )
    }
}

/// What an htap run keeps as its attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtapDocument {
    pub target: String,
    pub dialect: String,
    pub server_version: String,
    pub scale: i64,
    pub partitions: u32,
    pub mode: Mode,
    /// Transactional users of the mixed steps.
    pub users: u32,
    pub keying_thinking: bool,
    pub all_warehouses: bool,
    /// A mix other than TPC-C's (`--mix`; absent: TPC-C's, as every run before the option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<envbench_oltp::Mix>,
    pub ramp_seconds: f64,
    pub duration_seconds: f64,
    pub query_timeout_seconds: f64,
    pub load: LoadInfo,
    pub steps: Vec<HtapStep>,
    pub consistency: Vec<Check>,
    pub interrupted: bool,
    /// How the transactions were driven beyond users and mix (an open loop's rate, isolation, tries).
    #[serde(flatten)]
    pub drive: envbench_oltp::Drive,
}

/// How one mixed step compares with its baselines.
#[derive(Clone, Debug, PartialEq)]
pub struct Interference {
    pub streams: u32,
    /// The share of the baseline's NOPM the streams cost, in percent.
    pub nopm_cost_percent: Option<f64>,
    /// New-Order p95 against the baseline's, as a factor.
    pub new_order_p95_factor: Option<f64>,
    /// How much slower the analytics ran beside the transactions than alone, as a factor of queries per hour.
    pub analytics_slowdown: Option<f64>,
}

impl HtapDocument {
    pub(crate) fn step(&self, users: u32, streams: u32) -> Option<&HtapStep> {
        self.steps.iter().find(|s| s.users == users && s.streams == streams)
    }

    /// The transactions' baseline: the mixed users without streams.
    pub(crate) fn baseline(&self) -> Option<&HtapStep> {
        (self.users > 0).then(|| self.step(self.users, 0)).flatten()
    }

    /// Each mixed step against the baselines.
    pub fn interference(&self) -> Vec<Interference> {
        let baseline = self.baseline();
        self.steps
            .iter()
            .filter(|s| s.users > 0)
            .map(|step| {
                let alone = self.step(0, step.streams).filter(|_| step.streams > 0);
                Interference {
                    streams: step.streams,
                    nopm_cost_percent: baseline
                        .and_then(HtapStep::nopm)
                        .filter(|b| *b > 0.0)
                        .zip(step.nopm())
                        .map(|(b, n)| (1.0 - n / b) * 100.0),
                    new_order_p95_factor: baseline
                        .and_then(|b| b.new_order(|k| k.p95_ms))
                        .filter(|b| *b > 0.0)
                        .zip(step.new_order(|k| k.p95_ms))
                        .map(|(b, n)| n / b),
                    analytics_slowdown: alone
                        .map(|a| a.analytics.queries_per_hour)
                        .filter(|_| step.analytics.queries_per_hour > 0.0)
                        .map(|a| a / step.analytics.queries_per_hour),
                }
            })
            .collect()
    }

    /// The run in a sentence: what the most streams cost the transactions, and what the transactions cost them.
    pub fn verdict(&self) -> Option<String> {
        let worst = self.interference().into_iter().filter(|i| i.streams > 0).max_by_key(|i| i.streams)?;
        let mut parts = Vec::new();
        let streams = format!("{} analytic stream{}", worst.streams, if worst.streams == 1 { "" } else { "s" });
        match (worst.nopm_cost_percent, worst.new_order_p95_factor) {
            (Some(cost), Some(factor)) => parts.push(format!(
                "{streams} {} and {}",
                if cost >= 0.0 { format!("cost {cost:.0}% of NOPM") } else { format!("raised NOPM by {:.0}%", -cost) },
                factor_words("New-Order p95", factor)
            )),
            (Some(cost), None) => parts.push(format!("{streams} cost {cost:.0}% of NOPM")),
            _ => {}
        }
        if let Some(slowdown) = worst.analytics_slowdown {
            parts.push(format!(
                "analytics run {} under {} transactional users",
                if slowdown >= 1.0 {
                    format!("{slowdown:.2}x slower")
                } else {
                    format!("{:.2}x faster", 1.0 / slowdown)
                },
                self.users
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; ") + ".")
    }
}

/// What the streams did to a response time, as a factor in the verdict's words: `made New-Order p95 3.10x longer`,
/// `made New-Order p95 1.20x shorter`, `left New-Order p95 as it was`.
fn factor_words(what: &str, factor: f64) -> String {
    if (factor - 1.0).abs() < 0.05 {
        format!("left {what} as it was")
    } else if factor > 1.0 {
        format!("made {what} {factor:.2}x longer")
    } else {
        format!("made {what} {:.2}x shorter", 1.0 / factor)
    }
}

/// The document of a stored run: `None` when it has none.
pub(crate) fn document(run: &StoredRun) -> Option<Result<HtapDocument, String>> {
    let value = run.attachments.get(WORKLOAD)?;
    Some(
        serde_json::from_value(value.clone())
            .map_err(|e| format!("run {}: its htap record cannot be read ({e})", run.summary.uuid)),
    )
}
