//! Histograms of a data-parallel fit: every rank builds a node's histogram on its own rows, and
//! the sum over the ranks (added in rank order, so every rank holds the same bits) is the
//! histogram of all rows. Split search, leaf values and the decision which child to build then
//! read only summed histograms, so every rank grows the same tree (docs/algorithms.md §12).

use super::histogram::{Features, Histogram};
use crate::collective::Collective;
use crate::data::BinnedData;

impl Histogram {
    /// Replaces the bins of the built `features` with their sums over the ranks.
    pub(super) fn sum_over_ranks(
        &mut self,
        data: &BinnedData,
        features: Features<'_>,
        collective: &dyn Collective,
    ) {
        let ranges = features.ranges(data);
        let n_bins: usize = ranges.iter().map(|&(_, len)| len).sum();
        let mut flat = Vec::with_capacity(3 * n_bins);
        for &(start, len) in &ranges {
            for bin in &self.bins[start..start + len] {
                flat.extend([bin.sum_vt, bin.sum_v, f64::from(bin.count)]);
            }
        }
        collective.sum(&mut flat);
        let mut summed = flat.chunks_exact(3);
        for &(start, len) in &ranges {
            for (bin, sums) in self.bins[start..start + len].iter_mut().zip(&mut summed) {
                bin.sum_vt = sums[0];
                bin.sum_v = sums[1];
                // Counts are integers below 2^53: their f64 sum is exact.
                bin.count = sums[2] as u32;
            }
        }
    }
}
