//! The PostgreSQL backend: a shared store for a team, with the same tables, append-only rules and schema versions as
//! the SQLite file.
//!
//! The store lives in the connection's current schema (the first existing schema of `search_path`, `public` by
//! default), so one database can hold several stores: `?options=-c%20search_path%3Dmyschema` in the URL picks one.
//! The table `envbench_store` marks the schema as an envbench store and holds its schema version. Migrations run in
//! one transaction under an advisory lock per schema, so envbench processes starting together migrate once.

use crate::error::StoreError;
use crate::liveness::{self, Liveness, RunLock};
use crate::schema::{APPLICATION_ID, Dialect, Rules, TABLES, known_version};
use crate::sql::{Sql, SqlValue, params};
use crate::store::{Backend, SqlStore};
use envbench_sql::{Connection, DatabaseUrl, ErrorKind};
use std::cell::RefCell;

/// The name envbench writes into `envbench_store.application`.
const APPLICATION: &str = "envbench";

/// The connection to a PostgreSQL store.
pub struct PostgresBackend {
    /// Reads need a mutable connection too; the store is used from one thread at a time (like the SQLite one).
    connection: RefCell<Box<dyn Connection>>,
    /// The URL connected to (with its password): runs' locks are held on sessions of their own.
    url: DatabaseUrl,
    /// The URL without its password, as the connection names the store in its messages.
    shown: String,
}

/// A results store in a PostgreSQL schema.
pub type PostgresStore = SqlStore<PostgresBackend>;

impl SqlStore<PostgresBackend> {
    /// Connect to `url` (`postgres://user@host:5432/database`) and, when `create`, create the store in the current
    /// schema or bring its schema up to date. Refuses a schema holding tables envbench did not create, and a store
    /// written by a newer envbench.
    pub fn open(url: &DatabaseUrl, create: bool) -> Result<PostgresStore, StoreError> {
        let location = url.shown();
        let shown = location.clone();
        let connection = url.connect("envbench").map_err(|e| match e.kind {
            ErrorKind::Unreachable => {
                StoreError::Unreachable { location: location.clone(), reason: e.detail(&shown).into() }
            }
            // The server answered and said no (unknown database, wrong password): not a network outage.
            _ => StoreError::Refused { location: location.clone(), reason: e.detail(&shown).into() },
        })?;
        let backend = PostgresBackend { connection: RefCell::new(connection), url: url.clone(), shown };
        SqlStore::prepare(backend, location, create)
    }
}

impl Backend for PostgresBackend {
    const RULES: &'static dyn Rules = &PostgresRules;

    fn connection<'a>(&'a self, location: &'a str) -> Sql<'a> {
        Sql::new(self.connection.borrow_mut(), location, &self.shown)
    }

    fn schema_version(sql: &mut Sql<'_>, location: &str) -> Result<i64, StoreError> {
        let schema = sql.query_one("SELECT current_schema()::text", &[])?.optional_text(0)?.ok_or_else(|| {
            StoreError::CannotCreate {
                location: location.to_string(),
                reason: "no schema of search_path exists".into(),
            }
        })?;
        let names: Vec<String> = TABLES.iter().map(|t| format!("'{t}'")).collect();
        let present: Vec<String> = sql
            .query(
                &format!(
                    "SELECT table_name::text FROM information_schema.tables WHERE table_schema = ? \
                     AND table_name IN ({}) ORDER BY table_name",
                    names.join(", ")
                ),
                params![schema.as_str()],
            )?
            .iter()
            .map(|row| row.text(0))
            .collect::<Result<_, _>>()?;
        if present.is_empty() {
            return Ok(0);
        }
        let foreign = || StoreError::ForeignTables {
            location: location.to_string(),
            schema: schema.clone(),
            tables: present.join(", "),
        };
        if !present.iter().any(|t| t == "envbench_store") {
            return Err(foreign());
        }
        let marker = sql.query("SELECT application, version FROM envbench_store", &[]).map_err(|_| foreign())?;
        let [row] = marker.as_slice() else { return Err(foreign()) };
        let (application, version) = (row.text(0).map_err(|_| foreign())?, row.int(1).map_err(|_| foreign())?);
        if application != APPLICATION {
            return Err(foreign());
        }
        known_version(location, version)
    }

    fn lock_schema(sql: &mut Sql<'_>) -> Result<(), StoreError> {
        // Concurrent creators wait here for each other (the lock ends with the transaction); the key is per schema.
        sql.execute(
            &format!("SELECT pg_advisory_xact_lock({}, hashtext(current_schema()::text))", APPLICATION_ID as i32),
            &[],
        )?;
        Ok(())
    }

    fn set_schema_version(sql: &mut Sql<'_>, version: i64) -> Result<(), StoreError> {
        if sql.execute("UPDATE envbench_store SET version = ?", params![version])? == 0 {
            sql.execute(
                "INSERT INTO envbench_store (application, version) VALUES (?, ?)",
                params![APPLICATION, version],
            )?;
        }
        Ok(())
    }

    fn reserve_ids(sql: &mut Sql<'_>, table: &str, count: usize) -> Result<Vec<i64>, StoreError> {
        // The serial column's sequence: taken ids are never handed out again, whoever else inserts meanwhile.
        sql.query(
            &format!("SELECT nextval(pg_get_serial_sequence('{table}', 'id')) FROM generate_series(1, ?)"),
            params![count as i64],
        )?
        .iter()
        .map(|row| Ok(row.int(0)?))
        .collect()
    }

    fn analyze(sql: &mut Sql<'_>) -> Result<(), StoreError> {
        // The store's own tables only (in its schema, by the search_path), not the whole database's.
        let tables = TABLES.join(", ");
        sql.batch(&format!("ANALYZE {tables}"))?;
        Ok(())
    }

    fn has_index(sql: &mut Sql<'_>, name: &str) -> Result<bool, StoreError> {
        // In the schema the store works in (its search_path), as its tables are.
        let query = "SELECT count(*) FROM pg_class c WHERE c.relkind = 'i' AND c.relname = ? \
                     AND c.relnamespace = current_schema()::regnamespace";
        Ok(sql.query_one(query, &[SqlValue::from(name)])?.int(0)? > 0)
    }

    fn lock_runs(sql: &mut Sql<'_>, uuids: &[&str]) -> Result<(), StoreError> {
        // Two pushes of the same run racing: the second waits here for the first to commit, then sees the run. A
        // statement takes the locks of 500 runs, in the order given (sorted by the caller).
        let keys: Vec<SqlValue> = uuids.iter().map(|&uuid| SqlValue::from(uuid)).collect();
        sql.query_in(
            &format!(
                "SELECT pg_advisory_xact_lock({}, hashtext(t.uuid)) FROM unnest(ARRAY[{{keys}}]::text[]) AS t(uuid) \
                 ORDER BY t.uuid",
                APPLICATION_ID as i32
            ),
            &keys,
        )?;
        Ok(())
    }

    fn hold_run(&self, uuid: &str, _command: &str) -> Option<RunLock> {
        liveness::take_server(&self.url, &self.schema()?, uuid)
    }

    fn run_liveness(&self, uuid: &str) -> Liveness {
        match self.schema() {
            Some(schema) => liveness::probe_server(&self.url, &schema, uuid),
            None => Liveness::Unknown,
        }
    }
}

impl PostgresBackend {
    /// The schema the store is in: a run's lock is keyed by it, so stores in two schemas never share one.
    fn schema(&self) -> Option<String> {
        let mut sql = self.connection("");
        sql.query_one("SELECT current_schema()::text", &[]).ok()?.optional_text(0).ok()?
    }
}

/// PostgreSQL keeps the store's identity and version in a table (SQLite uses `application_id` and `user_version`).
/// With the append-only trigger function, it comes before migration 1's tables.
const POSTGRES_PREAMBLE: &str = r#"
    CREATE TABLE envbench_store (
        application TEXT NOT NULL,
        version BIGINT NOT NULL
    );
    COMMENT ON TABLE envbench_store IS 'Marks this schema as an envbench results store; holds its schema version.';
    CREATE FUNCTION envbench_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'envbench % are append-only', TG_ARGV[0];
    END
    $$;
"#;

/// PostgreSQL's triggers for the store's append-only rules.
pub(crate) struct PostgresRules;

impl Rules for PostgresRules {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn preamble(&self) -> &'static str {
        POSTGRES_PREAMBLE
    }

    fn append_only(&self, table: &str, what: &str) -> String {
        format!(
            "CREATE TRIGGER {what}_no_change BEFORE UPDATE OR DELETE ON {table}\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_append_only('{what}');\n    \
                 CREATE TRIGGER {what}_no_truncate BEFORE TRUNCATE ON {table}\n        \
                 FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('{what}');\n"
        )
    }

    fn only_while_running(&self, table: &str, what: &str, run_status: &str) -> String {
        format!(
            "CREATE FUNCTION envbench_{what}_only_while_running() RETURNS trigger LANGUAGE plpgsql AS $$\n    \
                 BEGIN\n        \
                 IF ({run_status}) IS DISTINCT FROM 'running' THEN\n            \
                 RAISE EXCEPTION 'envbench {what} are append-only: a run that has ended takes no more';\n        \
                 END IF;\n        \
                 RETURN NEW;\n    \
                 END\n    $$;\n    \
                 CREATE TRIGGER {what}_only_while_running BEFORE INSERT ON {table}\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_{what}_only_while_running();\n"
        )
    }

    fn revoke_once(&self, refused: &str, message: &str) -> String {
        format!(
            "CREATE FUNCTION envbench_upload_tokens_revoke_once() RETURNS trigger LANGUAGE plpgsql AS $$\n    \
                 BEGIN\n        IF {refused} THEN\n            RAISE EXCEPTION '{message}';\n        END IF;\n        \
                 RETURN NEW;\n    END\n    $$;\n    \
                 CREATE TRIGGER upload_tokens_revoke_once BEFORE UPDATE ON upload_tokens\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_upload_tokens_revoke_once();\n    \
                 CREATE TRIGGER upload_tokens_no_delete BEFORE DELETE ON upload_tokens\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_append_only('upload tokens');\n    \
                 CREATE TRIGGER upload_tokens_no_truncate BEFORE TRUNCATE ON upload_tokens\n        \
                 FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('upload tokens');\n"
        )
    }

    fn runs_end_once(&self, condition: &str, message: &str, replace: bool) -> String {
        format!(
            "CREATE OR REPLACE FUNCTION envbench_runs_end_once() RETURNS trigger LANGUAGE plpgsql AS $$\n    \
                 BEGIN\n        \
                 IF {condition} THEN\n            RAISE EXCEPTION '{message}';\n        END IF;\n        \
                 RETURN NEW;\n    END\n    $$;\n    {}",
            if replace {
                String::new()
            } else {
                "CREATE TRIGGER runs_end_once BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION \
                     envbench_runs_end_once();\n"
                    .to_string()
            }
        )
    }

    fn runs_no_delete(&self) -> &'static str {
        "CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs FOR EACH ROW EXECUTE FUNCTION \
                              envbench_append_only('runs');\n    \
                              CREATE TRIGGER runs_no_truncate BEFORE TRUNCATE ON runs\n        \
                              FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('runs');\n"
    }
}
