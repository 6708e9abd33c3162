//! The EssBench-style sequence: eight timed steps, repeated; per-step summaries; the thread sweep and its
//! recommendation; and the results in the core model.

use crate::block::Compression;
use crate::calc::{AllocationReport, MAX_FIX_THREADS};
use crate::cube::{Cube, CubeOptions, CubeStatistics};
use crate::error::CubeError;
use crate::error::InterruptedStep;
use crate::generate::{DataSet, prepare_data};
use crate::places::{self, CubeLock, Place};
use crate::retrievals::{RetrievalOptions, RetrievalOutcome, run_retrievals};
use envbench_core::sampler::{NoSteps, StepObserver};
use envbench_core::stats::Summary;
use envbench_core::{Direction, ResultRecord};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The workload name in results.
pub const WORKLOAD: &str = "cube";
/// Bumped when a change makes older cube results incomparable.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of a cube run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };
/// The test of the whole sequence's time, beside the eight steps.
pub const TOTAL_TEST: &str = "total";
/// The metric of every cube result.
pub const ELAPSED_METRIC: &str = "elapsed";

/// The eight steps, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Reset,
    NativeLoad,
    CsvLoad,
    Aggregation,
    Allocation,
    AllocationAggregation,
    CurrencyConversion,
    DenseRestructure,
}

impl Step {
    pub const ALL: [Step; 8] = [
        Step::Reset,
        Step::NativeLoad,
        Step::CsvLoad,
        Step::Aggregation,
        Step::Allocation,
        Step::AllocationAggregation,
        Step::CurrencyConversion,
        Step::DenseRestructure,
    ];

    /// The name in results and sampler marks, e.g. `4 aggregation`.
    pub fn name(self) -> &'static str {
        match self {
            Step::Reset => "1 reset",
            Step::NativeLoad => "2 native load",
            Step::CsvLoad => "3 csv load",
            Step::Aggregation => "4 aggregation",
            Step::Allocation => "5 allocation",
            Step::AllocationAggregation => "6 aggregate allocation",
            Step::CurrencyConversion => "7 currency conversion",
            Step::DenseRestructure => "8 dense restructure",
        }
    }

    /// The step's name without its number, for sentences.
    pub fn label(self) -> &'static str {
        &self.name()[2..]
    }

    /// The thread setting that governs the step, if any.
    pub fn knob(self) -> Option<ThreadKnob> {
        match self {
            Step::Reset | Step::CsvLoad => None,
            Step::NativeLoad => Some(ThreadKnob::LoadThreads),
            Step::Aggregation | Step::AllocationAggregation | Step::CurrencyConversion => Some(ThreadKnob::CalcThreads),
            Step::Allocation => Some(ThreadKnob::FixThreads),
            Step::DenseRestructure => Some(ThreadKnob::RestructureThreads),
        }
    }
}

/// One thread setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadKnob {
    LoadThreads,
    CalcThreads,
    FixThreads,
    RestructureThreads,
}

impl ThreadKnob {
    pub const ALL: [ThreadKnob; 4] =
        [ThreadKnob::LoadThreads, ThreadKnob::CalcThreads, ThreadKnob::FixThreads, ThreadKnob::RestructureThreads];

    pub fn name(self) -> &'static str {
        match self {
            ThreadKnob::LoadThreads => "load_threads",
            ThreadKnob::CalcThreads => "calc_threads",
            ThreadKnob::FixThreads => "fix_threads",
            ThreadKnob::RestructureThreads => "restructure_threads",
        }
    }

    pub fn get(self, threads: &ThreadSettings) -> usize {
        match self {
            ThreadKnob::LoadThreads => threads.load_threads,
            ThreadKnob::CalcThreads => threads.calc_threads,
            ThreadKnob::FixThreads => threads.fix_threads,
            ThreadKnob::RestructureThreads => threads.restructure_threads,
        }
    }

    fn set(self, threads: &mut ThreadSettings, value: usize) {
        match self {
            ThreadKnob::LoadThreads => threads.load_threads = value,
            ThreadKnob::CalcThreads => threads.calc_threads = value,
            ThreadKnob::FixThreads => threads.fix_threads = value,
            ThreadKnob::RestructureThreads => threads.restructure_threads = value,
        }
    }
}

/// Thread counts of the steps. The defaults are fixed (not the machine's core count) so that results from
/// different machines have equal parameters and compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ThreadSettings {
    /// Native files loaded at once (the parallel import's max_threads).
    pub load_threads: usize,
    /// Aggregation and currency conversion threads (CALCPARALLEL).
    pub calc_threads: usize,
    /// Allocation threads (FIXPARALLEL), at most 8.
    pub fix_threads: usize,
    /// Dense restructure threads (RESTRUCTURETHREADS).
    pub restructure_threads: usize,
}

impl Default for ThreadSettings {
    fn default() -> ThreadSettings {
        ThreadSettings { load_threads: 8, calc_threads: 8, fix_threads: 8, restructure_threads: 8 }
    }
}

/// Everything that defines a cube run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CubeConfig {
    /// Where the generated input files live (reused across runs).
    pub data_dir: PathBuf,
    /// Where the cube's page files and index live.
    pub cube_dir: PathBuf,
    /// Data volume; 1.0 is EssBench-sized (about 10 million native cells and 10 million CSV rows).
    pub scale: f64,
    pub seed: u64,
    pub options: CubeOptions,
    /// How many times the whole sequence runs.
    pub repeat: u32,
    pub threads: ThreadSettings,
    /// Concurrent retrievals on the loaded cube after the last sequence, when asked for.
    pub retrievals: Option<RetrievalOptions>,
}

impl CubeConfig {
    /// Defaults (scale 1.0, seed 1, 3 repetitions) with `data/` and `cube/` under `work_dir`.
    pub fn new(work_dir: impl AsRef<Path>) -> CubeConfig {
        let work_dir = work_dir.as_ref();
        CubeConfig {
            data_dir: work_dir.join("data"),
            cube_dir: work_dir.join("cube"),
            scale: 1.0,
            seed: 1,
            options: CubeOptions::default(),
            repeat: 3,
            threads: ThreadSettings::default(),
            retrievals: None,
        }
    }

    /// Reject settings that cannot run, saying what to use instead.
    pub fn validate(&self) -> Result<(), CubeError> {
        if self.repeat == 0 {
            return Err(CubeError::Config("repeat must be at least 1".into()));
        }
        for knob in ThreadKnob::ALL {
            let value = knob.get(&self.threads);
            if value == 0 || value > 1024 {
                return Err(CubeError::Config(format!("{} {value} is out of range: use 1 to 1024", knob.name())));
            }
        }
        if self.threads.fix_threads > MAX_FIX_THREADS {
            return Err(CubeError::Config(format!(
                "fix_threads {} is above the FIXPARALLEL limit of {MAX_FIX_THREADS}",
                self.threads.fix_threads
            )));
        }
        if self.data_dir == self.cube_dir {
            return Err(CubeError::Config("the data and cube directories must differ".into()));
        }
        Ok(())
    }
}

/// One step of one repetition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRun {
    pub step: Step,
    pub name: String,
    pub seconds: f64,
    pub blocks_read: u64,
    pub blocks_written: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Cells loaded, computed, converted or moved.
    pub cells: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
}

/// One pass through the eight steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Repetition {
    /// From 1.
    pub repetition: u32,
    pub steps: Vec<StepRun>,
    pub total_seconds: f64,
}

/// A step over all repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    pub step: Option<Step>,
    /// The step name, or `total`.
    pub name: String,
    pub mean_seconds: f64,
    pub min_seconds: f64,
    pub max_seconds: f64,
    /// Coefficient of variation of the seconds.
    pub cv: f64,
    /// Mean seconds over the mean total.
    pub share_of_total: f64,
    pub cells_per_second: f64,
    /// 10^6 bytes per second, block data read and written.
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
}

/// The outcome of one run of the sequence (one thread setting).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequenceOutcome {
    pub threads: ThreadSettings,
    pub scale: f64,
    pub seed: u64,
    pub compression: Compression,
    pub data_cache_bytes: u64,
    pub direct_io: bool,
    pub data: DataSet,
    /// The step a previous run left unfinished (the cube was reset when opened).
    pub recovered_from: Option<InterruptedStep>,
    pub repetitions: Vec<Repetition>,
    /// Per step, then a `total` row.
    pub summary: Vec<StepSummary>,
    /// The cube after the last repetition.
    pub statistics: CubeStatistics,
    pub allocation: AllocationReport,
}

impl SequenceOutcome {
    /// The summary row of a step.
    pub fn step(&self, step: Step) -> Option<&StepSummary> {
        self.summary.iter().find(|s| s.step == Some(step))
    }

    /// The summary row of the whole sequence.
    pub fn total(&self) -> &StepSummary {
        self.summary.last().expect("a summary always ends with the total")
    }

    fn seconds_of(&self, step: Step) -> Vec<f64> {
        self.repetitions.iter().filter_map(|r| r.steps.iter().find(|s| s.step == step)).map(|s| s.seconds).collect()
    }
}

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

fn prepare(config: &CubeConfig, observer: &dyn StepObserver, cancel: &AtomicBool) -> Result<DataSet, CubeError> {
    const GENERATE: &str = "0 generate data";
    observer.step_started(GENERATE);
    let data = prepare_data(&config.data_dir, config.seed, config.scale, cancel);
    observer.step_finished(GENERATE);
    data
}

/// Take the cube for this run: check the free space the scale needs (before anything is created, so a refusal
/// leaves no directory behind), claim both directories (refusing foreign files) and hold the writer's lock. Then
/// `work`; after a full disk, remove the run's partial files.
fn with_cube<T>(config: &CubeConfig, work: impl FnOnce() -> Result<T, CubeError>) -> Result<T, CubeError> {
    let data_reused = crate::generate::reusable(&config.data_dir, config.seed, config.scale)?.is_some();
    places::check_space(&config.cube_dir, places::space_needed(config.scale, data_reused))?;
    places::claim(&config.cube_dir, Place::Cube)?;
    let _lock = CubeLock::exclusive(&config.cube_dir)?;
    places::claim(&config.data_dir, Place::Data)?;
    let outcome = work();
    if let Err(CubeError::DiskFull { .. }) = &outcome {
        places::remove_partial_files(&config.cube_dir, Place::Cube);
        if crate::generate::reusable(&config.data_dir, config.seed, config.scale).ok().flatten().is_none() {
            places::remove_partial_files(&config.data_dir, Place::Data);
        }
    }
    outcome
}

/// The sampler's name of the unmeasured sequence that loads an empty cube before the first measured one.
pub const PRIME_STEP: &str = "0 prime cube";

/// Every setting's repetitions on one cube, interleaved (setting 1, 2, ..., then again), so that a machine that
/// drifts over the sweep does not favour the settings that ran first. An empty cube (a fresh directory, or one a
/// previous run left unfinished and that was reset at open) is first loaded by one unmeasured sequence, so every
/// measured reset clears the same loaded cube.
fn run_settings(
    config: &CubeConfig,
    settings: &[ThreadSettings],
    data: &DataSet,
    observer: &dyn StepObserver,
    cancel: &AtomicBool,
) -> Result<(Vec<SequenceOutcome>, Option<RetrievalOutcome>), CubeError> {
    let mut cube = Cube::open(&config.cube_dir, config.options)?;
    let recovered_from = cube.recovered_from().cloned();
    if cube.store().is_empty() {
        observer.step_started(PRIME_STEP);
        let mut unused = AllocationReport::default();
        let primed: Result<(), CubeError> = Step::ALL.into_iter().try_for_each(|step| {
            run_step(&mut cube, step, data, &settings[0], &NoSteps, cancel, &mut unused).map(|_| ())
        });
        observer.step_finished(PRIME_STEP);
        primed?;
    }
    struct Runs {
        repetitions: Vec<Repetition>,
        allocation: AllocationReport,
        statistics: Option<CubeStatistics>,
    }
    let mut runs: Vec<Runs> = settings
        .iter()
        .map(|_| Runs {
            repetitions: Vec::with_capacity(config.repeat as usize),
            allocation: AllocationReport::default(),
            statistics: None,
        })
        .collect();
    for repetition in 1..=config.repeat {
        for (threads, runs) in settings.iter().zip(runs.iter_mut()) {
            let mut steps = Vec::with_capacity(Step::ALL.len());
            for step in Step::ALL {
                steps.push(run_step(&mut cube, step, data, threads, observer, cancel, &mut runs.allocation)?);
            }
            let total_seconds = steps.iter().map(|s| s.seconds).sum();
            runs.repetitions.push(Repetition { repetition, steps, total_seconds });
            if repetition == config.repeat {
                runs.statistics = Some(cube.statistics());
            }
        }
    }
    // The front end's view of the loaded cube: after the last step 8.
    let retrievals = match &config.retrievals {
        Some(options) => {
            let drop_page_cache = || envbench_io::can_drop_page_cache() && envbench_io::drop_page_cache().is_ok();
            Some(run_retrievals(&cube, options, observer, &drop_page_cache, cancel)?)
        }
        None => None,
    };
    let outcomes = settings
        .iter()
        .zip(runs)
        .map(|(threads, runs)| {
            let mut outcome = SequenceOutcome {
                threads: *threads,
                scale: config.scale,
                seed: config.seed,
                compression: config.options.compression,
                data_cache_bytes: config.options.data_cache.bytes(),
                direct_io: config.options.direct_io,
                data: data.clone(),
                recovered_from: recovered_from.clone(),
                repetitions: runs.repetitions,
                summary: Vec::new(),
                statistics: runs.statistics.unwrap_or_else(|| cube.statistics()),
                allocation: runs.allocation,
            };
            outcome.summary = summarize(&outcome);
            outcome
        })
        .collect();
    Ok((outcomes, retrievals))
}

/// Run one step as a durable unit and measure it.
fn run_step(
    cube: &mut Cube,
    step: Step,
    data: &DataSet,
    threads: &ThreadSettings,
    observer: &dyn StepObserver,
    cancel: &AtomicBool,
    allocation: &mut AllocationReport,
) -> Result<StepRun, CubeError> {
    let name = step.name();
    observer.step_started(name);
    let before = cube.io_totals();
    let started = Instant::now();
    let result = cube.durable_step(name, |cube| -> Result<u64, CubeError> {
        Ok(match step {
            Step::Reset => {
                cube.reset()?;
                0
            }
            Step::NativeLoad => cube.load_native(&data.native_paths(), threads.load_threads, cancel)?.cells,
            Step::CsvLoad => cube.load_csv(&data.csv_path(), &data.rules_path(), cancel)?.cells,
            Step::Aggregation | Step::AllocationAggregation => {
                cube.aggregate(threads.calc_threads, cancel)?.cells_written
            }
            Step::Allocation => {
                *allocation = cube.allocate(threads.fix_threads, cancel)?;
                allocation.cells_written
            }
            Step::CurrencyConversion => cube.convert_currency(threads.calc_threads, cancel)?.cells_written,
            Step::DenseRestructure => cube.restructure_add_account(threads.restructure_threads, cancel)?.cells,
        })
    });
    let seconds = started.elapsed().as_secs_f64();
    observer.step_finished(name);
    let cells = result?;
    let io = cube.io_totals() - before;
    Ok(StepRun {
        step,
        name: name.to_string(),
        seconds,
        blocks_read: io.blocks_read,
        blocks_written: io.blocks_written,
        bytes_read: io.bytes_read,
        bytes_written: io.bytes_written,
        cells,
        cache_hits: io.cache_hits,
        cache_misses: io.cache_misses,
    })
}

fn summarize(outcome: &SequenceOutcome) -> Vec<StepSummary> {
    let totals: Vec<f64> = outcome.repetitions.iter().map(|r| r.total_seconds).collect();
    let total_mean = Summary::of(&totals).map_or(0.0, |s| s.mean);
    let row = |step: Option<Step>, name: &str, seconds: &[f64], runs: Vec<&StepRun>| {
        let s = Summary::of(seconds).unwrap_or(Summary {
            count: 0,
            mean: 0.0,
            median: 0.0,
            min: 0.0,
            max: 0.0,
            stddev: 0.0,
            cv: 0.0,
        });
        let count = runs.len().max(1) as f64;
        let per_second = |sum: u64| if s.mean > 0.0 { sum as f64 / count / s.mean } else { 0.0 };
        StepSummary {
            step,
            name: name.to_string(),
            mean_seconds: s.mean,
            min_seconds: s.min,
            max_seconds: s.max,
            cv: s.cv,
            share_of_total: if total_mean > 0.0 { s.mean / total_mean } else { 0.0 },
            cells_per_second: per_second(runs.iter().map(|r| r.cells).sum()),
            read_mb_per_s: per_second(runs.iter().map(|r| r.bytes_read).sum()) / 1e6,
            write_mb_per_s: per_second(runs.iter().map(|r| r.bytes_written).sum()) / 1e6,
        }
    };
    let mut summary: Vec<StepSummary> = Step::ALL
        .iter()
        .map(|&step| {
            let runs: Vec<&StepRun> =
                outcome.repetitions.iter().filter_map(|r| r.steps.iter().find(|s| s.step == step)).collect();
            row(Some(step), step.name(), &outcome.seconds_of(step), runs)
        })
        .collect();
    let all_runs: Vec<&StepRun> = outcome.repetitions.iter().flat_map(|r| r.steps.iter()).collect();
    let mut total = row(None, TOTAL_TEST, &totals, Vec::new());
    let reps = outcome.repetitions.len().max(1) as f64;
    if total.mean_seconds > 0.0 {
        total.cells_per_second = all_runs.iter().map(|r| r.cells).sum::<u64>() as f64 / reps / total.mean_seconds;
        total.read_mb_per_s =
            all_runs.iter().map(|r| r.bytes_read).sum::<u64>() as f64 / reps / total.mean_seconds / 1e6;
        total.write_mb_per_s =
            all_runs.iter().map(|r| r.bytes_written).sum::<u64>() as f64 / reps / total.mean_seconds / 1e6;
    }
    summary.push(total);
    summary
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

/// The parameters of a step's result: everything that defines it, including only the thread setting that governs
/// the step (so a calc_threads sweep does not split the load results).
fn parameters(outcome: &SequenceOutcome, knobs: &[ThreadKnob]) -> Value {
    let mut parameters = json!({
        "scale": outcome.scale,
        "seed": outcome.seed,
        "compression": outcome.compression.as_str(),
        "data_cache_bytes": outcome.data_cache_bytes,
        "direct": outcome.direct_io,
        "repeat": outcome.repetitions.len(),
    });
    for knob in knobs {
        parameters[knob.name()] = json!(knob.get(&outcome.threads));
    }
    parameters
}

/// Results in the core model: per outcome, one `elapsed` record (seconds, one sample per repetition) per step,
/// plus a `total` record whose parameters carry every thread setting.
pub fn result_records(outcomes: &[SequenceOutcome]) -> Vec<ResultRecord> {
    let record = |test_id: &str, parameters: Value, samples: Vec<f64>| {
        SOURCE.record(test_id, &parameters, ELAPSED_METRIC, "s", Direction::LowerIsBetter, samples)
    };
    let mut records = Vec::new();
    for outcome in outcomes {
        for step in Step::ALL {
            let knobs: Vec<ThreadKnob> = step.knob().into_iter().collect();
            records.push(record(step.name(), parameters(outcome, &knobs), outcome.seconds_of(step)));
        }
        let totals = outcome.repetitions.iter().map(|r| r.total_seconds).collect();
        records.push(record(TOTAL_TEST, parameters(outcome, &ThreadKnob::ALL), totals));
    }
    records
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

    #[test]
    fn fix_threads_are_limited_to_eight() {
        let mut config = CubeConfig::new("/tmp/x");
        config.threads.fix_threads = 16;
        assert!(config.validate().unwrap_err().to_string().contains("FIXPARALLEL"));
        config.threads.fix_threads = 8;
        config.validate().unwrap();
    }
}
