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
}

impl ViewerError {
    /// A request the viewer cannot answer as asked (400): `what` says what was wrong and what to ask instead.
    pub fn bad_request(what: String) -> ViewerError {
        ViewerError::Verdict(VerdictError::BadSide(what))
    }

    /// A request for something the store does not hold (404): `what` names it, `hint` what to ask instead.
    pub fn not_found(what: String, hint: String) -> ViewerError {
        ViewerError::Verdict(VerdictError::EmptySide(what, hint))
    }
}

impl From<StoreError> for ViewerError {
    fn from(error: StoreError) -> ViewerError {
        ViewerError::Verdict(VerdictError::Store(error))
    }
}
