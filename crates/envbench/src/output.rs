//! Terminal output: the one boundary every byte envbench writes to standard output or standard error passes. All of it
//! goes through [`envbench_core::text::terminal_text`], so no label, tag, stored text, exec name or a child's output
//! can drive the terminal. Standard output ends quietly when the reader goes away (`envbench results list | head
//! -1`); standard error never panics when it is gone (a dropped ssh session: the run still cleans up and stores its
//! end). Progress goes to standard error (a redrawn line on a terminal, finished lines in logs), and errors for people
//! with every connection secret redacted.

use envbench_core::workload::Progress;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output is closed: later output is dropped, and the command ends normally.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Set while standard output is held back ([`without_stdout`]).
static STDOUT_HELD: AtomicBool = AtomicBool::new(false);

/// Run `f` with what it writes to standard output dropped: `envbench run --json` prints one document, with its runs'
/// output in it.
pub fn without_stdout<T>(f: impl FnOnce() -> T) -> T {
    let held = STDOUT_HELD.swap(true, Ordering::SeqCst);
    let result = f();
    STDOUT_HELD.store(held, Ordering::SeqCst);
    result
}

/// Write to standard output. A closed pipe is a normal end for a reader such as `head`, not an error: what follows
/// is dropped (a run still stores its results).
pub fn print(text: &str) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) || STDOUT_HELD.load(Ordering::Relaxed) {
        return;
    }
    let text = envbench_core::text::terminal_text(text);
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

/// Write to standard error, made safe for the terminal. Errors are ignored: standard error may be gone (a closed
/// terminal after SIGHUP), and a run must still clean up and store its end.
pub fn eprint(text: &str) {
    let text = envbench_core::text::terminal_text(text);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes()).and_then(|()| stderr.flush());
}

/// [`eprint`] with a line break.
pub fn eprintln(text: &str) {
    eprint(&format!("{text}\n"));
}

/// Clear the progress line on a terminal (envbench's own control sequence, written as it is).
fn clear_progress_line() {
    let _ = std::io::stderr().write_all(b"\r\x1b[2K");
}

/// True when standard error is a terminal, where progress may redraw one line.
pub fn live_progress() -> bool {
    std::io::stderr().is_terminal()
}

/// Progress on standard error; quiet (`--json`) keeps only warnings.
pub struct TerminalProgress {
    pub quiet: bool,
}

impl TerminalProgress {
    /// End the live line, if one is drawn, so what follows (a workload's results, on standard output) starts on a
    /// line of its own rather than after "checking consistency".
    pub fn end_live_line(&self) {
        if !self.quiet && live_progress() {
            clear_progress_line();
        }
    }
}

impl Progress for TerminalProgress {
    fn update(&self, text: &str) {
        if !self.quiet && live_progress() {
            clear_progress_line();
            eprint(&envbench_core::text::printable(text));
        }
    }

    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        if live_progress() {
            clear_progress_line();
        }
        if !text.is_empty() || !live_progress() {
            eprintln(text);
        }
    }

    fn warn(&self, text: &str) {
        if live_progress() && !self.quiet {
            clear_progress_line();
        }
        eprintln(&format!("warning: {text}"));
    }
}

/// An error and its causes on one line, with every connection secret redacted and no control characters.
pub fn error_text(error: &anyhow::Error) -> String {
    let chain = envbench_core::model::error_chain(error.as_ref());
    envbench_core::text::printable(&envbench_core::model::redact_secrets(&chain))
}
