//! Blocks and their compression.
//!
//! An expanded block is every stored dense cell of one sparse combination, account-major: the cell of stored
//! account row `a` and stored period `p` is `a * 14 + p`. A missing cell holds [`MISSING`], a NaN, so missing and
//! zero stay distinct; any NaN reads as missing.
//!
//! On disk a block is encoded by one of three [`Compression`]s:
//! - `bitmap` (default): one bit per cell (present or not), then the present values packed in cell order;
//! - `zlib`: the bitmap encoding, deflated (fast level);
//! - `none`: every cell, 8 bytes each.

use crate::error::CubeError;
use crate::outline::{Outline, STORED_PERIODS, TimeBalance, YEAR_TOTAL};
use flate2::Compression as DeflateLevel;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// The value of a missing cell: a quiet NaN with a recognisable payload.
pub const MISSING: f64 = f64::from_bits(0x7FF8_0000_0000_0BAD);

/// True when a cell is missing (any NaN).
#[inline]
pub fn is_missing(value: f64) -> bool {
    value.is_nan()
}

/// A cell value for people: `None` when missing.
pub fn present(value: f64) -> Option<f64> {
    (!is_missing(value)).then_some(value)
}

/// Add `value` into `total`, treating missing as "no value" rather than zero.
#[inline]
pub fn add_missing_aware(total: f64, value: f64) -> f64 {
    if is_missing(total) {
        value
    } else if is_missing(value) {
        total
    } else {
        total + value
    }
}

/// An expanded block: `cells_per_block` cells.
pub type Cells = Vec<f64>;

/// A block with every cell missing.
pub fn empty_cells(cells: usize) -> Cells {
    vec![MISSING; cells]
}

/// Add every present cell of `from` into `into`.
pub fn add_block(into: &mut [f64], from: &[f64]) {
    for (total, &value) in into.iter_mut().zip(from) {
        *total = add_missing_aware(*total, value);
    }
}

/// Number of present cells.
pub fn present_cells(cells: &[f64]) -> u32 {
    cells.iter().filter(|v| !is_missing(**v)).count() as u32
}

/// Recompute the stored YearTotal of every account row from the months: the sum for flows, December for balances
/// (missing when the months are all missing, or when December is missing for a balance).
pub fn recompute_year_totals(outline: &Outline, cells: &mut [f64]) {
    for row in 0..outline.stored_accounts() {
        let base = row * STORED_PERIODS;
        let months = &cells[base + 1..base + 13];
        let total = match outline.account_info(row).time_balance {
            TimeBalance::Flow => months.iter().fold(MISSING, |t, &v| add_missing_aware(t, v)),
            TimeBalance::Last => months[11],
        };
        cells[base + YEAR_TOTAL] = total;
    }
}

/// How blocks are compressed on disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// A presence bitmap and the present values packed (Essbase's default).
    #[default]
    Bitmap,
    /// The bitmap encoding, deflated.
    Zlib,
    /// Every cell as 8 bytes.
    None,
}

impl Compression {
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::Bitmap => "bitmap",
            Compression::Zlib => "zlib",
            Compression::None => "none",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Compression::Bitmap => 0,
            Compression::Zlib => 1,
            Compression::None => 2,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Compression> {
        match code {
            0 => Some(Compression::Bitmap),
            1 => Some(Compression::Zlib),
            2 => Some(Compression::None),
            _ => None,
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = CubeError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "bitmap" => Ok(Compression::Bitmap),
            "zlib" => Ok(Compression::Zlib),
            "none" => Ok(Compression::None),
            other => Err(CubeError::Config(format!("compression '{other}' is unknown: use bitmap, zlib or none"))),
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Encodes and decodes blocks of one layout with one compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Codec {
    pub compression: Compression,
    pub cells: usize,
}

/// Why a payload could not be decoded.
pub type DecodeError = String;

impl Codec {
    pub fn new(compression: Compression, cells: usize) -> Codec {
        Codec { compression, cells }
    }

    fn bitmap_words(&self) -> usize {
        self.cells.div_ceil(64)
    }

    /// Append the encoding of `cells` to `out`; returns the number of present cells.
    pub fn encode(&self, cells: &[f64], out: &mut Vec<u8>) -> u32 {
        debug_assert_eq!(cells.len(), self.cells);
        match self.compression {
            Compression::Bitmap => encode_bitmap(cells, out),
            Compression::None => {
                out.reserve(cells.len() * 8);
                for v in cells {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                present_cells(cells)
            }
            Compression::Zlib => {
                let mut raw = Vec::with_capacity(self.bitmap_words() * 8 + cells.len());
                let present = encode_bitmap(cells, &mut raw);
                let mut encoder = ZlibEncoder::new(out, DeflateLevel::fast());
                encoder.write_all(&raw).expect("writing into a Vec cannot fail");
                encoder.finish().expect("writing into a Vec cannot fail");
                present
            }
        }
    }

    /// Decode a payload into `out` (`cells` long), overwriting every cell.
    pub fn decode(&self, payload: &[u8], out: &mut [f64]) -> Result<(), DecodeError> {
        out.fill(MISSING);
        self.visit(payload, |cell, value| out[cell] = value)
    }

    /// Add every present cell of a payload into `into` (missing-aware), without expanding the block first.
    pub fn add_into(&self, payload: &[u8], into: &mut [f64]) -> Result<(), DecodeError> {
        self.visit(payload, |cell, value| into[cell] = add_missing_aware(into[cell], value))
    }

    /// Call `f(cell, value)` for every present cell, in cell order.
    pub fn visit(&self, payload: &[u8], f: impl FnMut(usize, f64)) -> Result<(), DecodeError> {
        match self.compression {
            Compression::Bitmap => visit_bitmap(self.cells, payload, f),
            Compression::None => {
                if payload.len() != self.cells * 8 {
                    return Err(format!("{} bytes where {} were expected", payload.len(), self.cells * 8));
                }
                let mut f = f;
                for (cell, chunk) in payload.chunks_exact(8).enumerate() {
                    let value = f64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                    if !is_missing(value) {
                        f(cell, value);
                    }
                }
                Ok(())
            }
            Compression::Zlib => {
                let mut raw = Vec::with_capacity(self.bitmap_words() * 8 + self.cells);
                ZlibDecoder::new(payload).read_to_end(&mut raw).map_err(|e| format!("inflate failed: {e}"))?;
                visit_bitmap(self.cells, &raw, f)
            }
        }
    }

    /// Re-encode a payload of this codec's layout into `target`'s layout, moving cell `i` to `remap[i]`. `remap`
    /// must be increasing (a dense restructure that inserts or appends members). With bitmap compression on both
    /// sides the packed values are copied as they are and only the bitmap is rebuilt.
    pub fn relayout(
        &self,
        payload: &[u8],
        target: &Codec,
        remap: &[u32],
        out: &mut Vec<u8>,
    ) -> Result<u32, DecodeError> {
        debug_assert_eq!(remap.len(), self.cells);
        if self.compression == Compression::Bitmap && target.compression == Compression::Bitmap {
            let words = self.bitmap_words();
            if payload.len() < words * 8 {
                return Err("payload shorter than its bitmap".into());
            }
            let (bitmap, values) = payload.split_at(words * 8);
            let mut new_bitmap = vec![0u64; target.bitmap_words()];
            let mut present = 0u32;
            for (w, chunk) in bitmap.chunks_exact(8).enumerate() {
                let mut word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                while word != 0 {
                    let cell = w * 64 + word.trailing_zeros() as usize;
                    word &= word - 1;
                    let new_cell = *remap.get(cell).ok_or("bitmap marks a cell past the block")? as usize;
                    new_bitmap[new_cell / 64] |= 1 << (new_cell % 64);
                    present += 1;
                }
            }
            if values.len() != present as usize * 8 {
                return Err(format!("{present} cells marked but {} values stored", values.len() / 8));
            }
            for word in new_bitmap {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(values);
            return Ok(present);
        }
        let mut cells = empty_cells(target.cells);
        self.visit(payload, |cell, value| cells[remap[cell] as usize] = value)?;
        Ok(target.encode(&cells, out))
    }
}

fn encode_bitmap(cells: &[f64], out: &mut Vec<u8>) -> u32 {
    let words = cells.len().div_ceil(64);
    let bitmap_at = out.len();
    out.resize(bitmap_at + words * 8, 0);
    let mut present = 0u32;
    for (w, chunk) in cells.chunks(64).enumerate() {
        let mut word = 0u64;
        for (bit, value) in chunk.iter().enumerate() {
            word |= u64::from(!is_missing(*value)) << bit;
        }
        if word != 0 {
            out[bitmap_at + w * 8..bitmap_at + w * 8 + 8].copy_from_slice(&word.to_le_bytes());
            let mut bits = word;
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                out.extend_from_slice(&chunk[bit].to_le_bytes());
            }
            present += word.count_ones();
        }
    }
    present
}

fn visit_bitmap(cells: usize, payload: &[u8], mut f: impl FnMut(usize, f64)) -> Result<(), DecodeError> {
    let words = cells.div_ceil(64);
    if payload.len() < words * 8 {
        return Err(format!("payload of {} bytes is shorter than its {}-byte bitmap", payload.len(), words * 8));
    }
    let (bitmap, values) = payload.split_at(words * 8);
    let mut next = 0usize;
    for (w, chunk) in bitmap.chunks_exact(8).enumerate() {
        let mut word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        while word != 0 {
            let cell = w * 64 + word.trailing_zeros() as usize;
            word &= word - 1;
            if cell >= cells {
                return Err("bitmap marks a cell past the end of the block".into());
            }
            let bytes = values.get(next * 8..next * 8 + 8).ok_or("fewer values than marked cells")?;
            f(cell, f64::from_le_bytes(bytes.try_into().expect("8 bytes")));
            next += 1;
        }
    }
    if next * 8 != values.len() {
        return Err(format!("{next} cells marked but {} values stored", values.len() / 8));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn sample(cells: usize, density: f64, seed: u64) -> Cells {
        let mut rng = Rng::new(seed);
        (0..cells)
            .map(|_| if rng.chance(density) { (rng.below(1_000_000) as f64 - 500_000.0) / 100.0 } else { MISSING })
            .collect()
    }

    #[test]
    fn every_compression_round_trips_and_keeps_zero_apart_from_missing() {
        for compression in [Compression::Bitmap, Compression::Zlib, Compression::None] {
            let codec = Codec::new(compression, 11_732);
            for density in [0.0, 0.03, 0.5, 1.0] {
                let mut cells = sample(codec.cells, density, 3);
                cells[7] = 0.0;
                cells[8] = MISSING;
                let mut payload = Vec::new();
                let present = codec.encode(&cells, &mut payload);
                assert_eq!(present, present_cells(&cells));
                let mut back = empty_cells(codec.cells);
                codec.decode(&payload, &mut back).unwrap();
                assert_eq!(back[7].to_bits(), 0.0f64.to_bits());
                assert!(is_missing(back[8]));
                for (a, b) in cells.iter().zip(&back) {
                    assert!(a.to_bits() == b.to_bits() || (is_missing(*a) && is_missing(*b)));
                }
            }
        }
    }

    #[test]
    fn bitmap_is_much_smaller_for_sparse_blocks() {
        let codec = Codec::new(Compression::Bitmap, 11_732);
        let cells = sample(codec.cells, 0.05, 9);
        let mut payload = Vec::new();
        codec.encode(&cells, &mut payload);
        assert!(payload.len() < 11_732 * 8 / 8, "{} bytes", payload.len());
    }

    #[test]
    fn add_into_matches_expanded_addition() {
        let codec = Codec::new(Compression::Bitmap, 1_400);
        let a = sample(codec.cells, 0.3, 1);
        let b = sample(codec.cells, 0.3, 2);
        let mut payload = Vec::new();
        codec.encode(&b, &mut payload);
        let mut via_payload = a.clone();
        codec.add_into(&payload, &mut via_payload).unwrap();
        let mut expanded = a.clone();
        add_block(&mut expanded, &b);
        for (x, y) in via_payload.iter().zip(&expanded) {
            assert!(x.to_bits() == y.to_bits() || (is_missing(*x) && is_missing(*y)));
        }
    }

    #[test]
    fn relayout_moves_cells_in_every_compression() {
        let remap: Vec<u32> = (0..140u32).map(|i| if i < 28 { i } else { i + 14 }).collect();
        let cells = sample(140, 0.4, 5);
        for (from, to) in [
            (Compression::Bitmap, Compression::Bitmap),
            (Compression::Zlib, Compression::Zlib),
            (Compression::None, Compression::Bitmap),
        ] {
            let source = Codec::new(from, 140);
            let target = Codec::new(to, 154);
            let mut payload = Vec::new();
            source.encode(&cells, &mut payload);
            let mut moved = Vec::new();
            target_relayout(&source, &target, &payload, &remap, &mut moved);
            let mut back = empty_cells(154);
            target.decode(&moved, &mut back).unwrap();
            for (i, v) in cells.iter().enumerate() {
                assert_eq!(is_missing(*v), is_missing(back[remap[i] as usize]));
                if !is_missing(*v) {
                    assert_eq!(*v, back[remap[i] as usize]);
                }
            }
            assert!(back[28..42].iter().all(|v| is_missing(*v)));
        }
    }

    fn target_relayout(source: &Codec, target: &Codec, payload: &[u8], remap: &[u32], out: &mut Vec<u8>) {
        source.relayout(payload, target, remap, out).unwrap();
    }

    #[test]
    fn damaged_payloads_are_rejected() {
        let codec = Codec::new(Compression::Bitmap, 128);
        let mut payload = Vec::new();
        codec.encode(&sample(128, 0.5, 4), &mut payload);
        payload.pop();
        assert!(codec.decode(&payload, &mut empty_cells(128)).is_err());
        assert!(codec.decode(&[1, 2, 3], &mut empty_cells(128)).is_err());
    }
}
