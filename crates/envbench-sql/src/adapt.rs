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

use crate::forms::{DateFields, DateLiterals, Intervals, RowLimit, RowLock};
use crate::{Dialect, DialectOps, Namespace};

impl Dialect {
    /// `portable` as this dialect runs it: types and case-sensitive expressions filled in, PostgreSQL's forms
    /// rewritten. A `{NAME}` placeholder is left as it is: [`Namespace::adapt`] qualifies tables.
    pub fn adapt(self, portable: &str) -> String {
        adapt(portable, self.ops(), None)
    }
}

impl Namespace {
    /// `portable` as this namespace's dialect runs it ([`Dialect::adapt`]), every `{NAME}` a table qualified with
    /// this namespace.
    pub fn adapt(&self, portable: &str) -> String {
        adapt(portable, self.dialect().ops(), Some(self))
    }
}

fn adapt(portable: &str, ops: &DialectOps, namespace: Option<&Namespace>) -> String {
    let mut sql = fill_placeholders(portable, ops, namespace);
    for (from, to) in ops.cast_types {
        let (from, to) = (format!(" as {from})"), format!(" as {to})"));
        sql = replace_outside_literals(&sql, &from, |_| Some((from.len(), to.clone())));
    }
    sql = rewrite_date_literals(&sql, ops.date_literals);
    sql = rewrite_date_fields(&sql, ops.date_fields);
    sql = rewrite_intervals(&sql, ops.intervals);
    if !ops.double_colon_casts {
        sql = rewrite_double_colon_casts(&sql, ops.cast_types);
    }
    sql = rewrite_row_lock(&sql, ops.row_lock);
    rewrite_row_limit(&sql, ops.row_limit)
}

/// The braces of `portable` outside literals, filled: `{type:NAME}`, `{cs:EXPR}` and, given a namespace, `{NAME}`.
fn fill_placeholders(portable: &str, ops: &DialectOps, namespace: Option<&Namespace>) -> String {
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

/// Replace matches of `pattern` (ASCII case ignored) that start outside literals (and, for a pattern that starts with
/// a word, at a word's start: `update '` holds no `date '`): `replace` gets the text from the match on and returns
/// how many bytes to replace and with what, or `None` to leave the match alone.
fn replace_outside_literals(sql: &str, pattern: &str, replace: impl Fn(&str) -> Option<(usize, String)>) -> String {
    let lower = sql.to_ascii_lowercase();
    let mask = literal_mask(sql);
    let word = pattern.starts_with(|c: char| c.is_ascii_alphanumeric());
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (at, _) in lower.match_indices(pattern) {
        if at < last || mask[at] || (word && !starts_word(sql, at)) {
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

/// Whether `at` starts a word of `sql`: nothing of a name comes just before it.
fn starts_word(sql: &str, at: usize) -> bool {
    !sql[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}

/// Where the parenthesis opened at `open` of `text` closes (outside literals), when it does.
fn closing_parenthesis(text: &str, open: usize) -> Option<usize> {
    let mask = literal_mask(text);
    let mut depth = 0usize;
    for (at, byte) in text.bytes().enumerate().skip(open) {
        match byte {
            _ if mask[at] => {}
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// `date '1998-12-01'` as the dialect writes a date literal.
fn rewrite_date_literals(sql: &str, form: DateLiterals) -> String {
    if form == DateLiterals::Keyword {
        return sql.to_string();
    }
    replace_outside_literals(sql, "date '", |after| {
        let value = &after["date '".len()..];
        let value = &value[..value.find('\'')?];
        let literal = format!("'{value}'");
        let replacement = match form {
            DateLiterals::Cast => format!("CAST({literal} AS DATE)"),
            _ => literal,
        };
        Some(("date ''".len() + value.len(), replacement))
    })
}

/// `extract(FIELD from x)` as the dialect reads a date's field.
fn rewrite_date_fields(sql: &str, form: DateFields) -> String {
    if form == DateFields::Extract {
        return sql.to_string();
    }
    replace_outside_literals(sql, "extract(", |after| {
        let close = closing_parenthesis(after, "extract".len())?;
        let inner = &after["extract(".len()..close];
        let trimmed = inner.trim_start();
        let field_length = trimmed.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(trimmed.len());
        let (field, rest) = trimmed.split_at(field_length);
        let rest = rest.trim_start();
        if field.is_empty() || !rest.get(..5).is_some_and(|from| from.eq_ignore_ascii_case("from ")) {
            return None;
        }
        let value = rest[5..].trim();
        let replacement = match form {
            DateFields::DatePart => format!("DATEPART({field}, {value})"),
            _ => {
                let format = match field.to_ascii_lowercase().as_str() {
                    "year" => "%Y",
                    "month" => "%m",
                    "day" => "%d",
                    "hour" => "%H",
                    "minute" => "%M",
                    "second" => "%S",
                    _ => return None,
                };
                format!("CAST(strftime('{format}', {value}) AS INTEGER)")
            }
        };
        Some((close + 1, replacement))
    })
}

/// `x + interval '90' day` (or `-`) as the dialect moves a date.
fn rewrite_intervals(sql: &str, form: Intervals) -> String {
    if form == Intervals::QuotedCount {
        return sql.to_string();
    }
    let mask = literal_mask(sql);
    let lower = sql.to_ascii_lowercase();
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (at, _) in lower.match_indices("interval '") {
        if at < last || mask[at] || !starts_word(sql, at) {
            continue;
        }
        // The count and the unit.
        let count_start = at + "interval '".len();
        let Some(count_length) = sql[count_start..].find('\'') else { continue };
        let count = &sql[count_start..count_start + count_length];
        let numeric = !count.is_empty() && count.chars().all(|c| c.is_ascii_digit() || c == '-' || c == '.');
        let unit_start = count_start + count_length + 1;
        let unit_text = sql[unit_start..].trim_start();
        let unit_length = unit_text.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(unit_text.len());
        let unit = &unit_text[..unit_length];
        let end = sql.len() - unit_text.len() + unit_length;
        if !numeric || unit.is_empty() {
            continue;
        }
        if form == Intervals::BareCount {
            out.push_str(&sql[last..at]);
            out.push_str(&format!("{} {count}", &sql[at..at + "interval".len()]));
            last = count_start + count_length + 1;
            continue;
        }
        // The operator and the date it moves.
        let before = sql[last..at].trim_end();
        let Some(sign) = before.chars().last().filter(|c| *c == '+' || *c == '-') else { continue };
        let operand_end = last + before[..before.len() - 1].trim_end().len();
        let Some(operand_start) = operand_start(sql, &mask, last, operand_end) else { continue };
        let operand = &sql[operand_start..operand_end];
        let count = match (sign, count.strip_prefix('-')) {
            ('+', _) => count.to_string(),
            ('-', Some(positive)) => positive.to_string(),
            _ => format!("-{count}"),
        };
        let replacement = match form {
            Intervals::DateAdd => format!("DATEADD({unit}, {count}, {operand})"),
            _ => {
                let function = match unit.to_ascii_lowercase().as_str() {
                    "hour" | "minute" | "second" => "datetime",
                    _ => "date",
                };
                let signed = if count.starts_with('-') { count } else { format!("+{count}") };
                format!("{function}({operand}, '{signed} {unit}')")
            }
        };
        out.push_str(&sql[last..operand_start]);
        out.push_str(&replacement);
        last = end;
    }
    out.push_str(&sql[last..]);
    out
}

/// Where the operand that ends at `end` of `sql` starts (not before `floor`): a parenthesized expression with the
/// function name before it, a literal with the `date` keyword before it, or a (qualified, quoted) name.
fn operand_start(sql: &str, mask: &[bool], floor: usize, end: usize) -> Option<usize> {
    let bytes = sql.as_bytes();
    let mut start = end;
    if end > floor && bytes[end - 1] == b')' {
        let mut depth = 0usize;
        while start > floor {
            start -= 1;
            match bytes[start] {
                _ if mask[start] => {}
                b')' => depth += 1,
                b'(' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if depth != 0 {
            return None;
        }
        while start > floor && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            start -= 1;
        }
    } else if end > floor && bytes[end - 1] == b'\'' {
        while start > floor && mask[start - 1] {
            start -= 1;
        }
        let keyword = sql[floor..start].trim_end();
        if keyword.len() >= 4 && keyword[keyword.len() - 4..].eq_ignore_ascii_case("date") {
            let keyword_start = floor + keyword.len() - 4;
            if starts_word(sql, keyword_start) {
                start = keyword_start;
            }
        }
    } else {
        while start > floor
            && (mask[start - 1] || bytes[start - 1].is_ascii_alphanumeric() || matches!(bytes[start - 1], b'_' | b'.'))
        {
            start -= 1;
        }
    }
    (start < end).then_some(start)
}

/// A statement's ` FOR UPDATE` as the dialect locks the rows it reads.
fn rewrite_row_lock(sql: &str, form: RowLock) -> String {
    if form == RowLock::ForUpdate {
        return sql.to_string();
    }
    let mask = literal_mask(sql);
    let lower = sql.to_ascii_lowercase();
    let Some(lock) = lower
        .match_indices(" for update")
        .map(|(at, _)| at)
        .find(|&at| !mask[at] && !sql[at + " for update".len()..].starts_with(|c: char| c.is_ascii_alphanumeric()))
    else {
        return sql.to_string();
    };
    let unlocked = format!("{}{}", &sql[..lock], &sql[lock + " for update".len()..]);
    let RowLock::TableHint(hint) = form else { return unlocked };
    let mask = literal_mask(&unlocked);
    let from = unlocked
        .to_ascii_lowercase()
        .match_indices(" from ")
        .map(|(at, _)| at)
        .find(|&at| !mask[at])
        .unwrap_or_else(|| panic!("SQL that locks rows reads no table: {sql}"));
    let mut name_end = from + " from ".len();
    let bytes = unlocked.as_bytes();
    while name_end < bytes.len()
        && (mask[name_end] || bytes[name_end].is_ascii_alphanumeric() || matches!(bytes[name_end], b'_' | b'.'))
    {
        name_end += 1;
    }
    format!("{}{hint}{}", &unlocked[..name_end], &unlocked[name_end..])
}

/// A query's `LIMIT n` as the dialect keeps its first rows.
fn rewrite_row_limit(sql: &str, form: RowLimit) -> String {
    if form == RowLimit::Limit {
        return sql.to_string();
    }
    replace_outside_literals(sql, " limit ", |after| {
        let count = &after[" limit ".len()..];
        let count = &count[..count.find(|c: char| !(c.is_ascii_digit() || c == '?')).unwrap_or(count.len())];
        (!count.is_empty())
            .then(|| (" limit ".len() + count.len(), format!(" OFFSET 0 ROWS FETCH NEXT {count} ROWS ONLY")))
    })
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

    /// A server that spells every form otherwise (SQL Server's words), as a new row would name them: the rules are
    /// the row's, and no workload changes.
    #[test]
    fn a_row_that_spells_each_form_otherwise_gets_it_so() {
        use crate::forms::{DateFields, DateLiterals, Intervals, RowLimit, RowLock};
        let sql_server = DialectOps {
            row_limit: RowLimit::FetchNext,
            row_lock: RowLock::TableHint(" WITH (UPDLOCK, ROWLOCK)"),
            date_fields: DateFields::DatePart,
            date_literals: DateLiterals::Cast,
            intervals: Intervals::DateAdd,
            double_colon_casts: false,
            ..Dialect::Postgres.ops().clone()
        };
        let sql_server = |portable: &str| adapt(portable, &sql_server, None);
        assert_eq!(
            sql_server("SELECT no_o_id FROM \"s\".\"new_order\" WHERE no_w_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"),
            "SELECT no_o_id FROM \"s\".\"new_order\" WITH (UPDLOCK, ROWLOCK) WHERE no_w_id = ? ORDER BY no_o_id \
             OFFSET 0 ROWS FETCH NEXT 1 ROWS ONLY"
        );
        assert_eq!(
            sql_server("select extract(year from o_orderdate) as y from orders where o_orderdate < date '1995-01-01'"),
            "select DATEPART(year, o_orderdate) as y from orders where o_orderdate < CAST('1995-01-01' AS DATE)"
        );
        assert_eq!(
            sql_server(
                "where l_shipdate <= date '1998-12-01' - interval '90' day and x < o.o_date + interval '3' month"
            ),
            "where l_shipdate <= DATEADD(day, -90, CAST('1998-12-01' AS DATE)) and x < DATEADD(month, 3, o.o_date)"
        );
        // Words that hold a form's word are not the form, nor is a literal's text.
        let untouched = "update t set mandate = 'date ''x''', delimit = 1 where 'LIMIT 1 FOR UPDATE' = s";
        assert_eq!(sql_server(untouched), untouched);

        let sqlite = |portable: &str| adapt(portable, Dialect::Sqlite.ops(), None);
        assert_eq!(
            sqlite("SELECT extract(month from d) FROM t WHERE d >= date '1995-01-01' + interval '1' day FOR UPDATE"),
            "SELECT CAST(strftime('%m', d) AS INTEGER) FROM t WHERE d >= date('1995-01-01', '+1 day')"
        );
        assert_eq!(sqlite("SELECT x - interval '2' hour"), "SELECT datetime(x, '-2 hour')");
        // The servers envbench runs on take the portable forms as they are written, MySQL's bare interval counts
        // aside.
        let portable = "SELECT extract(year from d) FROM t WHERE d < date '1995-01-01' ORDER BY d LIMIT 1 FOR UPDATE";
        assert_eq!(Dialect::Postgres.adapt(portable), portable);
        assert_eq!(Dialect::MySql.adapt(portable), portable);
    }
}
