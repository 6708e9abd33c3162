//! The read-only web viewer: list and filter runs, show a run, compare runs picked with checkboxes, download the
//! HTML report. Pages are plain server-rendered HTML (forms and links, no scripts), drawn by the same code as the
//! report. The store is opened per request, in a blocking task, so any backend works (SQLite handles are not `Sync`).
//!
//! It answers only requests addressed to it: a `Host` that is not the address it listens on (or `localhost` on
//! loopback) is refused, so a web page cannot read the store through DNS rebinding; and every response forbids
//! scripts, framing and content sniffing.
//!
//! The pages are in `pages` (runs, a run, comparisons and their downloads), `environments` (suites, environments, an
//! environment's history) and `board` (the leaderboard); the JSON read API's answers are `crate::read_api`'s, served by envbench-service's
//! routes; `respond` holds what every handler shares, and `serve` the routes, the host guard and the listeners (HTTP or HTTPS).

pub(crate) mod board;
mod environments;
mod pages;
pub(crate) mod respond;
mod serve;

pub use serve::{DEFAULT_LISTEN, Extras, bind, is_loopback, router, router_with, serve, serve_blocking, serve_with};
