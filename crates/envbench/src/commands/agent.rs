//! `envbench agent`: one host's part of a fleet. It reads the fleet's description from the shared store, plans this
//! host's part and hands it to the one driver, then posts how it ended for the coordinator.

use crate::cli::AgentArgs;
use crate::driver::{self, CommonArgs};
use crate::registry::WORKLOADS;
use envbench_core::fleet::AgentPlace;
use envbench_fleet::board::{Failure, Finished, kind};
use envbench_fleet::{AgentRun, Board, FleetSpec};
use envbench_store::StoreLocation;
use std::process::ExitCode;

/// `envbench agent --fleet ID --name NAME`.
pub fn agent(store: &StoreLocation, args: AgentArgs) -> anyhow::Result<ExitCode> {
    // A fleet's id is the UUID its coordinator printed: anything else cannot be one, so no waiting for it to appear.
    if uuid::Uuid::parse_str(&args.fleet).is_err() {
        return Err(crate::usage(format!(
            "--fleet '{}' is not a fleet id; give the id `envbench fleet` printed (a UUID)",
            envbench_core::text::printable(&args.fleet)
        )));
    }
    envbench_core::text::check_name("--name", &args.name).map_err(crate::usage)?;
    let mut board = Board::open(store, &args.fleet, &args.name)?;
    let spec = envbench_fleet::join(&mut board)?;
    if !spec.agents.contains(&args.name) {
        return Err(crate::usage(format!(
            "fleet {} has no agent named {}; its agents are {}",
            args.fleet,
            args.name,
            spec.agents.join(", ")
        )));
    }
    let launched = take_part(store, &args, &spec, board);
    let mut board = Board::open(store, &args.fleet, &args.name)?;
    match launched {
        Ok(launched) => {
            board.post(kind::FINISHED, &Finished { run: launched.run })?;
            Ok(launched.exit)
        }
        Err(error) => {
            let _ = board.post(kind::FAILED, &Failure { error: crate::output::error_text(&error) });
            Err(error)
        }
    }
}

/// Plan this agent's part from the fleet's description and run it through the driver.
fn take_part(
    store: &StoreLocation,
    args: &AgentArgs,
    spec: &FleetSpec,
    board: Board,
) -> anyhow::Result<driver::Launched> {
    let workload = WORKLOADS
        .find(&spec.workload)
        .filter(|w| w.fleet().is_some())
        .ok_or_else(|| crate::usage(format!("this envbench cannot run {} on a fleet", spec.workload)))?;
    let side = workload.fleet().expect("filtered");
    let matches = driver::command(workload)
        .try_get_matches_from(std::iter::once(workload.name().to_string()).chain(spec.arguments.iter().cloned()))
        .map_err(|e| crate::usage(format!("the fleet's {} options: {e}", workload.name())))?;
    let common = driver::common_args(workload, &matches)?;
    let endpoint = driver::serve_metrics(&common)?;
    let place = AgentPlace {
        name: args.name.clone(),
        subdirectory: format!(
            "envbench-fleet-{}-{}",
            &args.fleet[..args.fleet.len().min(8)],
            args.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect::<String>()
        ),
    };
    let work = side.agent(&matches, &place)?;
    let mut request = driver::run_request(workload.name(), &CommonArgs { label: None, ..common.clone() })?;
    request.label = spec.label.as_ref().map(|label| format!("{label}/{}", args.name));
    request.tags = spec.tags.clone();
    request.tags.insert("fleet_agent".into(), args.name.clone());
    let planned = AgentRun { name: args.name.clone(), board, work };
    driver::run_planned(workload.name(), Box::new(planned), &common, request, store, endpoint)
}
