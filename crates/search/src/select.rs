//! Which load a target wants next.
//!
//! New loads come from a grid ([`super::grid`]) one final width between
//! neighbours, placed half a step below what the DUT forwarded in the
//! first trial at the maximum load: a DUT that forwards exactly its
//! capacity meets the NDR up to that rate and the PDR up to that rate
//! raised by the PDR's loss ratio, and no grid load sits right on such an
//! edge, where a single lost frame would tip it. A goal works through its
//! targets in order and never goes back to a coarser one (`state`). For
//! one target, in this order:
//!
//! 1. a load this target started and that is still undecided (between the
//!    relevant bounds) is measured again: its seconds so far are not
//!    thrown away, whatever one lossy second says before they decide it;
//! 2. the middle of the coarser target's bounds as they were when this
//!    target took over, when they are too far apart: it usually replaces
//!    one of them, so that only the other is left to confirm;
//! 3. those bounds themselves, the lower first, if still undecided;
//! 4. any other undecided load between the bounds, the one next to the
//!    only bound, or the lowest;
//! 5. a new load: the goal's guess (the forwarded rate raised by the
//!    goal's loss ratio) if it lies between the bounds; else outwards from
//!    the bound nearest the guess, never past the middle of two bounds.
//!    Down from an upper bound, the first step goes to what the DUT
//!    forwarded there, and every further one twice as far as the last.
//!    Up from a lower bound, the first step is one grid step (a goal just
//!    above its guess is the usual case), and every further one twice as
//!    far as the last, four times at the coarsest target: there nothing
//!    says yet how far above the guess the goal lies, while at a finer
//!    target it lies near the coarser bounds.
//!
//! The coarsest target narrows its bounds to the final width, not its
//! own: its single short trials are the cheapest, and finer targets whose
//! bounds are already one step apart only need to confirm them rather
//! than halve them with longer sums. With no trial yet, the maximum load
//! comes first; no load lies below the minimum or above the maximum.

use crate::goal::Target;
use crate::grid::Grid;
use crate::load::Class;
use crate::state::{relevant, same, Entry, Search, SAME_LOAD};

/// How much farther each step goes than the last one.
const GROWTH: f64 = 2.0;
/// How much farther each step up goes than the last at the coarsest target.
const COARSEST_UP_GROWTH: f64 = 4.0;

impl Search {
    /// The load goal `goal`'s target `level` (of `targets`) wants next, or
    /// None when it is reached.
    pub(super) fn select(&self, goal: usize, level: usize, targets: &[Target]) -> Option<f64> {
        let target = &targets[level];
        if self.loads.is_empty() {
            return Some(self.config.max_load);
        }
        let classes = self.classes(target);
        let (lo, hi) = relevant(&classes);
        let (lo, hi) = (
            lo.map(|i| self.loads[i].load),
            hi.map(|i| self.loads[i].load),
        );
        let stop_width = match level {
            0 => targets[targets.len() - 1].width,
            _ => target.width,
        };
        if self.reached(lo, hi, stop_width) {
            return None;
        }
        let inside = |x: f64| {
            lo.is_none_or(|l| x > l && !same(x, l)) && hi.is_none_or(|u| x < u && !same(x, u))
        };
        let pending: Vec<f64> = self
            .loads
            .iter()
            .zip(&classes)
            .filter(|(l, &c)| c == Class::Undecided && inside(l.load))
            .map(|(l, _)| l.load)
            .collect();
        let is_pending = |x: f64| pending.iter().any(|&p| same(p, x));
        let started = self
            .last
            .filter(|r| (r.goal, r.target) == (goal, level) && is_pending(r.load));
        if let Some(r) = started {
            return Some(r.load);
        }
        let grid = self.grid();
        let entry = match self.entry {
            Some(e) if (e.goal, e.target) == (goal, level) => e,
            _ => self.entry_of(goal, level),
        };
        if let (Some(pl), Some(pu)) = (entry.lower, entry.upper) {
            let halve = !narrow(pl, pu, target.width);
            if let Some(m) = middle(&grid, pl, pu).filter(|&m| halve && inside(m)) {
                return Some(m);
            }
        }
        let mut confirm = [entry.lower, entry.upper].into_iter().flatten();
        if let Some(p) = confirm.find(|&x| is_pending(x)) {
            return Some(p);
        }
        let next_to_bound = match (lo, hi) {
            (None, Some(_)) => pending.last(),
            _ => pending.first(),
        };
        if let Some(&p) = next_to_bound {
            return Some(p);
        }
        let explorer = Explorer {
            search: self,
            grid,
            guess: self.forwarded().map_or(0, |f| {
                Grid::floor(grid.position(f / (1.0 - target.loss_ratio)))
            }),
            classes: &classes,
            loss_ratio: target.loss_ratio,
            up_growth: if level == 0 {
                COARSEST_UP_GROWTH
            } else {
                GROWTH
            },
        };
        Some(explorer.next(lo, hi, inside))
    }

    /// Where goal `goal`'s target `level` starts from now: its coarser
    /// target's relevant bounds (none for the coarsest).
    pub(super) fn entry_of(&self, goal: usize, level: usize) -> Entry {
        let (lower, upper) = match level.checked_sub(1) {
            Some(coarser) => {
                let targets = self.config.goals[goal].targets();
                let (l, u) = self.relevant(&targets[coarser]);
                (l.map(|i| self.loads[i].load), u.map(|i| self.loads[i].load))
            }
            None => (None, None),
        };
        Entry {
            goal,
            target: level,
            lower,
            upper,
        }
    }

    /// The relevant bounds `lo` and `hi` end the search for a target: the
    /// minimum is too lossy, the maximum is not, or they are at most
    /// `width` apart.
    fn reached(&self, lo: Option<f64>, hi: Option<f64>, width: f64) -> bool {
        let (min, max) = (self.config.min_load, self.config.max_load);
        match (lo, hi) {
            (Some(l), None) => same(l, max),
            (None, Some(u)) => u <= min * (1.0 + SAME_LOAD),
            (Some(l), Some(u)) => narrow(l, u, width),
            (None, None) => false,
        }
    }

    /// What the DUT forwarded in the first trial at the maximum load
    /// (within the load limits), if there is one.
    fn forwarded(&self) -> Option<f64> {
        let (min, max) = (self.config.min_load, self.config.max_load);
        let first = self
            .loads
            .last()
            .filter(|l| same(l.load, max))?
            .trials
            .first()?;
        Some(first.forwarded_pps().clamp(min, max))
    }

    /// The grid half a step below the forwarded rate, one final width
    /// (the narrowest goal's) between neighbours; through the maximum load
    /// before any trial there (a resumed search may start anywhere).
    fn grid(&self) -> Grid {
        let width = self
            .config
            .goals
            .iter()
            .map(|g| g.width)
            .fold(f64::INFINITY, f64::min);
        let anchor = self
            .forwarded()
            .map_or(self.config.max_load, |f| f * (1.0 - width).sqrt());
        Grid::new(anchor, width, self.config.min_load, self.config.max_load)
    }
}

/// The bounds are at most `width` apart.
fn narrow(lower: f64, upper: f64, width: f64) -> bool {
    (upper - lower) / upper <= width + SAME_LOAD
}

/// What a target knows when it needs a new load.
struct Explorer<'a> {
    search: &'a Search,
    grid: Grid,
    /// The goal's guess, in grid steps: the grid load at or below the
    /// forwarded rate raised by the loss ratio (the maximum load before
    /// there is a forwarded rate).
    guess: i64,
    classes: &'a [Class],
    loss_ratio: f64,
    /// How much farther each step up goes than the last.
    up_growth: f64,
}

impl Explorer<'_> {
    /// A new load between the relevant bounds `lo` and `hi` (no undecided
    /// load lies between them): the guess if it lies between them; else
    /// outwards from the bound nearest the guess, never past the middle
    /// when there are two bounds.
    fn next(&self, lo: Option<f64>, hi: Option<f64>, inside: impl Fn(f64) -> bool) -> f64 {
        let guess = self.grid.load(self.guess);
        if inside(guess) {
            return guess;
        }
        match (lo, hi) {
            (None, None) => guess,
            (None, Some(u)) => self.down(u),
            (Some(l), None) => self.up(l),
            (Some(l), Some(u)) => {
                let m = middle(&self.grid, l, u).unwrap_or((l * u).sqrt());
                if self.guess as f64 <= self.grid.position(l) + 1e-9 {
                    self.up(l).min(m)
                } else {
                    self.down(u).max(m)
                }
            }
        }
    }

    /// Below the upper bound `u`: twice as far below as `u` lies below the
    /// upper bound before it (between it and the guess); from the first
    /// one, to what the DUT forwarded there, raised by the loss ratio. At
    /// least one grid step.
    fn down(&self, u: f64) -> f64 {
        let at = self.grid.position(u);
        let below = Grid::ceil(at) - 1;
        let guess = self.guess as f64 + 1e-9;
        let n = match self.neighbour(u, Class::Upper, |p| p > at && p <= guess) {
            Some(p) => Grid::floor(at - GROWTH * (p - at)),
            None => self
                .hint(u)
                .map_or(below, |h| Grid::floor(self.grid.position(h))),
        };
        self.grid.load(n.min(below))
    }

    /// Above the lower bound `l`: `up_growth` times as far above as `l`
    /// lies above the lower bound before it (between the guess and it);
    /// from the first one, one grid step.
    fn up(&self, l: f64) -> f64 {
        let at = self.grid.position(l);
        let above = Grid::floor(at) + 1;
        let guess = self.guess as f64 - 1e-9;
        let n = match self.neighbour(l, Class::Lower, |p| p < at && p >= guess) {
            Some(p) => Grid::ceil(at + self.up_growth * (at - p)),
            None => above,
        };
        self.grid.load(n.max(above))
    }

    /// The grid position of the load of class `c` nearest `from` among
    /// those whose position passes `within`.
    fn neighbour(&self, from: f64, c: Class, within: impl Fn(f64) -> bool) -> Option<f64> {
        let at = self.grid.position(from);
        self.search
            .loads
            .iter()
            .zip(self.classes)
            .filter(|(l, &k)| k == c && !same(l.load, from))
            .map(|(l, _)| self.grid.position(l.load))
            .filter(|&p| within(p))
            .min_by(|a, b| (a - at).abs().total_cmp(&(b - at).abs()))
    }

    /// What the DUT forwarded in the first trial at `load`, raised by the
    /// loss ratio: where the goal is likely met.
    fn hint(&self, load: f64) -> Option<f64> {
        let l = self.search.loads.iter().find(|l| same(l.load, load))?;
        let forwarded = l.trials.first()?.forwarded_pps();
        (forwarded > 0.0).then(|| forwarded / (1.0 - self.loss_ratio))
    }
}

/// The grid load nearest the middle of (`lower`, `upper`), strictly
/// between them (the lower of two equally near), if there is one.
fn middle(grid: &Grid, lower: f64, upper: f64) -> Option<f64> {
    let first = Grid::floor(grid.position(lower)) + 1;
    let last = Grid::ceil(grid.position(upper)) - 1;
    if first > last {
        return None;
    }
    let m = grid.load((first + last).div_euclid(2));
    (m > lower && m < upper && !same(m, lower) && !same(m, upper)).then_some(m)
}
