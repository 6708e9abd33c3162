//! MySQL's and MariaDB's words for what the server target ([`super::server_target`]) does the same way everywhere:
//! the query texts in their dialect, and the histograms that let their optimizers see what PostgreSQL's `ANALYZE`
//! sees.

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

/// The query text in MySQL's and MariaDB's dialect. The portable text of [`crate::queries`] runs as it is, with one
/// plan aid; what PostgreSQL-style SQL would need changing is rewritten too, outside quoted text:
///
/// - Q15 (the only query with `revenue0`) reads lineitem (named `lineitem`, qualified or not)
///   `ignore index (lineitem_supp_idx)`: to group by supplier
///   MariaDB otherwise walks that index and fetches every row from the clustered index, ten times slower than a
///   scan and a sort at SF 0.1;
/// - `interval '90' day` becomes `interval 90 day` (the quoted count is PostgreSQL's form);
/// - `cast(x as double precision)`, `as real` and `as float` become `as double`, `as numeric` becomes `as decimal`,
///   `as integer` and `as bigint` become `as signed`, `as varchar` and `as text` become `as char`;
/// - `x::date` becomes `cast(x as date)` for a literal or a (qualified) column name.
pub fn rewrite_query(sql: &str, lineitem: &str) -> String {
    const CASTS: [(&str, &str); 8] = [
        (" as double precision)", " as double)"),
        (" as real)", " as double)"),
        (" as float)", " as double)"),
        (" as numeric)", " as decimal)"),
        (" as integer)", " as signed)"),
        (" as bigint)", " as signed)"),
        (" as varchar)", " as char)"),
        (" as text)", " as char)"),
    ];
    let mut sql = sql.to_string();
    for (from, to) in CASTS {
        sql = replace_outside_literals(&sql, from, |_| Some((from.len(), to.to_string())));
    }
    sql = replace_outside_literals(&sql, "interval '", |after| {
        let count = &after["interval '".len()..];
        let count = &count[..count.find('\'')?];
        let numeric = !count.is_empty() && count.chars().all(|c| c.is_ascii_digit() || c == '-' || c == '.');
        numeric.then(|| ("interval ''".len() + count.len(), format!("{} {count}", &after[.."interval".len()])))
    });
    if sql.contains("revenue0") {
        let from_lineitem = format!("from {lineitem}").to_ascii_lowercase();
        sql = replace_outside_literals(&sql, &from_lineitem, |after| {
            let (from, rest) = after.split_at(from_lineitem.len());
            let hinted = format!("{from} ignore index (lineitem_supp_idx)");
            rest.chars().next().is_none_or(char::is_whitespace).then_some((from_lineitem.len(), hinted))
        });
    }
    rewrite_double_colon_casts(&sql)
}

/// For each byte of `sql`, whether it belongs to a quoted literal or a quoted identifier (`''` or ``` `` ``` inside
/// one is an escaped quote): a schema's name is data, never SQL to rewrite, whatever it holds.
fn literal_mask(sql: &str) -> Vec<bool> {
    let mut mask = Vec::with_capacity(sql.len());
    let mut quote = None;
    for &byte in sql.as_bytes() {
        // A closing quote followed by an opening one ('') leaves and re-enters the literal: both are inside it.
        match quote {
            None if byte == b'\'' || byte == b'`' => {
                quote = Some(byte);
                mask.push(true);
            }
            Some(open) if byte == open => {
                quote = None;
                mask.push(true);
            }
            _ => mask.push(quote.is_some()),
        }
    }
    mask
}

/// Replace matches of `pattern` (ASCII case ignored) that start outside literals: `replace` gets the text from the
/// match on and returns how many bytes to replace and with what, or `None` to leave the match alone.
fn replace_outside_literals(sql: &str, pattern: &str, replace: impl Fn(&str) -> Option<(usize, String)>) -> String {
    let lower = sql.to_ascii_lowercase();
    let mask = literal_mask(sql);
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (at, _) in lower.match_indices(pattern) {
        if at < last || mask[at] {
            continue;
        }
        if let Some((length, replacement)) = replace(&sql[at..]) {
            out.push_str(&sql[last..at]);
            out.push_str(&replacement);
            last = at + length;
        }
    }
    out.push_str(&sql[last..]);
    out
}

/// `'1998-12-01'::date` and `o.o_orderdate::date` become `cast(... as date)`.
fn rewrite_double_colon_casts(sql: &str) -> String {
    let mask = literal_mask(sql);
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (at, _) in sql.match_indices("::") {
        if at < last || mask[at] {
            continue;
        }
        let after = &sql[at + 2..];
        let type_end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let before = &sql[last..at];
        // The operand: the literal just before, or a (qualified) name.
        let operand_start = if before.ends_with('\'') {
            let mut start = at;
            while start > last && mask[start - 1] {
                start -= 1;
            }
            start - last
        } else {
            before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).map(|i| i + 1).unwrap_or(0)
        };
        if type_end == 0 || operand_start == before.len() {
            continue;
        }
        let type_name = match after[..type_end].to_ascii_lowercase().as_str() {
            "numeric" => "decimal".to_string(),
            "integer" | "int" | "bigint" => "signed".to_string(),
            "varchar" | "text" => "char".to_string(),
            "real" | "float" | "float8" => "double".to_string(),
            other => other.to_string(),
        };
        out.push_str(&before[..operand_start]);
        out.push_str(&format!("cast({} as {type_name})", &before[operand_start..]));
        last = at + 2 + type_end;
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
                    let adapted = rewrite_query(&sql, &tables.lineitem);
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
    fn postgresql_forms_are_rewritten_outside_literals() {
        assert_eq!(
            rewrite_query("select date '1998-12-01' - interval '90' day, x + INTERVAL '3' month", "lineitem"),
            "select date '1998-12-01' - interval 90 day, x + INTERVAL 3 month"
        );
        assert_eq!(
            rewrite_query("select cast(a as double precision), CAST(b AS NUMERIC), cast(c as varchar) from t", "l"),
            "select cast(a as double), CAST(b as decimal), cast(c as char) from t"
        );
        assert_eq!(
            rewrite_query("select '1995-01-01'::date, o.o_orderdate::date, a::numeric from t", "lineitem"),
            "select cast('1995-01-01' as date), cast(o.o_orderdate as date), cast(a as decimal) from t"
        );
        // Text inside quotes is data, never SQL.
        let literal = "select 'cast(x as text)', 'it''s interval ''9'' day' from `a``b::date`.t";
        assert_eq!(rewrite_query(literal, "lineitem"), literal);
        let substring = "select substring(c_phone from 1 for 2)";
        assert_eq!(rewrite_query(substring, "lineitem"), substring);
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
