//! `envbench exec` as the driver runs it: the command line, the plan, and what a finished run shows and stores.

use crate::{
    ExecError, ExecOptions, ExecOutcome, Execution, StepCommand, WORKLOAD, WORKLOAD_VERSION, parse_step,
    result_records, run_exec,
};
use clap::{Args, FromArgMatches};
use envbench_core::model::{ResultRecord, StoredRun, redact_secrets};
use envbench_core::sampler::SamplerSeries;
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, heading, plural};
use envbench_core::workload::{
    Ending, Envelope, Measured, Plan, Planned, ReadBack, RunContext, Workload, WorkloadError,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The arguments of `envbench exec`.
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// What is being timed, e.g. essbench-maxl; results of the same name and commands compare across environments.
    #[arg(long)]
    pub name: String,
    /// A step: NAME=COMMAND, run through the shell (repeatable, in order). A step ends when its shell exits; what it
    /// left running in the background is then stopped, as everything it started is when envbench ends.
    #[arg(long = "step", value_name = "NAME=COMMAND", required = true)]
    pub steps: Vec<String>,
    /// Repetitions of all steps.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// A command run once before the first repetition (like a step, it leaves nothing running: start a service the
    /// steps need before envbench).
    #[arg(long)]
    pub setup: Option<String>,
    /// A command run once after the last repetition (also after a failure).
    #[arg(long)]
    pub teardown: Option<String>,
    /// Carry on after a failing step (its time is not kept; the run completes with the failures counted and exit
    /// status 1).
    #[arg(long)]
    pub keep_going: bool,
    /// The data directory the steps work on (its storage is fingerprinted and sampled).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
}

/// The user's own timed steps.
pub struct ExecWorkload;

/// The registration of `exec`.
pub static EXEC: ExecWorkload = ExecWorkload;

impl From<ExecError> for WorkloadError {
    fn from(error: ExecError) -> WorkloadError {
        match error {
            ExecError::Spawn { .. } => WorkloadError::failure(redact_secrets(&error.to_string())),
            other => WorkloadError::usage(redact_secrets(&other.to_string())),
        }
    }
}

impl Workload for ExecWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        ExecArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Time your own steps (scripts against a real Essbase, SQL against a database) like a built-in workload.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = ExecArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        let options = ExecOptions {
            name: args.name.clone(),
            steps: args.steps.iter().map(|s| parse_step(s)).collect::<Result<Vec<StepCommand>, _>>()?,
            repeat: args.repeat,
            setup: args.setup.clone(),
            teardown: args.teardown.clone(),
            keep_going: args.keep_going,
        };
        options.validate()?;
        if !args.dir.is_dir() {
            return Err(WorkloadError::usage(format!(
                "--dir {}: not a directory; give the existing directory the steps work on",
                args.dir.display()
            )));
        }
        Ok(Plan::Run(Box::new(ExecRun { options, dir: args.dir })))
    }
}

impl ReadBack for ExecWorkload {
    fn title(&self) -> Option<&'static str> {
        Some("timed steps")
    }

    fn more_samples(&self) -> &'static str {
        "--repeat 5"
    }

    fn headline(&self, run: &StoredRun) -> String {
        let total: f64 = run
            .results
            .iter()
            .filter(|r| r.record.metric == "elapsed")
            .filter_map(|r| Summary::of(&r.record.samples).map(|s| s.median))
            .sum();
        format!("steps {total:.2} s (sum of medians)")
    }
}

struct ExecRun {
    options: ExecOptions,
    dir: PathBuf,
}

impl Planned for ExecRun {
    fn data_dir(&self) -> &Path {
        &self.dir
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let mut report = |execution: &Execution| {
            let round = if execution.repetition > 0 { format!(" r{}", execution.repetition) } else { String::new() };
            context.progress.line(&format!(
                "{}{round}: {:.3} s wall, {:.3} s user, {:.3} s system, {}",
                execution.step,
                execution.wall_seconds,
                execution.user_seconds,
                execution.system_seconds,
                execution.ending()
            ));
        };
        let outcome = run_exec(&self.options, context.steps, context.interrupt, &mut report)?;
        Ok(Box::new(ExecMeasured { options: self.options, outcome }))
    }
}

struct ExecMeasured {
    options: ExecOptions,
    outcome: ExecOutcome,
}

impl ExecMeasured {
    /// The options as they may be kept: every command with its secrets redacted.
    fn redacted_options(&self) -> ExecOptions {
        let redact = |command: &Option<String>| command.as_deref().map(redact_secrets);
        ExecOptions {
            steps: self
                .options
                .steps
                .iter()
                .map(|s| StepCommand { name: s.name.clone(), command: redact_secrets(&s.command) })
                .collect(),
            setup: redact(&self.options.setup),
            teardown: redact(&self.options.teardown),
            ..self.options.clone()
        }
    }
}

impl Measured for ExecMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        result_records(&self.options, &self.outcome)
    }

    fn attachment(&self) -> Option<Value> {
        Some(json!({ "options": self.redacted_options(), "outcome": &self.outcome }))
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        envelope.wrap([("exec", json!(&self.outcome))])
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(&self.options, &self.outcome)
    }

    fn ending(&self) -> Ending {
        if let Some(reason) = &self.outcome.failure {
            return Ending::Failed(reason.clone());
        }
        let failed = self.outcome.failed_executions();
        if failed.is_empty() {
            return Ending::Complete;
        }
        let names: Vec<String> = failed
            .iter()
            .map(|e| if e.repetition > 0 { format!("{} r{}", e.step, e.repetition) } else { e.step.clone() })
            .collect();
        Ending::CompleteWithFailures(format!(
            "{} execution{} failed: {}",
            failed.len(),
            plural(failed.len()),
            names.join(", ")
        ))
    }

    fn epilogue(&self) -> Vec<String> {
        match self.outcome.first_failure() {
            Some(failed) => std::iter::once(format!("last output of {} ({}):", failed.step, failed.ending()))
                .chain(failed.last_lines.iter().map(|line| format!("  | {line}")))
                .collect(),
            None => Vec::new(),
        }
    }
}

fn render(options: &ExecOptions, outcome: &ExecOutcome) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["STEP", "RUNS", "MEAN s", "MEDIAN s", "MIN s", "MAX s", "CV", "USER s", "SYSTEM s", "FAILED"],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right, Right],
    );
    for step in &options.steps {
        let executions: Vec<&Execution> = outcome.executions.iter().filter(|e| e.step == step.name).collect();
        let good: Vec<&&Execution> = executions.iter().filter(|e| e.succeeded()).collect();
        let wall: Vec<f64> = good.iter().map(|e| e.wall_seconds).collect();
        let mean = |f: fn(&Execution) -> f64| good.iter().map(|e| f(e)).sum::<f64>() / good.len().max(1) as f64;
        let failed = (executions.len() - good.len()).to_string();
        let row = match Summary::of(&wall) {
            Some(s) => vec![
                step.name.clone(),
                s.count.to_string(),
                format!("{:.3}", s.mean),
                format!("{:.3}", s.median),
                format!("{:.3}", s.min),
                format!("{:.3}", s.max),
                format!("{:.1}%{}", s.cv * 100.0, if s.is_noisy() { "!" } else { "" }),
                format!("{:.3}", mean(|e| e.user_seconds)),
                format!("{:.3}", mean(|e| e.system_seconds)),
                failed,
            ],
            None => {
                let mut row = vec![step.name.clone(), "0".into()];
                row.extend(std::iter::repeat_n("-".to_string(), 7));
                row.push(failed);
                row
            }
        };
        table.row(row);
    }
    let mut out = heading(&format!(
        "{}: {} step{}, {} repetition{}",
        options.name,
        options.steps.len(),
        plural(options.steps.len()),
        options.repeat,
        plural(options.repeat as usize)
    ));
    out.push('\n');
    out.push_str(&table.render());
    if let Some(teardown) = outcome.teardown.as_ref().filter(|t| !t.succeeded()) {
        out.push_str(&format!("The teardown failed ({}).\n", teardown.ending()));
    }
    if outcome.interrupted {
        out.push_str("Interrupted: only the executions above completed.\n");
    }
    out
}
