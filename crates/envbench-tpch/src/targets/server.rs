//! What the server target stands on: the one schema their tables live in (a [`Namespace`], resolved once per run),
//! the tables' definitions, the marker table that says a load is envbench's and complete, the lock a run holds on
//! the tables, and the watcher that asks the server to stop a query on Ctrl-C or at its deadline.
//!
//! Every statement names its tables qualified with the namespace, and every session's search path is pinned to it,
//! so nothing envbench checks, creates, drops, loads, refreshes or queries can be a table of the same name elsewhere
//! (PostgreSQL's `public.orders` behind a schema named after the user, where an unqualified `DROP TABLE orders`
//! would land).

use crate::data::{GENERATOR, TableName};
use crate::error::TpchError;
use crate::queries::TableNames;
use envbench_sql::{
    Connection, DatabaseUrl, DbError, Marker, MarkerState, Namespace, RelationKind, ServerLock, ServerLockError,
    ServerLockMode, Value,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Instant;

/// Why the watcher of [`watched`] stopped a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The user pressed Ctrl-C (the interrupt flag was set).
    Interrupted,
    /// The deadline passed before the server's own time limit stopped the statement.
    Deadline,
}

/// Run `statement` on this thread while a watcher thread looks at `interrupt`, and at `deadline` when there is one,
/// every [`super::INTERRUPT_POLL`]. The first time either says stop, the watcher calls `stop` once with the reason
/// (which asks the server to cancel the statement: a cancel token, `KILL QUERY`) and ends. It wakes at once when the
/// statement ends, so the time measured around a query never includes waiting for it. Returns the statement's result
/// and what the watcher stopped it for, if it did.
pub fn watched<T>(
    interrupt: &AtomicBool,
    deadline: Option<Instant>,
    stop: impl FnOnce(Stop) + Send,
    statement: impl FnOnce() -> T,
) -> (T, Option<Stop>) {
    let (finished, watch) = channel::<()>();
    std::thread::scope(|scope| {
        let watcher = scope.spawn(move || {
            loop {
                let wait = deadline.map_or(super::INTERRUPT_POLL, |d| {
                    d.saturating_duration_since(Instant::now()).min(super::INTERRUPT_POLL)
                });
                if !matches!(watch.recv_timeout(wait), Err(RecvTimeoutError::Timeout)) {
                    return None;
                }
                let reason = if interrupt.load(Ordering::SeqCst) {
                    Stop::Interrupted
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Stop::Deadline
                } else {
                    continue;
                };
                stop(reason);
                return Some(reason);
            }
        });
        let result = statement();
        drop(finished);
        (result, watcher.join().expect("the watcher does not panic"))
    })
}

/// An error of the server at `url` as a target reports it, the URL named once (in front, with the server's kind).
pub fn server_error(url: &DatabaseUrl, error: &DbError) -> TpchError {
    let shown = url.shown();
    let message = error.detail(&shown).to_string();
    TpchError::Server { server: url.dialect().ops().server_name, url: shown, message }
}

/// The table that marks a load as envbench's and complete.
pub const MARKER_TABLE: &str = "envbench_tpch_load";
/// The marker ([`envbench_sql::marker`]): one signed row, its payload the load it describes (empty while a load is
/// under way). A table of its name without the signed row is someone else's, like the tables beside it.
const MARKER: Marker = Marker {
    table: MARKER_TABLE,
    maker: "tpch",
    payload: "scale_factor DOUBLE PRECISION, generator VARCHAR(100), row_counts TEXT, loaded_at {type:timestamp}",
};
const MARKER_PAYLOAD: [&str; 4] = ["scale_factor", "generator", "row_counts", "loaded_at"];
/// How envbench's sessions name themselves on the server.
pub const APPLICATION_NAME: &str = "envbench-tpch";
/// What the server lock is taken on, within the namespace.
const LOCK_RESOURCE: &str = "tpch";

/// A table's columns, the same on both servers.
pub fn columns(table: TableName) -> &'static str {
    match table {
        TableName::Region => "r_regionkey integer NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152)",
        TableName::Nation => {
            "n_nationkey integer NOT NULL, n_name char(25) NOT NULL, n_regionkey integer NOT NULL, \
             n_comment varchar(152)"
        }
        TableName::Supplier => {
            "s_suppkey bigint NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL, \
             s_nationkey integer NOT NULL, s_phone char(15) NOT NULL, s_acctbal decimal(15,2) NOT NULL, \
             s_comment varchar(101) NOT NULL"
        }
        TableName::Customer => {
            "c_custkey bigint NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL, \
             c_nationkey integer NOT NULL, c_phone char(15) NOT NULL, c_acctbal decimal(15,2) NOT NULL, \
             c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL"
        }
        TableName::Part => {
            "p_partkey bigint NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL, \
             p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL, \
             p_container char(10) NOT NULL, p_retailprice decimal(15,2) NOT NULL, p_comment varchar(23) NOT NULL"
        }
        TableName::PartSupp => {
            "ps_partkey bigint NOT NULL, ps_suppkey bigint NOT NULL, ps_availqty integer NOT NULL, \
             ps_supplycost decimal(15,2) NOT NULL, ps_comment varchar(199) NOT NULL"
        }
        TableName::Orders => {
            "o_orderkey bigint NOT NULL, o_custkey bigint NOT NULL, o_orderstatus char(1) NOT NULL, \
             o_totalprice decimal(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL, \
             o_clerk char(15) NOT NULL, o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL"
        }
        TableName::LineItem => {
            "l_orderkey bigint NOT NULL, l_partkey bigint NOT NULL, l_suppkey bigint NOT NULL, \
             l_linenumber integer NOT NULL, l_quantity decimal(15,2) NOT NULL, l_extendedprice decimal(15,2) NOT NULL, \
             l_discount decimal(15,2) NOT NULL, l_tax decimal(15,2) NOT NULL, l_returnflag char(1) NOT NULL, \
             l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL, \
             l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL, \
             l_comment varchar(44) NOT NULL"
        }
    }
}

/// A table's primary key columns.
pub fn primary_key(table: TableName) -> &'static str {
    match table {
        TableName::Region => "r_regionkey",
        TableName::Nation => "n_nationkey",
        TableName::Supplier => "s_suppkey",
        TableName::Customer => "c_custkey",
        TableName::Part => "p_partkey",
        TableName::PartSupp => "ps_partkey, ps_suppkey",
        TableName::Orders => "o_orderkey",
        TableName::LineItem => "l_orderkey, l_linenumber",
    }
}

/// The foreign-key indexes the queries join on: name (created in the table's schema), table, columns.
pub const SECONDARY_INDEXES: [(&str, TableName, &str); 7] = [
    ("lineitem_part_supp_idx", TableName::LineItem, "l_partkey, l_suppkey"),
    ("lineitem_supp_idx", TableName::LineItem, "l_suppkey"),
    ("orders_cust_idx", TableName::Orders, "o_custkey"),
    ("partsupp_supp_idx", TableName::PartSupp, "ps_suppkey"),
    ("customer_nation_idx", TableName::Customer, "c_nationkey"),
    ("supplier_nation_idx", TableName::Supplier, "s_nationkey"),
    ("nation_region_idx", TableName::Nation, "n_regionkey"),
];

/// What the marker says about the tables in the namespace.
#[derive(Debug, PartialEq)]
pub enum ExistingLoad {
    /// No TPC-H table and no marker.
    None,
    /// Relations of TPC-H names (or of the marker's) that envbench did not make, described for a refusal.
    Foreign(Vec<String>),
    /// envbench's marker without its payload: a load that did not finish.
    Incomplete,
    Complete {
        scale_factor: f64,
        generator: String,
        rows: BTreeMap<String, u64>,
    },
}

/// A server's TPC-H tables: where they are and the lock a run holds on them.
pub struct ServerTables {
    url: DatabaseUrl,
    namespace: Namespace,
    /// Held, never used: released when dropped or replaced.
    lock: Option<ServerLock>,
}

impl ServerTables {
    /// Resolve the namespace once, on `connection` to `url`: the schema (PostgreSQL) or database (MySQL) given with
    /// `--schema`, created when missing, or the connection's own.
    pub fn resolve(
        url: DatabaseUrl,
        connection: &mut dyn Connection,
        schema: Option<&str>,
    ) -> Result<ServerTables, DbError> {
        let namespace = Namespace::resolve(connection, schema, true)?;
        Ok(ServerTables { url, namespace, lock: None })
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// `table` qualified with the namespace, quoted.
    pub fn qualify(&self, table: &str) -> String {
        self.namespace.qualify(table)
    }

    /// The eight tables as the queries name them: qualified.
    pub fn table_names(&self) -> TableNames {
        TableNames::new(|table| self.qualify(table.as_str()))
    }

    /// A new connection whose unqualified names resolve in the namespace only.
    pub fn connection(&self) -> Result<Box<dyn Connection>, DbError> {
        self.namespace.connect(&self.url, APPLICATION_NAME)
    }

    /// An error of the server as the target reports it, the URL named once.
    pub fn error(&self, error: &DbError) -> TpchError {
        server_error(&self.url, error)
    }

    /// What is in the namespace under the TPC-H tables' names and the marker's: nothing, someone else's relations, or
    /// envbench's load (complete or not). Only this namespace's catalog is read.
    pub fn existing_load(&self, connection: &mut dyn Connection) -> Result<ExistingLoad, DbError> {
        let mut names: Vec<&str> = TableName::ALL.iter().map(|t| t.as_str()).collect();
        names.push(MARKER_TABLE);
        let found = self.namespace.relations(connection, &names)?;
        let tables: Vec<_> = found.iter().filter(|r| !r.name.eq_ignore_ascii_case(MARKER_TABLE)).collect();
        let relations: Vec<String> = tables.iter().map(|r| r.describe()).collect();
        let not_tables: Vec<String> =
            tables.iter().filter(|r| r.kind != RelationKind::Table).map(|r| r.describe()).collect();
        match MARKER.state(connection, &self.namespace, &found)? {
            MarkerState::Absent if relations.is_empty() => return Ok(ExistingLoad::None),
            MarkerState::Absent => return Ok(ExistingLoad::Foreign(relations)),
            // A table of the marker's name without envbench's signed row is someone else's, like the tables beside
            // it.
            MarkerState::Foreign(marker) => return Ok(ExistingLoad::Foreign([relations, vec![marker]].concat())),
            // envbench never makes a view, a sequence or an index of a table's name.
            MarkerState::Ours { .. } if !not_tables.is_empty() => return Ok(ExistingLoad::Foreign(not_tables)),
            MarkerState::Ours { .. } => {}
        }
        let sql = format!(
            "SELECT scale_factor, generator, row_counts FROM {} WHERE scale_factor IS NOT NULL",
            self.qualify(MARKER_TABLE)
        );
        Ok(match connection.query_optional(&sql, &[])? {
            Some(row) => ExistingLoad::Complete {
                scale_factor: row.real(0).unwrap_or(f64::NAN),
                generator: row.text(1).unwrap_or_default(),
                rows: serde_json::from_str(&row.text(2).unwrap_or_default()).unwrap_or_default(),
            },
            None => ExistingLoad::Incomplete,
        })
    }

    /// The rows of `existing` when it is a complete load of `scale_factor` by this generator: the load to reuse.
    pub fn matching(existing: ExistingLoad, scale_factor: f64) -> Option<BTreeMap<String, u64>> {
        match existing {
            ExistingLoad::Complete { scale_factor: loaded, generator, rows }
                if (loaded - scale_factor).abs() <= 1e-12 * scale_factor && generator == GENERATOR =>
            {
                Some(rows)
            }
            _ => None,
        }
    }

    /// What a prepare did, for people: `loaded SF 1 in MariaDB 10.11.6 (database `test`): 8.66 M rows in 61.2 s
    /// (INSERT, indexes, ANALYZE TABLE)` or `reusing the tables of SF 1 ...` (`load` is `None` for a reused load:
    /// otherwise its seconds and how it was done).
    pub fn summary(
        &self,
        server: &str,
        scale_factor: f64,
        rows: &BTreeMap<String, u64>,
        load: Option<(f64, &str)>,
    ) -> String {
        let total: u64 = rows.values().sum();
        let place = self.namespace.dialect().ops().namespace_word;
        format!(
            "{} SF {} in {server} ({place} {}): {} rows{}",
            if load.is_none() { "reusing the tables of" } else { "loaded" },
            crate::scale::format_scale_factor(scale_factor),
            self.namespace.quoted(),
            envbench_core::text::count(total as f64),
            load.map(|(seconds, how)| format!(" in {seconds:.1} s ({how})")).unwrap_or_default()
        )
    }

    /// The refusal of relations envbench did not make, by name.
    pub fn foreign(&self, relations: &[String]) -> TpchError {
        let ops = self.namespace.dialect().ops();
        let (place, elsewhere) = (ops.namespace_word, ops.namespace_choice);
        self.error(&DbError::other(format!(
            "{place} {} holds TPC-H tables that envbench did not load ({}; no signed {MARKER_TABLE} marker of envbench's); \
             envbench will not touch them. Name {elsewhere}",
            self.namespace.quoted(),
            relations.join(", ")
        )))
    }

    /// Refuse a namespace holding TPC-H tables envbench did not load.
    pub fn check(&self) -> Result<(), TpchError> {
        let mut connection = self.connection().map_err(|e| self.error(&e))?;
        match self.existing_load(connection.as_mut()).map_err(|e| self.error(&e))? {
            ExistingLoad::Foreign(relations) => Err(self.foreign(&relations)),
            _ => Ok(()),
        }
    }

    /// Say, before anything else of a load, that the tables are envbench's and their load under way: the signed
    /// marker made whole (when missing) or its payload emptied, so a run looking at the tables meanwhile always sees
    /// envbench's marker beside them, and a load that stops halfway is recognised as envbench's and incomplete. Only
    /// once [`ServerTables::existing_load`] found nothing, or envbench's own load.
    pub fn mark_under_way(&self, connection: &mut dyn Connection) -> Result<(), DbError> {
        let found = self.namespace.relations(connection, &[MARKER_TABLE])?;
        match MARKER.state(connection, &self.namespace, &found)? {
            MarkerState::Absent => MARKER.create(connection, &self.namespace).map(|_| ()),
            MarkerState::Ours { .. } => MARKER.clear_payload(connection, &self.namespace, &MARKER_PAYLOAD),
            MarkerState::Foreign(marker) => Err(DbError::other(format!("{marker}: not envbench's marker"))),
        }
    }

    /// The statements that replace envbench's tables with empty ones, each dropped and created, after
    /// [`ServerTables::mark_under_way`]. `table_options` is what follows every table's columns, and `primary_keys`
    /// puts the primary keys in the definitions (InnoDB clusters rows on them) rather than after the load.
    pub fn rebuild_statements(&self, table_options: &str, primary_keys: bool) -> Vec<String> {
        let mut statements = Vec::new();
        for table in TableName::ALL {
            statements.push(format!("DROP TABLE IF EXISTS {}", self.qualify(table.as_str())));
        }
        for table in TableName::ALL {
            let key = if primary_keys { format!(", PRIMARY KEY ({})", primary_key(table)) } else { String::new() };
            statements.push(format!(
                "CREATE TABLE {} ({}{key}){table_options}",
                self.qualify(table.as_str()),
                columns(table)
            ));
        }
        statements
    }

    /// Rows per table as the server counts them.
    pub fn count_rows(&self, connection: &mut dyn Connection) -> Result<BTreeMap<String, u64>, DbError> {
        let mut rows = BTreeMap::new();
        for table in TableName::ALL {
            let sql = format!("SELECT count(*) FROM {}", self.qualify(table.as_str()));
            let count = connection.query_optional(&sql, &[])?.map(|row| row.int(0)).transpose()?.unwrap_or(0);
            rows.insert(table.as_str().to_string(), count as u64);
        }
        Ok(rows)
    }

    /// Count the rows and write the marker's row: the load is complete. Its row counts are returned.
    pub fn mark_complete(
        &self,
        connection: &mut dyn Connection,
        scale_factor: f64,
    ) -> Result<BTreeMap<String, u64>, DbError> {
        let rows = self.count_rows(connection)?;
        let rows_text = serde_json::to_string(&rows).expect("row counts always serialize");
        MARKER.set_payload(
            connection,
            &self.namespace,
            "scale_factor = ?, generator = ?, row_counts = ?, loaded_at = CURRENT_TIMESTAMP",
            &[Value::Real(scale_factor), GENERATOR.into(), rows_text.into()],
        )?;
        Ok(rows)
    }

    /// Hold the lock on the tables from now on, `exclusive` for a run that loads or writes, shared for one that only
    /// reads; a run that already holds one gives it up first. Refused, without waiting, while another run holds it
    /// in a mode that conflicts, naming that run.
    pub fn lock(&mut self, exclusive: bool) -> Result<(), TpchError> {
        self.lock = None;
        let mode = if exclusive { ServerLockMode::Exclusive } else { ServerLockMode::Shared };
        let application = format!("{APPLICATION_NAME} (pid {})", std::process::id());
        match ServerLock::take(&self.url, &self.namespace, LOCK_RESOURCE, mode, &application) {
            Ok(lock) => {
                self.lock = Some(lock);
                Ok(())
            }
            Err(busy @ ServerLockError::Busy { .. }) => Err(TpchError::Busy(format!("{}: {busy}", self.url.shown()))),
            Err(ServerLockError::Database(error)) => Err(self.error(&error)),
        }
    }
}
