//! Simulated DUTs for the search benchmark (`bench/mlrsearch/`), the twins
//! of `bench/mlrsearch/duts.py`: the same definitions, the same
//! pseudo-random generator and the same seeds, so that the n-th trial of a
//! search on a given seed draws the same random number on both sides.
//!
//! A DUT is asked for one trial, an intended load (frames per second) and
//! a duration (seconds), and answers (intended, offered, received) frame
//! counts, each rounded as floor(x + 0.5) on both sides. Noise draws one
//! uniform number per trial (every trial of the benchmark lasts 1 s, so one
//! per trial-second).

/// The ideal DUT's capacity: what the built-in lab forwarded in the
/// README's example.
pub const CAPACITY: f64 = 617_760.0;

/// Round half up, as Python's `math.floor(x + 0.5)` does.
pub fn rnd(x: f64) -> u64 {
    (x + 0.5).floor() as u64
}

/// Sebastiano Vigna's splitmix64, written out the same way in Python.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float in [0, 1) from the top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The simulated DUTs, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Forwards min(load, 617,760).
    Ideal,
    /// Capacity 617,760 ± 2 %, uniform, drawn per trial-second.
    Noisy,
    /// Ideal, and one frame lost in 10 % of trial-seconds at any load.
    RareLoss,
    /// A token bucket of 100,000 frames/s and a burst of 400, full at the
    /// start of every trial.
    Policer,
    /// Ideal up to 617,760, then loses a tenth of the excess (rounded up).
    SlowLoss,
    /// Forwards 91 % of 617,760 when overloaded (receive livelock); loads
    /// at 90–92 % of it lose 0.1 %, higher ones up to it nothing.
    Inversion,
    /// The generator offers at most 500,000 pps; the DUT is ideal.
    GeneratorLimited,
}

pub const ALL: [Kind; 7] = [
    Kind::Ideal,
    Kind::Noisy,
    Kind::RareLoss,
    Kind::Policer,
    Kind::SlowLoss,
    Kind::Inversion,
    Kind::GeneratorLimited,
];

const POLICER_RATE: f64 = 100_000.0;
const POLICER_BURST: f64 = 400.0;
const GENERATOR_LIMIT: f64 = 500_000.0;

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ideal => "ideal",
            Kind::Noisy => "noisy",
            Kind::RareLoss => "rare-loss",
            Kind::Policer => "policer",
            Kind::SlowLoss => "slow-loss",
            Kind::Inversion => "inversion",
            Kind::GeneratorLimited => "generator-limited",
        }
    }

    pub fn by_name(name: &str) -> Option<Kind> {
        ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One DUT with its own random stream.
pub struct Dut {
    pub kind: Kind,
    rng: SplitMix64,
}

impl Dut {
    pub fn new(kind: Kind, seed: u64) -> Dut {
        Dut {
            kind,
            rng: SplitMix64::new(seed),
        }
    }

    /// One trial: (intended frames, offered frames, received frames).
    pub fn trial(&mut self, load: f64, duration: f64) -> (u64, u64, u64) {
        let intended = rnd(load * duration);
        let offered = match self.kind {
            Kind::GeneratorLimited => rnd(load.min(GENERATOR_LIMIT) * duration),
            _ => intended,
        };
        (intended, offered, self.forward(offered, duration))
    }

    fn forward(&mut self, tx: u64, duration: f64) -> u64 {
        let cap = CAPACITY * duration;
        match self.kind {
            Kind::Ideal | Kind::GeneratorLimited => tx.min(rnd(cap)),
            Kind::Noisy => {
                let c = cap * (1.0 + 0.02 * (2.0 * self.rng.uniform() - 1.0));
                tx.min(rnd(c))
            }
            Kind::RareLoss => {
                let rx = tx.min(rnd(cap));
                if self.rng.uniform() < 0.1 {
                    rx.saturating_sub(1)
                } else {
                    rx
                }
            }
            Kind::Policer => tx.min(rnd(POLICER_RATE * duration + POLICER_BURST)),
            Kind::SlowLoss => {
                let c = rnd(cap);
                if tx <= c {
                    tx
                } else {
                    tx - (tx - c).div_ceil(10)
                }
            }
            Kind::Inversion => {
                let t = tx as f64;
                if tx > rnd(cap) {
                    rnd(0.91 * cap).max(rnd((cap - 2.0 * (t - cap)).max(0.0)))
                } else if 0.90 * cap <= t && t <= 0.92 * cap {
                    tx - rnd(0.001 * t)
                } else {
                    tx
                }
            }
        }
    }
}
