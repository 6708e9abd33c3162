//! Your own workload: a PostgreSQL or MariaDB/MySQL server's own log of what its clients sent, read as a stream of
//! sessions and statements ([`open`]), each statement with its fingerprint (constants as placeholders, as
//! `pg_stat_statements` groups them) and whether it reads or writes, and a capture summarised before anything runs
//! ([`inspect`]).
//!
//! Each log format is one file in `formats/` that turns lines into [`Event`]s; nothing else knows a format.

mod capture;
mod classify;
mod fingerprint;
mod formats;
mod inspect;
mod replay;
mod sessions;
mod time;
pub mod workload;

pub use capture::{CaptureError, Event, EventKind, Skip, Statement};
pub use classify::{StatementKind, classify};
pub use fingerprint::fingerprint;
pub use formats::{CaptureReader, LogFormat, length_now, open, open_first, open_reader};
pub use inspect::{Inspection, inspect, survey};
pub use replay::{FingerprintOutcome, ReplayOptions, ReplayOutcome, Speed, replay};
