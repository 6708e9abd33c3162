//! `envbench cube` as the driver runs it: the command line, the sweep's step names for the sampler, the per-step
//! table with each step's disk and CPU figures, the recommendation, and `cube get`, which reads a finished cube.

use crate::bench::{CubeConfig, SequenceOutcome, Step, ThreadSettings};
use crate::cube::Cube;
use crate::error::CubeError;
use crate::options::thread_list;
use crate::options::{CubeAction, CubeArgs, CubeGetArgs, CubeRunArgs};
use crate::places::CubeLock;
use crate::sweep::{SweepOutcome, ThreadSweep};
use crate::{ELAPSED_METRIC, TOTAL_TEST, WORKLOAD, WORKLOAD_VERSION, result_records, run_sweep};
use clap::{Args, FromArgMatches};
use envbench_core::ByteSize;
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::{SamplerSeries, StepObserver, StepSummary as SampledStep};
use envbench_core::text::{Align, Table, heading, number, plural};
use envbench_core::workload::{
    Measured, Plan, Planned, Progress, ReadBack, RunContext, Workload, WorkloadError, has_option,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most thread settings one sweep may run.
pub const MAX_SETTINGS: usize = 256;

/// The EssBench-style cube workload.
pub struct CubeWorkload;

/// The registration of `cube`.
pub static CUBE: CubeWorkload = CubeWorkload;

impl From<CubeError> for WorkloadError {
    fn from(error: CubeError) -> WorkloadError {
        match error {
            CubeError::Cancelled { .. } => WorkloadError::interrupted(),
            CubeError::Config(_)
            | CubeError::Query(_)
            | CubeError::UnknownDimension { .. }
            | CubeError::UnknownMember { .. }
            | CubeError::DirectIoUnsupported { .. }
            | CubeError::ForeignFiles { .. }
            | CubeError::NotEnoughSpace { .. }
            | CubeError::NoCube { .. } => WorkloadError::usage(error.to_string()),
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl Workload for CubeWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        CubeArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "EssBench-style OLAP cube: load, aggregate, allocate, convert currency, restructure; or query the cube.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = CubeArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        match args.action {
            Some(CubeAction::Get(get)) => Ok(Plan::Answer(retrieve(&get)?)),
            None => Ok(Plan::Run(Box::new(plan(&args.run)?))),
        }
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for CubeWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
# Five repetitions: five samples of every step, so that compare can tell a change from noise.
scale = 0.02
repeat = 5
"#,
            ),
            "standard" => Some(
                r#"
scale = 1.0
"#,
            ),
            "smoke" => Some(
                r#"
scale = 0.002
repeat = 1
"#,
            ),
            _ => None,
        }
    }

    /// The cube keeps its data and page files in a directory of its own.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        (!has_option(args, "--dir")).then(|| ("--dir", suite_dir.join("envbench-cube").display().to_string()))
    }
}

impl ReadBack for CubeWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: ELAPSED_METRIC,
            tests: TOTAL_TEST,
            per: envbench_core::workload::Per::Execution,
            words: "cube benchmark (load, calculation, retrievals)",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("OLAP cube")
    }

    fn more_samples(&self) -> &'static str {
        "--repeat 5"
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::CUBE_NOISE_MARGIN
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Memory, Resource::Storage]
    }

    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["calc_threads", "load_threads", "restructure_threads"]
    }

    /// The CSV load is serial whatever the settings; the other steps are when their thread setting is 1.
    fn single_threaded(&self, test_id: &str, parameters: &Value) -> bool {
        test_id == Step::CsvLoad.name()
            || envbench_core::workload::single_threaded_by_knobs(parameters, self.concurrency_knobs())
    }

    fn headline(&self, run: &StoredRun) -> String {
        // A sweep stores one total per setting: the headline is the best of them, by the mean of its repetitions, the
        // statistic the sequence's table shows.
        let totals: Vec<(f64, String)> = run
            .results
            .iter()
            .filter(|r| r.record.test_id == TOTAL_TEST && r.record.metric == ELAPSED_METRIC)
            .filter_map(|r| {
                let mean = envbench_core::stats::Summary::of(&r.record.samples)?.mean;
                let setting = ["load_threads", "calc_threads", "fix_threads", "restructure_threads"]
                    .iter()
                    .filter_map(|k| {
                        r.record.parameters.get(*k).map(|v| format!("{}={v}", k.trim_end_matches("_threads")))
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                Some((mean, setting))
            })
            .collect();
        let mut headline = match totals.iter().min_by(|a, b| a.0.total_cmp(&b.0)) {
            Some((best, _)) if totals.len() == 1 => format!("8-step sequence {best:.2} s mean"),
            Some((best, setting)) => {
                format!("8-step sequence {best:.2} s mean (best of {} settings: {setting})", totals.len())
            }
            None => String::new(),
        };
        // The second headline: what a front-end user waits during a calculation, at the most users.
        let under_load = run
            .results
            .iter()
            .filter(|r| r.record.test_id.starts_with("retrieval all U=") && r.record.test_id.ends_with(" during calc"))
            .filter(|r| r.record.metric == "latency_p95")
            .max_by_key(|r| r.record.parameters.get("users").and_then(Value::as_u64).unwrap_or(0));
        if let Some(result) = under_load
            && let Some(p95) = result.record.samples.first()
        {
            let users = result.record.parameters.get("users").and_then(Value::as_u64).unwrap_or(0);
            headline.push_str(&format!("; retrieval p95 {p95:.1} ms with {users} users during calc"));
        }
        headline
    }

    fn tests_word(&self) -> &'static str {
        "per step"
    }
}

/// The retrieval benchmark the arguments ask for, if any.
fn plan_retrievals(
    args: &CubeRunArgs,
    sweep: &ThreadSweep,
    config: &CubeConfig,
) -> Result<Option<crate::retrievals::RetrievalOptions>, WorkloadError> {
    let wanted = args.retrievals || args.retrieval_users.is_some();
    if !wanted {
        if args.retrieval_duration.is_some() || args.retrievals_alone {
            return Err(WorkloadError::usage(
                "--retrieval-duration and --retrievals-alone apply to retrievals: add --retrievals or \
                 --retrieval-users 1,4",
            ));
        }
        return Ok(None);
    }
    let users = match &args.retrieval_users {
        None => vec![1, 4],
        Some(users) => users.0.clone(),
    };
    let duration = match &args.retrieval_duration {
        None => std::time::Duration::from_secs(10),
        Some(duration) => duration.get(),
    };
    if duration.is_zero() || duration > std::time::Duration::from_secs(3600) {
        return Err(WorkloadError::usage("--retrieval-duration: give more than zero and at most 1h, e.g. 10s"));
    }
    Ok(Some(crate::retrievals::RetrievalOptions {
        users,
        duration,
        during_calc: !args.retrievals_alone,
        // The background calculation runs at the first calc_threads the run uses.
        calc_threads: sweep.calc_threads.first().copied().unwrap_or(config.threads.calc_threads),
        seed: config.seed,
    }))
}

/// The smallest scale that still makes a cube (below it the generated input has no cells for most blocks).
const MIN_SCALE: f64 = 0.001;
/// The smallest data cache: room for a few dozen expanded blocks (93,856 bytes each).
const MIN_DATA_CACHE_BYTES: u64 = 4 << 20;

fn plan(args: &CubeRunArgs) -> Result<CubeRun, WorkloadError> {
    if !(args.scale >= MIN_SCALE && args.scale <= 100.0) {
        return Err(WorkloadError::usage(format!(
            "--scale {}: give a number from {MIN_SCALE} (a few hundred blocks) up to 100, e.g. 0.1 or 1.0",
            args.scale
        )));
    }
    if args.repeat == 0 {
        return Err(WorkloadError::usage("--repeat must be at least 1"));
    }
    if args.repeat > 1000 {
        return Err(WorkloadError::usage(format!("--repeat {}: give at most 1000 repetitions", args.repeat)));
    }
    let mut config = CubeConfig::new(&args.dir);
    config.scale = args.scale;
    config.seed = args.seed;
    config.repeat = args.repeat;
    config.options.compression = args.compression;
    config.options.data_cache = args.data_cache;
    if config.options.data_cache.bytes() < MIN_DATA_CACHE_BYTES {
        return Err(WorkloadError::usage(format!(
            "--data-cache {}: give at least {} (the cache holds expanded blocks of 92 KiB each), e.g. 256m",
            args.data_cache.bytes(),
            envbench_core::ByteSize(MIN_DATA_CACHE_BYTES)
        )));
    }
    config.options.direct_io = args.direct;
    let sweep = ThreadSweep {
        load_threads: thread_list(&args.load_threads),
        calc_threads: thread_list(&args.calc_threads),
        fix_threads: thread_list(&args.fix_threads),
        restructure_threads: thread_list(&args.restructure_threads),
    };
    config.retrievals = plan_retrievals(args, &sweep, &config)?;
    let settings = sweep.settings(config.threads);
    if settings.len() > MAX_SETTINGS {
        return Err(WorkloadError::usage(format!(
            "the thread lists make {} settings, more than {MAX_SETTINGS}; sweep fewer values",
            settings.len()
        )));
    }
    for threads in &settings {
        CubeConfig { threads: *threads, ..config.clone() }.validate()?;
    }
    match std::fs::metadata(&args.dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(WorkloadError::usage(format!(
                "--dir {}: not a directory; choose another --dir",
                args.dir.display()
            )));
        }
        // The working directory is created with the run; its parent must exist.
        Err(_) if args.dir.parent().is_some_and(|p| !p.as_os_str().is_empty() && !p.is_dir()) => {
            return Err(WorkloadError::usage(format!(
                "--dir {}: its parent directory does not exist; create it or choose another --dir",
                args.dir.display()
            )));
        }
        _ => {}
    }
    // The storage under test: a pseudo file system (/proc) or devtmpfs (/dev) holds no cube.
    if let Some(existing) = args.dir.ancestors().find(|d| d.is_dir()) {
        envbench_base::place::check_directory(existing).map_err(|e| WorkloadError::usage(format!("--dir: {e}")))?;
    }
    // Directories holding files envbench did not make are refused now, before a run exists.
    crate::places::check(&config.cube_dir, crate::places::Place::Cube)?;
    crate::places::check(&config.data_dir, crate::places::Place::Data)?;
    let dir =
        if args.dir.exists() { args.dir.clone() } else { args.dir.parent().map_or(".".into(), Path::to_path_buf) };
    let watched = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    Ok(CubeRun { config, sweep, watched })
}

struct CubeRun {
    config: CubeConfig,
    sweep: ThreadSweep,
    /// The existing directory whose storage the fingerprint describes (the working directory, or its parent
    /// before the first run creates it).
    watched: PathBuf,
}

impl Planned for CubeRun {
    fn data_dir(&self) -> &Path {
        &self.watched
    }

    fn announce(&self) -> Option<String> {
        let config = &self.config;
        let settings = self.sweep.settings(config.threads).len();
        let retrievals = config.retrievals.as_ref().map_or(String::new(), |r| {
            format!(
                "; then retrievals by {} user(s), {} per pass, cold, warm{}",
                r.users.iter().map(|u| u.to_string()).collect::<Vec<_>>().join(","),
                envbench_core::units::format_duration(r.duration),
                if r.during_calc { " and during an aggregation" } else { "" }
            )
        });
        Some(format!(
            "envbench cube: scale {}, seed {}, {} repetition{} of 8 steps at {settings} thread setting{} (settings \
             taking turns) in {}{retrievals}",
            config.scale,
            config.seed,
            config.repeat,
            plural(config.repeat as usize),
            plural(settings),
            config.cube_dir.parent().unwrap_or(Path::new(".")).display()
        ))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let labels: Vec<String> =
            self.sweep.settings(self.config.threads).iter().map(|s| setting_label(s, &self.sweep)).collect();
        let names = StepNames {
            inner: context.steps,
            labels: labels.clone(),
            resets: AtomicUsize::new(0),
            progress: context.progress,
        };
        let mut outcome = run_sweep(&self.config, &self.sweep, &names, context.interrupt)?;
        context.progress.line("");
        if let Some(recommendation) = &mut outcome.recommendation {
            // The CPUs this run may use (affinity, cgroup quota), as the thread defaults count them.
            let fingerprint = context.fingerprint;
            let cpus = fingerprint.limits.usable_cpus.or(fingerprint.cpu.threads);
            recommendation.cpu_sentence = Some(crate::cpu_sentence(recommendation, cpus, fingerprint.cpu.smt_active));
        }
        Ok(Box::new(CubeMeasured { outcome, labels }))
    }
}

/// Renames each step for the sampler as `<setting> r<repetition> <step>`, so repeated steps stay apart, and shows
/// progress.
struct StepNames<'a> {
    inner: &'a dyn StepObserver,
    labels: Vec<String>,
    resets: AtomicUsize,
    progress: &'a dyn Progress,
}

impl StepNames<'_> {
    /// The setting and repetition a step of a setting's sequence belongs to; `None` for priming, data generation and
    /// retrieval passes, which are not. Settings take turns within each repetition: setting 1, 2, ..., then the next
    /// repetition.
    fn place(&self, step: &str) -> Option<(&str, usize)> {
        if !Step::ALL.iter().any(|s| s.name() == step) {
            return None;
        }
        let passes = self.resets.load(Ordering::SeqCst).max(1) - 1;
        let settings = self.labels.len().max(1);
        Some((self.labels.get(passes % settings).map(String::as_str).unwrap_or(""), passes / settings + 1))
    }

    /// The step as the sampler names it: `load=8,calc=8,fix=8,restructure=8 r1 3 csv load`.
    fn name(&self, step: &str) -> String {
        match self.place(step) {
            Some((label, repetition)) => format!("{label} r{repetition} {step}").trim().to_string(),
            None => step.to_string(),
        }
    }

    /// The step as progress says it to a person: `3 csv load, repetition 1, threads load 8, calc 8, fix 8,
    /// restructure 8`.
    fn words(&self, step: &str) -> String {
        let Some((label, repetition)) = self.place(step) else { return step.to_string() };
        let threads = label.replace('=', " ").replace(',', ", ");
        let threads = if threads.is_empty() { String::new() } else { format!(", threads {threads}") };
        format!("{step}, repetition {repetition}{threads}")
    }
}

impl StepObserver for StepNames<'_> {
    fn step_started(&self, step: &str) {
        if step == Step::Reset.name() {
            self.resets.fetch_add(1, Ordering::SeqCst);
        }
        let name = self.name(step);
        self.progress.update(&self.words(step));
        self.inner.step_started(&name);
    }

    fn step_finished(&self, step: &str) {
        self.inner.step_finished(&self.name(step));
    }
}

/// The words for a thread setting: the knobs the sweep varies, or all four.
fn setting_label(threads: &ThreadSettings, sweep: &ThreadSweep) -> String {
    let all = sweep.load_threads.is_empty()
        && sweep.calc_threads.is_empty()
        && sweep.fix_threads.is_empty()
        && sweep.restructure_threads.is_empty();
    let knobs = [
        ("load", &sweep.load_threads, threads.load_threads),
        ("calc", &sweep.calc_threads, threads.calc_threads),
        ("fix", &sweep.fix_threads, threads.fix_threads),
        ("restructure", &sweep.restructure_threads, threads.restructure_threads),
    ];
    knobs
        .iter()
        .filter(|(_, list, _)| all || !list.is_empty())
        .map(|(name, _, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(",")
}

struct CubeMeasured {
    outcome: SweepOutcome,
    labels: Vec<String>,
}

impl Measured for CubeMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = result_records(&self.outcome.outcomes);
        if let (Some(retrievals), Some(first)) = (&self.outcome.retrievals, self.outcome.outcomes.first()) {
            let base = json!({
                "scale": first.scale,
                "seed": first.seed,
                "compression": first.compression.as_str(),
                "data_cache_bytes": first.data_cache_bytes,
                "direct": first.direct_io,
            });
            records.extend(crate::retrievals::retrieval_records(retrievals, &base));
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, json!(&self.outcome)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        let mut out = String::new();
        for (index, sequence) in self.outcome.outcomes.iter().enumerate() {
            out.push_str(&render_sequence(sequence, series, &self.labels[index], self.outcome.outcomes.len() > 1));
            out.push('\n');
        }
        if let Some(recommendation) = &self.outcome.recommendation {
            out.push_str(&render_recommendation(recommendation));
        }
        if let Some(last) = self.outcome.outcomes.last() {
            out.push_str(&render_statistics(last));
        }
        if let Some(retrievals) = &self.outcome.retrievals {
            out.push('\n');
            out.push_str(&crate::retrievals::render(retrievals));
        }
        out
    }
}

/// Mean of a sampler figure over every repetition of one step at one setting.
fn step_figures(series: &SamplerSeries, label: &str, step: &str) -> Option<(f64, f64, f64, f64)> {
    let matching: Vec<&SampledStep> =
        series.steps.iter().filter(|s| s.step.ends_with(step) && s.step.starts_with(&format!("{label} "))).collect();
    if matching.is_empty() {
        return None;
    }
    let n = matching.len() as f64;
    let mean = |f: &dyn Fn(&SampledStep) -> f64| matching.iter().map(|s| f(s)).sum::<f64>() / n;
    Some((
        mean(&|s| s.disks.first().map(|d| d.read_mb_per_s).unwrap_or(0.0)),
        mean(&|s| s.disks.first().map(|d| d.write_mb_per_s).unwrap_or(0.0)),
        mean(&|s| s.disks.first().map(|d| d.reads_per_s + d.writes_per_s).unwrap_or(0.0)),
        mean(&|s| s.cpu.user_percent + s.cpu.system_percent + s.cpu.nice_percent),
    ))
}

fn render_sequence(outcome: &SequenceOutcome, series: &SamplerSeries, label: &str, show_label: bool) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &[
            "STEP",
            "MEAN s",
            "MIN s",
            "MAX s",
            "SHARE",
            "CELLS/s",
            "BLOCKS R",
            "BLOCKS W",
            "DISK rMB/s",
            "DISK wMB/s",
            "DISK IOPS",
            "CPU %",
        ],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right],
    );
    let last = outcome.repetitions.last();
    for summary in &outcome.summary {
        let blocks = summary
            .step
            .and_then(|step| last.and_then(|r| r.steps.iter().find(|s| s.step == step)))
            .map(|s| (s.blocks_read.to_string(), s.blocks_written.to_string()))
            .unwrap_or_default();
        let figures = summary.step.and_then(|step| step_figures(series, label, step.name()));
        let mut row = vec![
            summary.name.clone(),
            format!("{:.2}", summary.mean_seconds),
            format!("{:.2}", summary.min_seconds),
            format!("{:.2}", summary.max_seconds),
            format!("{:.1}%", summary.share_of_total * 100.0),
            if summary.cells_per_second > 0.0 { number(summary.cells_per_second) } else { "-".into() },
            blocks.0,
            blocks.1,
        ];
        match figures {
            Some((read, write, iops, cpu)) => {
                row.extend([number(read), number(write), number(iops), format!("{cpu:.0}")])
            }
            None => row.extend(std::iter::repeat_n(String::new(), 4)),
        }
        table.row(row);
    }
    let mut out = heading(&format!(
        "Cube sequence{}: scale {}, {} repetition{}, compression {}, data cache {}{}",
        if show_label { format!(" at {label}") } else { String::new() },
        outcome.scale,
        outcome.repetitions.len(),
        plural(outcome.repetitions.len()),
        outcome.compression,
        ByteSize(outcome.data_cache_bytes),
        if outcome.direct_io { ", O_DIRECT" } else { "" }
    ));
    out.push('\n');
    if let Some(step) = &outcome.recovered_from {
        out.push_str(&format!("(a previous run left {step} unfinished: the cube was reset first)\n"));
    }
    out.push_str(&table.render());
    out
}

fn render_recommendation(recommendation: &crate::Recommendation) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["STEP", "FASTEST AT", "MEAN s", "RUNNER-UP", "DIFFERENCE", "vs OVERALL BEST", "SPREAD", "KNOB"],
        &[Left, Left, Right, Left, Left, Right, Right, Left],
    );
    for choice in &recommendation.per_step {
        table.row(vec![
            choice.name.clone(),
            choice.best_label.clone(),
            format!("{:.2}", choice.best_mean_seconds),
            match (&choice.runner_up_label, choice.runner_up_mean_seconds) {
                (Some(label), Some(mean)) => format!("{label} ({mean:.2})"),
                _ => String::new(),
            },
            choice.difference.words().to_string(),
            if choice.saving_seconds > 0.0 {
                format!("-{:.2} s ({:.1}%)", choice.saving_seconds, choice.saving_percent)
            } else {
                "same".into()
            },
            format!("{:.1}%", choice.spread_percent),
            match choice.step.knob() {
                Some(knob) if choice.governed => knob.name().to_string(),
                Some(knob) => format!("{} (not varied)", knob.name()),
                None => "none".to_string(),
            },
        ]);
    }
    let mut out = heading("Thread settings per step");
    out.push('\n');
    out.push_str(&table.render());
    out.push_str(
        "DIFFERENCE: clear when every repetition of the fastest beat every repetition of the runner-up; steps no \
         varied knob governs differ by noise and drift alone and are never advice.\n",
    );
    out.push_str(&format!(
        "Best single setting: {} ({:.2} s); slowest: {} ({:.2} s); every step at its own best: {:.2} s\n",
        recommendation.overall_best_label,
        recommendation.overall_best_total_seconds,
        recommendation.slowest_label,
        recommendation.slowest_total_seconds,
        recommendation.best_combined_total_seconds
    ));
    out.push_str(&heading(&recommendation.sentence));
    if let Some(cpu) = &recommendation.cpu_sentence {
        out.push('\n');
        out.push_str(cpu);
    }
    out.push_str("\n\n");
    out
}

fn render_statistics(outcome: &SequenceOutcome) -> String {
    let s = &outcome.statistics;
    format!(
        "Cube: {} blocks ({} level 0, {} upper; {} Local, {} USD), {} in {} page file{}, density {:.2}%, compression \
         ratio {:.1}\n",
        s.blocks,
        s.level0_blocks,
        s.upper_blocks,
        s.local_blocks,
        s.usd_blocks,
        ByteSize(s.page_file_bytes),
        s.page_files,
        plural(s.page_files),
        s.average_density * 100.0,
        s.compression_ratio
    )
}

/// `cube get`: read the cube a finished run left, under a shared lock; nothing is written.
fn retrieve(args: &CubeGetArgs) -> Result<String, WorkloadError> {
    let cube_dir = args.dir.join("cube");
    if !crate::places::check(&cube_dir, crate::places::Place::Cube)? {
        return Err(CubeError::NoCube { dir: cube_dir }.into());
    }
    let _lock = CubeLock::shared(&cube_dir)?;
    let cube = Cube::open_existing(&cube_dir)?;
    Ok(match &args.grid {
        Some(grid) => cube.grid(&args.query, &grid[0], &grid[1])?.to_string(),
        None => match cube.get(&args.query)? {
            Some(value) => format!("{}\n", cell_text(value)),
            None => "#Missing\n".to_string(),
        },
    })
}

/// A cell as people read it: at most six decimals, no float noise (`-44928121.900000006` prints `-44928121.9`).
fn cell_text(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_says_a_step_in_words_and_the_sampler_keeps_its_name() {
        let names = StepNames {
            inner: &envbench_core::sampler::NoSteps,
            labels: vec!["load=8,calc=8".into(), "load=1,calc=1".into()],
            resets: AtomicUsize::new(0),
            progress: &envbench_core::workload::Silent,
        };
        names.step_started(Step::Reset.name());
        assert_eq!(names.name("3 csv load"), "load=8,calc=8 r1 3 csv load");
        assert_eq!(names.words("3 csv load"), "3 csv load, repetition 1, threads load 8, calc 8");
        names.step_started(Step::Reset.name());
        names.step_started(Step::Reset.name());
        assert_eq!(names.words("3 csv load"), "3 csv load, repetition 2, threads load 8, calc 8");
        assert_eq!(names.words("data generation"), "data generation");
    }

    #[test]
    fn cells_print_without_float_noise() {
        assert_eq!(cell_text(-44928121.900000006), "-44928121.9");
        assert_eq!(cell_text(12.0), "12");
        assert_eq!(cell_text(0.125), "0.125");
    }

    #[test]
    fn setting_labels_name_the_varied_knobs() {
        let sweep = ThreadSweep { calc_threads: vec![1, 2], ..Default::default() };
        let threads = ThreadSettings { calc_threads: 2, ..Default::default() };
        assert_eq!(setting_label(&threads, &sweep), "calc=2");
        assert_eq!(setting_label(&threads, &ThreadSweep::default()), "load=8,calc=2,fix=8,restructure=8");
    }
}
