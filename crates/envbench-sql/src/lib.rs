//! Connections to the databases envbench measures: embedded SQLite, PostgreSQL and MariaDB/MySQL behind one small
//! [`Connection`] trait (execute, query and batches of statements, with `?` placeholders and prepared statements
//! cached per connection), a database named by what the user wrote ([`DatabaseUrl`]), and errors sorted the way a
//! workload must treat them ([`ErrorKind`]: retry a deadlock, report a server that cannot be reached, tell the user
//! what to fix). Every message is free of passwords.
//!
//! It also owns what keeps a workload's hands off everything else on a server: the one [`Namespace`] (schema) a
//! run's names are qualified with, and the [`ServerLock`] a run holds on its data there.
//!
//! It runs no workload and knows no workload's tables: the workload crates (transactions, analytic queries) write
//! their SQL and use this crate to send it.

mod adapt;
mod bulk;
mod connection;
mod dialect;
mod error;
mod forms;
pub mod lock;
pub mod marker;
mod mysql_connection;
pub mod namespace;
mod postgres_connection;
pub mod server;
mod sqlite_connection;
mod url;
mod value;

pub use adapt::numbered_placeholders;
pub use connection::{Connection, Interrupter, open_sqlite};
pub use dialect::{Catalog, Dialect, DialectOps, Isolation, SqlTypes, TableComment};
pub use error::{Conflict, DbError, ErrorKind};
pub use forms::{DateFields, DateLiterals, Intervals, RowLimit, RowLock};
pub use lock::{ServerLock, ServerLockError, ServerLockMode};
pub use marker::{Marker, MarkerState};
pub use mysql_connection::MySqlFlavour;
pub use namespace::{Namespace, Relation, RelationKind, Routine, quote_identifier, quote_literal};
pub use server::{Counters, RangePartition, Server, ServerIdentity, UrlConfig};
pub use sqlite_connection::SqliteOpen;
pub use sqlite_connection::sqlite_version;
pub use url::{
    DatabaseUrl, PASSWORD_VARIABLES, local_data_directory, password_from, postgres_password_from_environment,
    url_forms, url_forms_where,
};
pub use value::{Row, Value};

#[cfg(test)]
mod tree_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_dialect_and_keep_their_password_to_themselves() {
        let pg = DatabaseUrl::parse("postgres://bob:hunter2@127.0.0.1/test").unwrap();
        assert_eq!(pg.dialect(), Dialect::Postgres);
        assert_eq!(pg.shown(), "postgres://bob:***@127.0.0.1/test");
        assert!(pg.is_local());
        assert!(!format!("{pg:?}").contains("hunter2"));
        let my = DatabaseUrl::parse("mariadb://root@db.example:3306/test").unwrap();
        assert_eq!(my.dialect(), Dialect::MySql);
        assert!(!my.is_local());
        for bad in ["oracle://x@y/z", "sqlite:/x", "postgres://x:y@:notaport/z"] {
            let error = DatabaseUrl::parse(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::Refused, "{bad}");
            assert!(error.message.contains("mysql://"), "{error}");
        }
    }

    #[test]
    fn passwords_come_out_of_urls_for_other_programs() {
        let url = DatabaseUrl::parse("postgres://bob:hunter2@127.0.0.1:5432/test?sslmode=disable").unwrap();
        assert_eq!(
            url.split_password(),
            ("postgres://bob@127.0.0.1:5432/test?sslmode=disable".to_string(), Some("hunter2".to_string()))
        );
        let escaped = DatabaseUrl::parse("postgres://bob:p%40ss@127.0.0.1/test").unwrap();
        assert_eq!(escaped.split_password().1.as_deref(), Some("p@ss"));
        let plain = DatabaseUrl::parse("postgres://bob@127.0.0.1/test").unwrap();
        assert_eq!(plain.split_password(), ("postgres://bob@127.0.0.1/test".to_string(), None));
        // libpq also takes the password from the query, which wins over the authority's.
        let query =
            DatabaseUrl::parse("postgres://bob:old@127.0.0.1/test?sslmode=disable&password=p%26w&connect_timeout=5")
                .unwrap();
        assert_eq!(
            query.split_password(),
            ("postgres://bob@127.0.0.1/test?sslmode=disable&connect_timeout=5".to_string(), Some("p&w".to_string()))
        );
        let only = DatabaseUrl::parse("postgresql://bob@127.0.0.1?password=hunter2").unwrap();
        assert_eq!(only.split_password(), ("postgresql://bob@127.0.0.1".to_string(), Some("hunter2".to_string())));
    }

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(numbered_placeholders("SELECT ?, '?' WHERE a = ?"), "SELECT $1, '?' WHERE a = $2");
        assert_eq!(
            numbered_placeholders(r#"INSERT INTO "bob's ""?"" schema".t VALUES (?, 'it''s?', ?)"#),
            r#"INSERT INTO "bob's ""?"" schema".t VALUES ($1, 'it''s?', $2)"#
        );
    }

    #[test]
    fn rows_read_numbers_written_as_text() {
        let row = Row(vec![Value::Text("12".into()), Value::Text("1.5".into()), Value::Int(3), Value::Null]);
        assert_eq!(row.int(0).unwrap(), 12);
        assert_eq!(row.real(1).unwrap(), 1.5);
        assert_eq!(row.text(2).unwrap(), "3");
        assert!(row.is_null(3) && row.real(3).is_err());
    }

    /// New-Order's lines as each server's routine takes them, read in one pass; the count needs no list.
    #[test]
    fn a_list_becomes_each_servers_arguments() {
        let rows = [[1, 2, 3], [4, 5, 6]];
        let text = |t: &str| Value::Text(t.to_string());
        let postgres = Dialect::Postgres.server().list_arguments(&mut rows.into_iter());
        assert_eq!(postgres, Some(vec![text("{1,4}"), text("{2,5}"), text("{3,6}")]));
        let mysql = Dialect::MySql.server().list_arguments(&mut rows.into_iter());
        assert_eq!(mysql, Some(vec![text("[[1,2,3],[4,5,6]]")]));
        let empty = Dialect::Postgres.server().list_arguments(&mut std::iter::empty());
        assert_eq!(empty, Some(vec![text("{}"), text("{}"), text("{}")]));
        for dialect in Dialect::ALL {
            let server = dialect.server();
            let made = server.list_arguments(&mut rows.into_iter()).map(|arguments| arguments.len());
            assert_eq!(server.list_argument_count(), made, "{dialect:?}");
        }
    }
}
