//! Portable SQL made concrete for one server: the one way the workloads (oltp's tables, tpch's and htap's queries)
//! and the results store adapt their text to a dialect.
//!
//! SQL is written once, in PostgreSQL's words, with three kinds of placeholder in braces:
//! - `{type:NAME}`: a column type of the dialect's [`SqlTypes`](crate::SqlTypes): `serial_key`, `bigint`, `double`,
//!   `timestamp`;
//! - `{cs:EXPR}`: `EXPR` compared, sorted and grouped case-sensitively, as PostgreSQL always does (MySQL's default
//!   collations ignore case);
//! - `{NAME}`: the table `NAME`, qualified with the namespace ([`Namespace::adapt`]).
//!
//! [`Dialect::adapt`] fills them from the dialect's row of [`DialectOps`](crate::DialectOps), then rewrites the
//! PostgreSQL forms the server does not take, by that row's rules: `interval '90' day` where only `interval 90 day`
//! parses, `x::date` where there is no `::`, and the type names a cast may name. Quoted literals and quoted
//! identifiers are data: nothing inside them is ever rewritten, whatever a schema's name holds.

use crate::{Dialect, Namespace};

impl Dialect {
    /// `portable` as this dialect runs it: types and case-sensitive expressions filled in, PostgreSQL's forms
    /// rewritten. A `{NAME}` placeholder is left as it is: [`Namespace::adapt`] qualifies tables.
    pub fn adapt(self, portable: &str) -> String {
        adapt(portable, self, None)
    }
}

impl Namespace {
    /// `portable` as this namespace's dialect runs it ([`Dialect::adapt`]), every `{NAME}` a table qualified with
    /// this namespace.
    pub fn adapt(&self, portable: &str) -> String {
        adapt(portable, self.dialect(), Some(self))
    }
}

fn adapt(portable: &str, dialect: Dialect, namespace: Option<&Namespace>) -> String {
    let ops = dialect.ops();
    let mut sql = fill_placeholders(portable, dialect, namespace);
    for (from, to) in ops.cast_types {
        let (from, to) = (format!(" as {from})"), format!(" as {to})"));
        sql = replace_outside_literals(&sql, &from, |_| Some((from.len(), to.clone())));
    }
    if !ops.quoted_interval_counts {
        sql = replace_outside_literals(&sql, "interval '", |after| {
            let count = &after["interval '".len()..];
            let count = &count[..count.find('\'')?];
            let numeric = !count.is_empty() && count.chars().all(|c| c.is_ascii_digit() || c == '-' || c == '.');
            numeric.then(|| ("interval ''".len() + count.len(), format!("{} {count}", &after[.."interval".len()])))
        });
    }
    if !ops.double_colon_casts {
        sql = rewrite_double_colon_casts(&sql, ops.cast_types);
    }
    sql
}

/// The braces of `portable` outside literals, filled: `{type:NAME}`, `{cs:EXPR}` and, given a namespace, `{NAME}`.
fn fill_placeholders(portable: &str, dialect: Dialect, namespace: Option<&Namespace>) -> String {
    let ops = dialect.ops();
    let mask = literal_mask(portable);
    let mut out = String::with_capacity(portable.len() + 64);
    let mut last = 0;
    for (open, _) in portable.match_indices('{') {
        if open < last || mask[open] {
            continue;
        }
        let Some(close) = portable[open..].find('}').map(|c| open + c) else { break };
        let inner = &portable[open + 1..close];
        let filled = if let Some(name) = inner.strip_prefix("type:") {
            let types = &ops.types;
            match name {
                "serial_key" => Some(types.serial_key.to_string()),
                "bigint" => Some(types.bigint.to_string()),
                "double" => Some(types.double.to_string()),
                "timestamp" => Some(types.timestamp.to_string()),
                other => panic!("SQL names an unknown column type {{type:{other}}}"),
            }
        } else if let Some(expression) = inner.strip_prefix("cs:") {
            Some(ops.case_sensitive.replace("{x}", expression))
        } else if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            namespace.map(|namespace| namespace.qualify(inner))
        } else {
            None
        };
        if let Some(filled) = filled {
            out.push_str(&portable[last..open]);
            out.push_str(&filled);
            last = close + 1;
        }
    }
    out.push_str(&portable[last..]);
    out
}

/// For each byte of `sql`, whether it belongs to a quoted literal or a quoted identifier (`''`, `""` or ``` `` ```
/// inside one is an escaped quote).
fn literal_mask(sql: &str) -> Vec<bool> {
    let mut mask = Vec::with_capacity(sql.len());
    let mut quote = None;
    for &byte in sql.as_bytes() {
        // A closing quote followed by an opening one ('') leaves and re-enters the literal: both are inside it.
        match quote {
            None if byte == b'\'' || byte == b'`' || byte == b'"' => {
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

/// `'1998-12-01'::date` and `o.o_orderdate::date` become `cast(... as date)`, the type renamed by `cast_types`.
fn rewrite_double_colon_casts(sql: &str, cast_types: &[(&str, &str)]) -> String {
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
        let written = after[..type_end].to_ascii_lowercase();
        let type_name = cast_types.iter().find(|(from, _)| *from == written).map_or(written.as_str(), |(_, to)| to);
        out.push_str(&before[..operand_start]);
        out.push_str(&format!("cast({} as {type_name})", &before[operand_start..]));
        last = at + 2 + type_end;
    }
    out.push_str(&sql[last..]);
    out
}

/// `?` placeholders numbered `$1`, `$2`, ... as PostgreSQL wants them (outside quoted text: a `'literal'` or a
/// `"quoted identifier"`, such as a schema named `bob's`).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut n, mut quote) = (0, None);
    for c in sql.chars() {
        match (c, quote) {
            ('\'' | '"', None) => {
                quote = Some(c);
                out.push(c);
            }
            (c, Some(open)) if c == open => {
                quote = None;
                out.push(c);
            }
            ('?', None) => {
                n += 1;
                out.push_str(&format!("${n}"));
            }
            (c, _) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgresql_forms_are_rewritten_outside_literals() {
        let my = Dialect::MySql;
        assert_eq!(
            my.adapt("select date '1998-12-01' - interval '90' day, x + INTERVAL '3' month"),
            "select date '1998-12-01' - interval 90 day, x + INTERVAL 3 month"
        );
        assert_eq!(
            my.adapt("select cast(a as double precision), CAST(b AS NUMERIC), cast(c as varchar) from t"),
            "select cast(a as double), CAST(b as decimal), cast(c as char) from t"
        );
        assert_eq!(
            my.adapt("select '1995-01-01'::date, o.o_orderdate::date, a::numeric from t"),
            "select cast('1995-01-01' as date), cast(o.o_orderdate as date), cast(a as decimal) from t"
        );
        // Text inside quotes is data, never SQL.
        let literal = "select 'cast(x as text)', 'it''s interval ''9'' day {cs:x}' from `a``b::date`.t";
        assert_eq!(my.adapt(literal), literal);
        let substring = "select substring(c_phone from 1 for 2)";
        assert_eq!(my.adapt(substring), substring);
        // PostgreSQL takes its own words as they are.
        let pg = "select '1995-01-01'::date + interval '3' day, cast(a as double precision)";
        assert_eq!(Dialect::Postgres.adapt(pg), pg);
    }

    #[test]
    fn placeholders_are_filled_from_the_dialects_row() {
        let ddl = "CREATE TABLE {orders} (id {type:serial_key}, at {type:timestamp}, n {type:bigint}, x {type:double})";
        assert_eq!(
            Namespace::named(Dialect::MySql, "b").adapt(ddl),
            "CREATE TABLE `b`.`orders` (id BIGINT AUTO_INCREMENT PRIMARY KEY, at DATETIME, n BIGINT, x DOUBLE)"
        );
        assert_eq!(
            Dialect::Sqlite.adapt(ddl),
            "CREATE TABLE {orders} (id INTEGER PRIMARY KEY, at TIMESTAMP, n INTEGER, x REAL)"
        );
        let query = "SELECT {cs:i_name} FROM {item} WHERE {cs:i_data} LIKE '%{cs:b}' AND a = '{item}'";
        assert_eq!(
            Namespace::named(Dialect::MySql, "s").adapt(query),
            "SELECT CAST(i_name AS BINARY) FROM `s`.`item` WHERE CAST(i_data AS BINARY) LIKE '%{cs:b}' AND a = '{item}'"
        );
        assert_eq!(
            Namespace::named(Dialect::Postgres, "s").adapt(query),
            "SELECT i_name FROM \"s\".\"item\" WHERE i_data LIKE '%{cs:b}' AND a = '{item}'"
        );
        // SQLite has no `::`.
        assert_eq!(Dialect::Sqlite.adapt("SELECT x::integer"), "SELECT cast(x as integer)");
    }
}
