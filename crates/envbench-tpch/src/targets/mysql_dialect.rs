//! MariaDB's and MySQL's side of [`TpchServer`]: InnoDB tables made with their primary keys (InnoDB clusters rows on
//! them), multi-row `INSERT`s, each table's indexes in one pass, `ANALYZE TABLE` with the histograms that let their
//! optimizers see what PostgreSQL's `ANALYZE` sees (the one place the two flavours differ), and Q15's plan aid. The
//! query text itself reaches their dialect as every workload's SQL does, through [`envbench_sql::Dialect::adapt`].

use super::server::{SECONDARY_INDEXES, ServerTables};
use super::tpch_server::TpchServer;
use crate::data::TableName;
use envbench_sql::MySqlFlavour;

/// MariaDB or MySQL.
pub struct MySqlTpch {
    flavour: MySqlFlavour,
}

/// MariaDB's [`TpchServer`].
pub static MARIADB: MySqlTpch = MySqlTpch { flavour: MySqlFlavour::MariaDb };
/// MySQL's [`TpchServer`].
pub static MYSQL: MySqlTpch = MySqlTpch { flavour: MySqlFlavour::MySql };

impl TpchServer for MySqlTpch {
    fn loading(&self) -> &'static str {
        match self.flavour {
            MySqlFlavour::MariaDb => "loading into MariaDB",
            MySqlFlavour::MySql => "loading into MySQL",
        }
    }

    /// InnoDB everywhere, compared byte by byte (as DataFusion compares), whatever the server's defaults.
    fn table_options(&self) -> &'static str {
        " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    }

    /// InnoDB clusters rows on the primary key, so it is made with the table.
    fn keys_with_tables(&self) -> bool {
        true
    }

    /// MySQL's DDL commits each statement anyway.
    fn rebuilds_in_one_transaction(&self) -> bool {
        false
    }

    /// An `INSERT` of 1,000 lineitem rows is about 170 KB of SQL, far below any server's `max_allowed_packet`; 20 of
    /// them commit together, one log flush per 20,000 rows.
    fn bulk_batches(&self) -> (usize, usize) {
        (1_000, 20)
    }

    fn load_method(&self) -> &'static str {
        "INSERT, indexes, ANALYZE TABLE"
    }

    /// InnoDB builds all of a table's indexes in one pass.
    fn index_statements(&self, tables: &ServerTables) -> Vec<String> {
        let mut statements = Vec::new();
        for table in TableName::ALL.into_iter().rev() {
            let adds: Vec<String> = SECONDARY_INDEXES
                .iter()
                .filter(|(_, on, _)| *on == table)
                .map(|(index, _, columns)| format!("ADD INDEX {index} ({columns})"))
                .collect();
            if !adds.is_empty() {
                statements.push(format!("ALTER TABLE {} {}", tables.qualify(table.as_str()), adds.join(", ")));
            }
        }
        statements
    }

    fn analyze_statements(&self, table: TableName, name: &str) -> (String, Vec<String>) {
        (format!("ANALYZE TABLE {name}"), histogram_statements(self.flavour, table, name))
    }

    fn with_plan_aids(&self, sql: String, lineitem: &str) -> String {
        plan_aids(&sql, lineitem)
    }

    fn cold_cache_note(&self) -> &'static str {
        "--cold drops this machine's page cache; the InnoDB buffer pool stays warm (restart the server, with \
         innodb_buffer_pool_load_at_startup=OFF, for a fully cold start), and a server on another machine keeps its \
         own cache"
    }
}

/// The columns the queries filter on without an index, by table: histograms on them let the optimizer see how few
/// rows a date range or a part type selects (without them MariaDB drives Q14 from part through a secondary index
/// into lineitem, ten times slower than scanning lineitem), as PostgreSQL's `ANALYZE` does for every column.
fn histogram_columns(table: TableName) -> &'static [&'static str] {
    match table {
        TableName::Region => &["r_name"],
        TableName::Nation => &["n_name"],
        TableName::Supplier | TableName::PartSupp => &[],
        TableName::Customer => &["c_mktsegment", "c_acctbal"],
        TableName::Part => &["p_brand", "p_type", "p_size", "p_container"],
        TableName::Orders => &["o_orderdate", "o_orderstatus", "o_orderpriority"],
        TableName::LineItem => &[
            "l_shipdate",
            "l_commitdate",
            "l_receiptdate",
            "l_quantity",
            "l_discount",
            "l_returnflag",
            "l_shipmode",
            "l_shipinstruct",
        ],
    }
}

/// The statements that build histograms of a table's filter columns (after a plain `ANALYZE TABLE`), the table
/// named `name`: MariaDB's engine-independent statistics, on a sample whose size the server picks, or MySQL's
/// histograms.
fn histogram_statements(flavour: MySqlFlavour, table: TableName, name: &str) -> Vec<String> {
    let columns = histogram_columns(table);
    if columns.is_empty() {
        return Vec::new();
    }
    match flavour {
        MySqlFlavour::MariaDb => vec![
            "SET SESSION analyze_sample_percentage = 0".to_string(),
            format!("ANALYZE TABLE {name} PERSISTENT FOR COLUMNS ({}) INDEXES ()", columns.join(", ")),
        ],
        MySqlFlavour::MySql => {
            vec![format!("ANALYZE TABLE {name} UPDATE HISTOGRAM ON {} WITH 64 BUCKETS", columns.join(", "))]
        }
    }
}

/// MySQL's and MariaDB's plan aid for the query text (already in their dialect, [`envbench_sql::Dialect::adapt`]):
/// Q15 (the only query with `revenue0`) reads lineitem (named `lineitem`, qualified or not)
/// `ignore index (lineitem_supp_idx)`: to group by supplier MariaDB otherwise walks that index and fetches every row
/// from the clustered index, ten times slower than a scan and a sort at SF 0.1.
pub fn plan_aids(sql: &str, lineitem: &str) -> String {
    if !sql.contains("revenue0") {
        return sql.to_string();
    }
    let from_lineitem = format!("from {lineitem}").to_ascii_lowercase();
    let lower = sql.to_ascii_lowercase();
    let mut out = String::with_capacity(sql.len() + 40);
    let mut last = 0;
    for (at, _) in lower.match_indices(&from_lineitem) {
        let end = at + from_lineitem.len();
        if at < last || !sql[end..].chars().next().is_none_or(char::is_whitespace) {
            continue;
        }
        out.push_str(&sql[last..end]);
        out.push_str(" ignore index (lineitem_supp_idx)");
        last = end;
    }
    out.push_str(&sql[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_portable_queries_pass_unchanged_but_for_q15s_plan_aid() {
        use crate::queries::TableNames;
        let mut random = crate::params::SeededRandom::for_stream(7, 1, 0);
        // Bare names, and names qualified with a database whose name holds what the rewrites look for.
        let odd = envbench_sql::Namespace::named(envbench_sql::Dialect::MySql, "it's ::date as text) interval '9' day");
        for tables in [TableNames::bare(), TableNames::new(|t| odd.qualify(t.as_str()))] {
            for query in 1..=crate::queries::QUERY_COUNT {
                for parameters in [
                    crate::params::QueryParameters::validation(query, 1.0),
                    crate::params::QueryParameters::random(query, 1.0, &mut random),
                ] {
                    let sql = crate::queries::render_with(&parameters, &tables);
                    let adapted = plan_aids(&odd.adapt(&sql), &tables.lineitem);
                    if query == 15 {
                        let hinted = format!(
                            "from {} ignore index (lineitem_supp_idx)\n    where l_shipdate >=",
                            tables.lineitem
                        );
                        assert_eq!(adapted.matches(&hinted).count(), 1, "{adapted}");
                        assert_eq!(adapted.replace(" ignore index (lineitem_supp_idx)", ""), sql);
                    } else {
                        assert_eq!(adapted, sql, "Q{query}");
                    }
                }
            }
        }
    }

    #[test]
    fn histograms_are_built_in_each_servers_words() {
        assert_eq!(
            histogram_statements(MySqlFlavour::MariaDb, TableName::Orders, "`t`.`orders`"),
            [
                "SET SESSION analyze_sample_percentage = 0",
                "ANALYZE TABLE `t`.`orders` PERSISTENT FOR COLUMNS (o_orderdate, o_orderstatus, o_orderpriority) \
                 INDEXES ()"
            ]
        );
        assert_eq!(
            histogram_statements(MySqlFlavour::MySql, TableName::Region, "region"),
            ["ANALYZE TABLE region UPDATE HISTOGRAM ON r_name WITH 64 BUCKETS"]
        );
        assert!(histogram_statements(MySqlFlavour::MySql, TableName::PartSupp, "partsupp").is_empty());
    }
}
