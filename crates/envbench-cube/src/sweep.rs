//! Running the sequence: once ([`run_sequence`]) or at every thread setting of a sweep ([`run_sweep`], the
//! settings interleaved within each repetition), with the sweep's recommendation and optional retrievals.

use crate::bench::{CubeConfig, SequenceOutcome, ThreadKnob, ThreadSettings, prepare, run_settings, with_cube};
use crate::error::CubeError;
use crate::recommend::{Recommendation, recommend};
use crate::retrievals::RetrievalOutcome;
use envbench_core::sampler::StepObserver;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;

/// Run the whole sequence `config.repeat` times. The observer hears each step start and end (named as
/// [`Step::name`]; `0 generate data` when the input files must be generated first).
pub fn run_sequence(
    config: &CubeConfig,
    observer: &dyn StepObserver,
    cancel: &AtomicBool,
) -> Result<SequenceOutcome, CubeError> {
    let mut swept = run_sweep(config, &ThreadSweep::default(), observer, cancel)?;
    Ok(swept.outcomes.remove(0))
}

/// Lists of values for the thread settings; a sweep runs the sequence once per combination (an empty list keeps
/// the configured value).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSweep {
    pub load_threads: Vec<usize>,
    pub calc_threads: Vec<usize>,
    pub fix_threads: Vec<usize>,
    pub restructure_threads: Vec<usize>,
}

impl ThreadSweep {
    fn values(&self, knob: ThreadKnob) -> &[usize] {
        match knob {
            ThreadKnob::LoadThreads => &self.load_threads,
            ThreadKnob::CalcThreads => &self.calc_threads,
            ThreadKnob::FixThreads => &self.fix_threads,
            ThreadKnob::RestructureThreads => &self.restructure_threads,
        }
    }

    /// Every combination, starting from `base`.
    pub fn settings(&self, base: ThreadSettings) -> Vec<ThreadSettings> {
        let mut all = vec![base];
        for knob in ThreadKnob::ALL {
            let values = self.values(knob);
            if values.is_empty() {
                continue;
            }
            all = all
                .iter()
                .flat_map(|s| {
                    values.iter().map(move |&v| {
                        let mut s = *s;
                        knob.set(&mut s, v);
                        s
                    })
                })
                .collect();
        }
        all
    }
}

/// The sequence at every setting of a sweep, and what to use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepOutcome {
    pub outcomes: Vec<SequenceOutcome>,
    /// Present when the sweep had at least two settings.
    pub recommendation: Option<Recommendation>,
    /// Concurrent retrievals on the loaded cube, when asked for.
    #[serde(default)]
    pub retrievals: Option<RetrievalOutcome>,
}

/// Run the sequence at every thread setting of `sweep`, the settings interleaved within each repetition (the data is
/// generated once).
pub fn run_sweep(
    config: &CubeConfig,
    sweep: &ThreadSweep,
    observer: &dyn StepObserver,
    cancel: &AtomicBool,
) -> Result<SweepOutcome, CubeError> {
    let settings = sweep.settings(config.threads);
    for threads in &settings {
        CubeConfig { threads: *threads, ..config.clone() }.validate()?;
    }
    with_cube(config, || {
        let data = prepare(config, observer, cancel)?;
        let (outcomes, retrievals) = run_settings(config, &settings, &data, observer, cancel)?;
        let recommendation = recommend(&outcomes);
        Ok(SweepOutcome { outcomes, recommendation, retrievals })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_settings_are_the_cartesian_product() {
        let sweep = ThreadSweep { calc_threads: vec![1, 2, 4], restructure_threads: vec![2, 8], ..Default::default() };
        let settings = sweep.settings(ThreadSettings::default());
        assert_eq!(settings.len(), 6);
        assert!(settings.iter().all(|s| s.load_threads == 8 && s.fix_threads == 8));
        assert!(settings.contains(&ThreadSettings { calc_threads: 4, restructure_threads: 2, ..Default::default() }));
        assert_eq!(ThreadSweep::default().settings(ThreadSettings::default()).len(), 1);
    }
}
