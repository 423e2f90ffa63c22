//! The test payload: the first 14 bytes of every generated frame's UDP
//! payload, big-endian.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | magic `0x504C` ("PL") |
//! | 2 | 3 | stream id: the flow index |
//! | 5 | 4 | sequence number, per stream, from 0, wrapping |
//! | 9 | 5 | TX time: CLOCK_REALTIME nanoseconds mod 2^40 (about 18 minutes) |
//!
//! 14 bytes fit the smallest frame even with a VLAN tag: 64 − 4 (FCS) − 18
//! (Ethernet + 802.1Q) − 20 (IPv4) − 8 (UDP) = 14.

/// Length of the test payload.
pub const PAYLOAD_LEN: usize = 14;
/// "PL".
pub const MAGIC: u16 = 0x504c;
/// Stream ids are 24 bits.
pub const STREAM_MASK: u32 = (1 << 24) - 1;
/// Timestamps are nanoseconds mod 2^40.
pub const TS40_MASK: u64 = (1 << 40) - 1;

/// The decoded test payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TestPayload {
    /// The flow index (24 bits).
    pub stream: u32,
    /// The stream's sequence number.
    pub seq: u32,
    /// CLOCK_REALTIME nanoseconds mod 2^40 when the frame was built.
    pub ts40: u64,
}

impl TestPayload {
    /// A payload stamped with `realtime_ns` (reduced mod 2^40).
    pub fn new(stream: u32, seq: u32, realtime_ns: u64) -> TestPayload {
        TestPayload {
            stream: stream & STREAM_MASK,
            seq,
            ts40: realtime_ns & TS40_MASK,
        }
    }

    /// Writes the 14 bytes to `buf[..14]`; higher bits of `stream` and `ts40`
    /// are dropped. Panics if `buf` is shorter than [`PAYLOAD_LEN`].
    #[inline]
    pub fn write(&self, buf: &mut [u8]) {
        buf[..2].copy_from_slice(&MAGIC.to_be_bytes());
        buf[2..PAYLOAD_LEN].copy_from_slice(&self.variable_bytes()[4..]);
    }

    /// Reads a payload from the start of `buf`: `None` if it is shorter than
    /// [`PAYLOAD_LEN`] or does not start with [`MAGIC`].
    #[inline]
    pub fn parse(buf: &[u8]) -> Option<TestPayload> {
        let bytes: &[u8; PAYLOAD_LEN] = buf.get(..PAYLOAD_LEN)?.try_into().ok()?;
        if u16::from_be_bytes([bytes[0], bytes[1]]) != MAGIC {
            return None;
        }
        let mut wide = [0u8; 16];
        wide[4..].copy_from_slice(&bytes[2..]);
        let v = u128::from_be_bytes(wide);
        Some(TestPayload {
            stream: (v >> 72) as u32 & STREAM_MASK,
            seq: (v >> 40) as u32,
            ts40: v as u64 & TS40_MASK,
        })
    }

    /// Bytes 2..14 as the low 96 bits of a big-endian `u128` (stream, seq, ts):
    /// written with one copy, and its word sum is the checksum contribution.
    #[inline(always)]
    pub(crate) fn variable_bytes(&self) -> [u8; 16] {
        self.variable_value().to_be_bytes()
    }

    #[inline(always)]
    pub(crate) fn variable_value(&self) -> u128 {
        (u128::from(self.stream & STREAM_MASK) << 72)
            | (u128::from(self.seq) << 40)
            | u128::from(self.ts40 & TS40_MASK)
    }
}

/// One-way latency from a TX stamp to a CLOCK_REALTIME receive time, in
/// nanoseconds: the difference mod 2^40, so it is right across the wrap as
/// long as the true latency is below 2^40 ns (about 18 minutes).
#[inline]
pub fn latency_ns(rx_realtime_ns: u64, ts40: u64) -> u64 {
    rx_realtime_ns.wrapping_sub(ts40) & TS40_MASK
}

/// How long before a receiver's first frame a frame may have been sent
/// and still have its stamp believed: queues hold frames for milliseconds,
/// and a generator may have started a little before the receiver.
pub const STAMP_SLACK_NS: u64 = 10_000_000_000;

/// Whether a frame's latency (from [`latency_ns`]) can be a real one, for
/// a frame received `since_first_ns` after the receiver's first frame. A
/// latency of half the wrap or more is a stamp from the future (a clock
/// behind the sender's, or a stamp that is not pktlab's); one longer than
/// the receiver has run, plus [`STAMP_SLACK_NS`], says the frame was sent
/// before the run. Either kind is counted, not timed: one bogus stamp
/// would make the maximum minutes long.
#[inline]
pub fn believable_latency(latency_ns: u64, since_first_ns: u64) -> bool {
    latency_ns < (1 << 39) && latency_ns <= since_first_ns.saturating_add(STAMP_SLACK_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn believable_latencies_by_hand() {
        // The first frame: up to 10 s old.
        assert!(believable_latency(1, 0));
        assert!(believable_latency(10_000_000_000, 0));
        assert!(!believable_latency(10_000_000_001, 0));
        // 5 s into the run: up to 15 s.
        assert!(believable_latency(15_000_000_000, 5_000_000_000));
        assert!(!believable_latency(15_000_000_001, 5_000_000_000));
        // A stamp 1 ms in the future: 2^40 - 10^6 ns, never, however
        // long the run (an hour: 3.6e12 ns > 2^39 = 549,755,813,888).
        let future = latency_ns(1_000_000_000_000, 1_000_001_000_000);
        assert_eq!(future, (1 << 40) - 1_000_000);
        assert!(!believable_latency(future, 3_600_000_000_000));
        assert!(believable_latency((1 << 39) - 1, 3_600_000_000_000));
        assert!(!believable_latency(1 << 39, 3_600_000_000_000));
        // No overflow at the end of time.
        assert!(believable_latency(1, u64::MAX));
    }

    #[test]
    fn layout_by_hand() {
        let p = TestPayload::new(0x0a0b0c, 0x01020304, 0x11_2233_4455);
        let mut buf = [0u8; 14];
        p.write(&mut buf);
        assert_eq!(
            buf,
            [0x50, 0x4c, 0x0a, 0x0b, 0x0c, 0x01, 0x02, 0x03, 0x04, 0x11, 0x22, 0x33, 0x44, 0x55]
        );
        assert_eq!(TestPayload::parse(&buf), Some(p));
    }

    #[test]
    fn round_trip_and_wraps() {
        let cases = [
            TestPayload::new(0, 0, 0),
            TestPayload::new(STREAM_MASK, u32::MAX, TS40_MASK),
            TestPayload::new(1999, 7, 1_700_000_000_123_456_789),
        ];
        for p in cases {
            let mut buf = [0xaau8; 20];
            p.write(&mut buf);
            assert_eq!(TestPayload::parse(&buf), Some(p));
            assert_eq!(buf[14..], [0xaa; 6], "writes 14 bytes only");
        }
        // Time and stream wrap at 40 and 24 bits.
        let p = TestPayload::new(0x0100_0005, 3, (1 << 40) + 42);
        assert_eq!((p.stream, p.ts40), (5, 42));
        let seq_wrap = TestPayload::new(1, u32::MAX.wrapping_add(1), 0);
        assert_eq!(seq_wrap.seq, 0);
        // write() masks fields set directly, too.
        let raw = TestPayload {
            stream: 0xff00_0001,
            seq: 9,
            ts40: u64::MAX,
        };
        let mut buf = [0u8; 14];
        raw.write(&mut buf);
        assert_eq!(
            TestPayload::parse(&buf),
            Some(TestPayload {
                stream: 1,
                seq: 9,
                ts40: TS40_MASK
            })
        );
    }

    #[test]
    fn refuses_wrong_magic_and_short_buffers() {
        let mut buf = [0u8; 14];
        TestPayload::new(1, 2, 3).write(&mut buf);
        assert!(TestPayload::parse(&buf[..13]).is_none());
        buf[1] ^= 1;
        assert!(TestPayload::parse(&buf).is_none());
        assert!(TestPayload::parse(b"netmap pkt-gen DIRECT payload").is_none());
    }

    #[test]
    fn latency_across_the_wrap() {
        assert_eq!(latency_ns(1_000_500, 1_000_000), 500);
        // Sent 100 ns before the 2^40 wrap, received 250 ns after it.
        let tx = TestPayload::new(0, 0, (5 << 40) - 100).ts40;
        assert_eq!(tx, TS40_MASK - 99);
        assert_eq!(latency_ns((5 << 40) + 250, tx), 350);
        // A full realtime clock value against its own stamp.
        let now = 1_700_000_000_000_000_000u64;
        assert_eq!(latency_ns(now + 12_345, now & TS40_MASK), 12_345);
    }
}
