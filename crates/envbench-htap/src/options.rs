//! The command line of `envbench htap` ([`HtapArgs`]): oltp's options, plus the analytic streams, and their bounds;
//! the values htap takes its own way (one count of users, a list of streams) typed as clap parses them.

use clap::Args;
use envbench_core::DurationArg;
use envbench_core::text::truncate;
use envbench_oltp::{OltpArgs, UsersPlan};
use std::time::Duration;

/// The most analytic streams of a step (each is a thread and a connection running the 22 queries).
pub const MAX_STREAMS: u32 = 64;
/// The most transactional users (oltp's bound).
pub const MAX_USERS: u32 = envbench_oltp::MAX_USERS;
/// The shortest and longest query timeout.
pub const MIN_QUERY_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_QUERY_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The arguments of `envbench htap`: oltp's (the target, warehouses, mode, ramp and duration of each step, ...) and
/// the analytic streams.
#[derive(Args, Debug)]
pub struct HtapArgs {
    #[command(flatten)]
    pub oltp: OltpArgs,
    /// Analytic streams of each step, a list such as 0,1,2,4: each stream runs the 22 CH-benCHmark queries in an
    /// order of its own, over and over, on its own connection. Step 0 is the transactions' baseline; each step
    /// with streams is also run without transactional users, the analytics' own baseline.
    #[arg(long, help_heading = "Run", default_value = "0,1,2", value_name = "LIST", value_parser = parse_streams)]
    pub analytic_users: StreamCounts,
    /// The longest an analytic query may run: the server cancels it there, and it is counted as a timeout.
    #[arg(long, help_heading = "Run", default_value = "10m", value_name = "DURATION")]
    pub query_timeout: DurationArg,
}

/// `--analytic-users` as parsed: the counts of streams of the steps, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamCounts(pub Vec<u32>);

/// `--analytic-users`: stream counts from 0 to [`MAX_STREAMS`], at most 16 of them, none twice.
pub fn parse_streams(text: &str) -> Result<StreamCounts, String> {
    let counts = text
        .split(',')
        .map(|part| match part.trim().parse::<u32>() {
            Ok(n) if n <= MAX_STREAMS => Ok(n),
            _ => Err(format!(
                "--analytic-users '{}': give stream counts from 0 to {MAX_STREAMS}, e.g. --analytic-users 0,1,2,4",
                truncate(text, 80)
            )),
        })
        .collect::<Result<Vec<u32>, _>>()?;
    envbench_core::units::check_settings("--analytic-users", &counts, 16)?;
    Ok(StreamCounts(counts))
}

/// `--users` as htap takes it (in place of oltp's list or auto): one count of transactional users from 1 to
/// [`MAX_USERS`], the users of every step, as oltp's plan of one step.
pub fn parse_users(text: &str) -> Result<UsersPlan, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_USERS).contains(&n) => Ok(UsersPlan::List(vec![n])),
        Ok(0) => Err("--users 0: htap measures what analytic streams and transactions cost each other, so it needs \
                      transactional users (each count of streams also runs alone, as the analytics' baseline); for \
                      analytic queries alone, run tpch"
            .into()),
        _ => Err(format!(
            "--users '{}': give one count of transactional users from 1 to {MAX_USERS} (htap's steps are its analytic \
             streams: --analytic-users 0,1,2)",
            truncate(text, 80)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_typed_while_clap_parses_them() {
        assert_eq!(parse_streams("0, 1,2"), Ok(StreamCounts(vec![0, 1, 2])));
        assert!(parse_streams("0,x").unwrap_err().starts_with("--analytic-users '0,x': give stream counts"));
        assert!(parse_streams("1000").unwrap_err().contains("from 0 to 64"));
        assert!(parse_streams("1,1").unwrap_err().contains("given twice"));
        assert_eq!(parse_users(" 8 "), Ok(UsersPlan::List(vec![8])));
        assert!(parse_users("0").unwrap_err().starts_with("--users 0: htap measures"));
        assert!(parse_users("1,2").unwrap_err().contains("one count of transactional users"));
        assert!(parse_users("auto").unwrap_err().contains("one count of transactional users"));
    }
}
