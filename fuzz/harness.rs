//! What every fuzz harness shares (`crates/*/tests/fuzz.rs` include this
//! file with `#[path]`): the seed corpora of `fuzz/corpus/<target>/`, the
//! mutations proptest applies to them, and the number of cases.
//!
//! Not coverage-guided (see README.md, "Reliability"): proptest picks a
//! seed and a list of edits (bit flips, bytes set to boundary values,
//! truncations, insertions, splices of another seed) or plain random
//! bytes. A short pass runs with the tests; `bench/fuzz` runs millions.

#![allow(dead_code)]

use std::path::PathBuf;

use proptest::prelude::*;
use proptest::test_runner::Config;

/// Cases per target in the test suite; `PKTLAB_FUZZ_CASES` overrides it
/// (`bench/fuzz` sets millions).
pub const TEST_CASES: u32 = 3000;

pub fn config() -> Config {
    let cases = std::env::var("PKTLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TEST_CASES);
    Config {
        cases,
        // A failure is shrunk and printed; the input is kept in the test
        // file as a regression case by hand, so no persistence file.
        failure_persistence: None,
        ..Config::default()
    }
}

/// The folder of a target's seeds.
pub fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// Every seed of `target`, in name order. A missing or empty corpus fails
/// the test: a harness without seeds would fuzz far less than it claims.
pub fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "corpus {} is empty", dir.display());
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// A file of this thread's own scratch folder (kept for the whole run:
/// a folder per case would cost more than the parsing) holding `bytes`,
/// for the readers that take a path.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    thread_local! {
        static DIR: tempfile::TempDir = tempfile::tempdir().unwrap();
    }
    let path = DIR.with(|d| d.path().join(name));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// One edit of a seed. Positions are taken modulo the input's length, so
/// every edit applies to any input.
#[derive(Clone, Debug)]
pub enum Edit {
    FlipBit {
        at: usize,
        bit: u8,
    },
    SetByte {
        at: usize,
        value: u8,
    },
    /// A 16- or 32-bit boundary value, big- or little-endian (lengths,
    /// counts and magic numbers live in such fields).
    SetWord {
        at: usize,
        value: u32,
        width: u8,
        big: bool,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Remove {
        at: usize,
        len: usize,
    },
    /// Bytes of another seed pasted over this one.
    Splice {
        at: usize,
        seed: usize,
        from: usize,
        len: usize,
    },
}

const BOUNDARY: [u32; 12] = [
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::FlipBit { at, bit }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Edit::SetByte { at, value }),
        (
            any::<usize>(),
            prop_oneof![prop::sample::select(&BOUNDARY[..]), any::<u32>()],
            prop::sample::select(&[2u8, 4][..]),
            any::<bool>()
        )
            .prop_map(|(at, value, width, big)| Edit::SetWord {
                at,
                value,
                width,
                big
            }),
        any::<usize>().prop_map(|at| Edit::Truncate { at }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| Edit::Remove { at, len }),
        (any::<usize>(), any::<usize>(), any::<usize>(), 1usize..64).prop_map(
            |(at, seed, from, len)| Edit::Splice {
                at,
                seed,
                from,
                len
            }
        ),
    ]
}

/// `seed` with `edits` applied in order.
pub fn apply(seeds: &[Vec<u8>], seed: usize, edits: &[Edit]) -> Vec<u8> {
    let mut b = seeds[seed % seeds.len()].clone();
    for e in edits {
        let pos = |at: usize, len: usize| if len == 0 { 0 } else { at % len };
        match e {
            Edit::FlipBit { at, bit } => {
                if !b.is_empty() {
                    let i = pos(*at, b.len());
                    b[i] ^= 1 << bit;
                }
            }
            Edit::SetByte { at, value } => {
                if !b.is_empty() {
                    let i = pos(*at, b.len());
                    b[i] = *value;
                }
            }
            Edit::SetWord {
                at,
                value,
                width,
                big,
            } => {
                let w = *width as usize;
                if b.len() >= w {
                    let i = pos(*at, b.len() - w + 1);
                    let bytes = if *big {
                        value.to_be_bytes()
                    } else {
                        value.to_le_bytes()
                    };
                    // The low-order bytes of the value, in the chosen order.
                    let part = if *big { &bytes[4 - w..] } else { &bytes[..w] };
                    b[i..i + w].copy_from_slice(part);
                }
            }
            Edit::Truncate { at } => {
                let i = pos(*at, b.len() + 1);
                b.truncate(i);
            }
            Edit::Insert { at, bytes } => {
                let i = pos(*at, b.len() + 1);
                b.splice(i..i, bytes.iter().copied());
            }
            Edit::Remove { at, len } => {
                if !b.is_empty() {
                    let i = pos(*at, b.len());
                    let end = (i + len).min(b.len());
                    b.drain(i..end);
                }
            }
            Edit::Splice {
                at,
                seed,
                from,
                len,
            } => {
                let other = &seeds[seed % seeds.len()];
                if !other.is_empty() {
                    let f = pos(*from, other.len());
                    let piece = &other[f..(f + len).min(other.len())];
                    let i = pos(*at, b.len() + 1);
                    let end = (i + piece.len()).min(b.len());
                    b.splice(i..end, piece.iter().copied());
                }
            }
        }
    }
    b
}

/// Inputs for a target: mostly mutated seeds, some plain random bytes.
pub fn inputs(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let seeds = std::sync::Arc::new(seeds);
    prop_oneof![
        8 => (any::<usize>(), prop::collection::vec(edit(), 0..8))
            .prop_map(move |(seed, edits)| apply(&seeds, seed, &edits)),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ]
}

/// Text inputs (the parsers of command-line values and files take `&str`):
/// the bytes as UTF-8, invalid sequences replaced.
pub fn text_inputs(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = String> {
    inputs(seeds).prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}
