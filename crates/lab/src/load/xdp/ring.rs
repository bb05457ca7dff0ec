//! One of an XDP socket's four rings, mapped from the kernel: a producer
//! and a consumer index (free-running u32s) and `size` entries.
//! We produce on the fill and TX rings and consume the RX and completion
//! rings; the kernel does the opposite.

use std::sync::atomic::{AtomicU32, Ordering};

/// A ring mapped at `map` (its whole mapping, unmapped on drop).
pub(super) struct Ring<T> {
    map: *mut libc::c_void,
    map_len: usize,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    entries: *mut T,
    mask: u32,
}

impl<T: Copy> Ring<T> {
    /// The ring of `size` entries (a power of two) in `fd`'s mapping at
    /// page offset `pgoff`, laid out as `off` says.
    pub(super) fn map(
        fd: i32,
        pgoff: u64,
        off: &libc::xdp_ring_offset,
        size: u32,
    ) -> std::io::Result<Ring<T>> {
        let map_len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        // SAFETY: a fresh shared mapping of the socket's ring; the kernel
        // checks the offset and length.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff as libc::off_t,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let at = |o: u64| map.cast::<u8>().wrapping_add(o as usize);
        Ok(Ring {
            map,
            map_len,
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            entries: at(off.desc).cast(),
            mask: size - 1,
        })
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: the index lies in the live mapping, 4-byte aligned as the
        // kernel lays it out, and is only ever accessed atomically.
        unsafe { &*self.producer }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }

    /// Entries we may produce now.
    pub(super) fn free(&self) -> u32 {
        let used = self
            .producer()
            .load(Ordering::Relaxed)
            .wrapping_sub(self.consumer().load(Ordering::Acquire));
        self.mask + 1 - used
    }

    /// Produces `items` (the caller checked `free`).
    pub(super) fn produce(&mut self, items: impl Iterator<Item = T>) {
        let mut p = self.producer().load(Ordering::Relaxed);
        for item in items {
            // SAFETY: the index is masked into the ring's `size` entries,
            // which the kernel does not read until the producer moves.
            unsafe { self.entries.add((p & self.mask) as usize).write(item) };
            p = p.wrapping_add(1);
        }
        self.producer().store(p, Ordering::Release);
    }

    /// Entries waiting to be consumed.
    pub(super) fn ready(&self) -> u32 {
        self.producer()
            .load(Ordering::Acquire)
            .wrapping_sub(self.consumer().load(Ordering::Relaxed))
    }

    /// The `i`th waiting entry (`i < ready()`).
    pub(super) fn peek(&self, i: u32) -> T {
        let c = self.consumer().load(Ordering::Relaxed).wrapping_add(i);
        // SAFETY: the kernel published this entry (i < ready) and will not
        // write it again until we release it.
        unsafe { self.entries.add((c & self.mask) as usize).read() }
    }

    /// Releases the first `n` waiting entries to the kernel.
    pub(super) fn release(&mut self, n: u32) {
        let c = self.consumer().load(Ordering::Relaxed);
        self.consumer().store(c.wrapping_add(n), Ordering::Release);
    }

    /// Entries the kernel has not consumed yet (TX: frames not yet sent).
    pub(super) fn unconsumed(&self) -> u32 {
        self.mask + 1 - self.free()
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `map` with this length and is
        // no longer referenced.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}
