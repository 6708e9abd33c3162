//! The power test (one stream, RF1 before and RF2 after where the target can refresh) and the throughput test (S
//! concurrent streams, each running its query sets), written once against the [`Target`] trait.

use crate::error::TpchError;
use crate::params::{QueryOrder, QueryParameters, SeededRandom, query_order};
use crate::reference::check_sf1_answer;
use crate::refresh::UpdateSet;
use crate::results::{
    DERIVED_NOTE, ExecutionStatus, FailureReport, Metrics, Phase, QueryExecution, RefreshExecution, StreamOutcome,
    TpchOutcome,
};
use crate::targets::{LoadInfo, QueryFailure, Session, Target};
use envbench_core::sampler::StepObserver;
use envbench_core::stats::geometric_mean;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Salt that keeps query orders independent of the parameters drawn from the same seed.
const ORDER_SALT: u64 = 0x6f72_6465_7273;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub scale_factor: f64,
    /// Throughput streams; `None` uses the specification's minimum for the scale factor ([`default_users`]).
    pub users: Option<usize>,
    /// Query sets per throughput stream (at least 1).
    pub sets: usize,
    /// Use the specification's validation parameters instead of random ones (and, at SF 1, check the answers).
    pub validate: bool,
    /// Seed of the substitution parameters and seeded orders.
    pub seed: u64,
    pub query_timeout: Option<Duration>,
    pub order: QueryOrder,
    pub power: bool,
    pub throughput: bool,
}

impl RunOptions {
    /// The defaults for a scale factor: power and throughput, minimum streams, one set, random parameters.
    pub fn new(scale_factor: f64) -> RunOptions {
        RunOptions {
            scale_factor,
            users: None,
            sets: 1,
            validate: false,
            seed: 1,
            query_timeout: None,
            order: QueryOrder::Specification,
            power: true,
            throughput: true,
        }
    }
}

/// The TPC-H minimum number of throughput streams for a scale factor (clause 5.3.4): SF1:2, SF10:3, SF30:4,
/// SF100:5, SF300:6, SF1000:7, SF3000:8, SF10000:9, and 2 below SF 1.
pub fn default_users(scale_factor: f64) -> usize {
    const MINIMUMS: [(f64, usize); 8] =
        [(10_000.0, 9), (3_000.0, 8), (1_000.0, 7), (300.0, 6), (100.0, 5), (30.0, 4), (10.0, 3), (1.0, 2)];
    MINIMUMS.iter().find(|(sf, _)| scale_factor >= *sf).map(|(_, users)| *users).unwrap_or(2)
}

/// One finished query or refresh, for progress display.
#[derive(Clone, Debug)]
pub struct QueryEvent<'a> {
    pub phase: Phase,
    pub stream: usize,
    pub set: usize,
    /// `Q1`..`Q22`, `RF1`, `RF2`.
    pub what: String,
    pub elapsed_seconds: f64,
    pub status: &'a ExecutionStatus,
}

/// Run the power and/or throughput test on a prepared target. A failing query is recorded and its stream goes on;
/// an interrupt stops every stream after its current query and returns what was measured.
pub fn run(
    target: &dyn Target,
    load: LoadInfo,
    options: &RunOptions,
    interrupt: &AtomicBool,
    observer: &dyn StepObserver,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) -> Result<TpchOutcome, TpchError> {
    let users = check_options(options)?;
    let refresh = target.refresh_support().is_ok();
    let mut streams = Vec::new();
    if options.power {
        streams.push(power_test(target, options, refresh, interrupt, observer, on_event));
    }
    let mut throughput_seconds = None;
    if options.throughput && !interrupt.load(Ordering::SeqCst) {
        let (outcomes, seconds) =
            throughput_test(target, options, users, 1..=users, refresh, interrupt, observer, on_event);
        throughput_seconds = Some(seconds);
        streams.extend(outcomes);
    }
    Ok(outcome(target, load, options, users, streams, throughput_seconds, interrupt.load(Ordering::SeqCst)))
}

/// Check what a run needs of its options; the throughput test's streams.
pub fn check_options(options: &RunOptions) -> Result<usize, TpchError> {
    crate::scale::check_scale_factor(options.scale_factor)?;
    if options.sets == 0 {
        return Err(TpchError::BadOptions("--sets must be at least 1".into()));
    }
    let users = options.users.unwrap_or_else(|| default_users(options.scale_factor));
    if users == 0 && options.throughput {
        return Err(TpchError::BadOptions("--users must be at least 1".into()));
    }
    Ok(users)
}

/// The power test: one stream of the 22 queries, between RF1 and RF2 when `refresh`, as step `power`.
pub fn power_test(
    target: &dyn Target,
    options: &RunOptions,
    refresh: bool,
    interrupt: &AtomicBool,
    observer: &dyn StepObserver,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) -> StreamOutcome {
    observer.step_started(Phase::Power.step());
    let stream = run_stream(target, options, Phase::Power, 0, 1, 0, refresh, interrupt, on_event);
    observer.step_finished(Phase::Power.step());
    stream
}

/// The throughput test's `streams` (numbered 1..=`users` in the whole test) run at once, with the refresh stream
/// beside them when `refresh`, as step `throughput`. On a fleet each host runs some of the streams and one runs the
/// refresh stream. Returns the streams, in order, and the seconds from the start to the last one's end.
#[allow(clippy::too_many_arguments)]
pub fn throughput_test(
    target: &dyn Target,
    options: &RunOptions,
    users: usize,
    streams: impl IntoIterator<Item = usize>,
    refresh: bool,
    interrupt: &AtomicBool,
    observer: &dyn StepObserver,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) -> (Vec<StreamOutcome>, f64) {
    observer.step_started(Phase::Throughput.step());
    let started = Instant::now();
    let mut outcomes: Vec<StreamOutcome> = std::thread::scope(|scope| {
        let mut handles: Vec<_> = streams
            .into_iter()
            .map(|stream| {
                scope.spawn(move || {
                    run_stream(
                        target,
                        options,
                        Phase::Throughput,
                        stream,
                        options.sets,
                        users,
                        false,
                        interrupt,
                        on_event,
                    )
                })
            })
            .collect();
        if refresh {
            handles.push(scope.spawn(move || refresh_stream(target, options, users, interrupt, on_event)));
        }
        handles.into_iter().map(|h| h.join().expect("a stream thread does not panic")).collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    observer.step_finished(Phase::Throughput.step());
    outcomes.sort_by_key(|s| s.stream);
    (outcomes, seconds)
}

/// A run's outcome from its streams: the failures gathered, the metrics computed.
pub fn outcome(
    target: &dyn Target,
    load: LoadInfo,
    options: &RunOptions,
    users: usize,
    streams: Vec<StreamOutcome>,
    throughput_seconds: Option<f64>,
    interrupted: bool,
) -> TpchOutcome {
    let refresh_skipped = target.refresh_support().err();
    let failures = collect_failures(&streams);
    let metrics = metrics(options, users, &streams, throughput_seconds, refresh_skipped.as_deref());
    TpchOutcome {
        scale_factor: options.scale_factor,
        target: target.kind(),
        users,
        sets: options.sets,
        validate: options.validate,
        seed: options.seed,
        order: options.order,
        query_timeout_seconds: options.query_timeout.map(|t| t.as_secs_f64()),
        load,
        streams,
        failures,
        metrics,
        refresh_skipped,
        interrupted,
    }
}

/// The parameters and order of one query set.
pub fn query_set(
    options: &RunOptions,
    stream: usize,
    set: usize,
    table_row: usize,
) -> (Vec<QueryParameters>, crate::params::OrderSource) {
    let mut order_random = SeededRandom::for_stream(options.seed ^ ORDER_SALT, stream, set);
    let (order, source) = query_order(options.order, table_row, &mut order_random);
    let mut parameter_random = SeededRandom::for_stream(options.seed, stream, set);
    // Draw all 22 in query-number order so a query's parameters do not depend on the permutation.
    let drawn: Vec<QueryParameters> = (1..=22)
        .map(|q| {
            if options.validate {
                QueryParameters::validation(q, options.scale_factor)
            } else {
                QueryParameters::random(q, options.scale_factor, &mut parameter_random)
            }
        })
        .collect();
    (order.iter().map(|&q| drawn[q as usize - 1].clone()).collect(), source)
}

#[allow(clippy::too_many_arguments)]
fn run_stream(
    target: &dyn Target,
    options: &RunOptions,
    phase: Phase,
    stream: usize,
    sets: usize,
    streams_in_test: usize,
    refresh: bool,
    interrupt: &AtomicBool,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) -> StreamOutcome {
    let started = Instant::now();
    let mut outcome = new_stream(phase, stream);
    let Some(mut session) = open_session(target, &mut outcome, on_event) else { return outcome };
    let update_set = refresh.then(|| UpdateSet::new(options.scale_factor, 1));
    if let Some(update_set) = &update_set {
        // Rows left by an interrupted earlier run would make RF1 fail on duplicate keys; removing them is untimed.
        let _ = session.refresh_delete(update_set);
        run_refresh("RF1", update_set, session.as_mut(), &mut outcome, 0, on_event);
    }
    for set in 0..sets {
        let table_row = if phase == Phase::Power { 0 } else { stream + set * streams_in_test };
        let (queries, source) = query_set(options, stream, set, table_row);
        outcome.orders.push(source);
        for (index, parameters) in queries.into_iter().enumerate() {
            if interrupt.load(Ordering::SeqCst) {
                break;
            }
            let execution = run_query(target, session.as_mut(), options, parameters, set, index + 1, interrupt);
            on_event(&QueryEvent {
                phase,
                stream,
                set,
                what: format!("Q{}", execution.query),
                elapsed_seconds: execution.elapsed_seconds,
                status: &execution.status,
            });
            outcome.queries.push(execution);
        }
    }
    if let Some(update_set) = &update_set
        && !interrupt.load(Ordering::SeqCst)
    {
        run_refresh("RF2", update_set, session.as_mut(), &mut outcome, 0, on_event);
    }
    let times: Vec<f64> = outcome.queries.iter().filter(|q| q.status.is_ok()).map(|q| q.elapsed_seconds).collect();
    outcome.geomean_seconds = geometric_mean(&times);
    outcome.elapsed_seconds = started.elapsed().as_secs_f64();
    outcome
}

/// The throughput test's refresh stream (clause 5.3.4): one RF1/RF2 pair per query set of the query streams, run
/// alongside them, with update sets 2, 3, ... (the power test used the first). Its number is one past the last query
/// stream's.
fn refresh_stream(
    target: &dyn Target,
    options: &RunOptions,
    users: usize,
    interrupt: &AtomicBool,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) -> StreamOutcome {
    let started = Instant::now();
    let mut outcome = new_stream(Phase::Throughput, users + 1);
    let Some(mut session) = open_session(target, &mut outcome, on_event) else { return outcome };
    for pair in 0..users * options.sets {
        if interrupt.load(Ordering::SeqCst) {
            break;
        }
        let update_set = UpdateSet::new(options.scale_factor, pair as u32 + 2);
        // Rows left by an interrupted earlier run would make RF1 fail on duplicate keys; removing them is untimed.
        let _ = session.refresh_delete(&update_set);
        for function in ["RF1", "RF2"] {
            run_refresh(function, &update_set, session.as_mut(), &mut outcome, pair, on_event);
        }
    }
    outcome.elapsed_seconds = started.elapsed().as_secs_f64();
    outcome
}

/// A stream before it has run anything.
fn new_stream(phase: Phase, stream: usize) -> StreamOutcome {
    StreamOutcome {
        phase,
        stream,
        orders: Vec::new(),
        queries: Vec::new(),
        refreshes: Vec::new(),
        geomean_seconds: None,
        elapsed_seconds: 0.0,
    }
}

/// The stream's session; when none can be opened the failure is reported and recorded, and the stream ends.
fn open_session(
    target: &dyn Target,
    outcome: &mut StreamOutcome,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) -> Option<Box<dyn Session>> {
    match target.session() {
        Ok(session) => Some(session),
        Err(e) => {
            let status = ExecutionStatus::Failed(QueryFailure::Error(format!("could not open a session: {e}")));
            on_event(&QueryEvent {
                phase: outcome.phase,
                stream: outcome.stream,
                set: 0,
                what: "session".into(),
                elapsed_seconds: 0.0,
                status: &status,
            });
            outcome.refreshes.push(RefreshExecution {
                function: "session".into(),
                update_set: 0,
                elapsed_seconds: 0.0,
                status,
            });
            None
        }
    }
}

/// Time refresh function `RF1` (insert) or `RF2` (delete) of an update set, report it and record it in the stream.
fn run_refresh(
    function: &'static str,
    update_set: &UpdateSet,
    session: &mut dyn Session,
    outcome: &mut StreamOutcome,
    set: usize,
    on_event: &(dyn Fn(&QueryEvent) + Sync),
) {
    let started = Instant::now();
    let result = match function {
        "RF1" => session.refresh_insert(update_set),
        _ => session.refresh_delete(update_set),
    };
    let execution = RefreshExecution {
        function: function.to_string(),
        update_set: update_set.number,
        elapsed_seconds: started.elapsed().as_secs_f64(),
        status: match result {
            Ok(()) => ExecutionStatus::Ok,
            Err(failure) => ExecutionStatus::Failed(failure),
        },
    };
    on_event(&QueryEvent {
        phase: outcome.phase,
        stream: outcome.stream,
        set,
        what: function.into(),
        elapsed_seconds: execution.elapsed_seconds,
        status: &execution.status,
    });
    outcome.refreshes.push(execution);
}

fn run_query(
    target: &dyn Target,
    session: &mut dyn Session,
    options: &RunOptions,
    parameters: QueryParameters,
    set: usize,
    position: usize,
    interrupt: &AtomicBool,
) -> QueryExecution {
    let query = parameters.query();
    let sql = target.query_sql(&parameters);
    let started = Instant::now();
    let result = session.query(&sql, options.query_timeout, interrupt);
    let elapsed_seconds = started.elapsed().as_secs_f64();
    let (rows, status) = match result {
        Ok(answer) => {
            let status = if options.validate && options.scale_factor == 1.0 {
                match check_sf1_answer(query, &answer) {
                    Ok(()) => ExecutionStatus::Ok,
                    Err(mismatch) => ExecutionStatus::WrongAnswer(mismatch.to_string()),
                }
            } else {
                ExecutionStatus::Ok
            };
            (answer.rows.len(), status)
        }
        Err(failure) => (0, ExecutionStatus::Failed(failure)),
    };
    QueryExecution { query, set, position, parameters, elapsed_seconds, rows, status }
}

fn collect_failures(streams: &[StreamOutcome]) -> Vec<FailureReport> {
    let mut failures = Vec::new();
    for stream in streams {
        for refresh in stream.refreshes.iter().filter(|r| !r.status.is_ok()) {
            failures.push(FailureReport {
                phase: stream.phase,
                stream: stream.stream,
                set: 0,
                what: refresh.function.clone(),
                status: refresh.status.clone(),
            });
        }
        for query in stream.queries.iter().filter(|q| !q.status.is_ok()) {
            failures.push(FailureReport {
                phase: stream.phase,
                stream: stream.stream,
                set: query.set,
                what: format!("Q{}", query.query),
                status: query.status.clone(),
            });
        }
    }
    failures
}

fn metrics(
    options: &RunOptions,
    users: usize,
    streams: &[StreamOutcome],
    throughput_seconds: Option<f64>,
    refresh_skipped: Option<&str>,
) -> Metrics {
    let sf = options.scale_factor;
    let mut metrics = Metrics { notes: vec![DERIVED_NOTE.to_string()], ..Metrics::default() };
    if let Some(power) = streams.iter().find(|s| s.phase == Phase::Power) {
        let complete = power.queries.len() == 22
            && power.queries.iter().all(|q| q.status.is_ok())
            && power.refreshes.iter().all(|r| r.status.is_ok());
        if complete {
            let mut times: Vec<f64> = power.queries.iter().map(|q| q.elapsed_seconds).collect();
            times.extend(power.refreshes.iter().map(|r| r.elapsed_seconds));
            metrics.power_intervals = times.len();
            metrics.power_at_size = geometric_mean(&times).map(|g| 3600.0 * sf / g);
            if let Some(reason) = refresh_skipped {
                metrics.notes.push(format!("Power@Size uses the 22 query times and their 22nd root: {reason}"));
            }
        } else {
            metrics
                .notes
                .push("Power@Size not computed: the power test did not complete every query and refresh".into());
        }
    }
    if let Some(ts) = throughput_seconds {
        let throughput: Vec<&StreamOutcome> = streams.iter().filter(|s| s.phase == Phase::Throughput).collect();
        let expected = users * options.sets * 22;
        let done: usize = throughput.iter().map(|s| s.queries.iter().filter(|q| q.status.is_ok()).count()).sum();
        metrics.throughput_seconds = Some(ts);
        let refreshes: Vec<&RefreshExecution> = throughput.iter().flat_map(|s| s.refreshes.iter()).collect();
        let refreshes_ok = refreshes.iter().all(|r| r.status.is_ok())
            && (refresh_skipped.is_some() || refreshes.len() == 2 * users * options.sets);
        if done == expected && refreshes_ok && ts > 0.0 {
            metrics.throughput_at_size = Some((users * options.sets * 22) as f64 * 3600.0 / ts * sf);
            metrics.notes.push(if refresh_skipped.is_some() {
                "the throughput test runs the query streams only (no refresh stream alongside them)".into()
            } else {
                format!(
                    "the throughput test runs a refresh stream of {} RF1/RF2 pairs alongside the query streams",
                    users * options.sets
                )
            });
        } else if done == expected && !refreshes_ok {
            metrics.notes.push("Throughput@Size not computed: the refresh stream did not complete".into());
        } else {
            metrics
                .notes
                .push(format!("Throughput@Size not computed: {done} of {expected} throughput queries completed"));
        }
    }
    if let (Some(power), Some(throughput)) = (metrics.power_at_size, metrics.throughput_at_size) {
        metrics.qphh_at_size = Some((power * throughput).sqrt());
    }
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::{LoadProgress, QueryAnswer, TargetKind};
    use envbench_core::sampler::NoSteps;
    use std::sync::Mutex;

    /// A target whose queries succeed at once, except one query on one stream.
    struct FakeTarget {
        failing_stream: usize,
        failing_query: u8,
        steps: Mutex<Vec<String>>,
        refresh: bool,
    }

    struct FakeSession {
        /// The how-many-th session this is: 0 is the power stream's.
        session_index: usize,
        failing_query: u8,
        failing_stream: usize,
    }

    impl Session for FakeSession {
        fn query(&mut self, sql: &str, _: Option<Duration>, _: &AtomicBool) -> Result<QueryAnswer, QueryFailure> {
            std::thread::sleep(Duration::from_millis(1));
            let failing_sql = crate::queries::render(&QueryParameters::validation(self.failing_query, 1.0));
            if self.session_index == self.failing_stream && sql == failing_sql {
                return Err(QueryFailure::Error("relation \"lineitem\" does not exist".into()));
            }
            Ok(QueryAnswer { columns: vec!["x".into()], rows: vec![vec!["1".into()]] })
        }
        fn refresh_insert(&mut self, _: &UpdateSet) -> Result<(), QueryFailure> {
            Ok(())
        }
        fn refresh_delete(&mut self, _: &UpdateSet) -> Result<(), QueryFailure> {
            Ok(())
        }
    }

    impl Target for FakeTarget {
        fn kind(&self) -> TargetKind {
            TargetKind::DataFusion
        }
        fn prepare(
            &mut self,
            _: f64,
            _: bool,
            _: &AtomicBool,
            _: &dyn StepObserver,
            _: &(dyn Fn(LoadProgress) + Sync),
        ) -> Result<LoadInfo, TpchError> {
            unreachable!("the tests pass a LoadInfo directly")
        }
        fn lock(&mut self, _: f64, _: bool, _: bool) -> Result<(), TpchError> {
            Ok(())
        }
        fn session(&self) -> Result<Box<dyn Session>, TpchError> {
            // The power stream opens the first session.
            let mut steps = self.steps.lock().unwrap();
            steps.push("session".into());
            Ok(Box::new(FakeSession {
                session_index: steps.len() - 1,
                failing_query: self.failing_query,
                failing_stream: self.failing_stream,
            }))
        }
        fn refresh_support(&self) -> Result<(), String> {
            if self.refresh { Ok(()) } else { Err("the fake cannot refresh".into()) }
        }
    }

    fn load() -> LoadInfo {
        LoadInfo {
            reused: true,
            rows: Default::default(),
            load_seconds: 0.0,
            details: String::new(),
            summary: String::new(),
            generation: None,
        }
    }

    #[test]
    fn a_failing_query_is_reported_and_the_run_goes_on() {
        let target = FakeTarget { failing_stream: 0, failing_query: 5, steps: Mutex::new(vec![]), refresh: false };
        let mut options = RunOptions::new(1.0);
        options.validate = true;
        options.throughput = false;
        options.sets = 1;
        // validate at SF 1 would check answers; the fake's answers are not TPC-H's, so use SF 0.5 for the
        // parameters' sake and keep validation parameters.
        options.scale_factor = 0.5;
        let events = Mutex::new(Vec::new());
        let outcome = run(&target, load(), &options, &AtomicBool::new(false), &NoSteps, &|e| {
            events.lock().unwrap().push(e.what.clone())
        })
        .unwrap();
        let power = &outcome.streams[0];
        assert_eq!(power.queries.len(), 22, "the stream ran every query");
        assert_eq!(outcome.failures.len(), 1);
        assert_eq!(outcome.failures[0].what, "Q5");
        assert!(
            matches!(&outcome.failures[0].status, ExecutionStatus::Failed(QueryFailure::Error(m)) if m.contains("lineitem"))
        );
        assert!(outcome.metrics.power_at_size.is_none());
        assert!(power.geomean_seconds.is_some());
        assert_eq!(events.lock().unwrap().len(), 22);
        let records = outcome.records();
        let q5 = records.iter().find(|r| r.test_id == "Q5").unwrap();
        assert!(q5.samples.is_empty() && q5.flags == ["failed:1"]);
    }

    #[test]
    fn throughput_streams_run_concurrently_and_metrics_follow_the_formulas() {
        let target = FakeTarget { failing_stream: 99, failing_query: 1, steps: Mutex::new(vec![]), refresh: false };
        let mut options = RunOptions::new(0.5);
        options.users = Some(3);
        options.sets = 2;
        let outcome = run(&target, load(), &options, &AtomicBool::new(false), &NoSteps, &|_| {}).unwrap();
        assert_eq!(outcome.streams.len(), 4);
        assert!(outcome.failures.is_empty());
        let power = &outcome.streams[0];
        let times: Vec<f64> = power.queries.iter().map(|q| q.elapsed_seconds).collect();
        let expected_power = 3600.0 * 0.5 / geometric_mean(&times).unwrap();
        assert!((outcome.metrics.power_at_size.unwrap() - expected_power).abs() < 1e-9);
        assert_eq!(outcome.metrics.power_intervals, 22);
        let ts = outcome.metrics.throughput_seconds.unwrap();
        assert!((outcome.metrics.throughput_at_size.unwrap() - 3.0 * 2.0 * 22.0 * 3600.0 / ts * 0.5).abs() < 1e-6);
        assert!(outcome.metrics.qphh_at_size.is_some());
        assert!(outcome.metrics.notes.iter().any(|n| n.contains("22nd root")));
        // Spec rows 1..=3 for the first set, seeded beyond the table for the second.
        assert_eq!(outcome.streams[1].orders[0], crate::params::OrderSource::SpecificationRow { row: 1 });
        assert_eq!(outcome.streams[3].orders[1], crate::params::OrderSource::SpecificationRow { row: 6 });
        let records = outcome.records();
        assert_eq!(records.iter().find(|r| r.test_id == "Q1").unwrap().samples.len(), 1 + 3 * 2);
        assert_eq!(records.iter().find(|r| r.test_id == "geomean").unwrap().samples.len(), 4);
        for test in ["power", "throughput", "qphh"] {
            let record = records.iter().find(|r| r.test_id == test).unwrap();
            assert!(record.flags.contains(&"tpch-derived".to_string()));
            assert_eq!(record.direction, envbench_core::Direction::HigherIsBetter);
        }
        assert_eq!(records[0].parameters["target"], "datafusion");
    }

    #[test]
    fn where_refreshes_run_the_throughput_test_has_a_refresh_stream_beside_the_query_streams() {
        let target = FakeTarget { failing_stream: 99, failing_query: 1, steps: Mutex::new(vec![]), refresh: true };
        let mut options = RunOptions::new(0.5);
        options.users = Some(2);
        options.sets = 2;
        let events = Mutex::new(Vec::new());
        let outcome = run(&target, load(), &options, &AtomicBool::new(false), &NoSteps, &|e| {
            events.lock().unwrap().push((e.phase, e.stream, e.what.clone()))
        })
        .unwrap();
        // Power stream, two query streams, and the refresh stream numbered after them.
        assert_eq!(outcome.streams.len(), 4);
        let power = &outcome.streams[0];
        assert_eq!(
            power.refreshes.iter().map(|r| (r.function.as_str(), r.update_set)).collect::<Vec<_>>(),
            [("RF1", 1), ("RF2", 1)]
        );
        let refresh = outcome.streams.iter().find(|s| s.stream == 3).unwrap();
        assert_eq!(refresh.phase, Phase::Throughput);
        assert!(refresh.queries.is_empty() && refresh.geomean_seconds.is_none());
        // One pair per query set of the query streams, each with its own update set.
        let pairs: Vec<(&str, u32)> = refresh.refreshes.iter().map(|r| (r.function.as_str(), r.update_set)).collect();
        assert_eq!(
            pairs,
            [("RF1", 2), ("RF2", 2), ("RF1", 3), ("RF2", 3), ("RF1", 4), ("RF2", 4), ("RF1", 5), ("RF2", 5)]
        );
        assert_eq!(outcome.metrics.power_intervals, 24);
        assert!(outcome.metrics.throughput_at_size.is_some() && outcome.metrics.qphh_at_size.is_some());
        assert!(outcome.metrics.notes.iter().any(|n| n.contains("refresh stream of 4 RF1/RF2 pairs")));
        let events = events.lock().unwrap();
        assert_eq!(events.iter().filter(|(phase, stream, _)| *phase == Phase::Throughput && *stream == 3).count(), 8);
        let records = outcome.records();
        assert_eq!(records.iter().find(|r| r.test_id == "RF1").unwrap().samples.len(), 1 + 4);
        assert_eq!(records.iter().find(|r| r.test_id == "geomean").unwrap().samples.len(), 3);
        assert!(!records.iter().find(|r| r.test_id == "qphh").unwrap().flags.contains(&"refresh-skipped".to_string()));
    }

    #[test]
    fn query_sets_are_deterministic_per_seed() {
        let options = RunOptions::new(1.0);
        assert_eq!(query_set(&options, 1, 0, 1), query_set(&options, 1, 0, 1));
        assert_ne!(query_set(&options, 1, 0, 1).0, query_set(&options, 2, 0, 2).0);
        let (power, _) = query_set(&options, 0, 0, 0);
        assert_eq!(power.iter().map(|p| p.query()).collect::<Vec<_>>(), crate::params::PERMUTATIONS[0]);
    }

    #[test]
    fn minimum_streams_follow_the_specification() {
        assert_eq!(default_users(0.01), 2);
        assert_eq!(default_users(1.0), 2);
        assert_eq!(default_users(10.0), 3);
        assert_eq!(default_users(30.0), 4);
        assert_eq!(default_users(100.0), 5);
        assert_eq!(default_users(300.0), 6);
        assert_eq!(default_users(1000.0), 7);
    }
}
