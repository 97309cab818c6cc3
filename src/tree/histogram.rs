//! Gradient-statistics histograms: per (feature, bin) the sums Σ v t, Σ v and the row count.
//! Rows are cut into a number of blocks that depends only on the row count, never on the thread
//! count, and block histograms are summed in block order: the same sums with 1 or N threads.

use crate::data::BinnedData;
use rayon::prelude::*;
use std::ops::{AddAssign, SubAssign};

const MIN_BLOCK_ROWS: usize = 8_192;
const MAX_BLOCKS: usize = 16;

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

#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub bins: Vec<BinStats>,
}

impl Histogram {
    /// The histogram of `rows` (indices into the binned matrix and the statistics).
    pub fn build(data: &BinnedData, rows: &[u32], vt: &[f64], v: &[f64]) -> Histogram {
        let n_blocks = rows.len().div_ceil(MIN_BLOCK_ROWS).clamp(1, MAX_BLOCKS);
        if n_blocks == 1 {
            let mut bins = vec![BinStats::default(); data.total_bins()];
            accumulate(&mut bins, data, rows, vt, v);
            return Histogram { bins };
        }
        let block_rows = rows.len().div_ceil(n_blocks);
        let partials: Vec<Vec<BinStats>> = rows
            .par_chunks(block_rows)
            .map(|block| {
                let mut bins = vec![BinStats::default(); data.total_bins()];
                accumulate(&mut bins, data, block, vt, v);
                bins
            })
            .collect();
        let mut partials = partials.into_iter();
        let mut bins = partials.next().expect("at least one block");
        for partial in partials {
            for (b, p) in bins.iter_mut().zip(&partial) {
                *b += *p;
            }
        }
        Histogram { bins }
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

fn accumulate(bins: &mut [BinStats], data: &BinnedData, rows: &[u32], vt: &[f64], v: &[f64]) {
    let offsets = &data.offsets()[..data.n_features()];
    for &r in rows {
        let r = r as usize;
        let stats = BinStats {
            sum_vt: vt[r],
            sum_v: v[r],
            count: 1,
        };
        for (&offset, &bin) in offsets.iter().zip(data.matrix.row(r)) {
            bins[offset + bin as usize] += stats;
        }
    }
}

/// Totals of `rows`, summed in the same fixed block order as `Histogram::build`.
pub fn node_totals(rows: &[u32], vt: &[f64], v: &[f64]) -> BinStats {
    let mut total = BinStats::default();
    for &r in rows {
        let r = r as usize;
        total += BinStats {
            sum_vt: vt[r],
            sum_v: v[r],
            count: 1,
        };
    }
    total
}
