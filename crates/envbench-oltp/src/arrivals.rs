//! Open-loop arrivals (`--rate`, `--arrivals`, `--latency-limit`): transactions arrive on a schedule, whatever the
//! database does, as an application's requests keep arriving while it stalls.
//!
//! A closed loop (HammerDB, pgbench without `--rate`) sends a user's next transaction only when the last returns, so
//! a server that stalls for two seconds is simply sent less, and the transactions that would have arrived meanwhile
//! are never measured (coordinated omission). Here each user has a schedule of intended start times, drawn with the
//! run's seed, and every transaction's response time runs from its intended start: a transaction that waited behind
//! a stalled one carries the wait. Its service time runs from when its session took it; the difference is the
//! schedule's lag. With a latency limit, a transaction that cannot start within it of its intended time is skipped
//! and counted, as pgbench's `--latency-limit` does.

use envbench_base::rng::FastRng;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The highest rate, in transactions per second in all.
pub const MAX_RATE: f64 = 10_000_000.0;
/// The lowest: one transaction in 100 s (a gap a step's clock and names still hold).
pub const MIN_RATE: f64 = 0.01;
/// A transaction that starts later than this after its intended time counts as late: it waited for its session.
pub use envbench_base::wait::LATE_AFTER;
/// A rate is held when the transactions that ended in the measured window are at least this share of those the
/// schedule sent in it.
pub const HELD_SHARE: f64 = 0.95;

/// `--rate`: transactions per second in all, shared by a step's users (`200`, `200/s`), or per user (`20/user`).
/// Stored as it always was, `{"per_second": 20.0, "per_user": true}`, so runs stored before read back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredRate", into = "StoredRate")]
pub enum Rate {
    /// Transactions per second in all.
    Total(f64),
    /// Transactions per second for each user.
    PerUser(f64),
}

/// How a [`Rate`] is stored.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct StoredRate {
    per_second: f64,
    per_user: bool,
}

impl From<StoredRate> for Rate {
    fn from(stored: StoredRate) -> Rate {
        if stored.per_user { Rate::PerUser(stored.per_second) } else { Rate::Total(stored.per_second) }
    }
}

impl From<Rate> for StoredRate {
    fn from(rate: Rate) -> StoredRate {
        match rate {
            Rate::Total(per_second) => StoredRate { per_second, per_user: false },
            Rate::PerUser(per_second) => StoredRate { per_second, per_user: true },
        }
    }
}

impl Rate {
    /// The rate of a step of `users` users, in transactions per second in all.
    pub fn total(self, users: u32) -> f64 {
        match self {
            Rate::Total(per_second) => per_second,
            Rate::PerUser(per_second) => per_second * f64::from(users),
        }
    }

    /// The rate as written: `200/s` or `20/user`.
    pub fn text(self) -> String {
        match self {
            Rate::Total(per_second) => format!("{}/s", trim_number(per_second)),
            Rate::PerUser(per_second) => format!("{}/user", trim_number(per_second)),
        }
    }
}

fn trim_number(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What `--rate` asks for: one rate, or the capacity within a service level (`auto`, with `--slo`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatePlan {
    Fixed(Rate),
    Auto,
}

impl RatePlan {
    /// `200` or `200/s` (transactions per second in all), `20/user` (per user), or `auto`.
    pub fn parse(text: &str) -> Result<RatePlan, String> {
        let trimmed = text.trim().to_ascii_lowercase();
        if trimmed == "auto" {
            return Ok(RatePlan::Auto);
        }
        let (number, rate): (&str, fn(f64) -> Rate) = match trimmed.split_once('/') {
            None => (trimmed.as_str(), Rate::Total),
            Some((number, "s" | "sec")) => (number, Rate::Total),
            Some((number, "user" | "u")) => (number, Rate::PerUser),
            Some(_) => return Err(rate_error(text)),
        };
        match number.trim().parse::<f64>() {
            Ok(value) if (MIN_RATE..=MAX_RATE).contains(&value) => Ok(RatePlan::Fixed(rate(value))),
            _ => Err(rate_error(text)),
        }
    }
}

fn rate_error(text: &str) -> String {
    format!(
        "--rate '{text}': give transactions per second in all (e.g. 200 or 200/s), per user (e.g. 20/user), or auto \
         (the capacity within --slo); a rate is from {MIN_RATE} to {MAX_RATE}"
    )
}

/// How arrivals are spaced (`--arrivals`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Independent arrivals, exponentially spaced (a Poisson process), as many users arrive at an application; what
    /// pgbench's `--rate` draws.
    #[default]
    Poisson,
    /// Evenly spaced, the users' schedules interleaved.
    Fixed,
}

impl Arrivals {
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Fixed => "fixed",
        }
    }

    pub fn parse(text: &str) -> Result<Arrivals, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "poisson" | "exponential" => Ok(Arrivals::Poisson),
            "fixed" | "uniform" | "constant" => Ok(Arrivals::Fixed),
            _ => Err(format!(
                "--arrivals '{text}': give poisson (independent arrivals, the default) or fixed (evenly spaced)"
            )),
        }
    }
}

/// A step's open loop: its rate in all, how arrivals are spaced, and the latency limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpenLoop {
    /// Transactions per second the step's users are sent in all (a fleet's: every host's users together).
    pub per_second: f64,
    /// The users that share the rate (a fleet's: every host's).
    pub users: u32,
    pub arrivals: Arrivals,
    /// Transactions that cannot start within this of their intended time are skipped.
    pub latency_limit: Option<Duration>,
}

/// One user's schedule of intended start times.
pub struct Schedule {
    next: Instant,
    /// The mean time between this user's arrivals, in seconds.
    mean: f64,
    arrivals: Arrivals,
    rng: FastRng,
}

impl Schedule {
    /// The schedule of user `number` of those that share the step's rate, from `start`. Fixed arrivals of the users
    /// interleave evenly; Poisson ones are independent, drawn from `seed` and the user's number.
    pub fn new(open: &OpenLoop, number: u32, start: Instant, seed: u64) -> Schedule {
        let users = open.users.max(1);
        let mean = f64::from(users) / open.per_second;
        let mut rng =
            FastRng::new(seed ^ 0xa441_7a15_0000_0000 ^ u64::from(number).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let first = match open.arrivals {
            Arrivals::Fixed => f64::from(number % users) / open.per_second,
            Arrivals::Poisson => exponential(&mut rng, mean),
        };
        Schedule { next: start + Duration::from_secs_f64(first), mean, arrivals: open.arrivals, rng }
    }

    /// When the next transaction is meant to start.
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Move to the arrival after: spaced from the last intended start, not from when a transaction ended.
    pub fn advance(&mut self) {
        let gap = match self.arrivals {
            Arrivals::Fixed => self.mean,
            Arrivals::Poisson => exponential(&mut self.rng, self.mean),
        };
        self.next += Duration::from_secs_f64(gap);
    }

    /// Arrivals meant to start in `from..to` from the next one on (those a step did not reach before it ended).
    pub fn count_until(&mut self, from: Instant, to: Instant) -> u64 {
        let mut count = 0;
        while self.next < to {
            count += u64::from(self.next >= from);
            self.advance();
        }
        count
    }
}

/// An exponential draw with this mean.
fn exponential(rng: &mut FastRng, mean: f64) -> f64 {
    let uniform = (rng.below(1 << 53) as f64 + 1.0) / (1u64 << 53) as f64;
    -uniform.ln() * mean
}

/// What an open-loop step did with its schedule, over the arrivals meant to start in its measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopFigures {
    /// The rate the users were sent, in transactions per second in all (a fleet agent's: its users' share).
    pub offered_tps: f64,
    pub arrivals: Arrivals,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_ms: Option<f64>,
    /// Arrivals the schedule meant to start in the measured window.
    pub scheduled: u64,
    /// Transactions that ended in the measured window, per second (whenever they were meant to start).
    pub achieved_tps: f64,
    /// Of the scheduled: started more than [`LATE_AFTER`] after their intended time, as their session was busy.
    pub late: u64,
    /// Of the scheduled: not run, as they could not start within the latency limit.
    pub skipped: u64,
    /// Of the scheduled: ended with a response time above the latency limit.
    pub over_limit: u64,
    /// Of the scheduled: not started when the step ended (the backlog it could not clear).
    pub unstarted: u64,
    /// The schedule's lag: how long the started transactions waited for their session.
    pub lag_mean_ms: f64,
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
}

impl OpenLoopFigures {
    /// Whether the users kept up with the schedule: the transactions that ended in the window are at least
    /// [`HELD_SHARE`] of those it sent there (Poisson arrivals vary; the schedule's own count is the yardstick).
    pub fn held(&self, measured_seconds: f64) -> bool {
        self.scheduled == 0 || self.achieved_tps * measured_seconds >= HELD_SHARE * self.scheduled as f64
    }

    /// Why the rate was not held, for a headline; `None` when it was.
    pub fn not_held(&self, measured_seconds: f64) -> Option<String> {
        if self.held(measured_seconds) {
            return None;
        }
        let mut reasons = vec![format!("{:.0} transactions/s ended", self.achieved_tps)];
        if self.skipped > 0 {
            reasons.push(format!("{} skipped over the latency limit", self.skipped));
        }
        if self.unstarted > 0 {
            reasons.push(format!("{} never started", self.unstarted));
        }
        reasons.push(format!("lag up to {}", seconds_words(self.lag_max_ms)));
        Some(format!("did not hold its rate of {:.0}/s: {}", self.offered_tps, reasons.join(", ")))
    }
}

fn seconds_words(ms: f64) -> String {
    if ms >= 1000.0 { format!("{:.1} s", ms / 1000.0) } else { format!("{ms:.1} ms") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_in_all_per_user_or_auto() {
        assert_eq!(RatePlan::parse("200"), Ok(RatePlan::Fixed(Rate::Total(200.0))));
        assert_eq!(RatePlan::parse(" 12.5/s"), Ok(RatePlan::Fixed(Rate::Total(12.5))));
        assert_eq!(RatePlan::parse("20/user"), Ok(RatePlan::Fixed(Rate::PerUser(20.0))));
        assert_eq!(RatePlan::parse("AUTO"), Ok(RatePlan::Auto));
        for bad in ["0", "-5", "fast", "20/minute", "1e99", "1e-20", "NaN", "/user", ""] {
            assert!(RatePlan::parse(bad).unwrap_err().starts_with(&format!("--rate '{bad}': give")), "{bad}");
        }
        let rate = Rate::PerUser(20.0);
        assert_eq!((rate.total(4), rate.text()), (80.0, "20/user".to_string()));
        assert_eq!(Rate::Total(12.5).text(), "12.5/s");
        // Stored as runs stored before this type have it.
        let stored = serde_json::to_value(RatePlan::Fixed(rate)).unwrap();
        assert_eq!(stored, serde_json::json!({"fixed": {"per_second": 20.0, "per_user": true}}));
        assert_eq!(serde_json::from_value::<RatePlan>(stored).unwrap(), RatePlan::Fixed(rate));
        assert_eq!(Arrivals::parse("Fixed"), Ok(Arrivals::Fixed));
        assert!(Arrivals::parse("bursty").unwrap_err().contains("give poisson"));
    }

    /// The users' schedules together send the rate: evenly interleaved when fixed, and on average when Poisson
    /// (whose gaps have the mean and spread of an exponential), the same for the same seed.
    #[test]
    fn schedules_send_the_rate_from_intended_starts() {
        let start = Instant::now();
        let window = (start, start + Duration::from_secs(100));
        for arrivals in [Arrivals::Fixed, Arrivals::Poisson] {
            let open = OpenLoop { per_second: 50.0, users: 4, arrivals, latency_limit: None };
            let total: u64 = (0..4).map(|u| Schedule::new(&open, u, start, 7).count_until(window.0, window.1)).sum();
            assert!((4700..=5300).contains(&total), "{arrivals:?}: {total} arrivals in 100 s at 50/s");
        }
        let fixed = OpenLoop { per_second: 10.0, users: 2, arrivals: Arrivals::Fixed, latency_limit: None };
        let firsts: Vec<Duration> = (0..2).map(|u| Schedule::new(&fixed, u, start, 7).due() - start).collect();
        assert_eq!(firsts, vec![Duration::ZERO, Duration::from_millis(100)]);
        let poisson = OpenLoop { per_second: 10.0, users: 1, arrivals: Arrivals::Poisson, latency_limit: None };
        let mut schedule = Schedule::new(&poisson, 0, start, 7);
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            let before = schedule.due();
            schedule.advance();
            gaps.push((schedule.due() - before).as_secs_f64());
        }
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((mean - 0.1).abs() < 0.005 && (sd - 0.1).abs() < 0.01, "mean {mean}, sd {sd}");
        assert_eq!(Schedule::new(&poisson, 0, start, 7).due(), Schedule::new(&poisson, 0, start, 7).due());
        assert_ne!(Schedule::new(&poisson, 0, start, 7).due(), Schedule::new(&poisson, 1, start, 7).due());
    }

    #[test]
    fn a_rate_is_held_when_what_ended_keeps_up_with_what_was_sent() {
        let figures = OpenLoopFigures {
            offered_tps: 100.0,
            arrivals: Arrivals::Poisson,
            latency_limit_ms: None,
            scheduled: 1000,
            achieved_tps: 96.0,
            late: 10,
            skipped: 0,
            over_limit: 0,
            unstarted: 0,
            lag_mean_ms: 1.0,
            lag_p99_ms: 5.0,
            lag_max_ms: 2100.0,
        };
        assert!(figures.held(10.0));
        let short = OpenLoopFigures { achieved_tps: 60.0, skipped: 300, ..figures };
        assert_eq!(
            short.not_held(10.0).as_deref(),
            Some(
                "did not hold its rate of 100/s: 60 transactions/s ended, 300 skipped over the latency limit, lag up to 2.1 s"
            )
        );
    }
}
