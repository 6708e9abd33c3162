//! MariaDB's and MySQL's logs written to a file: the general query log (every command of every connection, its
//! time to the second on MariaDB, to the microsecond on MySQL 8) and the slow query log with `long_query_time = 0`
//! (every statement with its `Query_time`).

use super::{CaptureReader, LogFormat, read_line};
use crate::capture::{CaptureError, Event, EventKind, Skip, Statement, shortened};
use std::io::BufRead;

/// Whether `line` is one of the lines a server writes when it opens the log (`/usr/sbin/mariadbd, Version: ...`,
/// `Tcp port: ...`, `Time  Id Command  Argument`).
pub(crate) fn is_header(line: &str) -> bool {
    (line.contains(", Version: ") && line.contains("started with:"))
        || line.starts_with("Tcp port: ")
        || (line.starts_with("Time") && line.contains("Id Command"))
}

/// The commands a general log names (MariaDB's and MySQL's words).
const COMMANDS: [&str; 20] = [
    "Connect",
    "Query",
    "Quit",
    "Init DB",
    "Prepare",
    "Execute",
    "Close stmt",
    "Reset stmt",
    "Long Data",
    "Fetch",
    "Field List",
    "Statistics",
    "Ping",
    "Change user",
    "Refresh",
    "Shutdown",
    "Kill",
    "Processlist",
    "Set option",
    "Binlog Dump",
];

/// One entry's first line of a general log: its time (when the line has one), connection id, command and argument.
pub(crate) fn general_line(line: &str) -> Option<(Option<i64>, String, &str, &str)> {
    let (at, rest) =
        if line.len() >= 15 && line.as_bytes()[..6].iter().all(u8::is_ascii_digit) && line.as_bytes()[6] == b' ' {
            (Some(crate::time::mariadb(&line[..15])?), &line[15..])
        } else if line.len() > 20 && line.as_bytes()[..4].iter().all(u8::is_ascii_digit) && line.as_bytes()[10] == b'T'
        {
            let (time, rest) = line.split_once(['\t', ' '])?;
            (Some(crate::time::iso(time)?), rest)
        } else if line.starts_with('\t') {
            (None, line)
        } else {
            return None;
        };
    let rest = rest.trim_start_matches(['\t', ' ']);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.as_bytes().get(digits) != Some(&b' ') {
        return None;
    }
    let id = rest[..digits].to_string();
    let rest = &rest[digits + 1..];
    let (command, argument) = rest.split_once('\t').unwrap_or((rest, ""));
    COMMANDS.contains(&command.trim_end()).then_some((at, id, command.trim_end(), argument))
}

/// `root@localhost on shop using TCP/IP`: the user and the database (none when the connection named none).
fn connect_argument(argument: &str) -> (Option<String>, Option<String>) {
    let user = argument.split('@').next().filter(|u| !u.is_empty() && !u.contains(' ')).map(str::to_string);
    let database = argument
        .split_once(" on ")
        .map(|(_, rest)| rest.split(" using ").next().unwrap_or("").trim())
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    (user, database)
}

/// The general query log: an entry per command, a statement's further lines written as they were.
pub(crate) struct GeneralReader {
    name: String,
    input: Box<dyn BufRead>,
    buffer: Vec<u8>,
    line: u64,
    /// The time of the last line that had one: lines in the same second name none.
    now: Option<i64>,
    ahead: Option<String>,
    /// Each connection's user, for its statements.
    users: std::collections::HashMap<String, Option<String>>,
}

impl GeneralReader {
    pub(crate) fn new(name: &str, input: Box<dyn BufRead>) -> GeneralReader {
        GeneralReader {
            name: name.to_string(),
            input,
            buffer: Vec::new(),
            line: 0,
            now: None,
            ahead: None,
            users: Default::default(),
        }
    }
}

impl CaptureReader for GeneralReader {
    fn format(&self) -> LogFormat {
        LogFormat::MySqlGeneral
    }

    fn next_event(&mut self) -> Result<Option<Event>, CaptureError> {
        loop {
            let io = |source| CaptureError::Io { path: self.name.clone(), source };
            let text = match self.ahead.take() {
                Some(text) => text,
                None => match read_line(self.input.as_mut(), &mut self.buffer, &mut self.line).map_err(io)? {
                    Some(text) => text,
                    None => return Ok(None),
                },
            };
            if text.trim().is_empty() || is_header(&text) {
                continue;
            }
            let line = self.line;
            let Some((at, session, command, argument)) = general_line(&text) else {
                return Err(CaptureError::Malformed {
                    path: self.name.clone(),
                    line,
                    what: format!("not an entry of a general query log: {}", shortened(&text, 80)),
                });
            };
            let (session, command) = (session, command.to_string());
            let mut argument = argument.to_string();
            // A statement's further lines, up to the next entry.
            loop {
                match read_line(self.input.as_mut(), &mut self.buffer, &mut self.line).map_err(io)? {
                    Some(next) if general_line(&next).is_none() && !is_header(&next) => {
                        argument.push('\n');
                        argument.push_str(&next);
                    }
                    next => {
                        self.ahead = next;
                        break;
                    }
                }
            }
            if at.is_some() {
                self.now = at;
            }
            let Some(at) = self.now else {
                return Err(CaptureError::Malformed {
                    path: self.name.clone(),
                    line,
                    what: "an entry before any time in the log".into(),
                });
            };
            let event = |kind| Ok(Some(Event { at, session: session.clone(), line, kind }));
            match command.as_str() {
                "Connect" | "Change user" => {
                    let (user, database) = connect_argument(&argument);
                    self.users.insert(session.clone(), user.clone());
                    return event(EventKind::Connect { user, database });
                }
                "Quit" => {
                    self.users.remove(&session);
                    return event(EventKind::Disconnect);
                }
                "Init DB" => return event(EventKind::UseDatabase { database: argument.trim().to_string() }),
                "Query" | "Execute" => {
                    return event(EventKind::Statement(Statement {
                        sql: argument,
                        parameters: Vec::new(),
                        extended: command == "Execute",
                        duration_us: None,
                        user: self.users.get(&session).cloned().flatten(),
                        database: None,
                    }));
                }
                // A prepared statement's text and its end: its Execute carries the values bound into the text.
                "Prepare" | "Close stmt" | "Reset stmt" => continue,
                other => {
                    return event(EventKind::Skipped(Skip {
                        reason: format!("{other}: a protocol command, not SQL"),
                        text: shortened(&argument, 120),
                    }));
                }
            }
        }
    }
}

/// The slow query log with `long_query_time = 0`: per statement a `# ` header (time, user, connection, schema,
/// `Query_time`) and its text, with `use db;` and `SET timestamp=...;` before it.
pub(crate) struct SlowReader {
    name: String,
    input: Box<dyn BufRead>,
    buffer: Vec<u8>,
    line: u64,
    ahead: Option<String>,
    /// The last `# Time:` (MariaDB writes one only when the second changes).
    now: Option<i64>,
    /// Each connection's database, so a `use` that changes it is an event.
    databases: std::collections::HashMap<String, String>,
    /// An event made but not yet given (a `use` comes before its statement).
    queued: Option<Event>,
}

impl SlowReader {
    pub(crate) fn new(name: &str, input: Box<dyn BufRead>) -> SlowReader {
        SlowReader {
            name: name.to_string(),
            input,
            buffer: Vec::new(),
            line: 0,
            ahead: None,
            now: None,
            databases: Default::default(),
            queued: None,
        }
    }
}

/// The value after `key` in a slow log header line (`# Thread_id: 5  Schema: test`).
fn header_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)? + key.len();
    line[at..].split_whitespace().next()
}

impl CaptureReader for SlowReader {
    fn format(&self) -> LogFormat {
        LogFormat::MySqlSlow
    }

    fn next_event(&mut self) -> Result<Option<Event>, CaptureError> {
        if let Some(event) = self.queued.take() {
            return Ok(Some(event));
        }
        loop {
            let io = |source| CaptureError::Io { path: self.name.clone(), source };
            // One entry: its header lines, then its text up to the next header.
            let (mut user, mut session, mut schema, mut query_time, mut start) = (None, None, None, None, None);
            let mut body: Vec<String> = Vec::new();
            let mut first_line = None;
            loop {
                let text = match self.ahead.take() {
                    Some(text) => text,
                    None => match read_line(self.input.as_mut(), &mut self.buffer, &mut self.line).map_err(io)? {
                        Some(text) => text,
                        None => break,
                    },
                };
                if is_header(&text) || (text.trim().is_empty() && body.is_empty()) {
                    continue;
                }
                let header = text.starts_with("# ");
                if header && !body.is_empty() {
                    self.ahead = Some(text);
                    break;
                }
                first_line.get_or_insert(self.line);
                if let Some(time) = text.strip_prefix("# Time: ") {
                    self.now = crate::time::mariadb(time).or_else(|| crate::time::iso(time.trim()));
                } else if text.starts_with("# User@Host: ") {
                    user = header_value(&text, "# User@Host: ").map(|u| u.split('[').next().unwrap_or(u).to_string());
                    session = session.or(header_value(&text, " Id: ").map(str::to_string));
                } else if header {
                    session = session.or(header_value(&text, "Thread_id: ").map(str::to_string));
                    schema = schema.or(header_value(&text, "Schema: ").map(str::to_string));
                    query_time = query_time.or(header_value(&text, "Query_time: ").and_then(|q| q.parse::<f64>().ok()));
                } else if let Some(seconds) = text.strip_prefix("SET timestamp=").and_then(|t| t.strip_suffix(';')) {
                    start = seconds.parse::<f64>().ok().map(|s| (s * 1e6).round() as i64);
                } else {
                    body.push(text);
                }
            }
            let Some(line) = first_line else { return Ok(None) };
            let malformed = |what: String| CaptureError::Malformed { path: self.name.clone(), line, what };
            let Some(session) = session else {
                return Err(malformed("an entry without its connection (Thread_id or Id)".into()));
            };
            let at = start.or(self.now).ok_or_else(|| malformed("an entry without a time".into()))?;
            let mut text = body.join("\n");
            // `use shop;` before the statement sets its database.
            if let Some(rest) = text.strip_prefix("use ")
                && let Some((database, after)) = rest.split_once(';')
            {
                schema = Some(database.trim().trim_matches('`').to_string());
                text = after.trim_start().to_string();
            }
            let sql = text.trim_end().strip_suffix(';').unwrap_or(text.trim_end()).to_string();
            if sql.starts_with("# administrator command:") || sql.is_empty() {
                continue;
            }
            let statement = Event {
                at,
                session: session.clone(),
                line,
                kind: EventKind::Statement(Statement {
                    sql,
                    parameters: Vec::new(),
                    extended: false,
                    duration_us: query_time.map(|q| (q * 1e6).round() as u64),
                    user,
                    database: schema.clone(),
                }),
            };
            if let Some(database) = schema
                && self.databases.get(&session) != Some(&database)
            {
                self.databases.insert(session.clone(), database.clone());
                self.queued = Some(statement);
                return Ok(Some(Event { at, session, line, kind: EventKind::UseDatabase { database } }));
            }
            return Ok(Some(statement));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_log_lines_name_their_connection_and_command() {
        let (at, id, command, argument) =
            general_line("241202 15:30:00\t     5 Connect\troot@localhost on test using TCP/IP").unwrap();
        assert!(at.is_some());
        assert_eq!((id.as_str(), command), ("5", "Connect"));
        assert_eq!(connect_argument(argument), (Some("root".into()), Some("test".into())));
        assert_eq!(connect_argument("app@10.0.0.1 on  using TCP/IP"), (Some("app".into()), None));
        let (at, id, command, argument) = general_line("\t\t    12 Init DB\tshop").unwrap();
        assert_eq!((at, id.as_str(), command, argument), (None, "12", "Init DB", "shop"));
        assert_eq!(general_line("\t\t     5 Quit\t").map(|l| l.2), Some("Quit"));
        assert_eq!(general_line("2026-12-02T15:30:00.123456Z\t    8 Query\tselect 1").map(|l| l.3), Some("select 1"));
        assert!(general_line("from orders where id = 5").is_none());
        assert!(general_line("\t\t     5 Frobnicate\tx").is_none());
    }
}
