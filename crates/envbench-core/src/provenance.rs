//! Where a run's figures came from, as kept with the run (the `provenance` attachment) and stated when it is
//! uploaded to a results service: the envbench that ran it, which binary, and whether its options were a built-in
//! profile's or the user's own ("tuned"), which ranks keep apart.

use serde::{Deserialize, Serialize};

/// The version of envbench itself, recorded with every run.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The name of the attachment that holds a run's [`RunProvenance`].
pub const PROVENANCE_ATTACHMENT: &str = "provenance";

/// Which binary ran: its size and the SHA-256 of its first and last MiB, cheap enough to take at every run and
/// enough to tell, at upload, whether the binary uploading is the one that ran (and so whose full SHA-256 to state).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryIdentity {
    pub size_bytes: u64,
    pub ends_sha256: String,
}

/// How a run's options were chosen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Options {
    /// A built-in profile's defaults: the workload's own (only where the run is placed, named and reported was
    /// given), or a built-in suite's.
    Default { profile: String },
    /// The user changed these options from their defaults.
    Tuned { changed: Vec<String> },
}

impl Options {
    pub fn is_tuned(&self) -> bool {
        matches!(self, Options::Tuned { .. })
    }

    /// `default (quick)` or `tuned (--size, --runs)`.
    pub fn words(&self) -> String {
        match self {
            Options::Default { profile } => format!("default ({profile})"),
            Options::Tuned { changed } if changed.is_empty() => "tuned (options not recorded)".to_string(),
            Options::Tuned { changed } => format!("tuned ({})", changed.join(", ")),
        }
    }
}

/// What a run keeps about where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunProvenance {
    pub envbench_version: String,
    /// `None` where the binary could not be read.
    pub binary: Option<BinaryIdentity>,
    pub options: Options,
}
