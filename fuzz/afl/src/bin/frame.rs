//! AFL++ target: the receiver's frame parser (crates/wire/src/parse.rs).
fn main() {
    afl::fuzz!(|bytes: &[u8]| {
        let _ = pktlab_wire::verify_checksums(bytes);
        if let Some(t) = pktlab_wire::parse_test_frame(bytes) {
            assert_eq!(t.frame_len, bytes.len());
            assert!(t.payload.stream < 1 << 24);
        }
    });
}
