//! `--rate auto`: the capacity a system holds within a service level, beside its closed-loop peak.
//!
//! A closed loop's peak is what the server ends when users never wait; an application arrives whatever the server
//! does, and as the offered rate nears the peak, queues grow and response times with them. So the run first measures
//! the closed-loop peak at the chosen users, then offers open-loop rates as shares of it, [`LADDER`] up until a step
//! misses the service level (a percentile past its limit, or the rate not held), then halves the gap between the
//! highest step that met it and the lowest that missed [`BISECTIONS`] times. The capacity is the throughput of the
//! highest step within the service level: by construction at or below the peak.

use crate::figures::StepFigures;
use crate::profile::Profile;
use envbench_core::text::number;
use serde::{Deserialize, Serialize};

/// The shares of the closed-loop peak offered first, in order.
pub const LADDER: [f64; 4] = [0.25, 0.5, 0.75, 1.0];
/// Halvings of the gap between the highest share that met the service level and the lowest that missed it.
pub const BISECTIONS: u32 = 2;

/// The search over shares of the peak, one step at a time.
#[derive(Clone, Debug, Default)]
pub struct Search {
    /// The highest share that met the level (0: none yet) and the lowest that missed it.
    met: f64,
    missed: Option<f64>,
    ladder: usize,
    bisections: u32,
}

impl Search {
    /// The share to offer next, after a step at `share` that `met` the level (`None` before the first); `None` when
    /// the search is done.
    pub fn next(&mut self, last: Option<(f64, bool)>) -> Option<f64> {
        match last {
            Some((share, true)) => self.met = self.met.max(share),
            Some((share, false)) => self.missed = Some(self.missed.map_or(share, |m| m.min(share))),
            None => {}
        }
        match self.missed {
            None => {
                let share = LADDER.get(self.ladder).copied();
                self.ladder += 1;
                share
            }
            Some(missed) if self.bisections < BISECTIONS => {
                self.bisections += 1;
                Some((self.met + missed) / 2.0)
            }
            Some(_) => None,
        }
    }
}

/// What a capacity run found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityFigures {
    pub users: u32,
    /// The service level, as written.
    pub slo: String,
    /// The closed-loop step's throughput (NOPM for tpcc, TPS for tpcb) and its index among the steps.
    pub peak: f64,
    pub peak_step: usize,
    /// The throughput of the highest open-loop step within the service level, and its index (`None`: no step was).
    pub capacity: Option<f64>,
    pub capacity_step: Option<usize>,
}

impl CapacityFigures {
    /// The capacity of `steps` (the closed-loop step first, then the open-loop ones).
    pub fn of(steps: &[StepFigures], profile: Profile, slo: String) -> Option<CapacityFigures> {
        let peak_step = steps.iter().position(|s| s.open.is_none())?;
        let best = steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.open.is_some() && s.within_slo())
            .max_by(|a, b| a.1.throughput(profile).total_cmp(&b.1.throughput(profile)))
            .map(|(index, _)| index);
        Some(CapacityFigures {
            users: steps[peak_step].users,
            slo,
            peak: steps[peak_step].throughput(profile),
            peak_step,
            capacity: best.map(|index| steps[index].throughput(profile)),
            capacity_step: best,
        })
    }

    /// The headline: the capacity within the level beside the closed-loop peak.
    pub fn headline(&self, profile: Profile, steps: &[StepFigures]) -> String {
        let unit = profile.throughput_label();
        match (self.capacity, self.capacity_step.and_then(|i| steps.get(i))) {
            (Some(capacity), Some(step)) => format!(
                "Capacity {} {unit} within the SLO ({}) at {} users, offered {}/s: {:.0}% of the closed-loop peak of \
                 {} {unit}",
                number(capacity),
                self.slo,
                self.users,
                number(step.open.as_ref().map_or(0.0, |o| o.offered_tps)),
                capacity * 100.0 / self.peak.max(1e-9),
                number(self.peak)
            ),
            _ => {
                let peak_tps = steps.get(self.peak_step).map_or(0.0, |s| s.tpm / 60.0);
                let offered = steps.iter().filter_map(|s| s.open.as_ref()).map(|o| o.offered_tps);
                match offered.reduce(f64::min) {
                    Some(lowest) => format!(
                        "No capacity within the SLO ({}) at {} users: every offered rate, down to {}/s ({:.0}% of the \
                         closed-loop peak of {} {unit}), missed it",
                        self.slo,
                        self.users,
                        number(lowest),
                        lowest * 100.0 / peak_tps.max(1e-9),
                        number(self.peak)
                    ),
                    None => format!(
                        "No capacity within the SLO ({}) at {} users: the closed-loop step was no measurement",
                        self.slo, self.users
                    ),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ladder climbs until a share misses, then the gap is halved twice; a level met at the peak ends the
    /// search there, and one missed at once halves down from the first share.
    #[test]
    fn the_search_climbs_then_halves_the_gap() {
        let run = |edge: f64| {
            let mut search = Search::default();
            let (mut tried, mut last) = (Vec::new(), None);
            while let Some(share) = search.next(last) {
                tried.push(share);
                last = Some((share, share <= edge));
            }
            tried
        };
        assert_eq!(run(0.6), vec![0.25, 0.5, 0.75, 0.625, 0.5625]);
        assert_eq!(run(2.0), vec![0.25, 0.5, 0.75, 1.0]);
        assert_eq!(run(0.1), vec![0.25, 0.125, 0.0625]);
    }
}
