//! `envbench push`: copy runs to another store (a team's PostgreSQL store), or upload them to a results service
//! (`envbench serve --accept-uploads`) with a token.

use crate::cli::PushArgs;
use crate::commands::{location, store};
use crate::output::println;
use crate::usage;
use envbench_core::RunStatus;
use envbench_service::client::{Client, PushedToService};
use envbench_store::{ReadRuns, StoreLocation, push_runs};
use std::process::ExitCode;

/// True for a destination that is a results service rather than a store.
fn is_service(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

pub fn push(location: &StoreLocation, mut args: PushArgs) -> anyhow::Result<ExitCode> {
    let destination = match (&args.to, args.runs.first()) {
        (Some(to), Some(first)) if is_service(first) => {
            return Err(usage(format!("give one destination: --to {to}, or {first} first, not both")));
        }
        (Some(to), _) => to.clone(),
        (None, Some(first)) if is_service(first) => args.runs.remove(0),
        (None, _) => {
            return Err(usage(
                "give the destination: --to STORE (postgres://user@host/db or a SQLite file), or a results service's \
                 URL first: envbench push https://host/ --token-file FILE",
            ));
        }
    };
    if is_service(&destination) {
        return to_service(location, &destination, &args);
    }
    for (given, option) in [
        (args.token_file.is_some(), "--token-file"),
        (args.ca_cert.is_some(), "--ca-cert"),
        (args.dry_run, "--dry-run"),
        (args.insecure_http, "--insecure-http"),
    ] {
        if given {
            return Err(usage(format!("{option} is for pushing to a results service (https://host/), not to a store")));
        }
    }
    let destination = self::location(&destination, "--to")?;
    if &destination == location {
        return Err(usage("--to names the store being pushed from; give another store"));
    }
    if let StoreLocation::Sqlite(path) = &destination
        && path.is_dir()
    {
        return Err(usage(format!(
            "--to {}: a directory, not a store; give a SQLite file (e.g. {}/results.db) or a postgres:// URL",
            path.display(),
            path.display()
        )));
    }
    let from = store(location, false)?;
    let runs = chosen_runs(from.as_ref(), &args)?;
    let mut to = store(&destination, true)?;
    let report = push_runs(from.as_ref(), to.as_mut(), &runs)?;
    if args.json {
        let mut document = serde_json::to_value(&report)?;
        document["destination"] = destination.display().into();
        println(&serde_json::to_string_pretty(&document)?);
        return Ok(ExitCode::SUCCESS);
    }
    println(&format!(
        "pushed {} run{} to {}; {} already there{}",
        report.copied.len(),
        if report.copied.len() == 1 { "" } else { "s" },
        destination.display(),
        report.already_present.len(),
        if report.still_running.is_empty() {
            String::new()
        } else {
            format!(
                "; {} still running, not pushed (push them once they end; a run whose envbench process died is marked \
                 interrupted when its store is next opened)",
                report.still_running.len()
            )
        }
    ));
    Ok(ExitCode::SUCCESS)
}

/// The runs to push, oldest first: those the sides name (as `compare` takes them) that match the filters, or every
/// ended run that matches the filters when no side is given.
fn chosen_runs(from: &dyn ReadRuns, args: &PushArgs) -> anyhow::Result<Vec<String>> {
    let filter = super::selection::selected(&args.selection)?;
    let runs = super::selection::runs_of(from, &args.runs, &filter)?;
    Ok(runs
        .into_iter()
        .rev()
        .filter(|r| !args.runs.is_empty() || r.status != RunStatus::Running)
        .map(|r| r.uuid)
        .collect())
}

/// Upload runs to a results service.
fn to_service(location: &StoreLocation, url: &str, args: &PushArgs) -> anyhow::Result<ExitCode> {
    let from = store(location, false)?;
    let runs = chosen_runs(from.as_ref(), args)?;
    let binary = envbench_probe::current_binary();
    let identity = envbench_probe::binary_identity(binary)?;
    if args.dry_run {
        let binary_sha256 = envbench_probe::file_sha256(binary)?;
        let (body, unsent) = envbench_service::client::upload_of(from.as_ref(), &runs, &identity, &binary_sha256)?;
        println(&serde_json::to_string_pretty(&body)?);
        for (run, reason) in unsent {
            eprintln!("not sent: {run}: {reason}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(token_file) = &args.token_file else {
        return Err(usage(
            "an upload needs your token, read from a file: --token-file FILE (a file, so it never shows in ps or a \
             shell's history); the service's operator makes one with `envbench results token create --name NAME`",
        ));
    };
    let text = crate::files::read_small_file(token_file, "--token-file", 4096)?;
    let token = envbench_service::tokens::read_token(&text)
        .map_err(|e| usage(format!("--token-file {}: {e}", token_file.display())))?;
    let ca = args
        .ca_cert
        .as_deref()
        .map(|path| crate::files::read_small_file(path, "--ca-cert", crate::files::PEM_MAX_BYTES))
        .transpose()?;
    let client = Client::new(url, Some(token), ca.as_deref().map(str::as_bytes)).map_err(|e| usage(e.to_string()))?;
    match client.clear_text_risk() {
        Some(risk) if args.insecure_http => eprintln!("warning: {risk} (--insecure-http)"),
        Some(risk) => {
            return Err(usage(format!(
                "{risk}; not sent. Use the service's https:// address (envbench serve --tls-cert), or give \
                 --insecure-http to send it anyway"
            )));
        }
        None => {}
    }
    // Hashed whole once the token and the service's address are known to be good.
    let binary_sha256 = envbench_probe::file_sha256(binary)?;
    let pushed: PushedToService =
        envbench_service::client::push(from.as_ref(), &client, &runs, &identity, &binary_sha256)?;
    if args.json {
        println(&serde_json::to_string_pretty(&pushed.json(url))?);
    } else {
        println(&pushed.summary(url));
        for (run, reason) in &pushed.refused {
            println(&format!("  refused {run}: {reason}"));
        }
    }
    Ok(if pushed.refused.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
