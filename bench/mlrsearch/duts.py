"""Simulated DUTs for the search benchmark, the twins of
crates/search/examples/search_sim/duts.rs: the same definitions, the same
pseudo-random generator and the same seeds, so that the n-th trial of a
search on a given seed draws the same random number on both sides.

A DUT is asked for one trial: an intended load (frames per second) and a
duration (seconds). It answers (intended, offered, received) frame counts.
Every count is rounded the same way on both sides: floor(x + 0.5).
Noise draws one uniform number per trial (every trial here lasts 1 s, so
one per trial-second).
"""

import math

MASK = (1 << 64) - 1

# The capacity of the ideal DUT: what the README's built-in lab forwarded.
CAPACITY = 617_760.0


def rnd(x):
    """Round half up, as Rust's (x + 0.5).floor() does."""
    return int(math.floor(x + 0.5))


class SplitMix64:
    """Sebastiano Vigna's splitmix64, written out the same way in Rust."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        """A float in [0, 1) from the top 53 bits."""
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))


class Dut:
    """One simulated DUT: trial() and the true results per loss ratio."""

    name = ""
    noisy = False
    summary = ""

    def __init__(self, seed):
        self.rng = SplitMix64(seed)

    def trial(self, load, duration):
        """(intended frames, offered frames, received frames)."""
        tx = rnd(load * duration)
        return tx, tx, self.forward(tx, duration)

    def forward(self, tx, duration):
        raise NotImplementedError

    def truth(self, loss_ratio):
        """The true throughput for a goal of this loss ratio (exceed ratio
        50 %): the highest load of a 1 s trial whose trial-seconds are
        high-loss at most half the time, below any lower load that is not.
        For a deterministic DUT, every frame count is tried from 1 up: a
        1 s trial at load L sends round(L) frames, so the answer is the
        first count that loses too much, less half a frame."""
        tx = 1
        while (tx - self.forward(tx, 1.0)) / tx <= loss_ratio:
            tx += 1
        return tx - 0.5


class Ideal(Dut):
    name = "ideal"
    summary = "forwards min(load, 617,760)"

    def forward(self, tx, duration):
        return min(tx, rnd(CAPACITY * duration))


class Noisy(Dut):
    name = "noisy"
    noisy = True
    summary = "capacity 617,760 +-2 % uniform per trial-second"

    def forward(self, tx, duration):
        cap = CAPACITY * (1 + 0.02 * (2 * self.rng.uniform() - 1))
        return min(tx, rnd(cap * duration))

    def truth(self, loss_ratio):
        # Half of the trial-seconds have a capacity below the median, C.
        return CAPACITY / (1 - loss_ratio)


class RareLoss(Dut):
    name = "rare-loss"
    noisy = True
    summary = "ideal, and one frame lost in 10 % of trial-seconds at any load"

    def forward(self, tx, duration):
        rx = min(tx, rnd(CAPACITY * duration))
        if self.rng.uniform() < 0.1:
            rx = max(rx - 1, 0)
        return rx

    def truth(self, loss_ratio):
        # 10 % lossy seconds is within the 50 % exceed ratio; one frame in
        # 600,000 is far below 0.5 %: the ideal DUT's.
        return Ideal(0).truth(loss_ratio)


class Policer(Dut):
    name = "policer"
    summary = "token bucket 100,000 fps, burst 400, full at each trial's start"
    RATE, BURST = 100_000.0, 400.0

    def forward(self, tx, duration):
        return min(tx, rnd(self.RATE * duration + self.BURST))


class SlowLoss(Dut):
    name = "slow-loss"
    summary = "ideal up to 617,760, then loses a tenth of the excess (rounded up)"

    def forward(self, tx, duration):
        cap = rnd(CAPACITY * duration)
        return tx if tx <= cap else tx - (tx - cap + 9) // 10


class Inversion(Dut):
    name = "inversion"
    summary = (
        "forwards 91 % of 617,760 when overloaded (livelock); loads at 90-92 % "
        "of it lose 0.1 %, higher ones up to it nothing"
    )

    def forward(self, tx, duration):
        cap = CAPACITY * duration
        if tx > rnd(cap):
            return max(rnd(0.91 * cap), rnd(cap - 2 * (tx - cap)))
        if 0.90 * cap <= tx <= 0.92 * cap:
            return tx - rnd(0.001 * tx)
        return tx


class GeneratorLimited(Dut):
    name = "generator-limited"
    summary = "the generator offers at most 500,000 pps; the DUT is ideal"
    LIMIT = 500_000.0

    def trial(self, load, duration):
        intended = rnd(load * duration)
        tx = rnd(min(load, self.LIMIT) * duration)
        return intended, tx, min(tx, rnd(CAPACITY * duration))

    def forward(self, tx, duration):
        return min(tx, rnd(CAPACITY * duration))

    # Its truth is the DUT's own, beyond the generator: a tool can only say
    # "at least" what the generator offered, never bound it from above.


DUTS = [Ideal, Noisy, RareLoss, Policer, SlowLoss, Inversion, GeneratorLimited]


def by_name(name):
    for d in DUTS:
        if d.name == name:
            return d
    raise SystemExit(f"unknown DUT '{name}'")
