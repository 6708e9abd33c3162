//! One step of `envbench htap`: transactional users as `envbench oltp` runs them, and beside them analytic streams,
//! each on its own connection running the 22 queries in its own order, over and over. Both share one measured
//! window: the transactional step's (or, with no transactional users, a window of the same ramp and length). A query
//! counts when it started and ended inside the window; one past `--query-timeout` is cancelled by the server and
//! counted; the queries still running when the window closes are cancelled and not counted.

use crate::queries::{self, QUERIES};
use envbench_base::latency::{HistogramDocument, LatencyHistogram};
use envbench_core::sampler::StepObserver;
use envbench_oltp::{MeasuredStep, OltpError, users::StepSettings};
use envbench_sql::{DatabaseUrl, ErrorKind, Interrupter, Namespace};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The application name of the analytic streams' sessions.
pub const ANALYTICS_APPLICATION: &str = "envbench-htap analytics";

/// What one step runs.
pub struct HtapStepSettings<'a> {
    pub url: &'a DatabaseUrl,
    pub namespace: &'a Namespace,
    /// The transactional users' settings (`users` may be 0: the analytics alone).
    pub oltp: StepSettings,
    pub streams: u32,
    /// The number of the first stream, across a fleet's hosts (each stream's order of the queries follows its
    /// number); 0 on a single host.
    pub first_stream: u32,
    /// The most a query may take before the server cancels it.
    pub query_timeout: Duration,
}

/// The figures of one query in a step's measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryFigures {
    /// 1 to 22.
    pub query: usize,
    /// Runs that ended in the window.
    pub count: u64,
    pub median_ms: f64,
    pub p95_ms: f64,
    pub max_ms: f64,
    /// Runs the server cancelled at the query timeout.
    pub timeouts: u64,
    pub failures: u64,
}

/// The analytic streams' figures of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalyticFigures {
    pub streams: u32,
    pub measured_seconds: f64,
    /// Queries that ended in the window.
    pub completed: u64,
    pub timeouts: u64,
    pub failures: u64,
    /// Queries still running when the window closed: cut off, not counted (a window shorter than the queries
    /// completes none of them).
    #[serde(default)]
    pub unfinished: u64,
    /// Queries completed per hour of the window, over all streams (a QphH-style rate over the 22).
    pub queries_per_hour: f64,
    pub queries: Vec<QueryFigures>,
    pub first_failure: Option<String>,
}

/// What a step's streams counted, query by query: exact, so that a fleet's hosts add up.
#[derive(Clone, Debug)]
pub struct AnalyticTally {
    pub streams: u32,
    pub measured_seconds: f64,
    /// Per query, in query order: the time of each run that ended in the window, the runs cancelled at the query
    /// timeout, and those that failed.
    pub latency: Vec<LatencyHistogram>,
    pub timeouts: Vec<u64>,
    pub failures: Vec<u64>,
    /// The runs still going when the window closed.
    pub unfinished: u64,
    pub first_failure: Option<String>,
}

/// An [`AnalyticTally`] as a fleet's agent reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TallyDocument {
    pub streams: u32,
    pub measured_seconds: f64,
    pub latency: Vec<HistogramDocument>,
    pub timeouts: Vec<u64>,
    pub failures: Vec<u64>,
    #[serde(default)]
    pub unfinished: u64,
    pub first_failure: Option<String>,
}

impl AnalyticTally {
    /// Nothing counted yet, for `streams` streams over `measured_seconds`.
    pub fn new(streams: u32, measured_seconds: f64) -> AnalyticTally {
        AnalyticTally {
            streams,
            measured_seconds,
            latency: (0..QUERIES).map(|_| LatencyHistogram::new()).collect(),
            timeouts: vec![0; QUERIES],
            failures: vec![0; QUERIES],
            unfinished: 0,
            first_failure: None,
        }
    }

    pub fn to_document(&self) -> TallyDocument {
        TallyDocument {
            streams: self.streams,
            measured_seconds: self.measured_seconds,
            latency: self.latency.iter().map(LatencyHistogram::to_document).collect(),
            timeouts: self.timeouts.clone(),
            failures: self.failures.clone(),
            unfinished: self.unfinished,
            first_failure: self.first_failure.clone(),
        }
    }

    /// The tally a document holds, or what is wrong with it.
    pub fn from_document(document: &TallyDocument) -> Result<AnalyticTally, String> {
        if [document.latency.len(), document.timeouts.len(), document.failures.len()] != [QUERIES; 3] {
            return Err(format!("its analytic figures are not of the {QUERIES} queries"));
        }
        Ok(AnalyticTally {
            streams: document.streams,
            measured_seconds: document.measured_seconds,
            latency: document.latency.iter().map(LatencyHistogram::from_document).collect(),
            timeouts: document.timeouts.clone(),
            failures: document.failures.clone(),
            unfinished: document.unfinished,
            first_failure: document.first_failure.clone(),
        })
    }

    /// Add another host's tally of the same step: its streams and runs count too; the window is the longest.
    pub fn merge(&mut self, other: &AnalyticTally) {
        self.streams += other.streams;
        self.measured_seconds = self.measured_seconds.max(other.measured_seconds);
        for (mine, theirs) in self.latency.iter_mut().zip(&other.latency) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.timeouts.iter_mut().zip(&other.timeouts) {
            *mine += theirs;
        }
        for (mine, theirs) in self.failures.iter_mut().zip(&other.failures) {
            *mine += theirs;
        }
        self.unfinished += other.unfinished;
        if self.first_failure.is_none() {
            self.first_failure.clone_from(&other.first_failure);
        }
    }

    /// The step's figures: each query's, and the queries per hour over all streams.
    pub fn figures(&self) -> AnalyticFigures {
        let seconds = self.measured_seconds;
        let queries: Vec<QueryFigures> = (0..QUERIES)
            .map(|index| {
                let h = &self.latency[index];
                let ms = |ns: u64| ns as f64 / 1e6;
                QueryFigures {
                    query: index + 1,
                    count: h.count(),
                    median_ms: ms(h.quantile_ns(0.5)),
                    p95_ms: ms(h.quantile_ns(0.95)),
                    max_ms: ms(h.max_ns()),
                    timeouts: self.timeouts[index],
                    failures: self.failures[index],
                }
            })
            .collect();
        let completed: u64 = queries.iter().map(|q| q.count).sum();
        AnalyticFigures {
            streams: self.streams,
            measured_seconds: seconds,
            completed,
            timeouts: self.timeouts.iter().sum(),
            failures: self.failures.iter().sum(),
            unfinished: self.unfinished,
            queries_per_hour: if seconds > 0.0 { completed as f64 * 3600.0 / seconds } else { 0.0 },
            queries,
            first_failure: self.first_failure.clone(),
        }
    }
}

/// One step's outcome: the transactional users' (none when there were none) and the analytic streams'.
pub struct StepOutcome {
    pub oltp: Option<MeasuredStep>,
    pub analytics: AnalyticTally,
}

/// The measured window as the transactional step's coordinator announces it; passes the news on.
struct Window<'a> {
    inner: &'a dyn StepObserver,
    from: OnceLock<Instant>,
    to: OnceLock<Instant>,
}

impl StepObserver for Window<'_> {
    fn step_started(&self, name: &str) {
        let _ = self.from.set(Instant::now());
        self.inner.step_started(name);
    }

    fn step_finished(&self, name: &str) {
        let _ = self.to.set(Instant::now());
        self.inner.step_finished(name);
    }
}

/// One run of a query by a stream.
struct QueryRun {
    query: usize,
    started: Instant,
    ended: Instant,
    outcome: Result<(), (ErrorKind, String)>,
}

/// What the streams share.
struct Streams<'a> {
    settings: &'a HtapStepSettings<'a>,
    texts: Vec<String>,
    go: AtomicBool,
    stop: AtomicBool,
    interrupters: Mutex<Vec<Interrupter>>,
    fatal: Mutex<Option<OltpError>>,
}

/// One analytic stream: connect, wait for the start, run its order of the queries until told to stop.
fn stream(
    shared: &Streams<'_>,
    index: u32,
    connected: std::sync::mpsc::Sender<Result<(), OltpError>>,
) -> Vec<QueryRun> {
    let settings = shared.settings;
    let connection = settings.namespace.connect(settings.url, ANALYTICS_APPLICATION).and_then(|mut c| {
        c.set_statement_timeout(Some(settings.query_timeout))?;
        Ok(c)
    });
    let mut connection = match connection {
        Ok(mut connection) => {
            if let Some(interrupter) = connection.interrupter() {
                shared.interrupters.lock().expect("not poisoned").push(interrupter);
            }
            let _ = connected.send(Ok(()));
            connection
        }
        Err(error) => {
            let _ = connected.send(Err(error.into()));
            return Vec::new();
        }
    };
    drop(connected);
    while !shared.go.load(Ordering::SeqCst) {
        if shared.stop.load(Ordering::SeqCst) {
            return Vec::new();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let order = queries::permutation(shared.settings.first_stream + index);
    let mut runs = Vec::new();
    'streaming: loop {
        for &query in &order {
            if shared.stop.load(Ordering::SeqCst) {
                break 'streaming;
            }
            let started = Instant::now();
            let result = connection.query(&shared.texts[query - 1], &[]);
            let ended = Instant::now();
            let outcome = match result {
                Ok(_) => Ok(()),
                Err(error) if matches!(error.kind, ErrorKind::Unreachable | ErrorKind::Refused) => {
                    if !shared.stop.load(Ordering::SeqCst) {
                        shared.fatal.lock().expect("not poisoned").get_or_insert(error.into());
                        shared.stop.store(true, Ordering::SeqCst);
                    }
                    break 'streaming;
                }
                Err(error) => Err((error.kind, error.message)),
            };
            runs.push(QueryRun { query, started, ended, outcome });
        }
    }
    runs
}

/// Run one step: the analytic streams start, then the transactional users' step (or, without users, a window of
/// the same ramp and length) measures; the streams are stopped and their running queries cancelled when it ends.
/// `Ok(None)` when the user interrupted it.
pub fn run_step(
    settings: &HtapStepSettings<'_>,
    name: &str,
    observer: &dyn StepObserver,
    interrupt: &AtomicBool,
    on_tick: &(dyn Fn(&str) + Sync),
) -> Result<Option<StepOutcome>, OltpError> {
    let shared = Streams {
        settings,
        texts: queries::texts(settings.namespace),
        go: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        interrupters: Mutex::new(Vec::new()),
        fatal: Mutex::new(None),
    };
    let window = Window { inner: observer, from: OnceLock::new(), to: OnceLock::new() };
    let (oltp, runs) =
        std::thread::scope(|scope| -> Result<(Option<Option<MeasuredStep>>, Vec<QueryRun>), OltpError> {
            let (sender, receiver) = std::sync::mpsc::channel();
            let handles: Vec<_> = (0..settings.streams)
                .map(|index| {
                    let (shared, sender) = (&shared, sender.clone());
                    scope.spawn(move || stream(shared, index, sender))
                })
                .collect();
            drop(sender);
            let connected: Result<(), OltpError> = receiver.iter().collect();
            let oltp = match connected {
                Err(error) => Err(error),
                Ok(()) => {
                    shared.go.store(true, Ordering::SeqCst);
                    // `Some(figures)`: measured (`Some(None)` without transactional users); `None`: interrupted.
                    if settings.oltp.users > 0 {
                        envbench_oltp::users::run_step(settings.url, &settings.oltp, name, &window, interrupt, on_tick)
                            .map(|step| step.map(Some))
                    } else {
                        Ok(analytics_window(&settings.oltp, name, &window, interrupt, &shared.stop, on_tick)
                            .then_some(None))
                    }
                }
            };
            // Stop the streams: each ends at its next query, and the queries running are cancelled (again while any
            // stream is still running, for a query that began as the stop was given).
            shared.stop.store(true, Ordering::SeqCst);
            while !handles.iter().all(|h| h.is_finished()) {
                for interrupter in shared.interrupters.lock().expect("not poisoned").iter() {
                    interrupter();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let mut runs = Vec::new();
            for handle in handles {
                runs.extend(handle.join().map_err(|_| OltpError::Other("an analytic stream panicked".into()))?);
            }
            if let Some(error) = shared.fatal.lock().expect("not poisoned").take() {
                return Err(error);
            }
            Ok((oltp?, runs))
        })?;
    let Some(oltp) = oltp else { return Ok(None) };
    let (Some(&from), Some(&to)) = (window.from.get(), window.to.get()) else { return Ok(None) };
    Ok(Some(StepOutcome { oltp, analytics: tally(settings.streams, from, to, &runs) }))
}

/// The measured window of a step without transactional users: the same ramp-up and length, announced to the
/// observer as the users' step announces its own. False when interrupted (or a stream's server went away).
fn analytics_window(
    settings: &StepSettings,
    name: &str,
    window: &Window<'_>,
    interrupt: &AtomicBool,
    stop: &AtomicBool,
    on_tick: &(dyn Fn(&str) + Sync),
) -> bool {
    let start = Instant::now();
    let wait = |until: Instant, phase: &str| -> bool {
        let mut last = Instant::now();
        loop {
            if interrupt.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst) {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            std::thread::sleep((until - now).min(Duration::from_millis(100)));
            if last.elapsed() >= Duration::from_secs(1) {
                let left = until.saturating_duration_since(Instant::now()).as_secs_f64();
                on_tick(&format!("{name} {phase}: {left:>3.0}s left, analytic streams only"));
                last = Instant::now();
            }
        }
    };
    if !wait(start + settings.ramp, "ramp-up") {
        return false;
    }
    window.step_started(name);
    let completed = wait(start + settings.ramp + settings.duration, "measuring");
    window.step_finished(name);
    completed
}

/// What the streams counted over the window `from`..`to`.
fn tally(streams: u32, from: Instant, to: Instant, runs: &[QueryRun]) -> AnalyticTally {
    let mut tally = AnalyticTally::new(streams, (to - from).as_secs_f64());
    // A run that began before the window (in the ramp) and outlasted it was running all through it.
    tally.unfinished = runs.iter().filter(|r| r.started <= to && r.ended > to).count() as u64;
    for run in runs.iter().filter(|r| r.started >= from && r.started <= to) {
        let index = run.query - 1;
        match &run.outcome {
            Ok(()) if run.ended <= to => {
                tally.latency[index].record_ns(u64::try_from((run.ended - run.started).as_nanos()).unwrap_or(u64::MAX));
            }
            Ok(()) => {}
            // Cancelled by the server at the query timeout; one cancelled at the window's end is not counted.
            Err((ErrorKind::Cancelled, _)) if run.ended <= to => tally.timeouts[index] += 1,
            Err((ErrorKind::Cancelled, _)) => {}
            Err((_, message)) => {
                tally.failures[index] += 1;
                tally.first_failure.get_or_insert_with(|| format!("Q{}: {message}", run.query));
            }
        }
    }
    tally
}
