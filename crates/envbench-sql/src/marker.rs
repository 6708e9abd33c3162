//! Markers: the one table beside a workload's relations that proves envbench made them, so that it may replace or
//! drop them, and nothing that merely bears their names.
//!
//! A name and columns prove nothing: a user's table of the marker's name and columns (from a copied DDL script, or a
//! schema-only dump of a database envbench once loaded) would hand every same-named relation beside it to envbench.
//! So a marker carries what no table carries by chance: one row with a per-load token and its signature (the SHA-256
//! of the marker's name and the token under a fixed domain), and on a server with table comments a comment naming
//! the same token. A schema-only copy carries the comment but no row; a table made by hand carries neither. A
//! marker without them makes everything beside it foreign: refused by name, never replaced or dropped.
//!
//! The marker is made whole in one step (one transaction where DDL is transactional, one `CREATE TABLE ... SELECT`
//! on MariaDB/MySQL), so an interrupted run never leaves a marker without its row. Its payload columns (what the load
//! is: scale, version, ...) are the workload's own and nullable: a load under way holds none.

use crate::{Connection, DbError, Namespace, Relation, RelationKind, TableComment, Value};

/// The marker row's token column.
pub const TOKEN_COLUMN: &str = "envbench_token";
/// The marker row's signature column.
pub const SIGNATURE_COLUMN: &str = "envbench_signature";
/// What signatures are made under: bumping it makes every older marker foreign.
const DOMAIN: &str = "envbench marker v1";

/// A workload's marker table.
#[derive(Clone, Copy, Debug)]
pub struct Marker {
    /// The table's name (unqualified).
    pub table: &'static str,
    /// What made it, in the comment: `oltp tpcc`, `htap ch`, `tpch`.
    pub maker: &'static str,
    /// The payload's column definitions, in PostgreSQL's words with `{type:...}` as [`Namespace::adapt`] fills them,
    /// each nullable.
    pub payload: &'static str,
}

/// What a namespace holds under a marker's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerState {
    /// No relation of its name.
    Absent,
    /// A relation of its name that is not a signed marker of envbench's: the reason, for a refusal.
    Foreign(String),
    /// envbench's marker, with the token of its load.
    Ours { token: String },
}

impl Marker {
    /// The signature of `token` for this marker.
    pub fn signature(&self, token: &str) -> String {
        envbench_core::canonical::sha256_hex(format!("{DOMAIN}\0{}\0{token}", self.table).as_bytes())
    }

    /// The comment a server marker carries.
    pub fn comment(&self, token: &str) -> String {
        format!("created by envbench {}; token {token}", self.maker)
    }

    /// What `namespace` holds under the marker's name, given the `relations` of its names read from the catalog (the
    /// marker's among them, when there is one). Only a table of the marker's name with the token and signature
    /// columns is read, so nothing is sent that could fail in the server's log.
    pub fn state(
        &self,
        connection: &mut dyn Connection,
        namespace: &Namespace,
        relations: &[Relation],
    ) -> Result<MarkerState, DbError> {
        let Some(found) = relations.iter().find(|r| r.name.eq_ignore_ascii_case(self.table)) else {
            return Ok(MarkerState::Absent);
        };
        let foreign = |why: &str| Ok(MarkerState::Foreign(format!("{} ({why})", found.describe())));
        if found.kind != RelationKind::Table {
            return foreign("not a table");
        }
        let columns = namespace.columns(connection, &found.name)?;
        if !columns.iter().any(|c| c == TOKEN_COLUMN) || !columns.iter().any(|c| c == SIGNATURE_COLUMN) {
            return foreign("no signature of envbench's");
        }
        let rows = connection.query(
            &format!("SELECT {TOKEN_COLUMN}, {SIGNATURE_COLUMN} FROM {}", namespace.qualify(&found.name)),
            &[],
        )?;
        let [row] = rows.as_slice() else {
            return foreign("no signature of envbench's");
        };
        let (token, signature) = (row.optional_text(0)?.unwrap_or_default(), row.optional_text(1)?.unwrap_or_default());
        if token.is_empty() || signature != self.signature(&token) {
            return foreign("no signature of envbench's");
        }
        let commented = namespace.dialect().ops().table_comment != TableComment::None;
        if commented && found.comment.as_deref() != Some(&self.comment(&token)) {
            return foreign("its comment is not the one envbench gave it");
        }
        Ok(MarkerState::Ours { token })
    }

    /// Create the marker whole in `namespace`, with a new token and its signature and an empty payload; the token.
    /// Only where [`Marker::state`] found it absent.
    pub fn create(&self, connection: &mut dyn Connection, namespace: &Namespace) -> Result<String, DbError> {
        let token = new_token()?;
        let table = namespace.qualify(self.table);
        let columns = namespace.adapt(&format!(
            "{}, {TOKEN_COLUMN} VARCHAR(64) NOT NULL, {SIGNATURE_COLUMN} VARCHAR(64) NOT NULL",
            self.payload
        ));
        let dialect = namespace.dialect();
        let ops = dialect.ops();
        let literal = |text: &str| crate::quote_literal(dialect, text);
        let (token_value, signature_value) = (literal(&token), literal(&self.signature(&token)));
        let comment = literal(&self.comment(&token));
        if ops.transactional_ddl {
            let mut statements = vec![format!("CREATE TABLE {table} ({columns})")];
            if ops.table_comment == TableComment::Statement {
                statements.push(format!("COMMENT ON TABLE {table} IS {comment}"));
            }
            statements.push(format!(
                "INSERT INTO {table} ({TOKEN_COLUMN}, {SIGNATURE_COLUMN}) VALUES ({token_value}, {signature_value})"
            ));
            connection.begin()?;
            let made = statements.iter().try_for_each(|statement| connection.batch(statement));
            match made {
                Ok(()) => connection.commit()?,
                Err(error) => {
                    let _ = connection.rollback();
                    return Err(error);
                }
            }
        } else {
            // DDL commits at once here, and `CREATE TABLE ... SELECT` makes the table with its row or not at all.
            let option = match ops.table_comment {
                TableComment::TableOption => format!(" COMMENT={comment}"),
                TableComment::None => String::new(),
                // A comment of its own statement would follow a committed table: an interrupt between the two
                // would leave a marker that proves nothing, so such a server needs its own way here.
                TableComment::Statement => {
                    return Err(DbError::other(format!(
                        "{}: a marker's table and its comment cannot be made in one step here",
                        ops.server_name
                    )));
                }
            };
            connection.batch(&format!(
                "CREATE TABLE {table} ({columns}){option} SELECT {token_value} AS {TOKEN_COLUMN}, {signature_value} AS \
                 {SIGNATURE_COLUMN}"
            ))?;
        }
        Ok(token)
    }

    /// Set the marker's payload: `assignments` as an `UPDATE` writes them (`scale = ?, loaded_at = CURRENT_TIMESTAMP`),
    /// with `params` for their placeholders. The marker holds one row, so this is the load it describes.
    pub fn set_payload(
        &self,
        connection: &mut dyn Connection,
        namespace: &Namespace,
        assignments: &str,
        params: &[Value],
    ) -> Result<(), DbError> {
        connection.execute(&format!("UPDATE {} SET {assignments}", namespace.qualify(self.table)), params)?;
        Ok(())
    }

    /// Empty the payload's `columns`: the load the marker describes is under way again, so an interrupt from here on
    /// leaves one the next run rebuilds.
    pub fn clear_payload(
        &self,
        connection: &mut dyn Connection,
        namespace: &Namespace,
        columns: &[&str],
    ) -> Result<(), DbError> {
        let nulls: Vec<String> = columns.iter().map(|name| format!("{name} = NULL")).collect();
        self.set_payload(connection, namespace, &nulls.join(", "), &[])
    }
}

/// 16 bytes from the kernel's random source, in hex.
fn new_token() -> Result<String, DbError> {
    let mut bytes = [0u8; 16];
    envbench_core::random::fill(&mut bytes)
        .map_err(|e| DbError::other(format!("cannot draw a marker's token from the kernel's random source: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: Marker = Marker { table: "envbench_test_marker", maker: "test", payload: "scale INTEGER" };

    fn sqlite(name: &str) -> (Box<dyn Connection>, Namespace) {
        let path = std::env::temp_dir().join(format!("envbench-marker-{name}-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut connection = crate::DatabaseUrl::sqlite(&path).connect("marker test").unwrap();
        let namespace = Namespace::resolve(connection.as_mut(), None, false).unwrap();
        (connection, namespace)
    }

    fn state(connection: &mut dyn Connection, namespace: &Namespace) -> MarkerState {
        let relations = namespace.relations(connection, &[MARKER.table]).unwrap();
        MARKER.state(connection, namespace, &relations).unwrap()
    }

    /// A marker envbench made is its own; the same table made by hand (its name and columns, even a row of its
    /// shape) is not, nor one whose signature row is gone (a schema-only copy).
    #[test]
    fn only_a_signed_marker_is_envbench_s() {
        let (mut c, namespace) = sqlite("signed");
        assert_eq!(state(c.as_mut(), &namespace), MarkerState::Absent);
        let token = MARKER.create(c.as_mut(), &namespace).unwrap();
        assert_eq!(state(c.as_mut(), &namespace), MarkerState::Ours { token: token.clone() });
        MARKER.set_payload(c.as_mut(), &namespace, "scale = ?", &[Value::Int(3)]).unwrap();
        assert_eq!(
            c.query_optional("SELECT scale FROM envbench_test_marker", &[]).unwrap().unwrap().int(0).unwrap(),
            3
        );
        assert_eq!(state(c.as_mut(), &namespace), MarkerState::Ours { token: token.clone() });

        c.batch("DELETE FROM envbench_test_marker").unwrap();
        assert!(matches!(state(c.as_mut(), &namespace), MarkerState::Foreign(why) if why.contains("no signature")));
        c.batch(&format!("INSERT INTO envbench_test_marker VALUES (1, '{token}', 'forged')")).unwrap();
        assert!(matches!(state(c.as_mut(), &namespace), MarkerState::Foreign(_)));

        c.batch("DROP TABLE envbench_test_marker; CREATE TABLE envbench_test_marker (scale INTEGER)").unwrap();
        assert!(matches!(state(c.as_mut(), &namespace), MarkerState::Foreign(why) if why.contains("no signature")));
        c.batch("DROP TABLE envbench_test_marker; CREATE VIEW envbench_test_marker AS SELECT 1 AS scale").unwrap();
        assert!(matches!(state(c.as_mut(), &namespace), MarkerState::Foreign(why) if why.contains("not a table")));
    }

    #[test]
    fn tokens_are_new_and_signatures_bind_them_to_the_marker() {
        assert_ne!(new_token().unwrap(), new_token().unwrap());
        assert_eq!(new_token().unwrap().len(), 32);
        let other = Marker { table: "envbench_other", ..MARKER };
        assert_ne!(MARKER.signature("abc"), other.signature("abc"));
        assert_ne!(MARKER.signature("abc"), MARKER.signature("abd"));
        assert_eq!(MARKER.comment("abc"), "created by envbench test; token abc");
    }
}
