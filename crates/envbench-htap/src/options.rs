//! The command line of `envbench htap` ([`HtapArgs`]): oltp's options, plus the analytic streams, and their bounds.

use clap::Args;
use envbench_core::DurationArg;
use envbench_core::workload::WorkloadError;
use envbench_oltp::OltpArgs;
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
    #[arg(long, help_heading = "Run", default_value = "0,1,2", value_name = "LIST")]
    pub analytic_users: String,
    /// The longest an analytic query may run: the server cancels it there, and it is counted as a timeout.
    #[arg(long, help_heading = "Run", default_value = "10m", value_name = "DURATION")]
    pub query_timeout: DurationArg,
}

/// Parse `--analytic-users`: stream counts from 0 to [`MAX_STREAMS`], none twice.
pub(crate) fn parse_streams(text: &str) -> Result<Vec<u32>, WorkloadError> {
    let counts = text
        .split(',')
        .map(|part| match part.trim().parse::<u32>() {
            Ok(n) if n <= MAX_STREAMS => Ok(n),
            _ => Err(WorkloadError::usage(format!(
                "--analytic-users '{}': give stream counts from 0 to {MAX_STREAMS}, e.g. --analytic-users 0,1,2,4",
                envbench_core::text::truncate(text, 80)
            ))),
        })
        .collect::<Result<Vec<u32>, _>>()?;
    envbench_core::units::check_settings("--analytic-users", &counts, 16).map_err(WorkloadError::usage)?;
    Ok(counts)
}
