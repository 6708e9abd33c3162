//! The CH-benCHmark's three tables beside TPC-C's: `ch_region` (5 rows), `ch_nation` (62 rows, keyed by the ASCII
//! codes of `0-9A-Za-z`, so a customer's nation is the first character of its `c_state`) and `ch_supplier` (10,000
//! rows; a stock row's supplier is `mod(s_w_id * s_i_id, 10000)`). They are the same for every scale, loaded from a
//! fixed seed, so every server holds the same rows.
//!
//! They follow oltp's marker rules ([`envbench_oltp::Companion`]): the marker table `envbench_htap_ch` says envbench
//! made them and at which version; relations of their names without it are refused and never touched; a load left
//! unfinished is built again by the next run that holds the tables alone.
//!
//! The nation and region names are the ones the published queries name ('Germany', 'Cambodia', 'Europe'), as
//! OLTPBench and BenchBase load them. Suppliers are numbered 0 to 9999, so every stock row has one.

use envbench_oltp::{Companion, CompanionState, OltpError, random::NuRandConstants, random::Random, schema::Dropped};
use envbench_sql::{Connection, Marker, MarkerState, Namespace, Relation, RelationKind, Value};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// The marker table: one signed row ([`envbench_sql::marker`]), the version of the CH tables envbench made (empty
/// while they are being built).
pub const MARKER: &str = "envbench_htap_ch";
const CH_MARKER: Marker = Marker { table: MARKER, maker: "htap ch", payload: "version INTEGER" };
/// Bumped when the CH tables or their rows change, so an older load is built again.
pub const CH_VERSION: i64 = 1;
/// Suppliers, numbered 0 to 9999: `mod(s_w_id * s_i_id, 10000)` names one for every stock row.
pub const SUPPLIERS: i64 = 10_000;
/// The seed of the CH rows.
const SEED: u64 = 0xc4_be_4c_4a_2b_11;

/// A CH table: its name, its columns and its key.
pub struct ChTable {
    pub name: &'static str,
    columns: &'static str,
    key: &'static str,
}

/// The tables, in load order.
pub const TABLES: [ChTable; 3] = [
    ChTable {
        name: "ch_region",
        columns: "r_regionkey INTEGER NOT NULL, r_name VARCHAR(55) NOT NULL, r_comment VARCHAR(152) NOT NULL",
        key: "r_regionkey",
    },
    ChTable {
        name: "ch_nation",
        columns: "n_nationkey INTEGER NOT NULL, n_name VARCHAR(25) NOT NULL, n_regionkey INTEGER NOT NULL, \
                  n_comment VARCHAR(152) NOT NULL",
        key: "n_nationkey",
    },
    ChTable {
        name: "ch_supplier",
        columns: "su_suppkey INTEGER NOT NULL, su_name VARCHAR(25) NOT NULL, su_address VARCHAR(40) NOT NULL, \
                  su_nationkey INTEGER NOT NULL, su_phone VARCHAR(15) NOT NULL, su_acctbal DOUBLE PRECISION NOT NULL, \
                  su_comment VARCHAR(101) NOT NULL",
        key: "su_suppkey",
    },
];

/// The regions, keyed 1 to 5.
pub const REGIONS: [(i64, &str); 5] = [(1, "Africa"), (2, "America"), (3, "Asia"), (4, "Australia"), (5, "Europe")];

/// The nations: the characters `0-9A-Za-z` in order, each with its name and region (the nation's key is the
/// character's ASCII code).
pub const NATIONS: [(char, &str, i64); 62] = [
    ('0', "Australia", 4),
    ('1', "Belgium", 5),
    ('2', "Cameroon", 1),
    ('3', "Denmark", 5),
    ('4', "Ecuador", 2),
    ('5', "France", 5),
    ('6', "Germany", 5),
    ('7', "Hungary", 5),
    ('8', "Italy", 5),
    ('9', "Japan", 3),
    ('A', "Kenya", 1),
    ('B', "Lithuania", 5),
    ('C', "Mexico", 2),
    ('D', "Netherlands", 5),
    ('E', "Oman", 1),
    ('F', "Portugal", 5),
    ('G', "Qatar", 1),
    ('H', "Rwanda", 1),
    ('I', "Serbia", 5),
    ('J', "Togo", 1),
    ('K', "United States", 2),
    ('L', "Vietnam", 3),
    ('M', "Singapore", 3),
    ('N', "Cambodia", 3),
    ('O', "Yemen", 1),
    ('P', "Zimbabwe", 1),
    ('Q', "Argentina", 2),
    ('R', "Bolivia", 2),
    ('S', "Canada", 2),
    ('T', "Dominican Republic", 2),
    ('U', "Egypt", 1),
    ('V', "Finnland", 5),
    ('W', "Ghana", 1),
    ('X', "Haiti", 2),
    ('Y', "India", 3),
    ('Z', "Jamaica", 4),
    ('a', "Kazakhstan", 3),
    ('b', "Luxembourg", 5),
    ('c', "Morocco", 1),
    ('d', "Norway", 5),
    ('e', "Poland", 5),
    ('f', "Peru", 2),
    ('g', "Nicaragua", 2),
    ('h', "Romania", 5),
    ('i', "South Africa", 1),
    ('j', "Thailand", 3),
    ('k', "United Kingdom", 5),
    ('l', "Venezuela", 2),
    ('m', "Liechtenstein", 5),
    ('n', "Austria", 5),
    ('o', "Laos", 3),
    ('p', "Zambia", 1),
    ('q', "Switzerland", 5),
    ('r', "China", 3),
    ('s', "Papua New Guinea", 4),
    ('t', "East Timor", 4),
    ('u', "Bulgaria", 5),
    ('v', "Brazil", 2),
    ('w', "Albania", 5),
    ('x', "Andorra", 5),
    ('y', "Belize", 2),
    ('z', "Botswana", 1),
];

/// Rows per `INSERT`.
const ROWS_PER_STATEMENT: usize = 500;

/// Every relation name the CH tables take: the marker, the tables and (PostgreSQL) their keys' indexes.
fn relation_names() -> Vec<(String, RelationKind)> {
    let mut names = vec![(MARKER.to_string(), RelationKind::Table)];
    for table in &TABLES {
        names.push((table.name.to_string(), RelationKind::Table));
        names.push((format!("{}_pkey", table.name), RelationKind::Other("index".into())));
    }
    names
}

/// What a namespace holds of the CH tables: every relation of their names, and what stands under the marker's.
fn look(connection: &mut dyn Connection, namespace: &Namespace) -> Result<(Vec<Relation>, MarkerState), OltpError> {
    let names = relation_names();
    let list: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    let found = namespace.relations(connection, &list)?;
    let marker = CH_MARKER.state(connection, namespace, &found)?;
    Ok((found, marker))
}

/// The relations of the CH tables' names that are not envbench's: all of them without the signed marker (the
/// marker's own named with why it proves nothing); with it, those of another kind than envbench makes.
fn foreign(found: &[Relation], marker: &MarkerState) -> Vec<String> {
    let names = relation_names();
    let marked = matches!(marker, MarkerState::Ours { .. });
    found
        .iter()
        .filter(|r| !marked || !names.iter().any(|(n, k)| n.eq_ignore_ascii_case(&r.name) && *k == r.kind))
        .map(|r| match marker {
            MarkerState::Foreign(why) if r.name.eq_ignore_ascii_case(MARKER) => why.clone(),
            _ => r.describe(),
        })
        .collect()
}

/// The CH tables as oltp's companion: checked when a run plans, built while it holds the tables alone.
pub struct ChTables;

/// The companion `envbench htap` plans oltp's run with.
pub static CH_TABLES: ChTables = ChTables;

impl Companion for ChTables {
    fn name(&self) -> &'static str {
        "the CH-benCHmark tables (ch_supplier, ch_nation, ch_region)"
    }

    fn workload(&self) -> &'static str {
        "htap"
    }

    fn state(&self, connection: &mut dyn Connection, namespace: &Namespace) -> Result<CompanionState, OltpError> {
        let (found, marker) = look(connection, namespace)?;
        let foreign = foreign(&found, &marker);
        if !foreign.is_empty() {
            return Ok(CompanionState::Foreign(foreign));
        }
        let marked = matches!(marker, MarkerState::Ours { .. });
        if !marked || found.iter().filter(|r| r.kind == RelationKind::Table).count() < TABLES.len() + 1 {
            return Ok(CompanionState::Missing);
        }
        let version = connection
            .query_optional(
                &format!("SELECT version FROM {} WHERE version IS NOT NULL", namespace.qualify(MARKER)),
                &[],
            )?
            .map(|row| row.int(0))
            .transpose()?;
        Ok(if version == Some(CH_VERSION) { CompanionState::Complete } else { CompanionState::Missing })
    }

    fn build(
        &self,
        connection: &mut dyn Connection,
        namespace: &Namespace,
        interrupt: &AtomicBool,
    ) -> Result<(), OltpError> {
        let (found, marker) = look(connection, namespace)?;
        let foreign = foreign(&found, &marker);
        if !foreign.is_empty() {
            return Err(OltpError::Foreign(format!(
                "{}: {} bear the names of the CH-benCHmark tables but envbench did not make them",
                namespace.quoted(),
                foreign.join(", ")
            )));
        }
        // The marker first says "unfinished" (no version), so an interrupt from here on leaves tables the next run
        // builds.
        match marker {
            MarkerState::Ours { .. } => CH_MARKER.clear_payload(connection, namespace, &["version"])?,
            _ => {
                CH_MARKER.create(connection, namespace)?;
            }
        }
        for table in &TABLES {
            let name = namespace.qualify(table.name);
            connection.batch(&format!("DROP TABLE IF EXISTS {name}"))?;
            connection.batch(&format!("CREATE TABLE {name} ({}, PRIMARY KEY ({}))", table.columns, table.key))?;
        }
        for (table, rows) in TABLES.iter().zip(rows()) {
            for chunk in rows.chunks(ROWS_PER_STATEMENT) {
                if interrupt.load(Ordering::SeqCst) {
                    return Err(OltpError::Interrupted);
                }
                let mut sql = format!("INSERT INTO {} VALUES ", namespace.qualify(table.name));
                for (i, row) in chunk.iter().enumerate() {
                    sql.push_str(if i == 0 { "(" } else { ",(" });
                    sql.push_str(row);
                    sql.push(')');
                }
                connection.batch(&sql)?;
            }
        }
        for table in &TABLES {
            let name = namespace.qualify(table.name);
            // MySQL's ANALYZE TABLE answers with rows, read as a query.
            connection.query(&namespace.dialect().ops().analyze_table.replace("{table}", &name), &[])?;
        }
        CH_MARKER.set_payload(connection, namespace, "version = ?", &[Value::Int(CH_VERSION)])?;
        Ok(())
    }

    fn drop_own(&self, connection: &mut dyn Connection, namespace: &Namespace) -> Result<Dropped, OltpError> {
        let (found, marker) = look(connection, namespace)?;
        let mut outcome = Dropped { dropped: Vec::new(), left: foreign(&found, &marker) };
        if matches!(marker, MarkerState::Ours { .. }) {
            for table in &TABLES {
                if found.iter().any(|r| r.name.eq_ignore_ascii_case(table.name) && r.kind == RelationKind::Table) {
                    connection.batch(&format!("DROP TABLE {}", namespace.qualify(table.name)))?;
                    outcome.dropped.push(table.name.to_string());
                }
            }
            connection.batch(&format!("DROP TABLE {}", namespace.qualify(MARKER)))?;
            outcome.dropped.push(MARKER.to_string());
        }
        Ok(outcome)
    }
}

/// Lower-case letters, `low` to `high` of them.
fn letters(random: &mut Random, low: i64, high: i64) -> String {
    let length = random.range(low, high);
    (0..length).map(|_| char::from(b'a' + random.range(0, 25) as u8)).collect()
}

/// The rows of each table, in [`TABLES`]' order, as SQL value lists (the generated text holds no quote).
pub fn rows() -> [Vec<String>; 3] {
    let mut random = Random::new(SEED, NuRandConstants::load(SEED));
    let regions =
        REGIONS.iter().map(|(key, name)| format!("{key},'{name}','{}'", letters(&mut random, 31, 115))).collect();
    let nations = NATIONS
        .iter()
        .map(|(character, name, region)| {
            format!("{},'{name}',{region},'{}'", u32::from(*character), letters(&mut random, 31, 114))
        })
        .collect();
    let suppliers = (0..SUPPLIERS)
        .map(|key| {
            let nation = u32::from(NATIONS[random.range(0, NATIONS.len() as i64 - 1) as usize].0);
            let mut row = format!("{key},'Supplier#{key:09}','{}',{nation},", letters(&mut random, 10, 40));
            let _ = write!(
                row,
                "'{:02}-{:03}-{:03}-{:04}',{:.2},'{}'",
                nation % 90 + 10,
                random.range(100, 999),
                random.range(100, 999),
                random.range(1000, 9999),
                random.decimal(-999.99, 9999.99, 2),
                letters(&mut random, 51, 101)
            );
            row
        })
        .collect();
    [regions, nations, suppliers]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nations_are_keyed_by_every_alphanumeric_character_and_regions_exist() {
        let characters: String = NATIONS.iter().map(|(c, _, _)| *c).collect();
        assert_eq!(characters, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
        assert!(NATIONS.iter().all(|(_, _, region)| REGIONS.iter().any(|(key, _)| key == region)));
        let names: std::collections::BTreeSet<&str> = NATIONS.iter().map(|(_, n, _)| *n).collect();
        assert_eq!(names.len(), NATIONS.len(), "no nation named twice");
        for named in ["Germany", "Cambodia"] {
            assert!(names.contains(named), "the queries name {named}");
        }
    }

    #[test]
    fn rows_are_the_same_every_time_and_quote_free() {
        let (first, second) = (rows(), rows());
        assert_eq!(first, second);
        assert_eq!(first.iter().map(Vec::len).collect::<Vec<_>>(), [5, 62, 10_000]);
        assert!(first.iter().flatten().all(|row| row.matches('\'').count() % 2 == 0 && !row.contains("''")));
        // Some supplier comments hold "bad" (query 16 leaves their suppliers out), not all.
        let bad = first[2].iter().filter(|row| row.contains("bad")).count();
        assert!((5..500).contains(&bad), "{bad} suppliers with 'bad' in their comment");
    }
}
