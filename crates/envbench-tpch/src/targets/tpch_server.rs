//! What TPC-H does its own way on each server: how the tables are made and loaded, their keys, indexes and
//! statistics, the plan aids a query gets and what a cold run cannot reach. One small trait, one implementation per
//! server in its own file (`postgres_tpch.rs`; `mysql_dialect.rs` for MariaDB and MySQL, which differ in their
//! statistics); `servers.rs` picks one.

use super::server::ServerTables;
use crate::data::TableName;

/// The servers envbench loads and queries, and everything about TPC-H that differs between them.
pub trait TpchServer: Sync {
    /// What the progress line says while rows go in.
    fn loading(&self) -> &'static str;

    /// What follows every table's columns.
    fn table_options(&self) -> &'static str;

    /// Whether the primary keys are made with the tables rather than after the load, in parallel with the indexes.
    fn keys_with_tables(&self) -> bool;

    /// Whether the tables are replaced in one batch, so in one transaction: another run sees the old tables or the
    /// new ones, never a mix.
    fn rebuilds_in_one_transaction(&self) -> bool;

    /// Rows per bulk statement, and bulk statements per transaction (1: each commits on its own).
    fn bulk_batches(&self) -> (usize, usize);

    /// How a load is made, for its summary.
    fn load_method(&self) -> &'static str;

    /// The keys and foreign-key indexes the queries join on, big tables first; each statement runs as its own job,
    /// in parallel.
    fn index_statements(&self, tables: &ServerTables) -> Vec<String>;

    /// The statement that gathers a table's statistics (the table named `name`), and the statements that add
    /// optimizer aids after it, which a server too old for them may refuse (the queries are then planned without, as
    /// they would be anyway).
    fn analyze_statements(&self, table: TableName, name: &str) -> (String, Vec<String>);

    /// A query's text, already in the server's dialect, with this server's plan aids.
    fn with_plan_aids(&self, sql: String, lineitem: &str) -> String;

    /// What dropping this machine's page cache does not reach.
    fn cold_cache_note(&self) -> &'static str;
}
