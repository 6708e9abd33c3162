//! The one trait every format implements, and what an export gives back.

use envbench_store::StoredRun;

/// One export format.
pub trait Exporter {
    /// The runs, oldest first, in this format.
    fn export(&self, runs: &[StoredRun]) -> Result<Export, ExportError>;
}

/// An export's text, and how many rows (samples, or results for a tracker) it holds.
#[derive(Debug)]
pub struct Export {
    pub text: String,
    pub rows: usize,
}

/// Why the runs could not be exported in a format; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A tracker keeps one value per benchmark, and the runs hold the same one twice.
    #[error(
        "{benchmark} {metric} is in more than one of the runs exported, and a tracker keeps one value per benchmark: \
         export one run, or one suite's runs (the default: the latest suite)"
    )]
    MeasuredTwice { benchmark: String, metric: String },
    /// A run's workload could not give its own layout for it.
    #[error("{0}")]
    Layout(String),
    #[error("writing the export: {0}")]
    Csv(#[from] ::csv::Error),
    #[error("writing the export: {0}")]
    Json(#[from] serde_json::Error),
}
