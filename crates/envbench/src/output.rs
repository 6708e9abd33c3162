//! Terminal output: standard output that ends quietly when the reader goes away (`envbench results list | head -1`),
//! progress on standard error (a redrawn line on a terminal, finished lines in logs), and errors for people with
//! every connection secret redacted.

use envbench_core::workload::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output is closed: later output is dropped, and the command ends normally.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Write to standard output. A closed pipe is a normal end for a reader such as `head`, not an error: what follows
/// is dropped (a run still stores its results).
pub fn print(text: &str) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
        && error.kind() == std::io::ErrorKind::BrokenPipe
    {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// [`print`] with a line break.
pub fn println(text: &str) {
    print(&format!("{text}\n"));
}

/// True when standard error is a terminal, where progress may redraw one line.
pub fn live_progress() -> bool {
    std::io::stderr().is_terminal()
}

/// Progress on standard error; quiet (`--json`) keeps only warnings.
pub struct TerminalProgress {
    pub quiet: bool,
}

impl Progress for TerminalProgress {
    fn update(&self, text: &str) {
        if !self.quiet && live_progress() {
            eprint!("\r\x1b[2K{}", envbench_core::text::printable(text));
        }
    }

    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        if live_progress() {
            eprint!("\r\x1b[2K");
        }
        if !text.is_empty() || !live_progress() {
            eprintln!("{text}");
        }
    }

    fn warn(&self, text: &str) {
        if live_progress() && !self.quiet {
            eprint!("\r\x1b[2K");
        }
        eprintln!("warning: {text}");
    }
}

/// An error and its causes on one line, with every connection secret redacted and no control characters.
pub fn error_text(error: &anyhow::Error) -> String {
    let chain = envbench_core::model::error_chain(error.as_ref());
    envbench_core::text::printable(&envbench_core::model::redact_secrets(&chain))
}
