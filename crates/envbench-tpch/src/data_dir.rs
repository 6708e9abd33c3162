//! The data directory on disk: `<data dir>/sf<SF>/<table>/part-<k>.parquet` plus `<data dir>/sf<SF>/manifest.json`,
//! written last, so a directory without a manifest is an interrupted generation and is regenerated, and
//! `<data dir>/sf<SF>.lock`, the lock a run holds on the scale factor's data ([`lock`]). envbench only ever deletes
//! files it recognizes as its own ([`check_only_ours`], [`remove_ours`]); a directory holding anything else is
//! refused. Before generating, the free space the files need is checked ([`check_space`]).

use crate::error::TpchError;
use crate::scale::format_scale_factor;
use crate::tables::{MIN_ROW_GROUPS, TableName};
use envbench_base::lock::{FileLock, LockMode, LockRefused};
use envbench_core::ByteSize;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The generator that makes the data; recorded in the manifest so data from another generator is not reused.
pub const GENERATOR: &str = "tpchgen 3.0";
/// Bumped when the file layout or manifest changes (4: nation and region in a row group per row; 3: LZ4_RAW instead of
/// Snappy; 2: row groups of at most 128 Ki rows, at least 64 per scaled table, with page statistics; 1 wrote one row
/// group per file).
pub const MANIFEST_FORMAT: u32 = 4;
/// The manifest's file name in a scale factor's directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

/// One generated table in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableFiles {
    pub rows: u64,
    pub bytes: u64,
    /// Row groups over all the files, and the most rows in one.
    #[serde(default)]
    pub row_groups: u64,
    #[serde(default)]
    pub row_group_rows: u64,
    /// Paths relative to the scale factor's directory.
    pub files: Vec<String>,
}

/// What a complete generation wrote; its presence marks the data as complete and reusable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub scale_factor: f64,
    pub generator: String,
    pub compression: String,
    /// The fewest row groups each scaled table was cut into (see
    /// [`min_row_groups`](crate::tables::min_row_groups)); manifests written before it was
    /// recorded used [`MIN_ROW_GROUPS`].
    #[serde(default = "min_row_groups_before_recorded")]
    pub min_row_groups: u64,
    pub tables: BTreeMap<TableName, TableFiles>,
    pub generation_ms: u64,
}

fn min_row_groups_before_recorded() -> u64 {
    MIN_ROW_GROUPS
}

/// The directory of one scale factor under the data directory.
pub fn scale_factor_dir(data_dir: &Path, scale_factor: f64) -> PathBuf {
    data_dir.join(format!("sf{}", format_scale_factor(scale_factor)))
}

pub(crate) fn io_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> TpchError {
    let path = path.to_path_buf();
    move |source| TpchError::Io { path, action, source }
}

/// The lock file of a scale factor's data: beside its directory, so removing an interrupted generation's directory
/// leaves the lock alone.
pub fn lock_path(data_dir: &Path, scale_factor: f64) -> PathBuf {
    data_dir.join(format!("sf{}.lock", format_scale_factor(scale_factor)))
}

/// Whether `name`, in the data directory, is a scale factor's directory (`sf0.01`) or lock file (`sf0.01.lock`).
fn is_scale_factor_entry(name: &str, is_dir: bool) -> bool {
    let scale_factor = |text: &str| text.strip_prefix("sf").is_some_and(|n| n.parse::<f64>().is_ok_and(|sf| sf > 0.0));
    match name.strip_suffix(".lock") {
        Some(stem) => !is_dir && scale_factor(stem),
        None => is_dir && scale_factor(name),
    }
}

/// Hold the lock on the data of `scale_factor` under `data_dir` (created when missing): exclusive to generate, shared
/// to read complete data. Refused at once, naming the holder, while another run holds it in a mode that conflicts.
pub fn lock(data_dir: &Path, scale_factor: f64, exclusive: bool) -> Result<FileLock, TpchError> {
    std::fs::create_dir_all(data_dir).map_err(io_error(data_dir, "creating"))?;
    let path = lock_path(data_dir, scale_factor);
    let mode = if exclusive { LockMode::Exclusive } else { LockMode::Shared };
    let command = envbench_base::lock::this_command_line();
    FileLock::take(&path, mode, &command).map_err(|refused| match refused {
        LockRefused::Io { path, source } => TpchError::Io { path, action: "locking", source },
        busy => TpchError::Busy(format!(
            "{}: the TPC-H data of SF {} is in use by {}; wait for it to end, or give another --dir",
            data_dir.display(),
            format_scale_factor(scale_factor),
            busy.holder_text()
        )),
    })
}

/// Bytes the Parquet files of a scale factor take, with a margin. Measured (manifest format 4, a 2-core machine):
/// 4.93 MB at SF 0.01, 40.8 MB at SF 0.1, 382 MB at SF 1, so about 382 MB per unit of scale and a fixed 1 MB (nation
/// and region in a row group per row, every file's footer); a quarter more for machines of more cores (more row
/// groups, more footers and statistics) and for the scale factors between.
pub fn space_needed(scale_factor: f64) -> u64 {
    const BYTES_PER_SCALE_FACTOR: f64 = 400e6;
    const FIXED_BYTES: f64 = 1e6;
    ((BYTES_PER_SCALE_FACTOR * scale_factor + FIXED_BYTES) * 1.25) as u64
}

/// Refuse a generation whose files cannot fit under `data_dir` (measured on its nearest existing directory, since
/// it may not exist yet), counting the space the files it replaces will give back. Nothing is created.
pub fn check_space(data_dir: &Path, scale_factor: f64) -> Result<(), TpchError> {
    let existing = data_dir.ancestors().find(|d| d.is_dir()).unwrap_or(Path::new("."));
    let Some(available) = envbench_base::place::available_bytes(existing).ok().flatten() else { return Ok(()) };
    let replaced = read_manifest(&scale_factor_dir(data_dir, scale_factor))
        .ok()
        .flatten()
        .map(|manifest| manifest.tables.values().map(|t| t.bytes).sum::<u64>())
        .unwrap_or(0);
    let needed = space_needed(scale_factor);
    if needed > available.saturating_add(replaced) {
        return Err(TpchError::NotEnoughSpace {
            dir: data_dir.to_path_buf(),
            scale_factor: format_scale_factor(scale_factor),
            needed: ByteSize(needed),
            available: ByteSize(available.saturating_add(replaced)),
        });
    }
    Ok(())
}

/// Load the manifest of a scale factor directory, if a complete generation left one.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, TpchError> {
    let path = dir.join(MANIFEST_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&path, "reading")(e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| TpchError::BadManifest { path, reason: e.to_string() })
}

/// Refuse directories holding anything envbench would not have written there.
pub fn check_only_ours(data_dir: &Path, sf_dir: &Path) -> Result<(), TpchError> {
    let foreign = |dir: &Path, example: String| TpchError::ForeignFiles { dir: dir.to_path_buf(), example };
    if data_dir.exists() {
        for entry in std::fs::read_dir(data_dir).map_err(io_error(data_dir, "listing"))? {
            let entry = entry.map_err(io_error(data_dir, "listing"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !is_scale_factor_entry(&name, entry.path().is_dir()) {
                return Err(foreign(data_dir, name));
            }
        }
    }
    if sf_dir.exists() {
        for entry in std::fs::read_dir(sf_dir).map_err(io_error(sf_dir, "listing"))? {
            let entry = entry.map_err(io_error(sf_dir, "listing"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == MANIFEST_FILE {
                continue;
            }
            if !TableName::ALL.iter().any(|t| t.as_str() == name) || !entry.path().is_dir() {
                return Err(foreign(sf_dir, name));
            }
            for file in std::fs::read_dir(entry.path()).map_err(io_error(&entry.path(), "listing"))? {
                let file = file.map_err(io_error(&entry.path(), "listing"))?;
                let file_name = file.file_name().to_string_lossy().into_owned();
                if !(file_name.starts_with("part-")
                    && (file_name.ends_with(".parquet") || file_name.ends_with(".parquet.partial")))
                {
                    return Err(foreign(&entry.path(), file_name));
                }
            }
        }
    }
    Ok(())
}

/// Remove a scale factor directory's manifest and table directories (only ever ours: see [`check_only_ours`]).
pub(crate) fn remove_ours(dir: &Path) -> Result<(), TpchError> {
    let manifest = dir.join(MANIFEST_FILE);
    if manifest.exists() {
        std::fs::remove_file(&manifest).map_err(io_error(&manifest, "removing"))?;
    }
    for table in TableName::ALL {
        let table_dir = dir.join(table.as_str());
        if table_dir.exists() {
            // check_only_ours has verified every file in here is a part file of ours.
            std::fs::remove_dir_all(&table_dir).map_err(io_error(&table_dir, "removing"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_factor_directories_are_named_as_people_write_them() {
        assert_eq!(scale_factor_dir(Path::new("/d"), 1.0), Path::new("/d/sf1"));
        assert_eq!(scale_factor_dir(Path::new("/d"), 0.01), Path::new("/d/sf0.01"));
    }
}
