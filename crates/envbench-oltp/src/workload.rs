//! `envbench oltp`'s registration with the driver: the [`Workload`] (its command, how it plans, its fleet side) and
//! its place in the built-in suites. The command line is [`crate::options`], the plan [`crate::plan`], a planned run
//! [`crate::run`], its results [`crate::measured`] and [`crate::render`], and how stored runs read back
//! [`crate::readback`].

use crate::drop::drop_tables;
use crate::options::OltpArgs;
use crate::plan::{Planner, plan};
use crate::profile::{WORKLOAD, WORKLOAD_VERSION};
use clap::{Args, FromArgMatches};
use envbench_core::workload::{Plan, Workload, WorkloadError};
use envbench_sql::DatabaseUrl;
use std::path::Path;

/// The transactional workload.
pub struct OltpWorkload;

/// The registration of `oltp`.
pub static OLTP: OltpWorkload = OltpWorkload;

impl Workload for OltpWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        OltpArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Transactions from virtual users (TPC-C-derived order entry or pgbench's TPC-B-like), on SQLite, \
             PostgreSQL or MariaDB/MySQL: NOPM, per-transaction latency and the knee.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = OltpArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        if args.drop {
            return Ok(Plan::Answer(drop_tables(&args, None)?));
        }
        Ok(Plan::Run(Box::new(plan(args, Planner::Run)?)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::OltpFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for OltpWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
# One warehouse on embedded SQLite: commits synced to this storage, two users; the measured 20 s give five
# windows, five samples for compare.
warehouses = 1
users = "2"
ramp = "10s"
duration = "20s"
"#,
            ),
            "standard" => Some(
                r#"
warehouses = 4
users = "auto"
"#,
            ),
            "smoke" => Some(
                r#"
profile = "tpcb"
users = "1"
ramp = "0s"
duration = "1s"
"#,
            ),
            _ => None,
        }
    }

    /// Against a server the sampler should watch the server's data directory, which `oltp` finds itself.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        let server = args.iter().any(|a| DatabaseUrl::parse(a).is_ok());
        (!server && !envbench_core::workload::has_option(args, "--dir"))
            .then(|| ("--dir", suite_dir.display().to_string()))
    }
}
