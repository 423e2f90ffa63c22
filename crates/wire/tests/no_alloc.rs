//! The hot path allocates nothing: a counting global allocator watches
//! 100,000 `write_next` and `parse_test_frame` calls per configuration.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

use pktlab_wire::range::Family;
use pktlab_wire::{parse_test_frame, FlowOrder, FlowSet, FrameGen, FrameSpec};

struct Counting;

thread_local! {
    /// Per thread, so that tests running side by side (and the harness)
    /// do not count each other's allocations.
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    if WATCHING.with(Cell::get) {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    WATCHING.with(|w| w.set(true));
    f();
    WATCHING.with(|w| w.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn counter_sees_allocations() {
    // The instrument works: one Vec is one allocation.
    let n = allocations_in(|| {
        black_box(vec![1u8; 100]);
    });
    assert_eq!(n, 1);
}

#[test]
fn write_next_and_parse_allocate_nothing() {
    for (family, vlan, sizes, order) in [
        (Family::Inet4, None, "64", FlowOrder::Sequential),
        (
            Family::Inet4,
            Some(100),
            "imix",
            FlowOrder::Random { seed: 1 },
        ),
        (
            Family::Inet6,
            None,
            "80:7,594:4,1518:1",
            FlowOrder::Sequential,
        ),
    ] {
        let spec = FrameSpec {
            src_mac: "02:00:00:00:00:01".parse().unwrap(),
            dst_mac: "02:00:00:00:00:02".parse().unwrap(),
            vlan,
            ttl: 64,
            flows: FlowSet::lab(family),
            order,
            sizes: sizes.parse().unwrap(),
            ports: pktlab_wire::PortMode::Ranges,
        };
        let mut generator = FrameGen::new(&spec, 1, 2);
        let mut slots = vec![vec![0u8; generator.max_len()]; 4];
        let mut prev = [0usize; 4];
        let mut seq_sum = 0u64;
        let mut recognised = 0u32;
        let n = allocations_in(|| {
            for i in 0..100_000u64 {
                let s = (i % 4) as usize;
                let len = generator.write_next(&mut slots[s], prev[s], i);
                prev[s] = len;
                if let Some(t) = parse_test_frame(black_box(&slots[s][..len])) {
                    recognised += 1;
                    seq_sum += u64::from(t.payload.seq);
                }
            }
        });
        assert_eq!(n, 0, "{family:?} {sizes}: {n} allocations");
        assert_eq!(recognised, 100_000);
        // Thread 1 of 2 owns 1000 flows; 100 cycles give seqs 0..99 each.
        assert_eq!(seq_sum, 1000 * (0..100).sum::<u64>());
    }
}
