//! The cube's index file, `cube.ind`: where every block lives ([`Location`]) and what the store's blocks are
//! ([`IndexHeader`]), encoded and parsed. The store rewrites it atomically at the end of every step.
//!
//! Layout (little-endian): magic `EBCUBIDX`, version (u32), generation (u32), compression code, restructured and
//! direct-I/O flags and a zero byte, cells per block (u32), page files (u32), entry count (u64), then per block its
//! key (u64), page file (u16), offset (u64), capacity, length and present cells (u32 each), and the trailer
//! `EBCUBEND`.

use crate::block::Compression;
use crate::error::CubeError;
use std::path::Path;

/// The index's name in the cube directory.
pub(crate) const INDEX_FILE: &str = "cube.ind";
const INDEX_MAGIC: &[u8; 8] = b"EBCUBIDX";
const INDEX_TRAILER: &[u8; 8] = b"EBCUBEND";
const INDEX_VERSION: u32 = 1;
const ENTRY_BYTES: usize = 30;

/// Where a block lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub file: u16,
    pub offset: u64,
    /// Bytes reserved for the slot (a multiple of the alignment).
    pub capacity: u32,
    /// Header and payload bytes.
    pub len: u32,
    pub present: u32,
}

/// What the index file says besides the locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexHeader {
    pub generation: u32,
    pub compression: Compression,
    pub restructured: bool,
    pub direct_io: bool,
    pub cells: u32,
}

/// The bytes of an index: `header`, the number of page files and every block's location (sorted by key).
pub(crate) fn encode_index(header: &IndexHeader, page_files: usize, entries: &[(u64, Location)]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(64 + entries.len() * ENTRY_BYTES);
    bytes.extend_from_slice(INDEX_MAGIC);
    bytes.extend_from_slice(&INDEX_VERSION.to_le_bytes());
    bytes.extend_from_slice(&header.generation.to_le_bytes());
    bytes.extend_from_slice(&[header.compression.code(), u8::from(header.restructured), u8::from(header.direct_io), 0]);
    bytes.extend_from_slice(&header.cells.to_le_bytes());
    bytes.extend_from_slice(&(page_files as u32).to_le_bytes());
    bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (key, l) in entries {
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(&l.file.to_le_bytes());
        bytes.extend_from_slice(&l.offset.to_le_bytes());
        bytes.extend_from_slice(&l.capacity.to_le_bytes());
        bytes.extend_from_slice(&l.len.to_le_bytes());
        bytes.extend_from_slice(&l.present.to_le_bytes());
    }
    bytes.extend_from_slice(INDEX_TRAILER);
    bytes
}

/// What an index holds: its header, the number of page files and every block's location.
pub(crate) type IndexContents = (IndexHeader, usize, Vec<(u64, Location)>);

pub(crate) fn parse_index(path: &Path, bytes: &[u8]) -> Result<IndexContents, CubeError> {
    let bad = |reason: &str| CubeError::CorruptIndex { path: path.to_path_buf(), reason: reason.to_string() };
    const HEADER: usize = 8 + 4 + 4 + 4 + 4 + 4 + 8;
    if bytes.len() < HEADER + 8 || &bytes[..8] != INDEX_MAGIC {
        return Err(bad("wrong magic number"));
    }
    if &bytes[bytes.len() - 8..] != INDEX_TRAILER {
        return Err(bad("truncated"));
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    if u32_at(8) != INDEX_VERSION {
        return Err(bad("written by another version of envbench"));
    }
    let generation = u32_at(12);
    let compression = Compression::from_code(bytes[16]).ok_or_else(|| bad("unknown compression"))?;
    let header = IndexHeader {
        generation,
        compression,
        restructured: bytes[17] == 1,
        direct_io: bytes[18] == 1,
        cells: u32_at(20),
    };
    let page_files = u32_at(24) as usize;
    let count = u64::from_le_bytes(bytes[28..36].try_into().expect("8 bytes")) as usize;
    if bytes.len() != HEADER + count * ENTRY_BYTES + 8 {
        return Err(bad("entry count does not match the file size"));
    }
    let entries = bytes[HEADER..HEADER + count * ENTRY_BYTES]
        .chunks_exact(ENTRY_BYTES)
        .map(|e| {
            let key = u64::from_le_bytes(e[0..8].try_into().expect("8 bytes"));
            let location = Location {
                file: u16::from_le_bytes(e[8..10].try_into().expect("2 bytes")),
                offset: u64::from_le_bytes(e[10..18].try_into().expect("8 bytes")),
                capacity: u32::from_le_bytes(e[18..22].try_into().expect("4 bytes")),
                len: u32::from_le_bytes(e[22..26].try_into().expect("4 bytes")),
                present: u32::from_le_bytes(e[26..30].try_into().expect("4 bytes")),
            };
            (key, location)
        })
        .collect();
    Ok((header, page_files, entries))
}
