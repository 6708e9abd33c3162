use envbench_store::StoreError;

/// What can go wrong while comparing, reporting or serving; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    BadSide(String),
    #[error(
        "'{0}' matches no complete run: give a run id, a label or tags (key=value); `envbench results list` shows them{1}"
    )]
    EmptySide(String, String),
    #[error("'{0}' is both a run id prefix and a label; write run:{0} or label:{0}")]
    AmbiguousSide(String),
    #[error("comparing needs at least two sides (runs, labels or tags); {0} given")]
    TooFewSides(usize),
    #[error("cannot serve on {address} ({reason}); choose another address or port with --listen")]
    Listen { address: String, reason: String },
    #[error("the web viewer stopped: {0}")]
    Serve(String),
    #[error("TLS: {0}")]
    Tls(String),
}
