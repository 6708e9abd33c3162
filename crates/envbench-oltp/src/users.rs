//! One step of virtual users, HammerDB style: each user has its own connection and home warehouse and runs
//! transactions back to back (or with the specification's keying and think times); a ramp-up, then a measured
//! window in which every transaction's latency goes into a histogram of its kind, the database's own counters are
//! read at both ends, and a per-second throughput series runs through the whole step. Deadlocks and serialization
//! failures are rolled back and run again, and counted.
//!
//! With keying and think times, a terminal sends about one transaction in 20 seconds, so a server is only busy
//! with thousands of them. A user may then drive several clients (`clients_per_user`, HammerDB's asynchronous
//! scaling): each client is a terminal of its own (its own home warehouse, random stream, keying and thinking), and
//! the user's clients share its one connection as an application's sessions share a pool, so U users serve U × K
//! terminals over U connections. A client's response time runs from the moment it submits (the end of its keying
//! time), so the time it waits for its user's connection is in it, as a terminal would see it; that wait is also
//! given on its own, to tell a busy driver from a slow server.
//!
//! With a rate (`--rate`), the loop is open instead ([`crate::arrivals`]): each user's transactions arrive on a
//! schedule whatever the database does, a transaction's response time runs from its intended start and its service
//! time from when the session took it, and transactions still meant for the measured window when it closes are
//! finished (up to a limit) rather than dropped, so the stall a closed loop would hide is measured.

use crate::arrivals::{LATE_AFTER, OpenLoop, Schedule};
use crate::error::OltpError;
use crate::figures::{
    Causes, ClientsFigures, KindFigures, MeasuredStep, OpenCounts, OpenLoopTally, StepFigures, open_figures,
};
use crate::mix::Mix;
use crate::profile::Profile;
use crate::random::{NuRandConstants, Random, Zipf};
use crate::routines::{self, Calls, Mode};
use crate::telemetry::{self, Counters, USER_APPLICATION};
use crate::transactions::{self, Kind, Outcome, Statements, Terminal};
use envbench_base::latency::LatencyHistogram;
use envbench_base::wait::sleep_until;
use envbench_sql::{Connection, DatabaseUrl, DbError, ErrorKind, Isolation, Namespace};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How many times a transaction that hits a deadlock, a serialization failure or another conflict runs at most before
/// it counts as failed (`--max-tries`; 11: ten retries).
pub const DEFAULT_MAX_TRIES: u32 = 11;

/// How long an open-loop step goes on after its measured window to finish the transactions meant to start in it: as
/// long as the window, from 10 s to a minute. What is not started by then is counted as never started.
pub fn drain_limit(duration: Duration) -> Duration {
    duration.clamp(Duration::from_secs(10), Duration::from_secs(60))
}

/// What one step runs.
#[derive(Clone, Debug)]
pub struct StepSettings {
    pub profile: Profile,
    /// The namespace the profile's tables are in.
    pub namespace: Namespace,
    pub users: u32,
    /// The number of the step's first user: 0, or on a fleet the users that other hosts run before this one's (a
    /// user's number picks its home warehouse and its random stream).
    pub first_user: u32,
    /// Warehouses (TPC-C) or pgbench's scale (TPC-B).
    pub scale: i64,
    pub ramp: Duration,
    pub duration: Duration,
    pub keying_thinking: bool,
    /// HammerDB's "use all warehouses": each transaction of a user works in a warehouse drawn from all of them, not
    /// in the user's home warehouse, so the working set is the whole database.
    pub all_warehouses: bool,
    /// The share of each TPC-C transaction.
    pub mix: Mix,
    /// A count-based step (HammerDB's "total transactions per user"): each user ends after this many transactions
    /// and the step when every user has; `duration` is then only the longest it may take, and there is no ramp.
    pub transactions_per_user: Option<u64>,
    /// Statements from the client, or one call of a stored routine per transaction.
    pub mode: Mode,
    /// Clients (terminals) each user drives over its one connection: 1, or more with keying and thinking.
    pub clients_per_user: u32,
    /// The NuRand constants of the load, from which the run's are derived.
    pub load_constants: NuRandConstants,
    pub seed: u64,
    /// Open-loop arrivals (`--rate`); `None`: a closed loop, each user's next transaction sent when its last ends.
    pub open: Option<OpenLoop>,
    /// How many times a transaction that fails on a conflict runs at most (`--max-tries`).
    pub max_tries: u32,
    /// The isolation of the users' sessions (`--isolation`; `None`: the server's default).
    pub isolation: Option<Isolation>,
    /// TPC-B's accounts drawn with a Zipfian skew (`--skew`; `None`: uniformly, as pgbench's built-in does).
    pub skew: Option<Zipf>,
}

impl StepSettings {
    /// The kinds of transaction the step runs ([`Mix::kinds`]).
    pub fn kinds(&self) -> Vec<Kind> {
        self.mix.kinds(self.profile)
    }
}

/// One user's tally.
struct Tally {
    histograms: BTreeMap<Kind, LatencyHistogram>,
    /// How long measured transactions waited for the user's connection after their client submitted them.
    waits: LatencyHistogram,
    rolled_back: BTreeMap<Kind, u64>,
    /// Retries and failures by kind of transaction and of error (their counts are these summed).
    retried_by: BTreeMap<Kind, Causes>,
    failed_by: BTreeMap<Kind, Causes>,
    per_second: Vec<u64>,
    first_failure: Option<String>,
    /// Open loop: service times, the schedule's lag, and what became of the arrivals meant for the window.
    service: BTreeMap<Kind, LatencyHistogram>,
    lag: LatencyHistogram,
    open: OpenCounts,
    /// Transactions that ended inside the measured window, whenever they were meant to start (an open loop's achieved
    /// rate).
    ended_in_window: u64,
}

impl Tally {
    /// Count a transaction that ended in second `second` of the step.
    fn count_second(&mut self, second: usize) {
        if self.per_second.len() <= second {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += 1;
    }

    fn new(kinds: &[Kind], seconds: usize) -> Tally {
        Tally {
            histograms: kinds.iter().map(|&k| (k, LatencyHistogram::new())).collect(),
            waits: LatencyHistogram::new(),
            rolled_back: BTreeMap::new(),
            retried_by: BTreeMap::new(),
            failed_by: BTreeMap::new(),
            per_second: vec![0; seconds],
            first_failure: None,
            service: kinds.iter().map(|&k| (k, LatencyHistogram::new())).collect(),
            lag: LatencyHistogram::new(),
            open: OpenCounts::default(),
            ended_in_window: 0,
        }
    }

    fn merge(&mut self, other: Tally) {
        for (mine, theirs) in [(&mut self.histograms, other.histograms), (&mut self.service, other.service)] {
            for (kind, histogram) in theirs {
                mine.get_mut(&kind).expect("same kinds").merge(&histogram);
            }
        }
        self.waits.merge(&other.waits);
        self.lag.merge(&other.lag);
        for (mine, theirs) in [(&mut self.retried_by, other.retried_by), (&mut self.failed_by, other.failed_by)] {
            for (kind, causes) in theirs {
                let sums = mine.entry(kind).or_default();
                for (cause, n) in causes {
                    *sums.entry(cause).or_insert(0) += n;
                }
            }
        }
        self.open.add(other.open);
        self.ended_in_window += other.ended_in_window;
        for (kind, n) in other.rolled_back {
            *self.rolled_back.entry(kind).or_insert(0) += n;
        }
        if self.per_second.len() < other.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (i, n) in other.per_second.into_iter().enumerate() {
            self.per_second[i] += n;
        }
        if self.first_failure.is_none() {
            self.first_failure = other.first_failure;
        }
    }
}

/// The step's clock, set when every user is connected.
#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    measure_from: Instant,
    measure_to: Instant,
}

/// Settings of a user's session: SQLite in WAL with every commit synced (`synchronous=FULL`), so the storage's sync
/// latency shows as it does for a durable database.
pub fn session_settings(connection: &mut dyn Connection) -> Result<(), DbError> {
    if let Some(settings) = connection.dialect().ops().durable_session {
        connection.batch(settings)?;
    }
    Ok(())
}

/// The process's CPU time so far (user and system), in seconds.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes only into the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// New orders so far: the sum of the districts' next order ids (as HammerDB counts them).
fn new_orders(connection: &mut dyn Connection, settings: &StepSettings) -> Result<Option<f64>, OltpError> {
    match settings.profile {
        Profile::Tpcc => Ok(connection
            .query_optional(
                &format!("SELECT SUM(d_next_o_id) FROM {}", settings.namespace.qualify("tpcc_district")),
                &[],
            )?
            .map(|row| row.real(0))
            .transpose()?),
        Profile::Tpcb => Ok(None),
    }
}

/// Everything the step's coordinator shares with the users.
struct Shared<'a> {
    url: &'a DatabaseUrl,
    settings: &'a StepSettings,
    window: OnceLock<Window>,
    go: AtomicBool,
    stop: AtomicBool,
    ended: AtomicU64,
    /// Users that ran their count of transactions (count-based steps).
    finished: AtomicU64,
    fatal: Mutex<Option<OltpError>>,
    /// Each user's figures since the live metrics were last published (empty unless an endpoint serves them).
    live: Vec<Mutex<crate::live::LiveTally>>,
    seconds: usize,
    /// Stops the wait-event sampler at the end of the measured window.
    sampler_stop: AtomicBool,
}

/// One client of a user (a terminal, in TPC-C's words): its random stream, home warehouse and next transaction, and
/// when it submits that transaction.
struct Client {
    random: Random,
    terminal: Terminal,
    kind: Kind,
    /// When the client submits its next transaction: after its keying time, or when its schedule says (open loop).
    due: Instant,
    /// Transactions it ran.
    done: u64,
    /// Open loop: the intended start times of its transactions.
    schedule: Option<Schedule>,
}

impl Client {
    /// Client `number` of the step (users numbered first, then their clients), whose first keying begins at `start`.
    /// Each number has its own random stream, and the clients are spread over the warehouses (number mod W + 1), so a
    /// user of one client draws what it always drew.
    fn new(settings: &StepSettings, number: u64, constants: NuRandConstants, start: Instant) -> Client {
        let random = Random::new(settings.seed ^ (number + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15), constants);
        let home = (number % settings.scale.max(1) as u64) as i64 + 1;
        let terminal = Terminal { home, scale: settings.scale, skew: settings.skew };
        let schedule = settings.open.as_ref().map(|open| Schedule::new(open, number as u32, start, settings.seed));
        let mut client =
            Client { random, terminal, kind: settings.profile.judged_kind(), due: start, done: 0, schedule };
        client.next(settings, start);
        client
    }

    /// Choose the next transaction at `from` (the end of the last one and its think time): its kind, its warehouse
    /// when transactions go to any, and when it is submitted, after its keying time.
    fn next(&mut self, settings: &StepSettings, from: Instant) {
        self.kind = match settings.profile {
            Profile::Tpcc => settings.mix.pick(&mut self.random),
            Profile::Tpcb => Kind::TpcB,
        };
        if settings.all_warehouses {
            self.terminal.home = self.random.range(1, settings.scale);
        }
        self.due = match &self.schedule {
            Some(schedule) => schedule.due(),
            None => {
                let keying = if settings.keying_thinking { self.kind.keying_and_thinking().0 } else { 0.0 };
                from + Duration::from_secs_f64(keying)
            }
        };
    }

    /// Choose the next transaction after one ended (or was skipped) at `ended`: an open loop's next arrival, or a
    /// closed loop's after the think time.
    fn after(&mut self, settings: &StepSettings, ended: Instant) {
        let thinking = if settings.keying_thinking {
            Duration::from_secs_f64(self.random.think_seconds(self.kind.keying_and_thinking().1))
        } else {
            Duration::ZERO
        };
        if let Some(schedule) = self.schedule.as_mut() {
            schedule.advance();
        }
        self.next(settings, ended + thinking);
    }
}

/// One virtual user: connect, wait for the start, run its clients' transactions until the window closes.
fn user(shared: &Shared<'_>, index: u32, connected: mpsc::Sender<Result<(), OltpError>>) -> Tally {
    let settings = shared.settings;
    let mut tally = Tally::new(&settings.kinds(), shared.seconds);
    let connection = settings.namespace.connect(shared.url, USER_APPLICATION).and_then(|mut c| {
        session_settings(c.as_mut())?;
        if let Some(level) = settings.isolation {
            let statement = c.dialect().isolation_statement(level).map_err(|e| DbError::new(ErrorKind::Refused, e))?;
            c.batch(&statement)?;
        }
        // Procedures mode's calls, made once: a server without stored routines refuses here, never runs as a client.
        let calls = match settings.mode {
            Mode::Procedures => Some(Calls::new(&settings.namespace)?),
            Mode::Client => None,
        };
        Ok((c, calls))
    });
    let (mut connection, calls) = match connection {
        Ok(connection) => {
            let _ = connected.send(Ok(()));
            connection
        }
        Err(error) => {
            let _ = connected.send(Err(error.into()));
            return tally;
        }
    };
    drop(connected);
    while !shared.go.load(Ordering::SeqCst) {
        if shared.stop.load(Ordering::SeqCst) {
            return tally;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let window = *shared.window.get().expect("the window is set before the go");
    let constants = NuRandConstants::run(settings.load_constants, settings.seed);
    let statements = Statements::new(&settings.namespace);
    let per_user = settings.clients_per_user.max(1);
    // A user's clients start spread evenly over the ramp-up, so every one is running when the measuring begins.
    let mut clients: Vec<Client> = (0..per_user)
        .map(|j| {
            let number = u64::from(index) * u64::from(per_user) + u64::from(j);
            let start = window.start + settings.ramp.mul_f64(f64::from(j) / f64::from(per_user));
            Client::new(settings, number, constants, start)
        })
        .collect();
    let stop = &shared.stop;
    // This user's live figures, when an endpoint serves them.
    let live = shared.live.get((index - settings.first_user) as usize);
    // The retries' waits draw from a stream of their own, so a retry leaves the transactions' inputs as they were.
    let mut jitter = envbench_base::rng::FastRng::new(settings.seed ^ 0x0bac_c0ff ^ u64::from(index));
    loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        // The client due first, of those with transactions left to run.
        let Some(client) = clients
            .iter_mut()
            .filter(|c| settings.transactions_per_user.is_none_or(|count| c.done < count))
            .min_by_key(|c| c.due)
        else {
            break;
        };
        let intended = client.due;
        if intended >= window.measure_to || !sleep_until(intended, stop) {
            break;
        }
        let kind = client.kind;
        let started = Instant::now();
        // Open loop: what became of the arrivals meant for the measured window.
        let open_measured = settings.open.is_some() && intended >= window.measure_from;
        if let Some(open) = &settings.open {
            let lag = started.saturating_duration_since(intended);
            tally.open.scheduled += u64::from(open_measured);
            if open.latency_limit.is_some_and(|limit| lag > limit) {
                tally.open.skipped += u64::from(open_measured);
                if let Some(live) = live {
                    live.lock().unwrap_or_else(|e| e.into_inner()).skipped += 1;
                }
                client.after(settings, started);
                continue;
            }
            if open_measured {
                tally.lag.record_ns(nanos(lag));
                tally.open.late += u64::from(lag > LATE_AFTER);
            }
            if lag > LATE_AFTER
                && let Some(live) = live
            {
                live.lock().unwrap_or_else(|e| e.into_inner()).late += 1;
            }
        }
        client.done += 1;
        // One client of a closed loop: its transaction starts when it is sent. Several: when its client submitted
        // it, so the wait for the user's connection is part of the response time. An open loop's: when it was meant
        // to start, so the wait behind a stalled transaction is part of it.
        let submitted = if per_user == 1 && settings.open.is_none() { started } else { intended };
        let mut retry_causes: Vec<&'static str> = Vec::new();
        let result = loop {
            let result = match calls.as_ref() {
                Some(calls) => routines::run(kind, connection.as_mut(), calls, &mut client.random, client.terminal),
                None => transactions::run(kind, connection.as_mut(), &statements, &mut client.random, client.terminal),
            };
            match result {
                Ok(outcome) => break Ok(outcome),
                Err(error) => {
                    match calls.as_ref() {
                        Some(calls) => calls.end_after_error(connection.as_mut()),
                        None => {
                            let _ = connection.rollback();
                        }
                    }
                    let tries = retry_causes.len() as u32 + 1;
                    if error.is_retry() && tries < settings.max_tries && !stop.load(Ordering::SeqCst) {
                        retry_causes.push(error.kind.name());
                        std::thread::sleep(backoff(&mut jitter, tries));
                        continue;
                    }
                    break Err(error);
                }
            }
        };
        let ended = Instant::now();
        if let Some(live) = live {
            let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
            if result.is_ok() {
                live.response.entry(kind).or_default().record_ns(nanos(ended - submitted));
            }
            for cause in &retry_causes {
                *live.retries.entry(cause).or_insert(0) += 1;
            }
            if let Err(error) = &result {
                *live.failures.entry(error.kind.name()).or_insert(0) += 1;
            }
        }
        // An open loop measures every transaction meant for the window, however late it ends.
        let measured = open_measured || (submitted >= window.measure_from && ended <= window.measure_to);
        if measured && !retry_causes.is_empty() {
            let causes = tally.retried_by.entry(kind).or_default();
            for cause in retry_causes {
                *causes.entry(cause.to_string()).or_insert(0) += 1;
            }
        }
        match result {
            Ok(outcome) => {
                shared.ended.fetch_add(1, Ordering::Relaxed);
                tally.count_second((ended - window.start).as_secs() as usize);
                tally.ended_in_window += u64::from(ended >= window.measure_from && ended < window.measure_to);
                if measured {
                    let response = ended - submitted;
                    tally.histograms.get_mut(&kind).expect("a kind of the profile").record_ns(nanos(response));
                    if let Some(open) = &settings.open {
                        tally.service.get_mut(&kind).expect("a kind of the profile").record_ns(nanos(ended - started));
                        tally.open.over_limit += u64::from(open.latency_limit.is_some_and(|limit| response > limit));
                    }
                    if per_user > 1 {
                        tally.waits.record_ns(nanos(started.saturating_duration_since(submitted)));
                    }
                    if outcome == Outcome::RolledBack {
                        *tally.rolled_back.entry(kind).or_insert(0) += 1;
                    }
                }
            }
            Err(error) if matches!(error.kind, ErrorKind::Unreachable | ErrorKind::Refused) => {
                // The connection is gone or the server refuses the work: the step cannot go on.
                shared.fatal.lock().expect("not poisoned").get_or_insert(error.into());
                stop.store(true, Ordering::SeqCst);
                break;
            }
            Err(error) => {
                if measured {
                    *tally.failed_by.entry(kind).or_default().entry(error.kind.name().to_string()).or_insert(0) += 1;
                }
                tally.first_failure.get_or_insert_with(|| format!("{}: {}", kind.name(), error.message));
            }
        }
        client.after(settings, ended);
    }
    // Open loop: the arrivals meant for the window that the step ended before starting.
    for schedule in clients.iter_mut().filter_map(|c| c.schedule.as_mut()) {
        let unstarted = schedule.count_until(window.measure_from, window.measure_to);
        tally.open.unstarted += unstarted;
        tally.open.scheduled += unstarted;
    }
    shared.finished.fetch_add(1, Ordering::SeqCst);
    tally
}

/// How long to wait before running again a transaction that failed its `tries`th try on a conflict: a random wait up
/// to a bound that doubles with each try from 1 ms to [`MAX_BACKOFF`], so transactions that collided do not collide
/// again at once (the wait is part of the transaction's response time, as an application's retry loop's would be).
fn backoff(jitter: &mut envbench_base::rng::FastRng, tries: u32) -> Duration {
    let bound = Duration::from_millis(1).saturating_mul(1 << (tries.saturating_sub(1)).min(16)).min(MAX_BACKOFF);
    Duration::from_nanos(jitter.below(bound.as_nanos() as u64 + 1))
}

/// The longest wait before a retry.
pub const MAX_BACKOFF: Duration = Duration::from_millis(100);

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// Run one step of `settings.users` virtual users. `Ok(None)` when the user interrupted it (its figures are not
/// kept). `observer` hears the measured window as step `name`; `on_tick` gets a progress line every second.
pub fn run_step(
    url: &DatabaseUrl,
    settings: &StepSettings,
    name: &str,
    observer: &dyn envbench_core::sampler::StepObserver,
    interrupt: &AtomicBool,
    on_tick: &(dyn Fn(&str) + Sync),
) -> Result<Option<MeasuredStep>, OltpError> {
    let mut monitor = settings.namespace.connect(url, "envbench-oltp monitor")?;
    // The seconds the per-second series holds from the start (it grows past them: a count-based step's length is
    // not known before).
    let seconds = match settings.transactions_per_user {
        Some(_) => 60,
        None => (settings.ramp + settings.duration).as_secs() as usize + 2,
    };
    let shared = Shared {
        url,
        settings,
        window: OnceLock::new(),
        go: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        ended: AtomicU64::new(0),
        finished: AtomicU64::new(0),
        fatal: Mutex::new(None),
        seconds,
        sampler_stop: AtomicBool::new(false),
        live: if envbench_core::live::enabled() {
            (0..settings.users).map(|_| Mutex::new(crate::live::LiveTally::default())).collect()
        } else {
            Vec::new()
        },
    };
    let outcome = std::thread::scope(|scope| -> Result<Option<(Tally, Measurement)>, OltpError> {
        let (sender, receiver) = mpsc::channel();
        let handles: Vec<_> = (0..settings.users)
            .map(|index| {
                let (shared, sender) = (&shared, sender.clone());
                scope.spawn(move || user(shared, settings.first_user + index, sender))
            })
            .collect();
        drop(sender);
        let mut connect_error = None;
        for result in receiver.iter() {
            if let Err(error) = result {
                connect_error.get_or_insert(error);
            }
        }
        let measurement = match connect_error {
            Some(error) => Err(error),
            None => coordinate(&shared, monitor.as_mut(), name, observer, interrupt, on_tick, scope),
        };
        shared.stop.store(true, Ordering::SeqCst);
        let mut tally = Tally::new(&settings.kinds(), seconds);
        for handle in handles {
            tally.merge(handle.join().map_err(|_| OltpError::Other("a virtual user panicked".into()))?);
        }
        if let Some(error) = shared.fatal.lock().expect("not poisoned").take() {
            return Err(error);
        }
        Ok(measurement?.map(|m| (tally, m)))
    })?;
    let Some((tally, measurement)) = outcome else {
        return Ok(None);
    };
    Ok(Some(figures(settings, tally, measurement)))
}

/// What the coordinator measured around the window.
struct Measurement {
    seconds: f64,
    new_orders: Option<f64>,
    cpu_seconds: f64,
    server: Counters,
    /// Why a server figure is unknown (a counter that went backwards over the window).
    server_note: Option<String>,
    wait_events: BTreeMap<String, u64>,
}

/// The monitor's own statements in the run's database between its two reads of the commit counter: the rest of one
/// snapshot after the read (the WAL position, the server's version once, the checkpoints), and the order count
/// before the next read.
const MONITOR_STATEMENTS: u64 = 4;

fn coordinate<'scope>(
    shared: &'scope Shared<'_>,
    monitor: &mut dyn Connection,
    name: &str,
    observer: &dyn envbench_core::sampler::StepObserver,
    interrupt: &AtomicBool,
    on_tick: &(dyn Fn(&str) + Sync),
    scope: &'scope std::thread::Scope<'scope, '_>,
) -> Result<Option<Measurement>, OltpError> {
    let settings = shared.settings;
    let start = Instant::now();
    let window =
        Window { start, measure_from: start + settings.ramp, measure_to: start + settings.ramp + settings.duration };
    let _ = shared.window.set(window);
    shared.go.store(true, Ordering::SeqCst);
    // Wake every second to show progress; stop early on an interrupt or a user's fatal error, and a count-based
    // step when every user has run its count.
    let all_finished = || shared.finished.load(Ordering::SeqCst) >= u64::from(settings.users);
    let wait = |until: Instant, phase: &str| -> bool {
        let mut last = (Instant::now(), shared.ended.load(Ordering::Relaxed));
        loop {
            if interrupt.load(Ordering::SeqCst) || shared.stop.load(Ordering::SeqCst) {
                return false;
            }
            let now = Instant::now();
            if now >= until || (settings.transactions_per_user.is_some() && all_finished()) {
                return true;
            }
            std::thread::sleep((until - now).min(Duration::from_millis(100)));
            if last.0.elapsed() >= Duration::from_secs(1) {
                let ended = shared.ended.load(Ordering::Relaxed);
                let rate = (ended - last.1) as f64 / last.0.elapsed().as_secs_f64();
                let left = match settings.transactions_per_user {
                    Some(count) => format!("{ended} of {} transactions", count * u64::from(settings.users)),
                    None => format!("{:>3.0}s left", until.saturating_duration_since(Instant::now()).as_secs_f64()),
                };
                on_tick(&format!("{name} {phase}: {left}, {rate:.0} transactions/s"));
                crate::live::publish_live(&shared.live, settings.open.as_ref(), name, phase, ended, rate);
                last = (Instant::now(), ended);
            }
        }
    };
    if !wait(window.measure_from, "ramp-up") {
        return Ok(None);
    }
    let before = (new_orders(monitor, settings)?, telemetry::snapshot(monitor)?, process_cpu_seconds(), Instant::now());
    observer.step_started(name);
    let sampler = shared.url.dialect().ops().wait_events.then(|| {
        let (url, namespace, stop) = (shared.url, &settings.namespace, &shared.sampler_stop);
        scope.spawn(move || match namespace.connect(url, "envbench-oltp monitor") {
            Ok(mut connection) => telemetry::sample_wait_events(connection.as_mut(), stop),
            Err(_) => (BTreeMap::new(), 0),
        })
    });
    let completed = wait(window.measure_to, crate::live::MEASURING);
    // The database's counts are read as the window ends, before anything else is waited for (the wait-event
    // sampler sleeps up to 100 ms), so they cover the window the users' tallies do.
    let after = if completed {
        let seconds = before.3.elapsed().as_secs_f64();
        Some((new_orders(monitor, settings), telemetry::snapshot(monitor), process_cpu_seconds(), seconds))
    } else {
        None
    };
    envbench_core::live::clear_prefix("envbench_oltp_");
    shared.sampler_stop.store(true, Ordering::SeqCst);
    let (wait_events, sampled) = sampler.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
    observer.step_finished(name);
    let Some((after_orders, after_counters, after_cpu, seconds)) = after else {
        return Ok(None);
    };
    let cpu_seconds = after_cpu - before.2;
    let after_orders = after_orders?;
    let (server, backwards) = telemetry::delta(&before.1, &after_counters?);
    let server = telemetry::without_own(server, sampled + MONITOR_STATEMENTS);
    let server_note = (!backwards.is_empty()).then(|| {
        format!(
            "the server's {} went backwards over the window (its statistics were reset, or it restarted): unknown \
             for this step",
            backwards.join(", ")
        )
    });
    // An open loop finishes the transactions meant for the window that are still running or waiting.
    if settings.open.is_some() {
        let deadline = Instant::now() + drain_limit(settings.duration);
        let mut shown = Instant::now();
        while shared.finished.load(Ordering::SeqCst) < u64::from(settings.users) && Instant::now() < deadline {
            // The window is measured: an interrupt stops the finishing, and what was not started is counted so.
            if interrupt.load(Ordering::SeqCst) || shared.stop.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
            if shown.elapsed() >= Duration::from_secs(1) {
                let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
                on_tick(&format!("{name} finishing the transactions meant for the window: at most {left:>3.0}s left"));
                shown = Instant::now();
            }
        }
    }
    Ok(Some(Measurement {
        seconds,
        new_orders: before.0.zip(after_orders).map(|(b, a)| a - b),
        cpu_seconds,
        server,
        server_note,
        wait_events,
    }))
}

fn figures(settings: &StepSettings, tally: Tally, measurement: Measurement) -> MeasuredStep {
    let minutes = measurement.seconds / 60.0;
    let kinds: Vec<KindFigures> = tally
        .histograms
        .iter()
        .map(|(&kind, h)| {
            let causes = |map: &BTreeMap<Kind, Causes>| map.get(&kind).cloned().unwrap_or_default();
            let (retried, failed) = (causes(&tally.retried_by), causes(&tally.failed_by));
            let rolled_back = tally.rolled_back.get(&kind).copied().unwrap_or(0);
            let counts = [rolled_back, failed.values().sum(), retried.values().sum()];
            let service = settings.open.is_some().then(|| &tally.service[&kind]);
            KindFigures::of(kind, h, counts).detailed(service, &retried, &failed)
        })
        .collect();
    let transactions: u64 = kinds.iter().map(|k| k.count).sum();
    let ramp_seconds = settings.ramp.as_secs_f64();
    let last_second = match settings.transactions_per_user {
        Some(_) => (ramp_seconds + measurement.seconds).ceil() as usize,
        None => (ramp_seconds + settings.duration.as_secs_f64()).ceil() as usize,
    };
    let per_second: Vec<f64> = tally.per_second.iter().take(last_second).map(|&n| n as f64).collect();
    let open = settings.open.as_ref().map(|open| {
        // The users were offered their share of the rate (a fleet agent's users are some of the step's), and achieved
        // what ended in the window, whenever it was meant to start.
        let offered = open.per_second * f64::from(settings.users) / f64::from(open.users.max(1));
        let achieved = tally.ended_in_window as f64 / settings.duration.as_secs_f64().max(1e-9);
        let limit_ms = open.latency_limit.map(|limit| limit.as_secs_f64() * 1e3);
        open_figures([offered, achieved], open.arrivals, limit_ms, &tally.open, &tally.lag)
    });
    let figures = StepFigures {
        users: settings.users,
        measured_seconds: measurement.seconds,
        nopm: measurement.new_orders.map(|n| n / minutes),
        // Open loop: TPM counts what ended in the window, not what was meant for it (finished after it, too).
        tpm: open.as_ref().map_or(transactions as f64 / minutes, |o| o.achieved_tps * 60.0),
        db_tpm: measurement.server.get(telemetry::COMMITS).map(|c| c / minutes),
        server_tpm: measurement.server.get(telemetry::SERVER_TRANSACTIONS).map(|c| c / minutes),
        transactions,
        retries: kinds.iter().map(|k| k.retries).sum(),
        failures: kinds.iter().map(|k| k.failures).sum(),
        kinds,
        per_second,
        ramp_seconds,
        client_cpu_percent: measurement.cpu_seconds / measurement.seconds * 100.0,
        client_cpu_us_per_transaction: if transactions == 0 {
            0.0
        } else {
            measurement.cpu_seconds * 1e6 / transactions as f64
        },
        server: measurement.server,
        server_note: measurement.server_note,
        wait_events: measurement.wait_events,
        first_failure: tally.first_failure,
        clients: (settings.clients_per_user > 1).then(|| ClientsFigures::of(settings.clients_per_user, &tally.waits)),
        open,
        slo: Vec::new(),
    };
    let waits = (settings.clients_per_user > 1).then_some(tally.waits);
    let open = settings.open.is_some().then_some(OpenLoopTally { service: tally.service, lag: tally.lag });
    MeasuredStep { figures, latency: tally.histograms, waits, open }
}
