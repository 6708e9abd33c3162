//! The results service: runs shared beyond one team, through an HTTP API in front of a store instead of a database
//! password.
//!
//! This crate owns the upload format ([`upload`]: a run with the provenance its client states and each result's
//! headline), the server's re-checks of an upload ([`checks`]: nothing is silently altered; a run that fails a check is
//! refused with the reason), the submitters' tokens ([`tokens`]: made on the server, shown once, kept as digests), the
//! whole `/api/v1` ([`api`]: its read and write routes, what they answer, their limits and JSON types), and the
//! client that calls it ([`client`], [`remote`]). The store keeps the runs and tokens (envbench-store); the pages that
//! show them, and the model of the store the read routes answer from, are the viewer's (envbench-report).

pub mod api;
pub mod checks;
pub mod client;
pub mod remote;
pub mod tokens;
pub mod upload;

pub use api::Limits;
pub use checks::check_upload;
pub use tokens::{check_submitter_name, is_submitter_name, new_token, token_sha256};
pub use upload::{Headline, UploadBody, UploadProvenance, UploadedRun, content_sha256};
