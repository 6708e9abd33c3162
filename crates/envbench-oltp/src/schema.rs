//! The tables of each profile, written once for the three dialects, and the marker table that says envbench made
//! them: what exists in a database (nothing, a complete load of some scale, a load left unfinished, or tables of the
//! same names that envbench did not make), creating and dropping only envbench's own tables, and keys, indexes and
//! statistics after the load.
//!
//! Every name is qualified with the run's one [`Namespace`] (the schema, or MySQL's database): what is checked is
//! what is created, dropped, loaded and queried, never a table of the same name elsewhere on the search path. Before
//! anything is created, every relation of envbench's names in that namespace is looked at, whatever its kind (a view,
//! a sequence or an index takes a name as well as a table does).
//!
//! The TPC-C tables carry a `tpcc_` prefix (`tpcc_warehouse`, `tpcc_customer`, ...) so they never meet the TPC-H
//! tables `customer` and `orders` that `envbench tpch` loads into the same database, nor a HammerDB schema; the TPC-B
//! tables have pgbench's own names, so `pgbench` can run against them for the cross-check.

use crate::error::OltpError;
use crate::profile::Profile;
use envbench_sql::{
    Connection, DatabaseUrl, Marker, MarkerState, Namespace, RangePartition, Relation, RelationKind, Value,
};

/// Bumped when the tables or the loaded data change, so an older load is rebuilt instead of reused. Version 2: rows
/// are loaded with the fixed [`crate::load::LOAD_TIME`], not the clock.
pub const SCHEMA_VERSION: i64 = 2;

/// A table: its name, its columns (with `{type:timestamp}` for the dialect's timestamp type) and its primary key.
pub struct Table {
    pub name: &'static str,
    pub columns: &'static str,
    pub primary_key: Option<&'static str>,
}

/// The table `--partition` splits by warehouse, its partition column, and the most partitions it gets.
pub const PARTITIONED_TABLE: &str = "tpcc_order_line";
const PARTITION_COLUMN: &str = "ol_w_id";
pub const MAX_PARTITIONS: u32 = 10;

/// What a load is made of: its scale (warehouses, or pgbench's scale) and how many range partitions by warehouse
/// split `tpcc_order_line` (0: one plain table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub scale: i64,
    pub partitions: u32,
}

impl Shape {
    /// A load of `scale` with every table plain.
    pub fn plain(scale: i64) -> Shape {
        Shape { scale, partitions: 0 }
    }

    /// A load of `scale`, with `tpcc_order_line` partitioned when `partition` is set: one partition per warehouse
    /// up to [`MAX_PARTITIONS`], then that many ranges of (nearly) equal numbers of warehouses.
    pub fn of(scale: i64, partition: bool) -> Shape {
        let partitions = if partition { scale.clamp(1, i64::from(MAX_PARTITIONS)) as u32 } else { 0 };
        Shape { scale, partitions }
    }

    /// `2 warehouses`, `20 warehouses, order lines in 10 partitions`.
    pub fn describe(&self, profile: Profile) -> String {
        let word = match (profile, self.scale) {
            (Profile::Tpcc, 1) => "warehouse",
            _ => profile.scale_word(),
        };
        match self.partitions {
            0 => format!("{} {word}", self.scale),
            n => format!("{} {word}, order lines in {n} partition{}", self.scale, plural(n)),
        }
    }

    /// The warehouses of partition `index` (0-based): from `.0` up to but not including `.1`, `None` for the open
    /// ends (the first takes everything below, the last everything above, so no row is ever outside).
    fn bounds(&self, index: u32) -> (Option<i64>, Option<i64>) {
        let n = i64::from(self.partitions.max(1));
        let start = |i: i64| 1 + i * self.scale / n;
        let i = i64::from(index);
        ((i > 0).then(|| start(i)), (i + 1 < n).then(|| start(i + 1)))
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The name of partition `index` (0-based) of [`PARTITIONED_TABLE`]: `tpcc_order_line_p1`, ... (a table of its own on
/// PostgreSQL; a partition inside the table on MariaDB/MySQL).
pub fn partition_name(index: u32) -> String {
    format!("{PARTITIONED_TABLE}_p{}", index + 1)
}

/// A secondary index.
pub struct Index {
    pub name: &'static str,
    pub table: &'static str,
    pub columns: &'static str,
}

const TPCC_TABLES: &[Table] = &[
    Table {
        name: "tpcc_warehouse",
        columns: "w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), \
                  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DOUBLE PRECISION, w_ytd DOUBLE PRECISION",
        primary_key: Some("w_id"),
    },
    Table {
        name: "tpcc_district",
        columns: "d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), \
                  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DOUBLE PRECISION, \
                  d_ytd DOUBLE PRECISION, d_next_o_id INTEGER",
        primary_key: Some("d_w_id, d_id"),
    },
    Table {
        name: "tpcc_customer",
        columns: "c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first VARCHAR(16), \
                  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), \
                  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since {type:timestamp}, \
                  c_credit CHAR(2), c_credit_lim DOUBLE PRECISION, c_discount DOUBLE PRECISION, \
                  c_balance DOUBLE PRECISION, c_ytd_payment DOUBLE PRECISION, c_payment_cnt INTEGER, \
                  c_delivery_cnt INTEGER, c_data VARCHAR(500)",
        primary_key: Some("c_w_id, c_d_id, c_id"),
    },
    Table {
        name: "tpcc_history",
        columns: "h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, \
                  h_date {type:timestamp}, h_amount DOUBLE PRECISION, h_data VARCHAR(24)",
        primary_key: None,
    },
    Table {
        name: "tpcc_new_order",
        columns: "no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL",
        primary_key: Some("no_w_id, no_d_id, no_o_id"),
    },
    Table {
        name: "tpcc_orders",
        columns: "o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, \
                  o_entry_d {type:timestamp}, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER",
        primary_key: Some("o_w_id, o_d_id, o_id"),
    },
    Table {
        name: "tpcc_order_line",
        columns: "ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, \
                  ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d {type:timestamp}, \
                  ol_quantity INTEGER, ol_amount DOUBLE PRECISION, ol_dist_info CHAR(24)",
        primary_key: Some("ol_w_id, ol_d_id, ol_o_id, ol_number"),
    },
    Table {
        name: "tpcc_item",
        columns: "i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DOUBLE PRECISION, \
                  i_data VARCHAR(50)",
        primary_key: Some("i_id"),
    },
    Table {
        name: "tpcc_stock",
        columns: "s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, s_dist_01 CHAR(24), \
                  s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), \
                  s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), \
                  s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data VARCHAR(50)",
        primary_key: Some("s_w_id, s_i_id"),
    },
];

const TPCC_INDEXES: &[Index] = &[
    Index { name: "tpcc_customer_last", table: "tpcc_customer", columns: "c_w_id, c_d_id, c_last, c_first" },
    Index { name: "tpcc_orders_customer", table: "tpcc_orders", columns: "o_w_id, o_d_id, o_c_id, o_id" },
];

const TPCB_TABLES: &[Table] = &[
    Table {
        name: "pgbench_branches",
        columns: "bid INTEGER NOT NULL, bbalance INTEGER, filler CHAR(88)",
        primary_key: Some("bid"),
    },
    Table {
        name: "pgbench_tellers",
        columns: "tid INTEGER NOT NULL, bid INTEGER, tbalance INTEGER, filler CHAR(84)",
        primary_key: Some("tid"),
    },
    Table {
        name: "pgbench_accounts",
        columns: "aid INTEGER NOT NULL, bid INTEGER, abalance INTEGER, filler CHAR(84)",
        primary_key: Some("aid"),
    },
    Table {
        name: "pgbench_history",
        columns: "tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime {type:timestamp}, filler CHAR(22)",
        primary_key: None,
    },
];

impl Profile {
    /// The profile's tables, in load order.
    pub fn tables(self) -> &'static [Table] {
        match self {
            Profile::Tpcc => TPCC_TABLES,
            Profile::Tpcb => TPCB_TABLES,
        }
    }

    fn indexes(self) -> &'static [Index] {
        match self {
            Profile::Tpcc => TPCC_INDEXES,
            Profile::Tpcb => &[],
        }
    }

    /// The table whose one signed row says envbench made this profile's tables, and at which scale.
    pub fn marker_table(self) -> &'static str {
        self.marker().table
    }

    /// The profile's marker ([`envbench_sql::marker`]): its payload is the load it describes, empty while one is
    /// under way.
    pub fn marker(self) -> Marker {
        const PAYLOAD: &str =
            "scale INTEGER, schema_version INTEGER, load_seconds DOUBLE PRECISION, loaded_at {type:timestamp}";
        match self {
            Profile::Tpcc => Marker { table: "envbench_oltp_tpcc", maker: "oltp tpcc", payload: PAYLOAD },
            Profile::Tpcb => Marker { table: "envbench_oltp_tpcb", maker: "oltp tpcb", payload: PAYLOAD },
        }
    }

    /// Every name envbench gives a relation of this profile: the marker, the tables, and the indexes (the primary
    /// keys' too, which PostgreSQL and envbench's SQLite keys name `<table>_pkey`), with the kind each must be.
    pub fn relation_names(self) -> Vec<(String, RelationKind)> {
        let mut names = vec![(self.marker_table().to_string(), RelationKind::Table)];
        for table in self.tables() {
            names.push((table.name.to_string(), RelationKind::Table));
            if table.primary_key.is_some() {
                names.push((format!("{}_pkey", table.name), RelationKind::Other("index".into())));
            }
        }
        names.extend(self.indexes().iter().map(|i| (i.name.to_string(), RelationKind::Other("index".into()))));
        // PostgreSQL's partitions of a partitioned order_line are tables, each with its key's index.
        if self == Profile::Tpcc {
            for index in 0..MAX_PARTITIONS {
                names.push((partition_name(index), RelationKind::Table));
                names.push((format!("{}_pkey", partition_name(index)), RelationKind::Other("index".into())));
            }
        }
        names
    }
}

/// The `CREATE TABLE` of a table in `namespace`, as its server makes a table for a load
/// ([`envbench_sql::Server::create_table`]: the key with the table where rows are clustered on it).
pub fn create_table(table: &Table, namespace: &Namespace) -> String {
    let server = namespace.dialect().server();
    server.create_table(&namespace.qualify(table.name), &namespace.adapt(table.columns), table.primary_key)
}

/// The statements that create [`PARTITIONED_TABLE`] in `namespace` split by warehouse into `shape.partitions` range
/// partitions: on PostgreSQL a partitioned table and a table for each partition (its key is added after the load, to
/// all of them at once); on MariaDB/MySQL one table with its partitions declared (every unique key of a partitioned
/// InnoDB table holds the partition column, as the order line's key does). SQLite has no partitions.
pub fn create_partitioned(table: &Table, namespace: &Namespace, shape: Shape) -> Result<Vec<String>, OltpError> {
    let dialect = namespace.dialect();
    let partitions: Vec<RangePartition> = (0..shape.partitions)
        .map(|index| {
            let (from, to) = shape.bounds(index);
            // A partition that is a table of its own is named as one; one declared inside its table, within it.
            let name = match dialect.ops().partitions_are_tables {
                true => namespace.qualify(&partition_name(index)),
                false => format!("p{}", index + 1),
            };
            RangePartition { name, from, to }
        })
        .collect();
    let key = table.primary_key.unwrap_or_default();
    let made = dialect.server().create_partitioned(
        &namespace.qualify(table.name),
        &namespace.adapt(table.columns),
        key,
        PARTITION_COLUMN,
        &partitions,
    );
    made.filter(|_| table.primary_key.is_some()).ok_or_else(|| {
        OltpError::BadInput(format!(
            "{} cannot be partitioned on {}: --partition needs PostgreSQL or MariaDB/MySQL",
            table.name,
            dialect.ops().server_name
        ))
    })
}

/// The statements that add the keys and indexes after the load (a key its server made with the table is not added
/// again). An index's own name takes no qualifier: it lives with its table.
pub fn keys_and_indexes(profile: Profile, namespace: &Namespace) -> Vec<String> {
    let dialect = namespace.dialect();
    let mut statements = Vec::new();
    for table in profile.tables() {
        if let Some(key) = table.primary_key {
            let key_name = envbench_sql::quote_identifier(dialect, &format!("{}_pkey", table.name));
            statements.extend(dialect.server().add_key(&namespace.qualify(table.name), &key_name, key));
        }
    }
    for index in profile.indexes() {
        statements.push(format!(
            "CREATE INDEX {} ON {} ({})",
            envbench_sql::quote_identifier(dialect, index.name),
            namespace.qualify(index.table),
            index.columns
        ));
    }
    statements
}

/// The statements that gather the planner's statistics after the load.
pub fn gather_statistics(profile: Profile, namespace: &Namespace) -> Vec<String> {
    let tables: Vec<String> = profile.tables().iter().map(|t| namespace.qualify(t.name)).collect();
    namespace.dialect().server().gather_statistics(&tables)
}

/// What a database holds of a profile's tables.
#[derive(Clone, Debug, PartialEq)]
pub enum Existing {
    /// None of its tables.
    Nothing,
    /// Relations of its names that envbench did not make (no marker, or of another kind than envbench makes), each
    /// described with its kind: never touched.
    Foreign(Vec<String>),
    /// A load envbench began and did not finish (or a rebuild under way): rebuilt by the next run.
    Unfinished,
    /// A complete load.
    Complete { shape: Shape, schema_version: i64 },
}

impl Existing {
    /// What was found, for messages.
    pub fn describe(&self) -> String {
        match self {
            Existing::Nothing => "none of its tables".into(),
            Existing::Foreign(relations) => format!("relations envbench did not make: {}", relations.join(", ")),
            Existing::Unfinished => "an unfinished load".into(),
            Existing::Complete { shape: Shape { scale, partitions: 0 }, schema_version } => {
                format!("a complete load of scale {scale}, schema version {schema_version}")
            }
            Existing::Complete { shape: Shape { scale, partitions }, schema_version } => format!(
                "a complete load of scale {scale} with order lines in {partitions} partition{}, schema version \
                 {schema_version}",
                plural(*partitions)
            ),
        }
    }

    /// True for a complete load of `shape` (its scale and partitions) that this version of envbench can use as it is.
    pub fn is_reusable(&self, shape: Shape) -> bool {
        matches!(self, Existing::Complete { shape: s, schema_version } if *s == shape && *schema_version == SCHEMA_VERSION)
    }
}

/// What `namespace` holds of `profile`'s relations. Every relation of envbench's names counts, whatever its kind:
/// without the marker any of them is foreign; with it, one of another kind than envbench makes (a view named like a
/// table) is foreign too.
pub fn existing(
    connection: &mut dyn Connection,
    namespace: &Namespace,
    profile: Profile,
) -> Result<Existing, OltpError> {
    let found = Found::look(connection, namespace, profile)?;
    let mut foreign = found.foreign();
    // Procedures mode's routines go with the TPC-C tables: one of their names that envbench did not make is as
    // foreign as a table would be.
    if profile == Profile::Tpcc
        && let crate::routines::RoutinesState::Foreign(routines) = crate::routines::state(connection, namespace)?
    {
        foreign.extend(routines);
    }
    if !foreign.is_empty() {
        return Ok(Existing::Foreign(foreign));
    }
    if !found.marked {
        return Ok(Existing::Nothing);
    }
    let tables = profile.tables().iter().filter(|t| found.has_table(t.name)).count();
    let row = connection.query_optional(
        &format!(
            "SELECT scale, schema_version FROM {} WHERE scale IS NOT NULL AND schema_version IS NOT NULL",
            namespace.qualify(profile.marker_table())
        ),
        &[],
    )?;
    Ok(match row {
        Some(row) if tables == profile.tables().len() => Existing::Complete {
            shape: Shape { scale: row.int(0)?, partitions: found.partitions.len() as u32 },
            schema_version: row.int(1)?,
        },
        _ => Existing::Unfinished,
    })
}

/// What a namespace holds of envbench's names, and which of them are envbench's.
struct Found {
    expected: Vec<(String, RelationKind)>,
    relations: Vec<Relation>,
    /// The signed marker is there: envbench made the tables of its names.
    marked: bool,
    /// The marker's name, and why a relation of that name proves nothing (everything beside it is then foreign).
    marker: &'static str,
    unsigned: Option<String>,
    /// The partitions of envbench's order_line ([`order_line_partitions`]).
    partitions: Vec<String>,
}

impl Found {
    fn look(connection: &mut dyn Connection, namespace: &Namespace, profile: Profile) -> Result<Found, OltpError> {
        let expected = profile.relation_names();
        let names: Vec<&str> = expected.iter().map(|(name, _)| name.as_str()).collect();
        let relations = namespace.relations(connection, &names)?;
        let (marked, unsigned) = match profile.marker().state(connection, namespace, &relations)? {
            MarkerState::Ours { .. } => (true, None),
            MarkerState::Absent => (false, None),
            MarkerState::Foreign(why) => (false, Some(why)),
        };
        let partitions =
            if marked && profile == Profile::Tpcc { order_line_partitions(connection, namespace)? } else { Vec::new() };
        Ok(Found { expected, relations, marked, marker: profile.marker_table(), unsigned, partitions })
    }

    /// The relations envbench did not make, described for a refusal: the marker's own with why it proves nothing.
    fn foreign(&self) -> Vec<String> {
        self.relations
            .iter()
            .filter(|r| !self.is_ours(r))
            .map(|r| match &self.unsigned {
                Some(why) if r.name.eq_ignore_ascii_case(self.marker) => why.clone(),
                _ => r.describe(),
            })
            .collect()
    }

    /// With the marker, a relation of one of envbench's names and of the kind envbench makes is envbench's; a
    /// partition's name (and its key's index) only when that table is a partition of envbench's order_line.
    fn is_ours(&self, relation: &Relation) -> bool {
        let named = self.expected.iter().any(|(n, k)| n.eq_ignore_ascii_case(&relation.name) && *k == relation.kind);
        let prefix = format!("{PARTITIONED_TABLE}_p");
        let is_partition_name = relation.name.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(&prefix))
            && relation.name[prefix.len()..].starts_with(|c: char| c.is_ascii_digit());
        let table = relation.name.strip_suffix("_pkey").unwrap_or(&relation.name);
        self.marked && named && (!is_partition_name || self.partitions.iter().any(|p| p.eq_ignore_ascii_case(table)))
    }

    fn has_table(&self, name: &str) -> bool {
        self.relations.iter().any(|r| r.name.eq_ignore_ascii_case(name) && r.kind == RelationKind::Table)
    }
}

/// The partitions of envbench's `tpcc_order_line` in `namespace`: on PostgreSQL the tables attached to it as
/// partitions, on MariaDB/MySQL the partitions declared inside it; none when it is one plain table, is missing, or
/// on SQLite.
pub fn order_line_partitions(connection: &mut dyn Connection, namespace: &Namespace) -> Result<Vec<String>, OltpError> {
    let Some(sql) = namespace.dialect().server().partitions() else {
        return Ok(Vec::new());
    };
    let rows =
        connection.query(sql, &[Value::Text(namespace.name().to_string()), Value::Text(PARTITIONED_TABLE.into())])?;
    Ok(rows.iter().map(|row| row.text(0)).collect::<Result<_, _>>()?)
}

/// The marker's payload columns, emptied while a load is under way.
const MARKER_PAYLOAD: [&str; 4] = ["scale", "schema_version", "load_seconds", "loaded_at"];

/// Make room for a new load: the marker first says "unfinished" (so an interrupt from here on leaves a database the
/// next run rebuilds), then envbench's own tables are dropped and created empty. Checks [`existing`] itself first, so
/// nothing is created or dropped where a relation of envbench's names is not envbench's.
pub fn recreate(
    connection: &mut dyn Connection,
    url: &DatabaseUrl,
    namespace: &Namespace,
    profile: Profile,
    shape: Shape,
) -> Result<(), OltpError> {
    let found = existing(connection, namespace, profile)?;
    if let Existing::Foreign(relations) = &found {
        return Err(OltpError::foreign(&crate::error::place(url, namespace), profile, relations));
    }
    let marker = profile.marker();
    if found == Existing::Nothing {
        marker.create(connection, namespace)?;
    } else {
        marker.clear_payload(connection, namespace, &MARKER_PAYLOAD)?;
    }
    // Dropping a partitioned order_line drops its partitions with it.
    for table in profile.tables() {
        connection.batch(&format!("DROP TABLE IF EXISTS {}", namespace.qualify(table.name)))?;
        if table.name == PARTITIONED_TABLE && shape.partitions > 0 {
            for statement in create_partitioned(table, namespace, shape)? {
                connection.batch(&statement)?;
            }
        } else {
            connection.batch(&create_table(table, namespace))?;
        }
    }
    Ok(())
}

/// Record a complete load in the marker.
pub fn mark_complete(
    connection: &mut dyn Connection,
    namespace: &Namespace,
    profile: Profile,
    scale: i64,
    load_seconds: f64,
) -> Result<(), OltpError> {
    profile.marker().set_payload(
        connection,
        namespace,
        "scale = ?, schema_version = ?, load_seconds = ?, loaded_at = CURRENT_TIMESTAMP",
        &[Value::Int(scale), Value::Int(SCHEMA_VERSION), Value::Real(load_seconds)],
    )?;
    Ok(())
}

/// What `envbench oltp --drop` removed, and what of envbench's names it left because envbench did not make it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dropped {
    pub dropped: Vec<String>,
    pub left: Vec<String>,
}

/// Remove everything envbench made for `profile` in `namespace`: its tables (their keys and indexes with them) and
/// marker when the marker says envbench made them, and the routines whose comment says so. Nothing else: a relation
/// of one of envbench's names without the marker, or of another kind than envbench makes, and a routine without
/// envbench's comment, are left and named. The caller holds the tables' lock alone.
pub fn drop_profile(
    connection: &mut dyn Connection,
    namespace: &Namespace,
    profile: Profile,
) -> Result<Dropped, OltpError> {
    let mut outcome = Dropped::default();
    let found = Found::look(connection, namespace, profile)?;
    let marker = profile.marker_table();
    // An index goes with its table.
    outcome.left.extend(found.foreign());
    if found.marked {
        // The tables first, the marker last: an interrupted drop leaves a load the next run rebuilds. A partitioned
        // order_line's partition tables (PostgreSQL) go with it.
        for table in profile.tables() {
            if found.has_table(table.name) {
                connection.batch(&format!("DROP TABLE {}", namespace.qualify(table.name)))?;
                outcome.dropped.push(table.name.to_string());
                if table.name == PARTITIONED_TABLE && namespace.dialect().ops().partitions_are_tables {
                    outcome.dropped.extend(found.partitions.iter().cloned());
                }
            }
        }
        connection.batch(&format!("DROP TABLE {}", namespace.qualify(marker)))?;
        outcome.dropped.push(marker.to_string());
    }
    if profile == Profile::Tpcc {
        outcome.dropped.extend(crate::routines::drop_envbench_routines(connection, namespace)?);
        for routine in crate::routines::found(connection, namespace)? {
            outcome.left.push(routine.describe());
        }
    }
    Ok(outcome)
}

/// Settle the database before a step, as HammerDB does before its timed run, so each step starts from the same
/// kind of state and not from the debris of the one before ([`envbench_sql::Server::settle`]: PostgreSQL vacuums and
/// analyzes envbench's tables, then checkpoints where this user may; MariaDB/MySQL writes envbench's tables' dirty
/// pages out; SQLite checkpoints its WAL). Returns a note when a part was not allowed.
pub fn settle(
    connection: &mut dyn Connection,
    namespace: &Namespace,
    profile: Profile,
) -> Result<Option<String>, OltpError> {
    let tables: Vec<String> = profile.tables().iter().map(|t| namespace.qualify(t.name)).collect();
    Ok(namespace.dialect().server().settle(connection, &tables)?)
}
