//! The statistics of a histogram bin and sets of bins: what histograms hold, splits read and
//! trees store, below all three.

use serde::{Deserialize, Serialize};
use std::ops::{AddAssign, SubAssign};

/// A set of bins (0..=255) as a 256-bit mask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinSet(pub [u64; 4]);

impl BinSet {
    /// The bins `from..to` (`to` ≤ 256), set a word at a time.
    pub fn range(from: usize, to: usize) -> BinSet {
        let mut set = BinSet::default();
        for (w, word) in set.0.iter_mut().enumerate() {
            let (lo, hi) = (
                from.clamp(64 * w, 64 * w + 64),
                to.clamp(64 * w, 64 * w + 64),
            );
            if lo < hi {
                let width = hi - lo;
                let ones = if width == 64 {
                    u64::MAX
                } else {
                    (1u64 << width) - 1
                };
                *word = ones << (lo - 64 * w);
            }
        }
        set
    }
    /// True when `bin` is in the set.
    #[inline]
    pub fn contains(&self, bin: u8) -> bool {
        self.0[(bin >> 6) as usize] >> (bin & 63) & 1 == 1
    }
    /// Adds `bin`.
    pub fn insert(&mut self, bin: u8) {
        self.0[(bin >> 6) as usize] |= 1 << (bin & 63);
    }
    /// Removes `bin`.
    pub fn remove(&mut self, bin: u8) {
        self.0[(bin >> 6) as usize] &= !(1 << (bin & 63));
    }
}

/// The sums of one histogram bin (or of any set of rows).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BinStats {
    /// Σ v t
    pub sum_vt: f64,
    /// Σ v
    pub sum_v: f64,
    /// Rows in the bin.
    pub count: u32,
}

impl AddAssign for BinStats {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        self.sum_vt += o.sum_vt;
        self.sum_v += o.sum_v;
        self.count += o.count;
    }
}

impl SubAssign for BinStats {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        self.sum_vt -= o.sum_vt;
        self.sum_v -= o.sum_v;
        self.count -= o.count;
    }
}

impl std::ops::Sub for BinStats {
    type Output = BinStats;
    #[inline]
    fn sub(mut self, o: Self) -> Self {
        self -= o;
        self
    }
}

impl std::ops::Add for BinStats {
    type Output = BinStats;
    #[inline]
    fn add(mut self, o: Self) -> Self {
        self += o;
        self
    }
}

/// Bounds on the row count of a set of rows from its weight Σ v, when every weight lies in
/// [min_v, max_v]: count ≥ Σv / max_v and count ≤ Σv / min_v, with Σv widened by `slack`, a bound
/// on the rounding error of any bin or prefix sum of v. A bin of a node at depth d is a sum of
/// at most n terms (error ≤ n ε Σ) or its parent's minus a child's, so at most d + 1 such sums
/// and d subtractions; prefix sums add at most 256 terms. With Σ ≤ n max_v:
/// slack = 2 (d + 2) (n + 1024) ε n max_v covers both sides of a split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountBounds {
    min_v: f64,
    max_v: f64,
    slack: f64,
}

impl CountBounds {
    /// Bounds for weights in [min_v, max_v] on `n_rows` rows, in trees of at most `max_depth`
    /// levels; `None` when the weights bound nothing (none positive, or not finite).
    pub(crate) fn new(
        min_v: f64,
        max_v: f64,
        n_rows: usize,
        max_depth: usize,
    ) -> Option<CountBounds> {
        let n = n_rows as f64;
        let levels = max_depth as f64 + 2.0;
        let slack = 2.0 * levels * (n + 1024.0) * f64::EPSILON * n * max_v;
        (min_v >= 0.0 && max_v > 0.0 && max_v.is_finite() && slack.is_finite()).then_some(
            CountBounds {
                min_v,
                max_v,
                slack,
            },
        )
    }

    /// Whether a set of weight `sum_v` surely has at least `m` rows (`Some(true)`), surely has
    /// fewer (`Some(false)`), or may have either.
    #[inline]
    pub(super) fn at_least(&self, sum_v: f64, m: usize) -> Option<bool> {
        let m = m as f64;
        if (sum_v - self.slack) / self.max_v >= m {
            Some(true)
        } else if (sum_v + self.slack) < m * self.min_v {
            Some(false)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BinSet;

    #[test]
    fn a_range_holds_exactly_the_bins_inserted_one_by_one() {
        for from in [0, 1, 5, 63, 64, 65, 127, 128, 200, 255, 256] {
            for to in [0, 1, 2, 63, 64, 65, 100, 128, 129, 191, 192, 255, 256] {
                let mut inserted = BinSet::default();
                for bin in from..to.max(from) {
                    inserted.insert(bin as u8);
                }
                assert_eq!(BinSet::range(from, to), inserted, "{from}..{to}");
            }
        }
    }
}
