//! The loads a search may choose: a geometric grid.
//!
//! Neighbouring loads of the grid are one final width apart ((upper −
//! lower) / upper is exactly the width), so two neighbours bracket a goal
//! to its final width, a coarser target's width is a whole number of
//! steps, and any two loads chosen for different goals or targets either
//! coincide (and share their trials) or are whole steps apart. Where the
//! grid lies (its anchor) is the search's business (`select`).

/// A geometric grid of loads between the minimum and the maximum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    anchor: f64,
    /// ln of the ratio between neighbours: −ln(1 − width).
    step: f64,
    min: f64,
    max: f64,
}

/// Relative slack when comparing a load with a grid point (rounding).
const SLACK: f64 = 1e-9;

impl Grid {
    /// A grid through `anchor` (clamped to [min, max]) whose neighbours
    /// are `width` apart.
    pub fn new(anchor: f64, width: f64, min: f64, max: f64) -> Grid {
        Grid {
            anchor: anchor.clamp(min, max),
            step: -(1.0 - width).ln(),
            min,
            max,
        }
    }

    /// The load `n` steps from the anchor, clamped to [min, max].
    pub fn load(&self, n: i64) -> f64 {
        (self.anchor * (n as f64 * self.step).exp()).clamp(self.min, self.max)
    }

    /// Where `load` lies, in steps from the anchor (fractional off the grid).
    pub fn position(&self, load: f64) -> f64 {
        (load / self.anchor).ln() / self.step
    }

    /// The grid step at or just below the position `x` (a grid point's own
    /// position may be a rounding error off its integer).
    pub fn floor(x: f64) -> i64 {
        (x + SLACK).floor() as i64
    }

    /// The grid step at or just above `x`.
    pub fn ceil(x: f64) -> i64 {
        (x - SLACK).ceil() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_one_width_apart() {
        let g = Grid::new(1000.0, 0.005, 1.0, 1e6);
        assert_eq!(g.load(0), 1000.0);
        for n in [-3, 0, 5] {
            let (l, u) = (g.load(n), g.load(n + 1));
            assert!(((u - l) / u - 0.005).abs() < 1e-12, "{n}: {l} {u}");
        }
        // 1000 / 0.995 and 1000 × 0.995.
        assert!((g.load(1) - 1000.0 / 0.995).abs() < 1e-9);
        assert!((g.load(-1) - 995.0).abs() < 1e-9);
        assert!((g.position(g.load(7)) - 7.0).abs() < 1e-9);
        assert_eq!(Grid::floor(g.position(g.load(7))), 7);
        assert_eq!(Grid::ceil(g.position(g.load(-7))), -7);
        assert_eq!(Grid::floor(2.5), 2);
        assert_eq!(Grid::ceil(2.5), 3);
    }

    #[test]
    fn loads_stay_between_the_limits() {
        let g = Grid::new(1000.0, 0.5, 100.0, 3000.0);
        // Steps of 2×: 1000, 2000, 4000 → 3000; 500, 250, 125, 62.5 → 100.
        assert!((g.load(1) - 2000.0).abs() < 1e-9);
        assert_eq!(g.load(2), 3000.0);
        assert!((g.load(-3) - 125.0).abs() < 1e-9);
        assert_eq!(g.load(-4), 100.0);
        // An anchor outside the limits is clamped.
        assert_eq!(Grid::new(5000.0, 0.5, 100.0, 3000.0).load(0), 3000.0);
    }
}
