//! `envbench fleet`: a workload on many hosts at once, merged into one result. It parses what it must, then hands its
//! planned run to the one driver; each host's part is `envbench agent` ([`super::agent`]).

use crate::cli::FleetArgs;
use crate::driver;
use crate::registry::WORKLOADS;
use clap::FromArgMatches;
use envbench_core::model::redact_secrets;
use envbench_core::workload::Workload;
use envbench_fleet::coordinator::STORE_VARIABLE;
use envbench_fleet::{CoordinatorRun, FleetSpec, SshOptions, Transport};
use envbench_store::StoreLocation;
use std::process::ExitCode;
use std::time::Duration;

/// The workloads that run on a fleet, for messages.
fn fleet_workloads() -> String {
    WORKLOADS.iter().filter(|w| w.fleet().is_some()).map(|w| w.name()).collect::<Vec<_>>().join(", ")
}

/// The largest host list read: a thousand hosts of a long name each.
const MAX_HOSTS_FILE_BYTES: u64 = 1 << 20;

/// The hosts of `--host` and `--hosts FILE`.
fn hosts(args: &FleetArgs) -> anyhow::Result<Vec<String>> {
    let mut hosts = args.hosts.clone();
    if let Some(path) = &args.hosts_file {
        let text = crate::files::read_small_file(path, "--hosts", MAX_HOSTS_FILE_BYTES)?;
        hosts.extend(
            text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).map(String::from),
        );
    }
    if let Some(bad) =
        hosts.iter().find(|h| h.starts_with('-') || h.chars().any(|c| c.is_whitespace() || c.is_control()))
    {
        return Err(crate::usage(format!("host '{bad}' is not a host name; give host, user@host or an ssh alias")));
    }
    Ok(hosts)
}

/// The transport the options describe, or a usage error that says what is missing.
fn transport(args: &FleetArgs, store: &StoreLocation) -> anyhow::Result<Transport> {
    let hosts = hosts(args)?;
    let count = |what: &str| -> anyhow::Result<usize> {
        match args.agents {
            Some(n) if (1..=1024).contains(&n) => Ok(n),
            Some(n) => Err(crate::usage(format!("--agents {n}: give from 1 to 1024 agents"))),
            None => Err(crate::usage(format!("--transport {what} needs --agents N, the number of agents"))),
        }
    };
    let transport = match args.transport.as_str() {
        "local" => Transport::Local { count: count("local")? },
        "external" => Transport::External { count: count("external")? },
        _ => {
            if hosts.is_empty() {
                return Err(crate::usage(
                    "a fleet over ssh needs its hosts: --host HOST (repeatable) or --hosts FILE; or use --transport \
                     local --agents N on this machine",
                ));
            }
            if args.agents.is_some() {
                return Err(crate::usage(
                    "--agents is for --transport local or external; over ssh, each --host is an agent",
                ));
            }
            if hosts.len() > envbench_fleet::MAX_SSH_AGENTS {
                return Err(crate::usage(format!(
                    "{} hosts are more than a fleet over ssh starts ({}, one ssh session each for the whole run); \
                     start the agents with your own tools (--transport external --agents N prints their command), \
                     or split the hosts into several fleets",
                    hosts.len(),
                    envbench_fleet::MAX_SSH_AGENTS
                )));
            }
            Transport::Ssh(SshOptions {
                hosts,
                config: args.ssh_config.clone(),
                options: args.ssh_options.clone(),
                remote_binary: args.remote_binary.clone(),
                copy_binary: args.copy_binary,
            })
        }
    };
    if !matches!(transport, Transport::Ssh(_)) && (!args.hosts.is_empty() || args.hosts_file.is_some()) {
        return Err(crate::usage(format!("--host and --hosts are for --transport ssh, not {}", args.transport)));
    }
    if !matches!(transport, Transport::Local { .. }) && matches!(store, StoreLocation::Sqlite(_)) {
        return Err(crate::usage(format!(
            "a fleet over {} needs a store every host reaches: --store postgres://user@host/database (a SQLite file \
             is for --transport local)",
            transport.name()
        )));
    }
    Ok(transport)
}

/// What agents are given as their store: a PostgreSQL URL as it is, a SQLite file by its absolute path.
fn store_for_agents(store: &StoreLocation) -> anyhow::Result<String> {
    Ok(match store {
        StoreLocation::Postgres(url) => url.with_secrets().to_string(),
        StoreLocation::Sqlite(path) => std::path::absolute(path)?.display().to_string(),
    })
}

/// `envbench fleet ...`.
pub fn fleet(store: &StoreLocation, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    let args = FleetArgs::from_arg_matches(matches).map_err(|e| crate::usage(e.to_string()))?;
    let Some((name, sub)) = matches.subcommand() else {
        return Err(crate::usage(format!("give the workload to run: one of {}", fleet_workloads())));
    };
    let workload: &dyn Workload =
        WORKLOADS.find(name).ok_or_else(|| crate::usage(format!("{name} cannot run on a fleet")))?;
    let side = workload
        .fleet()
        .ok_or_else(|| crate::usage(format!("{name} cannot run on a fleet; these can: {}", fleet_workloads())))?;
    let transport = transport(&args, store)?;
    let prepare_timeout = args.prepare_timeout.get();
    if prepare_timeout < Duration::from_secs(1) {
        return Err(crate::usage("--prepare-timeout must be at least 1s"));
    }
    let common = driver::common_args(workload, sub)?;
    // Bound before the coordinator plans (and loads) anything.
    let endpoint = driver::serve_metrics(&common)?;
    let mut request = driver::run_request(workload.name(), &common)?;
    let coordinator = side.coordinator(sub)?;
    let fleet = uuid::Uuid::new_v4().to_string();
    request.tags.insert("fleet".into(), fleet.clone());
    let arguments = workload_arguments(name);
    // The agents read the workload's options from the board: a password there would be stored in the shared store.
    if let Some(secret) = arguments.iter().find(|a| redact_secrets(a) != **a) {
        return Err(crate::usage(format!(
            "{}: a fleet keeps its workload's options in the shared store for its agents to read, so no password may \
             be among them. Leave the password out of the URL and set PGPASSWORD (MySQL: MYSQL_PWD) where you run \
             envbench fleet; the agents are given it as they are given the store",
            redact_secrets(secret)
        )));
    }
    let spec = FleetSpec {
        workload: workload.name().to_string(),
        arguments,
        agents: transport.agent_names(),
        transport: transport.name().to_string(),
        label: common.label.clone(),
        tags: request.tags.clone(),
    };
    let mut agent_environment = vec![(STORE_VARIABLE.to_string(), store_for_agents(store)?)];
    agent_environment.extend(
        envbench_sql::PASSWORD_VARIABLES
            .iter()
            .filter_map(|key| envbench_sql::password_from(key).map(|v| (key.to_string(), v))),
    );
    let planned = CoordinatorRun {
        fleet,
        spec,
        transport,
        store: store.clone(),
        agent_environment,
        keep_going: args.keep_going,
        prepare_timeout,
        throughput_unit: side.throughput_unit().to_string(),
        coordinator,
    };
    Ok(driver::run_planned(workload.name(), Box::new(planned), &common, request, store, endpoint)?.exit)
}

/// The words after the workload's name on this command line: what every agent parses as the workload's options.
fn workload_arguments(workload: &str) -> Vec<String> {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let mut command = crate::cli::command();
    command.build();
    words_after_subcommands(&command, &words, &["fleet", workload]).unwrap_or_default()
}

/// The words after the subcommands `path` (`fleet`, then the workload) of a command line (without the program's
/// name), found as clap reads it: an option that takes a value takes the next word (unless written `--name=value`),
/// so a value that happens to be a workload's name (`--host disk`) is not taken for the workload.
fn words_after_subcommands(root: &clap::Command, words: &[String], path: &[&str]) -> Option<Vec<String>> {
    let mut commands = vec![root];
    let mut index = 0;
    for name in path {
        loop {
            let word = words.get(index)?;
            index += 1;
            let takes_value = |arg: &clap::Arg| arg.get_action().takes_values() && !arg.is_positional();
            // Some(option) for an option word (None when unknown, or when its value is joined to it), None otherwise.
            let option = if let Some(long) = word.strip_prefix("--") {
                let joined = long.contains('=');
                Some(commands.iter().flat_map(|c| c.get_arguments()).find(|a| !joined && a.get_long() == Some(long)))
            } else if let Some(short) = word.strip_prefix('-').filter(|s| s.chars().count() == 1) {
                let short = short.chars().next();
                Some(commands.iter().flat_map(|c| c.get_arguments()).find(|a| a.get_short() == short))
            } else if word.starts_with('-') {
                Some(None)
            } else {
                None
            };
            match option {
                Some(Some(arg)) if takes_value(arg) => index += 1,
                Some(_) => {}
                None if word == name => break,
                None => return None,
            }
        }
        commands.push(commands.last()?.find_subcommand(name)?);
    }
    Some(words[index..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(line: &str) -> Option<Vec<String>> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let mut command = crate::cli::command();
        command.build();
        words_after_subcommands(&command, &words, &["fleet", "disk"])
    }

    #[test]
    fn the_workloads_options_are_found_as_clap_reads_the_line() {
        let expected = Some(vec!["--size".to_string(), "1g".to_string()]);
        assert_eq!(after("fleet --transport local --agents 2 disk --size 1g"), expected);
        // A fleet option's value that is a workload's name is the option's, not the workload.
        assert_eq!(after("--store /tmp/s.db fleet --host disk --host db2 disk --size 1g"), expected);
        assert_eq!(after("fleet --host=disk --copy-binary disk --size 1g"), expected);
        assert_eq!(after("fleet --transport local --agents 2 ranread"), None);
    }
}
