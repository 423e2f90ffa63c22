//! Per-stream sequence checking: loss, reordering and duplicates.
//!
//! Every test frame carries its stream (the flow index) and a per-stream
//! sequence number that starts at 0 and wraps at 2^32. A stream's state is
//! the next number expected and a window of which of the last
//! [`WINDOW`] numbers below it have arrived:
//!
//! - `seq == next`: in order;
//! - `seq > next` (in serial-number arithmetic): the numbers in between are
//!   missing and counted as lost for now;
//! - `seq < next` inside the window: a late frame fills a gap (`lost - 1`,
//!   `out_of_order + 1`), or it is a second copy of a frame already seen
//!   (`duplicates + 1`);
//! - `seq < next` beyond the window: it cannot be told apart, so it counts
//!   as late when gaps are open and as a duplicate when none are.
//!
//! Frames before the first one a stream delivers count as lost: the
//! receiver must start before the generator (as `pktlab bench` does). A
//! first frame numbered 2^31 or more (before 0 in serial-number terms: a
//! wrapped stream, or a forged frame) starts the stream there, nothing
//! lost.
//!
//! Anyone on the segment can send frames with the test payload, so one
//! thread tracks at most [`MAX_STREAMS`] streams (ids below it); frames of
//! higher ids are counted as untracked and cost no memory.

/// How far back (in sequence numbers) late frames are told from duplicates.
pub const WINDOW: u32 = 128;

/// Streams one RX thread tracks: ids 0 to `MAX_STREAMS - 1`. A generator
/// makes a stream per flow, so runs of up to this many flows are checked
/// whole; the table's memory is bounded by [`StreamTable::MAX_BYTES`]
/// whatever stream ids arrive.
pub const MAX_STREAMS: u32 = 1 << 20;

/// The state of one stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamState {
    next: u32,
    /// Bit i set: sequence number `next - 1 - i` has arrived.
    window: u128,
    received: u64,
    lost: u64,
    out_of_order: u64,
    duplicates: u64,
}

/// What a stream's frames added up to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SeqCounts {
    pub received: u64,
    pub lost: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
}

impl std::ops::AddAssign for SeqCounts {
    fn add_assign(&mut self, o: SeqCounts) {
        self.received += o.received;
        self.lost += o.lost;
        self.out_of_order += o.out_of_order;
        self.duplicates += o.duplicates;
    }
}

impl StreamState {
    /// True once the stream has delivered a frame.
    pub fn seen(&self) -> bool {
        self.received > 0
    }

    /// Accounts for the frame numbered `seq`.
    #[inline]
    pub fn observe(&mut self, seq: u32) {
        if self.received == 0 {
            return self.first(seq);
        }
        self.received += 1;
        // Serial-number arithmetic (RFC 1982): the signed distance from next.
        let d = seq.wrapping_sub(self.next) as i32;
        if d >= 0 {
            let d = d as u32;
            self.lost += d as u64;
            // Shift in the skipped numbers (absent) and this one (present).
            self.window = if d + 1 >= 128 {
                1
            } else {
                (self.window << (d + 1)) | 1
            };
            self.next = seq.wrapping_add(1);
            return;
        }
        let age = d.unsigned_abs(); // 1 = the number just below next
        if age <= WINDOW {
            let bit = 1u128 << (age - 1);
            if self.window & bit != 0 {
                self.duplicates += 1;
            } else {
                self.window |= bit;
                self.out_of_order += 1;
                self.lost -= 1;
            }
        } else if self.lost > 0 {
            self.out_of_order += 1;
            self.lost -= 1;
        } else {
            self.duplicates += 1;
        }
    }

    /// The stream's first frame. Every bit of the window stands for a
    /// number below it: absent (0) for the numbers from 0 counted as lost,
    /// present (1) for the numbers "before 0", never counted. So a late
    /// frame only takes back a loss that was counted, and `lost` never goes
    /// below zero.
    #[cold]
    fn first(&mut self, seq: u32) {
        self.received = 1;
        self.next = seq.wrapping_add(1);
        if (seq as i32) < 0 {
            self.window = u128::MAX;
            return;
        }
        self.lost = seq as u64;
        self.window = if seq >= 127 {
            1
        } else {
            (u128::MAX << (seq + 1)) | 1
        };
    }

    pub fn counts(&self) -> SeqCounts {
        SeqCounts {
            received: self.received,
            lost: self.lost,
            out_of_order: self.out_of_order,
            duplicates: self.duplicates,
        }
    }
}

/// The streams one RX thread has seen, indexed by stream id.
#[derive(Debug, Default)]
pub struct StreamTable {
    streams: Vec<StreamState>,
    seen: u32,
    untracked: u64,
}

impl StreamTable {
    /// The most memory the table takes.
    pub const MAX_BYTES: usize = MAX_STREAMS as usize * std::mem::size_of::<StreamState>();

    /// True for the stream ids the table tracks.
    #[inline]
    pub fn tracks(stream: u32) -> bool {
        stream < MAX_STREAMS
    }

    /// Accounts for frame `seq` of `stream`; returns true when the stream is
    /// new. Grows the table on demand (stream ids are dense flow indexes),
    /// up to [`MAX_STREAMS`] entries; a frame of a higher id is only
    /// counted as untracked.
    #[inline]
    pub fn observe(&mut self, stream: u32, seq: u32) -> bool {
        if !Self::tracks(stream) {
            self.untracked += 1;
            return false;
        }
        let i = stream as usize;
        if i >= self.streams.len() {
            self.grow(i);
        }
        let s = &mut self.streams[i];
        let new = !s.seen();
        if new {
            self.seen += 1;
        }
        s.observe(seq);
        new
    }

    #[cold]
    fn grow(&mut self, i: usize) {
        let len = (i + 1)
            .next_power_of_two()
            .clamp(1024, MAX_STREAMS as usize);
        self.streams.resize(len, StreamState::default());
    }

    /// Frames of stream ids beyond [`MAX_STREAMS`].
    pub fn untracked(&self) -> u64 {
        self.untracked
    }

    /// Entries allocated (for tests of the bound).
    pub fn capacity(&self) -> usize {
        self.streams.capacity()
    }

    /// Number of streams that delivered at least one frame.
    pub fn streams_seen(&self) -> u32 {
        self.seen
    }

    /// The totals over every stream.
    pub fn totals(&self) -> SeqCounts {
        let mut t = SeqCounts::default();
        for s in self.streams.iter().filter(|s| s.seen()) {
            t += s.counts();
        }
        t
    }

    /// Stream ids and counts of the streams seen.
    pub fn iter(&self) -> impl Iterator<Item = (u32, SeqCounts)> + '_ {
        self.streams
            .iter()
            .enumerate()
            .filter(|(_, s)| s.seen())
            .map(|(i, s)| (i as u32, s.counts()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u32]) -> SeqCounts {
        let mut s = StreamState::default();
        for &q in seqs {
            s.observe(q);
        }
        s.counts()
    }

    fn c(received: u64, lost: u64, out_of_order: u64, duplicates: u64) -> SeqCounts {
        SeqCounts {
            received,
            lost,
            out_of_order,
            duplicates,
        }
    }

    #[test]
    fn in_order() {
        assert_eq!(run(&[0, 1, 2, 3]), c(4, 0, 0, 0));
    }

    #[test]
    fn gaps_are_lost() {
        assert_eq!(run(&[0, 1, 4, 5, 9]), c(5, 2 + 3, 0, 0));
        // Frames before the first one received count as lost.
        assert_eq!(run(&[3, 4]), c(2, 3, 0, 0));
    }

    #[test]
    fn late_frames_fill_gaps() {
        assert_eq!(run(&[0, 2, 1, 3]), c(4, 0, 1, 0));
        assert_eq!(run(&[0, 3, 1, 4, 2]), c(5, 0, 2, 0));
        // A swap at the very start.
        assert_eq!(run(&[1, 0, 2]), c(3, 0, 1, 0));
    }

    #[test]
    fn duplicates() {
        assert_eq!(run(&[0, 1, 1, 2]), c(4, 0, 0, 1));
        assert_eq!(run(&[0, 1, 2, 0]), c(4, 0, 0, 1));
        // A late frame then its copy: one out of order, one duplicate.
        assert_eq!(run(&[0, 2, 1, 1, 3]), c(5, 0, 1, 1));
    }

    #[test]
    fn window_edges() {
        // Exactly WINDOW back is still told apart: a duplicate...
        let mut seqs: Vec<u32> = (0..WINDOW).collect();
        seqs.push(0);
        assert_eq!(run(&seqs), c(WINDOW as u64 + 1, 0, 0, 1));
        // ...and a late frame.
        let mut seqs: Vec<u32> = (1..WINDOW).collect();
        seqs.push(0);
        assert_eq!(run(&seqs), c(WINDOW as u64, 0, 1, 0));
        // Beyond the window with a gap open: late.
        let mut seqs: Vec<u32> = (1..=WINDOW + 5).collect();
        seqs.push(0);
        assert_eq!(run(&seqs), c(WINDOW as u64 + 6, 0, 1, 0));
        // Beyond the window with no gap open: duplicate.
        let mut seqs: Vec<u32> = (0..=WINDOW + 5).collect();
        seqs.push(1);
        assert_eq!(run(&seqs), c(WINDOW as u64 + 7, 0, 0, 1));
        // A gap wider than the window.
        assert_eq!(run(&[0, 1000, 1001, 500]), c(4, 998, 1, 0));
    }

    #[test]
    fn wraps_at_2_pow_32() {
        let mut s = StreamState {
            next: u32::MAX - 2,
            ..StreamState::default()
        };
        for q in [u32::MAX - 2, u32::MAX - 1, u32::MAX, 0, 1, 3, 2] {
            s.observe(q);
        }
        assert_eq!(s.counts(), c(7, 0, 1, 0));
    }

    #[test]
    fn first_frame_near_2_pow_32_starts_the_stream() {
        // Nothing before it is counted lost, and the numbers "before 0"
        // arriving later never take back a loss that was not counted.
        assert_eq!(run(&[u32::MAX - 1, u32::MAX, 0]), c(3, 0, 0, 0));
        assert_eq!(run(&[u32::MAX - 5, u32::MAX - 7]), c(2, 0, 0, 1));
        assert_eq!(run(&[0x8000_0000, 5]), c(2, 0, 0, 1));
        // These used to take `lost` below zero (a panic in debug builds,
        // 2^64 - 1 lost frames in release ones).
        assert_eq!(run(&[u32::MAX - 3]), c(1, 0, 0, 0));
        assert_eq!(run(&[0, u32::MAX]), c(2, 0, 0, 1));
        assert_eq!(
            run(&[2, u32::MAX, u32::MAX - 1, u32::MAX - 2]),
            c(4, 2, 0, 3)
        );
        // A late frame still fills a gap counted from 0.
        assert_eq!(run(&[3, 1]), c(2, 2, 1, 0));
        assert_eq!(run(&[200, 100]), c(2, 199, 1, 0));
    }

    #[test]
    fn any_sequence_keeps_the_counts_consistent() {
        // received = in order + late + duplicates, whatever the numbers.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            let mut s = StreamState::default();
            let n = (x % 300) as usize;
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let q = match x % 4 {
                    0 => x as u32,
                    1 => (x % 256) as u32,
                    2 => u32::MAX - (x % 256) as u32,
                    _ => s.next.wrapping_sub((x % 300) as u32),
                };
                s.observe(q);
            }
            let c = s.counts();
            assert_eq!(c.received, n as u64);
            assert!(c.out_of_order + c.duplicates <= c.received);
            // Gaps are below 2^31 each: a larger total wrapped below zero.
            assert!(c.lost < 300 << 31, "{c:?}");
        }
    }

    #[test]
    fn table_is_bounded_whatever_ids_arrive() {
        // 16 million distinct stream ids, the whole 24-bit space.
        let mut t = StreamTable::default();
        for id in 0..1u32 << 24 {
            t.observe(id, u32::MAX - (id & 0xff));
        }
        assert_eq!(t.capacity(), MAX_STREAMS as usize);
        assert_eq!(t.streams_seen(), MAX_STREAMS);
        assert_eq!(t.untracked(), (1 << 24) - MAX_STREAMS as u64);
        assert_eq!(t.totals(), c(MAX_STREAMS as u64, 0, 0, 0));
        assert_eq!(StreamTable::MAX_BYTES, (1 << 20) * 64);
    }

    #[test]
    fn table_grows_and_sums() {
        let mut t = StreamTable::default();
        assert!(t.observe(5, 0));
        assert!(!t.observe(5, 1));
        assert!(t.observe(70_000, 0));
        assert!(t.observe(0, 1));
        assert_eq!(t.streams_seen(), 3);
        assert_eq!(t.totals(), c(4, 1, 0, 0));
        let ids: Vec<u32> = t.iter().map(|(i, _)| i).collect();
        assert_eq!(ids, [0, 5, 70_000]);
    }

    #[test]
    fn a_gap_that_fills_the_window_exactly() {
        // 0 then 128: 127 numbers skipped, and the window keeps only 128
        // itself; 1 is then 128 below next (129), the window's last bit.
        assert_eq!(run(&[0, 128, 1]), c(3, 126, 1, 0));
        // A gap of 126 keeps 0 in the window: its copy is a duplicate.
        assert_eq!(run(&[0, 127, 0]), c(3, 126, 0, 1));
    }
}
