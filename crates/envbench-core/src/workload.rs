//! What every workload is, in the few operations the one driver needs of it.
//!
//! A workload lives in its own crate and is registered once, in the binary's [`Registry`]. It is three small
//! things, like hyperfine's exporters or fio's engine table:
//!
//! - a [`Workload`]: a static value that names the workload, gives its command line (a [`clap::Command`] without the
//!   options every workload shares, which the driver adds), checks the arguments and plans a run
//!   ([`Workload::plan`]), and reads its own stored runs back for the scorecard, the report and exports;
//! - a [`Planned`] run: checked, nothing created yet; it says which directory the fingerprint describes and the
//!   sampler watches, then runs with a [`RunContext`] (step observer, interrupt flag, fingerprint, progress);
//! - what it [`Measured`]: its result records, its attachment, its JSON and its human rendering, made once the
//!   sampler has stopped, and how the run ended.
//!
//! The driver owns everything around that: the session, the fingerprint, the sampler, the store and its fallback,
//! Ctrl-C, JSON or table, and the exit status, which comes from the [`ErrorKind`] of an error (the workload decides
//! which of its errors are the user's) or from the [`Ending`] of a finished run.
//!
//! The run's side of that (the error, the context, [`Planned`], [`Measured`]) lives in [`crate::run`] and is
//! re-exported here; this module holds the workload itself, how it reads back and the [`Registry`].

pub use crate::fingerprint::Resource;
use crate::model::StoredRun;
pub use crate::run::{
    Ending, Envelope, ErrorKind, Measured, Planned, Progress, Recording, RunContext, Silent, WorkloadError,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// What the arguments ask for.
pub enum Plan {
    /// A run, to go through the driver's lifecycle.
    Run(Box<dyn Planned>),
    /// A read-only answer printed at once (such as `cube get`); no run is stored.
    Answer(String),
}

/// One point of a scaling curve: a concurrency, the throughput it reached and its latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    pub concurrency: f64,
    pub throughput: f64,
    pub latency: f64,
}

/// How a workload's throughput and latency grow with concurrency (ranread's jobs, OLTP's users), with the knee.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingCurve {
    /// What the concurrency counts, e.g. `concurrent jobs`.
    pub concurrency_label: String,
    /// Its short name, as in `J=8`.
    pub concurrency_symbol: String,
    /// E.g. `IOPS`.
    pub throughput_label: String,
    /// E.g. `mean response time`.
    pub latency_label: String,
    /// E.g. `ms`.
    pub latency_unit: String,
    pub points: Vec<ScalingPoint>,
    /// The point that is the knee, when there is one.
    pub knee: Option<usize>,
    /// The latency limit the knee was judged against.
    pub latency_target: Option<f64>,
    /// What the marked point is: the knee of a closed loop, or an open loop's capacity within a service level
    /// (whose chart leads with the response time against the offered rate).
    #[serde(default)]
    pub mark: CurveMark,
}

/// What a scaling curve's marked point is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveMark {
    /// The highest throughput whose latency is within the target.
    #[default]
    Knee,
    /// The highest offered rate whose response times held the service level.
    Capacity,
}

impl CurveMark {
    pub fn word(self) -> &'static str {
        match self {
            CurveMark::Knee => "knee",
            CurveMark::Capacity => "capacity",
        }
    }
}

/// A figure over time within a run (throughput, one line per step; a replay's sessions), for workloads that count
/// it as they run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// What the chart is of, when a run draws several (e.g. one per sustained write test).
    #[serde(default)]
    pub subject: Option<String>,
    /// E.g. `transactions per second`.
    pub y_label: String,
    /// What the x axis counts from, e.g. `seconds since the step began (ramp-up included)`.
    pub x_label: String,
    /// One line per step: its name and its (x, y) points.
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
    /// Moments and spans the chart marks (a cliff, a steady-state window).
    #[serde(default)]
    pub marks: Vec<TimelineMark>,
    /// Whether more is better (throughput), which the axis says; a replay's sessions should match, not grow.
    #[serde(default = "more_is_better")]
    pub higher_is_better: bool,
    /// What the chart shows, in a sentence, when the default one (steps and stalls) does not say it.
    #[serde(default)]
    pub note: Option<String>,
}

fn more_is_better() -> bool {
    true
}

/// A marked place on a timeline's x axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineMark {
    /// One moment, drawn as a vertical line.
    At { x: f64, label: String },
    /// A span, drawn shaded.
    Span { from: f64, to: f64, label: String },
}

/// Rows in a workload's own export layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// How a workload that does not repeat its tests itself gets more samples for a verdict: more runs, each of which
/// counts once in its side's interval.
pub const MORE_RUNS: &str = "5 runs on each side under one --label (each run counts once in its side's interval)";

/// A workload as envbench runs it; registered once in the binary's [`Registry`]. How its stored results read back is
/// its [`ReadBack`] side.
pub trait Workload: ReadBack + Sync {
    /// The command name, the `workload` of its stored runs, and its table name in suite files.
    fn name(&self) -> &'static str;

    /// Bumped when results stop being comparable with older ones.
    fn version(&self) -> u32;

    /// The command line: about text, options and subcommands. The driver adds `--json`, `--label`, `--tag` and
    /// `--sample-interval` to every workload.
    fn command(&self) -> clap::Command;

    /// Check the arguments and plan the run, or answer at once. Nothing is created or stored here, so a usage error
    /// leaves no trace.
    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError>;

    /// How the workload takes part in suites: its table in each built-in suite, and where it works.
    fn suite_side(&self) -> &dyn SuiteSide {
        &DefaultSuiteSide
    }

    /// The workload's side of a fleet run (`envbench fleet`), when it can run on many hosts at once.
    fn fleet(&self) -> Option<&dyn crate::fleet::FleetWorkload> {
        None
    }
}

/// How a workload takes part in suites ([`Workload::suite_side`]). Both methods have their defaults here: a workload
/// in no built-in suite that works in `--dir`.
pub trait SuiteSide: Sync {
    /// The workload's table in a built-in suite (one of [`BUILTIN_SUITES`]): suite-file TOML without its `[name]`
    /// header, its parameters with comments for people. None leaves the workload out of that suite.
    fn table(&self, _suite: &str) -> Option<&'static str> {
        None
    }

    /// The option and value that point the workload at a suite's directory, unless the suite item's own arguments
    /// (`args`) already say where it works.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        (!has_option(args, "--dir")).then(|| ("--dir", suite_dir.display().to_string()))
    }
}

/// The unit of work a workload's cost is quoted in ([`ReadBack::cost_units`]): the median of `metric` on each test
/// whose id starts with `tests`, as a geometric mean over those tests, priced as a rate or as one execution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostUnit {
    pub metric: &'static str,
    /// Tests whose id starts with this count ("" for all): e.g. only the 4 KiB random tests for IOPS.
    pub tests: &'static str,
    pub per: Per,
    /// For people: `1,000 NOPM`, `query`.
    pub words: &'static str,
}

/// How a [`CostUnit`] is priced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Per {
    /// A rate (per minute or per second: the price is per hour of it): the price of this many units of the rate,
    /// as TPC quotes price per tpmC.
    Rate(f64),
    /// A time in seconds: the price of one execution.
    Execution,
}

impl CostUnit {
    /// What one unit costs at `price_per_hour`, given the measured `value` (a rate, or seconds).
    pub fn cost(&self, price_per_hour: f64, value: f64) -> Option<f64> {
        if !(value.is_finite() && value > 0.0 && price_per_hour.is_finite() && price_per_hour > 0.0) {
            return None;
        }
        Some(match self.per {
            Per::Rate(units) => price_per_hour / (value / units),
            Per::Execution => price_per_hour * value / 3600.0,
        })
    }

    /// True when a result of this test and metric is what the unit is measured by.
    pub fn measures(&self, test_id: &str, metric: &str) -> bool {
        metric == self.metric && test_id.starts_with(self.tests)
    }
}

/// The suite side of a workload that keeps every default.
struct DefaultSuiteSide;

impl SuiteSide for DefaultSuiteSide {}

/// How a workload's stored results read back: the scorecard's headline, what a verdict sums it up by, its charts and
/// exports. Every method has its default here and nowhere else; a run of a workload this build does not know reads
/// back by these defaults ([`Registry::read_back`]).
pub trait ReadBack: Sync {
    /// The workload's name for people, in verdicts: `storage`, `analytic queries`. None: its command name.
    fn title(&self) -> Option<&'static str> {
        None
    }

    /// The figure a practitioner looks at first, for the scorecard.
    fn headline(&self, run: &StoredRun) -> String {
        first_result(run)
    }

    /// What the workload's tests are, for chart titles: `per step`, `per query`.
    fn tests_word(&self) -> &'static str {
        "per test"
    }

    /// What a price per hour (`--tag price_per_hour`) is spread over for this workload, as its peers quote it
    /// (per 1,000 NOPM, per 1,000 IOPS, per QphH), the first a run measured counting. None: only the work per unit of
    /// cost against another side.
    fn cost_units(&self) -> &'static [CostUnit] {
        &[]
    }

    /// The metrics a verdict sums the workload up by, most telling first: each test counts once, by the first of
    /// these it has. Empty: each test's first metric.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[]
    }

    /// How a user gets more samples of every test, for a verdict that cannot tell: an option such as `--repeat 5`
    /// when the workload repeats its tests itself; otherwise more runs, each counted once.
    fn more_samples(&self) -> &'static str {
        MORE_RUNS
    }

    /// The change below which two runs of one environment differ anyway, so a verdict calls it "about the same"
    /// whatever its p-value: [`crate::stats::NOISE_MARGIN`], or [`crate::stats::STORAGE_NOISE_MARGIN`] for storage
    /// workloads.
    fn noise_margin(&self) -> f64 {
        crate::stats::NOISE_MARGIN
    }

    /// Which of its tests that got significantly slower a verdict names, the worst first: those of this metric, at
    /// most this many. None by default, as a workload of a few standard tests shows them all in its table; a
    /// workload whose tests are the user's own (a replay's statements) names the ones to look at.
    fn slower_tests_named(&self) -> Option<(&'static str, usize)> {
        None
    }

    /// What in an environment governs the workload's results, so a verdict names the differences that matter.
    fn governed_by(&self) -> &'static [Resource] {
        &[Resource::Cpu, Resource::Memory, Resource::Storage]
    }

    /// The parameters that set a test's concurrency (threads, queue depth, processes, users): a test whose knobs
    /// are all 1 is single-threaded. None: no test of the workload counts as single-threaded.
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &[]
    }

    /// True for a test that runs one thread at queue depth one (what one core and one I/O path do): by default,
    /// a test that has at least one of [`ReadBack::concurrency_knobs`] and all of them at 1.
    fn single_threaded(&self, _test_id: &str, parameters: &Value) -> bool {
        single_threaded_by_knobs(parameters, self.concurrency_knobs())
    }

    /// The scaling curve of a stored run, for workloads that sweep a concurrency.
    fn scaling(&self, _run: &StoredRun) -> Option<ScalingCurve> {
        None
    }

    /// Throughput over time of a stored run, one chart each, for workloads that count it each second.
    fn timelines(&self, _run: &StoredRun) -> Vec<Timeline> {
        Vec::new()
    }

    /// A stored run in the workload's own tab-separated export layout, when it has one (RanRead's spreadsheet
    /// layout). `Err` says why a run cannot be read.
    fn native_tsv(&self, _run: &StoredRun) -> Option<Result<NativeTable, String>> {
        None
    }
}

/// The read-back side of a workload this build does not know (a run stored by another version): the defaults.
struct Unregistered;

impl ReadBack for Unregistered {}

/// The most settings one list option sweeps (`--calc-threads 1,2,4`, `--users 1,2,4,8`): every setting is a step
/// of its own, so more than this is a mistake, not a benchmark.
pub const MAX_LIST_SETTINGS: usize = 64;

/// The counts of an option that takes a count or a list of them (`--calc-threads 1,2,4`), each from 1 to `max`, at
/// most [`MAX_LIST_SETTINGS`] of them and none twice; an option left out gives none.
pub fn count_list(option: &str, text: Option<&str>, max: usize) -> Result<Vec<usize>, WorkloadError> {
    let Some(text) = text else { return Ok(Vec::new()) };
    let counts = text
        .split(',')
        .map(|part| match part.trim().parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(WorkloadError::usage(format!(
                "--{option} '{}': give whole numbers from 1 to {max}, e.g. --{option} 1,2,4",
                crate::text::truncate(text, 80)
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    crate::units::check_settings(&format!("--{option}"), &counts, MAX_LIST_SETTINGS).map_err(WorkloadError::usage)?;
    Ok(counts)
}

/// A workload's arguments `A` from `line` as its command `name` parses them, with clap's own refusals (what a
/// workload's typed value parsers say of a wrong value, before anything runs).
pub fn parse_args<A: clap::Args + clap::FromArgMatches>(name: &'static str, line: &[&str]) -> Result<A, clap::Error> {
    let matches = A::augment_args(clap::Command::new(name))
        .try_get_matches_from(std::iter::once(name).chain(line.iter().copied()))?;
    A::from_arg_matches(&matches)
}

/// True when `args` hold `option` (as `--option value` or `--option=value`).
pub fn has_option(args: &[String], option: &str) -> bool {
    args.iter().any(|a| a == option || a.strip_prefix(option).is_some_and(|rest| rest.starts_with('=')))
}

/// True when `parameters` hold at least one of `knobs` and every one of them is 1.
pub fn single_threaded_by_knobs(parameters: &Value, knobs: &[&str]) -> bool {
    let Some(object) = parameters.as_object() else { return false };
    let values: Vec<u64> = knobs.iter().filter_map(|k| object.get(*k)).filter_map(Value::as_u64).collect();
    !values.is_empty() && values.iter().all(|v| *v == 1)
}

/// The scorecard line of a workload without a headline of its own: its first result.
pub fn first_result(run: &StoredRun) -> String {
    run.results
        .first()
        .and_then(|r| {
            crate::stats::Summary::of(&r.record.samples)
                .map(|s| format!("{} {} {:.3} {}", r.record.test_id, r.record.metric, s.median, r.record.unit))
        })
        .unwrap_or_default()
}

/// The built-in suites `envbench run --suite` takes by name: `quick` (the default, a couple of minutes), `standard`
/// (each workload's full default) and `smoke` (`quick` at tiny sizes, for tests). Each is made of the workloads' own
/// tables ([`SuiteSide::table`]), so a new workload joins them from its crate.
pub const BUILTIN_SUITES: &[&str] = &["quick", "standard", "smoke"];

/// Every workload envbench can run, in the order help and suites list them.
#[derive(Clone, Copy)]
pub struct Registry {
    workloads: &'static [&'static dyn Workload],
}

impl Registry {
    pub const fn new(workloads: &'static [&'static dyn Workload]) -> Registry {
        Registry { workloads }
    }

    /// The workload of a name.
    pub fn find(&self, name: &str) -> Option<&'static dyn Workload> {
        self.workloads.iter().copied().find(|w| w.name() == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &'static dyn Workload> + '_ {
        self.workloads.iter().copied()
    }

    /// Every name, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.iter().map(|w| w.name()).collect()
    }

    /// The built-in suite `name` as a suite file: its `[suite]` table, then each workload's table in it, in the
    /// registry's order. None when `name` is not one of [`BUILTIN_SUITES`].
    pub fn builtin_suite(&self, name: &str) -> Option<String> {
        if !BUILTIN_SUITES.contains(&name) {
            return None;
        }
        let mut text = format!("[suite]\nname = \"{name}\"\n");
        for workload in self.iter() {
            if let Some(table) = workload.suite_side().table(name) {
                text.push_str(&format!("\n[{}]\n{}", workload.name(), table.trim_start_matches('\n')));
            }
        }
        Some(text)
    }

    /// How a workload's stored results read back: its own way when it is registered, the defaults otherwise.
    pub fn read_back(&self, name: &str) -> &'static dyn ReadBack {
        match self.find(name) {
            Some(workload) => workload,
            None => &Unregistered,
        }
    }

    /// How a stored run's workload reads back ([`Registry::read_back`] of its workload).
    pub fn of_run(&self, run: &StoredRun) -> &'static dyn ReadBack {
        self.read_back(&run.summary.workload)
    }

    /// A workload's name for people (its command name when it has none).
    pub fn title<'a>(&self, name: &'a str) -> &'a str {
        self.read_back(name).title().unwrap_or(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_of_work_costs_the_price_of_an_hour_over_the_work_of_an_hour() {
        let nopm = CostUnit { metric: "nopm", tests: "", per: Per::Rate(1000.0), words: "1,000 NOPM" };
        // 1.84 an hour at 92,000 NOPM: 0.02 per 1,000 NOPM, as TPC quotes price per tpmC.
        assert!((nopm.cost(1.84, 92_000.0).unwrap() - 0.02).abs() < 1e-12);
        let query = CostUnit { metric: "elapsed", tests: "total", per: Per::Execution, words: "run" };
        assert!((query.cost(3.6, 10.0).unwrap() - 0.01).abs() < 1e-12);
        assert_eq!(nopm.cost(1.84, 0.0), None);
        assert_eq!(nopm.cost(-1.0, 5.0), None);
        assert!(query.measures("total", "elapsed") && !query.measures("load", "elapsed"));
    }

    /// What a new workload must provide, all of it: a name, a version, a command line and a plan (the four required
    /// methods of [`Workload`]); a run ([`Planned`]: where it works, and the work); what it measured ([`Measured`]:
    /// its records and its human view); and a [`ReadBack`] that may keep every default. It then joins a registry
    /// with one line, works in `--dir` in suites, stays out of the built-in suites until it writes a table for them,
    /// and reads back by the defaults.
    mod a_new_workload {
        use super::*;
        use crate::fingerprint::Fingerprint;
        use crate::model::{Direction, ResultRecord};
        use crate::sampler::{NoSteps, SamplerSeries};
        use std::sync::atomic::AtomicBool;
        use std::time::Duration;

        struct Nap;

        impl Workload for Nap {
            fn name(&self) -> &'static str {
                "nap"
            }

            fn version(&self) -> u32 {
                1
            }

            fn command(&self) -> clap::Command {
                clap::Command::new("nap").about("Sleep, and time it.").arg(
                    clap::Arg::new("for")
                        .long("for")
                        .default_value("1ms")
                        .value_parser(clap::value_parser!(crate::DurationArg)),
                )
            }

            fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
                let length = matches.get_one::<crate::DurationArg>("for").expect("it has a default");
                let length =
                    length.within("--for", Duration::ZERO, Duration::from_secs(1)).map_err(WorkloadError::usage)?;
                Ok(Plan::Run(Box::new(NapRun { length })))
            }
        }

        impl ReadBack for Nap {}

        struct NapRun {
            length: Duration,
        }

        impl Planned for NapRun {
            fn data_dir(&self) -> &Path {
                Path::new(".")
            }

            fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
                context.steps.step_started("nap");
                let started = std::time::Instant::now();
                std::thread::sleep(self.length);
                context.steps.step_finished("nap");
                Ok(Box::new(Napped { seconds: started.elapsed().as_secs_f64() }))
            }
        }

        struct Napped {
            seconds: f64,
        }

        impl Measured for Napped {
            fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
                vec![ResultRecord {
                    workload: "nap".into(),
                    workload_version: 1,
                    test_id: "nap".into(),
                    parameters: serde_json::json!({}),
                    metric: "elapsed".into(),
                    unit: "s".into(),
                    direction: Direction::LowerIsBetter,
                    samples: vec![self.seconds],
                    flags: Vec::new(),
                }]
            }

            fn render(&self, _series: &SamplerSeries) -> String {
                format!("napped {:.3} s\n", self.seconds)
            }
        }

        static NAP: Nap = Nap;
        static WITH_NAP: Registry = Registry::new(&[&NAP]);

        #[test]
        fn is_four_methods_a_run_and_its_measurement() {
            let nap = WITH_NAP.find("nap").expect("one line registers it");
            let matches = nap.command().try_get_matches_from(["nap", "--for", "2ms"]).unwrap();
            let Plan::Run(planned) = nap.plan(&matches).unwrap() else { panic!("a nap runs") };
            let interrupt = AtomicBool::new(false);
            let fingerprint = Fingerprint::default();
            let context =
                RunContext { steps: &NoSteps, interrupt: &interrupt, fingerprint: &fingerprint, progress: &Silent };
            let measured = planned.run(&context).unwrap();
            let records = measured.records(&SamplerSeries::default());
            assert!(records[0].samples[0] >= 0.002, "{records:?}");
            assert!(measured.render(&SamplerSeries::default()).starts_with("napped"));
            assert_eq!(measured.ending(), Ending::Complete);
            // Its options are typed: a wrong form is refused by the command line, a bound by the plan.
            assert!(nap.command().try_get_matches_from(["nap", "--for", "soon"]).is_err());
            let long = nap.command().try_get_matches_from(["nap", "--for", "1h"]).unwrap();
            assert_eq!(nap.plan(&long).err().unwrap().kind(), ErrorKind::Usage);
            // In suites it works in --dir and stays out of the built-in ones until it writes a table.
            let place = nap.suite_side().place(Path::new("/suite"), &[]);
            assert_eq!(place, Some(("--dir", "/suite".to_string())));
            assert!(!WITH_NAP.builtin_suite("quick").unwrap().contains("[nap]"));
            // Its results read back by the defaults, as any workload's.
            assert_eq!(WITH_NAP.read_back("nap").title(), None);
            assert_eq!(nap.noise_margin(), WITH_NAP.read_back("a workload this build does not know").noise_margin());
        }
    }

    #[test]
    fn single_threaded_tests_are_known_by_their_knobs() {
        let knobs = ["threads", "queue_depth"];
        assert!(single_threaded_by_knobs(
            &serde_json::json!({"threads": 1, "queue_depth": 1, "block_bytes": 4096}),
            &knobs
        ));
        assert!(!single_threaded_by_knobs(&serde_json::json!({"threads": 1, "queue_depth": 32}), &knobs));
        assert!(!single_threaded_by_knobs(&serde_json::json!({"block_bytes": 4096}), &knobs));
        assert!(!single_threaded_by_knobs(&serde_json::json!({"users": 1}), &knobs), "another workload's knob");
    }

    #[test]
    fn options_are_found_in_both_spellings() {
        let args: Vec<String> = ["--dir=/data", "--size", "1g"].map(String::from).to_vec();
        assert!(has_option(&args, "--dir"));
        assert!(has_option(&args, "--size"));
        assert!(!has_option(&args, "--di"));
        assert!(!has_option(&args, "--sizes"));
    }
}
