//! The results service: runs shared beyond one team, through an HTTP API in front of a store instead of a database
//! password.
//!
//! This crate owns the upload format ([`upload`]: a run with the provenance its client states and each result's
//! headline), the server's re-checks of an upload ([`checks`]: nothing is silently altered; a run that fails a check is
//! refused with the reason), the submitters' tokens ([`tokens`]: made on the server, shown once, kept as digests), the
//! whole `/api/v1` ([`api`]: its read and write routes, what they answer, their limits and JSON types), and the
//! client that calls it ([`client`], [`remote`]), and the read-only web viewer ([`serve`], [`router`]: lists, runs,
//! comparisons, environments, the leaderboard; the host guard; HTTP or HTTPS) with the model of the store its pages
//! and the read routes answer from ([`read_api`]): the one crate that serves HTTP. The store keeps the runs and tokens
//! (envbench-store); the pages are drawn by envbench-report.

pub mod api;
pub mod checks;
pub mod client;
pub mod read_api;
pub mod remote;
mod tls;
pub mod tokens;
pub mod upload;
mod viewer;
mod viewer_error;

pub use api::Limits;
pub use checks::check_upload;
pub use tls::load_tls;
pub use tokens::{check_submitter_name, is_submitter_name, new_token, token_sha256};
pub use upload::{Headline, UploadBody, UploadProvenance, UploadedRun, content_sha256};
pub use viewer::{DEFAULT_LISTEN, Extras, bind, is_loopback, router, router_with, serve, serve_blocking, serve_with};
pub use viewer_error::ViewerError;
