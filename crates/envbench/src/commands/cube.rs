//! `envbench cube`: the EssBench-style sequence (or a thread sweep) with a per-step table, the recommendation, and
//! each step's disk and CPU figures; `envbench cube get` reads the cube it left behind.

use crate::cli::{CubeAction, CubeArgs, CubeGetArgs, CubeRunArgs};
use crate::commands::run_request;
use crate::output::{Align, Table, heading, number, progress, progress_line};
use crate::session::{Ending, RunSession};
use crate::usage;
use envbench_core::ByteSize;
use envbench_core::sampler::{SamplerSeries, StepObserver};
use envbench_cube::{
    Compression, Cube, CubeConfig, CubeError, SequenceOutcome, Step, ThreadSettings, ThreadSweep, result_records,
    run_sweep,
};
use envbench_store::StoreLocation;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn run(location: &StoreLocation, args: CubeArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(CubeAction::Get(get)) => retrieve(get),
        None => run_sequence(location, args.run),
    }
}

/// Parse `--calc-threads 1,2,4` style lists.
fn thread_list(name: &str, text: &Option<String>) -> anyhow::Result<Vec<usize>> {
    let Some(text) = text else { return Ok(Vec::new()) };
    text.split(',')
        .map(|part| match part.trim().parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => Ok(n),
            _ => Err(usage(format!("--{name} '{text}': give whole numbers from 1 to 1024, e.g. --{name} 1,2,4"))),
        })
        .collect()
}

fn config(args: &CubeRunArgs) -> anyhow::Result<(CubeConfig, ThreadSweep)> {
    if !(args.scale > 0.0 && args.scale <= 100.0) {
        return Err(usage(format!("--scale {}: give a positive number up to 100, e.g. 0.1 or 1.0", args.scale)));
    }
    if args.repeat == 0 {
        return Err(usage("--repeat must be at least 1"));
    }
    let mut config = CubeConfig::new(&args.dir);
    config.scale = args.scale;
    config.seed = args.seed;
    config.repeat = args.repeat;
    config.options.compression =
        args.compression.parse::<Compression>().map_err(|e| usage(format!("--compression: {e}")))?;
    config.options.data_cache =
        envbench_core::parse_byte_size(&args.data_cache).map_err(|e| usage(format!("--data-cache: {e}")))?;
    config.options.direct_io = args.direct;
    let sweep = ThreadSweep {
        load_threads: thread_list("load-threads", &args.load_threads)?,
        calc_threads: thread_list("calc-threads", &args.calc_threads)?,
        fix_threads: thread_list("fix-threads", &args.fix_threads)?,
        restructure_threads: thread_list("restructure-threads", &args.restructure_threads)?,
    };
    for threads in sweep.settings(config.threads) {
        CubeConfig { threads, ..config.clone() }.validate().map_err(|e| usage(e.to_string()))?;
    }
    Ok((config, sweep))
}

/// Renames each step for the sampler as `<setting> r<repetition> <step>`, so repeated steps stay apart, and prints
/// progress on stderr.
struct StepNames<'a> {
    inner: &'a dyn StepObserver,
    labels: Vec<String>,
    repeat: usize,
    resets: AtomicUsize,
    quiet: bool,
}

impl StepNames<'_> {
    fn name(&self, step: &str) -> String {
        if step.starts_with('0') {
            return step.to_string();
        }
        let passes = self.resets.load(Ordering::SeqCst).max(1) - 1;
        let label = self.labels.get(passes / self.repeat).map(String::as_str).unwrap_or("");
        format!("{label} r{} {step}", passes % self.repeat + 1).trim().to_string()
    }
}

impl StepObserver for StepNames<'_> {
    fn step_started(&self, step: &str) {
        if step == Step::Reset.name() {
            self.resets.fetch_add(1, Ordering::SeqCst);
        }
        let name = self.name(step);
        if !self.quiet {
            progress(&name);
        }
        self.inner.step_started(&name);
    }

    fn step_finished(&self, step: &str) {
        self.inner.step_finished(&self.name(step));
    }
}

/// The words for a thread setting: the knobs the sweep varies, or all four.
fn setting_label(threads: &ThreadSettings, sweep: &ThreadSweep) -> String {
    let mut parts = Vec::new();
    let all = sweep.load_threads.is_empty()
        && sweep.calc_threads.is_empty()
        && sweep.fix_threads.is_empty()
        && sweep.restructure_threads.is_empty();
    if all || !sweep.load_threads.is_empty() {
        parts.push(format!("load={}", threads.load_threads));
    }
    if all || !sweep.calc_threads.is_empty() {
        parts.push(format!("calc={}", threads.calc_threads));
    }
    if all || !sweep.fix_threads.is_empty() {
        parts.push(format!("fix={}", threads.fix_threads));
    }
    if all || !sweep.restructure_threads.is_empty() {
        parts.push(format!("restructure={}", threads.restructure_threads));
    }
    parts.join(",")
}

fn run_sequence(location: &StoreLocation, args: CubeRunArgs) -> anyhow::Result<ExitCode> {
    let request = run_request("cube", &args.labels)?;
    let (config, sweep) = config(&args)?;
    std::fs::create_dir_all(&args.dir).map_err(|e| {
        usage(format!("{}: cannot create the cube directory ({e}); choose another --dir", args.dir.display()))
    })?;
    let mut session = RunSession::start(location, &request, &args.dir, args.sampling.interval()?)?;
    let interrupt = session.interrupt();
    let settings = sweep.settings(config.threads);
    if !args.json {
        eprintln!(
            "envbench cube: scale {}, seed {}, {} repetition{} of 8 steps at {} thread setting{} in {}",
            config.scale,
            config.seed,
            config.repeat,
            if config.repeat == 1 { "" } else { "s" },
            settings.len(),
            if settings.len() == 1 { "" } else { "s" },
            args.dir.display()
        );
    }
    let labels: Vec<String> = settings.iter().map(|s| setting_label(s, &sweep)).collect();
    let names = StepNames {
        inner: session.steps(),
        labels: labels.clone(),
        repeat: config.repeat as usize,
        resets: AtomicUsize::new(0),
        quiet: args.json,
    };
    let outcome = run_sweep(&config, &sweep, &names, &interrupt);
    drop(names);
    if !args.json {
        progress_line("");
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            let interrupted = matches!(error, CubeError::Cancelled { .. });
            session.finish(&[], Ending::Failed(error.to_string()))?;
            if interrupted {
                return Ok(ExitCode::from(130));
            }
            return Err(classify(error));
        }
    };
    let series = session.stop_sampling().clone();
    let records = result_records(&outcome.outcomes);
    if args.json {
        let document = serde_json::json!({ "run": session.uuid(), "cube": &outcome, "sampler": &series });
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        for (index, sequence) in outcome.outcomes.iter().enumerate() {
            print!("{}", render_sequence(sequence, &series, &labels[index], outcome.outcomes.len() > 1));
            println!();
        }
        if let Some(recommendation) = &outcome.recommendation {
            print!("{}", render_recommendation(recommendation));
        }
        if let Some(last) = outcome.outcomes.last() {
            print!("{}", render_statistics(last));
        }
    }
    session.attach("cube", &serde_json::to_value(&outcome)?)?;
    let status = session.finish(&records, Ending::Complete)?;
    Ok(if status == envbench_core::RunStatus::Complete { ExitCode::SUCCESS } else { ExitCode::from(130) })
}

fn classify(error: CubeError) -> anyhow::Error {
    match error {
        CubeError::Config(_)
        | CubeError::Query(_)
        | CubeError::UnknownDimension { .. }
        | CubeError::UnknownMember { .. }
        | CubeError::DirectIoUnsupported { .. } => usage(error.to_string()),
        other => other.into(),
    }
}

/// Mean of a sampler figure over every repetition of one step at one setting.
fn step_figures(series: &SamplerSeries, label: &str, step: &str) -> Option<(f64, f64, f64, f64)> {
    let matching: Vec<_> =
        series.steps.iter().filter(|s| s.step.ends_with(step) && s.step.starts_with(label)).collect();
    if matching.is_empty() {
        return None;
    }
    let n = matching.len() as f64;
    let mean = |f: &dyn Fn(&envbench_core::sampler::StepSummary) -> f64| matching.iter().map(|s| f(s)).sum::<f64>() / n;
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
        if outcome.repetitions.len() == 1 { "" } else { "s" },
        outcome.compression,
        ByteSize(outcome.data_cache_bytes),
        if outcome.direct_io { ", O_DIRECT" } else { "" }
    ));
    out.push('\n');
    if let Some(step) = &outcome.recovered_from {
        out.push_str(&format!("(a previous run left {step:?} unfinished: the cube was reset first)\n"));
    }
    out.push_str(&table.render());
    out
}

fn render_recommendation(recommendation: &envbench_cube::Recommendation) -> String {
    use Align::{Left, Right};
    let mut table =
        Table::new(&["STEP", "FASTEST AT", "MEAN s", "vs OVERALL BEST", "SPREAD"], &[Left, Left, Right, Right, Right]);
    for choice in &recommendation.per_step {
        table.row(vec![
            choice.name.clone(),
            choice.best_label.clone(),
            format!("{:.2}", choice.best_mean_seconds),
            if choice.saving_seconds > 0.0 {
                format!("-{:.2} s ({:.1}%)", choice.saving_seconds, choice.saving_percent)
            } else {
                "same".into()
            },
            format!("{:.1}%", choice.spread_percent),
        ]);
    }
    let mut out = heading("Thread settings per step");
    out.push('\n');
    out.push_str(&table.render());
    out.push_str(&format!(
        "Best single setting: {} ({:.2} s); slowest: {} ({:.2} s); every step at its own best: {:.2} s\n",
        recommendation.overall_best_label,
        recommendation.overall_best_total_seconds,
        recommendation.slowest_label,
        recommendation.slowest_total_seconds,
        recommendation.best_combined_total_seconds
    ));
    out.push_str(&heading(&recommendation.sentence));
    out.push_str("\n\n");
    out
}

fn render_statistics(outcome: &SequenceOutcome) -> String {
    let s = &outcome.statistics;
    format!(
        "Cube: {} blocks ({} level 0, {} upper; {} Local, {} USD), {} in {} page file{}, density {:.2}%, compression ratio {:.1}\n",
        s.blocks,
        s.level0_blocks,
        s.upper_blocks,
        s.local_blocks,
        s.usd_blocks,
        ByteSize(s.page_file_bytes),
        s.page_files,
        if s.page_files == 1 { "" } else { "s" },
        s.average_density * 100.0,
        s.compression_ratio
    )
}

fn retrieve(args: CubeGetArgs) -> anyhow::Result<ExitCode> {
    let cube_dir = args.dir.join("cube");
    if !cube_dir.exists() {
        return Err(usage(format!(
            "{}: no cube here; run `envbench cube --dir {}` first (or give the --dir of an earlier run)",
            cube_dir.display(),
            args.dir.display()
        )));
    }
    let cube = Cube::open(&cube_dir, Default::default()).map_err(classify)?;
    match &args.grid {
        Some(grid) => {
            let grid = cube.grid(&args.query, &grid[0], &grid[1]).map_err(classify)?;
            print!("{grid}");
        }
        None => match cube.get(&args.query).map_err(classify)? {
            Some(value) => println!("{}", cell_text(value)),
            None => println!("#Missing"),
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// A cell as people read it: at most six decimals, no float noise (`-44928121.900000006` prints `-44928121.9`).
fn cell_text(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::cell_text;

    #[test]
    fn cells_print_without_float_noise() {
        assert_eq!(cell_text(-44928121.900000006), "-44928121.9");
        assert_eq!(cell_text(12.0), "12");
        assert_eq!(cell_text(0.125), "0.125");
    }
}
