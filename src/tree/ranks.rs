//! The ranks of a data-parallel fit, as the grower sees them: every rank builds a node's histogram
//! on its own rows, and the sum over the ranks (added in rank order, so every rank holds the same
//! bits) is the histogram of all rows. Split search, leaf values and the decision which child to
//! build then read only summed histograms and counts, so every rank grows the same tree
//! (docs/algorithms.md §12). A process that holds every row is a world of one: its histograms are
//! complete as built, and the shortcuts that count its own rows are open to it.

use super::bins::BinStats;
use super::histogram::{Histogram, RowStats};
use super::histogram_kernel::Features;
use crate::collective::Collective;
use crate::data::BinnedData;

/// The processes a tree's rows are spread over.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ranks<'a> {
    /// The other ranks' collective; `None`: this process holds every row.
    shared: Option<&'a dyn Collective>,
}

impl<'a> Ranks<'a> {
    /// The ranks of `collective`; without one, or in a world of one, this process alone.
    pub(super) fn of(collective: Option<&'a dyn Collective>) -> Self {
        Ranks {
            shared: collective.filter(|c| c.world() > 1),
        }
    }

    /// Whether this process holds every row of the tree. The shortcuts that read this process's
    /// own rows or counts hold only then: a tree on one feature taking its children's bins from
    /// the parent's, histograms without bin counts or on a support, quantized statistics (whose
    /// scale each rank would draw from its own rows).
    pub(super) fn alone(&self) -> bool {
        self.shared.is_none()
    }

    /// Replaces `values` with their sums over the ranks (alone: leaves them).
    pub(super) fn sum(&self, values: &mut [f64]) {
        if let Some(collective) = self.shared {
            collective.sum(values);
        }
    }

    /// Overwrites the bins of `features` in `hist` with the histogram of a node whose rows on
    /// this rank are `rows`: of all its rows, on every rank.
    pub(super) fn build(
        &self,
        hist: &mut Histogram,
        data: &BinnedData,
        rows: &[u32],
        row_stats: &RowStats<'_>,
        features: Features<'_>,
    ) {
        hist.build_into(data, rows, row_stats, features);
        if let Some(collective) = self.shared {
            hist.sum_over_ranks(data, features, collective);
        }
    }

    /// The totals of the root, whose rows here are `rows` and whose histogram (`build`'s) is
    /// `hist`. Alone, summed over the rows; across ranks, the sums of the first built feature's
    /// bins (every row is in one bin of each feature), the same bits on every rank.
    pub(super) fn root_totals(
        &self,
        hist: &Histogram,
        data: &BinnedData,
        rows: &[u32],
        row_stats: &RowStats<'_>,
        features: Features<'_>,
    ) -> BinStats {
        match (self.shared, features) {
            (None, _) => row_stats.totals(rows),
            (Some(_), Features::All) => hist.feature_totals(data, 0),
            (Some(_), Features::Only(list)) => hist.feature_totals(data, list[0]),
        }
    }
}

impl Histogram {
    /// Replaces the bins of the built `features` with their sums over the ranks.
    fn sum_over_ranks(
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
