//! The initial database of each profile, as its specification populates it (TPC-C clause 4.3.3; pgbench's `-i`),
//! loaded in parallel: one loader per range of warehouses (or accounts), each on its own connection, sending
//! multi-row `INSERT`s in transactions of a few thousand rows, with progress in rows. Keys, indexes, statistics
//! and (TPC-C on a server) the stored routines of procedures mode follow the load; the marker row comes last, so an interrupted load is rebuilt by the next run.

use crate::error::OltpError;
use crate::profile::Profile;
use crate::random::{NuRandConstants, Random, last_name};
use crate::routines::{self, Mode, RoutinesState};
use crate::schema::{self, Existing, Shape};
use envbench_core::sampler::StepObserver;
use envbench_sql::{Connection, DatabaseUrl, Dialect, Namespace};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

pub use crate::cardinality::{
    ACCOUNTS_PER_SCALE, CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, ITEMS, ORDERS, TELLERS_PER_SCALE,
};

/// Rows per `INSERT` statement, and statements per transaction.
const ROWS_PER_STATEMENT: usize = 500;
const STATEMENTS_PER_TRANSACTION: usize = 20;

/// The seed of the loaded data: the same database for the same scale on every machine.
pub const LOAD_SEED: u64 = 0x7c_c0_1d_a7_a5_e7;

/// The time every loaded row is stamped with (orders entered, lines delivered, customers' `c_since`, history), where
/// TPC-C takes the clock at load: one fixed time, so a load is the same database on every machine and server, and
/// one inside every date window of the CH-benCHmark's analytic queries (published in 2011; `envbench htap`), which
/// rows stamped with today's date would leave out. Transactions stamp their rows with the server's clock as ever.
pub const LOAD_TIME: &str = "2011-06-01 00:00:00";

/// Rows a load of this scale inserts (TPC-C's order lines are 10 per order on average).
pub fn expected_rows(profile: Profile, scale: i64) -> u64 {
    let rows = match profile {
        Profile::Tpcc => {
            let per_district = CUSTOMERS * 2 + ORDERS + ORDERS * 10 + (ORDERS - FIRST_NEW_ORDER + 1);
            ITEMS + scale * (1 + DISTRICTS + ITEMS + DISTRICTS * per_district)
        }
        Profile::Tpcb => scale * (1 + TELLERS_PER_SCALE + ACCOUNTS_PER_SCALE),
    };
    rows as u64
}

/// Bytes a load of this scale takes on disk, roughly (measured on PostgreSQL with its indexes, with room for a run's
/// growth): for the free-space check.
pub fn expected_bytes(profile: Profile, scale: i64) -> u64 {
    let per_scale: u64 = match profile {
        Profile::Tpcc => 160 << 20,
        Profile::Tpcb => 24 << 20,
    };
    per_scale * scale as u64 + (16 << 20)
}

/// How a load went, for people and the outcome.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoadInfo {
    /// True when a complete load of the same scale and schema version was used as it was.
    pub reused: bool,
    pub rows: u64,
    pub seconds: f64,
    pub loaders: usize,
}

/// A value in a literal `INSERT`: the generated text never holds a quote.
enum Literal<'a> {
    Int(i64),
    Money(f64),
    Text(&'a str),
    Null,
    /// [`LOAD_TIME`].
    LoadTime,
}

/// Where a loader's rows go and how they are counted: the namespace their tables are in, the rows loaded so far by
/// every loader, the interrupt, and the progress callback.
struct Feed<'a> {
    namespace: &'a Namespace,
    loaded: &'a AtomicU64,
    interrupt: &'a AtomicBool,
    progress: &'a (dyn Fn(u64) + Sync),
}

/// Rows of one table gathered into multi-row `INSERT`s.
struct Inserter<'a> {
    connection: &'a mut dyn Connection,
    /// The table's qualified name.
    table: String,
    sql: String,
    rows_in_statement: usize,
    statements_in_transaction: usize,
    loaded: &'a AtomicU64,
    interrupt: &'a AtomicBool,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl<'a> Inserter<'a> {
    fn new(connection: &'a mut dyn Connection, feed: &Feed<'a>, table: &str) -> Inserter<'a> {
        Inserter {
            connection,
            table: feed.namespace.qualify(table),
            sql: String::with_capacity(256 * 1024),
            rows_in_statement: 0,
            statements_in_transaction: 0,
            loaded: feed.loaded,
            interrupt: feed.interrupt,
            progress: feed.progress,
        }
    }

    fn row(&mut self, values: &[Literal<'_>]) -> Result<(), OltpError> {
        if self.rows_in_statement == 0 {
            let _ = write!(self.sql, "INSERT INTO {} VALUES (", self.table);
        } else {
            self.sql.push_str(",(");
        }
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.sql.push(',');
            }
            let _ = match value {
                Literal::Int(v) => write!(self.sql, "{v}"),
                Literal::Money(v) => write!(self.sql, "{v:.2}"),
                Literal::Text(v) => write!(self.sql, "'{v}'"),
                Literal::Null => write!(self.sql, "NULL"),
                Literal::LoadTime => write!(self.sql, "'{LOAD_TIME}'"),
            };
        }
        self.sql.push(')');
        self.rows_in_statement += 1;
        if self.rows_in_statement == ROWS_PER_STATEMENT {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<(), OltpError> {
        if self.rows_in_statement == 0 {
            return Ok(());
        }
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(OltpError::Interrupted);
        }
        if self.statements_in_transaction == 0 {
            self.connection.begin()?;
        }
        self.connection.batch(&self.sql)?;
        let rows = self.rows_in_statement as u64;
        self.sql.clear();
        self.rows_in_statement = 0;
        self.statements_in_transaction += 1;
        if self.statements_in_transaction == STATEMENTS_PER_TRANSACTION {
            self.connection.commit()?;
            self.statements_in_transaction = 0;
        }
        (self.progress)(self.loaded.fetch_add(rows, Ordering::Relaxed) + rows);
        Ok(())
    }

    fn finish(mut self) -> Result<(), OltpError> {
        self.send()?;
        if self.statements_in_transaction > 0 {
            self.connection.commit()?;
        }
        Ok(())
    }
}

/// The TPC-C item table.
fn load_items(connection: &mut dyn Connection, random: &mut Random, feed: &Feed<'_>) -> Result<(), OltpError> {
    let mut insert = Inserter::new(connection, feed, "tpcc_item");
    for id in 1..=ITEMS {
        let (name, data) = (random.astring(14, 24), random.data_with_original());
        let price = random.decimal(1.0, 100.0, 2);
        let image = random.range(1, 10_000);
        insert.row(&[
            Literal::Int(id),
            Literal::Int(image),
            Literal::Text(&name),
            Literal::Money(price),
            Literal::Text(&data),
        ])?;
    }
    insert.finish()
}

/// One TPC-C warehouse with its stock, districts, customers, history, orders, order lines and new orders.
fn load_warehouse(
    connection: &mut dyn Connection,
    random: &mut Random,
    w: i64,
    feed: &Feed<'_>,
) -> Result<(), OltpError> {
    let address = |random: &mut Random| {
        [random.astring(10, 20), random.astring(10, 20), random.astring(10, 20), random.astring(2, 2), random.zip()]
    };
    let mut insert = Inserter::new(connection, feed, "tpcc_warehouse");
    let (name, [s1, s2, city, state, zip], tax) = (random.astring(6, 10), address(random), random.decimal(0.0, 0.2, 4));
    insert.row(&[
        Literal::Int(w),
        Literal::Text(&name),
        Literal::Text(&s1),
        Literal::Text(&s2),
        Literal::Text(&city),
        Literal::Text(&state),
        Literal::Text(&zip),
        Literal::Money(tax),
        Literal::Money(300_000.0),
    ])?;
    insert.finish()?;

    let mut insert = Inserter::new(connection, feed, "tpcc_stock");
    for item in 1..=ITEMS {
        let quantity = random.range(10, 100);
        let dists: Vec<String> = (0..10).map(|_| random.astring(24, 24)).collect();
        let data = random.data_with_original();
        let mut values = vec![Literal::Int(item), Literal::Int(w), Literal::Int(quantity)];
        values.extend(dists.iter().map(|d| Literal::Text(d)));
        values.extend([Literal::Int(0), Literal::Int(0), Literal::Int(0), Literal::Text(&data)]);
        insert.row(&values)?;
    }
    insert.finish()?;

    for d in 1..=DISTRICTS {
        let mut insert = Inserter::new(connection, feed, "tpcc_district");
        let (name, [s1, s2, city, state, zip], tax) =
            (random.astring(6, 10), address(random), random.decimal(0.0, 0.2, 4));
        insert.row(&[
            Literal::Int(d),
            Literal::Int(w),
            Literal::Text(&name),
            Literal::Text(&s1),
            Literal::Text(&s2),
            Literal::Text(&city),
            Literal::Text(&state),
            Literal::Text(&zip),
            Literal::Money(tax),
            Literal::Money(30_000.0),
            Literal::Int(ORDERS + 1),
        ])?;
        insert.finish()?;

        let mut customers = Inserter::new(connection, feed, "tpcc_customer");
        let mut history_rows = Vec::with_capacity(CUSTOMERS as usize);
        for c in 1..=CUSTOMERS {
            let last = if c <= 1000 { last_name(c - 1) } else { last_name(random.nurand(255, 0, 999)) };
            let first = random.astring(8, 16);
            let [s1, s2, city, state, zip] = address(random);
            let phone = random.nstring(16, 16);
            let credit = if random.chance(10) { "BC" } else { "GC" };
            let discount = random.decimal(0.0, 0.5, 4);
            let data = random.astring(300, 500);
            customers.row(&[
                Literal::Int(c),
                Literal::Int(d),
                Literal::Int(w),
                Literal::Text(&first),
                Literal::Text("OE"),
                Literal::Text(&last),
                Literal::Text(&s1),
                Literal::Text(&s2),
                Literal::Text(&city),
                Literal::Text(&state),
                Literal::Text(&zip),
                Literal::Text(&phone),
                Literal::LoadTime,
                Literal::Text(credit),
                Literal::Money(50_000.0),
                Literal::Money(discount),
                Literal::Money(-10.0),
                Literal::Money(10.0),
                Literal::Int(1),
                Literal::Int(0),
                Literal::Text(&data),
            ])?;
            history_rows.push(random.astring(12, 24));
        }
        customers.finish()?;

        let mut history = Inserter::new(connection, feed, "tpcc_history");
        for (c, data) in (1..=CUSTOMERS).zip(&history_rows) {
            history.row(&[
                Literal::Int(c),
                Literal::Int(d),
                Literal::Int(w),
                Literal::Int(d),
                Literal::Int(w),
                Literal::LoadTime,
                Literal::Money(10.0),
                Literal::Text(data),
            ])?;
        }
        history.finish()?;

        let customer_of = random.permutation(ORDERS as usize);
        let mut lines_per_order = Vec::with_capacity(ORDERS as usize);
        let mut orders = Inserter::new(connection, feed, "tpcc_orders");
        for o in 1..=ORDERS {
            let delivered = o < FIRST_NEW_ORDER;
            let lines = random.range(5, 15);
            lines_per_order.push(lines);
            orders.row(&[
                Literal::Int(o),
                Literal::Int(d),
                Literal::Int(w),
                Literal::Int(customer_of[(o - 1) as usize]),
                Literal::LoadTime,
                if delivered { Literal::Int(random.range(1, 10)) } else { Literal::Null },
                Literal::Int(lines),
                Literal::Int(1),
            ])?;
        }
        orders.finish()?;

        let mut order_lines = Inserter::new(connection, feed, "tpcc_order_line");
        for (o, &lines) in (1..=ORDERS).zip(&lines_per_order) {
            let delivered = o < FIRST_NEW_ORDER;
            for number in 1..=lines {
                let item = random.range(1, ITEMS);
                let amount = if delivered { 0.0 } else { random.decimal(0.01, 9999.99, 2) };
                let dist_info = random.astring(24, 24);
                order_lines.row(&[
                    Literal::Int(o),
                    Literal::Int(d),
                    Literal::Int(w),
                    Literal::Int(number),
                    Literal::Int(item),
                    Literal::Int(w),
                    if delivered { Literal::LoadTime } else { Literal::Null },
                    Literal::Int(5),
                    Literal::Money(amount),
                    Literal::Text(&dist_info),
                ])?;
            }
        }
        order_lines.finish()?;

        let mut new_orders = Inserter::new(connection, feed, "tpcc_new_order");
        for o in FIRST_NEW_ORDER..=ORDERS {
            new_orders.row(&[Literal::Int(o), Literal::Int(d), Literal::Int(w)])?;
        }
        new_orders.finish()?;
    }
    Ok(())
}

/// pgbench's branches and tellers for the whole scale (a few rows).
fn load_branches_and_tellers(connection: &mut dyn Connection, scale: i64, feed: &Feed<'_>) -> Result<(), OltpError> {
    let mut branches = Inserter::new(connection, feed, "pgbench_branches");
    for bid in 1..=scale {
        branches.row(&[Literal::Int(bid), Literal::Int(0), Literal::Null])?;
    }
    branches.finish()?;
    let mut tellers = Inserter::new(connection, feed, "pgbench_tellers");
    for tid in 1..=scale * TELLERS_PER_SCALE {
        tellers.row(&[
            Literal::Int(tid),
            Literal::Int((tid - 1) / TELLERS_PER_SCALE + 1),
            Literal::Int(0),
            Literal::Null,
        ])?;
    }
    tellers.finish()
}

/// pgbench's accounts of one branch (`bid`), as `pgbench -i` fills them.
fn load_accounts(connection: &mut dyn Connection, bid: i64, feed: &Feed<'_>) -> Result<(), OltpError> {
    let mut accounts = Inserter::new(connection, feed, "pgbench_accounts");
    for aid in (bid - 1) * ACCOUNTS_PER_SCALE + 1..=bid * ACCOUNTS_PER_SCALE {
        accounts.row(&[Literal::Int(aid), Literal::Int(bid), Literal::Int(0), Literal::Text("")])?;
    }
    accounts.finish()
}

/// Settings for a loader's connection: SQLite need not be durable while loading (an interrupted load is rebuilt).
fn loader_settings(connection: &mut dyn Connection) -> Result<(), OltpError> {
    let settings = connection.dialect().ops().bulk_load_session;
    Ok(connection.batch(settings)?)
}

/// Whether a run uses the load it found or builds a new one: decided once, by the plan, under the run's lock (a
/// rebuild holds it alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadPlan {
    Reuse,
    Rebuild,
}

impl LoadPlan {
    /// What a run does with what it found: a complete load of its shape (scale and partitions) is reused (unless
    /// `fresh`); anything else of envbench's, or nothing, is built anew. (Relations envbench did not make are refused
    /// before this is asked.)
    pub fn of(existing: &Existing, shape: Shape, fresh: bool) -> LoadPlan {
        if existing.is_reusable(shape) && !fresh { LoadPlan::Reuse } else { LoadPlan::Rebuild }
    }
}

/// What a run does about the TPC-C routines ([`crate::routines`]) of a server's load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutinesPlan {
    /// Nothing: SQLite, TPC-B, or a client-side run that shares the tables.
    Leave,
    /// Install them where they are missing or of an older version: a run that holds the tables alone.
    Install,
    /// They must be there, current: a procedures run that shares the tables.
    Require,
}

impl RoutinesPlan {
    /// The plan of a run of `profile` on `dialect` in `mode`, holding the tables alone or not.
    pub fn of(profile: Profile, dialect: Dialect, mode: Mode, exclusive: bool) -> RoutinesPlan {
        if profile != Profile::Tpcc || !dialect.ops().stored_routines {
            RoutinesPlan::Leave
        } else if exclusive {
            RoutinesPlan::Install
        } else if mode == Mode::Procedures {
            RoutinesPlan::Require
        } else {
            RoutinesPlan::Leave
        }
    }
}

/// Build the profile's database of `shape` in `namespace` (`LoadPlan::Rebuild`), or check that the complete load
/// the plan found is still there (`LoadPlan::Reuse`), and see to its routines as `routines` says. `progress` gets
/// (rows loaded, rows expected). Refuses relations and routines envbench did not make, whatever the plan.
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    url: &DatabaseUrl,
    namespace: &Namespace,
    profile: Profile,
    shape: Shape,
    plan: LoadPlan,
    routines: RoutinesPlan,
    loaders: usize,
    steps: &dyn StepObserver,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<LoadInfo, OltpError> {
    let mut connection = namespace.connect(url, "envbench-oltp load")?;
    let found = schema::existing(connection.as_mut(), namespace, profile)?;
    match (&found, plan) {
        (Existing::Foreign(relations), _) => {
            return Err(OltpError::foreign(&crate::error::place(url, namespace), profile, relations));
        }
        (found, LoadPlan::Reuse) if found.is_reusable(shape) => {
            see_to_routines(connection.as_mut(), url, namespace, routines)?;
            return Ok(LoadInfo { reused: true, rows: 0, seconds: 0.0, loaders: 0 });
        }
        (found, LoadPlan::Reuse) => {
            return Err(OltpError::Other(format!(
                "{}: the {} tables changed after the run was planned (now {}); run it again",
                crate::error::place(url, namespace),
                profile.name(),
                found.describe()
            )));
        }
        (_, LoadPlan::Rebuild) => {}
    }
    let started = Instant::now();
    steps.step_started("load");
    let result = load(url, namespace, connection.as_mut(), profile, shape, loaders, interrupt, progress);
    steps.step_finished("load");
    let rows = result?;
    steps.step_started("index");
    let result = (|| {
        for statement in schema::keys_and_indexes(profile, namespace) {
            if interrupt.load(Ordering::SeqCst) {
                return Err(OltpError::Interrupted);
            }
            connection.batch(&statement)?;
        }
        for statement in schema::gather_statistics(profile, namespace) {
            connection.batch(&statement)?;
        }
        Ok(())
    })();
    steps.step_finished("index");
    result?;
    see_to_routines(connection.as_mut(), url, namespace, routines)?;
    let seconds = started.elapsed().as_secs_f64();
    schema::mark_complete(connection.as_mut(), namespace, profile, shape.scale, seconds)?;
    Ok(LoadInfo { reused: false, rows, seconds, loaders })
}

/// Install the routines, or check that they are there, as `plan` says.
fn see_to_routines(
    connection: &mut dyn Connection,
    url: &DatabaseUrl,
    namespace: &Namespace,
    plan: RoutinesPlan,
) -> Result<(), OltpError> {
    match plan {
        RoutinesPlan::Leave => Ok(()),
        RoutinesPlan::Install => match routines::state(connection, namespace)? {
            RoutinesState::Current => Ok(()),
            _ => routines::install(connection, namespace),
        },
        RoutinesPlan::Require => match routines::state(connection, namespace)? {
            RoutinesState::Current => Ok(()),
            RoutinesState::Foreign(foreign) => Err(routines::foreign_error(namespace, &foreign)),
            RoutinesState::Newer(version) => Err(routines::newer_error(namespace, version)),
            RoutinesState::Missing => Err(OltpError::Other(format!(
                "{}: envbench's TPC-C routines changed after the run was planned; run it again",
                crate::error::place(url, namespace)
            ))),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn load(
    url: &DatabaseUrl,
    namespace: &Namespace,
    connection: &mut dyn Connection,
    profile: Profile,
    shape: Shape,
    loaders: usize,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<u64, OltpError> {
    schema::recreate(connection, url, namespace, profile, shape)?;
    let scale = shape.scale;
    let expected = expected_rows(profile, scale);
    let loaded = AtomicU64::new(0);
    let report = |rows: u64| progress(rows, expected);
    let feed = Feed { namespace, loaded: &loaded, interrupt, progress: &report };
    let constants = NuRandConstants::load(LOAD_SEED);
    // The small tables first, on the coordinating connection.
    loader_settings(connection)?;
    match profile {
        Profile::Tpcc => load_items(connection, &mut Random::new(LOAD_SEED, constants), &feed)?,
        Profile::Tpcb => load_branches_and_tellers(connection, scale, &feed)?,
    }
    let loaders = loaders.clamp(1, scale as usize);
    let results: Vec<Result<(), OltpError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..loaders)
            .map(|loader| {
                let feed = &feed;
                scope.spawn(move || -> Result<(), OltpError> {
                    let mut connection = namespace.connect(url, "envbench-oltp load")?;
                    loader_settings(connection.as_mut())?;
                    // Warehouses (or branches) loader, loader + loaders, ...: each its own random stream.
                    for unit in (1..=scale).skip(loader).step_by(loaders) {
                        let mut random = Random::new(LOAD_SEED ^ (unit as u64).wrapping_mul(0x9e37_79b9), constants);
                        match profile {
                            Profile::Tpcc => load_warehouse(connection.as_mut(), &mut random, unit, feed)?,
                            Profile::Tpcb => load_accounts(connection.as_mut(), unit, feed)?,
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(OltpError::Other("a loader panicked".into()))))
            .collect()
    });
    // An interrupt is the reason when one was asked for; otherwise the first loader's error.
    if interrupt.load(Ordering::SeqCst) {
        return Err(OltpError::Interrupted);
    }
    for result in results {
        result?;
    }
    Ok(loaded.load(Ordering::Relaxed))
}
