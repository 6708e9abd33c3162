//! `envbench htap`'s registration with the driver: the [`Workload`] (its command, oltp's with the analytic streams
//! and htap's own help, how it plans, its fleet side) and its place in the suites (none). The command line is
//! [`crate::options`], a planned run [`crate::run`], what it keeps [`crate::document`], its results
//! [`crate::measured`] and [`crate::render`], and how stored runs read back [`crate::readback`].

use crate::ch::CH_TABLES;
use crate::options::{HtapArgs, parse_users};
use crate::run::{check_profile, plan};
use crate::source::{WORKLOAD, WORKLOAD_VERSION};
use clap::{Args, FromArgMatches};
use envbench_core::workload::{Plan, Workload, WorkloadError};
use envbench_oltp::Planner;

/// The mixed workload.
pub struct HtapWorkload;

/// The registration of `htap`.
pub static HTAP: HtapWorkload = HtapWorkload;

impl Workload for HtapWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        // oltp's options as htap takes them: a server target (without --target, oltp's default, SQLite, is refused
        // with the reason), one count of users, and the options htap refuses (another profile, pgbench's cross-check,
        // SQLite's directory, count-based steps, the knee search's) out of its help; given anyway, each is refused
        // with the reason.
        // Each option is changed where it stands (`mut_arg` would move it to the end, and the help's headings with
        // it): htap's help lists its headings in oltp's order.
        HtapArgs::augment_args(clap::Command::new(WORKLOAD))
            .about(
                "Transactions and analytics on the same live tables (CH-benCHmark-style), on PostgreSQL or \
                 MariaDB/MySQL: what each analytic stream costs the transactions, and how much slower the analytics \
                 run beside them.",
            )
            .mut_args(|arg| match arg.get_id().as_str() {
                "target" => arg.hide_default_value(true).help(
                    "Where the transactions and the analytic queries run (required): postgres://user@host/db or \
                     mysql://user@host/db (MariaDB or MySQL)",
                ),
                "users" => {
                    arg.help("Transactional users of every step (one count, 1 or more)").value_parser(parse_users)
                }
                "warehouses" => arg.help("Warehouses of TPC-C's tables, which the analytic queries read too"),
                "mode" => arg.help(
                    "How transactions reach the database: client (every statement from the client, one round trip \
                     each: what an application sees) or procedures (one call of a stored routine per transaction, as \
                     HammerDB's TPROC-C runs them)",
                ),
                "loaders" => {
                    arg.help("Parallel loaders of TPC-C's tables (default: one per CPU, at most one per warehouse)")
                }
                "drop" => arg.help(
                    "Remove everything envbench made for htap in the target (TPC-C's tables, the CH-benCHmark's, \
                     their marker and the stored routines) and nothing else, then end; no run is stored",
                ),
                "profile" | "dir" | "cross_check" | "transactions" | "max_users" | "target_latency" | "slo"
                | "skew" => arg.hide(true),
                _ => arg,
            })
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = HtapArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        check_profile(&args)?;
        // oltp's knee search, which htap's steps (counts of analytic streams) have no use for.
        for (id, option) in [("target_latency", "--target-latency"), ("max_users", "--max-users")] {
            if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
                return Err(WorkloadError::usage(format!(
                    "{option} is oltp's, for its search of the user count's knee; htap runs one count of users \
                     (--users N) beside each count of analytic streams (--analytic-users 0,1,2): leave it out"
                )));
            }
        }
        if args.oltp.drop {
            return Ok(Plan::Answer(envbench_oltp::drop_tables(&args.oltp, Some(&CH_TABLES))?));
        }
        Ok(Plan::Run(Box::new(plan(args, Planner::Run)?)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::HtapFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

/// htap needs a database server, which the built-in suites do not give: it is in none of them.
impl envbench_core::workload::SuiteSide for HtapWorkload {}

#[cfg(test)]
mod tests {
    use super::*;

    fn headings(mut command: clap::Command) -> Vec<String> {
        let help = command.render_help().to_string();
        help.lines().filter(|l| !l.starts_with(' ') && l.ends_with(':')).map(str::to_string).collect()
    }

    /// Issue #70, item 8: htap's help came with its headings in another order than oltp's.
    #[test]
    fn the_help_has_oltps_headings_in_oltps_order_and_none_of_the_refused_options() {
        let oltp = headings(envbench_oltp::OLTP.command());
        assert!(oltp.iter().any(|h| h == "Connection:") && oltp.iter().any(|h| h == "Open loop:"), "{oltp:?}");
        assert_eq!(headings(HTAP.command()), oltp);
        let command = HTAP.command();
        for refused in ["profile", "dir", "cross_check", "transactions", "max_users", "target_latency", "slo", "skew"] {
            let arg = command.get_arguments().find(|a| a.get_id() == refused).expect("an oltp option");
            assert!(arg.is_hide_set(), "--{refused} is out of htap's help");
        }
    }
}
