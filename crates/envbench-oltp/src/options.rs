//! The command line of `envbench oltp` ([`OltpArgs`]), its values typed as clap parses them (so a wrong one is
//! refused before anything runs), and the bounds they are checked against.

use crate::arrivals::{Arrivals, RatePlan};
use crate::mix::Mix;
use crate::profile::Profile;
use crate::random::Zipf;
use crate::routines::Mode;
use crate::slo::Slo;
use crate::sweep::UsersPlan;
use clap::Args;
use envbench_core::DurationArg;
use envbench_core::units::OwnMessage;
use envbench_sql::{DatabaseUrl, Isolation};
use std::path::PathBuf;
use std::time::Duration;

/// The most warehouses (or pgbench scale) envbench loads.
pub const MAX_SCALE: i64 = 10_000;
/// The most virtual users of a step (each is a thread and a connection).
pub const MAX_USERS: u32 = 1024;
/// The most clients a virtual user drives (each is a terminal with keying and think times, sharing the user's
/// connection: a few hundred keep one connection busy).
pub const MAX_CLIENTS_PER_USER: u32 = 1000;
/// The most parallel loaders.
pub const MAX_LOADERS: usize = 256;
/// The shortest measured time of a step: a shorter one may end before a single transaction does.
pub const MIN_DURATION: Duration = Duration::from_secs(1);
/// The longest ramp-up and measured time of a step.
pub const MAX_STEP_TIME: Duration = Duration::from_secs(24 * 3600);
/// The most transactions per user of a count-based step.
pub const MAX_TRANSACTIONS_PER_USER: u64 = 1_000_000_000;
/// The most tries of a transaction that fails on a conflict.
pub const MAX_TRIES: u32 = 1000;

/// The arguments of `envbench oltp`.
#[derive(Args, Debug)]
pub struct OltpArgs {
    /// Where the transactions run: sqlite (embedded, a file in --dir; the default), postgres://user@host/db or
    /// mysql://user@host/db (MariaDB or MySQL).
    #[arg(long, help_heading = "Connection", default_value = "sqlite", value_parser = TARGET)]
    pub target: Target,
    /// Directory of the SQLite database envbench-oltp.sqlite (with --target sqlite).
    #[arg(long, help_heading = "Connection", default_value = ".")]
    pub dir: PathBuf,
    /// tpcc (TPC-C-derived order entry) or tpcb (pgbench's TPC-B-like transaction).
    #[arg(long, help_heading = "Load", default_value = "tpcc", value_parser = parse_profile)]
    pub profile: Profile,
    /// Warehouses (tpcc) or pgbench's scale factor (tpcb).
    #[arg(long, help_heading = "Load", visible_alias = "scale", default_value = "1", value_parser = parse_scale)]
    pub warehouses: i64,
    /// Virtual users: a count, a list of steps such as 1,2,4,8, or auto (doubling until the knee).
    #[arg(long, help_heading = "Run", default_value = "4", value_parser = parse_users)]
    pub users: UsersPlan,
    /// Highest user count of --users auto.
    #[arg(long, help_heading = "Run", default_value_t = 64, value_parser = parse_max_users)]
    pub max_users: u32,
    /// Ramp-up of each step before measuring, e.g. 1m.
    #[arg(long, help_heading = "Run", default_value = "1m", value_name = "DURATION")]
    pub ramp: DurationArg,
    /// Measured time of each step, e.g. 5m.
    #[arg(long, help_heading = "Run", default_value = "5m", value_name = "DURATION")]
    pub duration: DurationArg,
    /// New-Order p95 (tpcb: the transaction's p95) the knee must stay within.
    #[arg(long, help_heading = "Run", default_value = "100ms", value_name = "DURATION")]
    pub target_latency: DurationArg,
    /// The share of each TPC-C transaction in percent, summing to 100 (default TPC-C's minimum mix,
    /// new-order=45,payment=43,order-status=4,delivery=4,stock-level=4); a transaction left out is not run.
    #[arg(long, help_heading = "Run", value_name = "NAME=PERCENT,...", value_parser = Mix::parse)]
    pub mix: Option<Mix>,
    /// Open loop: transactions arrive at this rate whatever the database does, as an application's requests do, and
    /// each one's response time runs from when it was meant to start (no coordinated omission): 200 (per second in
    /// all, shared by the users), 20/user, or auto (the highest rate whose response times stay within --slo, found
    /// step by step after a closed-loop step at the same users). Without it, each user sends its next transaction
    /// when its last one ends (a closed loop, as HammerDB and pgbench do by default).
    #[arg(long, help_heading = "Open loop", value_name = "RATE", value_parser = RatePlan::parse)]
    pub rate: Option<RatePlan>,
    /// How arrivals are spaced with --rate: poisson (independent arrivals, the default, as pgbench --rate draws them)
    /// or fixed (evenly spaced).
    #[arg(long, help_heading = "Open loop", value_name = "SPACING", value_parser = Arrivals::parse)]
    pub arrivals: Option<Arrivals>,
    /// With --rate: skip a transaction that cannot start within this of its intended time, and count it (pgbench's
    /// --latency-limit); the transactions whose response time passes it are counted too.
    #[arg(long, help_heading = "Open loop", value_name = "DURATION")]
    pub latency_limit: Option<DurationArg>,
    /// The service level open-loop steps are judged by, each transaction's response-time percentile within a limit:
    /// e.g. new-order:p95<=20ms or new-order:p99<=10ms,payment:p99<=10ms (default with --rate auto: TPC-C's limits,
    /// the 90th percentile of New-Order within 5 s and so on).
    #[arg(long, help_heading = "Open loop", value_name = "KIND:pNN<=DURATION,...", value_parser = Slo::parse)]
    pub slo: Option<Slo>,
    /// The isolation level of the users' sessions: read-committed, repeatable-read or serializable (PostgreSQL and
    /// MariaDB/MySQL; default: the server's own, read committed on PostgreSQL, repeatable read on MariaDB).
    #[arg(long, help_heading = "Run", value_name = "LEVEL", value_parser = Isolation::parse)]
    pub isolation: Option<Isolation>,
    /// How many times a transaction that fails on a conflict (serialization failure, deadlock, lock wait timeout)
    /// runs at most before it counts as failed (1: never retried). Retries and failures are counted by kind of error.
    #[arg(long, help_heading = "Run", value_name = "N", default_value_t = crate::users::DEFAULT_MAX_TRIES,
          value_parser = parse_max_tries)]
    pub max_tries: u32,
    /// tpcb: draw the accounts with a Zipfian skew of exponent THETA (pgbench's random_zipfian), e.g. zipf:0.99 or
    /// zipf:1.5, so a few hot rows take most updates (default: uniformly, as pgbench's built-in script does).
    #[arg(long, help_heading = "Run", value_name = "zipf:THETA", value_parser = parse_skew)]
    pub skew: Option<f64>,
    /// The seed of the transactions' inputs and of an open loop's arrivals: a run with the same seed replays the same
    /// sequence (default: a new seed each run, kept with its results, so repeats are independent samples).
    #[arg(long, help_heading = "Run", value_name = "N")]
    pub seed: Option<u64>,
    /// The specification's keying and think times between transactions (off: HammerDB's no-wait users).
    #[arg(long, help_heading = "HammerDB compatibility")]
    pub keying_thinking: bool,
    /// Each transaction works in a warehouse drawn from all of them, not in its user's home warehouse (HammerDB's
    /// "use all warehouses"): the working set is the whole database, for storage-bound runs.
    #[arg(long, help_heading = "HammerDB compatibility")]
    pub all_warehouses: bool,
    /// Clients each virtual user drives, with --keying-thinking (HammerDB's asynchronous scaling): every client is a
    /// terminal with its own home warehouse and keying and think times, and a user's clients share its one connection
    /// as an application's sessions share a pool, so --users 10 --clients-per-user 100 runs 1,000 terminals over 10
    /// connections. Response times include the wait for the connection, which is also shown on its own.
    #[arg(long, help_heading = "HammerDB compatibility", default_value_t = 1, value_name = "K",
          value_parser = parse_clients_per_user)]
    pub clients_per_user: u32,
    /// A count-based step instead of a timed one (HammerDB's "total transactions per user"): each user runs N
    /// transactions and the step ends when all have; --ramp and --duration do not apply (24 h at most).
    #[arg(long, help_heading = "HammerDB compatibility", value_name = "N", value_parser = parse_transactions)]
    pub transactions: Option<u64>,
    /// Split tpcc_order_line into range partitions by warehouse (one per warehouse, at most 10), as HammerDB's
    /// "partition order line" does: PostgreSQL partition tables, MariaDB/MySQL partitions. A load of the other layout
    /// is rebuilt.
    #[arg(long, help_heading = "Load")]
    pub partition: bool,
    /// Rebuild the tables even when a matching load exists.
    #[arg(long, help_heading = "Load")]
    pub fresh: bool,
    /// Schema (PostgreSQL) or database (MariaDB/MySQL) of the tables, which must exist (default: the connection's
    /// current schema, or the URL's database). envbench touches nothing outside it.
    #[arg(long, help_heading = "Connection")]
    pub schema: Option<String>,
    /// Run pgbench against the same server afterwards (needs --profile tpcb and a PostgreSQL target).
    #[arg(long, help_heading = "Run", value_name = "TOOL", value_parser = parse_cross_check)]
    pub cross_check: Option<CrossCheck>,
    /// Parallel loaders (default: one per CPU, at most one per warehouse; SQLite loads with one).
    #[arg(long, help_heading = "Load", value_parser = parse_loaders)]
    pub loaders: Option<usize>,
    /// How transactions reach the database: client (every statement from the client, one round trip each: what an
    /// application sees) or procedures (one call of a stored routine per transaction, as HammerDB's TPROC-C runs
    /// them: the engine's capacity, the figure to set beside HammerDB's NOPM). Procedures need --profile tpcc on
    /// PostgreSQL or MariaDB/MySQL.
    #[arg(long, help_heading = "Run", default_value = "client", value_name = "MODE", value_parser = parse_mode)]
    pub mode: Mode,
    /// Skip the settling before each step: VACUUM ANALYZE of envbench's tables and a CHECKPOINT (PostgreSQL), a flush
    /// of envbench's tables (MariaDB/MySQL), a WAL checkpoint (SQLite), as HammerDB does before its timed run.
    #[arg(long, help_heading = "Run")]
    pub no_vacuum: bool,
    /// Remove everything envbench made for --profile in the target (its tables, their marker and, for tpcc, its
    /// stored routines) and nothing else, then end; no run is stored.
    #[arg(long, help_heading = "Load", conflicts_with_all = DROP_CONFLICTS)]
    pub drop: bool,
}

/// What `--drop` refuses beside it: every option of a run, which a drop would ignore without a word.
const DROP_CONFLICTS: [&str; 25] = [
    "fresh",
    "warehouses",
    "users",
    "max_users",
    "ramp",
    "duration",
    "target_latency",
    "mix",
    "rate",
    "arrivals",
    "latency_limit",
    "slo",
    "isolation",
    "max_tries",
    "skew",
    "seed",
    "keying_thinking",
    "all_warehouses",
    "clients_per_user",
    "transactions",
    "partition",
    "cross_check",
    "loaders",
    "mode",
    "no_vacuum",
];

/// Where the transactions run (`--target`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Embedded SQLite, a file in `--dir`.
    Sqlite,
    /// A database URL: a server (`postgres://...`, `mysql://...`), or a SQLite file named by its URL.
    Url(DatabaseUrl),
}

/// `--target` as clap parses it, refused in [`parse_target`]'s words alone (clap's own would repeat a password).
const TARGET: OwnMessage<Target> =
    OwnMessage { parse: parse_target, what: "--target; give sqlite, postgres://... or mysql://..." };

/// `--target`: sqlite or a database URL; the error hides a URL's password.
pub fn parse_target(text: &str) -> Result<Target, String> {
    match text {
        "sqlite" => Ok(Target::Sqlite),
        text => DatabaseUrl::parse(text)
            .map(Target::Url)
            .map_err(|e| format!("--target: {}; or sqlite (embedded, the default)", e.message.trim_end_matches('.'))),
    }
}

/// The tool `--cross-check` runs against the same server afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrossCheck {
    /// pgbench's built-in TPC-B-like transaction (with `--profile tpcb`, against PostgreSQL).
    Pgbench,
}

/// `--profile`: tpcc or tpcb.
pub fn parse_profile(text: &str) -> Result<Profile, String> {
    Profile::parse(text).ok_or_else(|| {
        let hint = envbench_core::text::did_you_mean(&envbench_core::text::suggestions(text, ["tpcc", "tpcb"]));
        format!("--profile '{text}': give tpcc or tpcb{hint}")
    })
}

/// `--max-tries`: a whole number from 1 (never retried) to [`MAX_TRIES`].
pub fn parse_max_tries(text: &str) -> Result<u32, String> {
    match text.trim().parse() {
        Ok(n) if (1..=MAX_TRIES).contains(&n) => Ok(n),
        _ => Err(format!(
            "--max-tries '{text}': give how many times a transaction runs at most, from 1 (never retried) to \
             {MAX_TRIES}"
        )),
    }
}

/// A whole number from 1 to `max`, or what to give (`bound`, after `give`) for `flag`.
fn count_from_one<T: TryFrom<u64>>(text: &str, max: u64, flag: &str, bound: &str) -> Result<T, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => T::try_from(n).map_err(|_| format!("{flag} '{text}': give {bound}")),
        _ => Err(format!("{flag} '{text}': give {bound}")),
    }
}

/// `--max-users`: from 1 to [`MAX_USERS`].
fn parse_max_users(text: &str) -> Result<u32, String> {
    count_from_one(text, MAX_USERS.into(), "--max-users", &format!("a count from 1 to {MAX_USERS}"))
}

/// `--clients-per-user`: from 1 to [`MAX_CLIENTS_PER_USER`].
fn parse_clients_per_user(text: &str) -> Result<u32, String> {
    let bound = format!("a count from 1 to {MAX_CLIENTS_PER_USER}");
    count_from_one(text, MAX_CLIENTS_PER_USER.into(), "--clients-per-user", &bound)
}

/// `--transactions`: from 1 to [`MAX_TRANSACTIONS_PER_USER`] a user.
fn parse_transactions(text: &str) -> Result<u64, String> {
    let bound = format!("a count of transactions per user from 1 to {MAX_TRANSACTIONS_PER_USER}");
    count_from_one(text, MAX_TRANSACTIONS_PER_USER, "--transactions", &bound)
}

/// `--loaders`: from 1 to [`MAX_LOADERS`].
fn parse_loaders(text: &str) -> Result<usize, String> {
    let bound = format!("1 to {MAX_LOADERS} (each is a thread and a connection)");
    count_from_one(text, MAX_LOADERS as u64, "--loaders", &bound)
}

/// `--warehouses` (`--scale` for tpcb): a whole number from 1 to [`MAX_SCALE`].
pub fn parse_scale(text: &str) -> Result<i64, String> {
    match text.trim().parse() {
        Ok(n) if (1..=MAX_SCALE).contains(&n) => Ok(n),
        _ => Err(format!(
            "--warehouses '{text}': give a whole number of warehouses (tpcb: pgbench's scale) from 1 to {MAX_SCALE}"
        )),
    }
}

/// `--users`: a count, a list such as 1,2,4,8, or auto, each count from 1 to [`MAX_USERS`] (`--max-users` bounds them
/// further when the run is planned: [`UsersPlan::within`]).
pub fn parse_users(text: &str) -> Result<UsersPlan, String> {
    UsersPlan::parse(text, MAX_USERS)
}

/// `--mode`: client or procedures.
pub fn parse_mode(text: &str) -> Result<Mode, String> {
    Mode::parse(text).ok_or_else(|| {
        format!("--mode '{text}': give client (statements from the client) or procedures (stored routines)")
    })
}

/// `--skew`: `zipf:THETA`, THETA above 0 and below 1, or from [`Zipf::MIN_THETA_ABOVE_ONE`] to [`Zipf::MAX_THETA`].
pub fn parse_skew(text: &str) -> Result<f64, String> {
    let theta = text.trim().to_ascii_lowercase().strip_prefix("zipf:").and_then(|t| t.trim().parse::<f64>().ok());
    match theta {
        Some(theta)
            if (theta > 0.0 && theta < 1.0) || (Zipf::MIN_THETA_ABOVE_ONE..=Zipf::MAX_THETA).contains(&theta) =>
        {
            Ok(theta)
        }
        _ => Err(format!(
            "--skew '{text}': give zipf:THETA with THETA above 0 and below 1, or from {} to {}, e.g. zipf:0.99 or \
             zipf:1.5 (leave --skew out for uniform keys)",
            Zipf::MIN_THETA_ABOVE_ONE,
            Zipf::MAX_THETA
        )),
    }
}

/// `--cross-check`: pgbench.
pub fn parse_cross_check(text: &str) -> Result<CrossCheck, String> {
    match text {
        "pgbench" => Ok(CrossCheck::Pgbench),
        other => Err(format!("--cross-check '{other}': the cross-check tool is pgbench")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    #[test]
    fn options_are_typed_while_clap_parses_them() {
        assert_eq!(parse_profile("tpcb"), Ok(Profile::Tpcb));
        assert!(parse_profile("tpce").unwrap_err().contains("give tpcc or tpcb"));
        assert_eq!(parse_scale(" 4 "), Ok(4));
        for bad in ["0", "lots", "10001", "-1"] {
            assert!(parse_scale(bad).unwrap_err().starts_with(&format!("--warehouses '{bad}': give a whole number")));
        }
        assert_eq!(parse_users("auto"), Ok(UsersPlan::Auto { max_users: MAX_USERS }));
        assert_eq!(parse_users("1,2"), Ok(UsersPlan::List(vec![1, 2])));
        assert!(parse_users("0").unwrap_err().contains("--users '0'"));
        assert_eq!(parse_mode("procedures"), Ok(Mode::Procedures));
        assert!(parse_mode("stored").unwrap_err().starts_with("--mode 'stored': give client"));
        assert_eq!(parse_cross_check("pgbench"), Ok(CrossCheck::Pgbench));
        assert_eq!(parse_skew("zipf:0.99"), Ok(0.99));
        for bad in ["zipf:1", "zipf:1.0001", "zipf:0", "zipf:6", "0.99", "zipf:x", "uniform"] {
            assert!(parse_skew(bad).unwrap_err().starts_with(&format!("--skew '{bad}': give zipf:THETA")), "{bad}");
        }
        assert!(parse_cross_check("hammerdb").unwrap_err().contains("the cross-check tool is pgbench"));
        let args = |line: &[&str]| envbench_core::workload::parse_args::<OltpArgs>("oltp", line);
        let defaults = args(&[]).unwrap();
        assert_eq!(
            (defaults.profile, defaults.warehouses, defaults.users, defaults.mode, defaults.cross_check),
            (Profile::Tpcc, 1, UsersPlan::List(vec![4]), Mode::Client, None)
        );
        let error = args(&["--users", "1,x"]).unwrap_err().to_string();
        assert!(error.contains("a list such as 1,2,4,8"), "{error}");
        assert_eq!(defaults.target, Target::Sqlite);
        assert!(matches!(args(&["--target", "postgres://u@h/db"]).unwrap().target, Target::Url(_)));
        // A refused URL's password stays off the screen.
        let error = args(&["--target", "oracle://scott:tiger@db/x"]).unwrap_err();
        let message = error.to_string();
        assert_eq!(error.kind(), ErrorKind::ValueValidation);
        assert!(message.contains("--target: ") && message.contains("or sqlite (embedded"), "{message}");
        assert!(!message.contains("tiger"), "{message}");
    }
}
