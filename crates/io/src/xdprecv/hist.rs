//! The program's latency histogram: log-linear buckets as HDR histograms
//! have them, with the same layout as `bucket_of` in
//! crates/io/bpf/xdprecv.c.
//!
//! Values below 2 × 128 have a bucket each; above, every power of two is
//! split into 128 equal buckets, so a value read back from its bucket is
//! off by less than 1/128 of itself. Latencies are below 2^40 ns (the TX
//! stamp wraps there).

/// Sub-buckets per power of two, as a power of two.
pub const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// The largest power of two of a value (values are below 2^40).
const MAX_LOG2: u32 = 39;
/// The number of buckets (the `hist` map's entries).
pub const BUCKETS: usize = ((MAX_LOG2 - SUB_BITS + 2) as usize) * SUB as usize;

/// The bucket of `v` (below 2^40).
pub fn bucket_of(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    ((e - SUB_BITS + 1) as u64 * SUB + ((v >> (e - SUB_BITS)) & (SUB - 1))) as usize
}

/// The smallest and the largest value of bucket `i`.
pub fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB {
        return (i, i);
    }
    let e = i / SUB + u64::from(SUB_BITS) - 1;
    let width = 1u64 << (e - u64::from(SUB_BITS));
    let low = (SUB + i % SUB) * width;
    (low, low + width - 1)
}

/// Bucket counts, summed over CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyHistogram {
    pub counts: Vec<u64>,
}

impl LatencyHistogram {
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The value at quantile `q` (0 to 1) as HdrHistogram reports it: the
    /// largest value of the bucket that holds the `ceil(q × total)`-th
    /// smallest value (at least the first). None when empty.
    pub fn value_at_quantile(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(bucket_range(i).1);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_by_hand() {
        assert_eq!(BUCKETS, 34 * 128);
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(255), 255);
        // 256..511 in buckets of 2.
        assert_eq!(bucket_of(256), 256);
        assert_eq!(bucket_of(257), 256);
        assert_eq!(bucket_of(258), 257);
        assert_eq!(bucket_range(257), (258, 259));
        // 1000 = 0b1111101000: e = 9, width 4, 1000 / 4 = 250 = 128 + 122.
        assert_eq!(bucket_of(1000), 3 * 128 + 122);
        assert_eq!(bucket_range(3 * 128 + 122), (1000, 1003));
        // The largest value lands in the last bucket.
        assert_eq!(bucket_of((1 << 40) - 1), BUCKETS - 1);
        assert_eq!(bucket_range(BUCKETS - 1).1, (1 << 40) - 1);
    }

    #[test]
    fn every_value_is_in_its_bucket_within_1_in_128() {
        let mut v = 1u64;
        while v < 1 << 40 {
            for x in [v, v + 1, v * 3 / 2, 2 * v - 1] {
                let (lo, hi) = bucket_range(bucket_of(x));
                assert!(lo <= x && x <= hi, "{x} not in {lo}..={hi}");
                assert!((hi - lo) as f64 <= x as f64 / 128.0, "{x}: {lo}..={hi}");
            }
            v *= 2;
        }
        // Buckets tile the line: each starts after the previous one.
        for i in 1..BUCKETS {
            assert_eq!(bucket_range(i).0, bucket_range(i - 1).1 + 1, "bucket {i}");
        }
    }

    #[test]
    fn quantiles_by_hand() {
        let mut h = LatencyHistogram {
            counts: vec![0; BUCKETS],
        };
        assert_eq!(h.value_at_quantile(0.5), None);
        // 98 values of 100, one of 1000 and one of 50000.
        h.counts[bucket_of(100)] += 98;
        h.counts[bucket_of(1000)] += 1;
        h.counts[bucket_of(50_000)] += 1;
        assert_eq!(h.value_at_quantile(0.5), Some(100));
        assert_eq!(h.value_at_quantile(0.98), Some(100));
        assert_eq!(h.value_at_quantile(0.99), Some(1003));
        // 50000 = 0b1100001101010000: e = 15, width 256; 50000 / 256 = 195.
        assert_eq!(h.value_at_quantile(0.999), Some(195 * 256 + 255));
        assert_eq!(h.value_at_quantile(0.0), Some(100));
    }
}
