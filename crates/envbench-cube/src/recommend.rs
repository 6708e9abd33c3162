//! What a thread sweep recommends: per step the fastest setting and what it saves, overall the best single setting,
//! whether each difference is beyond the noise of the repetitions, and the advice in one sentence.

use crate::bench::{SequenceOutcome, Step, ThreadKnob, ThreadSettings};
use serde::{Deserialize, Serialize};

/// The best setting for one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepChoice {
    pub step: Step,
    pub name: String,
    pub best: ThreadSettings,
    /// The best setting in the words of the varied knobs, e.g. `calc_threads=16`.
    pub best_label: String,
    pub best_mean_seconds: f64,
    /// The step's time with the overall best setting.
    pub overall_best_mean_seconds: f64,
    /// What the step's best setting saves against the overall best (0 when they are the same).
    pub saving_seconds: f64,
    pub saving_percent: f64,
    /// Slowest over fastest setting for this step, minus one, in percent.
    pub spread_percent: f64,
    /// True when a knob the sweep varied governs this step; only such steps can be exceptions.
    #[serde(default)]
    pub governed: bool,
    /// The second-fastest setting and its mean.
    #[serde(default)]
    pub runner_up_label: Option<String>,
    #[serde(default)]
    pub runner_up_mean_seconds: Option<f64>,
    /// Whether the fastest setting is really faster than the runner-up.
    #[serde(default)]
    pub difference: Difference,
}

/// Whether the fastest of two settings is faster beyond the noise of the repetitions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Difference {
    /// Every repetition of the fastest beat every repetition of the runner-up (a Mann-Whitney U of 0).
    Clear,
    /// Their repetitions overlap: the order may be chance.
    WithinNoise,
    /// Fewer than [`MIN_JUDGED_REPETITIONS`] repetitions per setting: the difference cannot be judged.
    #[default]
    CannotJudge,
}

/// Repetitions per setting needed to judge a difference.
pub const MIN_JUDGED_REPETITIONS: usize = 3;

impl Difference {
    /// Judge the fastest setting's samples against the runner-up's.
    pub fn of(fastest: &[f64], runner_up: &[f64]) -> Difference {
        if fastest.len().min(runner_up.len()) < MIN_JUDGED_REPETITIONS {
            return Difference::CannotJudge;
        }
        let slowest_fast = fastest.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let quickest_other = runner_up.iter().copied().fold(f64::INFINITY, f64::min);
        if slowest_fast < quickest_other { Difference::Clear } else { Difference::WithinNoise }
    }

    pub fn words(self) -> &'static str {
        match self {
            Difference::Clear => "clear",
            Difference::WithinNoise => "within noise",
            Difference::CannotJudge => "cannot judge (<3 reps)",
        }
    }
}

/// What a sweep recommends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// The knobs that took more than one value.
    pub varied: Vec<ThreadKnob>,
    /// The setting with the lowest mean total.
    pub overall_best: ThreadSettings,
    pub overall_best_label: String,
    pub overall_best_total_seconds: f64,
    pub slowest_label: String,
    pub slowest_total_seconds: f64,
    pub per_step: Vec<StepChoice>,
    /// Steps whose own best setting saves at least 2% of the step against the overall best.
    pub exceptions: Vec<Step>,
    /// The total when every step uses its own best setting.
    pub best_combined_total_seconds: f64,
    /// The advice in one sentence.
    pub sentence: String,
    /// Whether the best total is really better than the runner-up's.
    #[serde(default)]
    pub total_difference: Difference,
    /// The winner against the machine: logical CPUs used and SMT (Hyper-Threading), when the fingerprint told.
    #[serde(default)]
    pub cpu_sentence: Option<String>,
}

/// A step needs its own setting only when that saves at least this share of the step's time.
const EXCEPTION_SHARE: f64 = 0.02;

/// Per step, the fastest setting and what it saves; overall, the best single setting; and one sentence of advice,
/// e.g. "Use calc_threads=16 everywhere (total 412.3 s) except currency conversion, where calc_threads=32 saves
/// 40.1 s (10.5%)." Only steps governed by a varied knob can be exceptions (the others differ by noise alone).
/// `None` with fewer than two settings.
pub fn recommend(outcomes: &[SequenceOutcome]) -> Option<Recommendation> {
    if outcomes.len() < 2 {
        return None;
    }
    let varied: Vec<ThreadKnob> = ThreadKnob::ALL
        .into_iter()
        .filter(|k| outcomes.iter().any(|o| k.get(&o.threads) != k.get(&outcomes[0].threads)))
        .collect();
    let label = |t: &ThreadSettings| -> String {
        let knobs = if varied.is_empty() { ThreadKnob::ALL.to_vec() } else { varied.clone() };
        knobs.iter().map(|k| format!("{}={}", k.name(), k.get(t))).collect::<Vec<_>>().join(", ")
    };
    let total_of = |o: &SequenceOutcome| o.total().mean_seconds;
    let mut by_total: Vec<&SequenceOutcome> = outcomes.iter().collect();
    by_total.sort_by(|a, b| total_of(a).total_cmp(&total_of(b)));
    let (best, runner_up, slowest) = (by_total[0], by_total[1], by_total[by_total.len() - 1]);
    let totals = |o: &SequenceOutcome| o.repetitions.iter().map(|r| r.total_seconds).collect::<Vec<f64>>();
    let total_difference = Difference::of(&totals(best), &totals(runner_up));
    let mut per_step = Vec::new();
    let mut exceptions = Vec::new();
    let mut combined = 0.0;
    for step in Step::ALL {
        let mean = |o: &SequenceOutcome| o.step(step).map_or(f64::INFINITY, |s| s.mean_seconds);
        let governed = step.knob().is_some_and(|k| varied.contains(&k));
        // The measured fastest, whatever governs the step.
        let mut ranked: Vec<&SequenceOutcome> = outcomes.iter().collect();
        ranked.sort_by(|a, b| mean(a).total_cmp(&mean(b)));
        let (fastest, second) = (ranked[0], ranked[1]);
        let difference = Difference::of(&fastest.seconds_of(step), &second.seconds_of(step));
        let slowest_here = outcomes.iter().map(mean).fold(0.0, f64::max);
        let (fast, base) = (mean(fastest), mean(best));
        let saving = (base - fast).max(0.0);
        let saving_percent = if base > 0.0 { 100.0 * saving / base } else { 0.0 };
        // An exception needs a knob that governs the step, a saving worth a setting of its own, and (when the
        // repetitions can tell) a difference beyond noise.
        if governed && base > 0.0 && saving / base >= EXCEPTION_SHARE && difference != Difference::WithinNoise {
            exceptions.push(step);
            combined += fast;
        } else {
            combined += base;
        }
        per_step.push(StepChoice {
            step,
            name: step.name().to_string(),
            best: fastest.threads,
            best_label: label(&fastest.threads),
            best_mean_seconds: fast,
            overall_best_mean_seconds: base,
            saving_seconds: saving,
            saving_percent,
            spread_percent: if fast > 0.0 { 100.0 * (slowest_here / fast - 1.0) } else { 0.0 },
            governed,
            runner_up_label: Some(label(&second.threads)),
            runner_up_mean_seconds: Some(mean(second)),
            difference,
        });
    }
    let best_total = best.total().mean_seconds;
    let slowest_total = slowest.total().mean_seconds;
    let noise = match total_difference {
        Difference::Clear => String::new(),
        Difference::WithinNoise => format!(
            " The runner-up, {} ({:.1} s), is within noise of it: their repetitions overlap.",
            label(&runner_up.threads),
            total_of(runner_up)
        ),
        Difference::CannotJudge => format!(
            " With fewer than {MIN_JUDGED_REPETITIONS} repetitions per setting the difference from the runner-up, {} \
             ({:.1} s), cannot be judged; use --repeat {MIN_JUDGED_REPETITIONS}.",
            label(&runner_up.threads),
            total_of(runner_up)
        ),
    };
    let sentence = if exceptions.is_empty() {
        format!(
            "Use {} for every step: total {:.1} s, {:.1}% faster than the slowest setting ({}, {:.1} s).{noise}",
            label(&best.threads),
            best_total,
            if slowest_total > 0.0 { 100.0 * (1.0 - best_total / slowest_total) } else { 0.0 },
            label(&slowest.threads),
            slowest_total
        )
    } else {
        let parts: Vec<String> = exceptions
            .iter()
            .map(|&step| {
                let choice = per_step.iter().find(|c| c.step == step).expect("every step has a choice");
                format!(
                    "{}, where {} saves {:.1} s ({:.1}%)",
                    step.label(),
                    choice.best_label,
                    choice.saving_seconds,
                    choice.saving_percent
                )
            })
            .collect();
        format!(
            "Use {} everywhere (total {:.1} s) except {}; with the best setting for each step the total is {:.1} \
             s.{noise}",
            label(&best.threads),
            best_total,
            parts.join("; and "),
            combined
        )
    };
    Some(Recommendation {
        varied: varied.clone(),
        overall_best: best.threads,
        overall_best_label: label(&best.threads),
        overall_best_total_seconds: best_total,
        slowest_label: label(&slowest.threads),
        slowest_total_seconds: slowest_total,
        per_step,
        exceptions,
        best_combined_total_seconds: combined,
        sentence,
        total_difference,
        cpu_sentence: None,
    })
}

/// The winner against the machine, for the question users bring ("Hyper-Threading on or off, and what
/// CALCPARALLEL"): how many threads the best setting runs against the logical CPUs, and whether SMT was active.
pub fn cpu_sentence(recommendation: &Recommendation, logical_cpus: Option<u32>, smt_active: Option<bool>) -> String {
    let knobs = if recommendation.varied.is_empty() { ThreadKnob::ALL.to_vec() } else { recommendation.varied.clone() };
    let threads = knobs.iter().map(|k| k.get(&recommendation.overall_best)).max().unwrap_or(1);
    let use_of_cpus = match logical_cpus {
        Some(cpus) if threads as u32 == cpus => format!("uses all {cpus} logical CPUs"),
        Some(cpus) if (threads as u32) < cpus => format!("uses {threads} of the {cpus} logical CPUs"),
        Some(cpus) => format!("runs {threads} threads on {cpus} logical CPUs (more threads than CPUs)"),
        None => format!("runs {threads} threads (the logical CPU count is unknown)"),
    };
    let smt = match smt_active {
        Some(true) => "SMT (Hyper-Threading) was active: to see what it is worth, run the sweep again with SMT off \
                       and compare the two runs"
            .to_string(),
        Some(false) => "SMT (Hyper-Threading) was off or absent".to_string(),
        None => "whether SMT (Hyper-Threading) was active is unknown".to_string(),
    };
    format!("The best setting, {}, {use_of_cpus}; {smt}.", recommendation.overall_best_label)
}
