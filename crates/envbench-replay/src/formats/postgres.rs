//! PostgreSQL's logs: csvlog, jsonlog and stderr with `log_line_prefix = '%m|%u|%d|%c|'`. The three carry the same
//! records (a time, the session, its user and database, a severity, a message and its detail); [`interpret`] reads
//! what a record says a client did.

use super::{CaptureReader, LogFormat, read_line};
use crate::capture::{CaptureError, Event, EventKind, Skip, Statement, shortened};
use std::io::BufRead;

/// One record of a PostgreSQL log.
struct Record {
    at: i64,
    user: Option<String>,
    database: Option<String>,
    session: String,
    severity: String,
    message: String,
    detail: Option<String>,
    line: u64,
}

/// Whether `line` starts with PostgreSQL's `%m` (`2026-12-02 15:30:00.123`).
pub(crate) fn starts_with_time(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 19
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// `user=alice database=shop application_name=psql`: the value of `key`.
fn field(text: &str, key: &str) -> Option<String> {
    text.split_whitespace().find_map(|pair| pair.strip_prefix(key)?.strip_prefix('=')).map(str::to_string)
}

/// `duration: 0.123 ms` at the start of a message: the microseconds, and what follows (`  statement: ...`).
fn duration(message: &str) -> Option<(u64, &str)> {
    let rest = message.strip_prefix("duration: ")?;
    let (number, rest) = rest.split_once(" ms")?;
    let milliseconds: f64 = number.parse().ok()?;
    Some(((milliseconds * 1000.0).round() as u64, rest.trim_start()))
}

/// `parameters: $1 = '5', $2 = NULL`: the values in order, or what does not parse.
fn parameters(detail: &str) -> Result<Vec<Option<String>>, String> {
    let mut rest = detail.trim().strip_prefix("parameters: ").ok_or("no parameters: in its DETAIL")?;
    let mut values = Vec::new();
    while !rest.is_empty() {
        let expected = format!("${} = ", values.len() + 1);
        rest = rest.strip_prefix(expected.as_str()).ok_or_else(|| format!("expected {expected:?} at {rest:?}"))?;
        if let Some(after) = rest.strip_prefix("NULL") {
            values.push(None);
            rest = after;
        } else if let Some(quoted) = rest.strip_prefix('\'') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((at, c)) = chars.next() {
                if c == '\'' {
                    if quoted[at + 1..].starts_with('\'') {
                        value.push('\'');
                        chars.next();
                    } else {
                        end = Some(at + 1);
                        break;
                    }
                } else {
                    value.push(c);
                }
            }
            let end = end.ok_or("a value whose quote never closes (was it cut by log_parameter_max_length?)")?;
            values.push(Some(value));
            rest = &quoted[end..];
        } else {
            return Err(format!("a value neither quoted nor NULL at {rest:?}"));
        }
        rest = rest.strip_prefix(", ").unwrap_or(rest);
    }
    Ok(values)
}

/// The client's action a record says, if it says one: connections, statements (simple, or an extended-protocol
/// execute with its parameters from the DETAIL), a duration logged after its statement, disconnections. Messages
/// of the server's own (checkpoints, autovacuum) and errors (their statement was logged when it came) say none.
fn interpret(record: Record) -> Option<Event> {
    if record.severity != "LOG" {
        return None;
    }
    let event = |kind| Some(Event { at: record.at, session: record.session.clone(), line: record.line, kind });
    let message = record.message.as_str();
    if let Some(rest) = message.strip_prefix("connection authorized: ") {
        return event(EventKind::Connect { user: field(rest, "user"), database: field(rest, "database") });
    }
    if message.starts_with("disconnection: ") {
        return event(EventKind::Disconnect);
    }
    let (duration_us, text) = match duration(message) {
        Some((us, "")) => return event(EventKind::Duration { us }),
        Some((us, text)) => (Some(us), text),
        None => (None, message),
    };
    let (sql, extended) = if let Some(sql) = text.strip_prefix("statement: ") {
        (sql, false)
    } else if let Some(rest) = text.strip_prefix("execute ") {
        match rest.split_once(": ") {
            Some((_, sql)) => (sql, true),
            // PostgreSQL always writes "execute NAME: SQL": anything else is counted, not dropped.
            None => {
                let reason = "an execute without its statement (\"execute NAME: SQL\" expected)".to_string();
                return event(EventKind::Skipped(Skip { reason, text: shortened(message, 120) }));
            }
        }
    } else {
        // parse and bind of the extended protocol: its execute is what runs.
        return None;
    };
    let skip = |reason: &str| event(EventKind::Skipped(Skip { reason: reason.to_string(), text: shortened(sql, 120) }));
    let fingerprint = crate::fingerprint::fingerprint(sql);
    if fingerprint.starts_with("copy ") && fingerprint.contains(" from stdin") {
        return skip("COPY FROM STDIN: the rows are not in the log");
    }
    let parameters = match (&record.detail, extended) {
        (Some(detail), true) if detail.starts_with("parameters: ") => match parameters(detail) {
            Ok(values) => values,
            Err(why) => return skip(&format!("its parameters do not parse: {why}")),
        },
        (_, true) if fingerprint.contains('$') && sql.contains('$') && has_parameter(sql) => {
            return skip("the log has no values for its parameters (log_parameter_max_length = 0?)");
        }
        _ => Vec::new(),
    };
    event(EventKind::Statement(Statement {
        sql: sql.to_string(),
        parameters,
        extended,
        duration_us,
        user: record.user.clone(),
        database: record.database.clone(),
    }))
}

/// Whether `sql` names a parameter (`$1`) outside quoted text.
fn has_parameter(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    bytes.windows(2).any(|w| w[0] == b'$' && w[1].is_ascii_digit())
}

/// PostgreSQL's csvlog: one CSV record per log record, quoted fields that may hold newlines.
pub(crate) struct CsvReader {
    name: String,
    records: csv::Reader<Box<dyn BufRead>>,
    record: csv::StringRecord,
}

impl CsvReader {
    pub(crate) fn new(name: &str, input: Box<dyn BufRead>) -> CsvReader {
        let records = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(input);
        CsvReader { name: name.to_string(), records, record: csv::StringRecord::new() }
    }
}

impl CaptureReader for CsvReader {
    fn format(&self) -> LogFormat {
        LogFormat::PostgresCsv
    }

    fn next_event(&mut self) -> Result<Option<Event>, CaptureError> {
        loop {
            let line = self.records.position().line();
            let malformed = |what: String| CaptureError::Malformed { path: self.name.clone(), line, what };
            match self.records.read_record(&mut self.record) {
                Ok(false) => return Ok(None),
                Ok(true) => {}
                Err(e) => return Err(malformed(format!("not csvlog: {e}"))),
            }
            let r = &self.record;
            if r.len() < 15 {
                return Err(malformed(format!(
                    "a record of {} fields, where csvlog writes at least 23 (is the log cut short?)",
                    r.len()
                )));
            }
            let at = crate::time::postgres(&r[0])
                .ok_or_else(|| malformed(format!("'{}' is not a log time", shortened(&r[0], 40))))?;
            let record = Record {
                at,
                user: non_empty(&r[1]),
                database: non_empty(&r[2]),
                session: r[5].to_string(),
                severity: r[11].to_string(),
                message: r[13].to_string(),
                detail: non_empty(&r[14]),
                line,
            };
            if let Some(event) = interpret(record) {
                return Ok(Some(event));
            }
        }
    }
}

/// PostgreSQL's jsonlog: one JSON object per line.
pub(crate) struct JsonReader {
    name: String,
    input: Box<dyn BufRead>,
    buffer: Vec<u8>,
    line: u64,
}

impl JsonReader {
    pub(crate) fn new(name: &str, input: Box<dyn BufRead>) -> JsonReader {
        JsonReader { name: name.to_string(), input, buffer: Vec::new(), line: 0 }
    }
}

impl CaptureReader for JsonReader {
    fn format(&self) -> LogFormat {
        LogFormat::PostgresJson
    }

    fn next_event(&mut self) -> Result<Option<Event>, CaptureError> {
        loop {
            let io = |source| CaptureError::Io { path: self.name.clone(), source };
            let Some(text) = read_line(self.input.as_mut(), &mut self.buffer, &mut self.line).map_err(io)? else {
                return Ok(None);
            };
            if text.trim().is_empty() {
                continue;
            }
            let malformed = |what: String| CaptureError::Malformed { path: self.name.clone(), line: self.line, what };
            let value: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| malformed(format!("not a jsonlog record ({e}); is the log cut short?")))?;
            let text_of = |key: &str| value.get(key).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let at = crate::time::postgres(&text_of("timestamp"))
                .ok_or_else(|| malformed("a record without a log time (\"timestamp\")".into()))?;
            let record = Record {
                at,
                user: non_empty(&text_of("user")),
                database: non_empty(&text_of("dbname")),
                session: text_of("session_id"),
                severity: text_of("error_severity"),
                message: text_of("message"),
                detail: non_empty(&text_of("detail")),
                line: self.line,
            };
            if let Some(event) = interpret(record) {
                return Ok(Some(event));
            }
        }
    }
}

/// PostgreSQL's stderr log with `log_line_prefix = '%m|%u|%d|%c|'`: a record's further lines start with a tab, and
/// its DETAIL is a record of its own that follows it.
pub(crate) struct StderrReader {
    name: String,
    input: Box<dyn BufRead>,
    buffer: Vec<u8>,
    line: u64,
    /// A line read ahead: the start of the next record.
    ahead: Option<String>,
    /// A record read whose DETAIL may follow.
    pending: Option<Record>,
    /// Lines seen without the prefix, as counted skips.
    strays: Vec<Event>,
}

impl StderrReader {
    pub(crate) fn new(name: &str, input: Box<dyn BufRead>) -> StderrReader {
        StderrReader {
            name: name.to_string(),
            input,
            buffer: Vec::new(),
            line: 0,
            ahead: None,
            pending: None,
            strays: Vec::new(),
        }
    }

    /// The next record, its further lines joined; `None` at the end.
    fn record(&mut self) -> Result<Option<Record>, CaptureError> {
        let io = |source| CaptureError::Io { path: self.name.clone(), source };
        let first = match self.ahead.take() {
            Some(line) => line,
            None => loop {
                match read_line(self.input.as_mut(), &mut self.buffer, &mut self.line).map_err(io)? {
                    None => return Ok(None),
                    Some(line) if line.trim().is_empty() => continue,
                    Some(line) => break line,
                }
            },
        };
        let line = self.line;
        let mut message_lines = vec![first];
        loop {
            match read_line(self.input.as_mut(), &mut self.buffer, &mut self.line).map_err(io)? {
                Some(next) if next.starts_with('\t') => message_lines.push(next[1..].to_string()),
                next => {
                    self.ahead = next;
                    break;
                }
            }
        }
        let text = message_lines.join("\n");
        let mut parts = text.splitn(5, '|');
        let fields: Vec<&str> = parts.by_ref().take(5).collect();
        let parsed = (fields.len() == 5 && starts_with_time(fields[0]))
            .then(|| crate::time::postgres(fields[0]))
            .flatten()
            .and_then(|at| {
                let (severity, message) = fields[4].split_once(":  ")?;
                Some(Record {
                    at,
                    user: non_empty(fields[1]),
                    database: non_empty(fields[2]),
                    session: fields[3].to_string(),
                    severity: severity.to_string(),
                    message: message.to_string(),
                    detail: None,
                    line,
                })
            });
        Ok(Some(parsed.unwrap_or_else(|| {
            // Not a record of this prefix: kept as a counted skip.
            self.strays.push(Event {
                at: self.pending.as_ref().map_or(0, |p| p.at),
                session: String::new(),
                line,
                kind: EventKind::Skipped(Skip {
                    reason: "a line without log_line_prefix '%m|%u|%d|%c|'".into(),
                    text: shortened(&text, 120),
                }),
            });
            Record {
                at: 0,
                user: None,
                database: None,
                session: String::new(),
                severity: String::new(),
                message: String::new(),
                detail: None,
                line,
            }
        })))
    }
}

impl CaptureReader for StderrReader {
    fn format(&self) -> LogFormat {
        LogFormat::PostgresStderr
    }

    fn next_event(&mut self) -> Result<Option<Event>, CaptureError> {
        loop {
            if let Some(stray) = self.strays.pop() {
                return Ok(Some(stray));
            }
            let next = self.record()?;
            if let (Some(pending), Some(next)) = (&mut self.pending, &next)
                && next.severity == "DETAIL"
                && next.session == pending.session
            {
                pending.detail = Some(next.message.clone());
                continue;
            }
            let done = next.is_none();
            let ready = std::mem::replace(&mut self.pending, next.filter(|r| !r.severity.is_empty()));
            if let Some(event) = ready.and_then(interpret) {
                return Ok(Some(event));
            }
            if done && self.pending.is_none() && self.strays.is_empty() {
                return Ok(None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parameters;

    #[test]
    fn parameters_read_back_as_they_were_bound() {
        assert_eq!(
            parameters("parameters: $1 = '5', $2 = NULL, $3 = 'it''s, ok', $4 = ''"),
            Ok(vec![Some("5".into()), None, Some("it's, ok".into()), Some(String::new())])
        );
        for bad in ["parameters: $2 = '5'", "parameters: $1 = 5", "parameters: $1 = 'open", "values: 1"] {
            assert!(parameters(bad).is_err(), "{bad}");
        }
    }
}
