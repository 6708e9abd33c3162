//! One module per command; this one dispatches and holds what commands share.

mod compare;
mod cube;
mod disk;
mod exec;
mod ranread;
mod results;
mod run;
mod sysinfo;
mod tpch;

use crate::cli::{Cli, Command, RunLabels};
use crate::usage;
use envbench_core::model::{RunRequest, parse_tag};
use envbench_store::{ResultStore, StoreLocation, default_store_path, open_store};
use std::process::ExitCode;

/// Run the command the user asked for.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let store = StoreLocation::parse(
        &cli.store.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| default_store_path().display().to_string()),
    );
    dispatch(&store, cli.command)
}

/// Run one command against a store (the suite runner calls this for each of its runs, with its own store).
pub fn dispatch(store: &StoreLocation, command: Command) -> anyhow::Result<ExitCode> {
    let store = store.clone();
    match command {
        Command::Run(args) => run::run(&store, args),
        Command::Exec(args) => exec::run(&store, args),
        Command::Sysinfo(args) => sysinfo::run(&store, args),
        Command::Cube(args) => cube::run(&store, args),
        Command::Disk(args) => disk::run(&store, args),
        Command::Ranread(args) => ranread::run(&store, args),
        Command::Tpch(args) => tpch::run(&store, args),
        Command::Results(args) => results::run(&store, args),
        Command::Compare(args) => compare::compare(&store, args),
        Command::Report(args) => compare::report(&store, args),
        Command::Serve(args) => compare::serve(&store, args),
        Command::Push(args) => compare::push(&store, args),
    }
}

/// Open the store for writing (creating it) or reading.
pub fn store(location: &StoreLocation, create: bool) -> anyhow::Result<Box<dyn ResultStore>> {
    Ok(open_store(location, create)?)
}

/// Parse `--tag key=value` arguments, refusing duplicates.
pub fn parse_tags(tags: &[String]) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut parsed = std::collections::BTreeMap::new();
    for tag in tags {
        let (key, value) = parse_tag(tag).map_err(usage)?;
        if parsed.insert(key.clone(), value).is_some() {
            return Err(usage(format!("--tag {key} is given twice; give each tag once")));
        }
    }
    Ok(parsed)
}

/// The run request for a workload command: its labels and how it was invoked.
pub fn run_request(workload: &str, labels: &RunLabels) -> anyhow::Result<RunRequest> {
    if labels.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
        return Err(usage("--label is empty; give a name such as physical-p3605"));
    }
    Ok(RunRequest {
        workload: workload.to_string(),
        label: labels.label.clone(),
        tags: parse_tags(&labels.tags)?,
        command_line: labels.invoked_as.clone().unwrap_or_else(command_line),
        suite_id: labels.suite_id.clone(),
    })
}

/// The command line as the user typed it, quoted where needed.
pub fn command_line() -> String {
    quote_words(std::env::args())
}

/// Words joined into a command line a shell reads back the same: quoted where needed, and with the password of any
/// connection URL replaced by `***`, since command lines are stored with runs and shown in reports.
pub fn quote_words<S: AsRef<str>>(words: impl Iterator<Item = S>) -> String {
    words
        .map(|arg| {
            let arg = envbench_core::model::redact_url_password(arg.as_ref());
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "\"'$`\\".contains(c)) {
                format!("'{}'", arg.replace('\'', r"'\''"))
            } else {
                arg
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::quote_words;

    #[test]
    fn command_lines_are_quoted_for_the_shell_and_keep_no_password() {
        let words = ["ranread", "--db", "postgres://bob:s3cret@db:5432/test", "--label", "vm one", "it's"];
        assert_eq!(
            quote_words(words.iter()),
            r"ranread --db postgres://bob:***@db:5432/test --label 'vm one' 'it'\''s'"
        );
    }
}
