//! Durable file updates: replace a file so that a crash leaves the old or the new one, and make names durable.

use crate::error::{CubeError, IoContext};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Replace `path` with `bytes` so that a crash leaves either the old or the new file: write a temporary file, sync
/// it, rename it over the old one, sync the directory.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CubeError> {
    let temporary = path.with_extension("tmp");
    {
        let mut file = File::create(&temporary).at(&temporary)?;
        file.write_all(bytes).at(&temporary)?;
        file.sync_all().at(&temporary)?;
    }
    std::fs::rename(&temporary, path).at(path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// fsync a directory so that created, renamed and removed names are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), CubeError> {
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}
