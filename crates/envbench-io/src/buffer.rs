//! Page-aligned I/O buffers, allocated once per engine and cut into one slot per request in flight.
//!
//! O_DIRECT needs the memory aligned to the device's logical block (4 KiB covers every device we meet), and the hot
//! loop must not allocate, so an engine gets one allocation up front and hands out slots by index.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// The alignment of every buffer and slot: a page, which satisfies O_DIRECT on 512-byte and 4 KiB devices alike.
pub const IO_ALIGN_BYTES: usize = 4096;

/// One zeroed, page-aligned allocation.
pub struct AlignedBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

// The buffer is plain memory owned by one value; sharing it follows the usual borrow rules.
unsafe impl Send for AlignedBuffer {}
unsafe impl Sync for AlignedBuffer {}

impl AlignedBuffer {
    /// Allocate `len_bytes` (rounded up to a whole page), zeroed.
    pub fn new(len_bytes: usize) -> AlignedBuffer {
        let len = len_bytes.max(1).next_multiple_of(IO_ALIGN_BYTES);
        let layout = Layout::from_size_align(len, IO_ALIGN_BYTES).expect("buffer size fits in memory");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuffer { ptr, layout }
    }

    /// Length in bytes (a whole number of pages).
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Always false: a buffer has at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The start of the buffer.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The whole buffer.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, initialized (zeroed) and owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }

    /// The whole buffer, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len()) }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// One aligned allocation cut into `slots` equal slots of `slot_bytes` each; slot `i` serves the request tagged `i`.
/// Each slot starts on a page boundary.
pub struct BufferPool {
    memory: AlignedBuffer,
    slot_bytes: usize,
    stride_bytes: usize,
    slots: usize,
}

impl BufferPool {
    /// A pool of `slots` slots of `slot_bytes` each, zeroed.
    pub fn new(slots: usize, slot_bytes: usize) -> BufferPool {
        let slots = slots.max(1);
        let stride_bytes = slot_bytes.max(1).next_multiple_of(IO_ALIGN_BYTES);
        BufferPool { memory: AlignedBuffer::new(stride_bytes * slots), slot_bytes, stride_bytes, slots }
    }

    /// How many slots the pool has.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The usable size of each slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// The start of slot `slot`. The pointer stays valid as long as the pool lives; engines hand it to the kernel or
    /// to worker threads while the request is in flight, and the loop touches a slot only while it is free.
    pub fn slot_ptr(&mut self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots, "slot {slot} out of {}", self.slots);
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.memory.as_mut_ptr().add(slot * self.stride_bytes) }
    }

    /// Slot `slot` as bytes.
    pub fn slot(&self, slot: usize) -> &[u8] {
        let start = slot * self.stride_bytes;
        &self.memory.as_slice()[start..start + self.slot_bytes]
    }

    /// Slot `slot` as writable bytes.
    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        let start = slot * self.stride_bytes;
        let slot_bytes = self.slot_bytes;
        &mut self.memory.as_mut_slice()[start..start + slot_bytes]
    }

    /// One `iovec` per slot, for registering the slots with the kernel.
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|slot| libc::iovec { iov_base: self.slot_ptr(slot).cast(), iov_len: self.slot_bytes })
            .collect()
    }

    /// The whole allocation, writable (to fill every slot at once).
    pub fn all_mut(&mut self) -> &mut [u8] {
        self.memory.as_mut_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_page_aligned_and_disjoint() {
        let mut pool = BufferPool::new(3, 512);
        for slot in 0..3 {
            assert_eq!(pool.slot_ptr(slot) as usize % IO_ALIGN_BYTES, 0);
        }
        pool.slot_mut(1).fill(0xaa);
        assert!(pool.slot(0).iter().all(|&b| b == 0));
        assert!(pool.slot(1).iter().all(|&b| b == 0xaa));
        assert!(pool.slot(2).iter().all(|&b| b == 0));
        assert_eq!(pool.slot(2).len(), 512);
    }
}
