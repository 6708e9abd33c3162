//! The one schema a workload's tables live in, resolved once per run: every name envbench creates, checks, drops,
//! loads or queries on a server is qualified with it, so nothing reaches a table of the same name elsewhere on the
//! search path.
//!
//! PostgreSQL resolves an unqualified name through `search_path`, whose default is `"$user", public`: with a schema
//! named after the user (the secure-schema pattern PostgreSQL recommends), `current_schema()` is that schema, while a
//! name that exists only in `public` still resolves to `public`. A check made in one schema and a `DROP TABLE name`
//! resolved through the path would meet different tables. So a workload resolves its [`Namespace`] once, checks
//! only that namespace's catalog, writes every statement with [`Namespace::qualify`], and [`Namespace::pin`]s the
//! search path of every session it opens to that one schema, so even a name left unqualified cannot reach another.
//! On MariaDB/MySQL the namespace is the database (MySQL's schema); SQLite has one, `main`.

use crate::{Connection, DbError, Dialect, ErrorKind, Value};

/// The longest identifier PostgreSQL keeps (63 bytes; MySQL allows 64 characters).
const MAX_IDENTIFIER_BYTES: usize = 63;

/// A name quoted as an identifier of `dialect`: `"my schema"` (PostgreSQL, SQLite) or `` `my schema` `` (MySQL),
/// with the quote character doubled inside.
pub fn quote_identifier(dialect: Dialect, name: &str) -> String {
    let quote = dialect.ops().catalog.identifier_quote;
    format!("{quote}{}{quote}", name.replace(quote, &format!("{quote}{quote}")))
}

/// A text as an SQL string literal (`'it''s'`), for statements that take no parameters (`COMMENT ON`).
pub fn quote_literal(dialect: Dialect, text: &str) -> String {
    let escaped = text.replace('\'', "''");
    match dialect.ops().catalog.backslash_escapes {
        true => format!("'{}'", escaped.replace('\\', "\\\\")),
        false => format!("'{escaped}'"),
    }
}

/// Refuse a schema name a user gave that no server would keep as given.
pub fn check_schema_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the schema name is empty; give a name such as envbench".into());
    }
    if name.len() > MAX_IDENTIFIER_BYTES {
        return Err(format!("the schema name is {} bytes long; keep it to {MAX_IDENTIFIER_BYTES}", name.len()));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!("the schema name holds a control character (U+{:04X}); use printable text", u32::from(c)));
    }
    Ok(())
}

/// What kind of relation holds a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelationKind {
    Table,
    View,
    /// Anything else that takes the name: a materialized view, a sequence, an index, a foreign table, ...
    Other(String),
}

impl std::fmt::Display for RelationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelationKind::Table => f.write_str("table"),
            RelationKind::View => f.write_str("view"),
            RelationKind::Other(kind) => f.write_str(kind),
        }
    }
}

/// A relation found in a namespace, with the comment on it (PostgreSQL and MySQL keep one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    pub name: String,
    pub kind: RelationKind,
    pub comment: Option<String>,
}

impl Relation {
    /// `orders` for a table, `orders (a view)`, `orders_pkey (an index)` for anything else: names for a refusal.
    pub fn describe(&self) -> String {
        match self.kind {
            RelationKind::Table => self.name.clone(),
            ref other => {
                let kind = other.to_string();
                let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                format!("{} ({article} {kind})", self.name)
            }
        }
    }
}

/// A stored routine found in a namespace (a PostgreSQL function or procedure, a MySQL procedure or function), with
/// the comment on it, which says whether envbench made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routine {
    pub name: String,
    /// `function`, `procedure` (or `aggregate`, `window function` on PostgreSQL).
    pub kind: String,
    pub comment: Option<String>,
    /// PostgreSQL: the argument types that tell overloaded functions apart (`integer, text`), which `DROP` needs.
    pub arguments: String,
}

impl Routine {
    /// `envbench_tpcc_payment (a function)`: names for a refusal.
    pub fn describe(&self) -> String {
        format!("{} (a {})", self.name, self.kind)
    }
}

/// The schema (PostgreSQL), database (MySQL) or `main` (SQLite) a workload's tables are in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    dialect: Dialect,
    name: String,
}

impl Namespace {
    /// Resolve the namespace once. With `requested`, that schema (PostgreSQL) or database (MySQL), created first when
    /// `create` is set and it is missing; otherwise the connection's own: `current_schema()`, the first schema of the
    /// search path that exists, or the URL's database. A connection with none is refused with what to do.
    pub fn resolve(
        connection: &mut dyn Connection,
        requested: Option<&str>,
        create: bool,
    ) -> Result<Namespace, DbError> {
        let dialect = connection.dialect();
        let ops = dialect.ops();
        if let Some(only) = ops.catalog.only_namespace {
            return Ok(Namespace { dialect, name: only.into() });
        }
        if let Some(name) = requested {
            check_schema_name(name).map_err(|e| DbError::new(ErrorKind::Refused, format!("--schema: {e}")))?;
            let namespace = Namespace { dialect, name: name.to_string() };
            if create {
                let kind = ops.namespace_word.to_uppercase();
                connection.batch(&format!("CREATE {kind} IF NOT EXISTS {}", namespace.quoted()))?;
            } else if !namespace.exists(connection)? {
                return Err(DbError::new(
                    ErrorKind::Refused,
                    format!("schema {} does not exist; create it, or name one that does", namespace.quoted()),
                ));
            }
            return Ok(namespace);
        }
        let (sql, missing) = ops.catalog.current_namespace;
        let row = connection.query_optional(sql, &[])?;
        match row.filter(|row| !row.is_null(0)) {
            Some(row) => Ok(Namespace { dialect, name: row.text(0)? }),
            None => Err(DbError::new(ErrorKind::Refused, missing)),
        }
    }

    /// The namespace of this name, as a caller already resolved it (a fleet agent told by its coordinator).
    pub fn named(dialect: Dialect, name: &str) -> Namespace {
        let name = dialect.ops().catalog.only_namespace.unwrap_or(name);
        Namespace { dialect, name: name.to_string() }
    }

    fn exists(&self, connection: &mut dyn Connection) -> Result<bool, DbError> {
        let sql = self.dialect.ops().catalog.namespace_exists;
        Ok(connection.query_optional(sql, &[Value::Text(self.name.clone())])?.is_some())
    }

    /// The name as the server keeps it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The name quoted as an identifier.
    pub fn quoted(&self) -> String {
        quote_identifier(self.dialect, &self.name)
    }

    /// `table` qualified with this namespace: `"postgres"."orders"`, `` `test`.`orders` ``. SQLite's names stay
    /// bare (quoted): its one database needs no qualifier, and an index there may not name one on its table.
    pub fn qualify(&self, table: &str) -> String {
        let table = quote_identifier(self.dialect, table);
        match self.dialect.ops().named_namespaces {
            true => format!("{}.{table}", self.quoted()),
            false => table,
        }
    }

    /// Make unqualified names on `connection` resolve in this namespace only: PostgreSQL's search path becomes this
    /// one schema (the system catalog stays implicitly first), MySQL's default database this one.
    pub fn pin(&self, connection: &mut dyn Connection) -> Result<(), DbError> {
        match self.pin_statement() {
            Some(statement) => connection.batch(&statement),
            None => Ok(()),
        }
    }

    /// A new connection to `url` whose unqualified names resolve in this namespace only ([`Namespace::pin`]): every
    /// session a run opens on its tables (loaders, users, checks, monitors) is one of these.
    pub fn connect(&self, url: &crate::DatabaseUrl, application: &str) -> Result<Box<dyn Connection>, DbError> {
        let mut connection = url.connect(application)?;
        self.pin(connection.as_mut())?;
        Ok(connection)
    }

    /// The statement [`Namespace::pin`] runs (`None` for SQLite), for a session opened with another driver (a
    /// PostgreSQL client that streams `COPY`).
    pub fn pin_statement(&self) -> Option<String> {
        self.dialect.ops().catalog.pin.map(|pin| pin.replace("{namespace}", &self.quoted()))
    }

    /// The relations of this namespace with one of `names` (tables, views, sequences, indexes: anything that takes
    /// the name), with their comments: what a workload must see before it creates or drops anything of these names.
    pub fn relations(&self, connection: &mut dyn Connection, names: &[&str]) -> Result<Vec<Relation>, DbError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let list = vec!["?"; names.len()].join(", ");
        let catalog = &self.dialect.ops().catalog;
        let sql = catalog.relations.replace("{list}", &list);
        let mut params = vec![Value::Text(self.name.clone())];
        params.extend(names.iter().map(|n| Value::Text(n.to_string())));
        let rows = connection.query(&sql, &params)?;
        rows.iter()
            .map(|row| {
                let kind = row.text(1)?;
                let word = catalog.relation_kinds.iter().find(|(code, _)| *code == kind).map(|(_, word)| *word);
                let kind = match word.map_or_else(|| kind.to_lowercase(), str::to_string).as_str() {
                    "table" => RelationKind::Table,
                    "view" => RelationKind::View,
                    other => RelationKind::Other(other.to_string()),
                };
                let comment = (!row.is_null(2)).then(|| row.text(2)).transpose()?.filter(|c| !c.is_empty());
                Ok(Relation { name: row.text(0)?, kind, comment })
            })
            .collect()
    }
}

impl Namespace {
    /// The columns of `table` in this namespace, lower-cased, in their order (none when there is no such table): what
    /// tells envbench's marker table from a table of the same name that someone else made.
    pub fn columns(&self, connection: &mut dyn Connection, table: &str) -> Result<Vec<String>, DbError> {
        let sql = self.dialect.ops().catalog.columns;
        let rows = connection.query(sql, &[Value::Text(self.name.clone()), Value::Text(table.to_string())])?;
        rows.iter().map(|row| Ok(row.text(0)?.to_lowercase())).collect()
    }
}

impl Namespace {
    /// The stored routines of this namespace with one of `names`, overloads each on their own: what a workload must
    /// see before it creates or drops routines of these names. SQLite has none.
    pub fn routines(&self, connection: &mut dyn Connection, names: &[&str]) -> Result<Vec<Routine>, DbError> {
        let Some(sql) = self.dialect.ops().catalog.routines.filter(|_| !names.is_empty()) else {
            return Ok(Vec::new());
        };
        let sql = sql.replace("{list}", &vec!["?"; names.len()].join(", "));
        let mut params = vec![Value::Text(self.name.clone())];
        params.extend(names.iter().map(|n| Value::Text(n.to_string())));
        connection
            .query(&sql, &params)?
            .iter()
            .map(|row| {
                Ok(Routine {
                    name: row.text(0)?,
                    kind: row.text(1)?,
                    comment: row.optional_text(2)?.filter(|c| !c.is_empty()),
                    arguments: row.optional_text(3)?.unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The statement that drops `routine` of this namespace, and only it (on PostgreSQL, the one overload).
    pub fn drop_routine(&self, routine: &Routine) -> String {
        let kind = if routine.kind == "procedure" { "PROCEDURE" } else { "FUNCTION" };
        match self.dialect.ops().catalog.overloaded_routines {
            true => format!("DROP {kind} {}({})", self.qualify(&routine.name), routine.arguments),
            false => format!("DROP {kind} {}", self.qualify(&routine.name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_and_qualified_per_dialect() {
        assert_eq!(quote_identifier(Dialect::Postgres, "my \"odd\" schema"), "\"my \"\"odd\"\" schema\"");
        assert_eq!(quote_identifier(Dialect::MySql, "a`b"), "`a``b`");
        assert_eq!(Namespace::named(Dialect::Postgres, "my schema").qualify("orders"), "\"my schema\".\"orders\"");
        assert_eq!(Namespace::named(Dialect::MySql, "test").qualify("orders"), "`test`.`orders`");
        assert_eq!(Namespace::named(Dialect::Sqlite, "whatever").qualify("orders"), "\"orders\"");
        assert_eq!(quote_literal(Dialect::Postgres, "it's"), "'it''s'");
        assert_eq!(quote_literal(Dialect::MySql, "a\\'"), "'a\\\\'''");
        assert!(check_schema_name("").is_err() && check_schema_name(&"x".repeat(64)).is_err());
        assert!(check_schema_name("a\u{1b}b").is_err() && check_schema_name("my schema").is_ok());
    }

    #[test]
    fn sqlite_has_one_namespace_and_sees_views() {
        let path = std::env::temp_dir().join(format!("envbench-namespace-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut connection = crate::DatabaseUrl::sqlite(&path).connect("test").unwrap();
        connection
            .batch(
                "CREATE TABLE orders (x INTEGER); CREATE VIEW tpcc_item AS SELECT 1 AS x; \
                 CREATE INDEX orders_x ON orders (x); CREATE TABLE TPCC_Stock (x INTEGER)",
            )
            .unwrap();
        let namespace = Namespace::resolve(connection.as_mut(), None, false).unwrap();
        assert_eq!(namespace.name(), "main");
        let names = ["orders", "tpcc_item", "orders_x", "tpcc_stock", "nothing"];
        let found = namespace.relations(connection.as_mut(), &names).unwrap();
        assert_eq!(
            found.iter().map(Relation::describe).collect::<Vec<_>>(),
            ["TPCC_Stock", "orders", "orders_x (an index)", "tpcc_item (a view)"],
            "{found:?}"
        );
        let _ = std::fs::remove_file(&path);
    }
}
