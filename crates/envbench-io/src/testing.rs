//! Helpers for tests: scratch directories on a real disk file system (O_DIRECT needs one; /tmp may be tmpfs).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory removed with its content when dropped.
pub struct ScratchDir(PathBuf);

impl std::ops::Deref for ScratchDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh, empty directory for one test: under the system temp directory when it is on a disk, else under the
/// workspace's `target` directory.
pub fn scratch_dir(name: &str) -> ScratchDir {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let temp = std::env::temp_dir();
    let base = match envbench_base::place::file_system_name(&temp).as_str() {
        "tmpfs" | "ramfs" => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/envbench-io-tests"),
        _ => temp.join("envbench-io-tests"),
    };
    let dir = base.join(format!("{name}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    ScratchDir(dir)
}
