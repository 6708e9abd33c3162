//! One shard of the store's index and free space: the locations of the blocks whose keys hash to it, and its free
//! slots by capacity (best fit, split when the rest is worth keeping).

use crate::index::Location;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// A shard of the index and free lists, behind its own mutex in the store.
#[derive(Default)]
pub(crate) struct Shard {
    pub(crate) index: FxHashMap<u64, Location>,
    /// Free slots by capacity.
    free: BTreeMap<u32, Vec<(u16, u64)>>,
    pub(crate) free_bytes: u64,
}

impl Shard {
    /// Return a slot to the free lists.
    pub(crate) fn release(&mut self, file: u16, offset: u64, capacity: u32) {
        self.free.entry(capacity).or_default().push((file, offset));
        self.free_bytes += u64::from(capacity);
    }

    /// Best fit: the smallest free slot that holds `size`, split when the rest is worth keeping.
    pub(crate) fn take(&mut self, size: u32, align: u64) -> Option<(u16, u64, u32)> {
        let (&capacity, _) = self.free.range(size..).next()?;
        let slots = self.free.get_mut(&capacity).expect("present");
        let (file, offset) = slots.pop().expect("non-empty");
        if slots.is_empty() {
            self.free.remove(&capacity);
        }
        self.free_bytes -= u64::from(capacity);
        let rest = capacity - size;
        if u64::from(rest) >= 4 * align {
            self.release(file, offset + u64::from(size), rest);
            return Some((file, offset, size));
        }
        Some((file, offset, capacity))
    }
}
