use envbench_store::StoreError;
use envbench_verdict::VerdictError;

/// What can go wrong while the viewer serves; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// The comparison asked for, or the store it reads.
    #[error(transparent)]
    Verdict(#[from] VerdictError),
    #[error("cannot serve on {address} ({reason}); choose another address or port with --listen")]
    Listen { address: String, reason: String },
    #[error("the web viewer stopped: {0}")]
    Serve(String),
    #[error("TLS: {0}")]
    Tls(String),
    /// A request the viewer cannot answer as asked (400): what was wrong and what to ask instead.
    #[error("{0}")]
    BadRequest(String),
    /// A request for something the store does not hold (404): what was asked, then what to ask instead.
    #[error(
        "'{0}' matches no complete run: give a run id, a label or tags (key=value); `envbench results list` shows them{1}"
    )]
    NotFound(String, String),
}

impl From<StoreError> for ViewerError {
    fn from(error: StoreError) -> ViewerError {
        ViewerError::Verdict(VerdictError::Store(error))
    }
}
