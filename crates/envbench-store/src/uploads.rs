//! What a results service keeps beside the runs: its submitters' upload tokens (as SHA-256 digests only, revoked
//! once and never deleted) and, per run received, who sent it, when, what the client stated about its provenance,
//! and the digest of its results, so that a copy of a run under another uuid is known for one.

use crate::error::StoreError;
use crate::sql::params;
use crate::store::{Backend, SqlStore, import_within};
use crate::{PostgresStore, ResultStore, SqliteStore, StoreLocation};
use envbench_core::model::{StoredRun, now_utc};
use std::collections::BTreeMap;

/// The tag `envbench run` marks each run of a suite with (its suite id).
pub const SUITE_TAG: &str = "suite";

/// An upload token as the service lists it: never the token itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct UploadToken {
    /// The submitter's name, recorded with every run uploaded with the token.
    pub name: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
    /// Runs received with it.
    pub runs: u64,
}

/// What the service knows of a token presented with an upload.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenCheck {
    /// A live token: its id and submitter name.
    Live {
        id: i64,
        name: String,
    },
    Revoked {
        name: String,
        revoked_at: String,
    },
    Unknown,
}

/// Who sent a run to the service, when, and what the client stated about it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Upload {
    pub submitter: String,
    pub received_at: String,
    pub provenance: serde_json::Value,
}

/// A run as received: the token it came with, the digest of its results, and the provenance the client stated.
pub struct Received<'a> {
    pub token_id: i64,
    pub content_sha256: &'a str,
    pub provenance: &'a serde_json::Value,
    /// When it was received, in seconds since the Unix epoch (for the per-token hourly limit).
    pub received_s: f64,
}

/// How an uploaded run was taken in.
#[derive(Clone, Debug, PartialEq)]
pub enum UploadOutcome {
    Imported,
    /// A run with this uuid is already here.
    AlreadyPresent,
    /// The same results are here already under another run's uuid.
    CopyOf(String),
    /// The run names a suite (its suite id or `suite` tag) that holds runs not sent with this token: those of the
    /// submitter named, or of the service's own store (none). A suite is one submitter's.
    SuiteOfAnother {
        suite: String,
        submitter: Option<String>,
    },
}

/// A store that takes uploads: the results service's.
pub trait UploadStore: ResultStore {
    /// Keep a new token's digest under a submitter name; a name already given is refused.
    fn create_token(&mut self, name: &str, token_sha256: &str) -> Result<(), StoreError>;
    /// Every token, oldest first.
    fn upload_tokens(&self) -> Result<Vec<UploadToken>, StoreError>;
    /// Revoke the live token of a submitter; false when there is none.
    fn revoke_token(&mut self, name: &str) -> Result<bool, StoreError>;
    /// The token with this digest.
    fn check_token(&self, token_sha256: &str) -> Result<TokenCheck, StoreError>;
    /// Take in an uploaded run with where it came from, in one transaction.
    fn import_upload(&mut self, run: &StoredRun, received: &Received<'_>) -> Result<UploadOutcome, StoreError>;
    /// The runs a token sent since `since_s` (seconds since the Unix epoch).
    fn uploads_since(&self, token_id: i64, since_s: f64) -> Result<u64, StoreError>;
    /// Who sent each uploaded run, by run uuid.
    fn uploads(&self) -> Result<BTreeMap<String, Upload>, StoreError>;
}

/// Open a store that takes uploads (creating it when `create`).
pub fn open_upload_store(location: &StoreLocation, create: bool) -> Result<Box<dyn UploadStore>, StoreError> {
    match location {
        StoreLocation::Sqlite(path) => Ok(Box::new(SqliteStore::open(path, create)?)),
        StoreLocation::Postgres(url) => Ok(Box::new(PostgresStore::open(url, create)?)),
    }
}

impl<B: Backend> UploadStore for SqlStore<B> {
    fn create_token(&mut self, name: &str, token_sha256: &str) -> Result<(), StoreError> {
        let location = self.location().to_string();
        self.write(|sql| {
            if sql.query_optional("SELECT 1 FROM upload_tokens WHERE name = ?", params![name])?.is_some() {
                return Err(StoreError::Database {
                    location,
                    message: format!(
                        "a token named '{name}' was made before (names are kept, revoked or not, so every upload \
                         keeps its submitter); choose another name"
                    ),
                });
            }
            sql.execute(
                "INSERT INTO upload_tokens (name, token_sha256, created_at) VALUES (?, ?, ?)",
                params![name, token_sha256, now_utc().as_str()],
            )?;
            Ok(())
        })
    }

    fn upload_tokens(&self) -> Result<Vec<UploadToken>, StoreError> {
        let rows = self.read(|sql| {
            sql.query(
                "SELECT t.name, t.created_at, t.revoked_at, COUNT(u.id) FROM upload_tokens t \
                 LEFT JOIN uploads u ON u.token_id = t.id GROUP BY t.id, t.name, t.created_at, t.revoked_at \
                 ORDER BY t.id",
                &[],
            )
        })?;
        rows.iter()
            .map(|row| {
                Ok(UploadToken {
                    name: row.text(0)?,
                    created_at: row.text(1)?,
                    revoked_at: row.optional_text(2)?,
                    runs: u64::try_from(row.int(3)?).unwrap_or(0),
                })
            })
            .collect()
    }

    fn revoke_token(&mut self, name: &str) -> Result<bool, StoreError> {
        self.write(|sql| {
            Ok(sql.execute(
                "UPDATE upload_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                params![now_utc().as_str(), name],
            )? > 0)
        })
    }

    fn check_token(&self, token_sha256: &str) -> Result<TokenCheck, StoreError> {
        let row = self.read(|sql| {
            sql.query_optional(
                "SELECT id, name, revoked_at FROM upload_tokens WHERE token_sha256 = ?",
                params![token_sha256],
            )
        })?;
        let Some(row) = row else { return Ok(TokenCheck::Unknown) };
        Ok(match row.optional_text(2)? {
            Some(revoked_at) => TokenCheck::Revoked { name: row.text(1)?, revoked_at },
            None => TokenCheck::Live { id: row.int(0)?, name: row.text(1)? },
        })
    }

    fn import_upload(&mut self, run: &StoredRun, received: &Received<'_>) -> Result<UploadOutcome, StoreError> {
        // Two uploads of the same results at once (under two run ids) both find no copy, and the second to commit
        // breaks the uniqueness of the results' digest (PostgreSQL; SQLite takes one writer at a time). Tried again,
        // it finds the first one's run: a copy.
        match import_upload_once(self, run, received) {
            Err(error) if is_unique_violation(&error) => import_upload_once(self, run, received),
            outcome => outcome,
        }
    }

    fn uploads_since(&self, token_id: i64, since_s: f64) -> Result<u64, StoreError> {
        let row = self.read(|sql| {
            sql.query_one(
                "SELECT COUNT(*) FROM uploads WHERE token_id = ? AND received_s >= ?",
                params![token_id, since_s],
            )
        })?;
        Ok(u64::try_from(row.int(0)?).unwrap_or(0))
    }

    fn uploads(&self) -> Result<BTreeMap<String, Upload>, StoreError> {
        let rows = self.read(|sql| {
            sql.query(
                "SELECT r.uuid, t.name, u.received_at, u.provenance FROM uploads u \
                 JOIN runs r ON r.id = u.run_id JOIN upload_tokens t ON t.id = u.token_id",
                &[],
            )
        })?;
        rows.iter()
            .map(|row| {
                let provenance = serde_json::from_str(&row.text(3)?)
                    .map_err(|e| StoreError::Corrupt(format!("an upload's provenance: {e}")))?;
                Ok((row.text(0)?, Upload { submitter: row.text(1)?, received_at: row.text(2)?, provenance }))
            })
            .collect()
    }
}

/// One try of [`UploadStore::import_upload`], in one transaction.
fn import_upload_once<B: Backend>(
    store: &mut SqlStore<B>,
    run: &StoredRun,
    received: &Received<'_>,
) -> Result<UploadOutcome, StoreError> {
    let provenance = serde_json::to_string(received.provenance)
        .map_err(|e| StoreError::Corrupt(format!("an upload's provenance: {e}")))?;
    store.write(|sql| {
        let copy = sql.query_optional(
            "SELECT r.uuid FROM uploads u JOIN runs r ON r.id = u.run_id WHERE u.content_sha256 = ?",
            params![received.content_sha256],
        )?;
        if let Some(copy) = copy {
            let uuid = copy.text(0)?;
            return Ok(if uuid == run.summary.uuid {
                UploadOutcome::AlreadyPresent
            } else {
                UploadOutcome::CopyOf(uuid)
            });
        }
        let suites = run.summary.suite_id.iter().chain(run.summary.tags.get(SUITE_TAG)).collect::<Vec<_>>();
        for suite in suites {
            let other = sql.query_optional(
                "SELECT k.name FROM runs r LEFT JOIN uploads u ON u.run_id = r.id \
                 LEFT JOIN upload_tokens k ON k.id = u.token_id \
                 WHERE (r.suite_id = ? OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = ? \
                 AND t.value = ?)) AND (u.token_id IS NULL OR u.token_id <> ?) AND r.uuid <> ? LIMIT 1",
                params![suite.as_str(), SUITE_TAG, suite.as_str(), received.token_id, run.summary.uuid.as_str()],
            )?;
            if let Some(other) = other {
                return Ok(UploadOutcome::SuiteOfAnother { suite: suite.clone(), submitter: other.optional_text(0)? });
            }
        }
        let Some(run_id) = import_within::<B>(sql, &[run])?[0] else { return Ok(UploadOutcome::AlreadyPresent) };
        sql.execute(
            "INSERT INTO uploads (run_id, token_id, received_at, received_s, content_sha256, provenance) \
             VALUES (?, ?, ?, ?, ?, ?)",
            params![
                run_id,
                received.token_id,
                now_utc().as_str(),
                received.received_s,
                received.content_sha256,
                provenance.as_str()
            ],
        )?;
        Ok(UploadOutcome::Imported)
    })
}

/// True for the error of a statement that broke a UNIQUE constraint.
fn is_unique_violation(error: &StoreError) -> bool {
    matches!(error, StoreError::Database { message, .. }
        if message.contains("duplicate key value violates unique constraint") || message.contains("UNIQUE constraint failed"))
}
