//! Steps of virtual users and the knee: a list of user counts run in order, or `auto` (1, 2, 4, ... doubling) that
//! stops when throughput grows by less than 10% on a doubling or the judged latency passes the target. The knee is
//! the step with the highest throughput within the latency target.

use crate::Profile;
use crate::users::StepFigures;
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
    /// `4`, `1,2,4,8` or `auto`; `max_users` bounds `auto`.
    pub fn parse(text: &str, max_users: u32) -> Result<UsersPlan, String> {
        if text.trim().eq_ignore_ascii_case("auto") {
            return Ok(UsersPlan::Auto { max_users });
        }
        let list: Result<Vec<u32>, _> = text
            .split(',')
            .map(|part| match part.trim().parse::<u32>() {
                Ok(n) if (1..=max_users).contains(&n) => Ok(n),
                _ => Err(format!(
                    "--users '{text}': give a user count from 1 to {max_users}, a list such as 1,2,4,8, or auto"
                )),
            })
            .collect();
        list.map(UsersPlan::List)
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
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::ListDone => "every listed user count ran",
            StopReason::LatencyTarget => "the latency passed the target",
            StopReason::Saturated => "throughput grew by less than 10% when the users doubled",
            StopReason::MaxUsers => "the highest user count was reached",
            StopReason::Interrupted => "the run was interrupted",
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

/// The step with the highest throughput whose judged latency is within the target; fewer users win a tie.
pub fn knee(steps: &[StepFigures], profile: Profile, target_ms: f64) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (index, step) in steps.iter().enumerate() {
        if step.judged_latency_ms(profile) > target_ms || step.transactions == 0 {
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
    use crate::transactions::Kind;
    use crate::users::KindFigures;

    fn step(users: u32, nopm: f64, p95_ms: f64) -> StepFigures {
        StepFigures {
            users,
            measured_seconds: 60.0,
            nopm: Some(nopm),
            tpm: nopm * 2.2,
            db_tpm: None,
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
                p95_ms,
                p99_ms: p95_ms,
                p999_ms: p95_ms,
                max_ms: p95_ms,
            }],
            per_second: vec![],
            ramp_seconds: 0.0,
            client_cpu_percent: 0.0,
            client_cpu_us_per_transaction: 0.0,
            server: Default::default(),
            wait_events: Default::default(),
            first_failure: None,
        }
    }

    #[test]
    fn users_parse_as_a_count_a_list_or_auto() {
        assert_eq!(UsersPlan::parse("4", 64), Ok(UsersPlan::List(vec![4])));
        assert_eq!(UsersPlan::parse("1, 2,4", 64), Ok(UsersPlan::List(vec![1, 2, 4])));
        assert_eq!(UsersPlan::parse("AUTO", 64), Ok(UsersPlan::Auto { max_users: 64 }));
        for bad in ["0", "-1", "x", "1,,2", "65", ""] {
            assert!(UsersPlan::parse(bad, 64).unwrap_err().contains("--users"), "{bad}");
        }
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
