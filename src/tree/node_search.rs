//! The search phase of growing a tree: a node's best split (split.rs) among the candidates its
//! sample of features, its interaction path and its monotone interval allow, from a histogram
//! with bin counts, or without them where the weights' count bounds decide the split.

use super::bins::BinStats;
use super::candidates::Candidates;
use super::constraints::{Constraints, NodeLimits};
use super::growing_tree::Child;
use super::histogram::{Histogram, RowStats};
use super::histogram_kernel::Features;
use super::node_histograms::NodeHistogram;
use super::node_sample::NodeFeatureSampler;
use super::noise::TreeNoise;
use super::scan::{NodeConstraint, SplitParams};
use super::split::{best_split_bounded, best_split_within, NeedCounts, SplitCandidate};
use crate::data::BinnedData;
use crate::threads;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Once a tree grown without bin counts had to count the rows of more than this share of the
/// nodes it searched (the weights' bounds could not decide their splits), the trees after it
/// are grown with counts. Each recount is a counting pass over the node's rows, a copy of its
/// histogram and a second search, against the few percent that leaving counts out saves: on
/// 1M × 28 (logistic, 100 trees) 5–15% of the nodes needed counts and trees without them were
/// 2–3% faster; softmax on letter (26 classes, where most rows of a class have a Hessian near
/// 0) 60–95%, and the fit took 1.5× the time of one with counts. A boosting fit's weights
/// spread out as it goes (probabilities move towards 0 and 1), so the switch is not undone.
const MAX_RECOUNTED_SHARE: f64 = 0.25;
/// Below this many bins per histogram, the two children of a split are searched on one thread
/// unless the workers are kept awake (`threads::with_awake_workers`): a search then takes a few
/// microseconds, about what waking a sleeping worker costs (on 5,000 × 50 rows two threads were
/// slower than one with every pair searched side by side).
const PARALLEL_SEARCH_MIN_BINS: usize = 16_384;

/// The split search of one tree's nodes.
pub(super) struct SplitSearch<'a> {
    data: &'a BinnedData,
    row_stats: &'a RowStats<'a>,
    features: Features<'a>,
    candidates: &'a Candidates,
    split_params: SplitParams,
    node_sampler: Option<NodeFeatureSampler>,
    /// The tree's split noise (`random_strength`), drawn per node.
    noise: Option<TreeNoise>,
    constraints: &'a Constraints,
    /// Bins of the histograms searched.
    built_bins: usize,
    /// On one feature the two children's searches are too small to share out.
    one_feature: bool,
    /// Nodes searched without counts, and those of them that needed counts.
    bounded_searches: AtomicUsize,
    recounts: AtomicUsize,
}

impl<'a> SplitSearch<'a> {
    /// `node_sample`: the fraction of the candidate features each node may split on, and the
    /// seed of its draws.
    pub(super) fn new(
        data: &'a BinnedData,
        row_stats: &'a RowStats<'a>,
        features: Features<'a>,
        candidates: &'a Candidates,
        split_params: SplitParams,
        node_sample: (f64, u64),
        noise: Option<TreeNoise>,
        constraints: &'a Constraints,
        one_feature: bool,
    ) -> Self {
        SplitSearch {
            data,
            row_stats,
            features,
            candidates,
            split_params,
            node_sampler: NodeFeatureSampler::new(data, candidates, node_sample),
            noise,
            constraints,
            built_bins: features.n_bins(data),
            one_feature,
            bounded_searches: AtomicUsize::new(0),
            recounts: AtomicUsize::new(0),
        }
    }

    /// The best split of `node`, whose histogram `hist` (zero outside `support`, if given) holds
    /// its rows `node_rows` on this rank and sums to `stats`.
    pub(super) fn find(
        &self,
        hist: &Histogram,
        support: Option<&[u32]>,
        node_rows: &[u32],
        stats: BinStats,
        node: usize,
        limits: &NodeLimits,
    ) -> Option<SplitCandidate> {
        let data = self.data;
        let mut node_candidates =
            (self.node_sampler.as_ref()).map(|s| s.candidates(self.candidates, node));
        if let Some(allowed) = (self.constraints).allowed_features(&limits.path, data.n_features())
        {
            let own = node_candidates.as_ref().unwrap_or(self.candidates);
            node_candidates = Some(own.within(&allowed));
        }
        let candidates = node_candidates.as_ref().unwrap_or(self.candidates);
        let constraint = self.constraints.monotone().map(|monotone| NodeConstraint {
            monotone,
            lower: limits.lower,
            upper: limits.upper,
        });
        let constraint = constraint.as_ref();
        let params = &SplitParams {
            noise: self.noise.map(|noise| noise.at(node)),
            ..self.split_params
        };
        // Counting keeps the support: a node's rows reach only bins of its support.
        let exact = |hist: &Histogram| {
            best_split_within(hist, support, data, stats, params, candidates, constraint)
        };
        let Some(bounds) = self.row_stats.count_bounds() else {
            return exact(hist);
        };
        self.bounded_searches.fetch_add(1, Relaxed);
        best_split_bounded(
            hist, support, data, stats, params, candidates, bounds, constraint,
        )
        .unwrap_or_else(|NeedCounts| {
            self.recounts.fetch_add(1, Relaxed);
            exact(&hist.with_counts(data, node_rows, self.features))
        })
    }

    /// The best splits of the two `children` of a split, whose rows on this rank are in `rows`:
    /// of those `searched` that have a histogram. Large searches run side by side.
    pub(super) fn children(
        &self,
        children: &[Child; 2],
        hists: &[Option<NodeHistogram>; 2],
        searched: [bool; 2],
        rows: &[u32],
    ) -> [Option<SplitCandidate>; 2] {
        let search = |side: usize| {
            let (child, hist) = (&children[side], hists[side].as_ref());
            hist.filter(|_| searched[side]).and_then(|h| {
                let node_rows = &rows[child.start..child.end];
                let support = h.support.as_deref();
                self.find(
                    &h.hist,
                    support,
                    node_rows,
                    child.stats,
                    child.node,
                    &child.limits,
                )
            })
        };
        // One feature's bins, few bins, or two small supports: less work than waking another
        // thread, unless the workers are kept awake.
        let on_supports = hists
            .iter()
            .all(|h| h.as_ref().is_some_and(|h| h.support.is_some()));
        let worth_a_thread = threads::workers_awake()
            || (self.built_bins >= PARALLEL_SEARCH_MIN_BINS && !on_supports);
        if !self.one_feature && worth_a_thread {
            rayon::join(|| search(0), || search(1)).into()
        } else {
            [search(0), search(1)]
        }
    }

    /// Whether the bounds left so many of the searched nodes to be counted that the trees after
    /// this one should be grown with counts (see `MAX_RECOUNTED_SHARE`).
    pub(super) fn recounted_too_often(&self) -> bool {
        let searched = self.bounded_searches.load(Relaxed);
        searched > 0 && self.recounts.load(Relaxed) as f64 > MAX_RECOUNTED_SHARE * searched as f64
    }
}
