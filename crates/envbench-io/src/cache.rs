//! Cache honesty for buffered runs (specification section 3): with O_DIRECT the page cache is bypassed; buffered,
//! the page cache must be dropped before every run (possible as root), or the file must be at least twice the RAM,
//! or the results are flagged `cache-inflated`.

use envbench_base::page_cache::can_drop_page_cache;
use serde::{Deserialize, Serialize};

/// The flag put on results that the page cache may have inflated.
pub const CACHE_INFLATED_FLAG: &str = "cache-inflated";

/// How a run keeps the page cache from flattering its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "policy")]
pub enum CacheHonesty {
    /// O_DIRECT: the page cache is not used.
    Direct,
    /// Buffered, and we may drop the page cache: it is dropped before every run.
    DropBeforeEachRun,
    /// Buffered, and the file is at least twice the RAM, so the cache cannot hold it.
    FileOutgrowsCache { file_size_bytes: u64, ram_bytes: u64 },
    /// Buffered with neither: results are flagged `cache-inflated`.
    Inflated { file_size_bytes: u64, ram_bytes: Option<u64> },
}

impl CacheHonesty {
    /// The flags every result of the run must carry.
    pub fn flags(&self) -> Vec<String> {
        match self {
            CacheHonesty::Inflated { .. } => vec![CACHE_INFLATED_FLAG.to_string()],
            _ => Vec::new(),
        }
    }

    /// Whether the suite drops the page cache before each run.
    pub fn drops_cache(&self) -> bool {
        matches!(self, CacheHonesty::DropBeforeEachRun)
    }

    /// A warning to print before running, when there is something to warn about.
    pub fn warning(&self) -> Option<String> {
        match self {
            CacheHonesty::Inflated { file_size_bytes, ram_bytes } => Some(format!(
                "buffered I/O on a {} file with {} of RAM and no permission to drop the page cache: results will be \
                 flagged cache-inflated; run as root or use a file of at least twice the RAM",
                envbench_core::ByteSize(*file_size_bytes),
                ram_bytes.map_or_else(|| "unknown".to_string(), |ram| envbench_core::ByteSize(ram).to_string()),
            )),
            _ => None,
        }
    }
}

/// Decide the policy from the facts (pure, for tests): buffered runs prefer dropping the cache, then a file of at
/// least twice the RAM.
pub fn decide_cache_honesty(
    direct: bool,
    file_size_bytes: u64,
    ram_bytes: Option<u64>,
    can_drop_cache: bool,
) -> CacheHonesty {
    if direct {
        return CacheHonesty::Direct;
    }
    if can_drop_cache {
        return CacheHonesty::DropBeforeEachRun;
    }
    match ram_bytes {
        Some(ram_bytes) if file_size_bytes >= ram_bytes.saturating_mul(2) => {
            CacheHonesty::FileOutgrowsCache { file_size_bytes, ram_bytes }
        }
        _ => CacheHonesty::Inflated { file_size_bytes, ram_bytes },
    }
}

/// The policy for this machine: RAM from /proc/meminfo, and whether we may write /proc/sys/vm/drop_caches (root,
/// and not a read-only /proc as in many containers).
pub fn cache_honesty(direct: bool, file_size_bytes: u64) -> CacheHonesty {
    let can_drop = !direct && can_drop_page_cache();
    decide_cache_honesty(direct, file_size_bytes, ram_bytes(), can_drop)
}

/// MemTotal from /proc/meminfo, in bytes.
pub fn ram_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn policy_prefers_direct_then_dropping_then_size() {
        assert_eq!(decide_cache_honesty(true, GIB, Some(16 * GIB), false), CacheHonesty::Direct);
        assert_eq!(decide_cache_honesty(false, GIB, Some(16 * GIB), true), CacheHonesty::DropBeforeEachRun);
        assert_eq!(
            decide_cache_honesty(false, 32 * GIB, Some(16 * GIB), false),
            CacheHonesty::FileOutgrowsCache { file_size_bytes: 32 * GIB, ram_bytes: 16 * GIB }
        );
        let inflated = decide_cache_honesty(false, 31 * GIB, Some(16 * GIB), false);
        assert_eq!(inflated, CacheHonesty::Inflated { file_size_bytes: 31 * GIB, ram_bytes: Some(16 * GIB) });
        assert_eq!(inflated.flags(), ["cache-inflated"]);
        assert!(inflated.warning().unwrap().contains("cache-inflated"));
        assert!(decide_cache_honesty(false, GIB, None, false).flags().contains(&CACHE_INFLATED_FLAG.to_string()));
    }

    #[test]
    fn direct_runs_carry_no_flag() {
        assert!(cache_honesty(true, GIB).flags().is_empty());
        assert!(cache_honesty(true, GIB).warning().is_none());
    }

    #[test]
    fn machine_ram_is_known() {
        assert!(ram_bytes().unwrap() > 64 << 20);
    }
}
