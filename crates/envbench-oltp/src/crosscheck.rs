//! `--cross-check pgbench`: PostgreSQL's own benchmark run against the same server and tables, with the same
//! clients and duration, so envbench's TPC-B figures stand beside those of a tool nobody here wrote. pgbench runs
//! its built-in `tpcb-like` script with prepared statements (`-M prepared`), one thread per client, and logs every
//! transaction's latency (`-l`), from which the same percentiles as envbench's are computed.

use crate::OltpError;
use envbench_sql::DatabaseUrl;
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

/// Run pgbench's TPC-B-like transaction for `duration` with `clients` clients against `url`.
pub fn run_pgbench(
    pgbench: &Path,
    url: &DatabaseUrl,
    clients: u32,
    duration: Duration,
) -> Result<PgbenchFigures, OltpError> {
    let logs = LogDirectory(std::env::temp_dir().join(format!("envbench-pgbench-{}-{clients}", std::process::id())));
    std::fs::create_dir_all(&logs.0)
        .map_err(|e| OltpError::Other(format!("{}: cannot create pgbench's log directory ({e})", logs.0.display())))?;
    let seconds = duration.as_secs().max(1);
    // The password goes in pgbench's environment, never on its command line where `ps` would show it.
    let (url_text, password) = url.split_password();
    let mut command = Command::new(pgbench);
    if let Some(password) = password {
        command.env("PGPASSWORD", password);
    }
    let output = command
        .args(["-n", "-M", "prepared", "-b", "tpcb-like", "-l"])
        .arg(format!("--log-prefix={}", logs.0.join("pgbench_log").display()))
        .args(["-c", &clients.to_string(), "-j", &clients.to_string(), "-T", &seconds.to_string()])
        .arg(&url_text)
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
