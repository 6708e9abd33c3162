//! Planning an oltp run ([`plan_with`]): the arguments checked, the database reached and its namespace resolved, and
//! for a run of its own the tables looked at and locked, all before anything is stored.

use crate::arrivals::RatePlan;
use crate::cardinality::ACCOUNTS_PER_SCALE;
use crate::companion::{Companion, CompanionState};
use crate::crosscheck;
use crate::error::OltpError;
use crate::load::{self, LoadPlan};
use crate::lock::TablesLock;
use crate::options::{CrossCheck, MAX_STEP_TIME, MIN_DURATION, OltpArgs, Target};
use crate::profile::Profile;
use crate::random::Zipf;
use crate::routines::{self, Mode, RoutinesState};
use crate::run::OltpRun;
use crate::schema::{self, Existing, Shape};
use crate::slo::Slo;
use crate::sweep::UsersPlan;
use envbench_core::ByteSize;
use envbench_core::workload::WorkloadError;
use envbench_sql::{Connection, DatabaseUrl, Namespace};
use std::path::Path;
use std::time::Duration;

/// The SQLite database file in `--dir`.
pub const SQLITE_FILE: &str = "envbench-oltp.sqlite";

/// Who plans a run: a run of its own (also a fleet's coordinator, which loads and locks the tables for the whole
/// fleet), or a fleet's agent, which neither builds nor locks them (its coordinator holds the lock while the fleet
/// runs) and learns their namespace from the coordinator with each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planner {
    Run,
    FleetAgent,
}

/// The run `args` describe, planned as `envbench oltp` plans it for `planner` (the database reached, the namespace
/// resolved, and for a run of its own the tables looked at and locked), with `companion`'s tables kept beside the
/// TPC-C tables: for a workload that runs on oltp's tables (`envbench htap`).
pub fn plan_with(
    args: OltpArgs,
    planner: Planner,
    companion: &'static dyn Companion,
) -> Result<OltpRun, WorkloadError> {
    plan_run(args, planner, Some(companion))
}

pub(crate) fn plan(args: OltpArgs, planner: Planner) -> Result<OltpRun, WorkloadError> {
    plan_run(args, planner, None)
}

fn plan_run(
    args: OltpArgs,
    planner: Planner,
    companion: Option<&'static dyn Companion>,
) -> Result<OltpRun, WorkloadError> {
    let (profile, scale) = (args.profile, args.warehouses);
    let users = args.users.clone().within(args.max_users).map_err(WorkloadError::usage)?;
    let clients_per_user = args.clients_per_user;
    if clients_per_user > 1 && !args.keying_thinking {
        return Err(WorkloadError::usage(format!(
            "--clients-per-user {clients_per_user} needs --keying-thinking: without keying and think times each \
             client would wait for its user's connection all the time, which measures the same as one client per \
             user; for more load without them, raise --users"
        )));
    }
    let mut ramp = args.ramp.within("--ramp", Duration::ZERO, MAX_STEP_TIME).map_err(WorkloadError::usage)?;
    let mut duration = args.duration.within("--duration", MIN_DURATION, MAX_STEP_TIME).map_err(WorkloadError::usage)?;
    if args.transactions.is_some() {
        // Every transaction counts from the start; the step may take up to the longest step time.
        (ramp, duration) = (Duration::ZERO, MAX_STEP_TIME);
    }
    let target = args.target_latency.get();
    if target.is_zero() {
        return Err(WorkloadError::usage("--target-latency must be longer than zero, e.g. 100ms"));
    }
    let target_ms = target.as_secs_f64() * 1e3;
    let url = target_url(&args)?;
    if let Some(level) = args.isolation {
        url.dialect().isolation_statement(level).map_err(WorkloadError::usage)?;
    }
    let mode = args.mode;
    if mode == Mode::Procedures && !url.dialect().ops().stored_routines {
        return Err(WorkloadError::usage(format!(
            "--mode procedures runs each transaction as a stored routine, and SQLite has none: use --mode client \
             with SQLite, or --target {}",
            envbench_sql::url_forms_where(|ops| ops.stored_routines)
        )));
    }
    if mode == Mode::Procedures && profile != Profile::Tpcc {
        return Err(WorkloadError::usage(
            "--mode procedures runs TPC-C's five transactions as stored routines: use it with --profile tpcc (tpcb \
             is pgbench's transaction, sent from the client as pgbench sends it)",
        ));
    }
    let open = check_open_loop(&args, &users)?;
    if args.skew.is_some() && profile != Profile::Tpcb {
        return Err(WorkloadError::usage(
            "--skew draws pgbench's accounts with a Zipfian skew: use it with --profile tpcb (TPC-C's keys are \
             already skewed, by NURand)",
        ));
    }
    if args.mix.is_some() && profile != Profile::Tpcc {
        return Err(WorkloadError::usage(
            "--mix shares TPC-C's five transactions: use it with --profile tpcc (tpcb runs pgbench's one transaction)",
        ));
    }
    let shape = Shape::of(scale, args.partition);
    if args.partition && (profile != Profile::Tpcc || !url.dialect().ops().partitions) {
        return Err(WorkloadError::usage(format!(
            "--partition splits TPC-C's tpcc_order_line by warehouse on a server: use it with --profile tpcc and \
             --target {} (SQLite has no partitions)",
            envbench_sql::url_forms_where(|ops| ops.partitions)
        )));
    }
    let pgbench = match args.cross_check {
        None => None,
        Some(CrossCheck::Pgbench) if profile == Profile::Tpcb && url.dialect().ops().pgbench => {
            Some(crosscheck::find_pgbench()?)
        }
        Some(CrossCheck::Pgbench) => {
            return Err(WorkloadError::usage(format!(
                "--cross-check pgbench runs pgbench's TPC-B-like transaction against PostgreSQL: add --profile tpcb \
                 and --target {}",
                envbench_sql::url_forms_where(|ops| ops.pgbench)
            )));
        }
    };
    let (mut connection, namespace) = reach(&args, &url)?;
    let (server_version, watched) = match connection.as_mut() {
        None => (format!("SQLite {}", envbench_sql::sqlite_version()), args.dir.clone()),
        Some(connection) => {
            let server_version = connection.server_version().map_err(OltpError::from)?;
            let watched =
                envbench_sql::local_data_directory(connection.as_mut(), &url).unwrap_or_else(|| args.dir.clone());
            (server_version, watched)
        }
    };
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    // One writer at a time (SQLite) loads with one loader.
    let loaders = if url.dialect().ops().single_writer { 1 } else { args.loaders.unwrap_or(cpus) };
    let mut run = OltpRun {
        url,
        namespace,
        profile,
        scale,
        partitions: shape.partitions,
        users,
        clients_per_user,
        ramp,
        duration,
        target_ms,
        keying_thinking: args.keying_thinking,
        all_warehouses: args.all_warehouses,
        mix: args.mix.unwrap_or_default(),
        rate: args.rate,
        arrivals: args.arrivals.unwrap_or_default(),
        latency_limit: open.latency_limit,
        slo: open.slo,
        isolation: args.isolation,
        max_tries: args.max_tries,
        skew: args.skew.map(|theta| Zipf::new(ACCOUNTS_PER_SCALE * scale, theta)),
        transactions_per_user: args.transactions,
        mode,
        seed: args.seed.unwrap_or_else(crate::run::fresh_seed),
        settle: !args.no_vacuum,
        settle_noted: Default::default(),
        load_plan: LoadPlan::Reuse,
        lock: None,
        pgbench,
        loaders,
        watched,
        server_version,
        companion,
        namespace_checked: false,
    };
    if planner == Planner::FleetAgent {
        return Ok(run);
    }
    // What the namespace holds decides whether the run builds the tables (or, in procedures mode, installs their
    // routines), and so holds them alone ([`envbench_base::lock::take_as_needed`]: looked at again once a shared lock
    // is held).
    let tables_reusable = std::cell::Cell::new(false);
    let must_build = |connection: &mut Option<Box<dyn Connection>>| {
        let existing = match connection.as_mut() {
            Some(connection) => schema::existing(connection.as_mut(), &run.namespace, profile)?,
            None => Existing::Nothing,
        };
        if let Existing::Foreign(relations) = &existing {
            return Err(OltpError::foreign(&crate::error::place(&run.url, &run.namespace), profile, relations));
        }
        let reusable = LoadPlan::of(&existing, shape, args.fresh) == LoadPlan::Reuse;
        tables_reusable.set(reusable);
        let companion_missing = match (run.companion, connection.as_mut()) {
            (Some(companion), Some(connection)) => match companion.state(connection.as_mut(), &run.namespace)? {
                CompanionState::Complete => false,
                CompanionState::Missing => true,
                CompanionState::Foreign(relations) => {
                    return Err(OltpError::Foreign(format!(
                        "{}: {} bear the names of {} but envbench did not make them; envbench never creates, drops \
                         or alters anything beside what it made. Use another schema or database, or drop them \
                         yourself if they are expendable",
                        crate::error::place(&run.url, &run.namespace),
                        relations.join(", "),
                        companion.name()
                    )));
                }
            },
            (Some(_), None) => true,
            (None, _) => false,
        };
        let routines_missing = match connection.as_mut() {
            Some(connection) if profile == Profile::Tpcc && run.url.dialect().ops().stored_routines => {
                match routines::state(connection.as_mut(), &run.namespace)? {
                    RoutinesState::Newer(version) => return Err(routines::newer_error(&run.namespace, version)),
                    RoutinesState::Current => false,
                    RoutinesState::Missing | RoutinesState::Foreign(_) => mode == Mode::Procedures && reusable,
                }
            }
            _ => false,
        };
        Ok(!reusable || routines_missing || companion_missing)
    };
    let take = |connection: &mut Option<Box<dyn Connection>>, exclusive: bool| {
        if exclusive {
            check_space(&run.watched, &run.url, profile, scale)?;
            if let Some(connection) = connection.as_mut()
                && run.url.dialect().ops().schema_create_privilege
            {
                check_create_privilege(connection.as_mut(), &run.url, &run.namespace)?;
            }
        }
        TablesLock::take(&run.url, &run.namespace, profile, &args.dir, exclusive, run.workload_name())
    };
    let (lock, alone) = envbench_base::lock::take_as_needed(&mut connection, must_build, take)?;
    // Alone, the run rebuilds the tables unless only their routines were missing.
    run.load_plan = if alone && !tables_reusable.get() { LoadPlan::Rebuild } else { LoadPlan::Reuse };
    run.lock = Some(lock);
    Ok(run)
}

/// What the open-loop options say, checked together.
struct OpenOptions {
    latency_limit: Option<Duration>,
    slo: Option<Slo>,
}

/// `--rate`, `--arrivals`, `--latency-limit` and `--slo`, checked against each other and the closed loop's options.
fn check_open_loop(args: &OltpArgs, users: &UsersPlan) -> Result<OpenOptions, WorkloadError> {
    let Some(rate) = args.rate else {
        for (given, option) in [
            (args.arrivals.is_some(), "--arrivals"),
            (args.latency_limit.is_some(), "--latency-limit"),
            (args.slo.is_some(), "--slo"),
        ] {
            if given {
                return Err(WorkloadError::usage(format!(
                    "{option} shapes an open loop: add --rate (e.g. --rate 200, or --rate auto for the capacity \
                     within --slo)"
                )));
            }
        }
        return Ok(OpenOptions { latency_limit: None, slo: None });
    };
    if args.keying_thinking {
        return Err(WorkloadError::usage(
            "--rate sends transactions on a schedule, and --keying-thinking paces each terminal by its keying and \
             think times: choose one way for transactions to arrive",
        ));
    }
    if args.transactions.is_some() {
        return Err(WorkloadError::usage(
            "--rate runs timed steps on a schedule, and --transactions counts a fixed number per user: leave one out",
        ));
    }
    let latency_limit = match &args.latency_limit {
        Some(limit) => Some(
            limit
                .within("--latency-limit", Duration::from_micros(1), Duration::from_secs(3600))
                .map_err(WorkloadError::usage)?,
        ),
        None => None,
    };
    let slo = match (rate, &args.slo) {
        (_, Some(slo)) => {
            slo.check_kinds(args.profile, &args.mix.unwrap_or_default().kinds(args.profile))
                .map_err(WorkloadError::usage)?;
            Some(slo.clone())
        }
        (RatePlan::Auto, None) => Some(Slo::default_for(args.profile).ok_or_else(|| {
            WorkloadError::usage(
                "--rate auto finds the highest rate within a service level, and tpcb has no standard one: add e.g. \
                 --slo tpc-b:p95<=20ms",
            )
        })?),
        (RatePlan::Fixed(_), None) => None,
    };
    if let (RatePlan::Fixed(rate), UsersPlan::Auto { .. }) = (rate, users) {
        return Err(WorkloadError::usage(format!(
            "--users auto doubles a closed loop's users until its knee, and --rate {} sends a fixed rate whatever the \
             users: give the users that share it (e.g. --users 8, or steps such as --users 2,4,8), or --rate auto \
             for the capacity within --slo",
            rate.text()
        )));
    }
    if rate == RatePlan::Auto && !matches!(users, UsersPlan::List(list) if list.len() == 1) {
        return Err(WorkloadError::usage(format!(
            "--rate auto raises the rate at one count of users (the connections an application's pool would hold): \
             give --users one count, e.g. --users 8, not {}",
            users.describe()
        )));
    }
    Ok(OpenOptions { latency_limit, slo })
}

/// The database `--target` names (`--dir`'s SQLite file for `sqlite`), with `--schema` refused where it means nothing.
pub(crate) fn target_url(args: &OltpArgs) -> Result<DatabaseUrl, WorkloadError> {
    let url = match &args.target {
        Target::Sqlite => {
            envbench_base::place::check_directory(&args.dir)
                .map_err(|e| WorkloadError::usage(format!("--dir: {e}")))?;
            DatabaseUrl::sqlite(args.dir.join(SQLITE_FILE))
        }
        Target::Url(url) => url.clone(),
    };
    if args.schema.is_some() && !url.dialect().ops().named_namespaces {
        return Err(WorkloadError::usage(
            "--schema names a schema (PostgreSQL) or database (MariaDB/MySQL) on a server: leave it out with \
             --target sqlite, whose tables are in --dir",
        ));
    }
    Ok(url)
}

/// Reach the database now, before anything is stored: a wrong URL, a stopped server, a missing privilege or foreign
/// tables are the user's to fix. The namespace is resolved here, once: every name the run checks, creates, drops,
/// loads or queries is qualified with it, and every session it opens is pinned to it. A SQLite file that does not
/// exist yet is not created here (no connection): nothing is made before the run.
pub(crate) fn reach(
    args: &OltpArgs,
    url: &DatabaseUrl,
) -> Result<(Option<Box<dyn Connection>>, Namespace), WorkloadError> {
    let sqlite_file = args.dir.join(SQLITE_FILE);
    let mut connection: Option<Box<dyn Connection>> = if url.dialect().ops().embedded && !sqlite_file.exists() {
        None
    } else {
        Some(url.connect("envbench-oltp plan").map_err(OltpError::from)?)
    };
    let namespace = match connection.as_mut() {
        Some(connection) => {
            let namespace =
                Namespace::resolve(connection.as_mut(), args.schema.as_deref(), false).map_err(OltpError::from)?;
            namespace.pin(connection.as_mut()).map_err(OltpError::from)?;
            namespace
        }
        // No connection: an embedded file not made yet, whose one namespace is `main`.
        None => Namespace::named(url.dialect(), "main"),
    };
    Ok((connection, namespace))
}

/// Refuse a load the PostgreSQL user could not finish: it must be allowed to create tables in the run's schema.
fn check_create_privilege(
    connection: &mut dyn envbench_sql::Connection,
    url: &DatabaseUrl,
    namespace: &Namespace,
) -> Result<(), OltpError> {
    let row = connection.query_optional(
        "SELECT current_user, COALESCE(has_schema_privilege(?, 'CREATE'), false)::int",
        &[namespace.name().into()],
    )?;
    let Some(row) = row else { return Ok(()) };
    if row.int(1)? == 1 {
        return Ok(());
    }
    let (user, schema) = (row.text(0)?, namespace.quoted());
    Err(OltpError::BadInput(format!(
        "{}: user {user} may not create tables in schema {schema}; GRANT CREATE ON SCHEMA {schema} TO {user}, or use \
         a database where it may",
        url.shown()
    )))
}

/// Refuse a scale that cannot fit in the free space of the directory the data goes to (when it is known).
fn check_space(dir: &Path, url: &DatabaseUrl, profile: Profile, scale: i64) -> Result<(), OltpError> {
    if !url.dialect().ops().embedded && !url.is_local() {
        return Ok(());
    }
    let Ok(Some(free)) = envbench_base::place::available_bytes(dir) else {
        return Ok(());
    };
    let needed = load::expected_bytes(profile, scale);
    if needed > free {
        return Err(OltpError::NoSpace(format!(
            "--warehouses {scale}: the {} load needs about {} but {} has {} free; choose fewer {} or free some space",
            profile.name(),
            ByteSize(needed),
            dir.display(),
            ByteSize(free),
            profile.scale_word()
        )));
    }
    Ok(())
}
