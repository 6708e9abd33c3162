//! The dense restructure (step 8): add one stored account and move every block to the new layout.
//!
//! Every block is read (in page-file order, in runs of up to 8 MiB), re-laid out (its cells move to their rows in
//! the new outline; the new row is missing), re-encoded and appended to the page files of a new generation in runs
//! of the same size. When all blocks are written, the new page files are synced and the new index replaces the old
//! one in one rename (the swap); then the old page files are deleted. A crash before the swap leaves the old index
//! and the step-in-progress marker, so the cube is reset when next opened.

use crate::aligned::{aligned_slice, round_up};
use crate::block::Codec;
use crate::cube::Cube;
use crate::error::CubeError;
use crate::index::Location;
use crate::outline::{Dim, Outline, STORED_PERIODS};
use crate::parallel::for_each_unit;
use crate::store::{HEADER_BYTES, Store};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const RUN_BYTES: u64 = 8 << 20;
/// Slots further apart than this start a new read run rather than reading the gap.
const MAX_GAP_BYTES: u64 = 256 << 10;

/// A slot written to the new generation: key, offset within the run, length, present cells.
type NewSlot = (u64, u64, u32, u32);

/// What the restructure moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestructureReport {
    pub blocks: u64,
    pub cells: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// For each cell of the old layout, its cell in the new one (accounts matched by name).
fn cell_remap(old: &Outline, new: &Outline) -> Vec<u32> {
    let old_accounts = old.dim(Dim::Account);
    let new_accounts = new.dim(Dim::Account);
    let mut remap = Vec::with_capacity(old.cells_per_block());
    for row in 0..old.stored_accounts() {
        let name = &old_accounts.member(old.stored_account(row)).name;
        let new_row =
            new.account_row(new_accounts.find(name).expect("restructure keeps every member")).expect("stored");
        remap.extend((0..STORED_PERIODS).map(|p| (new_row * STORED_PERIODS + p) as u32));
    }
    remap
}

/// Consecutive slots read with one call: same page file, small gaps, at most `max_run_bytes`.
fn read_runs(locations: &[(u64, Location)], max_run_bytes: u64) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=locations.len() {
        let split = i == locations.len() || {
            let (first, previous, next) = (locations[start].1, locations[i - 1].1, locations[i].1);
            next.file != first.file
                || next.offset > previous.offset + u64::from(previous.capacity) + MAX_GAP_BYTES
                || next.offset + u64::from(next.capacity) - first.offset > max_run_bytes
        };
        if split {
            runs.push(start..i);
            start = i;
        }
    }
    runs
}

impl Cube {
    /// Add [`crate::outline::ADDED_ACCOUNT`] and rewrite every block, with `restructure_threads` threads.
    pub fn restructure_add_account(
        &mut self,
        restructure_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<RestructureReport, CubeError> {
        const STEP: &str = "dense restructure";
        if self.outline().is_restructured() {
            return Err(CubeError::Config(
                "the cube already has AddedAccount: reset it (step 1) before restructuring again".into(),
            ));
        }
        let new_outline = Outline::essbench_restructured();
        let remap = cell_remap(self.outline(), &new_outline);
        let old = self.store();
        let old_codec = old.codec();
        let new_codec = Codec::new(old_codec.compression, new_outline.cells_per_block());
        let new_store = Store::create(self.dir(), old.generation() + 1, new_codec.cells, true, old.options())?;
        let align = new_store.align();
        let locations = old.locations_by_position();
        // Runs stay well inside one page file, since each is written back as one piece.
        let runs = read_runs(&locations, RUN_BYTES.min(old.options().page_file_max_bytes / 4));
        let cells = AtomicU64::new(0);
        let bytes_read = AtomicU64::new(0);
        let bytes_written = AtomicU64::new(0);
        for_each_unit(
            restructure_threads,
            runs.len(),
            cancel,
            STEP,
            || (Vec::new(), Vec::new(), Vec::new()),
            |(input, output, slots): &mut (Vec<u8>, Vec<u8>, Vec<NewSlot>), unit| {
                let run = &locations[runs[unit].clone()];
                let first = run[0].1;
                let last = run[run.len() - 1].1;
                // Direct I/O wrote every slot padded to the alignment; buffered I/O wrote the bytes only.
                let exact = last.offset + u64::from(last.len) - first.offset;
                let span = if old.options().direct_io { round_up(exact, old.align()) } else { exact } as usize;
                let buffer = aligned_slice(input, span, old.align() as usize);
                old.read_exact_at(first.file, first.offset, buffer)?;
                old.count_read(run.len() as u64, span as u64);
                bytes_read.fetch_add(span as u64, Ordering::Relaxed);
                output.clear();
                slots.clear();
                for &(key, location) in run {
                    let at = (location.offset - first.offset) as usize;
                    let slot = &buffer[at..at + location.len as usize];
                    old.check_header(key, location, slot)?;
                    let start = output.len();
                    output.extend_from_slice(&[0u8; HEADER_BYTES]);
                    let present = old_codec
                        .relayout(&slot[HEADER_BYTES..], &new_codec, &remap, output)
                        .map_err(|reason| old.corrupt(key, location, reason))?;
                    let len = output.len() - start;
                    output[start..start + 8].copy_from_slice(&key.to_le_bytes());
                    output[start + 8..start + 12].copy_from_slice(&((len - HEADER_BYTES) as u32).to_le_bytes());
                    output[start + 12..start + 16].copy_from_slice(&present.to_le_bytes());
                    output.resize(start + round_up(len as u64, align) as usize, 0);
                    slots.push((key, start as u64, len as u32, present));
                    cells.fetch_add(u64::from(present), Ordering::Relaxed);
                }
                new_store.append_run(output, slots)?;
                bytes_written.fetch_add(output.len() as u64, Ordering::Relaxed);
                Ok(())
            },
        )?;
        // The swap: once the new index is in place the new generation is the cube.
        new_store.sync()?;
        let old = self.swap_store(new_store, new_outline);
        old.remove_page_files()?;
        Ok(RestructureReport {
            blocks: locations.len() as u64,
            cells: cells.into_inner(),
            bytes_read: bytes_read.into_inner(),
            bytes_written: bytes_written.into_inner(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_on_file_gap_and_size() {
        let at = |file, offset| (0u64, Location { file, offset, capacity: 4096, len: 4000, present: 1 });
        let locations = vec![at(0, 0), at(0, 4096), at(0, 10 << 20), at(1, 0), at(1, 4096)];
        let runs = read_runs(&locations, RUN_BYTES);
        assert_eq!(runs, vec![0..2, 2..3, 3..5]);
    }

    #[test]
    fn remap_inserts_one_row() {
        let old = Outline::essbench();
        let new = Outline::essbench_restructured();
        let remap = cell_remap(&old, &new);
        assert_eq!(remap.len(), old.cells_per_block());
        assert!(remap.windows(2).all(|w| w[0] < w[1]), "the remap is increasing");
        assert_eq!(*remap.last().unwrap() as usize, new.cells_per_block() - 1);
    }
}
