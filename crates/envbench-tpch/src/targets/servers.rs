//! Which of TPC-H's server files a connection's server is: the one match on the dialect and the MySQL flavour, with
//! no wildcard, so a new server is a compiler error here and a new file beside `postgres_tpch.rs` and
//! `mysql_dialect.rs`.

use super::tpch_server::TpchServer;
use super::{mysql_dialect, postgres_tpch};
use envbench_sql::{Dialect, MySqlFlavour};

/// The server behind a connection, by its dialect and the version it reports; `None` for an embedded database.
pub fn tpch_server(dialect: Dialect, version: &str) -> Option<&'static dyn TpchServer> {
    match dialect {
        Dialect::Sqlite => None,
        Dialect::Postgres => Some(&postgres_tpch::POSTGRES),
        Dialect::MySql => Some(match MySqlFlavour::of(version) {
            MySqlFlavour::MariaDb => &mysql_dialect::MARIADB,
            MySqlFlavour::MySql => &mysql_dialect::MYSQL,
        }),
    }
}
