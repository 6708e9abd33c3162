//! `--cold`: the page cache dropped before each power-test query and before the throughput test, and the state the
//! run reports (`cold`, `partly-cold` or `warm`).

use crate::results::Phase;
use envbench_core::sampler::StepObserver;
use envbench_core::workload::Progress;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `--cold`: drops the OS page cache (the workspace's one dropper, in `envbench-base`) before each power-test query and
/// before the throughput test. Without root and a writable /proc/sys the run goes on warm, with a warning, and says so
/// in its results.
pub(crate) struct CacheDropper<'a> {
    enabled: AtomicBool,
    dropped: AtomicUsize,
    progress: &'a dyn Progress,
}

impl<'a> CacheDropper<'a> {
    pub(crate) fn new(cold: bool, note: Option<&str>, progress: &'a dyn Progress) -> CacheDropper<'a> {
        let enabled = if !cold {
            false
        } else if !envbench_base::page_cache::can_drop_page_cache() {
            progress.warn(
                "--cold needs root to drop the page cache; the queries run with warm caches (run as root, or drop \
                 the cache yourself between runs)",
            );
            false
        } else {
            if let Some(note) = note {
                progress.line(&format!("note: {note}"));
            }
            true
        };
        CacheDropper { enabled: AtomicBool::new(enabled), dropped: AtomicUsize::new(0), progress }
    }

    pub(crate) fn drop_now(&self) {
        if !self.enabled.load(Ordering::SeqCst) {
            return;
        }
        match envbench_base::page_cache::drop_page_cache() {
            Ok(()) => {
                self.dropped.fetch_add(1, Ordering::SeqCst);
            }
            // Dropping stopped working (e.g. /proc/sys remounted read-only): the rest runs warm and says so.
            Err(error) => {
                if self.enabled.swap(false, Ordering::SeqCst) {
                    self.progress.warn(&format!(
                        "cannot drop the page cache ({error}); the remaining queries run with warm caches"
                    ));
                }
            }
        }
    }

    /// `cold` when every planned drop happened, `partly-cold` when dropping stopped working, else `warm`.
    pub(crate) fn state(&self) -> &'static str {
        match (self.dropped.load(Ordering::SeqCst), self.enabled.load(Ordering::SeqCst)) {
            (0, _) => "warm",
            (_, true) => "cold",
            (_, false) => "partly-cold",
        }
    }
}

/// Passes steps on to the sampler, dropping the page cache as the power and throughput tests begin.
pub(crate) struct ColdSteps<'a> {
    pub(crate) inner: &'a dyn StepObserver,
    pub(crate) cache: &'a CacheDropper<'a>,
}

impl StepObserver for ColdSteps<'_> {
    fn step_started(&self, step: &str) {
        if step == Phase::Power.step() || step == Phase::Throughput.step() {
            self.cache.drop_now();
        }
        self.inner.step_started(step);
    }

    fn step_finished(&self, step: &str) {
        self.inner.step_finished(step);
    }
}
