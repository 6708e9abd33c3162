//! Steps of virtual users and the knee: a list of user counts run in order, or `auto` (1, 2, 4, ... doubling) that
//! stops when throughput grows by less than 10% on a doubling or the judged latency passes the target. The knee is
//! the step with the highest throughput within the latency target, among the steps that are measurements (a step that
//! ended no transaction, or in which more than 1% of them failed, is not one, and ends the sweep).

use crate::figures::StepFigures;
use crate::profile::Profile;
use envbench_core::check_settings;
use envbench_core::text::truncate;
use envbench_core::workload::MAX_LIST_SETTINGS;
use serde::{Deserialize, Serialize};

/// Growth on doubling below which an automatic sweep calls the database saturated.
pub const SATURATION_GROWTH: f64 = 0.10;

/// Which user counts to run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsersPlan {
    List(Vec<u32>),
    Auto { max_users: u32 },
}

impl UsersPlan {
    /// `4`, `1,2,4,8` or `auto`; `max_users` bounds each count and `auto`. A list holds at most
    /// [`MAX_LIST_SETTINGS`] counts, none twice.
    pub fn parse(text: &str, max_users: u32) -> Result<UsersPlan, String> {
        if text.trim().eq_ignore_ascii_case("auto") {
            return Ok(UsersPlan::Auto { max_users });
        }
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        check_settings("--users", &parts, MAX_LIST_SETTINGS)?;
        let list = parts
            .iter()
            .map(|part| match part.parse::<u32>() {
                Ok(n) if (1..=max_users).contains(&n) => Ok(n),
                _ => Err(format!(
                    "--users '{}': give a user count from 1 to {max_users}, a list such as 1,2,4,8, or auto",
                    truncate(text, 80)
                )),
            })
            .collect::<Result<Vec<u32>, _>>()?;
        check_settings("--users", &list, MAX_LIST_SETTINGS)?;
        Ok(UsersPlan::List(list))
    }

    /// The plan bounded by `--max-users`: `auto` doubles up to `max_users`, and a listed count above it is refused.
    pub fn within(self, max_users: u32) -> Result<UsersPlan, String> {
        match self {
            UsersPlan::Auto { .. } => Ok(UsersPlan::Auto { max_users }),
            UsersPlan::List(list) if list.iter().any(|&n| n > max_users) => Err(format!(
                "--users '{}': give a user count from 1 to {max_users}, a list such as 1,2,4,8, or auto",
                truncate(&list.iter().map(u32::to_string).collect::<Vec<_>>().join(","), 80)
            )),
            list => Ok(list),
        }
    }

    /// A description for people.
    pub fn describe(&self) -> String {
        match self {
            UsersPlan::List(list) if list.len() == 1 => format!("{} users", list[0]),
            UsersPlan::List(list) => {
                format!("users {}", list.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))
            }
            UsersPlan::Auto { max_users } => format!("users 1, 2, 4, ... up to {max_users} until the knee"),
        }
    }
}

/// Why the steps ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    ListDone,
    LatencyTarget,
    Saturated,
    MaxUsers,
    Interrupted,
    /// The last step was no measurement: it ended no transaction, or too many of them failed.
    Failures,
    /// `--rate auto` found the edge of the service level.
    Capacity,
    /// `--rate auto` met the service level at every rate it offered, up to the closed-loop peak: the edge lies at the
    /// peak or beyond it.
    CapacityAtPeak,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::ListDone => "every listed user count ran",
            StopReason::LatencyTarget => "the latency passed the target",
            StopReason::Saturated => "throughput grew by less than 10% when the users doubled",
            StopReason::MaxUsers => "the highest user count was reached",
            StopReason::Interrupted => "the run was interrupted",
            StopReason::Failures => "the last step was no measurement (no transaction ended, or more than 1% failed)",
            StopReason::Capacity => "the rates offered found the edge of the service level",
            StopReason::CapacityAtPeak => "every rate offered, up to the closed-loop peak, met the service level",
        }
    }
}

/// The user counts of a run, one step at a time: down the list, or doubling until the knee.
pub struct Sweep {
    plan: UsersPlan,
    listed: std::vec::IntoIter<u32>,
}

impl Sweep {
    pub fn new(plan: &UsersPlan) -> Sweep {
        let listed = match plan {
            UsersPlan::List(list) => list.clone(),
            UsersPlan::Auto { .. } => Vec::new(),
        };
        Sweep { plan: plan.clone(), listed: listed.into_iter() }
    }

    /// The users of the next step after `steps`, or why the sweep ends.
    pub fn next(&mut self, steps: &[StepFigures], profile: Profile, target_ms: f64) -> Result<u32, StopReason> {
        // A database that fails the work (a full disk) fails it at the next step too.
        if steps.last().is_some_and(|s| s.invalid().is_some()) {
            return Err(StopReason::Failures);
        }
        match &self.plan {
            UsersPlan::Auto { max_users } => next_auto(steps, profile, target_ms, *max_users),
            UsersPlan::List(_) => self.listed.next().ok_or(StopReason::ListDone),
        }
    }
}

/// The next user count of an automatic sweep, or why it ends.
pub fn next_auto(steps: &[StepFigures], profile: Profile, target_ms: f64, max_users: u32) -> Result<u32, StopReason> {
    let Some(last) = steps.last() else {
        return Ok(1);
    };
    if last.judged_latency_ms(profile) > target_ms {
        return Err(StopReason::LatencyTarget);
    }
    if let [.., previous, last] = steps
        && last.throughput(profile) < previous.throughput(profile) * (1.0 + SATURATION_GROWTH)
    {
        return Err(StopReason::Saturated);
    }
    if last.users >= max_users {
        return Err(StopReason::MaxUsers);
    }
    Ok((last.users * 2).min(max_users))
}

/// The step with the highest throughput whose judged latency is within the target, among the steps that are
/// measurements; fewer users win a tie. A run with closed-loop steps finds its knee among them alone: its open-loop
/// steps (a capacity search's) were offered less than they could end, and their latencies are response times.
pub fn knee(steps: &[StepFigures], profile: Profile, target_ms: f64) -> Option<usize> {
    let closed_only = steps.iter().any(|s| s.open.is_none());
    let mut best: Option<usize> = None;
    for (index, step) in steps.iter().enumerate() {
        if step.judged_latency_ms(profile) > target_ms
            || step.invalid().is_some()
            || (closed_only && step.open.is_some())
        {
            continue;
        }
        if best.is_none_or(|b| step.throughput(profile) > steps[b].throughput(profile)) {
            best = Some(index);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::KindFigures;
    use crate::transactions::Kind;

    fn step(users: u32, nopm: f64, p95_ms: f64) -> StepFigures {
        StepFigures {
            users,
            measured_seconds: 60.0,
            nopm: Some(nopm),
            tpm: nopm * 2.2,
            db_tpm: None,
            server_tpm: None,
            transactions: 100,
            retries: 0,
            failures: 0,
            kinds: vec![KindFigures {
                kind: Kind::NewOrder,
                count: 45,
                rolled_back: 0,
                failures: 0,
                retries: 0,
                mean_ms: p95_ms / 2.0,
                p50_ms: p95_ms / 2.0,
                p90_ms: p95_ms,
                p95_ms,
                p99_ms: p95_ms,
                p999_ms: p95_ms,
                max_ms: p95_ms,
                service: None,
                retried_by: Default::default(),
                failed_by: Default::default(),
            }],
            per_second: vec![],
            ramp_seconds: 0.0,
            client_cpu_percent: 0.0,
            client_cpu_us_per_transaction: 0.0,
            server: Default::default(),
            server_note: None,
            wait_events: Default::default(),
            first_failure: None,
            clients: None,
            open: None,
            slo: Vec::new(),
        }
    }

    #[test]
    fn steps_that_failed_or_ended_nothing_are_no_measurement() {
        let mut failing = step(4, 9000.0, 5.0);
        failing.failures = 1;
        assert!(failing.invalid().is_none(), "1 of 101 failed: {:?}", failing.invalid());
        failing.failures = 2;
        assert!(failing.invalid().is_some(), "2 of 102 failed");
        failing.failures = 108;
        let reason = failing.invalid().unwrap();
        assert!(reason.contains("51.9%") && reason.contains("more than 1%"), "{reason}");
        let mut idle = step(8, 0.0, 0.0);
        idle.transactions = 0;
        assert!(idle.invalid().unwrap().contains("no transaction"));
        // The failing step has the most NOPM, but it is no measurement: the knee is the valid step.
        let steps = vec![step(1, 1000.0, 5.0), failing.clone()];
        assert_eq!(knee(&steps, Profile::Tpcc, 100.0), Some(0));
        assert_eq!(knee(&[failing, idle], Profile::Tpcc, 100.0), None);
        // And the sweep stops there, listed or automatic.
        let mut sweep = Sweep::new(&UsersPlan::List(vec![1, 4, 8]));
        assert_eq!(sweep.next(&[], Profile::Tpcc, 100.0), Ok(1));
        assert_eq!(sweep.next(&steps, Profile::Tpcc, 100.0), Err(StopReason::Failures));
        let mut auto = Sweep::new(&UsersPlan::Auto { max_users: 64 });
        assert_eq!(auto.next(&steps, Profile::Tpcc, 100.0), Err(StopReason::Failures));
    }

    #[test]
    fn users_parse_as_a_count_a_list_or_auto() {
        assert_eq!(UsersPlan::parse("4", 64), Ok(UsersPlan::List(vec![4])));
        assert_eq!(UsersPlan::parse("1, 2,4", 64), Ok(UsersPlan::List(vec![1, 2, 4])));
        assert_eq!(UsersPlan::parse("AUTO", 64), Ok(UsersPlan::Auto { max_users: 64 }));
        assert_eq!(UsersPlan::parse("auto", 1024).unwrap().within(8), Ok(UsersPlan::Auto { max_users: 8 }));
        assert_eq!(UsersPlan::parse("1,8", 1024).unwrap().within(8), Ok(UsersPlan::List(vec![1, 8])));
        assert!(UsersPlan::parse("1,100", 1024).unwrap().within(64).unwrap_err().starts_with("--users '1,100': give"));
        for bad in ["0", "-1", "x", "1,,2", "65", ""] {
            assert!(UsersPlan::parse(bad, 64).unwrap_err().contains("--users"), "{bad}");
        }
        let many = vec!["1"; 5000].join(",");
        assert_eq!(
            UsersPlan::parse(&many, 64).unwrap_err(),
            "--users: 5000 settings are more than 64; give at most 64"
        );
        assert!(UsersPlan::parse("2,02", 64).unwrap_err().contains("2 is given twice"));
        assert_eq!(
            UsersPlan::parse(&(1..=64).map(|n| n.to_string()).collect::<Vec<_>>().join(","), 64).ok().map(
                |p| match p {
                    UsersPlan::List(list) => list.len(),
                    UsersPlan::Auto { .. } => 0,
                }
            ),
            Some(64)
        );
    }

    #[test]
    fn auto_doubles_until_saturation() {
        let target = 100.0;
        let mut steps = vec![];
        assert_eq!(next_auto(&steps, Profile::Tpcc, target, 64), Ok(1));
        steps.push(step(1, 1000.0, 5.0));
        assert_eq!(next_auto(&steps, Profile::Tpcc, target, 64), Ok(2));
        steps.push(step(2, 1900.0, 6.0));
        assert_eq!(next_auto(&steps, Profile::Tpcc, target, 64), Ok(4));
        steps.push(step(4, 2000.0, 9.0));
        assert_eq!(next_auto(&steps, Profile::Tpcc, target, 64), Err(StopReason::Saturated));
        assert_eq!(knee(&steps, Profile::Tpcc, target), Some(2));
    }

    #[test]
    fn auto_stops_at_the_latency_target_and_the_knee_stays_within_it() {
        let steps = vec![step(1, 1000.0, 20.0), step(2, 2000.0, 60.0), step(4, 3500.0, 150.0)];
        assert_eq!(next_auto(&steps, Profile::Tpcc, 100.0, 64), Err(StopReason::LatencyTarget));
        assert_eq!(knee(&steps, Profile::Tpcc, 100.0), Some(1));
        assert_eq!(knee(&steps, Profile::Tpcc, 10.0), None);
        assert_eq!(next_auto(&[step(8, 10.0, 1.0)], Profile::Tpcc, 100.0, 8), Err(StopReason::MaxUsers));
        assert_eq!(next_auto(&[step(6, 10.0, 1.0)], Profile::Tpcc, 100.0, 8), Ok(8));
    }
}
