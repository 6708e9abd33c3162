//! A capture replayed on a target: each captured session on a connection of its own, each statement sent at its
//! captured offset from the start (the gaps divided by `--speed`, or none at `--speed max`), timed as the open loop
//! times a request: the response from its intended start, the service from its send, and the schedule's lag
//! between them. Read-only: every session is made read-only on the server before its first statement, and what
//! writes is counted and never sent.
//!
//! The log is read as the replay goes, a second ahead of the schedule, so a capture of any length replays in the
//! memory of its open sessions and a second of statements.

use crate::capture::{CaptureError, EventKind};
use crate::classify::{StatementKind, classify};
use crate::formats::CaptureReader;
use envbench_base::latency::LatencyHistogram;
use envbench_base::wait::sleep_until;
use envbench_sql::{Connection, DbError, Interrupter};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::{Duration, Instant};

/// How far ahead of its time a statement is handed to its session.
const LOOKAHEAD: Duration = Duration::from_secs(1);

/// Statements a session may have waiting before the log's reader waits for it.
const SESSION_QUEUE: usize = 4096;

/// How the captured gaps are kept.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// Every gap divided by this factor (1: as captured).
    Factor(f64),
    /// No gaps: each session sends its next statement when the last is done.
    Max,
}

impl Speed {
    /// `1`, `2.5`, `max`; a factor from 0.01 to 1000.
    pub fn parse(text: &str) -> Result<Speed, String> {
        if text == "max" {
            return Ok(Speed::Max);
        }
        match text.parse::<f64>() {
            Ok(factor) if (0.01..=1000.0).contains(&factor) => Ok(Speed::Factor(factor)),
            _ => Err(format!("--speed {text}: give a factor from 0.01 to 1000 (2 halves every gap), or max")),
        }
    }

    pub fn words(self) -> String {
        match self {
            Speed::Factor(factor) => format!("{factor}x"),
            Speed::Max => "max".into(),
        }
    }
}

/// How a capture is replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayOptions {
    pub speed: Speed,
    /// Only the sessions working in this captured database; every session when `None`.
    pub database: Option<String>,
}

/// What one fingerprint did in a replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FingerprintOutcome {
    pub fingerprint: String,
    pub kind: StatementKind,
    /// Statements sent, and of them those the target refused, by kind of error.
    pub calls: u64,
    pub errors: BTreeMap<String, u64>,
    /// Writes counted and not sent.
    pub skipped: u64,
    /// Each sent statement's response time (from its intended start), in milliseconds, in the order they ended.
    pub response_ms: Vec<f64>,
    /// The sum of their service times (from the send), in milliseconds.
    pub service_ms: f64,
    /// The server's own time for the captured statements, in milliseconds, and how many the log timed.
    pub captured_ms: f64,
    pub captured_timed: u64,
}

/// A replay's outcome: per fingerprint, and how faithful it was.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayOutcome {
    pub speed: Speed,
    /// The capture's first event (microseconds since the Unix epoch) and its statements: what tells two captures
    /// apart.
    pub first_at: Option<i64>,
    pub captured_statements: u64,
    pub fingerprints: Vec<FingerprintOutcome>,
    /// The sessions replayed: every captured one, or those that worked in the database asked for.
    pub sessions: u64,
    /// Statements sent; writes skipped; what the capture holds that no replay can send; statements the target refused.
    pub replayed: u64,
    pub skipped_writes: u64,
    pub not_replayable: u64,
    pub failed: u64,
    /// Statements of other databases than the one asked for, left out.
    pub other_databases: u64,
    /// Sessions that could not connect, and why (the first).
    pub connect_failures: u64,
    pub connect_error: Option<String>,
    /// How late statements were sent against the schedule, in milliseconds.
    pub lag_p50_ms: f64,
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    /// The capture's span and the replay's, in seconds.
    pub captured_seconds: f64,
    pub replayed_seconds: f64,
    /// The most sessions open at once, as captured and as replayed.
    pub captured_peak: u64,
    pub replayed_peak: u64,
    pub interrupted: bool,
}

/// What the log's reader hands a session.
enum Work {
    Run { sql: String, parameters: Option<Vec<Option<String>>>, intended: Instant, fingerprint: usize },
}

/// What one session measured of one fingerprint: calls, errors by kind, response times (ms), service time (ms).
#[derive(Default)]
struct Calls {
    count: u64,
    errors: BTreeMap<String, u64>,
    response_ms: Vec<f64>,
    service_ms: f64,
}

/// What one session measured.
#[derive(Default)]
struct SessionStats {
    per_fingerprint: HashMap<usize, Calls>,
    lag: LatencyHistogram,
    connect_error: Option<String>,
}

/// One captured session on its own connection, made read-only before its first statement.
fn session(
    work: Receiver<Work>,
    connect: &(dyn Fn() -> Result<Box<dyn Connection>, DbError> + Sync),
    interrupt: &AtomicBool,
    open: &AtomicU64,
    peak: &AtomicU64,
    cancels: &Mutex<Vec<Interrupter>>,
) -> SessionStats {
    let mut stats = SessionStats::default();
    let mut connection: Option<Box<dyn Connection>> = None;
    let mut refused: Option<DbError> = None;
    for Work::Run { sql, parameters, intended, fingerprint } in work {
        // Connected as soon as the first statement is handed over, a second ahead of its time, so connecting is
        // not counted against it.
        if connection.is_none() && refused.is_none() {
            match connect().and_then(|mut c| {
                let guard = c.dialect().ops().read_only_session;
                c.batch(guard).map(|()| c)
            }) {
                Ok(mut c) => {
                    // Ctrl-C cancels what the session is running, so it ends without waiting for a long statement.
                    if let Some(cancel) = c.interrupter() {
                        cancels.lock().unwrap_or_else(|e| e.into_inner()).push(cancel);
                    }
                    connection = Some(c);
                    let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                }
                Err(e) => {
                    stats.connect_error = Some(e.to_string());
                    refused = Some(e);
                }
            }
        }
        if !sleep_until(intended, interrupt) {
            break;
        }
        let send = Instant::now();
        let result = match (&mut connection, &refused) {
            (Some(c), _) => c.run_captured(&sql, parameters.as_deref()),
            (None, Some(e)) => Err(e.clone()),
            (None, None) => unreachable!("a session either connected or was refused"),
        };
        let end = Instant::now();
        let calls = stats.per_fingerprint.entry(fingerprint).or_default();
        calls.count += 1;
        if let Err(e) = result {
            *calls.errors.entry(e.kind.name().to_string()).or_default() += 1;
        }
        calls.response_ms.push((end - intended).as_secs_f64() * 1e3);
        calls.service_ms += (end - send).as_secs_f64() * 1e3;
        stats.lag.record_ns((send.saturating_duration_since(intended)).as_nanos() as u64);
    }
    if connection.take().is_some() {
        open.fetch_sub(1, Ordering::SeqCst);
    }
    stats
}

/// Replay the capture `reader` reads on connections `connect` makes, until its end or `interrupt`.
pub fn replay(
    reader: &mut dyn CaptureReader,
    connect: &(dyn Fn() -> Result<Box<dyn Connection>, DbError> + Sync),
    options: &ReplayOptions,
    interrupt: &AtomicBool,
) -> Result<ReplayOutcome, CaptureError> {
    let speed = options.speed;
    // Each session's database as the capture says it, where it says.
    let mut databases: HashMap<String, String> = HashMap::new();
    let mut other_databases = 0u64;
    // The sessions that worked in the database asked for.
    let mut selected_sessions: std::collections::HashSet<String> = Default::default();
    let (open, peak) = (AtomicU64::new(0), AtomicU64::new(0));
    let cancels: Mutex<Vec<Interrupter>> = Mutex::new(Vec::new());
    let mut fingerprints: Vec<FingerprintOutcome> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut last: HashMap<String, usize> = HashMap::new();
    let (mut sessions_seen, mut captured_open, mut captured_peak) = (0u64, 0u64, 0u64);
    let (mut skipped_writes, mut not_replayable, mut captured_statements) = (0u64, 0u64, 0u64);
    let mut first_at: Option<i64> = None;
    let mut last_at = 0i64;
    // The schedule starts a second from now, so the first sessions are connected by their first statement's time.
    let started = match speed {
        Speed::Factor(_) => Instant::now() + LOOKAHEAD,
        Speed::Max => Instant::now(),
    };
    let results = std::thread::scope(|scope| -> Result<Vec<SessionStats>, CaptureError> {
        let mut senders: HashMap<String, SyncSender<Work>> = HashMap::new();
        let mut handles = Vec::new();
        let mut captured_sessions: std::collections::HashSet<String> = Default::default();
        while let Some(event) = reader.next_event()? {
            if interrupt.load(Ordering::SeqCst) {
                break;
            }
            let first = *first_at.get_or_insert(event.at);
            last_at = last_at.max(event.at);
            let offset = Duration::from_micros((event.at - first).max(0) as u64);
            let intended = match speed {
                Speed::Factor(factor) => started + offset.div_f64(factor),
                Speed::Max => started,
            };
            let session_key = event.session.clone();
            let statement = match event.kind {
                EventKind::Disconnect => {
                    // The session's connection closes once it has sent what it was given.
                    senders.remove(&session_key);
                    databases.remove(&session_key);
                    if captured_sessions.remove(&session_key) {
                        captured_open -= 1;
                    }
                    continue;
                }
                EventKind::Skipped(_) => {
                    not_replayable += 1;
                    last.remove(&session_key);
                    continue;
                }
                EventKind::Duration { us } => {
                    if let Some(at) = last.remove(&session_key) {
                        fingerprints[at].captured_ms += us as f64 / 1e3;
                        fingerprints[at].captured_timed += 1;
                    }
                    continue;
                }
                EventKind::Connect { database, .. } => {
                    if let Some(database) = database {
                        databases.insert(session_key.clone(), database);
                    }
                    None
                }
                EventKind::UseDatabase { database } => {
                    databases.insert(session_key.clone(), database);
                    None
                }
                EventKind::Statement(statement) => Some(statement),
            };
            if captured_sessions.insert(session_key.clone()) {
                if options.database.is_none() {
                    sessions_seen += 1;
                }
                captured_open += 1;
                captured_peak = captured_peak.max(captured_open);
            }
            let Some(statement) = statement else { continue };
            if let Some(database) = &statement.database {
                databases.insert(session_key.clone(), database.clone());
            }
            if let Some(wanted) = &options.database
                && databases.get(&session_key) != Some(wanted)
            {
                other_databases += 1;
                continue;
            }
            if options.database.is_some() && selected_sessions.insert(session_key.clone()) {
                sessions_seen += 1;
            }
            captured_statements += 1;
            let fingerprint = crate::fingerprint::fingerprint(&statement.sql);
            let at = *index.entry(fingerprint.clone()).or_insert_with(|| {
                let kind = classify(&fingerprint);
                fingerprints.push(FingerprintOutcome {
                    fingerprint,
                    kind,
                    calls: 0,
                    errors: BTreeMap::new(),
                    skipped: 0,
                    response_ms: Vec::new(),
                    service_ms: 0.0,
                    captured_ms: 0.0,
                    captured_timed: 0,
                });
                fingerprints.len() - 1
            });
            if let Some(us) = statement.duration_us {
                fingerprints[at].captured_ms += us as f64 / 1e3;
                fingerprints[at].captured_timed += 1;
                last.remove(&session_key);
            } else {
                last.insert(session_key.clone(), at);
            }
            if fingerprints[at].kind == StatementKind::Write {
                fingerprints[at].skipped += 1;
                skipped_writes += 1;
                continue;
            }
            // Handed over a second ahead of its time, so the log is never read further ahead than that.
            if speed != Speed::Max && !sleep_until(intended - LOOKAHEAD, interrupt) {
                break;
            }
            let sender = senders.entry(session_key).or_insert_with(|| {
                let (sender, receiver) = sync_channel(SESSION_QUEUE);
                let (open, peak, cancels) = (&open, &peak, &cancels);
                handles.push(scope.spawn(move || session(receiver, connect, interrupt, open, peak, cancels)));
                sender
            });
            let parameters = statement.extended.then_some(statement.parameters);
            // A session whose queue is full is behind: wait for it, but never past an interrupt. A session that
            // stopped (interrupted) has dropped its receiver: nothing more to send it.
            let mut work = Work::Run { sql: statement.sql, parameters, intended, fingerprint: at };
            loop {
                match sender.try_send(work) {
                    Err(std::sync::mpsc::TrySendError::Full(back)) if !interrupt.load(Ordering::SeqCst) => {
                        work = back;
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    _ => break,
                }
            }
        }
        drop(senders);
        if interrupt.load(Ordering::SeqCst) {
            for cancel in cancels.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                cancel();
            }
        }
        Ok(handles.into_iter().map(|h| h.join().expect("a replay session panicked")).collect())
    })?;
    let mut lag = LatencyHistogram::new();
    let (mut replayed, mut failed, mut connect_failures) = (0u64, 0u64, 0u64);
    let mut connect_error = None;
    for stats in results {
        lag.merge(&stats.lag);
        if let Some(error) = stats.connect_error {
            connect_failures += 1;
            connect_error.get_or_insert(error);
        }
        for (at, calls) in stats.per_fingerprint {
            let outcome = &mut fingerprints[at];
            outcome.calls += calls.count;
            replayed += calls.count;
            for (kind, count) in calls.errors {
                failed += count;
                *outcome.errors.entry(kind).or_default() += count;
            }
            outcome.response_ms.extend(calls.response_ms);
            outcome.service_ms += calls.service_ms;
        }
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    Ok(ReplayOutcome {
        speed,
        first_at,
        captured_statements,
        fingerprints,
        sessions: sessions_seen,
        replayed,
        skipped_writes,
        not_replayable,
        failed,
        other_databases,
        connect_failures,
        connect_error,
        lag_p50_ms: ms(lag.quantile_ns(0.5)),
        lag_p99_ms: ms(lag.quantile_ns(0.99)),
        lag_max_ms: ms(lag.max_ns()),
        captured_seconds: first_at.map_or(0.0, |first| (last_at - first) as f64 / 1e6),
        replayed_seconds: Instant::now().saturating_duration_since(started).as_secs_f64(),
        captured_peak,
        replayed_peak: peak.load(Ordering::SeqCst),
        interrupted: interrupt.load(Ordering::SeqCst),
    })
}
