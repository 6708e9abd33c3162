//! What a step of users measured ([`StepFigures`]): each kind of transaction's counts and latency percentiles (an open
//! loop's response and service times), the step's throughput and the server's counters, an open loop's schedule and
//! what became of it, and the step's name; with when a step is no measurement.

use crate::arrivals::{Arrivals, OpenLoopFigures};
use crate::profile::Profile;
use crate::slo::Judged;
use crate::telemetry::Counters;
use crate::transactions::Kind;
use envbench_base::latency::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The test id, and the sampler's step name, of a step of `users` users.
pub fn step_test_id(users: u32) -> String {
    format!("U={users}")
}

/// The test id of a step of `users` users, sent `offered_tps` transactions per second in all when its loop is open.
pub fn step_name(users: u32, offered_tps: Option<f64>) -> String {
    match offered_tps {
        // Whole transactions per second from 10 up: a search's rates are shares of a measured peak, and a hundredth
        // of one would only make the name long.
        Some(rate) if rate >= 10.0 => format!("U={users} R={rate:.0}/s"),
        Some(rate) => {
            let rate = format!("{rate:.2}");
            format!("U={users} R={}/s", rate.trim_end_matches('0').trim_end_matches('.'))
        }
        None => step_test_id(users),
    }
}

/// The share of a step's transactions that may fail before the step stops being a measurement. Failures are errors
/// (a full disk, a lost table, retries run out), never TPC-C's intended New-Order rollbacks, which count as ended
/// transactions; a healthy database fails none, and the 1% the specification lets New-Order roll back on purpose is
/// the most that could still leave throughput and latency meaning what they say.
pub const MAX_FAILED_SHARE: f64 = 0.01;

/// The figures of one kind of transaction in the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindFigures {
    pub kind: Kind,
    /// Transactions that ended (committed or rolled back on purpose).
    pub count: u64,
    pub rolled_back: u64,
    pub failures: u64,
    pub retries: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    /// The percentile TPC-C's response-time limits are set at (absent from runs stored before it was kept: 0).
    #[serde(default)]
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// Open loop: the service time, from when a session took the transaction (the latencies above are response
    /// times, from its intended start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceFigures>,
    /// Retries by the conflict that caused them (`serialization`, `deadlock`, `lock-timeout`, `busy`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retried_by: BTreeMap<String, u64>,
    /// Failures by kind of error (a conflict whose tries ran out, or what else ended it: `other`, `cancelled`...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by: BTreeMap<String, u64>,
}

/// An open-loop transaction's service time: from when its session took it to its end, in ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceFigures {
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl ServiceFigures {
    pub fn of(histogram: &LatencyHistogram) -> ServiceFigures {
        let ms = |ns: u64| ns as f64 / 1e6;
        ServiceFigures {
            mean_ms: histogram.mean_ns() / 1e6,
            p50_ms: ms(histogram.quantile_ns(0.50)),
            p95_ms: ms(histogram.quantile_ns(0.95)),
            p99_ms: ms(histogram.quantile_ns(0.99)),
            max_ms: ms(histogram.max_ns()),
        }
    }
}

/// The figures of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    pub users: u32,
    pub measured_seconds: f64,
    /// New orders per minute, counted from the database (TPC-C).
    pub nopm: Option<f64>,
    /// Transactions per minute ended by the users (client side).
    pub tpm: f64,
    /// Commits per minute counted by the server in the run's database, where it counts them.
    pub db_tpm: Option<f64>,
    /// Transactions per minute the server ended in the run's database, as HammerDB reports TPM
    /// ([`telemetry::SERVER_TRANSACTIONS`]); absent where the server counts none per database (MariaDB/MySQL) and
    /// from runs stored before envbench counted it.
    #[serde(default)]
    pub server_tpm: Option<f64>,
    pub transactions: u64,
    pub retries: u64,
    pub failures: u64,
    pub kinds: Vec<KindFigures>,
    /// Transactions ended in each second of the step, ramp included.
    pub per_second: Vec<f64>,
    pub ramp_seconds: f64,
    /// envbench's own CPU in the measured window, in percent of one core, and per transaction.
    pub client_cpu_percent: f64,
    pub client_cpu_us_per_transaction: f64,
    /// The server's counters over the measured window (PostgreSQL's of the run's database; MariaDB's the whole
    /// server's), never below zero.
    pub server: Counters,
    /// Why a server figure is unknown for this step (a counter that went backwards), for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_note: Option<String>,
    /// Wait events of the users' sessions, as sampled (PostgreSQL).
    pub wait_events: BTreeMap<String, u64>,
    /// The first error of a failed transaction, for people.
    pub first_failure: Option<String>,
    /// Users that each drove several clients over their one connection: how many each, and how long the clients
    /// waited for it (absent when every user is one client, and from runs stored before the option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<ClientsFigures>,
    /// An open-loop step's schedule and what became of it (absent from closed-loop steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenLoopFigures>,
    /// How an open-loop step's response times stood against the run's service level (`--slo`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo: Vec<Judged>,
}

/// The clients of a step whose users each drive several ([`StepSettings::clients_per_user`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientsFigures {
    pub per_user: u32,
    /// How long measured transactions waited, after their client submitted them, for the user's connection.
    pub wait_mean_ms: f64,
    pub wait_p95_ms: f64,
    pub wait_max_ms: f64,
}

impl ClientsFigures {
    /// The figures of `per_user` clients a user from the waits of every measured transaction.
    pub fn of(per_user: u32, waits: &LatencyHistogram) -> ClientsFigures {
        ClientsFigures {
            per_user,
            wait_mean_ms: waits.mean_ns() / 1e6,
            wait_p95_ms: waits.quantile_ns(0.95) as f64 / 1e6,
            wait_max_ms: waits.max_ns() as f64 / 1e6,
        }
    }
}

impl KindFigures {
    /// The figures of `kind` from the latency of every measured transaction and its (rolled back, failed, retried)
    /// counts.
    pub fn of(kind: Kind, latency: &LatencyHistogram, [rolled_back, failures, retries]: [u64; 3]) -> KindFigures {
        let ms = |ns: u64| ns as f64 / 1e6;
        KindFigures {
            kind,
            count: latency.count(),
            rolled_back,
            failures,
            retries,
            mean_ms: latency.mean_ns() / 1e6,
            p50_ms: ms(latency.quantile_ns(0.50)),
            p90_ms: ms(latency.quantile_ns(0.90)),
            p95_ms: ms(latency.quantile_ns(0.95)),
            p99_ms: ms(latency.quantile_ns(0.99)),
            p999_ms: ms(latency.quantile_ns(0.999)),
            max_ms: ms(latency.max_ns()),
            service: None,
            retried_by: BTreeMap::new(),
            failed_by: BTreeMap::new(),
        }
    }

    /// The figures with an open loop's service times, and the retries and failures by their kind of error.
    pub fn detailed(mut self, service: Option<&LatencyHistogram>, retried_by: &Causes, failed_by: &Causes) -> Self {
        self.service = service.map(ServiceFigures::of);
        (self.retried_by, self.failed_by) = (retried_by.clone(), failed_by.clone());
        self
    }
}

/// Counts by kind of error ([`ErrorKind::name`]).
pub type Causes = BTreeMap<String, u64>;

/// A step's figures with the latency of every measured transaction, by kind (what a fleet merges).
#[derive(Clone, Debug)]
pub struct MeasuredStep {
    pub figures: StepFigures,
    pub latency: BTreeMap<Kind, LatencyHistogram>,
    /// How long each measured transaction waited for its user's connection (users with several clients).
    pub waits: Option<LatencyHistogram>,
    /// An open loop's service times by kind and its schedule's lag.
    pub open: Option<OpenLoopTally>,
}

/// The histograms of an open-loop step beside its response times (what a fleet merges).
#[derive(Clone, Debug)]
pub struct OpenLoopTally {
    pub service: BTreeMap<Kind, LatencyHistogram>,
    pub lag: LatencyHistogram,
}

impl StepFigures {
    /// The step's test id and the sampler's name of it: its users, and an open loop's rate (`U=8 R=120/s`).
    pub fn test_id(&self) -> String {
        step_name(self.users, self.open.as_ref().map(|o| o.offered_tps))
    }

    /// Whether the step met every level of the service level it was judged by (false when it was judged by none).
    pub fn within_slo(&self) -> bool {
        !self.slo.is_empty()
            && self.slo.iter().all(|j| j.met)
            && self.open.as_ref().is_some_and(|o| o.held(self.measured_seconds))
            && self.invalid().is_none()
    }

    pub fn kind(&self, kind: Kind) -> Option<&KindFigures> {
        self.kinds.iter().find(|k| k.kind == kind)
    }

    /// The throughput the knee is judged by: NOPM for TPC-C, transactions per second for TPC-B.
    pub fn throughput(&self, profile: Profile) -> f64 {
        match profile {
            Profile::Tpcc => self.nopm.unwrap_or(0.0),
            Profile::Tpcb => self.tpm / 60.0,
        }
    }

    /// The share of the measured window's transactions that failed (0 when none ran).
    pub fn failed_share(&self) -> f64 {
        let attempted = self.transactions + self.failures;
        if attempted == 0 { 0.0 } else { self.failures as f64 / attempted as f64 }
    }

    /// Why the step is not a measurement: it ended no transaction, or more than [`MAX_FAILED_SHARE`] of them failed.
    /// `None` for a step whose figures stand.
    pub fn invalid(&self) -> Option<String> {
        if self.transactions == 0 {
            return Some(format!(
                "{} users ended no transaction in {:.1} s{}",
                self.users,
                self.measured_seconds,
                self.first_failure.as_ref().map(|f| format!(" (the first failure: {f})")).unwrap_or_default()
            ));
        }
        let share = self.failed_share();
        (share > MAX_FAILED_SHARE).then(|| {
            format!(
                "{:.1}% of the transactions of {} users failed (more than {}%){}",
                share * 100.0,
                self.users,
                MAX_FAILED_SHARE * 100.0,
                self.first_failure.as_ref().map(|f| format!("; the first: {f}")).unwrap_or_default()
            )
        })
    }

    /// The latency the knee is judged by: New-Order's p95 (TPC-C), the transaction's p95 (TPC-B), in ms.
    pub fn judged_latency_ms(&self, profile: Profile) -> f64 {
        self.kind(profile.judged_kind()).map_or(0.0, |k| k.p95_ms)
    }
}

/// What became of an open loop's arrivals meant to start in the measured window ([`OpenLoopFigures`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenCounts {
    pub scheduled: u64,
    pub late: u64,
    pub skipped: u64,
    pub over_limit: u64,
    pub unstarted: u64,
}

impl OpenCounts {
    /// The counts of an open-loop step's figures (what a fleet adds up).
    pub fn of(figures: &OpenLoopFigures) -> OpenCounts {
        OpenCounts {
            scheduled: figures.scheduled,
            late: figures.late,
            skipped: figures.skipped,
            over_limit: figures.over_limit,
            unstarted: figures.unstarted,
        }
    }

    pub fn add(&mut self, other: OpenCounts) {
        self.scheduled += other.scheduled;
        self.late += other.late;
        self.skipped += other.skipped;
        self.over_limit += other.over_limit;
        self.unstarted += other.unstarted;
    }
}

/// An open-loop step's figures: the rate its users were offered and the rate they achieved, in transactions per
/// second, how arrivals were spaced and the latency limit, with its counts and its schedule's lag.
pub fn open_figures(
    [offered_tps, achieved_tps]: [f64; 2],
    arrivals: Arrivals,
    latency_limit_ms: Option<f64>,
    counts: &OpenCounts,
    lag: &LatencyHistogram,
) -> OpenLoopFigures {
    let ms = |ns: u64| ns as f64 / 1e6;
    OpenLoopFigures {
        offered_tps,
        arrivals,
        latency_limit_ms,
        scheduled: counts.scheduled,
        achieved_tps,
        late: counts.late,
        skipped: counts.skipped,
        over_limit: counts.over_limit,
        unstarted: counts.unstarted,
        lag_mean_ms: lag.mean_ns() / 1e6,
        lag_p99_ms: ms(lag.quantile_ns(0.99)),
        lag_max_ms: ms(lag.max_ns()),
    }
}
