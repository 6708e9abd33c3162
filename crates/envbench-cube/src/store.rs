//! The block store: page files of compressed blocks, the index from sparse key to block location, free-space reuse,
//! the data cache, and durability.
//!
//! Layout of a cube directory:
//! - `gNNNN-essNNNNN.pag`: page files of generation `NNNN`, each at most `page_file_max_bytes`. A block occupies a
//!   slot: a 16-byte header (key, payload length, present cells) and its payload, rounded up to 64 bytes (4 KiB
//!   with direct I/O).
//! - `cube.ind`: the index, rewritten (to a temporary file, synced, renamed) at the end of every step.
//!
//! Concurrency: the index and the free lists are split into 64 shards by key hash, each behind its own mutex held
//! only for a map operation; page file space is claimed with an atomic add on the append position; reads and
//! writes use positional I/O with no lock. Two threads must not read and write the same block at once (the steps
//! partition their work so they never do); read-modify-write goes through [`Store::update`], which locks one of 1024
//! stripes by key.
//!
//! The index file's format is in [`crate::index`], a shard of the index and free lists in [`crate::shard`], the I/O
//! counters in [`crate::counters`], atomic file replacement in [`crate::durable`].

use crate::aligned::{BUFFERED_ALIGN, DIRECT_ALIGN, aligned_slice, round_up};
use crate::block::{Cells, Codec, Compression, empty_cells};
use crate::cache::BlockCache;
use crate::counters::Counters;
use crate::counters::IoTotals;
use crate::durable::{sync_dir, write_atomically};
use crate::error::{CubeError, IoContext};
use crate::index::{INDEX_FILE, IndexHeader, Location, encode_index, parse_index};
use crate::shard::Shard;
use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes before each block's payload: key (8), payload length (4), present cells (4).
pub(crate) const HEADER_BYTES: usize = 16;
/// The most page files one generation may have.
pub(crate) const MAX_PAGE_FILES: usize = 4096;
const SHARDS: usize = 64;
const UPDATE_STRIPES: usize = 1024;
const OFFSET_BITS: u32 = 48;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// How a store is laid out and accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    pub compression: Compression,
    pub cache_bytes: u64,
    pub direct_io: bool,
    pub page_file_max_bytes: u64,
    /// Open page files for reading only, and create nothing (a reader of a finished cube).
    pub read_only: bool,
}

thread_local! {
    static ENCODE_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static IO_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Page files, index and cache of one cube generation.
pub struct Store {
    dir: PathBuf,
    generation: u32,
    codec: Codec,
    options: StoreOptions,
    restructured: bool,
    align: u64,
    files: Box<[OnceLock<File>]>,
    append: AtomicU64,
    roll: Mutex<()>,
    shards: Box<[Mutex<Shard>]>,
    update_stripes: Box<[Mutex<()>]>,
    cache: BlockCache,
    counters: Counters,
}

impl Store {
    /// A new, empty store of generation `generation` in `dir` (page files are created as needed).
    pub(crate) fn create(
        dir: &Path,
        generation: u32,
        cells: usize,
        restructured: bool,
        options: StoreOptions,
    ) -> Result<Store, CubeError> {
        std::fs::create_dir_all(dir).at(dir)?;
        let store = Store::empty(dir, generation, cells, restructured, options);
        store.open_page_file(0, true)?;
        Ok(store)
    }

    fn empty(dir: &Path, generation: u32, cells: usize, restructured: bool, options: StoreOptions) -> Store {
        Store {
            dir: dir.to_path_buf(),
            generation,
            codec: Codec::new(options.compression, cells),
            options,
            restructured,
            align: if options.direct_io { DIRECT_ALIGN } else { BUFFERED_ALIGN },
            files: (0..MAX_PAGE_FILES).map(|_| OnceLock::new()).collect(),
            append: AtomicU64::new(0),
            roll: Mutex::new(()),
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            update_stripes: (0..UPDATE_STRIPES).map(|_| Mutex::new(())).collect(),
            cache: BlockCache::new(options.cache_bytes, cells * 8),
            counters: Counters::default(),
        }
    }

    /// Open the store described by `dir/cube.ind`, or `None` when there is no index. The compression, layout and
    /// alignment recorded in the index win over `options` (they describe the blocks on disk); direct I/O is used
    /// only when both the index and `options` ask for it.
    pub(crate) fn open(dir: &Path, options: StoreOptions) -> Result<Option<(Store, IndexHeader)>, CubeError> {
        let path = dir.join(INDEX_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CubeError::Io { path, source: e }),
        };
        let (header, page_files, entries) = parse_index(&path, &bytes)?;
        let effective = StoreOptions {
            compression: header.compression,
            direct_io: header.direct_io && options.direct_io,
            ..options
        };
        let mut store = Store::empty(dir, header.generation, header.cells as usize, header.restructured, effective);
        // Slots of a direct-I/O cube stay 4 KiB aligned even when it is opened buffered.
        if header.direct_io {
            store.align = DIRECT_ALIGN;
        }
        for n in 0..page_files.max(1) {
            store.open_page_file(n, n == 0 && page_files == 0)?;
        }
        let mut extents: Vec<Vec<(u64, u32)>> = vec![Vec::new(); page_files.max(1)];
        for (key, location) in entries {
            if usize::from(location.file) >= page_files {
                return Err(CubeError::CorruptIndex { path, reason: format!("block in page file {}", location.file) });
            }
            extents[usize::from(location.file)].push((location.offset, location.capacity));
            store.shard(key).lock().expect("shard lock").index.insert(key, location);
        }
        // Free space is not persisted: it is every gap between the slots the index knows.
        let last = page_files.max(1) - 1;
        for (file, slots) in extents.iter_mut().enumerate() {
            slots.sort_unstable();
            let mut end = 0u64;
            for &(offset, capacity) in slots.iter() {
                if offset > end {
                    store.release_gap(file as u16, end, offset - end);
                }
                end = end.max(offset + u64::from(capacity));
            }
            if file == last {
                let length = store.file(last)?.metadata().at(&store.page_file_path(last))?.len();
                let tail = round_up(length.max(end), store.align);
                store.append.store(((last as u64) << OFFSET_BITS) | tail, Ordering::Release);
            }
        }
        Ok(Some((store, header)))
    }

    fn release_gap(&self, file: u16, offset: u64, length: u64) {
        let mut shard = self.shards[(offset / self.align) as usize % SHARDS].lock().expect("shard lock");
        let mut start = offset;
        let mut rest = length;
        while rest >= self.align {
            let piece = rest.min(u64::from(u32::MAX) / self.align * self.align);
            shard.release(file, start, piece as u32);
            start += piece;
            rest -= piece;
        }
    }

    /// Remove every page file and the index from `dir` (any generation).
    pub(crate) fn remove_all(dir: &Path) -> Result<(), CubeError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(CubeError::Io { path: dir.to_path_buf(), source: e }),
        };
        for entry in entries {
            let entry = entry.at(dir)?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if crate::places::is_page_file(&name) || name == INDEX_FILE || name == "cube.tmp" {
                std::fs::remove_file(entry.path()).at(&entry.path())?;
            }
        }
        sync_dir(dir)
    }

    /// Remove this generation's page files (after a newer generation was swapped in).
    pub(crate) fn remove_page_files(&self) -> Result<(), CubeError> {
        for n in 0..self.file_count() {
            let path = self.page_file_path(n);
            std::fs::remove_file(&path).at(&path)?;
        }
        sync_dir(&self.dir)
    }

    pub fn page_file_path(&self, n: usize) -> PathBuf {
        self.dir.join(format!("g{:04}-ess{:05}.pag", self.generation, n + 1))
    }

    fn open_page_file(&self, n: usize, create: bool) -> Result<&File, CubeError> {
        if n >= MAX_PAGE_FILES {
            return Err(CubeError::TooManyPageFiles { limit: MAX_PAGE_FILES });
        }
        if let Some(file) = self.files[n].get() {
            return Ok(file);
        }
        let path = self.page_file_path(n);
        let mut open = OpenOptions::new();
        open.read(true).write(!self.options.read_only).create(create && !self.options.read_only);
        if self.options.direct_io {
            open.custom_flags(libc::O_DIRECT);
        }
        let file = open.open(&path).map_err(|source| {
            if self.options.direct_io && source.raw_os_error() == Some(libc::EINVAL) {
                CubeError::DirectIoUnsupported { path: path.clone(), source }
            } else {
                CubeError::Io { path: path.clone(), source }
            }
        })?;
        Ok(self.files[n].get_or_init(|| file))
    }

    fn file(&self, n: usize) -> Result<&File, CubeError> {
        self.files.get(n).and_then(|f| f.get()).ok_or_else(|| CubeError::CorruptIndex {
            path: self.dir.join(INDEX_FILE),
            reason: format!("page file {} is not open", n + 1),
        })
    }

    /// Page files in use.
    pub fn file_count(&self) -> usize {
        (self.append.load(Ordering::Acquire) >> OFFSET_BITS) as usize + 1
    }

    pub fn codec(&self) -> Codec {
        self.codec
    }

    pub fn options(&self) -> StoreOptions {
        self.options
    }

    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    pub(crate) fn align(&self) -> u64 {
        self.align
    }

    fn shard(&self, key: u64) -> &Mutex<Shard> {
        &self.shards[(crate::rng::mix(key) % SHARDS as u64) as usize]
    }

    pub(crate) fn location(&self, key: u64) -> Option<Location> {
        self.shard(key).lock().expect("shard lock").index.get(&key).copied()
    }

    pub fn contains(&self, key: u64) -> bool {
        self.location(key).is_some()
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().expect("shard lock").index.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every block key, sorted.
    pub fn keys(&self) -> Vec<u64> {
        let mut keys: Vec<u64> = Vec::with_capacity(self.len());
        for shard in self.shards.iter() {
            keys.extend(shard.lock().expect("shard lock").index.keys().copied());
        }
        keys.sort_unstable();
        keys
    }

    /// Every block and its location, sorted by page file and offset (the order to read them sequentially).
    pub(crate) fn locations_by_position(&self) -> Vec<(u64, Location)> {
        let mut all: Vec<(u64, Location)> = Vec::with_capacity(self.len());
        for shard in self.shards.iter() {
            all.extend(shard.lock().expect("shard lock").index.iter().map(|(k, l)| (*k, *l)));
        }
        all.sort_unstable_by_key(|(_, l)| (l.file, l.offset));
        all
    }

    /// Free bytes inside page files, ready for reuse.
    pub fn free_bytes(&self) -> u64 {
        self.shards.iter().map(|s| s.lock().expect("shard lock").free_bytes).sum()
    }

    pub fn totals(&self) -> IoTotals {
        self.counters.totals()
    }

    /// Bytes of page files on disk.
    pub fn page_file_bytes(&self) -> u64 {
        (0..self.file_count())
            .filter_map(|n| self.files[n].get().and_then(|f| f.metadata().ok()))
            .map(|m| m.len())
            .sum()
    }

    /// Read a slot's bytes (`len` rounded up for direct I/O) into `buffer` and return the header-checked payload.
    pub(crate) fn read_slot<'b>(
        &self,
        key: u64,
        location: Location,
        raw: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], CubeError> {
        let read_len = if self.options.direct_io {
            round_up(u64::from(location.len), self.align) as usize
        } else {
            location.len as usize
        };
        let buffer = aligned_slice(raw, read_len, self.align as usize);
        let file = self.file(usize::from(location.file))?;
        file.read_exact_at(buffer, location.offset).at(&self.page_file_path(usize::from(location.file)))?;
        Counters::add(&self.counters.blocks_read, 1);
        Counters::add(&self.counters.bytes_read, read_len as u64);
        let slot = &buffer[..location.len as usize];
        self.check_header(key, location, slot)?;
        Ok(&slot[HEADER_BYTES..])
    }

    pub(crate) fn check_header(&self, key: u64, location: Location, slot: &[u8]) -> Result<(), CubeError> {
        let stored_key = u64::from_le_bytes(slot[0..8].try_into().expect("8 bytes"));
        let payload_len = u32::from_le_bytes(slot[8..12].try_into().expect("4 bytes"));
        if stored_key != key || payload_len as usize + HEADER_BYTES != location.len as usize {
            return Err(self.corrupt(key, location, "header does not match the index".into()));
        }
        Ok(())
    }

    pub(crate) fn corrupt(&self, key: u64, location: Location, reason: String) -> CubeError {
        CubeError::CorruptBlock {
            key,
            path: self.page_file_path(usize::from(location.file)),
            offset: location.offset,
            reason,
        }
    }

    /// Run `f` on a block's payload (without caching it). `None` when the block does not exist.
    fn with_payload<R>(&self, key: u64, f: impl FnOnce(&[u8]) -> Result<R, String>) -> Result<Option<R>, CubeError> {
        let Some(location) = self.location(key) else { return Ok(None) };
        IO_BUFFER.with(|raw| {
            let mut raw = raw.borrow_mut();
            let payload = self.read_slot(key, location, &mut raw)?;
            f(payload).map(Some).map_err(|reason| self.corrupt(key, location, reason))
        })
    }

    /// The expanded block, from the cache or from disk (then cached). `None` when the block does not exist.
    pub fn read(&self, key: u64) -> Result<Option<Arc<Cells>>, CubeError> {
        if let Some(cells) = self.cache.get(key) {
            Counters::add(&self.counters.cache_hits, 1);
            return Ok(Some(cells));
        }
        Counters::add(&self.counters.cache_misses, 1);
        let codec = self.codec;
        let cells = self.with_payload(key, |payload| {
            let mut cells = empty_cells(codec.cells);
            codec.decode(payload, &mut cells)?;
            Ok(cells)
        })?;
        Ok(cells.map(|cells| {
            let cells = Arc::new(cells);
            self.cache.insert(key, Arc::clone(&cells));
            cells
        }))
    }

    /// Read a block into `out` without caching it (for scans that touch each block once). False when absent.
    pub fn read_into(&self, key: u64, out: &mut [f64]) -> Result<bool, CubeError> {
        if let Some(cells) = self.cache.get(key) {
            Counters::add(&self.counters.cache_hits, 1);
            out.copy_from_slice(&cells);
            return Ok(true);
        }
        let codec = self.codec;
        Ok(self.with_payload(key, |payload| codec.decode(payload, out))?.is_some())
    }

    /// Add a block's present cells into `into` (missing-aware). False when the block does not exist.
    pub fn add_into(&self, key: u64, into: &mut [f64]) -> Result<bool, CubeError> {
        if let Some(cells) = self.cache.get(key) {
            Counters::add(&self.counters.cache_hits, 1);
            crate::block::add_block(into, &cells);
            return Ok(true);
        }
        let codec = self.codec;
        Ok(self.with_payload(key, |payload| codec.add_into(payload, into))?.is_some())
    }

    /// Write a block (created or replaced). `keep_in_cache` keeps the expanded block for later reads; otherwise any
    /// cached copy is dropped.
    pub fn write(&self, key: u64, cells: Cells, keep_in_cache: bool) -> Result<(), CubeError> {
        self.write_cells(key, &cells)?;
        if keep_in_cache {
            self.cache.insert(key, Arc::new(cells));
        } else {
            self.cache.remove(key);
        }
        Ok(())
    }

    /// Read-modify-write one block under its stripe lock; a missing block starts with every cell missing.
    pub fn update(&self, key: u64, keep_in_cache: bool, f: impl FnOnce(&mut Cells)) -> Result<(), CubeError> {
        let _stripe = self.update_stripes[(crate::rng::mix(key) % UPDATE_STRIPES as u64) as usize]
            .lock()
            .expect("update stripe lock");
        let mut cells = match self.cache.get(key) {
            Some(cached) => {
                Counters::add(&self.counters.cache_hits, 1);
                Cells::clone(&cached)
            }
            None => {
                let mut cells = empty_cells(self.codec.cells);
                self.read_into(key, &mut cells)?;
                cells
            }
        };
        f(&mut cells);
        self.write(key, cells, keep_in_cache)
    }

    fn write_cells(&self, key: u64, cells: &[f64]) -> Result<(), CubeError> {
        ENCODE_BUFFER.with(|buffer| {
            let mut buffer = buffer.borrow_mut();
            buffer.clear();
            buffer.extend_from_slice(&[0u8; HEADER_BYTES]);
            let present = self.codec.encode(cells, &mut buffer);
            let len = buffer.len();
            buffer[0..8].copy_from_slice(&key.to_le_bytes());
            buffer[8..12].copy_from_slice(&((len - HEADER_BYTES) as u32).to_le_bytes());
            buffer[12..16].copy_from_slice(&present.to_le_bytes());
            let location = self.place(key, len as u32, present)?;
            self.write_at(location, &buffer)
        })
    }

    /// Choose the slot for a block of `len` bytes and record it in the index: in place when it still fits without
    /// wasting more than half the slot, else the best free slot of the shard, else the end of the current page file.
    fn place(&self, key: u64, len: u32, present: u32) -> Result<Location, CubeError> {
        let size = round_up(u64::from(len), self.align);
        let mut shard = self.shard(key).lock().expect("shard lock");
        let old = shard.index.get(&key).copied();
        let (file, offset, capacity) = match old {
            Some(l) if size <= u64::from(l.capacity) && size * 2 >= u64::from(l.capacity) => {
                (l.file, l.offset, l.capacity)
            }
            _ => {
                if let Some(l) = old {
                    shard.release(l.file, l.offset, l.capacity);
                }
                match shard.take(size as u32, self.align) {
                    Some(slot) => slot,
                    None => {
                        let (file, offset) = self.claim(size)?;
                        (file, offset, size as u32)
                    }
                }
            }
        };
        let location = Location { file, offset, capacity, len, present };
        shard.index.insert(key, location);
        Ok(location)
    }

    /// Claim `size` bytes at the end of the current page file, starting a new one when it is full.
    pub(crate) fn claim(&self, size: u64) -> Result<(u16, u64), CubeError> {
        loop {
            let current = self.append.load(Ordering::Acquire);
            let (file, offset) = (current >> OFFSET_BITS, current & OFFSET_MASK);
            if offset == 0 || offset + size <= self.options.page_file_max_bytes {
                if self
                    .append
                    .compare_exchange_weak(current, current + size, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Ok((file as u16, offset));
                }
                continue;
            }
            let _roll = self.roll.lock().expect("roll lock");
            if self.append.load(Ordering::Acquire) >> OFFSET_BITS != file {
                continue;
            }
            let next = file as usize + 1;
            self.open_page_file(next, true)?;
            self.append.store((next as u64) << OFFSET_BITS, Ordering::Release);
        }
    }

    /// Write a slot's bytes at its location (padded to the alignment for direct I/O).
    pub(crate) fn write_at(&self, location: Location, bytes: &[u8]) -> Result<(), CubeError> {
        let file = self.file(usize::from(location.file))?;
        let path = || self.page_file_path(usize::from(location.file));
        if self.options.direct_io {
            let padded = round_up(bytes.len() as u64, self.align) as usize;
            IO_BUFFER.with(|raw| {
                let mut raw = raw.borrow_mut();
                let buffer = aligned_slice(&mut raw, padded, self.align as usize);
                buffer[..bytes.len()].copy_from_slice(bytes);
                buffer[bytes.len()..].fill(0);
                file.write_all_at(buffer, location.offset).at(&path())
            })?;
            Counters::add(&self.counters.bytes_written, padded as u64);
        } else {
            file.write_all_at(bytes, location.offset).at(&path())?;
            Counters::add(&self.counters.bytes_written, bytes.len() as u64);
        }
        Counters::add(&self.counters.blocks_written, 1);
        Ok(())
    }

    /// Write a run of already-encoded slots (from a restructure) at the end of the page files in one call and index
    /// them (through an aligned copy for direct I/O). `slots` are `(key, offset within run, len, present)`; every slot starts aligned.
    pub(crate) fn append_run(&self, run: &[u8], slots: &[(u64, u64, u32, u32)]) -> Result<(), CubeError> {
        let size = round_up(run.len() as u64, self.align);
        let (file, start) = self.claim(size)?;
        let handle = self.file(usize::from(file))?;
        let path = self.page_file_path(usize::from(file));
        if self.options.direct_io {
            IO_BUFFER.with(|raw| {
                let mut raw = raw.borrow_mut();
                let buffer = aligned_slice(&mut raw, size as usize, self.align as usize);
                buffer[..run.len()].copy_from_slice(run);
                buffer[run.len()..].fill(0);
                handle.write_all_at(buffer, start).at(&path)
            })?;
        } else {
            handle.write_all_at(run, start).at(&path)?;
        }
        Counters::add(&self.counters.bytes_written, size);
        Counters::add(&self.counters.blocks_written, slots.len() as u64);
        for (i, &(key, offset, len, present)) in slots.iter().enumerate() {
            let end = slots.get(i + 1).map_or(size, |next| next.1);
            let location = Location { file, offset: start + offset, capacity: (end - offset) as u32, len, present };
            self.shard(key).lock().expect("shard lock").index.insert(key, location);
        }
        Ok(())
    }

    /// Count a read done outside [`Store::read_slot`] (bulk reads of a restructure).
    pub(crate) fn count_read(&self, blocks: u64, bytes: u64) {
        Counters::add(&self.counters.blocks_read, blocks);
        Counters::add(&self.counters.bytes_read, bytes);
    }

    pub(crate) fn read_exact_at(&self, file: u16, offset: u64, buffer: &mut [u8]) -> Result<(), CubeError> {
        self.file(usize::from(file))?.read_exact_at(buffer, offset).at(&self.page_file_path(usize::from(file)))
    }

    /// Make everything durable: flush the page files, then replace the index atomically.
    pub fn sync(&self) -> Result<(), CubeError> {
        for n in 0..self.file_count() {
            if let Some(file) = self.files[n].get() {
                file.sync_data().at(&self.page_file_path(n))?;
            }
        }
        let mut entries: Vec<(u64, Location)> = Vec::with_capacity(self.len());
        for shard in self.shards.iter() {
            entries.extend(shard.lock().expect("shard lock").index.iter().map(|(k, l)| (*k, *l)));
        }
        entries.sort_unstable_by_key(|(k, _)| *k);
        let header = IndexHeader {
            generation: self.generation,
            compression: self.codec.compression,
            restructured: self.restructured,
            direct_io: self.align == DIRECT_ALIGN,
            cells: self.codec.cells as u32,
        };
        let bytes = encode_index(&header, self.file_count(), &entries);
        write_atomically(&self.dir.join(INDEX_FILE), &bytes)
    }

    /// Drop every cached block.
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    /// Present cells and encoded bytes over all blocks, from the index alone.
    pub(crate) fn density_totals(&self) -> (u64, u64) {
        let mut present = 0u64;
        let mut bytes = 0u64;
        for shard in self.shards.iter() {
            for l in shard.lock().expect("shard lock").index.values() {
                present += u64::from(l.present);
                bytes += u64::from(l.len);
            }
        }
        (present, bytes)
    }

    pub(crate) fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{MISSING, is_missing};
    use crate::testdir::tempdir;

    fn options(cache_bytes: u64) -> StoreOptions {
        StoreOptions {
            compression: Compression::Bitmap,
            cache_bytes,
            direct_io: false,
            page_file_max_bytes: 64 << 10,
            read_only: false,
        }
    }

    fn block(cells: usize, value: f64, present: usize) -> Cells {
        (0..cells).map(|i| if i < present { value + i as f64 } else { MISSING }).collect()
    }

    #[test]
    fn blocks_survive_reopen_and_page_files_roll_over() {
        let dir = tempdir("store-reopen");
        let store = Store::create(&dir, 1, 1400, false, options(0)).unwrap();
        for key in 0..200u64 {
            store.write(key, block(1400, key as f64, 100 + key as usize), false).unwrap();
        }
        store.sync().unwrap();
        assert!(store.file_count() > 1, "64 KiB page files must roll over");
        drop(store);
        let (store, header) = Store::open(&dir, options(1 << 20)).unwrap().unwrap();
        assert_eq!(header.cells, 1400);
        assert_eq!(store.len(), 200);
        for key in [0u64, 77, 199] {
            let cells = store.read(key).unwrap().unwrap();
            assert_eq!(cells[0], key as f64);
            assert!(is_missing(cells[100 + key as usize]));
        }
        assert!(store.read(500).unwrap().is_none());
    }

    #[test]
    fn rewritten_blocks_reuse_free_space() {
        let dir = tempdir("store-free");
        let store = Store::create(&dir, 1, 1400, false, options(0)).unwrap();
        for key in 0..50u64 {
            store.write(key, block(1400, 1.0, 1000), false).unwrap();
        }
        let size_after_first = store.page_file_bytes();
        // Shrink every block (moves them to smaller slots, freeing the big ones), then grow them back.
        for round in 0..4 {
            let present = if round % 2 == 0 { 50 } else { 1000 };
            for key in 0..50u64 {
                store.write(key, block(1400, 2.0, present), false).unwrap();
            }
        }
        assert!(store.page_file_bytes() <= size_after_first * 2, "free space is reused");
        for key in 0..50u64 {
            assert_eq!(store.read(key).unwrap().unwrap()[999], 2.0 + 999.0);
        }
    }

    #[test]
    fn a_damaged_block_is_reported() {
        let dir = tempdir("store-damaged");
        let store = Store::create(&dir, 1, 140, false, options(0)).unwrap();
        store.write(9, block(140, 1.0, 10), false).unwrap();
        let location = store.location(9).unwrap();
        store.file(0).unwrap().write_all_at(&[0xFF; 8], location.offset).unwrap();
        let error = store.read(9).unwrap_err().to_string();
        assert!(error.contains("damaged"), "{error}");
    }
}
