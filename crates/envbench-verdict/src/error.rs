use envbench_store::StoreError;

/// Why a comparison could not be made: the sides asked for, or the store they are read from; every message says what
/// to do.
#[derive(Debug, thiserror::Error)]
pub enum VerdictError {
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
}

impl VerdictError {
    /// True for the sides the user asked for (exit status 2), false for a store that failed.
    pub fn is_usage(&self) -> bool {
        !matches!(self, VerdictError::Store(_))
    }
}
