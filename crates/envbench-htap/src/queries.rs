//! The CH-benCHmark's 22 analytic queries ([`queries.sql`](https://db.in.tum.de/research/projects/CHbenCHmark/)),
//! written once for PostgreSQL and MariaDB/MySQL and made concrete for a run's namespace and dialect; each analytic
//! stream's order of them; and the comparison of two servers' answers.

use envbench_oltp::{random::NuRandConstants, random::Random};
use envbench_sql::{Namespace, Row};

/// The queries' text: a header, then each query after a line `-- query: N`.
const TEXT: &str = include_str!("queries.sql");
/// How many queries there are.
pub const QUERIES: usize = 22;

/// The tables the queries name in braces.
const TABLES: [&str; 10] = [
    "tpcc_customer",
    "tpcc_new_order",
    "tpcc_orders",
    "tpcc_order_line",
    "tpcc_item",
    "tpcc_stock",
    "tpcc_district",
    "ch_supplier",
    "ch_nation",
    "ch_region",
];

/// The 22 queries as the dialect of `namespace` runs them, every table qualified with it: query N is at N - 1.
pub fn texts(namespace: &Namespace) -> Vec<String> {
    let mut queries: Vec<String> = Vec::with_capacity(QUERIES);
    let mut current: Option<String> = None;
    for line in TEXT.lines() {
        if line.starts_with("-- query: ") {
            queries.extend(current.take());
            current = Some(String::new());
        } else if let Some(text) = current.as_mut()
            && !line.trim_start().starts_with("--")
        {
            text.push_str(line);
            text.push('\n');
        }
    }
    queries.extend(current);
    queries.into_iter().map(|text| render(text.trim(), namespace)).collect()
}

/// One query's text for `namespace` ([`Namespace::adapt`]): `{table}` qualified, `{cs:x}` made a case-sensitive `x`.
fn render(text: &str, namespace: &Namespace) -> String {
    for name in text.split('{').skip(1).filter_map(|rest| rest.split_once('}')).map(|(name, _)| name) {
        assert!(name.starts_with("cs:") || TABLES.contains(&name), "queries.sql names an unknown table {name}");
    }
    namespace.adapt(text)
}

/// The order in which analytic stream `stream` runs the queries (numbers 1 to 22): a permutation of its own, the
/// same in every run.
pub fn permutation(stream: u32) -> Vec<usize> {
    let seed = 0x0c4b_e4c4_u64 ^ (u64::from(stream) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut random = Random::new(seed, NuRandConstants::load(seed));
    random.permutation(QUERIES).into_iter().map(|n| n as usize).collect()
}

/// A query's answer as the server wrote it: every value as text, NULL as `None`.
pub type Answer = Vec<Vec<Option<String>>>;

/// An answer from the rows of [`envbench_sql::Connection::query_named`].
pub fn answer(rows: &[Row], columns: usize) -> Answer {
    rows.iter()
        .map(|row| (0..columns).map(|c| if row.is_null(c) { None } else { row.text(c).ok() }).collect())
        .collect()
}

/// Whether two values are the same: as numbers within a rounding's difference (the servers sum floating-point
/// amounts in different orders, and MariaDB gives an average of integers 4 decimals where PostgreSQL gives 16), as
/// timestamps to the second, otherwise as text without the padding of a CHAR.
fn same_value(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            let (a, b) = (a.trim(), b.trim());
            match (number(a), number(b)) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-4 + 1e-9 * x.abs().max(y.abs()),
                _ => seconds(a) == seconds(b),
            }
        }
        _ => false,
    }
}

/// A value written as a number (`12.5`, `-3`, `1e-5`), not text that Rust would also read as one (`inF`, `NaN`).
fn number(text: &str) -> Option<f64> {
    let numeric = text.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
        && text.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    text.parse::<f64>().ok().filter(|n| numeric && n.is_finite())
}

/// A timestamp to the second (`2011-06-01 00:00:00.000000` is `2011-06-01 00:00:00`); other text as it is.
fn seconds(text: &str) -> &str {
    let bytes = text.as_bytes();
    let is_timestamp = bytes.len() > 19 && bytes[4] == b'-' && bytes[10] == b' ' && bytes[19] == b'.';
    if is_timestamp { &text[..19] } else { text }
}

/// A row's key for sorting answers the same way whatever the server's collation: numbers to 2 decimals.
fn sort_key(row: &[Option<String>]) -> Vec<String> {
    row.iter()
        .map(|value| match value {
            None => "\u{0}".to_string(),
            Some(text) => match number(text.trim()) {
                Some(number) => format!("{number:.2}"),
                None => seconds(text.trim()).to_string(),
            },
        })
        .collect()
}

/// An answer's rows in an order of their own, whatever the server's collation.
fn sorted(answer: &Answer) -> Vec<&Vec<Option<String>>> {
    let mut rows: Vec<(Vec<String>, &Vec<Option<String>>)> = answer.iter().map(|r| (sort_key(r), r)).collect();
    rows.sort();
    rows.into_iter().map(|(_, row)| row).collect()
}

/// Why two answers to one query differ, or `None` when they agree: the same rows, in whatever order (the servers'
/// collations order text differently), each value the same by [`same_value`].
pub fn difference(a: &Answer, b: &Answer) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} rows against {}", a.len(), b.len()));
    }
    for (index, (x, y)) in sorted(a).into_iter().zip(sorted(b)).enumerate() {
        if x.len() != y.len() || x.iter().zip(y).any(|(p, q)| !same_value(p, q)) {
            return Some(format!("row {} (sorted): {x:?} against {y:?}", index + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_sql::Dialect;

    #[test]
    fn every_query_is_qualified_and_case_sensitive_on_mysql() {
        for dialect in [Dialect::Postgres, Dialect::MySql] {
            let namespace = Namespace::named(dialect, "s");
            let texts = texts(&namespace);
            assert_eq!(texts.len(), QUERIES);
            for (index, text) in texts.iter().enumerate() {
                assert!(text.starts_with("SELECT") || text.starts_with("WITH"), "Q{}: {text}", index + 1);
                assert!(!text.contains('{') && !text.contains("--") && !text.contains(';'), "Q{}: {text}", index + 1);
                assert!(!text.contains(" FROM tpcc_") && !text.contains(", tpcc_"), "Q{}: {text}", index + 1);
            }
            let q9 = &texts[8];
            match dialect {
                Dialect::MySql => assert!(q9.contains("CAST(i_data AS BINARY) LIKE '%BB'"), "{q9}"),
                Dialect::Postgres | Dialect::Sqlite => {
                    assert!(q9.contains("AND i_data LIKE '%BB'") && q9.contains("\"s\".\"tpcc_item\""), "{q9}")
                }
            }
        }
    }

    #[test]
    fn streams_run_every_query_once_in_orders_of_their_own() {
        let first = permutation(0);
        let mut sorted = first.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=QUERIES).collect::<Vec<_>>());
        assert_eq!(permutation(0), first, "the same every run");
        assert_ne!(permutation(1), first);
    }

    #[test]
    fn answers_agree_across_servers_up_to_rounding_order_and_padding() {
        let value = |s: &str| Some(s.to_string());
        let pg: Answer = vec![
            vec![value("b"), value("12.333333333333334"), value("2011-06-01 00:00:00")],
            vec![value("A"), value("1000000.25"), None],
        ];
        let maria: Answer = vec![
            vec![value("A  "), value("1000000.2500001"), None],
            vec![value("b"), value("12.3333"), value("2011-06-01 00:00:00.000000")],
        ];
        assert_eq!(difference(&pg, &maria), None);
        let other: Answer = vec![maria[0].clone(), vec![value("b"), value("12.34"), value("2011-06-01 00:00:00")]];
        assert!(difference(&pg, &other).unwrap().contains("12.34"));
        assert_eq!(difference(&pg, &pg[..1].to_vec()).unwrap(), "2 rows against 1");
        // Text that Rust would read as a number is text: a brand "inF" is itself, not infinity.
        let brand = |s: &str| vec![vec![value(s)]];
        assert_eq!(difference(&brand("inF"), &brand("inF")), None);
        assert!(difference(&brand("inF"), &brand("Inf")).is_some());
    }
}
