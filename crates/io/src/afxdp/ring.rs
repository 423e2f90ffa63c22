//! The four single-producer/single-consumer rings an AF_XDP socket shares
//! with the kernel: fill and TX (we produce), RX and completion (we consume).
//!
//! Hand-written rather than taken from a crate because this is the hot path:
//! producer and consumer indexes are cached so that the shared cache lines
//! are read only when the cached view runs out, and descriptors are reserved
//! and published in whole batches (one Release store per batch).

use std::io;
use std::marker::PhantomData;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::sys::Mmap;

/// A mapped ring of `size` (a power of two) entries of `T`.
struct Ring<T> {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    descs: *mut T,
    mask: u32,
    size: u32,
    _map: Mmap,
    _t: PhantomData<T>,
}

impl<T: Copy> Ring<T> {
    /// Maps the ring whose offsets the kernel reported in `off`.
    fn map(fd: RawFd, off: &libc::xdp_ring_offset, size: u32, pgoff: u64) -> io::Result<Ring<T>> {
        debug_assert!(size.is_power_of_two());
        let len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        let map = Mmap::ring(fd, len, pgoff)?;
        let base = map.ptr();
        for o in [off.producer, off.consumer, off.flags] {
            if o as usize + 4 > len || !o.is_multiple_of(4) {
                return Err(io::Error::other("bad AF_XDP ring offsets"));
            }
        }
        if !off.desc.is_multiple_of(std::mem::align_of::<T>() as u64) {
            return Err(io::Error::other("bad AF_XDP ring offsets"));
        }
        // SAFETY: every offset was checked to lie inside the mapping and to
        // be aligned for its type; the kernel laid the ring out this way.
        unsafe {
            Ok(Ring {
                producer: base.add(off.producer as usize).cast(),
                consumer: base.add(off.consumer as usize).cast(),
                flags: base.add(off.flags as usize).cast(),
                descs: base.add(off.desc as usize).cast(),
                mask: size - 1,
                size,
                _map: map,
                _t: PhantomData,
            })
        }
    }

    #[inline(always)]
    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points into our live mapping (see `map`); the kernel
        // updates it concurrently, so only atomic access is allowed.
        unsafe { &*self.producer }
    }

    #[inline(always)]
    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }

    #[inline(always)]
    fn flags(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.flags }
    }
}

/// A ring we produce into: the fill ring (`u64` chunk addresses) or the TX
/// ring (`xdp_desc`).
pub(super) struct ProdRing<T> {
    ring: Ring<T>,
    /// Our producer index, published by `submit`.
    prod: u32,
    /// The kernel's consumer index plus `size`, as last read: entries up to
    /// here are free.
    cons_end: u32,
}

impl<T: Copy> ProdRing<T> {
    pub(super) fn map(
        fd: RawFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        pgoff: u64,
    ) -> io::Result<Self> {
        let ring = Ring::map(fd, off, size, pgoff)?;
        let prod = ring.producer().load(Ordering::Relaxed);
        let cons_end = ring.consumer().load(Ordering::Acquire).wrapping_add(size);
        Ok(ProdRing {
            ring,
            prod,
            cons_end,
        })
    }

    /// Number of entries free for writing, at least `want` if the kernel has
    /// consumed enough (the shared consumer index is read only when the
    /// cached one shows fewer than `want`).
    #[inline(always)]
    pub(super) fn free(&mut self, want: u32) -> u32 {
        let free = self.cons_end.wrapping_sub(self.prod);
        if free >= want {
            return free;
        }
        // Acquire: the kernel's reads of the entries it consumed happen
        // before we overwrite them.
        self.cons_end = self
            .ring
            .consumer()
            .load(Ordering::Acquire)
            .wrapping_add(self.ring.size);
        self.cons_end.wrapping_sub(self.prod)
    }

    /// Writes entry `i` of the next batch (not yet visible to the kernel).
    ///
    /// # Safety
    /// `i` must be below the last value returned by [`ProdRing::free`].
    #[inline(always)]
    pub(super) unsafe fn write(&mut self, i: u32, v: T) {
        let idx = self.prod.wrapping_add(i) & self.ring.mask;
        // SAFETY: idx <= mask, so the entry lies inside the descriptor
        // array; the caller guarantees it is free (the kernel has consumed
        // it), so the kernel does not read it concurrently.
        unsafe { self.ring.descs.add(idx as usize).write(v) };
    }

    /// Publishes the next `n` written entries to the kernel.
    #[inline(always)]
    pub(super) fn submit(&mut self, n: u32) {
        self.prod = self.prod.wrapping_add(n);
        // Release: the entry writes happen before the kernel sees the index.
        self.ring.producer().store(self.prod, Ordering::Release);
    }

    /// True when the kernel asks for a wake-up call (need_wakeup).
    #[inline(always)]
    pub(super) fn needs_wakeup(&self) -> bool {
        self.ring.flags().load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }
}

/// A ring we consume from: the RX ring (`xdp_desc`) or the completion ring
/// (`u64` chunk addresses).
pub(super) struct ConsRing<T> {
    ring: Ring<T>,
    /// Our consumer index, published by `release`.
    cons: u32,
    /// The kernel's producer index as last read.
    prod: u32,
}

impl<T: Copy> ConsRing<T> {
    pub(super) fn map(
        fd: RawFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        pgoff: u64,
    ) -> io::Result<Self> {
        let ring = Ring::map(fd, off, size, pgoff)?;
        let cons = ring.consumer().load(Ordering::Relaxed);
        let prod = ring.producer().load(Ordering::Acquire);
        Ok(ConsRing { ring, cons, prod })
    }

    /// Number of entries ready to read, at most `max` (the shared producer
    /// index is read only when the cached view is empty).
    #[inline(always)]
    pub(super) fn available(&mut self, max: u32) -> u32 {
        let mut n = self.prod.wrapping_sub(self.cons);
        if n == 0 {
            // Acquire: the kernel's entry writes happen before our reads.
            self.prod = self.ring.producer().load(Ordering::Acquire);
            n = self.prod.wrapping_sub(self.cons);
        }
        n.min(max)
    }

    /// Reads entry `i` of the ready batch.
    ///
    /// # Safety
    /// `i` must be below the last value returned by [`ConsRing::available`].
    #[inline(always)]
    pub(super) unsafe fn read(&self, i: u32) -> T {
        let idx = self.cons.wrapping_add(i) & self.ring.mask;
        // SAFETY: idx <= mask, inside the descriptor array; the caller
        // guarantees the kernel produced it and will not rewrite it before
        // `release`.
        unsafe { self.ring.descs.add(idx as usize).read() }
    }

    /// Gives the first `n` ready entries back to the kernel.
    #[inline(always)]
    pub(super) fn release(&mut self, n: u32) {
        self.cons = self.cons.wrapping_add(n);
        // Release: our reads of the entries happen before the kernel reuses them.
        self.ring.consumer().store(self.cons, Ordering::Release);
    }
}

// SAFETY: the raw pointers point into a mapping owned by the ring itself;
// moving a ring to another thread moves its exclusive user-space side.
unsafe impl<T: Send> Send for ProdRing<T> {}
// SAFETY: as for ProdRing.
unsafe impl<T: Send> Send for ConsRing<T> {}
