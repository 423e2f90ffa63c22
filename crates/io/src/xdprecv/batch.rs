//! Reading a whole BPF array map in a few system calls
//! (BPF_MAP_LOOKUP_BATCH, Linux 5.6): the stream states of a large
//! `--streams` would take one call per entry through aya's `Array::get`
//! (about 6 s for a million entries here, minutes for 2^24).

use std::os::fd::{AsRawFd, BorrowedFd};

/// BPF_MAP_LOOKUP_BATCH in include/uapi/linux/bpf.h's `enum bpf_cmd`.
const BPF_MAP_LOOKUP_BATCH: libc::c_long = 24;
/// Entries per call: 4096 × 64 bytes of stream state is 256 KiB.
const CHUNK: u32 = 4096;

/// The `batch` member of include/uapi/linux/bpf.h's `union bpf_attr`.
#[repr(C)]
#[derive(Default)]
struct BatchAttr {
    in_batch: u64,
    out_batch: u64,
    keys: u64,
    values: u64,
    count: u32,
    map_fd: u32,
    elem_flags: u64,
    flags: u64,
}

/// Calls `each(index, value)` for every entry of the array map `fd` of
/// `len` entries, whose values are `V` (its size a multiple of 8, as the
/// kernel lays array values out).
pub(crate) fn for_each<V: aya::Pod + Default>(
    fd: BorrowedFd<'_>,
    len: u32,
    mut each: impl FnMut(u32, &V),
) -> std::io::Result<()> {
    debug_assert_eq!(std::mem::size_of::<V>() % 8, 0);
    let mut keys = vec![0u32; CHUNK as usize];
    let mut values = vec![V::default(); CHUNK as usize];
    let mut next: u32 = 0;
    let mut started = false;
    let mut seen = 0u32;
    while seen < len {
        let mut out: u32 = 0;
        let mut attr = BatchAttr {
            in_batch: if started {
                &next as *const u32 as u64
            } else {
                0
            },
            out_batch: &mut out as *mut u32 as u64,
            keys: keys.as_mut_ptr() as u64,
            values: values.as_mut_ptr() as u64,
            count: CHUNK,
            map_fd: fd.as_raw_fd() as u32,
            ..BatchAttr::default()
        };
        // SAFETY: attr points at buffers of `count` keys and values that
        // live across the call, and at `next`/`out`; its size is passed.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                BPF_MAP_LOOKUP_BATCH,
                &mut attr as *mut BatchAttr,
                std::mem::size_of::<BatchAttr>() as libc::c_uint,
            )
        };
        let err = (r < 0).then(std::io::Error::last_os_error);
        // ENOENT: the last batch (its entries are filled all the same).
        if let Some(e) = &err {
            if e.raw_os_error() != Some(libc::ENOENT) {
                return Err(std::io::Error::new(e.kind(), e.to_string()));
            }
        }
        let n = attr.count.min(CHUNK) as usize;
        for (k, v) in keys[..n].iter().zip(&values[..n]) {
            each(*k, v);
        }
        seen += n as u32;
        if err.is_some() || n == 0 {
            break;
        }
        next = out;
        started = true;
    }
    Ok(())
}
