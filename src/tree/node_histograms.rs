//! The histograms phase of growing a tree: the root's histogram, and at each split the two
//! children's. Only the smaller child's is built from its rows; the larger child's is the
//! parent's minus it. Small nodes get histograms on a support (tree/support.rs), and a tree on
//! one feature takes both children's from the parent's bins, sent either way.

use super::bins::BinStats;
use super::growing_tree::Child;
use super::histogram::{Histogram, RowStats};
use super::histogram_kernel::Features;
use super::ranks::Ranks;
use super::split::SplitCandidate;
use super::support::{
    build_on_support, shrink_support, subtract_on_support, support_of_dense, worth_a_support,
    zero_is_positive, HistogramPool, KeptHistogram,
};
use crate::data::BinnedData;

/// A node's histogram, with the support outside of which its bins are zero, if it has one.
pub(super) struct NodeHistogram {
    pub(super) hist: Histogram,
    pub(super) support: Option<Vec<u32>>,
}

/// The histograms of one tree's nodes, from a pool reused from node to node.
pub(super) struct NodeHistograms<'a> {
    data: &'a BinnedData,
    row_stats: &'a RowStats<'a>,
    features: Features<'a>,
    one_feature: Option<usize>,
    ranks: Ranks<'a>,
    /// Whether small nodes' histograms may have a support.
    supports: bool,
    n_built: usize,
    built_bins: usize,
    pool: HistogramPool,
}

impl<'a> NodeHistograms<'a> {
    /// The histograms of a tree on the bins of `features` (of `one_feature` only, if given),
    /// from `spare` histograms of earlier trees (any contents).
    pub(super) fn new(
        data: &'a BinnedData,
        row_stats: &'a RowStats<'a>,
        features: Features<'a>,
        one_feature: Option<usize>,
        ranks: Ranks<'a>,
        spare: Vec<Histogram>,
    ) -> Self {
        // Not across ranks (the sums come from every rank), nor on one feature (no histograms
        // built), nor where a pass reads bundled columns.
        let supports = ranks.alone()
            && one_feature.is_none()
            && zero_is_positive(row_stats)
            && !(features == Features::All && data.bundles().is_some());
        NodeHistograms {
            data,
            row_stats,
            features,
            one_feature,
            ranks,
            supports,
            n_built: match features {
                Features::All => data.n_features(),
                Features::Only(list) => list.len(),
            },
            built_bins: features.n_bins(data),
            pool: HistogramPool::new(data.total_bins(), spare),
        }
    }

    /// The root's histogram, of its `rows` here (on every rank), and the root's totals.
    pub(super) fn root(&mut self, rows: &[u32]) -> (Histogram, BinStats) {
        let (data, features) = (self.data, self.features);
        let mut hist = self.pool.any();
        self.ranks
            .build(&mut hist, data, rows, self.row_stats, features);
        // A tree on one feature finds its totals in its bins (every row is in one of them).
        let total = match self.one_feature {
            Some(feature) => hist.feature_totals(data, feature),
            None => (self.ranks).root_totals(&hist, data, rows, self.row_stats, features),
        };
        (hist, total)
    }

    /// The histograms of the two `children` of `split`, whose rows here are in `rows`, from
    /// what their parent kept; none when neither child is `searched`.
    pub(super) fn children(
        &mut self,
        kept: Option<KeptHistogram>,
        split: &SplitCandidate,
        children: &[Child; 2],
        searched: [bool; 2],
        rows: &[u32],
    ) -> [Option<NodeHistogram>; 2] {
        if !(searched[0] || searched[1]) {
            self.discard(kept);
            return [None, None];
        }
        let kept = kept.expect("a node with a split has a histogram");
        let (mut parent, parent_support) = self.pool.restore(kept);
        if let Some(feature) = self.one_feature {
            let mut left = self.pool.any();
            parent.move_bins(&mut left, self.data, feature, &split.left_bins);
            let whole = |hist| {
                Some(NodeHistogram {
                    hist,
                    support: None,
                })
            };
            return [whole(left), whole(parent)];
        }
        // The side to build is chosen from the counts (summed over the ranks), the same on every
        // rank.
        let left_is_smaller = split.left.count <= split.right.count;
        let rows_of = |child: &Child| &rows[child.start..child.end];
        let (small_rows, large_rows) = match left_is_smaller {
            true => (rows_of(&children[0]), rows_of(&children[1])),
            false => (rows_of(&children[1]), rows_of(&children[0])),
        };
        let small = self.build_subtracted(&mut parent, small_rows);
        let support = self.large_support(&parent, parent_support, large_rows);
        let large = Some(NodeHistogram {
            hist: parent,
            support,
        });
        match left_is_smaller {
            true => [Some(small), large],
            false => [large, Some(small)],
        }
    }

    /// The histogram of the rows `small_rows`, subtracted from `parent`'s bins.
    fn build_subtracted(&mut self, parent: &mut Histogram, small_rows: &[u32]) -> NodeHistogram {
        let (data, row_stats, features) = (self.data, self.row_stats, self.features);
        if self.worth_a_support(small_rows.len()) {
            let mut small = self.pool.zeroed();
            let mut support = self.pool.support_list();
            let scratch = &mut self.pool.scratch;
            build_on_support(
                &mut small,
                &mut support,
                scratch,
                data,
                small_rows,
                row_stats,
                features,
            );
            subtract_on_support(parent, &small, &support);
            return NodeHistogram {
                hist: small,
                support: Some(support),
            };
        }
        let mut small = self.pool.any();
        self.ranks
            .build(&mut small, data, small_rows, row_stats, features);
        parent.subtract_features(&small, data, features);
        NodeHistogram {
            hist: small,
            support: None,
        }
    }

    /// The support of the larger child, whose histogram is `hist` and rows `large_rows`: the
    /// parent's, shrunk; a dense one gets its own once small enough (one pass over the bins,
    /// which spares its descendants theirs). Bins with counts show where the rows are.
    fn large_support(
        &mut self,
        hist: &Histogram,
        parent_support: Option<Vec<u32>>,
        large_rows: &[u32],
    ) -> Option<Vec<u32>> {
        let (data, features) = (self.data, self.features);
        let uncounted_rows = self.row_stats.count_bounds().map(|_| large_rows);
        match parent_support {
            Some(mut support) => {
                let scratch = &mut self.pool.scratch;
                shrink_support(hist, &mut support, scratch, data, uncounted_rows, features);
                Some(support)
            }
            None if self.worth_a_support(large_rows.len()) => {
                let mut support = self.pool.support_list();
                let scratch = &mut self.pool.scratch;
                support_of_dense(hist, &mut support, scratch, data, uncounted_rows, features);
                Some(support)
            }
            None => None,
        }
    }

    fn worth_a_support(&self, rows: usize) -> bool {
        self.supports && worth_a_support(rows, self.n_built, self.built_bins)
    }

    /// What a waiting node keeps of its histogram until it is split; `None` when it will not be
    /// `split_later` (its bins go back to the pool at once).
    pub(super) fn keep(
        &mut self,
        hist: Option<NodeHistogram>,
        split_later: bool,
    ) -> Option<KeptHistogram> {
        let NodeHistogram { hist, support } = hist?;
        if split_later {
            return Some(self.pool.keep(hist, support));
        }
        self.pool.release(hist, support);
        None
    }

    /// Takes back what a node kept that will not be split.
    pub(super) fn discard(&mut self, kept: Option<KeptHistogram>) {
        if let Some(kept) = kept {
            self.pool.discard(kept);
        }
    }

    /// The histograms left for the next tree.
    pub(super) fn into_spare(self) -> Vec<Histogram> {
        self.pool.into_spare()
    }
}
