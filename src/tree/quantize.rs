//! Quantized gradient statistics (`quantized_gradients`; LightGBM's `use_quantized_grad`, Shi et
//! al., "Quantized Training of Gradient Boosting Decision Trees", NeurIPS 2022): each row's
//! statistics rounded to integer multiples of a power of two, so that a bin's sums are one i64
//! (Σ t_q · 2³² + Σ v_q) instead of two f64. The histogram kernel then adds 8 bytes a row and
//! feature instead of 16, gathers 8 bytes of statistics a row instead of 16, and a histogram of
//! 28 features of 255 bins (57 KB) nearly fits in the first-level cache.
//!
//! - Rounding is stochastic, t_q = ⌊t/s + u⌋ with u uniform in [0, 1) drawn from the row and a
//!   seed of the iteration, so that E[t_q · s] = t: every sum is unbiased, and its error over m
//!   rows has standard deviation at most s·√m / 2.
//! - Only the rows the tree is fitted on are rounded (all, or a GOSS or `subsample` draw).
//! - The scale s is the power of two that maps their largest |t| to at most L levels, with L as
//!   large as the sums allow: n · L < 2³¹ over the n rows a tree is fitted on (L ≤ 2²⁴), 2,147
//!   levels at 1M rows. Below 16 levels (over 134M rows) the statistics stay exact.
//! - Scaled back, every sum is an integer times a power of two: exact in f64, and so are the
//!   histograms' subtractions and the nodes' totals. The tree is then grown, split search, leaf
//!   values and all, exactly as on f64 statistics equal to the rounded ones.
//! - With the same weight on every row, the low word counts the rows; with differing weights it
//!   holds Σ v_q, and a bin that needs its row count (`RowStats::Weighted`, as opposed to
//!   `RowStats::without_counts`) carries it in a second i64: 16 bytes, against 32 exact. That
//!   gains less than the halved bytes suggest (the µops per row and feature are the same, and
//!   both sizes live in the second-level cache). Which trees count follows the same rule as
//!   exact ones (`GrowBuffers::always_count`): quantized trees kept uncounted where exact ones
//!   switch to counts recounted so many nodes that one-hot data (50,000 × 120) fitted 10–25%
//!   slower than exactly.
//! - Data-parallel fits (whose ranks would have to agree on the scales) stay exact.

use super::bins::{BinStats, CountBounds};
use crate::rng::bits_at;
use rayon::iter::Either;
use rayon::prelude::*;

/// Most levels on either side of 0 (above it, the rounding error is below anything that can
/// change a split).
const MAX_LEVELS: i64 = 1 << 24;
/// Fewest levels worth quantizing to.
const MIN_LEVELS: i64 = 16;
/// Rows per task when rounding.
const CHUNK: usize = 1 << 14;

/// A tree's quantized statistics: owns the rows' packed values that `QuantizedStats` borrows.
#[derive(Debug)]
pub(crate) struct Quantization {
    packed: Vec<i64>,
    vt_scale: f64,
    v: QuantizedV,
    bounds: Option<CountBounds>,
}

/// What the low word of a packed value holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum QuantizedV {
    /// A row count; every row's weight is this v.
    Uniform(f64),
    /// v_q; v = v_q · scale. Bins have no row counts.
    Scaled(f64),
    /// v_q; v = v_q · scale. Bins count their rows in a second i64.
    Counted(f64),
}

/// The statistics of `Quantization`, as `RowStats::Quantized` carries them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QuantizedStats<'a> {
    packed: &'a [i64],
    vt_scale: f64,
    v: QuantizedV,
    bounds: Option<CountBounds>,
}

impl Quantization {
    /// The statistics `vt` and `v` quantized on the rows a tree is fitted on, `rows` (all when
    /// `None`), with rounding drawn from `seed`; `None` where they stay exact (see the module's
    /// notes). The other rows' packed values are 0: nothing reads them. `max_depth` as for
    /// `RowStats::without_counts`.
    pub(crate) fn new(
        vt: &[f64],
        v: QuantizedInput<'_>,
        rows: Option<&[u32]>,
        seed: u64,
        max_depth: usize,
    ) -> Option<Quantization> {
        let fitted = Fitted { rows, n: vt.len() };
        let levels = levels_for(rows.map_or(vt.len(), <[u32]>::len))?;
        Self::with_levels(vt, v, fitted, seed, levels, max_depth)
    }

    fn with_levels(
        vt: &[f64],
        v: QuantizedInput<'_>,
        fitted: Fitted<'_>,
        seed: u64,
        levels: i64,
        max_depth: usize,
    ) -> Option<Quantization> {
        let vt_scale = scale_for(largest_magnitude(vt, fitted)?, levels);
        let round_vt = Rounding::new(vt_scale, levels);
        let mut packed = vec![0i64; vt.len()];
        let (v, bounds) = match v {
            QuantizedInput::Uniform(v) => {
                fill(&mut packed, seed, fitted, |r, random| {
                    round_vt.round(vt[r], random >> 32).wrapping_shl(32) | 1
                });
                (QuantizedV::Uniform(v), None)
            }
            QuantizedInput::Weighted(v, counted) => {
                // The low word holds Σ v_q, which must not borrow from the high word.
                if fitted.par_rows().any(|r| v[r] < 0.0) {
                    return None;
                }
                let v_scale = scale_for(largest_magnitude(v, fitted)?, levels);
                let round_v = Rounding::new(v_scale, levels);
                fill(&mut packed, seed, fitted, |r, random| {
                    let t = round_vt.round(vt[r], random >> 32);
                    let w = round_v.round(v[r], random & 0xffff_ffff);
                    t.wrapping_shl(32) + w
                });
                if counted {
                    return Some(Quantization {
                        packed,
                        vt_scale,
                        v: QuantizedV::Counted(v_scale),
                        bounds: None,
                    });
                }
                let (low, high) = fitted
                    .par_rows()
                    .map(|r| (low_word(packed[r]), low_word(packed[r])))
                    .reduce(|| (i64::MAX, i64::MIN), |a, b| (a.0.min(b.0), a.1.max(b.1)));
                let bounds = CountBounds::new(
                    low as f64 * v_scale,
                    high as f64 * v_scale,
                    v.len(),
                    max_depth,
                )?;
                (QuantizedV::Scaled(v_scale), Some(bounds))
            }
        };
        Some(Quantization {
            packed,
            vt_scale,
            v,
            bounds,
        })
    }

    pub(crate) fn stats(&self) -> QuantizedStats<'_> {
        QuantizedStats {
            packed: &self.packed,
            vt_scale: self.vt_scale,
            v: self.v,
            bounds: self.bounds,
        }
    }
}

/// The weights of the rows that `Quantization::new` rounds.
pub(crate) enum QuantizedInput<'a> {
    Uniform(f64),
    /// The weights, and whether bins count their rows.
    Weighted(&'a [f64], bool),
}

impl QuantizedStats<'_> {
    pub(crate) fn packed(&self) -> &[i64] {
        self.packed
    }

    pub(crate) fn count_bounds(&self) -> Option<&CountBounds> {
        self.bounds.as_ref()
    }

    pub(crate) fn uniform_v(&self) -> Option<f64> {
        match self.v {
            QuantizedV::Uniform(v) => Some(v),
            QuantizedV::Scaled(_) | QuantizedV::Counted(_) => None,
        }
    }

    /// Whether bins carry their row counts in a second i64 (`unpack_counted`).
    pub(crate) fn counted_apart(&self) -> bool {
        matches!(self.v, QuantizedV::Counted(_))
    }

    /// Whether a bin no row reaches holds +0.0 (see `support::zero_is_positive`).
    pub(crate) fn zero_is_positive(&self) -> bool {
        match self.v {
            QuantizedV::Uniform(v) => !v.is_sign_negative(),
            QuantizedV::Scaled(_) | QuantizedV::Counted(_) => true,
        }
    }

    /// The sums of a bin from its packed sum.
    #[inline]
    pub(crate) fn unpack(&self, packed: i64) -> BinStats {
        let (vt, low) = (high_word(packed), low_word(packed));
        match self.v {
            QuantizedV::Uniform(v) => BinStats {
                sum_vt: vt as f64 * self.vt_scale,
                sum_v: v * low as f64,
                count: low as u32,
            },
            QuantizedV::Scaled(scale) | QuantizedV::Counted(scale) => BinStats {
                sum_vt: vt as f64 * self.vt_scale,
                sum_v: low as f64 * scale,
                count: 0,
            },
        }
    }

    /// The sums of a bin with its row count apart.
    #[inline]
    pub(crate) fn unpack_counted(&self, [packed, count]: [i64; 2]) -> BinStats {
        BinStats {
            count: count as u32,
            ..self.unpack(packed)
        }
    }

    /// Row `r`'s own statistics, as one row of a bin.
    #[inline]
    pub(crate) fn row(&self, r: usize) -> BinStats {
        let mut stats = self.unpack(self.packed[r]);
        if self.counted_apart() {
            stats.count = 1;
        }
        stats
    }

    /// Totals of `rows` (integer sums: the same with any number of threads).
    pub(crate) fn totals(&self, rows: &[u32]) -> BinStats {
        let packed = self.packed;
        let sum = rows
            .par_chunks(CHUNK)
            .map(|chunk| {
                chunk
                    .iter()
                    .fold(0i64, |sum, &r| sum.wrapping_add(packed[r as usize]))
            })
            .reduce(|| 0, i64::wrapping_add);
        let mut total = self.unpack(sum);
        total.count = rows.len() as u32;
        total
    }
}

/// Σ v_q sits in the low 32 bits of a packed sum, below 2³¹ (n · L < 2³¹), so never borrows
/// from the high word.
#[inline]
fn low_word(packed: i64) -> i64 {
    packed & 0xffff_ffff
}

#[inline]
fn high_word(packed: i64) -> i64 {
    packed >> 32
}

/// The levels on either side of 0 for sums over `n_fit` rows: n_fit · L < 2³¹; `None` below
/// `MIN_LEVELS`.
fn levels_for(n_fit: usize) -> Option<i64> {
    let levels = i64::try_from((i32::MAX as usize) / n_fit.max(1))
        .unwrap_or(MAX_LEVELS)
        .min(MAX_LEVELS);
    (levels >= MIN_LEVELS).then_some(levels)
}

/// The rows a tree is fitted on, of `n`: all of them, or `rows`.
#[derive(Clone, Copy)]
struct Fitted<'a> {
    rows: Option<&'a [u32]>,
    n: usize,
}

impl Fitted<'_> {
    fn par_rows(&self) -> impl IndexedParallelIterator<Item = usize> + '_ {
        match self.rows {
            Some(rows) => Either::Left(rows.par_iter().map(|&r| r as usize)),
            None => Either::Right((0..self.n).into_par_iter()),
        }
        .with_min_len(CHUNK)
    }
}

/// The largest |x| over the fitted rows; `None` if one of them is not finite.
fn largest_magnitude(x: &[f64], fitted: Fitted<'_>) -> Option<f64> {
    let largest = fitted
        .par_rows()
        .map(|r| x[r].abs())
        .reduce(|| 0.0, f64::max);
    // A NaN would have been skipped by `max`: look for one.
    (largest.is_finite() && !fitted.par_rows().any(|r| x[r].is_nan())).then_some(largest)
}

/// The power of two s with largest / s ≤ levels (1 when largest is 0).
fn scale_for(largest: f64, levels: i64) -> f64 {
    if largest == 0.0 {
        return 1.0;
    }
    let mut scale = (largest / levels as f64).log2().ceil().exp2();
    while largest / scale > levels as f64 {
        scale *= 2.0;
    }
    scale
}

/// x / scale rounded down or up at random, up with probability equal to the fraction: unbiased.
struct Rounding {
    inverse_scale: f64,
    levels: i64,
}

impl Rounding {
    fn new(scale: f64, levels: i64) -> Self {
        Rounding {
            // A power of two: multiplying by its inverse is dividing by it, exactly.
            inverse_scale: 1.0 / scale,
            levels,
        }
    }

    /// With `random`, 32 random bits. x / scale + levels ≥ 0: truncation is floor there, and
    /// costs no call to `floor`.
    #[inline(always)]
    fn round(&self, x: f64, random: u64) -> i64 {
        let u = random as f64 * (1.0 / 4_294_967_296.0);
        let shifted = (x * self.inverse_scale + u + self.levels as f64) as i64;
        (shifted - self.levels).clamp(-self.levels, self.levels)
    }
}

/// Writes `value(r, 64 random bits of row r)` into the slot of every fitted row r; the bits
/// depend on `seed` and the row only.
fn fill(
    packed: &mut [i64],
    seed: u64,
    fitted: Fitted<'_>,
    value: impl Fn(usize, u64) -> i64 + Sync,
) {
    let value = |r: usize| value(r, bits_at(seed, r as u64));
    match fitted.rows {
        None => packed
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, p) in chunk.iter_mut().enumerate() {
                    *p = value(c * CHUNK + i);
                }
            }),
        Some(rows) => {
            let values: Vec<i64> = fitted.par_rows().map(value).collect();
            for (&r, v) in rows.iter().zip(values) {
                packed[r as usize] = v;
            }
        }
    }
}

#[cfg(test)]
#[path = "quantize_tests.rs"]
mod tests;
