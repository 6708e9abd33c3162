//! One module per command that is not a workload (workloads run through [`crate::driver`]); this one dispatches.

mod agent;
mod compare;
mod export;
mod package;
mod push;

pub mod fleet;
mod results;
mod run;
mod scorecard;
mod selection;
mod service;
mod sides;
mod standings;
mod tokens;

use crate::cli::{Cli, Command};
use crate::registry::WORKLOADS;
use crate::usage;
use clap::FromArgMatches;
use envbench_store::{ResultStore, StoreLocation, default_store_path, open_store};
use envbench_verdict::VerdictError;
use std::process::ExitCode;

/// Run the command the user asked for.
pub fn run(matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    let store = matches.get_one::<StoreLocation>("store").cloned();
    dispatch(&store.unwrap_or_else(|| StoreLocation::Sqlite(default_store_path())), matches)
}

/// A store location the user gave, or a usage error naming where it was given.
pub fn location(text: &str, given_as: &str) -> anyhow::Result<StoreLocation> {
    StoreLocation::parse(text).map_err(|e| usage(format!("{given_as}: {e}")))
}

/// Run one command against a store (the suite runner calls this for each of its runs, with its own store).
pub fn dispatch(store: &StoreLocation, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    if let Some((name, sub)) = matches.subcommand()
        && let Some(workload) = WORKLOADS.find(name)
    {
        return crate::driver::run(workload, sub, store);
    }
    if let Some(("fleet", sub)) = matches.subcommand() {
        return fleet::fleet(store, sub);
    }
    let cli = Cli::from_arg_matches(matches).map_err(|e| usage(e.to_string()))?;
    match cli.command {
        Command::Run(args) => run::run(store, args),
        Command::Results(args) => results::run(store, args),
        Command::Compare(args) => compare::compare(store, args),
        Command::Report(args) => compare::report(store, args),
        Command::Serve(args) => compare::serve(store, args),
        Command::Push(args) => push::push(store, args),
        Command::Agent(args) => agent::agent(store, args),
        Command::Completions(args) => package::completions(args.shell),
        Command::Manpages(args) => package::manpages(&args.dir),
    }
}

/// Open the store for writing (creating it) or reading.
pub fn store(location: &StoreLocation, create: bool) -> anyhow::Result<Box<dyn ResultStore>> {
    Ok(open_store(location, create)?)
}

/// Side-resolution mistakes are the user's: exit 2.
pub(super) fn classify(error: VerdictError) -> anyhow::Error {
    if error.is_usage() { usage(error.to_string()) } else { error.into() }
}
