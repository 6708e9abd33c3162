//! `--cross-check pgbench`: PostgreSQL's own benchmark run against the same server and tables, with the same
//! clients and duration, so envbench's TPC-B figures stand beside those of a tool nobody here wrote. pgbench runs
//! its built-in `tpcb-like` script with prepared statements (`-M prepared`), one thread per client, and logs every
//! transaction's latency (`-l`), from which the same percentiles as envbench's are computed. pgbench's script names
//! its tables unqualified, so its sessions get the run's one schema as their whole search path; its password goes
//! in its environment, never on its command line.

use crate::error::OltpError;
use envbench_core::text::percent_encode;
use envbench_sql::{DatabaseUrl, Namespace, quote_identifier};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What one pgbench run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgbenchFigures {
    pub clients: u32,
    pub seconds: f64,
    pub transactions: u64,
    pub failed: u64,
    /// pgbench's own TPS (without the initial connection time).
    pub tps: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub version: String,
}

/// The pgbench program: on the PATH, or in a PostgreSQL installation's `bin` (the newest).
pub fn find_pgbench() -> Result<PathBuf, OltpError> {
    envbench_core::programs::find_postgres_program("pgbench").ok_or_else(|| {
        OltpError::BadInput(
            "--cross-check pgbench: pgbench was not found on the PATH or under /usr/lib/postgresql; install it \
             (Debian: apt-get install postgresql-client) or put it on the PATH"
                .into(),
        )
    })
}

/// A directory of pgbench's transaction logs, removed when dropped.
struct LogDirectory(PathBuf);

impl Drop for LogDirectory {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What pgbench is started with: its arguments (no password among them) and the variables added to its
/// environment.
#[derive(Clone, Debug, PartialEq)]
pub struct PgbenchInvocation {
    pub args: Vec<String>,
    pub environment: Vec<(String, String)>,
}

/// pgbench's arguments and environment for `clients` clients for `seconds` against `url`, its sessions' search path
/// pinned to `namespace`: libpq's `options` (`-c search_path=...`) in `PGOPTIONS`, or appended to the URL's own
/// `options` parameter when it has one (which libpq reads instead of the variable). Every form of password in the URL
/// goes to `PGPASSWORD`.
pub fn pgbench_invocation(
    url: &DatabaseUrl,
    namespace: &Namespace,
    clients: u32,
    seconds: u64,
    log_prefix: &Path,
) -> PgbenchInvocation {
    let (url_text, password) = url.split_password();
    // libpq's options split on spaces, a backslash escaping the next character.
    let schema = quote_identifier(namespace.dialect(), namespace.name()).replace('\\', "\\\\").replace(' ', "\\ ");
    let setting = format!("-c search_path={schema}");
    let mut environment = Vec::new();
    let (base, query) = url_text.split_once('?').map_or((url_text.as_str(), None), |(b, q)| (b, Some(q)));
    let mut in_url = false;
    let parameters: Vec<String> = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .map(|parameter| match parameter.split_once('=') {
            Some(("options", value)) => {
                in_url = true;
                format!("options={value}{}", percent_encode(&format!(" {setting}")))
            }
            _ => parameter.to_string(),
        })
        .collect();
    let target = if parameters.is_empty() { base.to_string() } else { format!("{base}?{}", parameters.join("&")) };
    if !in_url {
        // After the user's own PGOPTIONS, so this setting wins.
        let options = match std::env::var("PGOPTIONS") {
            Ok(theirs) if !theirs.trim().is_empty() => format!("{theirs} {setting}"),
            _ => setting,
        };
        environment.push(("PGOPTIONS".to_string(), options));
    }
    if let Some(password) = password {
        environment.push(("PGPASSWORD".to_string(), password));
    }
    let mut args: Vec<String> = ["-n", "-M", "prepared", "-b", "tpcb-like", "-l"].map(String::from).to_vec();
    args.push(format!("--log-prefix={}", log_prefix.display()));
    args.extend(["-c", &clients.to_string(), "-j", &clients.to_string(), "-T", &seconds.to_string()].map(String::from));
    args.push(target);
    PgbenchInvocation { args, environment }
}

/// Run pgbench's TPC-B-like transaction for `duration` with `clients` clients against the tables in `namespace` of
/// `url`.
pub fn run_pgbench(
    pgbench: &Path,
    url: &DatabaseUrl,
    namespace: &Namespace,
    clients: u32,
    duration: Duration,
) -> Result<PgbenchFigures, OltpError> {
    let logs = LogDirectory(std::env::temp_dir().join(format!("envbench-pgbench-{}-{clients}", std::process::id())));
    std::fs::create_dir_all(&logs.0)
        .map_err(|e| OltpError::Other(format!("{}: cannot create pgbench's log directory ({e})", logs.0.display())))?;
    let seconds = duration.as_secs().max(1);
    let invocation = pgbench_invocation(url, namespace, clients, seconds, &logs.0.join("pgbench_log"));
    let output = Command::new(pgbench)
        .args(&invocation.args)
        .envs(invocation.environment.iter().map(|(k, v)| (k, v)))
        .current_dir(&logs.0)
        .output()
        .map_err(|e| OltpError::Other(format!("{}: cannot run pgbench ({e})", pgbench.display())))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = envbench_core::model::redact_secrets(&String::from_utf8_lossy(&output.stderr));
        return Err(OltpError::Other(format!(
            "pgbench against {} failed ({}): {}",
            url.shown(),
            output.status,
            stderr.lines().rev().take(3).collect::<Vec<_>>().join(" / ")
        )));
    }
    let field = |prefix: &str| -> Option<f64> {
        stdout.lines().find_map(|line| line.trim().strip_prefix(prefix)?.split_whitespace().next()?.parse().ok())
    };
    let tps = field("tps = ").ok_or_else(|| OltpError::Other(format!("pgbench printed no TPS:\n{stdout}")))?;
    let version = Command::new(pgbench)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut histogram: Histogram<u64> = Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds");
    for entry in std::fs::read_dir(&logs.0).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            // client_id transaction_no time script_no time_epoch time_us: the third is the latency in us.
            if let Some(latency) = line.split_whitespace().nth(2).and_then(|t| t.parse::<u64>().ok()) {
                histogram.saturating_record(latency.max(1));
            }
        }
    }
    let ms = |us: u64| us as f64 / 1000.0;
    Ok(PgbenchFigures {
        clients,
        seconds: seconds as f64,
        transactions: field("number of transactions actually processed: ").map_or(histogram.len(), |n| n as u64),
        failed: field("number of failed transactions: ").map_or(0, |n| n as u64),
        tps,
        mean_ms: if histogram.is_empty() {
            field("latency average = ").unwrap_or(0.0)
        } else {
            histogram.mean() / 1000.0
        },
        p50_ms: ms(histogram.value_at_quantile(0.50)),
        p95_ms: ms(histogram.value_at_quantile(0.95)),
        p99_ms: ms(histogram.value_at_quantile(0.99)),
        max_ms: ms(histogram.max()),
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_sql::Dialect;

    #[test]
    fn pgbench_gets_no_password_on_its_command_line_and_the_runs_schema_as_its_search_path() {
        let namespace = Namespace::named(Dialect::Postgres, "my schema");
        let prefix = Path::new("/tmp/logs/pgbench_log");
        for text in [
            "postgres://bob:hunter2@db:5432/test?sslmode=disable",
            "postgres://bob@db:5432/test?password=hunter2&sslmode=disable",
            "postgresql://bob:old@db/test?password=hunter2",
        ] {
            let url = DatabaseUrl::parse(text).unwrap();
            let invocation = pgbench_invocation(&url, &namespace, 4, 10, prefix);
            assert!(invocation.args.iter().all(|a| !a.contains("hunter2") && !a.contains("old")), "{invocation:?}");
            assert!(invocation.environment.contains(&("PGPASSWORD".into(), "hunter2".into())), "{invocation:?}");
            let options = invocation.environment.iter().find(|(k, _)| k == "PGOPTIONS").unwrap();
            assert!(options.1.ends_with(r#"-c search_path="my\ schema""#), "{options:?}");
            assert!(invocation.args.last().unwrap().starts_with("postgres"), "{invocation:?}");
            assert!(invocation.args.windows(2).any(|w| w == ["-c", "4"]));
        }
        // The URL's own options win over PGOPTIONS in libpq: the search path joins them there.
        let url = DatabaseUrl::parse("postgres://bob@db/test?options=-c%20work_mem%3D64MB").unwrap();
        let invocation = pgbench_invocation(&url, &Namespace::named(Dialect::Postgres, "s"), 1, 1, prefix);
        assert_eq!(
            invocation.args.last().unwrap(),
            "postgres://bob@db/test?options=-c%20work_mem%3D64MB%20-c%20search_path%3D%22s%22"
        );
        assert!(invocation.environment.is_empty(), "{invocation:?}");
    }
}
