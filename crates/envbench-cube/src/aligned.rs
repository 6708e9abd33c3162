//! Alignment of page file slots and I/O buffers: slots start at multiples of 64 bytes, or 4 KiB with direct I/O
//! (O_DIRECT needs the file offset, the length and the buffer's address aligned).

/// Slot alignment with direct I/O.
pub(crate) const DIRECT_ALIGN: u64 = 4096;
/// Slot alignment with buffered I/O.
pub(crate) const BUFFERED_ALIGN: u64 = 64;

/// A slice of `len` bytes in `raw` whose start is aligned to `align` (for O_DIRECT).
pub(crate) fn aligned_slice(raw: &mut Vec<u8>, len: usize, align: usize) -> &mut [u8] {
    if raw.len() < len + align {
        raw.resize(len + align, 0);
    }
    let start = raw.as_ptr().align_offset(align);
    &mut raw[start..start + len]
}

/// `n` rounded up to a multiple of `align`.
pub(crate) fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align) * align
}
