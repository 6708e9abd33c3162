//! Procedures mode: the five TPC-C transactions as routines stored in the server (PL/pgSQL functions on PostgreSQL,
//! stored procedures on MariaDB/MySQL), each called with one round trip through a prepared statement with bound
//! values, as HammerDB's TPROC-C runs them. The client-side mode ([`crate::transactions`]) sends every statement
//! from the client, as an application does; this mode measures what the engine itself can do, the figure HammerDB
//! users compare.
//!
//! Both modes draw their inputs the same way ([`crate::transactions::NewOrderInput`] and its siblings), so the two
//! differ only in where the statements run.
//!
//! The routines belong to the profile's tables: they are installed with a load, in the run's one namespace, and each
//! carries a comment that says envbench made it and at which [`ROUTINES_VERSION`]. A routine of one of these names
//! without that comment is someone else's: it is never replaced or dropped, and the run is refused before anything
//! is stored. Routines of an older version are replaced.

use crate::cardinality::DISTRICTS;
use crate::error::OltpError;
use crate::random::Random;
use crate::transactions::{
    DeliveryInput, NewOrderInput, OrderStatusInput, Outcome, PaymentInput, StockLevelInput, Terminal,
};
use envbench_sql::{Connection, DbError, Dialect, Namespace, Routine, Value, quote_literal};

/// Bumped whenever a routine's definition changes, so older ones are replaced.
pub const ROUTINES_VERSION: u32 = 1;

/// The routines, in the order of the transactions they run.
pub const NAMES: [&str; 5] = [
    "envbench_tpcc_new_order",
    "envbench_tpcc_payment",
    "envbench_tpcc_order_status",
    "envbench_tpcc_delivery",
    "envbench_tpcc_stock_level",
];

/// The start of every comment envbench puts on its routines; the version follows.
const COMMENT_PREFIX: &str = "envbench oltp tpcc routine, version ";

/// The SQLSTATE New-Order's function raises, and catches itself, on an unused item: the specification's intended
/// rollback, which undoes the work done before it without an error reaching the client or the server's log.
const ROLLBACK_CODE: &str = "EB001";

const POSTGRES: &str = include_str!("routines/postgres.sql");
const MYSQL: &str = include_str!("routines/mysql.sql");

/// How the transactions reach the database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every statement sent from the client, one round trip each, as an application does (the default).
    #[default]
    Client,
    /// One call of a stored routine per transaction, as HammerDB's TPROC-C runs them.
    Procedures,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "client" => Some(Mode::Client),
            "procedures" => Some(Mode::Procedures),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Client => "client",
            Mode::Procedures => "procedures",
        }
    }

    /// What the mode measures, for output.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::Client => "client-side statements, one round trip each (what an application sees)",
            Mode::Procedures => "stored procedures, one call per transaction (as HammerDB's TPROC-C runs them)",
        }
    }
}

/// What a namespace holds of envbench's routines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoutinesState {
    /// Every routine, made by envbench at this version.
    Current,
    /// None, some, or some of an older version, all made by envbench: installed (again) by the next run that holds
    /// the tables alone.
    Missing,
    /// Routines of these names that envbench did not make, described.
    Foreign(Vec<String>),
    /// Routines made by a newer envbench (this version): never replaced by an older one.
    Newer(u32),
}

fn comment() -> String {
    format!("{COMMENT_PREFIX}{ROUTINES_VERSION}: made by envbench, dropped by envbench oltp --drop")
}

fn is_envbench(routine: &Routine) -> bool {
    routine.comment.as_deref().is_some_and(|c| c.starts_with(COMMENT_PREFIX))
}

/// The version in envbench's comment on a routine.
fn version(routine: &Routine) -> Option<u32> {
    let rest = routine.comment.as_deref()?.strip_prefix(COMMENT_PREFIX)?;
    rest.split(':').next()?.trim().parse().ok()
}

/// The kind of routine envbench makes in `dialect`: a function on PostgreSQL, a procedure on MariaDB/MySQL.
fn expected_kind(dialect: Dialect) -> &'static str {
    dialect.ops().routine_word
}

/// The routines of envbench's names in `namespace` (none on SQLite).
pub fn found(connection: &mut dyn Connection, namespace: &Namespace) -> Result<Vec<Routine>, DbError> {
    namespace.routines(connection, &NAMES)
}

/// What `namespace` holds of the routines.
pub fn state(connection: &mut dyn Connection, namespace: &Namespace) -> Result<RoutinesState, DbError> {
    let routines = found(connection, namespace)?;
    Ok(judge(&routines, namespace.dialect()))
}

fn judge(routines: &[Routine], dialect: Dialect) -> RoutinesState {
    let foreign: Vec<String> = routines.iter().filter(|r| !is_envbench(r)).map(Routine::describe).collect();
    if !foreign.is_empty() {
        return RoutinesState::Foreign(foreign);
    }
    if let Some(newer) = routines.iter().filter_map(version).filter(|v| *v > ROUTINES_VERSION).max() {
        return RoutinesState::Newer(newer);
    }
    let current = NAMES.iter().all(|name| {
        let of_name: Vec<&Routine> = routines.iter().filter(|r| r.name.eq_ignore_ascii_case(name)).collect();
        of_name.len() == 1 && version(of_name[0]) == Some(ROUTINES_VERSION) && of_name[0].kind == expected_kind(dialect)
    });
    if current { RoutinesState::Current } else { RoutinesState::Missing }
}

/// The refusal for routines a newer envbench made.
pub fn newer_error(namespace: &Namespace, version: u32) -> OltpError {
    OltpError::BadInput(format!(
        "{}: envbench's TPC-C routines there are of version {version}, made by a newer envbench than this one \
         (version {ROUTINES_VERSION}); run that envbench, or remove them with envbench oltp --drop",
        namespace.quoted()
    ))
}

/// The definitions of the routines in `namespace`'s dialect, each one batch: `(name, statement)`.
pub fn definitions(namespace: &Namespace) -> Vec<(&'static str, String)> {
    let dialect = namespace.dialect();
    let source = match dialect {
        Dialect::Postgres => POSTGRES,
        Dialect::MySql => MYSQL,
        Dialect::Sqlite => return Vec::new(),
    };
    let tables = ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"];
    let mut names: Vec<(String, String)> =
        tables.iter().map(|t| (t.to_string(), namespace.qualify(&format!("tpcc_{t}")))).collect();
    for name in NAMES {
        let short = name.trim_start_matches("envbench_tpcc_");
        names.push((format!("{short}_routine"), namespace.qualify(name)));
    }
    names.push(("districts".into(), DISTRICTS.to_string()));
    names.push(("comment".into(), quote_literal(dialect, &comment())));
    names.push(("rollback_code".into(), ROLLBACK_CODE.into()));
    let mut parts = source.split("\n-- routine: ");
    parts.next(); // The file's own comment.
    parts
        .map(|part| {
            let (name, body) = part.split_once('\n').expect("a routine's name line is followed by its body");
            let name = NAMES.iter().find(|n| **n == name.trim()).expect("the routines file names known routines");
            // The leading comment lines stay in the file; a MySQL statement must not end with a semicolon.
            let body: String =
                body.lines().skip_while(|l| l.starts_with("--")).map(|l| format!("{l}\n")).collect::<String>();
            let mut body = body.trim_end().to_string();
            if !dialect.ops().routine_ends_with_semicolon {
                body = body.trim_end_matches(';').to_string();
            }
            for (key, value) in &names {
                body = body.replace(&format!("{{{key}}}"), value);
            }
            (*name, body)
        })
        .collect()
}

/// Install the routines in `namespace`, replacing envbench's of any version, refusing where one of these names is
/// someone else's. On PostgreSQL in one transaction, so a failure leaves what was there.
pub fn install(connection: &mut dyn Connection, namespace: &Namespace) -> Result<(), OltpError> {
    let existing = found(connection, namespace)?;
    match judge(&existing, namespace.dialect()) {
        RoutinesState::Foreign(foreign) => return Err(foreign_error(namespace, &foreign)),
        RoutinesState::Newer(version) => return Err(newer_error(namespace, version)),
        RoutinesState::Current | RoutinesState::Missing => {}
    }
    let transactional = namespace.dialect().ops().transactional_ddl;
    if transactional {
        connection.begin()?;
    }
    let result = (|| -> Result<(), DbError> {
        for routine in &existing {
            connection.batch(&namespace.drop_routine(routine))?;
        }
        for (_, definition) in definitions(namespace) {
            connection.batch(&definition)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) if transactional => Ok(connection.commit()?),
        Ok(()) => Ok(()),
        Err(error) => {
            if transactional {
                let _ = connection.rollback();
            }
            Err(error.into())
        }
    }
}

/// Drop envbench's routines from `namespace` (never another's), returning what was dropped, described.
pub fn drop_envbench_routines(
    connection: &mut dyn Connection,
    namespace: &Namespace,
) -> Result<Vec<String>, OltpError> {
    let mut dropped = Vec::new();
    for routine in found(connection, namespace)?.iter().filter(|r| is_envbench(r)) {
        connection.batch(&namespace.drop_routine(routine))?;
        dropped.push(routine.describe());
    }
    Ok(dropped)
}

/// The refusal for routines of envbench's names that envbench did not make.
pub fn foreign_error(namespace: &Namespace, foreign: &[String]) -> OltpError {
    OltpError::Foreign(format!(
        "{}: {} bear the names of envbench's TPC-C routines but envbench did not make them (its routines carry a \
         comment that says so); envbench never replaces or drops a routine it did not make. Use another schema or \
         database, or drop them yourself if they are expendable",
        namespace.quoted(),
        foreign.join(", ")
    ))
}

/// The calls of the routines, as the namespace's server calls them ([`envbench_sql::Server::call`]), built once per
/// virtual user.
pub struct Calls {
    dialect: Dialect,
    new_order: String,
    payment: String,
    order_status: String,
    delivery: String,
    stock_level: String,
}

impl Calls {
    /// The calls in `namespace`; refused where its server has no stored routines.
    pub fn new(namespace: &Namespace) -> Result<Calls, DbError> {
        let dialect = namespace.dialect();
        let server = dialect.server();
        let none = || {
            DbError::new(
                envbench_sql::ErrorKind::Refused,
                format!("{} has no stored routines: use --mode client", dialect.ops().server_name),
            )
        };
        let call = |name: &str, arguments: usize| server.call(&namespace.qualify(name), arguments).ok_or_else(none);
        // New-Order takes the warehouse, district and customer, then its order lines as the server encodes a list.
        let lines = server.list_argument_count().ok_or_else(none)?;
        Ok(Calls {
            dialect,
            new_order: call(NAMES[0], 3 + lines)?,
            payment: call(NAMES[1], 7)?,
            order_status: call(NAMES[2], 4)?,
            delivery: call(NAMES[3], 2)?,
            stock_level: call(NAMES[4], 3)?,
        })
    }

    /// After a failed call: PostgreSQL's call was its own transaction, which the error ended; a MySQL procedure
    /// rolled its own back, but a lost statement may leave one open, so it is rolled back here too.
    pub fn end_after_error(&self, connection: &mut dyn Connection) {
        if self.dialect.ops().rollback_after_failed_call {
            let _ = connection.rollback();
        }
    }
}

fn int(value: i64) -> Value {
    Value::Int(value)
}

/// The one integer a routine answers with.
fn answer(rows: Vec<envbench_sql::Row>, routine: &str) -> Result<i64, DbError> {
    let row = rows.into_iter().next().ok_or_else(|| DbError::other(format!("{routine} answered no row")))?;
    if row.is_null(0) { Ok(0) } else { row.int(0) }
}

/// Run one TPC-C transaction of `kind` as one call of its routine.
pub fn run(
    kind: crate::transactions::Kind,
    connection: &mut dyn Connection,
    calls: &Calls,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    use crate::transactions::Kind;
    match kind {
        Kind::NewOrder => {
            let input = NewOrderInput::draw(random, terminal);
            let (w, d, c) = (int(input.w), int(input.d), int(input.c));
            let mut lines = input.lines.iter().map(|l| [l.item, l.supply, l.quantity]);
            let mut params = vec![w, d, c];
            params.extend(calls.dialect.server().list_arguments(&mut lines).unwrap_or_default());
            // The routine answers the order's id, or 0 when it rolled back on the unused item.
            let order = answer(connection.query(&calls.new_order, &params)?, NAMES[0])?;
            Ok(if order == 0 { Outcome::RolledBack } else { Outcome::Committed })
        }
        Kind::Payment => {
            let input = PaymentInput::draw(random, terminal);
            let (id, last) = input.customer.arguments();
            let params =
                [int(input.w), int(input.d), int(input.c_w), int(input.c_d), int(id), last, Value::Real(input.amount)];
            answer(connection.query(&calls.payment, &params)?, NAMES[1])?;
            Ok(Outcome::Committed)
        }
        Kind::OrderStatus => {
            let input = OrderStatusInput::draw(random, terminal);
            let (id, last) = input.customer.arguments();
            answer(connection.query(&calls.order_status, &[int(input.w), int(input.d), int(id), last])?, NAMES[2])?;
            Ok(Outcome::Committed)
        }
        Kind::Delivery => {
            let input = DeliveryInput::draw(random, terminal);
            answer(connection.query(&calls.delivery, &[int(input.w), int(input.carrier)])?, NAMES[3])?;
            Ok(Outcome::Committed)
        }
        Kind::StockLevel => {
            let input = StockLevelInput::draw(random, terminal);
            let params = [int(input.w), int(input.d), int(input.threshold)];
            answer(connection.query(&calls.stock_level, &params)?, NAMES[4])?;
            Ok(Outcome::Committed)
        }
        Kind::TpcB => Err(DbError::other("procedures mode runs the tpcc profile only")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routine(name: &str, comment: Option<&str>) -> Routine {
        Routine { name: name.into(), kind: "function".into(), comment: comment.map(Into::into), arguments: "".into() }
    }

    #[test]
    fn only_routines_with_envbench_comment_are_envbench() {
        let pg = Dialect::Postgres;
        let current: Vec<Routine> = NAMES.iter().map(|n| routine(n, Some(&comment()))).collect();
        assert_eq!(judge(&current, pg), RoutinesState::Current);
        assert_eq!(judge(&current, Dialect::MySql), RoutinesState::Missing, "MySQL's are procedures");
        assert_eq!(judge(&current[..4], pg), RoutinesState::Missing);
        let mut old = current.clone();
        old[2].comment = Some(format!("{COMMENT_PREFIX}0: made by envbench"));
        assert_eq!(judge(&old, pg), RoutinesState::Missing);
        let mut newer = current.clone();
        newer[2].comment = Some(format!("{COMMENT_PREFIX}{}: made by envbench", ROUTINES_VERSION + 1));
        assert_eq!(judge(&newer, pg), RoutinesState::Newer(ROUTINES_VERSION + 1), "never downgraded");
        let mut foreign = current.clone();
        foreign.push(routine("envbench_tpcc_payment", None));
        assert_eq!(judge(&foreign, pg), RoutinesState::Foreign(vec!["envbench_tpcc_payment (a function)".into()]));
        let mut overloaded = current;
        overloaded.push(routine("envbench_tpcc_payment", Some(&comment())));
        assert_eq!(judge(&overloaded, pg), RoutinesState::Missing, "a second overload of ours is replaced");
    }

    #[test]
    fn every_routine_is_defined_with_qualified_names_and_its_comment() {
        for dialect in [Dialect::Postgres, Dialect::MySql] {
            let namespace = Namespace::named(dialect, "bench");
            let definitions = definitions(&namespace);
            assert_eq!(definitions.iter().map(|(n, _)| *n).collect::<Vec<_>>(), NAMES, "{dialect:?}");
            for (name, body) in definitions {
                assert!(!body.contains('{') && !body.contains('}'), "{name}: a placeholder is left");
                assert!(body.contains(&namespace.qualify(name)), "{name} is created qualified");
                assert!(body.contains(&comment()), "{name} carries the comment");
                assert!(!body.contains(" tpcc_"), "{name}: every table is qualified");
                if !dialect.ops().routine_ends_with_semicolon {
                    assert!(!body.ends_with(';'), "{name}: a MySQL statement ends without a semicolon");
                }
            }
        }
        assert!(definitions(&Namespace::named(Dialect::Sqlite, "main")).is_empty());
    }
}
