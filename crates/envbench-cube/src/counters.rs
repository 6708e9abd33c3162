//! The store's I/O counters: atomic counts while it runs ([`Counters`]) and their totals ([`IoTotals`]), which
//! subtract to give one step's share.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// I/O counters, cumulative since the store was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoTotals {
    pub blocks_read: u64,
    pub bytes_read: u64,
    pub blocks_written: u64,
    pub bytes_written: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
}

impl std::ops::Sub for IoTotals {
    type Output = IoTotals;
    fn sub(self, earlier: IoTotals) -> IoTotals {
        IoTotals {
            blocks_read: self.blocks_read - earlier.blocks_read,
            bytes_read: self.bytes_read - earlier.bytes_read,
            blocks_written: self.blocks_written - earlier.blocks_written,
            bytes_written: self.bytes_written - earlier.bytes_written,
            cache_hits: self.cache_hits - earlier.cache_hits,
            cache_misses: self.cache_misses - earlier.cache_misses,
        }
    }
}

/// The live counters, added to from any thread.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) blocks_read: AtomicU64,
    pub(crate) bytes_read: AtomicU64,
    pub(crate) blocks_written: AtomicU64,
    pub(crate) bytes_written: AtomicU64,
    pub(crate) cache_hits: AtomicU64,
    pub(crate) cache_misses: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// The counts so far.
    pub(crate) fn totals(&self) -> IoTotals {
        IoTotals {
            blocks_read: self.blocks_read.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            blocks_written: self.blocks_written.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            cache_misses: self.cache_misses.load(Ordering::Relaxed),
        }
    }
}
