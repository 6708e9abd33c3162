//! `envbench exec`: the user's own steps, timed and stored like a built-in workload.

use crate::cli::ExecArgs;
use crate::commands::run_request;
use crate::output::{Align, Table, heading, progress_line};
use crate::session::{Ending, RunSession};
use crate::usage;
use envbench_core::stats::Summary;
use envbench_exec::{ExecOptions, ExecOutcome, Execution, parse_step, result_records, run_exec};
use envbench_store::StoreLocation;
use std::process::ExitCode;

pub fn run(location: &StoreLocation, args: ExecArgs) -> anyhow::Result<ExitCode> {
    let request = run_request("exec", &args.labels)?;
    let options = ExecOptions {
        name: args.name.clone(),
        steps: args.steps.iter().map(|s| parse_step(s).map_err(|e| usage(e.to_string()))).collect::<Result<_, _>>()?,
        repeat: args.repeat,
        setup: args.setup.clone(),
        teardown: args.teardown.clone(),
        keep_going: args.keep_going,
    };
    options.validate().map_err(|e| usage(e.to_string()))?;
    let mut session = RunSession::start(location, &request, &args.dir, args.sampling.interval()?)?;
    let interrupt = session.interrupt();
    let quiet = args.json;
    let mut report = |execution: &Execution| {
        if !quiet {
            let round = if execution.repetition > 0 { format!(" r{}", execution.repetition) } else { String::new() };
            progress_line(&format!(
                "{}{round}: {:.3} s wall, {:.3} s user, {:.3} s system, {}",
                execution.step,
                execution.wall_seconds,
                execution.user_seconds,
                execution.system_seconds,
                execution.ending()
            ));
        }
    };
    let outcome = match run_exec(&options, session.steps(), &interrupt, &mut report) {
        Ok(outcome) => outcome,
        Err(error) => {
            session.finish(&[], Ending::Failed(error.to_string()))?;
            return Err(error.into());
        }
    };
    let series = session.stop_sampling().clone();
    let records = result_records(&options, &outcome);
    if args.json {
        let document = serde_json::json!({ "run": session.uuid(), "exec": &outcome, "sampler": series });
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        print!("{}", render(&options, &outcome));
    }
    session.attach("exec", &serde_json::json!({ "options": &options, "outcome": &outcome }))?;
    let ending = match &outcome.failure {
        Some(reason) => Ending::Failed(reason.clone()),
        None => Ending::Complete,
    };
    let status = session.finish(&records, ending)?;
    if let Some(reason) = &outcome.failure {
        if let Some(failed) = outcome.executions.iter().chain(outcome.setup.iter()).find(|e| !e.succeeded()) {
            eprintln!("last output of {}:", failed.step);
            for line in &failed.last_lines {
                eprintln!("  | {line}");
            }
        }
        return Err(anyhow::anyhow!("{reason}"));
    }
    Ok(if status == envbench_core::RunStatus::Complete { ExitCode::SUCCESS } else { ExitCode::from(130) })
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
        let failed = executions.len() - good.len();
        match Summary::of(&wall) {
            Some(s) => table.row(vec![
                step.name.clone(),
                s.count.to_string(),
                format!("{:.3}", s.mean),
                format!("{:.3}", s.median),
                format!("{:.3}", s.min),
                format!("{:.3}", s.max),
                format!("{:.1}%{}", s.cv * 100.0, if s.is_noisy() { "!" } else { "" }),
                format!("{:.3}", mean(|e| e.user_seconds)),
                format!("{:.3}", mean(|e| e.system_seconds)),
                failed.to_string(),
            ]),
            None => table.row(vec![
                step.name.clone(),
                "0".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                failed.to_string(),
            ]),
        }
    }
    let mut out = heading(&format!(
        "{}: {} step{}, {} repetition{}",
        options.name,
        options.steps.len(),
        if options.steps.len() == 1 { "" } else { "s" },
        options.repeat,
        if options.repeat == 1 { "" } else { "s" }
    ));
    out.push('\n');
    out.push_str(&table.render());
    if outcome.interrupted {
        out.push_str("Interrupted: only the executions above completed.\n");
    }
    out
}
