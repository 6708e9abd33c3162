//! A capture replayed on a target: each captured session on a connection of its own, each statement sent at its
//! captured offset from the start (the gaps divided by `--speed`), timed as oltp's open loop (`--rate`) times a
//! request: the response from its intended start, the service from its send, the schedule's lag between them, and
//! late past [`LATE_AFTER`], with the same interruptible wait. The schedule is the capture's own times, not drawn
//! arrivals. At `--speed max` each session is a closed loop: it sends its next statement when the last is done, and
//! a statement's response time runs from its send. Read-only unless writes are allowed: every session is made
//! read-only on the server before its first statement, and what writes is counted and never sent.
//!
//! The log is read as the replay goes, a second ahead of the schedule, so a capture of any length replays in the
//! memory of its open sessions and a second of statements.

use crate::capture::{CaptureError, EventKind};
use crate::classify::{StatementKind, classify};
use crate::formats::CaptureReader;
use crate::sessions::Sessions;
use envbench_base::latency::LatencyHistogram;
use envbench_base::wait::{LATE_AFTER, sleep_until};
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
    /// Where each captured database's statements go: target `i` takes the database `routes[i]` names, and a `None`
    /// takes every database no other names. A statement of a database no target takes is counted and left out.
    pub routes: Vec<Option<String>>,
    /// Send the statements that write too, on sessions that are not made read-only.
    pub allow_writes: bool,
}

impl ReplayOptions {
    /// Every session on one target, read-only.
    pub fn one_target(speed: Speed) -> ReplayOptions {
        ReplayOptions { speed, routes: vec![None], allow_writes: false }
    }

    /// The target that takes statements of `database`, if any.
    fn route(&self, database: Option<&str>) -> Option<usize> {
        database
            .and_then(|d| self.routes.iter().position(|r| r.as_deref() == Some(d)))
            .or_else(|| self.routes.iter().position(Option::is_none))
    }
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

/// The most sessions open at once in each interval of a replay, as captured and as replayed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Concurrency {
    /// Each interval's length, in seconds of the replay's schedule (the captured time divided by the speed).
    pub interval_seconds: f64,
    /// As captured, on the replay's schedule; empty at `--speed max`, which keeps no schedule.
    pub captured: Vec<u64>,
    pub replayed: Vec<u64>,
}

impl Concurrency {
    /// The intervals in which the replay held fewer sessions open than the capture did.
    pub fn short_intervals(&self) -> usize {
        self.captured.iter().zip(&self.replayed).filter(|(captured, replayed)| replayed < captured).count()
    }
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
    /// The sessions replayed: every captured one, or those that worked in the databases asked for.
    pub sessions: u64,
    /// Statements sent; writes skipped (or, with writes allowed, none); what the capture holds that no replay can
    /// send; statements the target refused.
    pub replayed: u64,
    pub skipped_writes: u64,
    pub not_replayable: u64,
    pub failed: u64,
    /// Writes were sent, on sessions that were not read-only.
    pub writes_replayed: bool,
    /// Statements of databases no target takes, left out.
    pub other_databases: u64,
    /// Sessions that could not connect, and why (the first); the statements they were to send, not sent.
    pub connect_failures: u64,
    pub connect_error: Option<String>,
    pub not_connected: u64,
    /// Statements sent more than [`LATE_AFTER`] after their intended start, as oltp's open loop counts them late.
    pub late: u64,
    /// How late statements were sent against the schedule, in milliseconds (0 at `--speed max`).
    pub lag_p50_ms: f64,
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    /// The capture's span and the replay's, in seconds.
    pub captured_seconds: f64,
    pub replayed_seconds: f64,
    /// The most sessions open at once, as captured and as replayed, and over time.
    pub captured_peak: u64,
    pub replayed_peak: u64,
    pub concurrency: Concurrency,
    pub interrupted: bool,
}

/// The most intervals a replay's concurrency over time is told in.
const CONCURRENCY_INTERVALS: usize = 120;

/// What the log's reader hands a session.
enum Work {
    Run {
        sql: String,
        parameters: Option<Vec<Option<String>>>,
        intended: Instant,
        fingerprint: usize,
        target: usize,
    },
    /// The captured session connected at `intended` to the database target `target` takes: its connection opens
    /// then, whether or not it sends anything (a read-only replay skips a session's writes, not its connection).
    Open {
        intended: Instant,
        target: usize,
    },
    /// The captured session disconnected at `intended`: its connections close then, as the capture's did.
    End {
        intended: Instant,
    },
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
    late: u64,
    connect_error: Option<String>,
    /// Statements not sent because their connection was refused.
    not_connected: u64,
    /// When its first connection opened and its last closed, from the schedule's start, in seconds.
    span: Option<(f64, f64)>,
}

/// What every session shares: the schedule's start, Ctrl-C, the sessions open now and at most, and the means to
/// cancel what each is running.
struct Shared<'a> {
    connect: &'a (dyn Fn(usize) -> Result<Box<dyn Connection>, DbError> + Sync),
    allow_writes: bool,
    /// `--speed max`: each statement is timed from its send, as a closed loop times it.
    closed_loop: bool,
    started: Instant,
    interrupt: &'a AtomicBool,
    open: AtomicU64,
    peak: AtomicU64,
    cancels: Mutex<Vec<Interrupter>>,
}

impl Shared<'_> {
    /// A connection to target `target`, made read-only unless writes are allowed.
    fn connect(&self, target: usize) -> Result<Box<dyn Connection>, DbError> {
        let mut connection = (self.connect)(target)?;
        if !self.allow_writes {
            let guard = connection.dialect().ops().read_only_session;
            connection.batch(guard)?;
        }
        // Ctrl-C cancels what the session is running, so it ends without waiting for a long statement.
        if let Some(cancel) = connection.interrupter() {
            self.cancels.lock().unwrap_or_else(|e| e.into_inner()).push(cancel);
        }
        Ok(connection)
    }

    fn since_start(&self) -> f64 {
        Instant::now().saturating_duration_since(self.started).as_secs_f64()
    }
}

/// One captured session, on a connection of its own to each target its statements go to (one, unless the session
/// changed to a database another target takes).
fn session(work: Receiver<Work>, shared: &Shared<'_>) -> SessionStats {
    let mut stats = SessionStats::default();
    let mut connections: HashMap<usize, Result<Box<dyn Connection>, DbError>> = HashMap::new();
    for work in work {
        let (statement, intended, target) = match work {
            Work::Run { sql, parameters, intended, fingerprint, target } => {
                (Some((sql, parameters, fingerprint)), intended, target)
            }
            Work::Open { intended, target } => (None, intended, target),
            Work::End { intended } => {
                sleep_until(intended, shared.interrupt);
                break;
            }
        };
        // Connected as soon as its connection or first statement is handed over, a second ahead of its time, so
        // connecting is not counted against it.
        let connection = connections.entry(target).or_insert_with(|| {
            let connection = shared.connect(target);
            if let Err(e) = &connection {
                stats.connect_error.get_or_insert_with(|| e.to_string());
            }
            connection
        });
        let Ok(connection) = connection else {
            stats.not_connected += u64::from(statement.is_some());
            continue;
        };
        if !sleep_until(intended, shared.interrupt) {
            break;
        }
        // Open, as the capture counts a session, from its connection's time, or its first statement's when the
        // capture began after it connected (not from connecting, a second ahead of it).
        if stats.span.is_none() {
            let now = shared.open.fetch_add(1, Ordering::SeqCst) + 1;
            shared.peak.fetch_max(now, Ordering::SeqCst);
            let at = shared.since_start();
            stats.span = Some((at, at));
        }
        let Some((sql, parameters, fingerprint)) = statement else { continue };
        let send = Instant::now();
        let intended = if shared.closed_loop { send } else { intended };
        let result = connection.run_captured(&sql, parameters.as_deref());
        let end = Instant::now();
        let calls = stats.per_fingerprint.entry(fingerprint).or_default();
        calls.count += 1;
        if let Err(e) = result {
            *calls.errors.entry(e.kind.name().to_string()).or_default() += 1;
        }
        calls.response_ms.push((end - intended).as_secs_f64() * 1e3);
        calls.service_ms += (end - send).as_secs_f64() * 1e3;
        let lag = send.saturating_duration_since(intended);
        stats.lag.record_ns(lag.as_nanos() as u64);
        stats.late += u64::from(lag > LATE_AFTER);
    }
    drop(connections);
    if let Some((from, _)) = stats.span {
        shared.open.fetch_sub(1, Ordering::SeqCst);
        stats.span = Some((from, shared.since_start()));
    }
    stats
}

/// The queue of the captured session `key`, its thread started on first use.
fn session_sender<'scope, 'env, 'q>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    shared: &'scope Shared<'env>,
    senders: &'q mut HashMap<String, SyncSender<Work>>,
    handles: &mut Vec<std::thread::ScopedJoinHandle<'scope, SessionStats>>,
    key: String,
) -> &'q SyncSender<Work> {
    senders.entry(key).or_insert_with(|| {
        let (sender, receiver) = sync_channel(SESSION_QUEUE);
        handles.push(scope.spawn(move || session(receiver, shared)));
        sender
    })
}

/// Give `work` to its session. A session whose queue is full is behind: wait for it, but never past an interrupt. A
/// session that stopped (interrupted) has dropped its receiver: nothing more to send it.
fn hand_over(sender: &SyncSender<Work>, mut work: Work, interrupt: &AtomicBool) {
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

/// Replay the capture `reader` reads on connections `connect` makes to each target of `options.routes`, until its
/// end or `interrupt`.
pub fn replay(
    reader: &mut dyn CaptureReader,
    connect: &(dyn Fn(usize) -> Result<Box<dyn Connection>, DbError> + Sync),
    options: &ReplayOptions,
    interrupt: &AtomicBool,
) -> Result<ReplayOutcome, CaptureError> {
    let speed = options.speed;
    let mut captured: Sessions<usize> = Sessions::new();
    let mut other_databases = 0u64;
    // The sessions with a statement a target takes, when not every database has one.
    // The sessions of the databases a target takes, as captured: what the replay's sessions are held against.
    let mut routed: Sessions<()> = Sessions::new();
    let mut fingerprints: Vec<FingerprintOutcome> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let (mut skipped_writes, mut not_replayable, mut captured_statements) = (0u64, 0u64, 0u64);
    let mut first_at: Option<i64> = None;
    let mut last_at = 0i64;
    // The schedule starts a second from now, so the first sessions are connected by their first statement's time.
    let started = match speed {
        Speed::Factor(_) => Instant::now() + LOOKAHEAD,
        Speed::Max => Instant::now(),
    };
    let shared = Shared {
        connect,
        allow_writes: options.allow_writes,
        closed_loop: speed == Speed::Max,
        started,
        interrupt,
        open: AtomicU64::new(0),
        peak: AtomicU64::new(0),
        cancels: Mutex::new(Vec::new()),
    };
    let results = std::thread::scope(|scope| -> Result<Vec<SessionStats>, CaptureError> {
        let mut senders: HashMap<String, SyncSender<Work>> = HashMap::new();
        let mut handles = Vec::new();
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
            let was_routed = options.route(captured.database(&event.session)).is_some();
            captured.track(&event);
            // A disconnection ends a session wherever it last worked (nothing, for one `routed` does not hold).
            if was_routed
                || matches!(event.kind, EventKind::Disconnect)
                || options.route(captured.database(&event.session)).is_some()
            {
                routed.track(&event);
            }
            let statement = match event.kind {
                EventKind::Disconnect => {
                    // The session's connections close once it has sent what it was given, at the captured time.
                    if let Some(sender) = senders.remove(&event.session) {
                        hand_over(&sender, Work::End { intended }, interrupt);
                    }
                    continue;
                }
                EventKind::Skipped(_) => {
                    not_replayable += 1;
                    continue;
                }
                EventKind::Duration { us } => {
                    if let Some(at) = captured.take_pending(&event.session) {
                        fingerprints[at].captured_ms += us as f64 / 1e3;
                        fingerprints[at].captured_timed += 1;
                    }
                    continue;
                }
                EventKind::Connect { .. } => {
                    // The session's connection opens at its captured time, whatever it goes on to send.
                    if let Some(target) = options.route(captured.database(&event.session)) {
                        if speed != Speed::Max && !sleep_until(intended - LOOKAHEAD, interrupt) {
                            break;
                        }
                        let sender = session_sender(scope, &shared, &mut senders, &mut handles, event.session);
                        hand_over(sender, Work::Open { intended, target }, interrupt);
                    }
                    continue;
                }
                EventKind::UseDatabase { .. } => continue,
                EventKind::Statement(statement) => statement,
            };
            let Some(target) = options.route(captured.database(&event.session)) else {
                other_databases += 1;
                continue;
            };
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
                captured.take_pending(&event.session);
            } else {
                captured.await_duration(&event.session, at);
            }
            let skipped = fingerprints[at].kind == StatementKind::Write && !options.allow_writes;
            if skipped {
                fingerprints[at].skipped += 1;
                skipped_writes += 1;
                // A session whose connection the capture does not hold opens here, whatever it sends.
                if senders.contains_key(&event.session) {
                    continue;
                }
            }
            // Handed over a second ahead of its time, so the log is never read further ahead than that.
            if speed != Speed::Max && !sleep_until(intended - LOOKAHEAD, interrupt) {
                break;
            }
            let sender = session_sender(scope, &shared, &mut senders, &mut handles, event.session);
            if skipped {
                hand_over(sender, Work::Open { intended, target }, interrupt);
                continue;
            }
            let parameters = statement.extended.then_some(statement.parameters);
            hand_over(
                sender,
                Work::Run { sql: statement.sql, parameters, intended, fingerprint: at, target },
                interrupt,
            );
        }
        // Sessions the capture never ends stay open to its last moment, as captured.
        if let (Speed::Factor(factor), Some(first)) = (speed, first_at) {
            let end = Duration::from_micros((last_at - first).max(0) as u64).div_f64(factor);
            sleep_until(started + end, interrupt);
        }
        drop(senders);
        if interrupt.load(Ordering::SeqCst) {
            for cancel in shared.cancels.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                cancel();
            }
        }
        Ok(handles.into_iter().map(|h| h.join().expect("a replay session panicked")).collect())
    })?;
    let replayed_seconds = shared.since_start();
    let mut lag = LatencyHistogram::new();
    let mut late = 0u64;
    let (mut replayed, mut failed, mut connect_failures, mut not_connected) = (0u64, 0u64, 0u64, 0u64);
    let mut connect_error = None;
    let mut replayed_spans = Vec::new();
    for stats in results {
        lag.merge(&stats.lag);
        late += stats.late;
        not_connected += stats.not_connected;
        replayed_spans.extend(stats.span);
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
    let captured_seconds = first_at.map_or(0.0, |first| (last_at - first) as f64 / 1e6);
    let concurrency = {
        let span = match speed {
            Speed::Factor(factor) => (captured_seconds / factor).max(replayed_seconds),
            Speed::Max => replayed_seconds,
        };
        let interval_seconds = (span / CONCURRENCY_INTERVALS as f64).max(1.0).ceil();
        let intervals = ((span / interval_seconds).ceil() as usize).max(1);
        let captured = match (speed, first_at) {
            (Speed::Factor(factor), Some(first)) => {
                let on_schedule = |at: i64| (at - first) as f64 / 1e6 / factor;
                // The sessions of the databases replayed, as the replay's are.
                let spans: Vec<(f64, f64)> =
                    routed.all_spans(last_at).iter().map(|&(from, to)| (on_schedule(from), on_schedule(to))).collect();
                crate::sessions::concurrency(&spans, interval_seconds, intervals)
            }
            _ => Vec::new(),
        };
        let replayed = crate::sessions::concurrency(&replayed_spans, interval_seconds, intervals);
        Concurrency { interval_seconds, captured, replayed }
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    Ok(ReplayOutcome {
        speed,
        first_at,
        captured_statements,
        fingerprints,
        sessions: routed.seen,
        replayed,
        skipped_writes,
        not_replayable,
        failed,
        writes_replayed: options.allow_writes,
        other_databases,
        connect_failures,
        connect_error,
        not_connected,
        late,
        lag_p50_ms: ms(lag.quantile_ns(0.5)),
        lag_p99_ms: ms(lag.quantile_ns(0.99)),
        lag_max_ms: ms(lag.max_ns()),
        captured_seconds,
        replayed_seconds,
        captured_peak: routed.peak(last_at),
        replayed_peak: shared.peak.load(Ordering::SeqCst),
        concurrency,
        interrupted: interrupt.load(Ordering::SeqCst),
    })
}
