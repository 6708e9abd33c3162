//! MySQL's and MariaDB's aids to their optimizers for what the server target ([`super::server_target`]) does the
//! same way everywhere: Q15's plan aid, and the histograms that let them see what PostgreSQL's `ANALYZE` sees. The
//! query text itself reaches their dialect as every workload's SQL does, through [`envbench_sql::Dialect::adapt`].

use crate::data::TableName;

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
pub(super) fn histogram_statements(mariadb: bool, table: TableName, name: &str) -> Vec<String> {
    let columns = histogram_columns(table);
    if columns.is_empty() {
        return Vec::new();
    }
    match mariadb {
        true => vec![
            "SET SESSION analyze_sample_percentage = 0".to_string(),
            format!("ANALYZE TABLE {name} PERSISTENT FOR COLUMNS ({}) INDEXES ()", columns.join(", ")),
        ],
        false => {
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
            histogram_statements(true, TableName::Orders, "`t`.`orders`"),
            [
                "SET SESSION analyze_sample_percentage = 0",
                "ANALYZE TABLE `t`.`orders` PERSISTENT FOR COLUMNS (o_orderdate, o_orderstatus, o_orderpriority) \
                 INDEXES ()"
            ]
        );
        assert_eq!(
            histogram_statements(false, TableName::Region, "region"),
            ["ANALYZE TABLE region UPDATE HISTOGRAM ON r_name WITH 64 BUCKETS"]
        );
        assert!(histogram_statements(false, TableName::PartSupp, "partsupp").is_empty());
    }
}
