//! A step's live figures for the user's dashboards ([`envbench_core::live`], served by `--metrics-listen`): each
//! user counts what it ran since the figures were last published, and the coordinator publishes them every second.
//! Every counter is there from the step's first second, each kind of retry and failure at 0 until one happens, and
//! a series' labels stay the same through the step (its phase is a gauge of its own), as Prometheus asks of known
//! label values.

use crate::arrivals::OpenLoop;
use crate::transactions::Kind;
use envbench_base::latency::LatencyHistogram;
use envbench_sql::ErrorKind;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The phase of a step that measures, as the coordinator names it.
pub(crate) const MEASURING: &str = "measuring";

/// One user's figures for the live metrics: response times since they were last published, and counts since the step
/// began.
#[derive(Default)]
pub(crate) struct LiveTally {
    pub(crate) response: BTreeMap<Kind, LatencyHistogram>,
    pub(crate) retries: BTreeMap<&'static str, u64>,
    pub(crate) failures: BTreeMap<&'static str, u64>,
    pub(crate) late: u64,
    pub(crate) skipped: u64,
}

/// Publish the step's live figures ([`envbench_core::live`]): what ran since the last time, and the counts so far.
pub(crate) fn publish_live(
    users: &[Mutex<LiveTally>],
    open: Option<&OpenLoop>,
    step: &str,
    phase: &str,
    ended: u64,
    rate: f64,
) {
    use envbench_core::live::{self, Kind as Metric};
    if users.is_empty() {
        return;
    }
    let mut response: BTreeMap<Kind, LatencyHistogram> = BTreeMap::new();
    let (mut retries, mut failures) = (BTreeMap::<&str, u64>::new(), BTreeMap::<&str, u64>::new());
    let (mut late, mut skipped) = (0, 0);
    for user in users {
        let mut user = user.lock().unwrap_or_else(|e| e.into_inner());
        for (kind, histogram) in &mut user.response {
            response.entry(*kind).or_default().merge(histogram);
            histogram.reset();
        }
        for (sums, counts) in [(&mut retries, &user.retries), (&mut failures, &user.failures)] {
            for (cause, n) in counts {
                *sums.entry(cause).or_insert(0) += n;
            }
        }
        late += user.late;
        skipped += user.skipped;
    }
    let labels = [("step", step)];
    let mut batch = live::Batch::default();
    batch.set(
        "envbench_oltp_measuring",
        "1 while the step measures, 0 during its ramp-up.",
        Metric::Gauge,
        &labels,
        f64::from(u8::from(phase == MEASURING)),
    );
    batch.set("envbench_oltp_users", "Virtual users of the step.", Metric::Gauge, &labels, users.len() as f64);
    batch.set(
        "envbench_oltp_transactions_total",
        "Transactions the users ended in the step so far (committed or rolled back on purpose).",
        Metric::Counter,
        &labels,
        ended as f64,
    );
    batch.set(
        "envbench_oltp_transactions_per_second",
        "Transactions the users ended per second, over the last second.",
        Metric::Gauge,
        &labels,
        rate,
    );
    for (kind, histogram) in response.iter().filter(|(_, h)| h.count() > 0) {
        for (quantile, q) in [("0.5", 0.5), ("0.95", 0.95), ("0.99", 0.99)] {
            batch.set(
                "envbench_oltp_response_time_seconds",
                "Response time of the transactions that ended in the last second, at a quantile (an open loop's from \
                 the intended start).",
                Metric::Gauge,
                &[("step", step), ("transaction", kind.option_name()), ("quantile", quantile)],
                histogram.quantile_ns(q) as f64 / 1e9,
            );
        }
    }
    let conflicts = ErrorKind::ALL.iter().filter(|k| matches!(k, ErrorKind::Retry(_)));
    for (name, help, counts, kinds) in [
        (
            "envbench_oltp_retries_total",
            "Transactions run again after a conflict, by its kind.",
            &retries,
            conflicts.map(|k| k.name()).collect::<Vec<_>>(),
        ),
        (
            "envbench_oltp_failures_total",
            "Transactions that failed, by kind of error.",
            &failures,
            ErrorKind::ALL.iter().map(|k| k.name()).collect(),
        ),
    ] {
        let mut counts = counts.clone();
        for kind in kinds {
            counts.entry(kind).or_insert(0);
        }
        for (cause, n) in counts {
            batch.set(name, help, Metric::Counter, &[("step", step), ("kind", cause)], n as f64);
        }
    }
    if let Some(open) = open {
        batch.set(
            "envbench_oltp_offered_transactions_per_second",
            "The rate the open loop sends transactions at, in all.",
            Metric::Gauge,
            &labels,
            open.per_second,
        );
        batch.set(
            "envbench_oltp_late_total",
            "Transactions that started more than 1 ms after their intended time.",
            Metric::Counter,
            &labels,
            late as f64,
        );
        batch.set(
            "envbench_oltp_skipped_total",
            "Transactions skipped as they could not start within the latency limit.",
            Metric::Counter,
            &labels,
            skipped as f64,
        );
    }
    batch.replace_prefix("envbench_oltp_");
}
