//! The OS page cache, dropped so that a read is served by the storage rather than by memory: for buffered disk
//! runs, cold analytic queries and the cube's cold retrievals alike.

use std::fs::OpenOptions;
use std::io::{self, Write};

/// Where Linux takes the order to drop its caches.
const DROP_CACHES_PATH: &str = "/proc/sys/vm/drop_caches";

/// Write back dirty pages, then drop the clean page cache with dentries and inodes (needs root and a writable
/// /proc/sys): the one page-cache dropper of the workspace, for buffered disk runs and cold analytic queries alike.
pub fn drop_page_cache() -> io::Result<()> {
    // SAFETY: sync has no arguments and cannot fail.
    unsafe { libc::sync() };
    OpenOptions::new().write(true).open(DROP_CACHES_PATH)?.write_all(b"3\n")
}

/// True when this process may drop the page cache.
pub fn can_drop_page_cache() -> bool {
    OpenOptions::new().write(true).open(DROP_CACHES_PATH).is_ok()
}
