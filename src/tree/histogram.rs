//! Gradient-statistics histograms: per (feature, bin) the sums Σ v t, Σ v and the row count.
//!
//! The kernel is the hot loop of training. What it does, and why:
//! - Each row adds one packed statistic to one bin per feature: `[vt, 1]` (16 bytes, one SIMD
//!   add) when every fitting weight is the same (unweighted least squares: Σ v = v₀ · count), else
//!   `[vt, v, 1, 0]`. Sums stay in f64: the count is exact below 2⁵³ and subtraction stays exact
//!   to rounding.
//! - A node's rows are scattered over the matrix; the loop prefetches the bin row and statistics
//!   of a row a few iterations ahead, so the cache misses of many rows overlap.
//! - Rows are cut into a number of blocks that depends only on the row count, never on the thread
//!   count, and block histograms are summed in block order: the same sums with 1 or N threads.
//!   Blocks are few and large (each has its own buffer to clear and merge).

use crate::data::{BinnedData, BinnedMatrix};
use rayon::prelude::*;
use std::ops::{AddAssign, SubAssign};

/// Rows per block below which a histogram is built by one task.
const MIN_BLOCK_ROWS: usize = 8_192;
/// At most this many blocks (and parallel tasks) per histogram.
const MAX_BLOCKS: usize = 8;
/// Rows per task when summing the totals of a node.
const TOTALS_CHUNK: usize = 16_384;
/// Rows between a prefetch and the use of the prefetched row.
const PREFETCH_AHEAD: usize = 12;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BinStats {
    /// Σ v t
    pub sum_vt: f64,
    /// Σ v
    pub sum_v: f64,
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
    fn sub(mut self, o: Self) -> Self {
        self -= o;
        self
    }
}

impl std::ops::Add for BinStats {
    type Output = BinStats;
    fn add(mut self, o: Self) -> Self {
        self += o;
        self
    }
}

/// The per-row statistics a tree is fitted to, in the form the kernel wants.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RowStats<'a> {
    /// Every fitting weight equals `v`.
    Uniform {
        vt: &'a [f64],
        v: f64,
    },
    Weighted {
        vt: &'a [f64],
        v: &'a [f64],
    },
}

impl<'a> RowStats<'a> {
    /// Detects constant weights (one pass; exact comparison, so results are unchanged). An empty
    /// `v` means every weight is 1 (see `FitStats`).
    pub(crate) fn new(vt: &'a [f64], v: &'a [f64]) -> Self {
        if v.is_empty() {
            return RowStats::Uniform { vt, v: 1.0 };
        }
        match v.first() {
            Some(&v0)
                if v.par_iter()
                    .with_min_len(1 << 16)
                    .all(|&x| x.to_bits() == v0.to_bits()) =>
            {
                RowStats::Uniform { vt, v: v0 }
            }
            _ => RowStats::Weighted { vt, v },
        }
    }

    /// Totals of `rows`, summed in fixed chunks of rows (the same sums with any number of
    /// threads).
    pub(crate) fn totals(&self, rows: &[u32]) -> BinStats {
        let chunk_totals: Vec<BinStats> = rows
            .par_chunks(TOTALS_CHUNK)
            .map(|chunk| {
                let mut total = BinStats::default();
                match *self {
                    RowStats::Uniform { vt, .. } => {
                        for &r in chunk {
                            total.sum_vt += vt[r as usize];
                        }
                    }
                    RowStats::Weighted { vt, v } => {
                        for &r in chunk {
                            total.sum_vt += vt[r as usize];
                            total.sum_v += v[r as usize];
                        }
                    }
                }
                total
            })
            .collect();
        let mut total = chunk_totals
            .into_iter()
            .fold(BinStats::default(), |a, b| a + b);
        total.count = rows.len() as u32;
        if let RowStats::Uniform { v, .. } = *self {
            total.sum_v = v * rows.len() as f64;
        }
        total
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub bins: Vec<BinStats>,
}

impl Histogram {
    /// The histogram of `rows` (indices into the binned matrix and the statistics).
    pub fn build(data: &BinnedData, rows: &[u32], vt: &[f64], v: &[f64]) -> Histogram {
        let mut hist = Histogram {
            bins: vec![BinStats::default(); data.total_bins()],
        };
        hist.build_into(data, rows, &RowStats::new(vt, v));
        hist
    }

    /// Overwrites `self` (of `data.total_bins()` bins) with the histogram of `rows`.
    pub(crate) fn build_into(&mut self, data: &BinnedData, rows: &[u32], stats: &RowStats<'_>) {
        match *stats {
            RowStats::Uniform { vt, v } => {
                let unpack = |p: &[f64; 2]| BinStats {
                    sum_vt: p[0],
                    sum_v: v * p[1],
                    count: p[1] as u32,
                };
                build_packed::<2>(
                    data,
                    rows,
                    |r| [vt[r], 1.0],
                    |r| prefetch(&vt[r]),
                    |packed| {
                        for (out, p) in self.bins.iter_mut().zip(packed) {
                            *out = unpack(p);
                        }
                    },
                );
            }
            RowStats::Weighted { vt, v } => {
                let unpack = |p: &[f64; 4]| BinStats {
                    sum_vt: p[0],
                    sum_v: p[1],
                    count: p[2] as u32,
                };
                let stat = |r: usize| [vt[r], v[r], 1.0, 0.0];
                let prefetch_stat = |r: usize| {
                    prefetch(&vt[r]);
                    prefetch(&v[r]);
                };
                build_packed::<4>(data, rows, stat, prefetch_stat, |packed| {
                    for (out, p) in self.bins.iter_mut().zip(packed) {
                        *out = unpack(p);
                    }
                });
            }
        }
    }

    /// Turns the parent's histogram into the sibling's: parent − child.
    pub fn subtract(&mut self, child: &Histogram) {
        for (b, c) in self.bins.iter_mut().zip(&child.bins) {
            *b -= *c;
        }
    }

    pub fn feature<'h>(&'h self, data: &BinnedData, feature: usize) -> &'h [BinStats] {
        let offsets = data.offsets();
        &self.bins[offsets[feature]..offsets[feature + 1]]
    }
}

/// Packed per-bin sums of `stat(row)` over `rows`, blocks merged in block order.
fn build_packed<const K: usize>(
    data: &BinnedData,
    rows: &[u32],
    stat: impl Fn(usize) -> [f64; K] + Sync,
    prefetch_stat: impl Fn(usize) + Sync,
    consume: impl FnOnce(&[[f64; K]]),
) {
    let total_bins = data.total_bins();
    let n_blocks = (rows.len() / MIN_BLOCK_ROWS).clamp(1, MAX_BLOCKS);
    let offsets: Vec<u32> = data.offsets()[..data.n_features()]
        .iter()
        .map(|&o| o as u32)
        .collect();
    // The block buffers are reused from call to call: fresh ones of this size come from mmap, and
    // their page faults and unmapping cost more than filling them.
    PACKED.with_borrow_mut(|buffer| {
        buffer.clear();
        buffer.resize(total_bins * n_blocks * K, 0.0);
        let (partials, _) = buffer.as_chunks_mut::<K>();
        let block_rows = rows.len().div_ceil(n_blocks);
        if n_blocks == 1 {
            accumulate_fastest(
                partials,
                &offsets,
                data.matrix(),
                rows,
                &stat,
                &prefetch_stat,
            );
        } else {
            partials
                .par_chunks_mut(total_bins)
                .zip(rows.par_chunks(block_rows))
                .for_each(|(hist, block)| {
                    accumulate_fastest(hist, &offsets, data.matrix(), block, &stat, &prefetch_stat);
                });
        }
        let (first, rest) = partials.split_at_mut(total_bins);
        for partial in rest.chunks_exact(total_bins) {
            for (a, b) in first.iter_mut().zip(partial) {
                for k in 0..K {
                    a[k] += b[k];
                }
            }
        }
        consume(first);
    });
}

thread_local! {
    static PACKED: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `accumulate` compiled for AVX when the CPU has it: a 4-wide statistic is then one 32-byte add
/// per bin instead of two 16-byte ones (the same IEEE additions, so the same sums).
fn accumulate_fastest<const K: usize>(
    hist: &mut [[f64; K]],
    offsets: &[u32],
    matrix: &BinnedMatrix,
    rows: &[u32],
    stat: &impl Fn(usize) -> [f64; K],
    prefetch_stat: &impl Fn(usize),
) {
    #[cfg(target_arch = "x86_64")]
    if K == 4 && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU supports AVX, checked just above.
        unsafe { accumulate_avx(hist, offsets, matrix, rows, stat, prefetch_stat) };
        return;
    }
    accumulate(hist, offsets, matrix, rows, stat, prefetch_stat);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn accumulate_avx<const K: usize>(
    hist: &mut [[f64; K]],
    offsets: &[u32],
    matrix: &BinnedMatrix,
    rows: &[u32],
    stat: &impl Fn(usize) -> [f64; K],
    prefetch_stat: &impl Fn(usize),
) {
    accumulate(hist, offsets, matrix, rows, stat, prefetch_stat);
}

#[inline(always)]
fn accumulate<const K: usize>(
    hist: &mut [[f64; K]],
    offsets: &[u32],
    matrix: &BinnedMatrix,
    rows: &[u32],
    stat: &impl Fn(usize) -> [f64; K],
    prefetch_stat: &impl Fn(usize),
) {
    for (i, &r) in rows.iter().enumerate() {
        if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
            // A row may straddle two cache lines: fetch both ends.
            let row = matrix.row(ahead as usize);
            prefetch(row.as_ptr());
            prefetch(row.as_ptr_range().end.wrapping_sub(1));
            prefetch_stat(ahead as usize);
        }
        let r = r as usize;
        let s = stat(r);
        for (&offset, &bin) in offsets.iter().zip(matrix.row(r)) {
            // SAFETY: `offset` is feature j's offset and `bin` < its bin count (a `BinnedData`
            // is always binned by its checked mappers), so the index is below `total_bins`,
            // the length of `hist`. The bounds check would cost ~5% of the kernel.
            let h = unsafe { hist.get_unchecked_mut(offset as usize + bin as usize) };
            for k in 0..K {
                h[k] += s[k];
            }
        }
    }
}

/// A hint to load the cache line at `p`; it never faults and changes no state.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it is defined for any address, valid or not.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
