//! The data cache: a bounded set of expanded blocks, sharded by key so calculation threads rarely meet on a lock.
//!
//! Each shard evicts with CLOCK (a FIFO that gives recently used blocks a second chance), which keeps the hot upper
//! blocks of an aggregation while a scan streams through once.

use crate::block::Cells;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

struct Entry {
    cells: Arc<Cells>,
    referenced: bool,
}

#[derive(Default)]
struct Shard {
    map: FxHashMap<u64, Entry>,
    queue: VecDeque<u64>,
    bytes: usize,
}

/// A bounded cache of expanded blocks.
pub(crate) struct BlockCache {
    shards: Box<[Mutex<Shard>]>,
    budget_per_shard: usize,
}

impl BlockCache {
    /// A cache holding at most `budget_bytes` of expanded blocks of `block_bytes` each (0 disables it).
    pub fn new(budget_bytes: u64, block_bytes: usize) -> BlockCache {
        let blocks = budget_bytes as usize / block_bytes.max(1);
        let shards = (blocks / 16).clamp(1, 64);
        BlockCache {
            shards: (0..shards).map(|_| Mutex::new(Shard::default())).collect(),
            budget_per_shard: budget_bytes as usize / shards,
        }
    }

    fn shard(&self, key: u64) -> &Mutex<Shard> {
        &self.shards[(crate::rng::mix(key) % self.shards.len() as u64) as usize]
    }

    pub fn get(&self, key: u64) -> Option<Arc<Cells>> {
        if self.budget_per_shard == 0 {
            return None;
        }
        let mut shard = self.shard(key).lock().expect("cache lock");
        shard.map.get_mut(&key).map(|entry| {
            entry.referenced = true;
            Arc::clone(&entry.cells)
        })
    }

    pub fn insert(&self, key: u64, cells: Arc<Cells>) {
        let size = cells.len() * 8;
        if size > self.budget_per_shard {
            self.remove(key);
            return;
        }
        let mut shard = self.shard(key).lock().expect("cache lock");
        let shard = &mut *shard;
        match shard.map.insert(key, Entry { cells, referenced: false }) {
            Some(old) => shard.bytes = shard.bytes - old.cells.len() * 8 + size,
            None => {
                shard.bytes += size;
                shard.queue.push_back(key);
            }
        }
        while shard.bytes > self.budget_per_shard {
            let Some(victim) = shard.queue.pop_front() else { break };
            match shard.map.get_mut(&victim) {
                Some(entry) if entry.referenced && victim != key => {
                    entry.referenced = false;
                    shard.queue.push_back(victim);
                }
                Some(_) => {
                    let entry = shard.map.remove(&victim).expect("present");
                    shard.bytes -= entry.cells.len() * 8;
                }
                // A key removed earlier: its queue slot is stale.
                None => {}
            }
        }
        if shard.queue.len() > 2 * shard.map.len() + 64 {
            let map = &shard.map;
            let mut seen = rustc_hash::FxHashSet::default();
            shard.queue.retain(|k| map.contains_key(k) && seen.insert(*k));
        }
    }

    pub fn remove(&self, key: u64) {
        let mut shard = self.shard(key).lock().expect("cache lock");
        if let Some(entry) = shard.map.remove(&key) {
            shard.bytes -= entry.cells.len() * 8;
        }
    }

    pub fn clear(&self) {
        for shard in self.shards.iter() {
            *shard.lock().expect("cache lock") = Shard::default();
        }
    }

    /// Bytes of expanded blocks held now.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().expect("cache lock").bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_stays_within_budget_and_keeps_referenced_blocks() {
        let cache = BlockCache::new(10 * 800, 800);
        assert_eq!(cache.shards.len(), 1);
        cache.insert(0, Arc::new(vec![0.0; 100]));
        for key in 1..50 {
            cache.get(0);
            cache.insert(key, Arc::new(vec![key as f64; 100]));
            assert!(cache.bytes() <= 10 * 800);
        }
        assert!(cache.get(0).is_some(), "a block in use survives a scan");
        assert!(cache.get(1).is_none());
        assert_eq!(cache.get(49).unwrap()[0], 49.0);
        cache.remove(49);
        assert!(cache.get(49).is_none());
        let disabled = BlockCache::new(0, 800);
        disabled.insert(1, Arc::new(vec![0.0; 100]));
        assert!(disabled.get(1).is_none());
    }
}
