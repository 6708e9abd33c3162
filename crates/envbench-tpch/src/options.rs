//! The command line of `envbench tpch` ([`TpchArgs`]), the bounds its values are held to, and the value parsers that
//! turn what the user wrote into typed values while clap parses it, so a wrong scale factor, target, timeout or
//! thread list is refused before anything runs, with what was wrong and what to give instead.

use crate::targets::TargetSpec;
use clap::Args;
use envbench_core::DurationArg;
use envbench_core::units::OwnMessage;
use std::path::PathBuf;
use std::time::Duration;

/// The directory under `--dir` that holds the generated data, one `sf<SF>` directory per scale factor.
pub const DATA_DIR: &str = "envbench-tpch";
/// The most virtual users (each is a thread and a connection) and query sets a run takes.
pub const MAX_USERS: usize = 1024;
pub const MAX_SETS: usize = 1000;
/// The shortest and longest `--query-timeout`: below a second a timeout measures how fast a query is cancelled
/// rather than the query, and a day is longer than any query of a scale factor a run can finish.
pub const QUERY_TIMEOUT_BOUNDS: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(24 * 3600));

/// The arguments of `envbench tpch`.
#[derive(Args, Debug)]
pub struct TpchArgs {
    /// Scale factor: 1 is about 1 GB of raw data (6 million lineitem rows); any positive decimal such as 0.1.
    #[arg(
        long,
        help_heading = "Load",
        visible_aliases = ["scale", "scale-factor"],
        default_value_t = 1.0,
        value_parser = parse_scale_factor
    )]
    pub sf: f64,
    /// Directory for the generated Parquet data (DIR/envbench-tpch/sf<SF>, kept and reused); with a server target,
    /// the directory whose storage the sampler watches (default: the server's data directory when it is on this
    /// machine).
    #[arg(long, help_heading = "Connection")]
    pub dir: Option<PathBuf>,
    /// Where the queries run: datafusion (embedded, the default), postgres://user@host:port/database or
    /// mysql://user@host:port/database (MySQL or MariaDB; also mariadb://).
    #[arg(
        long,
        help_heading = "Connection",
        default_value = "datafusion",
        value_name = "TARGET",
        value_parser = TARGET
    )]
    pub target: TargetSpec,
    /// Server schema for the tables (created when missing; default: the connection's current schema, the first of its
    /// search_path that exists, or on MySQL the URL's database, as a MySQL schema is a database); every table the run
    /// uses is named in it, and no other. Ignored by the datafusion target, so one suite matrix can sweep both.
    #[arg(long, help_heading = "Connection")]
    pub schema: Option<String>,
    /// Virtual users (concurrent query streams) of the throughput test (default: the TPC-H minimum for the SF).
    #[arg(long, help_heading = "Run")]
    pub users: Option<usize>,
    /// Query sets each virtual user runs in the throughput test.
    #[arg(long, help_heading = "Run", default_value_t = 1)]
    pub sets: usize,
    /// Use the specification's validation parameters (and, at SF 1, check every answer against the reference).
    #[arg(long, help_heading = "Run")]
    pub validate: bool,
    /// Seed of the substitution parameters and the query orders beyond the specification's table.
    #[arg(long, help_heading = "Load", default_value_t = 1)]
    pub seed: u64,
    /// Give up on a query after this long, e.g. 10m; it is counted as timed out.
    #[arg(long, help_heading = "Run", value_name = "DURATION", value_parser = parse_query_timeout)]
    pub query_timeout: Option<Duration>,
    /// Run only the power test (one stream).
    #[arg(long, help_heading = "Run", conflicts_with = "throughput_only")]
    pub power_only: bool,
    /// Run only the throughput test (the virtual users).
    #[arg(long, help_heading = "Run")]
    pub throughput_only: bool,
    /// Regenerate the data (DataFusion) or reload the tables (servers) even when a matching set exists.
    #[arg(long, help_heading = "Load")]
    pub fresh: bool,
    /// Drop the OS page cache before each power-test query and before the throughput test (needs root).
    #[arg(long, help_heading = "Run")]
    pub cold: bool,
    /// Threads for generation, DataFusion partitions and server load jobs (default: every CPU); a list such as
    /// 1,2,4,8 runs DataFusion's power test at each count, for the speedup curve and parallel efficiency.
    #[arg(long, help_heading = "Run", value_name = "N[,N...]", value_parser = parse_threads)]
    pub threads: Option<ThreadCounts>,
}

/// `--threads`: one count, or several for a sweep of the power test; each from 1 to [`MAX_USERS`], none twice.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadCounts(pub Vec<usize>);

/// `--sf`: a positive decimal tpchgen can generate.
pub fn parse_scale_factor(text: &str) -> Result<f64, String> {
    let scale_factor: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("--sf {text}: not a number; give a positive number such as 0.01, 1 or 10"))?;
    crate::scale::check_scale_factor(scale_factor).map_err(|e| format!("--sf {scale_factor}: {e}"))?;
    Ok(scale_factor)
}

/// `--target` as clap parses it, refused in [`parse_target`]'s words alone (clap's own would repeat a password).
const TARGET: OwnMessage<TargetSpec> =
    OwnMessage { parse: parse_target, what: "--target; give datafusion or a server URL" };

/// `--target`: `datafusion` or a server URL (see [`TargetSpec::parse`]); the error hides a URL's password.
pub fn parse_target(text: &str) -> Result<TargetSpec, String> {
    TargetSpec::parse(text).map_err(|e| e.to_string())
}

/// `--query-timeout`: a duration such as 90s or 10m, within [`QUERY_TIMEOUT_BOUNDS`].
pub fn parse_query_timeout(text: &str) -> Result<Duration, String> {
    let timeout: DurationArg = text.parse().map_err(|e| format!("--query-timeout {text}: {e}"))?;
    let (min, max) = QUERY_TIMEOUT_BOUNDS;
    timeout.within("--query-timeout", min, max)
}

/// `--threads`: a count or a comma-separated list of counts.
pub fn parse_threads(text: &str) -> Result<ThreadCounts, String> {
    envbench_core::workload::count_list("threads", Some(text), MAX_USERS).map(ThreadCounts).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    #[test]
    fn options_are_typed_while_clap_parses_them() {
        assert_eq!(parse_scale_factor("0.01"), Ok(0.01));
        assert_eq!(parse_scale_factor(" 10 "), Ok(10.0));
        assert!(parse_scale_factor("0").unwrap_err().starts_with("--sf 0: scale factor 0 is not usable"));
        assert!(parse_scale_factor("-1").unwrap_err().starts_with("--sf -1: "));
        assert!(parse_scale_factor("big").unwrap_err().contains("give a positive number"));

        assert_eq!(parse_target("datafusion"), Ok(TargetSpec::DataFusion));
        assert!(matches!(parse_target("mariadb://root@127.0.0.1/test"), Ok(TargetSpec::Server(_))));
        assert!(parse_target("oracle://scott@127.0.0.1/test").unwrap_err().contains("give datafusion"));

        assert_eq!(parse_query_timeout("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_query_timeout("0s").unwrap_err(), "--query-timeout 0s: give from 1s to 24h");
        assert!(parse_query_timeout("soon").unwrap_err().starts_with("--query-timeout soon: "));

        assert_eq!(parse_threads("4"), Ok(ThreadCounts(vec![4])));
        assert_eq!(parse_threads("1,2,4"), Ok(ThreadCounts(vec![1, 2, 4])));
        assert!(parse_threads("0").unwrap_err().contains("--threads '0'"));
        assert!(parse_threads("2,2").unwrap_err().contains("--threads: 2 is given twice"));
    }

    #[test]
    fn a_refused_target_keeps_its_password_off_the_screen() {
        let error = envbench_core::workload::parse_args::<TpchArgs>("tpch", &["--target", "oracle://scott:tiger@db/x"])
            .unwrap_err();
        let message = error.to_string();
        assert_eq!(error.kind(), ErrorKind::ValueValidation);
        assert!(message.contains("give datafusion") && message.contains("scott:***@db"), "{message}");
        assert!(!message.contains("tiger"), "{message}");
    }
}
