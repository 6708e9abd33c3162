//! An oltp run's results as the driver stores them ([`OltpMeasured`]): the records of each step, of the knee and of
//! the pgbench cross-check, TPM over parts of the measured window as a step's samples, and how the run ended; a fleet
//! agent's records are named as the fleet named its steps ([`AgentSteps`]).

use crate::consistency::Check;
use crate::document::{Drive, KNEE_TEST, OltpDocument, P95_METRIC, PGBENCH_FLAG, THROUGHPUT_METRIC, invalid_steps};
use crate::figures::{StepFigures, step_test_id};
use crate::mix::Mix;
use crate::profile::{Profile, SOURCE, WORKLOAD};
use crate::render::render;
use crate::routines::Mode;
use envbench_core::model::{Direction, ResultRecord};
use envbench_core::sampler::SamplerSeries;
use envbench_core::workload::{Ending, Measured};
use serde_json::{Value, json};

/// A fleet agent's own run: the agent's name and the fleet's name of each step it ran, in order.
pub struct AgentSteps {
    pub agent: String,
    pub names: Vec<String>,
}

impl AgentSteps {
    /// The test id of the agent's `index`th step, the fleet's name of it (`own` if the fleet named none), with the
    /// agent and that name added to the step's parameters, so that an agent's results match only like shares.
    pub fn test_id(&self, index: usize, parameters: &mut Value, own: impl FnOnce() -> String) -> String {
        let name = self.names.get(index).cloned().unwrap_or_else(own);
        parameters["fleet_agent"] = json!(self.agent);
        parameters["fleet_step"] = json!(name);
        name
    }
}

pub(crate) struct OltpMeasured {
    document: OltpDocument,
    /// On a fleet's agent: its name and the fleet's name of each step, the test ids of this host's share.
    fleet_agent: Option<AgentSteps>,
}

impl OltpMeasured {
    pub(crate) fn new(document: OltpDocument) -> OltpMeasured {
        OltpMeasured { document, fleet_agent: None }
    }

    /// One fleet agent's run: its share of each of the fleet's steps, named as the fleet named them.
    pub(crate) fn fleet_agent(document: OltpDocument, steps: AgentSteps) -> OltpMeasured {
        OltpMeasured { document, fleet_agent: Some(steps) }
    }
}

/// The parameters of how TPC-C's transactions ran, for every workload that runs them (oltp, htap), each kept only
/// where it differs from the default, so runs stored before the option still match the runs that did not use it.
pub fn add_transaction_parameters(
    parameters: &mut Value,
    mode: Mode,
    all_warehouses: bool,
    mix: Option<Mix>,
    partitions: u32,
    drive: &Drive,
) {
    // A procedures run's results match only other procedures runs.
    if mode != Mode::Client {
        parameters["mode"] = json!(mode.name());
    }
    if all_warehouses {
        parameters["all_warehouses"] = json!(true);
    }
    // Another mix is another workload: its results match only runs of the same mix.
    if let Some(mix) = mix {
        parameters["mix"] = json!(mix.text());
    }
    // Another layout of the same data is another workload to the server: a partitioned load's results match only
    // runs of as many partitions.
    if partitions > 0 {
        parameters["order_line_partitions"] = json!(partitions);
    }
    drive.add_parameters(parameters);
}

impl OltpMeasured {
    fn parameters(&self, users: Option<u32>) -> Value {
        let d = &self.document;
        let mut parameters = json!({
            "profile": d.profile.name(),
            "target": d.dialect,
            "scale": d.scale,
            "ramp_s": d.ramp_seconds,
            "duration_s": d.duration_seconds,
            "keying_thinking": d.keying_thinking,
        });
        add_transaction_parameters(&mut parameters, d.mode, d.all_warehouses, d.mix, d.partitions, &d.drive);
        if d.clients_per_user > 1 {
            parameters["clients_per_user"] = json!(d.clients_per_user);
        }
        if let Some(count) = d.transactions_per_user {
            parameters["transactions_per_user"] = json!(count);
        }
        if let Some(users) = users {
            parameters["users"] = json!(users);
        }
        parameters
    }
}

/// The test of a capacity run's figures (`--rate auto`).
pub const CAPACITY_TEST: &str = "capacity";

/// The metric holding the TPM of each of [`TPM_WINDOWS`] equal parts of the measured window.
pub const TPM_WINDOW_METRIC: &str = "tpm_window";

/// Parts of the measured window whose TPMs are a step's samples: enough for the verdict's test to decide (5 a side
/// for Mann-Whitney U), few enough that a part spans several seconds and so counts stalls (a checkpoint, an fsync
/// storm) as a run over the whole window does. Per-second samples would let a median step over them.
pub const TPM_WINDOWS: usize = 5;

/// Per-minute rates of `parts` consecutive parts of per-second counts (one part per second when there are fewer
/// seconds), the parts' lengths differing by at most a second, so their mean weighted by length is the whole
/// window's rate. `None` without a measured second.
pub fn window_rates(per_second: &[f64], parts: usize) -> Option<Vec<f64>> {
    let parts = parts.min(per_second.len());
    if parts == 0 {
        return None;
    }
    let (base, extra) = (per_second.len() / parts, per_second.len() % parts);
    let mut start = 0;
    let rates = (0..parts)
        .map(|part| {
            let length = base + usize::from(part < extra);
            let count: f64 = per_second[start..start + length].iter().sum();
            start += length;
            count * 60.0 / length as f64
        })
        .collect();
    Some(rates)
}

/// The records of one step, under test id `test` (its transactions' tests are `test` and the transaction's name).
fn step_records(step: &StepFigures, test: &str, parameters: &Value) -> Vec<ResultRecord> {
    use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
    let mut records = Vec::new();
    if let Some(nopm) = step.nopm {
        records.push(SOURCE.record(test, parameters, "nopm", "NOPM", Higher, vec![nopm]));
    }
    // TPM has one definition: transactions ended in the measured window over its minutes, the figure the terminal
    // prints. The windows' TPMs are the samples a comparison tests.
    records.push(SOURCE.record(test, parameters, "tpm", "TPM", Higher, vec![step.tpm]));
    let first = step.ramp_seconds.ceil() as usize;
    let measured = step.per_second.get(first..).unwrap_or_default();
    if let Some(windows) = window_rates(measured, TPM_WINDOWS) {
        records.push(SOURCE.record(test, parameters, TPM_WINDOW_METRIC, "TPM", Higher, windows));
    }
    if let Some(db_tpm) = step.db_tpm {
        records.push(SOURCE.record(test, parameters, "db_tpm", "TPM", Higher, vec![db_tpm]));
    }
    if let Some(server_tpm) = step.server_tpm {
        records.push(SOURCE.record(test, parameters, "server_tpm", "TPM", Higher, vec![server_tpm]));
    }
    if let Some(open) = &step.open {
        records.push(SOURCE.record(test, parameters, "offered_tps", "TPS", Higher, vec![open.offered_tps]));
        records.push(SOURCE.record(test, parameters, "achieved_tps", "TPS", Higher, vec![open.achieved_tps]));
        for (metric, count) in [("late", open.late), ("skipped", open.skipped), ("never_started", open.unstarted)] {
            records.push(SOURCE.record(test, parameters, metric, "count", Lower, vec![count as f64]));
        }
        records.push(SOURCE.record(test, parameters, "lag_p99", "ms", Lower, vec![open.lag_p99_ms]));
    }
    records.push(SOURCE.record(
        test,
        parameters,
        "client_cpu_per_transaction",
        "us",
        Lower,
        vec![step.client_cpu_us_per_transaction],
    ));
    for kind in &step.kinds {
        let test = format!("{test} {}", kind.kind.name());
        for (metric, value) in [
            ("latency_mean", kind.mean_ms),
            ("latency_p50", kind.p50_ms),
            (P95_METRIC, kind.p95_ms),
            ("latency_p99", kind.p99_ms),
            ("latency_p99_9", kind.p999_ms),
            ("latency_max", kind.max_ms),
        ] {
            records.push(SOURCE.record(&test, parameters, metric, "ms", Lower, vec![value]));
        }
        if let Some(service) = &kind.service {
            records.push(SOURCE.record(&test, parameters, "service_p95", "ms", Lower, vec![service.p95_ms]));
            records.push(SOURCE.record(&test, parameters, "service_p99", "ms", Lower, vec![service.p99_ms]));
        }
        records.push(SOURCE.record(&test, parameters, "transactions", "count", Higher, vec![kind.count as f64]));
        records.push(SOURCE.record(&test, parameters, "retries", "count", Lower, vec![kind.retries as f64]));
        records.push(SOURCE.record(&test, parameters, "failures", "count", Lower, vec![kind.failures as f64]));
    }
    records
}

impl Measured for OltpMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
        let d = &self.document;
        let mut records = Vec::new();
        for (index, step) in d.steps.iter().enumerate() {
            let mut parameters = self.parameters(Some(step.users));
            let test = match &self.fleet_agent {
                Some(agent) => agent.test_id(index, &mut parameters, || step.test_id()),
                None => step.test_id(),
            };
            records.extend(step_records(step, &test, &parameters));
        }
        if let Some(knee) = d.knee_step() {
            let parameters = self.parameters(None);
            let (metric_unit, throughput) = match d.profile {
                Profile::Tpcc => ("NOPM", knee.nopm.unwrap_or(0.0)),
                Profile::Tpcb => ("TPS", knee.tpm / 60.0),
            };
            records.push(SOURCE.record(
                KNEE_TEST,
                &parameters,
                THROUGHPUT_METRIC,
                metric_unit,
                Higher,
                vec![throughput],
            ));
            records.push(SOURCE.record(
                KNEE_TEST,
                &parameters,
                P95_METRIC,
                "ms",
                Lower,
                vec![knee.judged_latency_ms(d.profile)],
            ));
            records.push(SOURCE.record(KNEE_TEST, &parameters, "users", "users", Higher, vec![f64::from(knee.users)]));
        }
        if let Some(capacity) = &d.capacity {
            let parameters = self.parameters(Some(capacity.users));
            let unit = d.profile.throughput_label();
            if let Some(value) = capacity.capacity {
                records.push(SOURCE.record(CAPACITY_TEST, &parameters, "capacity", unit, Higher, vec![value]));
                records.push(SOURCE.record(
                    CAPACITY_TEST,
                    &parameters,
                    "capacity_share_of_peak",
                    "%",
                    Higher,
                    vec![value * 100.0 / capacity.peak.max(1e-9)],
                ));
            }
            records.push(SOURCE.record(
                CAPACITY_TEST,
                &parameters,
                "closed_loop_peak",
                unit,
                Higher,
                vec![capacity.peak],
            ));
        }
        for figures in &d.pgbench {
            let test = format!("pgbench {}", step_test_id(figures.clients));
            let parameters = self.parameters(Some(figures.clients));
            let mut tps = SOURCE.record(&test, &parameters, "tps", "TPS", Higher, vec![figures.tps]);
            let mut p95 = SOURCE.record(&test, &parameters, P95_METRIC, "ms", Lower, vec![figures.p95_ms]);
            tps.flags.push(PGBENCH_FLAG.into());
            p95.flags.push(PGBENCH_FLAG.into());
            records.extend([tps, p95]);
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, json!(&self.document)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.document, series)
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
            return Ending::Failed("no step of users was measured".into());
        }
        let invalid = invalid_steps(d);
        if invalid.len() == d.steps.len() {
            return Ending::Failed(format!("no step is a measurement: {}", invalid.join("; ")));
        }
        if !invalid.is_empty() {
            return Ending::CompleteWithFailures(format!(
                "left out of the knee, as no measurement: {}",
                invalid.join("; ")
            ));
        }
        let failures: u64 = d.steps.iter().map(|s| s.failures).sum();
        if failures > 0 {
            let first = d.steps.iter().find_map(|s| s.first_failure.clone()).unwrap_or_default();
            return Ending::CompleteWithFailures(format!("{failures} transactions failed; the first: {first}"));
        }
        Ending::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::LoadInfo;
    use crate::sweep::{self, StopReason};

    #[test]
    fn window_rates_cover_the_window_and_average_to_its_rate() {
        let seconds = [10.0, 12.0, 8.0, 10.0, 10.0, 11.0, 9.0, 10.0, 10.0, 10.0, 10.0, 12.0];
        let rates = window_rates(&seconds, 5).unwrap();
        // 12 seconds in 5 parts: 3, 3, 2, 2, 2 seconds.
        assert_eq!(rates, vec![600.0, 620.0, 570.0, 600.0, 660.0]);
        let weighted: f64 = rates.iter().zip([3.0, 3.0, 2.0, 2.0, 2.0]).map(|(r, l)| r * l).sum::<f64>() / 12.0;
        let whole = seconds.iter().sum::<f64>() * 60.0 / 12.0;
        assert!((weighted - whole).abs() < 1e-9);
        assert_eq!(window_rates(&seconds[..3], 5), Some(vec![600.0, 720.0, 480.0]));
        assert_eq!(window_rates(&[], 5), None);
    }
    use crate::transactions::Kind;

    #[test]
    fn transaction_kinds_name_their_tests() {
        assert_eq!(step_test_id(8), "U=8");
        assert_eq!(crate::figures::step_name(8, None), "U=8");
        assert_eq!(crate::figures::step_name(8, Some(693.81)), "U=8 R=694/s");
        assert_eq!(crate::figures::step_name(1, Some(0.5)), "U=1 R=0.5/s");
        assert_eq!(Kind::NewOrder.name(), "New-Order");
    }

    fn step(users: u32, transactions: u64, failures: u64) -> StepFigures {
        StepFigures {
            users,
            measured_seconds: 1.0,
            nopm: Some(transactions as f64 * 27.0),
            tpm: transactions as f64 * 60.0,
            db_tpm: None,
            server_tpm: None,
            transactions,
            retries: 0,
            failures,
            kinds: Vec::new(),
            per_second: Vec::new(),
            ramp_seconds: 0.0,
            client_cpu_percent: 0.0,
            client_cpu_us_per_transaction: 0.0,
            server: Default::default(),
            server_note: None,
            wait_events: Default::default(),
            first_failure: (failures > 0).then(|| "Payment: disk full".to_string()),
            clients: None,
            open: None,
            slo: Vec::new(),
        }
    }

    fn ending(steps: Vec<StepFigures>) -> (Ending, String) {
        let document = OltpDocument {
            profile: Profile::Tpcc,
            target: "x.sqlite".into(),
            dialect: "sqlite".into(),
            server_version: "SQLite".into(),
            scale: 1,
            ramp_seconds: 0.0,
            duration_seconds: 1.0,
            keying_thinking: false,
            all_warehouses: false,
            mix: None,
            transactions_per_user: None,
            mode: Mode::Client,
            partitions: 0,
            clients_per_user: 1,
            target_latency_ms: 100.0,
            load: LoadInfo { reused: true, rows: 0, seconds: 0.0, loaders: 0 },
            knee: sweep::knee(&steps, Profile::Tpcc, 100.0),
            steps,
            stop_reason: StopReason::ListDone,
            consistency: Vec::new(),
            pgbench: Vec::new(),
            drive: Default::default(),
            seed: Some(1),
            capacity: None,
        };
        let text = render(&document, &SamplerSeries::default());
        (OltpMeasured::new(document).ending(), text)
    }

    /// A run whose steps ended no transaction (a `--duration` of 1ns once did) or lost more than 1% of them is no
    /// result: it ends failed, or with failures when some step stands, and the table says which step is left out.
    #[test]
    fn runs_without_a_measured_step_fail() {
        let (end, text) = ending(vec![step(2, 0, 0)]);
        assert!(matches!(&end, Ending::Failed(why) if why.contains("U=2: 2 users ended no transaction")), "{end:?}");
        assert!(text.contains("No measurement, left out of the knee: U=2") && text.contains("Knee: no step"), "{text}");
        let (end, _) = ending(vec![step(1, 100, 0), step(2, 96, 104)]);
        assert!(matches!(&end, Ending::CompleteWithFailures(why) if why.contains("52.0%")), "{end:?}");
        let (end, _) = ending(Vec::new());
        assert!(matches!(end, Ending::Failed(_)));
        let (end, _) = ending(vec![step(1, 1000, 3)]);
        assert!(
            matches!(&end, Ending::CompleteWithFailures(why) if why.starts_with("3 transactions failed")),
            "{end:?}"
        );
        assert_eq!(ending(vec![step(1, 1000, 0)]).0, Ending::Complete);
    }
}
