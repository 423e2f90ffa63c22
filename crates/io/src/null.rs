//! The null port: frames are generated and dropped, to measure generation cost.

use crate::port::TxPort;
use crate::IoError;

/// A transmit port that calls `fill` into one reusable buffer and drops the frame.
#[derive(Debug)]
pub struct NullTx {
    buf: Vec<u8>,
    /// Length of the frame left in `buf` by the last `fill`.
    last_len: usize,
    frames: u64,
    bytes: u64,
}

impl NullTx {
    /// A null port whose slot holds `slot_size` bytes.
    pub fn new(slot_size: usize) -> Self {
        NullTx {
            buf: vec![0; slot_size],
            last_len: 0,
            frames: 0,
            bytes: 0,
        }
    }

    /// Frames "sent" so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Bytes "sent" so far (the lengths `fill` returned).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl TxPort for NullTx {
    fn backend(&self) -> String {
        "null".to_string()
    }

    fn slot_size(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn send_batch<F: FnMut(usize, &mut [u8], usize) -> usize>(
        &mut self,
        n: usize,
        mut fill: F,
    ) -> Result<usize, IoError> {
        for i in 0..n {
            let len = fill(i, &mut self.buf, self.last_len);
            self.last_len = len.min(self.buf.len());
            // Keep the frame observable so the optimiser cannot drop the work.
            std::hint::black_box(&self.buf[..len.min(self.buf.len())]);
            self.bytes += len as u64;
        }
        self.frames += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> Result<(), IoError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_fill_exactly_n_times_in_order() {
        let mut p = NullTx::new(64);
        assert_eq!(p.slot_size(), 64);
        let mut seen = Vec::new();
        let n = p
            .send_batch(1000, |i, slot, _| {
                assert!(slot.len() >= 64);
                seen.push(i);
                slot[..60].fill(i as u8);
                60
            })
            .unwrap();
        assert_eq!(n, 1000);
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(p.send_batch(0, |_, _, _| unreachable!()).unwrap(), 0);
        assert_eq!(p.frames(), 1000);
        assert_eq!(p.bytes(), 60_000);
        p.flush().unwrap();
        assert_eq!(p.tx_errors(), 0);
    }

    #[test]
    fn fill_sees_the_previous_frame_left_in_the_slot() {
        let mut p = NullTx::new(128);
        let mut prevs = Vec::new();
        p.send_batch(3, |i, slot, prev| {
            prevs.push(prev);
            if i > 0 {
                // The bytes of the last frame are still there.
                assert!(slot[..prev].iter().all(|&b| b == i as u8 - 1));
            }
            let len = 60 + i * 10;
            slot[..len].fill(i as u8);
            len
        })
        .unwrap();
        assert_eq!(prevs, [0, 60, 70]);
    }
}
