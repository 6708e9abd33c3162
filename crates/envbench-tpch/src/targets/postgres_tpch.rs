//! PostgreSQL's side of [`TpchServer`]: `COPY`, then the keys and indexes built one by one in parallel, then
//! `ANALYZE`.

use super::server::{SECONDARY_INDEXES, ServerTables, primary_key};
use super::tpch_server::TpchServer;
use crate::data::TableName;

/// PostgreSQL.
pub struct PostgresTpch;

/// The one PostgreSQL [`TpchServer`].
pub static POSTGRES: PostgresTpch = PostgresTpch;

impl TpchServer for PostgresTpch {
    fn loading(&self) -> &'static str {
        "loading into PostgreSQL"
    }

    fn table_options(&self) -> &'static str {
        ""
    }

    /// The keys come after the load, built in parallel with the indexes.
    fn keys_with_tables(&self) -> bool {
        false
    }

    fn rebuilds_in_one_transaction(&self) -> bool {
        true
    }

    /// `COPY` streams 10,000 rows a statement, each committing on its own.
    fn bulk_batches(&self) -> (usize, usize) {
        (10_000, 1)
    }

    fn load_method(&self) -> &'static str {
        "COPY, keys, indexes, ANALYZE"
    }

    /// PostgreSQL builds each key and index on its own.
    fn index_statements(&self, tables: &ServerTables) -> Vec<String> {
        let mut statements = Vec::new();
        for table in TableName::ALL.into_iter().rev() {
            let name = tables.qualify(table.as_str());
            statements.push(format!("ALTER TABLE {name} ADD PRIMARY KEY ({})", primary_key(table)));
            for (index, _, columns) in SECONDARY_INDEXES.iter().filter(|(_, on, _)| *on == table) {
                statements.push(format!("CREATE INDEX {index} ON {name} ({columns})"));
            }
        }
        statements
    }

    fn analyze_statements(&self, _table: TableName, name: &str) -> (String, Vec<String>) {
        (format!("ANALYZE {name}"), Vec::new())
    }

    fn with_plan_aids(&self, sql: String, _lineitem: &str) -> String {
        sql
    }

    fn cold_cache_note(&self) -> &'static str {
        "--cold drops this machine's page cache; PostgreSQL's shared_buffers stay warm (restart the server for a fully \
         cold start), and a server on another machine keeps its own cache"
    }
}
