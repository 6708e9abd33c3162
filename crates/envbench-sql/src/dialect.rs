//! The databases envbench speaks to, and what differs between them: one `&'static` row of [`DialectOps`] per
//! [`Dialect`], read by every workload and the results store instead of asking which dialect they have.

use crate::forms::{DateFields, DateLiterals, Intervals, RowLimit, RowLock};

/// Which SQL a database speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    Sqlite,
    Postgres,
    MySql,
}

/// The isolation level a workload's sessions run their transactions at (`--isolation`), where the server has a choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    pub const ALL: [Isolation; 3] = [Isolation::ReadCommitted, Isolation::RepeatableRead, Isolation::Serializable];

    /// The level as users write it: `read-committed`, `repeatable-read`, `serializable`.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read-committed",
            Isolation::RepeatableRead => "repeatable-read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The level in SQL's words.
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    /// `--isolation` as users write it (`read_committed` and `READ COMMITTED` too).
    pub fn parse(text: &str) -> Result<Isolation, String> {
        let wanted = text.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        Isolation::ALL
            .into_iter()
            .find(|level| level.name() == wanted)
            .ok_or_else(|| format!("--isolation '{text}': give read-committed, repeatable-read or serializable"))
    }
}

impl Dialect {
    /// The statement that makes a session's transactions run at `level`, or why this database cannot.
    pub fn isolation_statement(self, level: Isolation) -> Result<String, String> {
        match self.ops().set_isolation {
            Some(statement) => Ok(statement.replace("{level}", level.sql())),
            None => Err(format!(
                "--isolation {}: {} runs every transaction serializable and has no other level; leave --isolation \
                 out, or use --target {}",
                level.name(),
                self.ops().server_name,
                crate::url_forms_where(|ops| ops.set_isolation.is_some())
            )),
        }
    }
}

/// What differs between the databases envbench speaks to, one row per dialect ([`Dialect::ops`]), as fio's
/// `ioengine_ops`: the workloads read a capability here instead of asking which dialect they have, so a new database
/// is a new row, and no `==` on a dialect outside this crate quietly takes the wrong branch for it (a test refuses
/// one).
#[derive(Clone, Debug)]
pub struct DialectOps {
    /// What users call the server, in messages: `PostgreSQL`, `MySQL/MariaDB`.
    pub server_name: &'static str,
    /// A URL of this server as messages show one (`postgres://user@host:5432/database`); `None` for an embedded
    /// database, named by its file.
    pub url_example: Option<&'static str>,
    /// The database is a file this process opens (SQLite), not a server reached over a connection.
    pub embedded: bool,
    /// The user may name the namespace the tables go in (`--schema`).
    pub named_namespaces: bool,
    /// What that namespace is called: `schema` (PostgreSQL), `database` (MariaDB/MySQL).
    pub namespace_word: &'static str,
    /// One transaction writes at a time; concurrent writers queue on the database's lock.
    pub single_writer: bool,
    /// Statements a session runs first so that commits are durable and readers do not block the writer, where the
    /// defaults are not (SQLite: the write-ahead log and full syncs).
    pub durable_session: Option<&'static str>,
    /// How a table can say whose it is in the catalog (a marker's comment).
    pub table_comment: TableComment,
    /// Creating tables in a schema needs a privilege that a fresh database does not grant everyone (PostgreSQL 15's
    /// `public`), checked before a load starts.
    pub schema_create_privilege: bool,
    /// Range partitions of a table.
    pub partitions: bool,
    /// A partition is a table of its own in the catalog (PostgreSQL), dropped and listed by name.
    pub partitions_are_tables: bool,
    /// Stored routines can be created and called.
    pub stored_routines: bool,
    /// What a stored routine is called: `function` (PostgreSQL), `procedure` (MariaDB/MySQL).
    pub routine_word: &'static str,
    /// A routine's definition, sent as one statement, may end in `;` (MySQL's may not).
    pub routine_ends_with_semicolon: bool,
    /// Definitions run inside a transaction, so routines are replaced all at once or not at all.
    pub transactional_ddl: bool,
    /// A failed routine call may leave a transaction open, which the caller rolls back (MySQL); PostgreSQL's call
    /// was its own transaction, which the error ended.
    pub rollback_after_failed_call: bool,
    /// Per-session wait events the server reports while a run measures (PostgreSQL's `pg_stat_activity`).
    pub wait_events: bool,
    /// The server's own TPC-B client runs against it as a cross-check (`pgbench`).
    pub pgbench: bool,
    /// The statement that begins a transaction that will write. SQLite takes its write lock at once, so concurrent
    /// writers wait on the busy timeout instead of failing at their first write.
    pub begin_write: &'static str,
    /// The statement that begins a transaction that only reads, at the server's default isolation, taking no lock.
    pub begin_read: &'static str,
    /// The statement that begins a read-only transaction whose every query sees one snapshot of the database.
    pub begin_snapshot: &'static str,
    /// The statement that makes every later transaction of a session read-only, so a write the session is sent is
    /// refused by the server (a replay's guard for a target that may be production).
    pub read_only_session: &'static str,
    /// The statement that sets the isolation of a session's next transactions, `{level}` its level in SQL's words
    /// ([`Isolation::sql`]); `None` where there is one level (SQLite's transactions are serializable).
    pub set_isolation: Option<&'static str>,
    /// Session settings of a connection that bulk-loads tables an interrupted load rebuilds anyway: commits need not
    /// wait for the disk, and checks a fresh table cannot fail are skipped.
    pub bulk_load_session: &'static str,
    /// The statement that refreshes the optimizer's statistics of one table, `{table}` its qualified name.
    pub analyze_table: &'static str,
    /// How a user points a workload at another namespace, for messages that refuse one.
    pub namespace_choice: &'static str,
    /// The server's clock now, in seconds since the Unix epoch, as an SQL expression.
    pub clock_seconds: &'static str,
    /// `{a}` differs from `{b}`, NULL being a value like any other.
    pub is_distinct_from: &'static str,
    /// Every row has an implicit, increasing id (SQLite's `rowid`), so a table needs no key column of its own to keep
    /// insertion order.
    pub implicit_row_id: bool,
    /// Type names.
    pub types: SqlTypes,
    /// How the catalog answers what envbench asks of a namespace.
    pub catalog: Catalog,
    /// `{x}` compared, sorted and grouped case-sensitively ([`Dialect::adapt`]'s `{cs:x}`).
    pub case_sensitive: &'static str,
    /// The type names a cast may not name here, and the name it takes instead ([`Dialect::adapt`]).
    pub cast_types: &'static [(&'static str, &'static str)],
    /// `x::type` casts.
    pub double_colon_casts: bool,
    /// How a query keeps its first rows (portable: `LIMIT n`).
    pub row_limit: RowLimit,
    /// How a read locks the rows it will update (portable: ` FOR UPDATE`).
    pub row_lock: RowLock,
    /// How a date's field is read (portable: `extract(year from x)`).
    pub date_fields: DateFields,
    /// How a date literal is written (portable: `date '1998-12-01'`).
    pub date_literals: DateLiterals,
    /// How a date moves by an interval (portable: `x + interval '90' day`).
    pub intervals: Intervals,
}

/// How a table can carry a comment, which the catalog then shows beside its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableComment {
    /// It cannot (SQLite).
    None,
    /// `COMMENT ON TABLE t IS '...'`, a statement of its own (PostgreSQL).
    Statement,
    /// `COMMENT='...'` among the table's options in its `CREATE TABLE` (MariaDB/MySQL).
    TableOption,
}

/// How a dialect names things and how its catalog answers what [`Namespace`](crate::Namespace) asks: every query
/// takes the namespace's name as its first parameter, then the names asked about (`{list}` their placeholders).
#[derive(Clone, Debug)]
pub struct Catalog {
    /// The character that quotes an identifier, doubled inside it.
    pub identifier_quote: char,
    /// A backslash escapes the next character inside string literals (MySQL, unless `NO_BACKSLASH_ESCAPES`).
    pub backslash_escapes: bool,
    /// The one namespace of a database that has one (SQLite's `main`), whatever name is asked for.
    pub only_namespace: Option<&'static str>,
    /// The connection's own namespace, and what to tell a user whose connection has none.
    pub current_namespace: (&'static str, &'static str),
    /// One row when the namespace `?` exists.
    pub namespace_exists: &'static str,
    /// Makes unqualified names of a session resolve in one namespace only, `{namespace}` its quoted name.
    pub pin: Option<&'static str>,
    /// The relations of the namespace named in `{list}` (any object that takes a relation's name): its name, its
    /// kind as the catalog writes it, and its comment.
    pub relations: &'static str,
    /// The catalog's kinds of relation in words (`r` is a table, `S` a sequence); a kind not listed is its own word.
    pub relation_kinds: &'static [(&'static str, &'static str)],
    /// The columns of table `?` (the second parameter), in order.
    pub columns: &'static str,
    /// The stored routines of the namespace named in `{list}`: name, kind (`function`, `procedure`...), comment and
    /// the arguments a `DROP` names (empty where a name alone drops it); `None` where there are none.
    pub routines: Option<&'static str>,
    /// `DROP FUNCTION name(arguments)`: routines are overloaded by their arguments, which a drop names.
    pub overloaded_routines: bool,
}

/// The names of the column types envbench's tables use, in one dialect.
#[derive(Clone, Debug)]
pub struct SqlTypes {
    /// A 64-bit integer key the database numbers itself, with its `PRIMARY KEY`.
    pub serial_key: &'static str,
    pub bigint: &'static str,
    pub double: &'static str,
    /// A date and time without a time zone, reaching past 2038.
    pub timestamp: &'static str,
}

/// SQLite: an embedded file, one writer at a time.
static SQLITE_OPS: DialectOps = DialectOps {
    server_name: "SQLite",
    url_example: None,
    embedded: true,
    named_namespaces: false,
    namespace_word: "schema",
    single_writer: true,
    durable_session: Some("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL"),
    table_comment: TableComment::None,
    schema_create_privilege: false,
    partitions: false,
    partitions_are_tables: false,
    stored_routines: false,
    routine_word: "procedure",
    routine_ends_with_semicolon: true,
    transactional_ddl: true,
    rollback_after_failed_call: false,
    wait_events: false,
    pgbench: false,
    begin_write: "BEGIN IMMEDIATE",
    begin_read: "BEGIN",
    begin_snapshot: "BEGIN DEFERRED",
    read_only_session: "PRAGMA query_only = ON",
    set_isolation: None,
    bulk_load_session: "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF",
    analyze_table: "ANALYZE {table}",
    namespace_choice: "another database file",
    clock_seconds: "((julianday('now') - 2440587.5) * 86400.0)",
    is_distinct_from: "{a} IS NOT {b}",
    implicit_row_id: true,
    types: SqlTypes { serial_key: "INTEGER PRIMARY KEY", bigint: "INTEGER", double: "REAL", timestamp: "TIMESTAMP" },
    catalog: Catalog {
        identifier_quote: '"',
        backslash_escapes: false,
        only_namespace: Some("main"),
        current_namespace: ("SELECT 'main'", "SQLite's database is its one namespace"),
        namespace_exists: "SELECT 1 WHERE ? = 'main'",
        pin: None,
        // Names are case-insensitive: `DROP TABLE orders` drops a table created as `ORDERS`.
        relations: "SELECT name, type, NULL FROM sqlite_master WHERE ? = 'main' AND name COLLATE NOCASE IN ({list}) \
                    ORDER BY 1",
        relation_kinds: &[],
        columns: "SELECT name FROM pragma_table_info(?2, ?1) ORDER BY cid",
        routines: None,
        overloaded_routines: false,
    },
    case_sensitive: "{x}",
    cast_types: &[],
    double_colon_casts: false,
    row_limit: RowLimit::Limit,
    row_lock: RowLock::WholeDatabase,
    date_fields: DateFields::Strftime,
    date_literals: DateLiterals::Text,
    intervals: Intervals::DateModifier,
};

/// PostgreSQL.
static POSTGRES_OPS: DialectOps = DialectOps {
    server_name: "PostgreSQL",
    url_example: Some("postgres://user@host:5432/database"),
    embedded: false,
    named_namespaces: true,
    namespace_word: "schema",
    single_writer: false,
    durable_session: None,
    table_comment: TableComment::Statement,
    schema_create_privilege: true,
    partitions: true,
    partitions_are_tables: true,
    stored_routines: true,
    routine_word: "function",
    routine_ends_with_semicolon: true,
    transactional_ddl: true,
    rollback_after_failed_call: false,
    wait_events: true,
    pgbench: true,
    begin_write: "BEGIN",
    begin_read: "BEGIN",
    begin_snapshot: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    read_only_session: "SET default_transaction_read_only = on",
    set_isolation: Some("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level}"),
    bulk_load_session: "SET synchronous_commit = off",
    analyze_table: "ANALYZE {table}",
    namespace_choice: "another schema with --schema (created when missing)",
    clock_seconds: "(EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION)",
    is_distinct_from: "{a} IS DISTINCT FROM {b}",
    implicit_row_id: false,
    types: SqlTypes {
        serial_key: "BIGSERIAL PRIMARY KEY",
        bigint: "BIGINT",
        double: "DOUBLE PRECISION",
        timestamp: "TIMESTAMP",
    },
    catalog: Catalog {
        identifier_quote: '"',
        backslash_escapes: false,
        only_namespace: None,
        current_namespace: (
            "SELECT current_schema()",
            "the search path names no schema that exists; create one (CREATE SCHEMA ...), or give --schema",
        ),
        namespace_exists: "SELECT 1 FROM pg_namespace WHERE nspname = ?",
        pin: Some("SET search_path TO {namespace}"),
        relations: "SELECT c.relname::text, c.relkind::text, obj_description(c.oid, 'pg_class') FROM pg_class c \
                    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname IN ({list}) \
                    ORDER BY 1",
        relation_kinds: &[
            ("r", "table"),
            ("p", "table"),
            ("v", "view"),
            ("m", "materialized view"),
            ("S", "sequence"),
            ("i", "index"),
            ("I", "index"),
            ("f", "foreign table"),
        ],
        columns: "SELECT a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
                  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ? \
                  AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        routines: Some(
            "SELECT p.proname::text, CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate' \
             WHEN 'w' THEN 'window function' ELSE 'function' END, obj_description(p.oid, 'pg_proc'), \
             pg_get_function_identity_arguments(p.oid) FROM pg_proc p \
             JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ? AND p.proname IN ({list}) \
             ORDER BY 1, 4",
        ),
        overloaded_routines: true,
    },
    case_sensitive: "{x}",
    cast_types: &[],
    double_colon_casts: true,
    row_limit: RowLimit::Limit,
    row_lock: RowLock::ForUpdate,
    date_fields: DateFields::Extract,
    date_literals: DateLiterals::Keyword,
    intervals: Intervals::QuotedCount,
};

/// MariaDB and MySQL.
static MYSQL_OPS: DialectOps = DialectOps {
    server_name: "MySQL/MariaDB",
    url_example: Some("mysql://user@host:3306/database"),
    embedded: false,
    named_namespaces: true,
    namespace_word: "database",
    single_writer: false,
    durable_session: None,
    table_comment: TableComment::TableOption,
    schema_create_privilege: false,
    partitions: true,
    partitions_are_tables: false,
    stored_routines: true,
    routine_word: "procedure",
    routine_ends_with_semicolon: false,
    transactional_ddl: false,
    rollback_after_failed_call: true,
    wait_events: false,
    pgbench: false,
    begin_write: "BEGIN",
    begin_read: "BEGIN",
    begin_snapshot: "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    read_only_session: "SET SESSION TRANSACTION READ ONLY",
    set_isolation: Some("SET SESSION TRANSACTION ISOLATION LEVEL {level}"),
    // Not foreign_key_checks = 0 as well (envbench's tables have no foreign keys): with both off, MariaDB 10.6+
    // inserts into an empty table in bulk under a table lock, and parallel loaders starting on the same empty table
    // deadlock on it.
    bulk_load_session: "SET SESSION unique_checks = 0",
    analyze_table: "ANALYZE TABLE {table}",
    namespace_choice: "another database in the URL or with --schema",
    clock_seconds: "(UNIX_TIMESTAMP(SYSDATE(6)))",
    is_distinct_from: "NOT ({a} <=> {b})",
    implicit_row_id: false,
    // TIMESTAMP ends in 2038, converts to the session's time zone and turns a NULL written to a table's first
    // TIMESTAMP column into the current time; DATETIME does none of these.
    types: SqlTypes {
        serial_key: "BIGINT AUTO_INCREMENT PRIMARY KEY",
        bigint: "BIGINT",
        double: "DOUBLE",
        timestamp: "DATETIME",
    },
    catalog: Catalog {
        identifier_quote: '`',
        backslash_escapes: true,
        only_namespace: None,
        current_namespace: (
            "SELECT DATABASE()",
            "the URL names no database; add one (mysql://user@host:3306/DATABASE)",
        ),
        namespace_exists: "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?",
        pin: Some("USE {namespace}"),
        relations: "SELECT table_name, table_type, table_comment FROM information_schema.tables \
                    WHERE table_schema = ? AND table_name IN ({list}) ORDER BY 1",
        relation_kinds: &[("BASE TABLE", "table"), ("VIEW", "view"), ("SYSTEM VIEW", "view")],
        columns: "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? \
                  ORDER BY ordinal_position",
        // Routine names are case-insensitive, as this comparison of them is.
        routines: Some(
            "SELECT routine_name, LOWER(routine_type), routine_comment, '' FROM information_schema.routines \
             WHERE routine_schema = ? AND routine_name IN ({list}) ORDER BY 1",
        ),
        overloaded_routines: false,
    },
    case_sensitive: "CAST({x} AS BINARY)",
    cast_types: &[
        ("double precision", "double"),
        ("real", "double"),
        ("float", "double"),
        ("float8", "double"),
        ("numeric", "decimal"),
        ("integer", "signed"),
        ("int", "signed"),
        ("bigint", "signed"),
        ("varchar", "char"),
        ("text", "char"),
    ],
    double_colon_casts: false,
    row_limit: RowLimit::Limit,
    row_lock: RowLock::ForUpdate,
    date_fields: DateFields::Extract,
    date_literals: DateLiterals::Keyword,
    intervals: Intervals::BareCount,
};

impl Dialect {
    /// Every dialect, for what asks each in turn (which one a URL's scheme names).
    pub const ALL: [Dialect; 3] = [Dialect::Sqlite, Dialect::Postgres, Dialect::MySql];

    /// What differs for this dialect in data: its row of the table.
    pub fn ops(self) -> &'static DialectOps {
        match self {
            Dialect::Sqlite => &SQLITE_OPS,
            Dialect::Postgres => &POSTGRES_OPS,
            Dialect::MySql => &MYSQL_OPS,
        }
    }

    /// What differs for this dialect in behaviour: its server ([`crate::server`]).
    pub fn server(self) -> &'static dyn crate::Server {
        match self {
            Dialect::Sqlite => &crate::sqlite_connection::SQLITE,
            Dialect::Postgres => &crate::postgres_connection::POSTGRES,
            Dialect::MySql => &crate::mysql_connection::MYSQL,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
            Dialect::MySql => "mysql",
        }
    }
}
