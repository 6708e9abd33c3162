//! The log formats, one file per server: each reader turns lines into [`Event`]s, one at a time, so a capture of any
//! size is read in the memory of one record. [`open`] tells the formats apart by their first lines.

mod mysql;
mod postgres;

use crate::capture::{CaptureError, Event};
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The logs envbench reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// PostgreSQL's `log_destination = 'csvlog'`.
    PostgresCsv,
    /// PostgreSQL's `log_destination = 'jsonlog'` (PostgreSQL 15 and later).
    PostgresJson,
    /// PostgreSQL's `log_destination = 'stderr'` with `log_line_prefix = '%m|%u|%d|%c|'` (pgreplay's).
    PostgresStderr,
    /// MariaDB's or MySQL's general query log, written to a file.
    MySqlGeneral,
    /// MariaDB's or MySQL's slow query log with `long_query_time = 0`, written to a file.
    MySqlSlow,
}

impl LogFormat {
    /// The format in a user's words.
    pub fn words(self) -> &'static str {
        match self {
            LogFormat::PostgresCsv => "PostgreSQL csvlog",
            LogFormat::PostgresJson => "PostgreSQL jsonlog",
            LogFormat::PostgresStderr => "PostgreSQL stderr log",
            LogFormat::MySqlGeneral => "MariaDB/MySQL general query log",
            LogFormat::MySqlSlow => "MariaDB/MySQL slow query log",
        }
    }

    /// Whether the capture came from PostgreSQL (rather than MariaDB or MySQL).
    pub fn is_postgres(self) -> bool {
        match self {
            LogFormat::PostgresCsv | LogFormat::PostgresJson | LogFormat::PostgresStderr => true,
            LogFormat::MySqlGeneral | LogFormat::MySqlSlow => false,
        }
    }
}

/// A capture being read: its events one at a time, in the order the log holds them (one session's in its order).
pub trait CaptureReader {
    fn format(&self) -> LogFormat;

    /// The next event, `None` at the end of the log.
    fn next_event(&mut self) -> Result<Option<Event>, CaptureError>;
}

/// Read one line of `input` (its newline dropped), counting lines; `None` at the end.
pub(crate) fn read_line(
    input: &mut dyn BufRead,
    buffer: &mut Vec<u8>,
    line: &mut u64,
) -> std::io::Result<Option<String>> {
    buffer.clear();
    if input.read_until(b'\n', buffer)? == 0 {
        return Ok(None);
    }
    *line += 1;
    while buffer.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buffer.pop();
    }
    Ok(Some(String::from_utf8_lossy(buffer).into_owned()))
}

/// How much of a log's start is read to tell its format.
const SNIFF_BYTES: usize = 64 * 1024;

/// Open the log at `path`, its format told from its first lines.
pub fn open(path: &Path) -> Result<Box<dyn CaptureReader>, CaptureError> {
    open_first(path, None)
}

/// The log at `path`'s length now: what a replay reads of it, once to check it and once to replay it, whatever the
/// server writes after (a record it was writing at that moment is a record cut short, and says so).
pub fn length_now(path: &Path) -> Result<u64, CaptureError> {
    let shown = path.display().to_string();
    let file = regular_file(path)?;
    Ok(file.metadata().map_err(|source| CaptureError::Io { path: shown, source })?.len())
}

/// Open the log at `path`, read no further than its first `bytes` where given.
pub fn open_first(path: &Path, bytes: Option<u64>) -> Result<Box<dyn CaptureReader>, CaptureError> {
    use std::io::Read;
    let file = regular_file(path)?;
    let shown = path.display().to_string();
    let input: Box<dyn std::io::Read> = match bytes {
        Some(bytes) => Box::new(file.take(bytes)),
        None => Box::new(file),
    };
    open_reader(&shown, Box::new(BufReader::with_capacity(SNIFF_BYTES, input)))
}

/// The regular file at `path`, opened; why not otherwise.
fn regular_file(path: &Path) -> Result<std::fs::File, CaptureError> {
    let shown = path.display().to_string();
    // Asked before opening: opening a FIFO would wait for a writer.
    let metadata = std::fs::metadata(path).map_err(|source| CaptureError::Io { path: shown.clone(), source })?;
    if metadata.is_dir() {
        return Err(CaptureError::UnknownFormat { path: shown, what: "it is a directory; name one log file".into() });
    }
    if !metadata.is_file() {
        return Err(CaptureError::UnknownFormat {
            path: shown,
            what: "it is not a regular file but a FIFO, a device or a socket; name the log file itself".into(),
        });
    }
    std::fs::File::open(path).map_err(|source| CaptureError::Io { path: shown, source })
}

/// Read a log from `input` (named `name` in messages), its format told from its first lines.
pub fn open_reader(name: &str, mut input: Box<dyn BufRead>) -> Result<Box<dyn CaptureReader>, CaptureError> {
    let io = |source| CaptureError::Io { path: name.to_string(), source };
    let head = input.fill_buf().map_err(io)?;
    let head = String::from_utf8_lossy(&head[..head.len().min(SNIFF_BYTES)]).into_owned();
    let format = sniff(&head).map_err(|what| CaptureError::UnknownFormat { path: name.to_string(), what })?;
    Ok(match format {
        LogFormat::PostgresCsv => Box::new(postgres::CsvReader::new(name, input)),
        LogFormat::PostgresJson => Box::new(postgres::JsonReader::new(name, input)),
        LogFormat::PostgresStderr => Box::new(postgres::StderrReader::new(name, input)),
        LogFormat::MySqlGeneral => Box::new(mysql::GeneralReader::new(name, input)),
        LogFormat::MySqlSlow => Box::new(mysql::SlowReader::new(name, input)),
    })
}

/// The format of a log that starts with `head`, or what it looks like instead.
fn sniff(head: &str) -> Result<LogFormat, String> {
    let mut lines = head.lines().filter(|l| !l.trim().is_empty());
    let Some(first) = lines.next() else { return Err("it is empty".into()) };
    if first.starts_with('{') {
        let value: Option<serde_json::Value> = serde_json::from_str(first).ok();
        if value.as_ref().is_some_and(|v| v.get("timestamp").is_some() && v.get("message").is_some()) {
            return Ok(LogFormat::PostgresJson);
        }
        return Err("a JSON line without PostgreSQL jsonlog's timestamp and message".into());
    }
    if postgres::starts_with_time(first) {
        let after = first
            .split(' ')
            .nth(2)
            .and_then(|zone| zone.chars().find(|c| !c.is_alphanumeric() && !"+-_/".contains(*c)));
        return match after {
            Some(',') => Ok(LogFormat::PostgresCsv),
            Some('|') => Ok(LogFormat::PostgresStderr),
            _ => Err(format!(
                "a line that starts with a time but not with log_line_prefix = '%m|%u|%d|%c|': {}",
                crate::capture::shortened(first, 80)
            )),
        };
    }
    if mysql::is_header(first) || first.starts_with("Time ") && first.contains("Command") {
        // The general and the slow log open with the same lines; the slow log's entries start with `# `.
        let rest: Vec<&str> = lines.filter(|l| !mysql::is_header(l)).collect();
        return Ok(match rest.first() {
            Some(line) if line.starts_with("# ") || line.starts_with("SET timestamp") || line.starts_with("use ") => {
                LogFormat::MySqlSlow
            }
            _ => LogFormat::MySqlGeneral,
        });
    }
    if first.starts_with("# Time:") || first.starts_with("# User@Host:") {
        return Ok(LogFormat::MySqlSlow);
    }
    if mysql::general_line(first).is_some() {
        return Ok(LogFormat::MySqlGeneral);
    }
    Err(format!("its first line reads: {}", crate::capture::shortened(first, 80)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_apart_by_their_first_lines() {
        let cases = [
            ("2026-12-02 15:30:00.123 UTC,\"postgres\",\"test\",1,\"[local]\",\"1.2\",1,\"\",", LogFormat::PostgresCsv),
            ("{\"timestamp\":\"2026-12-02 15:30:00.123 UTC\",\"message\":\"x\"}", LogFormat::PostgresJson),
            ("2026-12-02 15:30:00.123 UTC|postgres|test|1.2|LOG:  statement: select 1", LogFormat::PostgresStderr),
            (
                "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB (Debian). started with:\nTcp port: 3306  Unix socket: \
                 /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n241202 15:30:00\t     5 Query\tselect 1",
                LogFormat::MySqlGeneral,
            ),
            (
                "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB (Debian). started with:\nTcp port: 3306  Unix socket: \
                 /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n# Time: 241202 15:30:00\n",
                LogFormat::MySqlSlow,
            ),
        ];
        for (head, format) in cases {
            assert_eq!(sniff(head), Ok(format), "{head}");
        }
        for (head, says) in [
            ("", "empty"),
            ("hello world", "first line reads: hello world"),
            ("2026-12-02 15:30:00.123 UTC [123] LOG:  statement: select 1", "log_line_prefix"),
            ("{\"a\": 1}", "JSON line"),
        ] {
            let error = sniff(head).unwrap_err();
            assert!(error.contains(says), "{head}: {error}");
        }
    }
}
