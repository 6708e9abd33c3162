//! The EssBench-style sequence: the eight timed steps and their thread settings, the configuration, running the
//! steps at each setting (repeated, settings interleaved), and the per-step summaries. Running a whole sequence or
//! sweep is in the `sweep` module, its recommendation in `recommend`, its results in `records`.

use crate::block::Compression;
use crate::calc::{AllocationReport, MAX_FIX_THREADS};
use crate::cube::{Cube, CubeOptions, CubeStatistics};
use crate::error::CubeError;
use crate::error::InterruptedStep;
use crate::generate::{DataSet, prepare_data};
use crate::names::TOTAL_TEST;
use crate::places::{self, CubeLock, Place};
use crate::retrievals::{RetrievalOptions, RetrievalOutcome, run_retrievals};
use envbench_core::sampler::{NoSteps, StepObserver};
use envbench_core::stats::Summary;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

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

    pub(crate) fn set(self, threads: &mut ThreadSettings, value: usize) {
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

    pub(crate) fn seconds_of(&self, step: Step) -> Vec<f64> {
        self.repetitions.iter().filter_map(|r| r.steps.iter().find(|s| s.step == step)).map(|s| s.seconds).collect()
    }
}

pub(crate) fn prepare(
    config: &CubeConfig,
    observer: &dyn StepObserver,
    cancel: &AtomicBool,
) -> Result<DataSet, CubeError> {
    const GENERATE: &str = "0 generate data";
    observer.step_started(GENERATE);
    let data = prepare_data(&config.data_dir, config.seed, config.scale, cancel);
    observer.step_finished(GENERATE);
    data
}

/// Take the cube for this run: check the free space the scale needs (before anything is created, so a refusal
/// leaves no directory behind), claim both directories (refusing foreign files) and hold the writer's lock. Then
/// `work`; after a full disk, remove the run's partial files.
pub(crate) fn with_cube<T>(config: &CubeConfig, work: impl FnOnce() -> Result<T, CubeError>) -> Result<T, CubeError> {
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
pub(crate) fn run_settings(
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
            let drop_page_cache = || {
                envbench_base::page_cache::can_drop_page_cache() && envbench_base::page_cache::drop_page_cache().is_ok()
            };
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

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn fix_threads_are_limited_to_eight() {
        let mut config = CubeConfig::new("/tmp/x");
        config.threads.fix_threads = 16;
        assert!(config.validate().unwrap_err().to_string().contains("FIXPARALLEL"));
        config.threads.fix_threads = 8;
        config.validate().unwrap();
    }
}
