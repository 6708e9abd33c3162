//! A capture summarised before anything runs (`envbench replay inspect LOG`): its span, sessions and peak
//! concurrency, statements by what they do, the statements that cannot be replayed and why, and the fingerprints
//! that run most. Read in one pass, in the memory of its open sessions and distinct fingerprints.

use crate::capture::{CaptureError, EventKind};
use crate::classify::{StatementKind, classify};
use crate::formats::{CaptureReader, LogFormat};
use crate::sessions::Sessions;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// How many fingerprints the summary lists, most calls first.
const TOP_FINGERPRINTS: usize = 10;

/// What a capture holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inspection {
    pub format: LogFormat,
    /// The first and last event's time, microseconds since the Unix epoch (`None` for a capture with no event).
    pub first_at: Option<i64>,
    pub last_at: Option<i64>,
    /// Sessions seen; those whose connection the capture holds; those that ended in it; those still open at its end
    /// (a replay ends them when their last statement is done).
    pub sessions: u64,
    pub sessions_connected: u64,
    pub sessions_ended: u64,
    pub sessions_open_at_end: u64,
    /// The most sessions open at once.
    pub peak_concurrency: u64,
    /// Statements the capture holds that a replay can send, by what they do.
    pub statements: u64,
    pub kinds: BTreeMap<StatementKind, u64>,
    /// Of them, sent through the extended protocol with bound parameters.
    pub extended: u64,
    /// Of them, those with the server's own duration in the log.
    pub with_durations: u64,
    /// Statements per database and per user, where the log names them.
    pub databases: BTreeMap<String, u64>,
    pub users: BTreeMap<String, u64>,
    /// What cannot be replayed, by reason: how many, and the first one's line and text.
    pub skipped: Vec<SkipCount>,
    /// Distinct fingerprints, and the most called of them.
    pub fingerprints: u64,
    pub top: Vec<FingerprintCount>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkipCount {
    pub reason: String,
    pub count: u64,
    pub first_line: u64,
    pub example: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FingerprintCount {
    pub fingerprint: String,
    pub kind: StatementKind,
    pub calls: u64,
    /// The server's own time for them, in microseconds, where the log says.
    pub captured_us: u64,
}

/// Read the whole capture and summarise it.
pub fn inspect(reader: &mut dyn CaptureReader) -> Result<Inspection, CaptureError> {
    summarise(reader, true)
}

/// Read the whole capture and count what it holds, without the fingerprints (`top` empty, `kinds` uncounted): what
/// a replay checks before it connects, at the cost of reading the log alone.
pub fn survey(reader: &mut dyn CaptureReader) -> Result<Inspection, CaptureError> {
    summarise(reader, false)
}

fn summarise(reader: &mut dyn CaptureReader, fingerprinted: bool) -> Result<Inspection, CaptureError> {
    let mut sessions: Sessions<String> = Sessions::new();
    let mut inspection = Inspection {
        format: reader.format(),
        first_at: None,
        last_at: None,
        sessions: 0,
        sessions_connected: 0,
        sessions_ended: 0,
        sessions_open_at_end: 0,
        peak_concurrency: 0,
        statements: 0,
        kinds: BTreeMap::new(),
        extended: 0,
        with_durations: 0,
        databases: BTreeMap::new(),
        users: BTreeMap::new(),
        skipped: Vec::new(),
        fingerprints: 0,
        top: Vec::new(),
    };
    let mut fingerprints: HashMap<String, FingerprintCount> = HashMap::new();
    while let Some(event) = reader.next_event()? {
        inspection.first_at = Some(inspection.first_at.map_or(event.at, |at| at.min(event.at)));
        inspection.last_at = Some(inspection.last_at.map_or(event.at, |at| at.max(event.at)));
        sessions.track(&event);
        match event.kind {
            EventKind::Skipped(skip) => match inspection.skipped.iter_mut().find(|s| s.reason == skip.reason) {
                Some(count) => count.count += 1,
                None => inspection.skipped.push(SkipCount {
                    reason: skip.reason,
                    count: 1,
                    first_line: event.line,
                    example: skip.text,
                }),
            },
            EventKind::Duration { us } => {
                // Once, for the statement logged before it.
                if let Some(fingerprint) = sessions.take_pending(&event.session) {
                    if let Some(counted) = fingerprints.get_mut(&fingerprint) {
                        counted.captured_us += us;
                    }
                    inspection.with_durations += 1;
                }
            }
            EventKind::Statement(statement) => {
                inspection.statements += 1;
                inspection.extended += u64::from(statement.extended);
                inspection.with_durations += u64::from(statement.duration_us.is_some());
                if let Some(database) = sessions.database(&event.session) {
                    *inspection.databases.entry(database.to_string()).or_default() += 1;
                }
                if let Some(user) = &statement.user {
                    *inspection.users.entry(user.clone()).or_default() += 1;
                }
                let fingerprint =
                    if fingerprinted { crate::fingerprint::fingerprint(&statement.sql) } else { String::new() };
                if fingerprinted {
                    let kind = classify(&fingerprint);
                    *inspection.kinds.entry(kind).or_default() += 1;
                    let counted = fingerprints.entry(fingerprint.clone()).or_insert_with(|| FingerprintCount {
                        fingerprint: fingerprint.clone(),
                        kind,
                        calls: 0,
                        captured_us: 0,
                    });
                    counted.calls += 1;
                    counted.captured_us += statement.duration_us.unwrap_or(0);
                }
                if statement.duration_us.is_none() {
                    sessions.await_duration(&event.session, fingerprint);
                } else {
                    sessions.take_pending(&event.session);
                }
            }
            EventKind::Connect { .. } | EventKind::UseDatabase { .. } | EventKind::Disconnect => {}
        }
    }
    inspection.sessions = sessions.seen;
    inspection.sessions_connected = sessions.connected;
    inspection.sessions_ended = sessions.ended;
    inspection.sessions_open_at_end = sessions.open_now();
    inspection.peak_concurrency = sessions.peak(inspection.last_at.unwrap_or(0));
    inspection.fingerprints = fingerprints.len() as u64;
    let mut top: Vec<FingerprintCount> = fingerprints.into_values().collect();
    top.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.fingerprint.cmp(&b.fingerprint)));
    top.truncate(TOP_FINGERPRINTS);
    inspection.top = top;
    Ok(inspection)
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Inspection {
    /// The capture's span in seconds.
    pub fn span_seconds(&self) -> f64 {
        match (self.first_at, self.last_at) {
            (Some(first), Some(last)) => (last - first) as f64 / 1e6,
            _ => 0.0,
        }
    }

    /// The summary in words, for a terminal.
    pub fn render(&self, path: &str) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "capture: {path} ({})", self.format.words());
        let _ = writeln!(out, "span: {:.1} s", self.span_seconds());
        let _ = writeln!(
            out,
            "sessions: {} ({} connected in the capture, {} ended in it, {} still open at its end); at most {} at once",
            thousands(self.sessions),
            thousands(self.sessions_connected),
            thousands(self.sessions_ended),
            thousands(self.sessions_open_at_end),
            thousands(self.peak_concurrency)
        );
        let kind = |k: StatementKind| thousands(self.kinds.get(&k).copied().unwrap_or(0));
        let _ = writeln!(
            out,
            "statements: {}: {} reads, {} writes, {} transaction control, {} session settings",
            thousands(self.statements),
            kind(StatementKind::Read),
            kind(StatementKind::Write),
            kind(StatementKind::Transaction),
            kind(StatementKind::Session)
        );
        let _ = writeln!(
            out,
            "  {} through the extended protocol with their parameters; {} with the server's own duration",
            thousands(self.extended),
            thousands(self.with_durations)
        );
        if self.with_durations == 0 {
            let _ = writeln!(
                out,
                "  (no durations: the replay's times will have nothing captured beside them; see docs/replay.md)"
            );
        }
        let _ = writeln!(out, "  writes are skipped and counted unless the replay is given --allow-writes");
        let named = |map: &BTreeMap<String, u64>| {
            map.iter().map(|(name, n)| format!("{name} ({})", thousands(*n))).collect::<Vec<_>>().join(", ")
        };
        if !self.databases.is_empty() {
            let _ = writeln!(out, "databases: {}", named(&self.databases));
        }
        if !self.users.is_empty() {
            let _ = writeln!(out, "users: {}", named(&self.users));
        }
        let skipped: u64 = self.skipped.iter().map(|s| s.count).sum();
        let _ = writeln!(out, "cannot be replayed: {}", thousands(skipped));
        for skip in &self.skipped {
            let _ = writeln!(
                out,
                "  {}: {} (first at line {}: {})",
                thousands(skip.count),
                skip.reason,
                skip.first_line,
                skip.example
            );
        }
        let _ = writeln!(out, "fingerprints: {}, the most called:", thousands(self.fingerprints));
        for top in &self.top {
            let captured = if top.captured_us > 0 {
                format!(", {:.3} s captured", top.captured_us as f64 / 1e6)
            } else {
                String::new()
            };
            let kind = match top.kind {
                StatementKind::Read => "read",
                StatementKind::Write => "write",
                StatementKind::Transaction => "transaction",
                StatementKind::Session => "session",
            };
            let _ = writeln!(
                out,
                "  {:>9}  {kind}{captured}  {}",
                thousands(top.calls),
                crate::capture::shortened(&top.fingerprint, 100)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csvlog(records: &[(&str, &str, &str)]) -> String {
        records
            .iter()
            .enumerate()
            .map(|(i, (session, message, detail))| {
                format!(
                    "2026-12-02 15:30:0{i}.000 UTC,\"app\",\"shop\",1,\"[local]\",\"{session}\",{i},\"\",\
                     \"2026-12-02 15:29:00 UTC\",\"3/1\",0,LOG,00000,\"{message}\",\"{detail}\",,,,,,,,\"psql\",\
                     \"client backend\",,0\n"
                )
            })
            .collect()
    }

    /// Issue #69's bad inputs that are not the capture's end: a parameter that does not parse is a counted skip,
    /// and a session that never ends is counted as open at the end.
    #[test]
    fn what_cannot_be_replayed_is_counted_never_dropped() {
        let log = csvlog(&[
            ("a", "connection authorized: user=app database=shop", ""),
            ("a", "execute S_1: select * from items where id = $1", "parameters: $1 = '5"),
            ("a", "execute S_1: select * from items where id = $1", "parameters: $1 = '6'"),
            ("b", "statement: update items set n = n + 1 where id = 7", ""),
            ("b", "statement: COPY items FROM STDIN", ""),
            ("a", "disconnection: session time: 0:00:01.000 user=app database=shop host=[local]", ""),
        ]);
        let mut reader =
            crate::formats::open_reader("log.csv", Box::new(std::io::Cursor::new(log.into_bytes()))).unwrap();
        let inspection = inspect(reader.as_mut()).unwrap();
        assert_eq!((inspection.statements, inspection.extended), (2, 1));
        assert_eq!((inspection.sessions, inspection.sessions_ended, inspection.sessions_open_at_end), (2, 1, 1));
        let reasons: Vec<(&str, u64, u64)> =
            inspection.skipped.iter().map(|s| (s.reason.as_str(), s.count, s.first_line)).collect();
        assert_eq!(
            reasons,
            [
                (
                    "its parameters do not parse: a value whose quote never closes (was it cut by log_parameter_max_length?)",
                    1,
                    2
                ),
                ("COPY FROM STDIN: the rows are not in the log", 1, 5),
            ]
        );
        let text = inspection.render("log.csv");
        assert!(text.contains("1 still open at its end"), "{text}");
        assert!(text.contains("statements: 2: 1 reads, 1 writes"), "{text}");
        assert!(text.contains("databases: shop (2)"), "{text}");
    }
}
