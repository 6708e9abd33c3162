//! A cube: an outline, its block store in one directory, and the crash-safety protocol around steps.
//!
//! Before a step changes data it writes `step-in-progress.json` (synced); after the step's data and index are
//! durable it removes the file. A cube opened while the file exists was interrupted mid-step (a crash, a kill, a
//! Ctrl-C): its blocks cannot be trusted, so opening resets it and reports which step was interrupted.

use crate::block::Cells;
use crate::counters::IoTotals;
use crate::durable::{sync_dir, write_atomically};
use crate::error::{CubeError, InterruptedStep, IoContext};
use crate::outline::{Dim, Outline, SparseKey};
use crate::store::{Store, StoreOptions};
use envbench_core::ByteSize;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MARKER_FILE: &str = "step-in-progress.json";

/// How the cube stores its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CubeOptions {
    pub compression: crate::block::Compression,
    /// Bound of the cache of expanded blocks.
    pub data_cache: ByteSize,
    /// Open page files with O_DIRECT (bypass the page cache).
    pub direct_io: bool,
    /// Largest size of one page file.
    pub page_file_max: ByteSize,
}

impl Default for CubeOptions {
    fn default() -> CubeOptions {
        CubeOptions {
            compression: crate::block::Compression::Bitmap,
            data_cache: ByteSize(256 << 20),
            direct_io: false,
            page_file_max: ByteSize(2 << 30),
        }
    }
}

impl CubeOptions {
    fn store_options(&self) -> StoreOptions {
        StoreOptions {
            compression: self.compression,
            cache_bytes: self.data_cache.bytes(),
            direct_io: self.direct_io,
            page_file_max_bytes: self.page_file_max.bytes(),
            read_only: false,
        }
    }
}

/// Blocks of one (Entity level, Product level) pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelBlocks {
    pub entity_level: u8,
    pub product_level: u8,
    pub blocks: u64,
}

/// The cube's size and shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CubeStatistics {
    pub blocks: u64,
    /// Blocks whose Entity and Product are both level 0 (input blocks).
    pub level0_blocks: u64,
    pub upper_blocks: u64,
    pub blocks_by_level: Vec<LevelBlocks>,
    pub local_blocks: u64,
    pub usd_blocks: u64,
    pub cells_per_block: usize,
    pub expanded_block_bytes: u64,
    pub page_files: usize,
    pub page_file_bytes: u64,
    /// Space inside page files that is free for reuse.
    pub free_bytes: u64,
    pub index_bytes: u64,
    /// Present cells over all cells of all blocks.
    pub average_density: f64,
    /// Expanded bytes over encoded bytes.
    pub compression_ratio: f64,
    pub compression: crate::block::Compression,
    pub restructured: bool,
}

/// An open cube.
pub struct Cube {
    dir: PathBuf,
    options: CubeOptions,
    outline: Arc<Outline>,
    store: Store,
    /// I/O of stores replaced by a reset or a restructure.
    retired_io: IoTotals,
    recovered: Option<InterruptedStep>,
}

impl Cube {
    /// Open the cube in `dir` to write it, creating an empty one when there is none. The directory must be one
    /// envbench cube made, or empty (see [`crate::places`]); the caller holds its [`crate::places::CubeLock`]. A cube
    /// left mid-step is reset here (see [`Cube::recovered_from`]).
    pub fn open(dir: impl AsRef<Path>, options: CubeOptions) -> Result<Cube, CubeError> {
        let dir = dir.as_ref().to_path_buf();
        if options.page_file_max.bytes() < (1 << 20) {
            return Err(CubeError::Config(format!(
                "page file size {} is too small: use at least 1 MiB",
                options.page_file_max
            )));
        }
        crate::places::claim(&dir, crate::places::Place::Cube)?;
        let marker = dir.join(MARKER_FILE);
        let recovered = Cube::interrupted_step(&dir)?;
        if recovered.is_some() {
            Store::remove_all(&dir)?;
            std::fs::remove_file(&marker).at(&marker)?;
            sync_dir(&dir)?;
        }
        let (store, outline) = match Store::open(&dir, options.store_options())? {
            Some((store, header)) => {
                let outline = if header.restructured { Outline::essbench_restructured() } else { Outline::essbench() };
                if header.cells as usize != outline.cells_per_block() {
                    return Err(CubeError::CorruptIndex {
                        path: store.index_path(),
                        reason: format!("blocks of {} cells do not match the outline", header.cells),
                    });
                }
                (store, outline)
            }
            None => {
                let outline = Outline::essbench();
                let store = Store::create(&dir, 1, outline.cells_per_block(), false, options.store_options())?;
                store.sync()?;
                (store, outline)
            }
        };
        Ok(Cube { dir, options, outline: Arc::new(outline), store, retired_io: IoTotals::default(), recovered })
    }

    /// Open a finished cube to read it: nothing is created, reset or written. Refused when the directory is not a
    /// cube envbench made, holds no cube, or was left mid-step (by a run that ended without finishing it; a running
    /// writer is kept out by the caller's shared [`crate::places::CubeLock`]).
    pub fn open_existing(dir: impl AsRef<Path>) -> Result<Cube, CubeError> {
        let dir = dir.as_ref().to_path_buf();
        if !crate::places::check(&dir, crate::places::Place::Cube)? {
            return Err(CubeError::NoCube { dir });
        }
        if let Some(step) = Cube::interrupted_step(&dir)? {
            return Err(CubeError::LeftMidStep { dir, step });
        }
        let options = StoreOptions { read_only: true, ..CubeOptions::default().store_options() };
        let Some((store, header)) = Store::open(&dir, options)? else {
            return Err(CubeError::NoCube { dir });
        };
        let outline = if header.restructured { Outline::essbench_restructured() } else { Outline::essbench() };
        Ok(Cube {
            dir,
            options: CubeOptions::default(),
            outline: Arc::new(outline),
            store,
            retired_io: IoTotals::default(),
            recovered: None,
        })
    }

    /// What the step-in-progress marker in `dir` says, when there is one (read only).
    pub fn interrupted_step(dir: &Path) -> Result<Option<InterruptedStep>, CubeError> {
        let marker = dir.join(MARKER_FILE);
        match std::fs::read(&marker) {
            Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).unwrap_or(InterruptedStep {
                step: "unknown (unreadable marker)".into(),
                pid: 0,
                started_unix_s: 0,
            }))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(CubeError::Io { path: marker, source: e }),
        }
    }

    /// The step that was interrupted, when opening had to reset the cube.
    pub fn recovered_from(&self) -> Option<&InterruptedStep> {
        self.recovered.as_ref()
    }

    /// True when a step-in-progress marker exists now (another process is mid-step, or one died).
    pub fn is_marked_in_progress(dir: impl AsRef<Path>) -> bool {
        dir.as_ref().join(MARKER_FILE).exists()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn options(&self) -> &CubeOptions {
        &self.options
    }

    pub fn outline(&self) -> &Outline {
        &self.outline
    }

    pub(crate) fn outline_arc(&self) -> Arc<Outline> {
        Arc::clone(&self.outline)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// I/O since the cube was opened, across resets and restructures.
    pub fn io_totals(&self) -> IoTotals {
        let now = self.store.totals();
        IoTotals {
            blocks_read: self.retired_io.blocks_read + now.blocks_read,
            bytes_read: self.retired_io.bytes_read + now.bytes_read,
            blocks_written: self.retired_io.blocks_written + now.blocks_written,
            bytes_written: self.retired_io.bytes_written + now.bytes_written,
            cache_hits: self.retired_io.cache_hits + now.cache_hits,
            cache_misses: self.retired_io.cache_misses + now.cache_misses,
        }
    }

    /// Replace the store (and outline) after a restructure; the old store's I/O stays counted.
    pub(crate) fn swap_store(&mut self, store: Store, outline: Outline) -> Store {
        let old = std::mem::replace(&mut self.store, store);
        self.retire(&old);
        self.outline = Arc::new(outline);
        old
    }

    fn retire(&mut self, old: &Store) {
        let t = old.totals();
        let r = &mut self.retired_io;
        r.blocks_read += t.blocks_read;
        r.bytes_read += t.bytes_read;
        r.blocks_written += t.blocks_written;
        r.bytes_written += t.bytes_written;
        r.cache_hits += t.cache_hits;
        r.cache_misses += t.cache_misses;
    }

    /// Write the step-in-progress marker durably.
    pub fn begin_step(&self, step: &str) -> Result<(), CubeError> {
        let marker = InterruptedStep {
            step: step.to_string(),
            pid: std::process::id(),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let bytes = serde_json::to_vec(&marker).expect("marker serializes");
        write_atomically(&self.dir.join(MARKER_FILE), &bytes)
    }

    /// Make the step's work durable (page files synced, index replaced), then remove the marker.
    pub fn finish_step(&self) -> Result<(), CubeError> {
        self.store.sync()?;
        let marker = self.dir.join(MARKER_FILE);
        match std::fs::remove_file(&marker) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(CubeError::Io { path: marker, source: e }),
        }
        sync_dir(&self.dir)
    }

    /// Run `work` as one durable step: marker, work, sync, marker removed. When `work` fails (or is cancelled) the
    /// marker stays, so the next open resets the cube.
    pub fn durable_step<T>(
        &mut self,
        step: &str,
        work: impl FnOnce(&mut Cube) -> Result<T, CubeError>,
    ) -> Result<T, CubeError> {
        self.begin_step(step)?;
        let value = work(self)?;
        self.finish_step()?;
        Ok(value)
    }

    /// Clear all data: remove every page file and the index, and return to the outline before any restructure.
    /// The options given at open (compression, direct I/O, page file size) apply from here on.
    pub fn reset(&mut self) -> Result<(), CubeError> {
        Store::remove_all(&self.dir)?;
        let outline = Outline::essbench();
        let store = Store::create(&self.dir, 1, outline.cells_per_block(), false, self.options.store_options())?;
        store.sync()?;
        let old = std::mem::replace(&mut self.store, store);
        self.retire(&old);
        self.outline = Arc::new(outline);
        Ok(())
    }

    /// One expanded block, or `None` when it does not exist.
    pub fn block(&self, key: SparseKey) -> Result<Option<Arc<Cells>>, CubeError> {
        self.store.read(key.0)
    }

    /// Every block's key, sorted.
    pub fn block_keys(&self) -> Vec<SparseKey> {
        self.store.keys().into_iter().map(SparseKey).collect()
    }

    /// Blocks, sizes, density and compression, from the index (no block is read).
    pub fn statistics(&self) -> CubeStatistics {
        let outline = &self.outline;
        let entity = outline.dim(Dim::Entity);
        let product = outline.dim(Dim::Product);
        let key_members = outline.key_members();
        let mut by_level: std::collections::BTreeMap<(u8, u8), u64> = Default::default();
        let (mut local, mut usd) = (0u64, 0u64);
        let keys = self.store.keys();
        for &key in &keys {
            let key = SparseKey(key);
            let levels = (entity.member(key.member(Dim::Entity)).level, product.member(key.member(Dim::Product)).level);
            *by_level.entry(levels).or_default() += 1;
            let currency = key.member(Dim::Currency);
            local += u64::from(currency == key_members.local);
            usd += u64::from(currency == key_members.usd);
        }
        let blocks = keys.len() as u64;
        let level0_blocks = by_level.get(&(0, 0)).copied().unwrap_or(0);
        let (present, encoded_bytes) = self.store.density_totals();
        let cells = outline.cells_per_block() as u64;
        let expanded = blocks * cells * 8;
        CubeStatistics {
            blocks,
            level0_blocks,
            upper_blocks: blocks - level0_blocks,
            blocks_by_level: by_level
                .into_iter()
                .map(|((entity_level, product_level), blocks)| LevelBlocks { entity_level, product_level, blocks })
                .collect(),
            local_blocks: local,
            usd_blocks: usd,
            cells_per_block: cells as usize,
            expanded_block_bytes: cells * 8,
            page_files: self.store.file_count(),
            page_file_bytes: self.store.page_file_bytes(),
            free_bytes: self.store.free_bytes(),
            index_bytes: std::fs::metadata(self.store.index_path()).map_or(0, |m| m.len()),
            average_density: if blocks == 0 { 0.0 } else { present as f64 / (blocks * cells) as f64 },
            compression_ratio: if encoded_bytes == 0 { 0.0 } else { expanded as f64 / encoded_bytes as f64 },
            compression: self.store.codec().compression,
            restructured: outline.is_restructured(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::empty_cells;
    use crate::testdir::tempdir;

    #[test]
    fn an_interrupted_step_is_detected_and_reset_on_open() {
        let dir = tempdir("cube-marker");
        let mut cube = Cube::open(&dir, CubeOptions::default()).unwrap();
        assert!(cube.recovered_from().is_none());
        cube.durable_step("2 native load", |cube| {
            let mut cells = empty_cells(cube.outline().cells_per_block());
            cells[0] = 1.0;
            cube.store().write(5, cells, false)
        })
        .unwrap();
        assert!(!Cube::is_marked_in_progress(&dir));
        drop(cube);
        let cube = Cube::open(&dir, CubeOptions::default()).unwrap();
        assert_eq!(cube.block_keys().len(), 1, "a finished step survives reopening");
        // Simulate a crash: a step started and never finished.
        cube.begin_step("3 csv load").unwrap();
        cube.store().write(6, empty_cells(cube.outline().cells_per_block()), false).unwrap();
        drop(cube);
        assert!(Cube::is_marked_in_progress(&dir));
        let cube = Cube::open(&dir, CubeOptions::default()).unwrap();
        assert_eq!(cube.recovered_from().unwrap().step, "3 csv load");
        assert!(cube.block_keys().is_empty(), "an interrupted cube is reset");
        assert!(!Cube::is_marked_in_progress(&dir));
    }

    #[test]
    fn reset_leaves_no_blocks() {
        let dir = tempdir("cube-reset");
        let mut cube = Cube::open(&dir, CubeOptions::default()).unwrap();
        for key in 0..10 {
            cube.store().write(key, empty_cells(cube.outline().cells_per_block()), false).unwrap();
        }
        cube.finish_step().unwrap();
        cube.durable_step("1 reset", |cube| cube.reset()).unwrap();
        assert!(cube.block_keys().is_empty());
        assert_eq!(cube.statistics().blocks, 0);
        drop(cube);
        assert!(Cube::open(&dir, CubeOptions::default()).unwrap().block_keys().is_empty());
    }
}
