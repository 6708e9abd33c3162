//! Rows in bulk where there is no `COPY`: CSV lines as one multi-row `INSERT` of quoted literals.

use std::fmt::Write as _;

/// One CSV value as a SQL literal. Every value goes in quoted (the server converts numbers and dates from text); text
/// holding a quote or a backslash goes in hexadecimal, which reads the same whatever the server's
/// `NO_BACKSLASH_ESCAPES` setting (SQLite reads `X'..'` as a blob: no value envbench loads there holds either).
fn push_literal(value: &str, out: &mut String) {
    if value.contains('\'') || value.contains('\\') {
        out.push_str("X'");
        for byte in value.bytes() {
            let _ = write!(out, "{byte:02x}");
        }
        out.push('\'');
    } else {
        out.push('\'');
        out.push_str(value);
        out.push('\'');
    }
}

/// `INSERT INTO table VALUES (...), (...)` for CSV lines ([`crate::Connection::load_csv`]'s form); `None` when there
/// is no line. The work is done by the standard library's searches, so it is fast even in a debug build.
pub(crate) fn insert_statement(table: &str, csv: &str) -> Option<String> {
    let mut sql = String::with_capacity(csv.len() + csv.len() / 4 + 64);
    sql.push_str("INSERT INTO ");
    sql.push_str(table);
    sql.push_str(" VALUES ");
    let mut any = false;
    for (i, line) in csv.lines().filter(|line| !line.is_empty()).enumerate() {
        any = true;
        sql.push_str(if i == 0 { "(" } else { ",(" });
        let mut rest = line;
        loop {
            let (value, next) = match rest.strip_prefix('"') {
                Some(quoted) => {
                    let end = quoted.find('"').unwrap_or(quoted.len());
                    (&quoted[..end], quoted.get(end + 1..).and_then(|after| after.strip_prefix(',')))
                }
                None => match rest.find(',') {
                    Some(comma) => (&rest[..comma], Some(&rest[comma + 1..])),
                    None => (rest, None),
                },
            };
            push_literal(value, &mut sql);
            match next {
                Some(next) => {
                    sql.push(',');
                    rest = next;
                }
                None => break,
            }
        }
        sql.push(')');
    }
    any.then_some(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_csv_becomes_quoted_values() {
        let csv = "1,Supplier#000000001,\" N kD4on9OM Ipw3,gf0JBoQDd7tgrzrddZ\",17,27-918-335-1736,5755.94,\"each slyly \
                   above the careful\"\n2,it's,\"back\\slash\",1,x,0.00,\"\"\n";
        assert_eq!(
            insert_statement("supplier", csv).unwrap(),
            "INSERT INTO supplier VALUES ('1','Supplier#000000001',' N kD4on9OM Ipw3,gf0JBoQDd7tgrzrddZ','17',\
             '27-918-335-1736','5755.94','each slyly above the careful'),('2',X'69742773',X'6261636b5c736c617368','1',\
             'x','0.00','')"
        );
        assert_eq!(insert_statement("supplier", "\n"), None);
    }
}
