//! Oblivious (symmetric) trees, as in CatBoost (Prokhorenkova et al. 2018; Dorogush et al.
//! 2018): every node of a level is split by the same rule, chosen by the gain summed over the
//! level's nodes. The tree is grown on the same node histograms as an ordinary one (the smaller
//! child's built, the larger's subtracted; across ranks, summed before any gain is computed, so
//! every rank chooses the same rule) and is kept as an ordinary `Tree`, so that leaf rules,
//! SHAP, exports and model files take it as they are; prediction indexes its leaves by the bits
//! of the level tests (oblivious_table.rs).
//!
//! A level's rule is a numeric threshold with one default direction for missing values, or a
//! categorical subset: the prefixes of the levels ordered by their mean target over the whole
//! level (the rows of every node of the level pooled, smoothed and filtered as in split.rs), so
//! that one subset serves every node. A node where the level's rule is inadmissible (a child
//! under `min_samples_leaf` or `min_weight_leaf`, or, under a monotone constraint, children
//! whose values break the direction) adds nothing to the level's gain and stays a leaf, where
//! CatBoost would split it anyway and leave a child without rows: the tree stays oblivious on
//! its splits, and its leaf table repeats such a leaf's value under every index that reaches it.
//! Growth stops when no rule has a summed gain above `min_split_gain` (and 0), at `max_depth`,
//! or before a level would take the tree beyond `max_leaves`.

use super::bins::{BinSet, BinStats};
use super::candidates::Candidates;
use super::constraints::NodeLimits;
use super::grow_inputs::{GrowBuffers, GrowOptions};
use super::growing_tree::GrowingTree;
use super::grown::GrownTree;
use super::histogram::RowStats;
use super::histogram_kernel::Features;
use super::node_histograms::{NodeHistogram, NodeHistograms};
use super::node_sample::NodeFeatureSampler;
use super::ranks::Ranks;
use super::scan::{children_gain, decrease, score, NodeConstraint, SplitParams};
use super::split::{categories_by_smoothed_mean, SplitCandidate};
use super::tree_params::TreeParams;
use crate::data::BinnedData;
use rayon::prelude::*;
use std::ops::Range;

/// A node of the level being split.
struct LevelNode {
    node: usize,
    rows: Range<usize>,
    stats: BinStats,
    limits: NodeLimits,
    hist: NodeHistogram,
}

/// The rule of one level: a split of `feature` sending `left_bins` left.
#[derive(Debug, Clone, PartialEq)]
struct LevelRule {
    feature: usize,
    threshold: Option<u8>,
    left_bins: BinSet,
    gain: f64,
}

/// Grows an oblivious tree on `row_stats` (with exact bin counts).
pub(super) fn grow_oblivious(
    data: &BinnedData,
    row_stats: &RowStats<'_>,
    features: Features<'_>,
    params: &TreeParams,
    candidates: &Candidates,
    buffers: &mut GrowBuffers,
    options: &GrowOptions<'_>,
) -> GrownTree {
    debug_assert!(row_stats.count_bounds().is_none());
    let ranks = Ranks::of(options.collective);
    let constraints = options.constraints.cloned().unwrap_or_default();
    let spare = std::mem::take(&mut buffers.histograms);
    let mut tree = GrowingTree::new(
        data,
        options.rows,
        buffers.rows.pop().unwrap_or_default(),
        &mut buffers.scratch,
        ranks,
        params.l2_leaf,
        constraints.monotone(),
        false,
        None,
    );
    let mut histograms = NodeHistograms::new(data, row_stats, features, None, ranks, spare);
    let split_params = params.split_params();
    let sampler = NodeFeatureSampler::new(
        data,
        candidates,
        (options.colsample_bynode, options.node_seed),
    );
    let (hist, total) = histograms.root(tree.rows());
    tree.add_root(total);
    let mut level = vec![LevelNode {
        node: 0,
        rows: 0..tree.rows().len(),
        stats: total,
        limits: NodeLimits::root(),
        hist: NodeHistogram {
            hist,
            support: None,
        },
    }];
    if !params.may_split(0, &total) {
        level.clear();
        tree.add_leaf(0, 0..tree.rows().len());
    }
    for depth in 0..params.max_depth {
        if level.is_empty() || tree.n_leaves() + level.len() > params.max_leaves {
            break;
        }
        // Every node of a level has split on the same features: one interaction path.
        let mut level_candidates = sampler.as_ref().map(|s| s.candidates(candidates, depth));
        if let Some(allowed) =
            constraints.allowed_features(&level[0].limits.path, data.n_features())
        {
            let own = level_candidates.as_ref().unwrap_or(candidates);
            level_candidates = Some(own.within(&allowed));
        }
        let level_candidates = level_candidates.as_ref().unwrap_or(candidates);
        let rule = best_level_rule(
            data,
            &level,
            &split_params,
            constraints.monotone(),
            level_candidates,
        );
        let Some(rule) = rule else { break };
        let mut next = Vec::with_capacity(2 * level.len());
        for node in level {
            let split = node_split(&rule, &node, data, &split_params, constraints.monotone());
            let Some(mut split) = split else {
                histograms.keep(Some(node.hist), false);
                tree.add_leaf(node.node, node.rows);
                continue;
            };
            let children = tree.split(node.node, node.rows.clone(), &node.limits, &mut split);
            let searched = children
                .each_ref()
                .map(|child| params.may_split(depth + 1, &child.stats));
            let kept = histograms.keep(Some(node.hist), searched.contains(&true));
            let hists = histograms.children(kept, &split, &children, searched, tree.rows());
            for ((child, hist), searched) in children.into_iter().zip(hists).zip(searched) {
                match hist {
                    Some(hist) if searched => next.push(LevelNode {
                        node: child.node,
                        rows: child.start..child.end,
                        stats: child.stats,
                        limits: child.limits,
                        hist,
                    }),
                    hist => {
                        histograms.keep(hist, false);
                        tree.add_leaf(child.node, child.start..child.end);
                    }
                }
            }
        }
        level = next;
    }
    for node in level {
        histograms.keep(Some(node.hist), false);
        tree.add_leaf(node.node, node.rows);
    }
    buffers.histograms = histograms.into_spare();
    tree.finish()
}

/// The split of `node` by the level's `rule`, if admissible there.
fn node_split(
    rule: &LevelRule,
    node: &LevelNode,
    data: &BinnedData,
    params: &SplitParams,
    monotone: Option<&[i8]>,
) -> Option<SplitCandidate> {
    let bins = node.hist.hist.feature(data, rule.feature);
    let mut left = BinStats::default();
    for (b, stats) in bins.iter().enumerate() {
        if rule.left_bins.contains(b as u8) {
            left += *stats;
        }
    }
    let gains = NodeGains::new(node, params, monotone);
    let gain = gains.gain(left, gains.direction(rule.feature))?;
    Some(SplitCandidate {
        feature: rule.feature,
        gain,
        threshold: rule.threshold,
        left_bins: rule.left_bins,
        left,
        right: node.stats - left,
    })
}

/// The gains of one node's candidate splits, inadmissible ones `None`; unlike `Scan::gain`, a
/// gain of 0 or below `min_split_gain` still counts (the level's sum is what is compared).
struct NodeGains<'a> {
    params: &'a SplitParams,
    total: BinStats,
    parent_score: f64,
    constraint: Option<NodeConstraint<'a>>,
}

impl<'a> NodeGains<'a> {
    fn new(node: &LevelNode, params: &'a SplitParams, monotone: Option<&'a [i8]>) -> Self {
        let constraint = monotone.map(|monotone| NodeConstraint {
            monotone,
            lower: node.limits.lower,
            upper: node.limits.upper,
        });
        let total = node.stats;
        let parent_score = match &constraint {
            None => score(&total, params.l2_leaf),
            Some(c) => decrease(&total, params.l2_leaf, c.value(&total, params.l2_leaf)),
        };
        NodeGains {
            params,
            total,
            parent_score,
            constraint,
        }
    }

    fn direction(&self, feature: usize) -> i8 {
        self.constraint.as_ref().map_or(0, |c| c.direction(feature))
    }

    #[inline]
    fn gain(&self, left: BinStats, direction: i8) -> Option<f64> {
        let right = self.total - left;
        let p = self.params;
        let m = p.min_samples_leaf.max(1);
        let admissible = left.count as usize >= m
            && right.count as usize >= m
            && left.sum_v >= p.min_weight_leaf
            && right.sum_v >= p.min_weight_leaf
            && left.sum_v + p.l2_leaf > 0.0
            && right.sum_v + p.l2_leaf > 0.0;
        if !admissible {
            return None;
        }
        children_gain(
            &left,
            &right,
            p.l2_leaf,
            self.parent_score,
            self.constraint.as_ref(),
            direction,
        )
    }
}

/// The rule of largest gain summed over the `level`'s nodes (each node's gain where the rule is
/// admissible there), if that sum exceeds `min_split_gain` and 0. Ties go to the lower feature,
/// then the lower threshold (prefix), then missing values right. Features are scanned side by
/// side; each one's sums run over the nodes in order, so the rule is the same whatever the
/// thread count.
fn best_level_rule(
    data: &BinnedData,
    level: &[LevelNode],
    params: &SplitParams,
    monotone: Option<&[i8]>,
    candidates: &Candidates,
) -> Option<LevelRule> {
    let gains: Vec<NodeGains<'_>> = (level.iter())
        .map(|node| NodeGains::new(node, params, monotone))
        .collect();
    let features: Vec<usize> = (0..data.n_features())
        .filter(|&f| candidates.allows_feature(f))
        .collect();
    let found: Vec<Option<LevelRule>> = features
        .par_iter()
        .map(|&feature| {
            let bins: Vec<&[_]> = (level.iter())
                .map(|node| node.hist.hist.feature(data, feature))
                .collect();
            if data.is_categorical(feature) {
                best_categorical(feature, &bins, &gains, params, candidates)
            } else {
                best_numeric(feature, &bins, &gains, candidates)
            }
        })
        .collect();
    let mut best: Option<LevelRule> = None;
    for rule in found.into_iter().flatten() {
        if best.as_ref().is_none_or(|b| rule.gain > b.gain) {
            best = Some(rule);
        }
    }
    best.filter(|b| b.gain > params.min_split_gain && b.gain > 0.0)
}

/// Summed gains of the candidates of one feature: per threshold, with missing values right and
/// left, and the rows sent left (missing values right) over every node.
struct Sums {
    right: Vec<f64>,
    left: Vec<f64>,
    count_left: Vec<u64>,
    any_missing: bool,
}

impl Sums {
    fn new(n: usize) -> Self {
        Sums {
            right: vec![0.0; n],
            left: vec![0.0; n],
            count_left: vec![0; n],
            any_missing: false,
        }
    }

    /// Adds one node's candidates, the k-th sending `prefix(k)` left (missing values apart).
    fn add_node(
        &mut self,
        gains: &NodeGains<'_>,
        missing: BinStats,
        direction: i8,
        prefixes: impl Iterator<Item = (usize, BinStats)>,
    ) {
        self.any_missing |= missing.count > 0;
        for (k, prefix) in prefixes {
            let plain = gains.gain(prefix, direction);
            self.right[k] += plain.unwrap_or(0.0);
            self.left[k] += match missing.count {
                0 => plain,
                _ => gains.gain(prefix + missing, direction),
            }
            .unwrap_or(0.0);
            self.count_left[k] += u64::from(prefix.count);
        }
    }

    /// The best of candidates `ks` (ascending): (gain, k, missing values left).
    fn best(
        &self,
        ks: impl Iterator<Item = usize>,
        total_count: u64,
    ) -> Option<(f64, usize, bool)> {
        let mut best: Option<(f64, usize, bool)> = None;
        for k in ks {
            let options = if self.any_missing {
                [(self.right[k], false), (self.left[k], true)]
            } else {
                // No missing value anywhere in the level: future ones go to the larger side.
                let larger_left = 2 * self.count_left[k] >= total_count;
                [(self.right[k], larger_left), (f64::NEG_INFINITY, false)]
            };
            for (gain, missing_left) in options {
                if best.is_none_or(|(g, _, _)| gain > g) {
                    best = Some((gain, k, missing_left));
                }
            }
        }
        best
    }
}

/// Numeric rules "bin ≤ k" (k = 1..=last), from each node's bins (bin 0: missing values).
fn best_numeric(
    feature: usize,
    bins: &[&[BinStats]],
    gains: &[NodeGains<'_>],
    candidates: &Candidates,
) -> Option<LevelRule> {
    let last = bins[0].len() - 1;
    let mut sums = Sums::new(last + 1);
    let mut total_count = 0;
    for (node_bins, gains) in bins.iter().zip(gains) {
        total_count += u64::from(gains.total.count);
        let mut prefix = BinStats::default();
        let prefixes = (1..=last).map(|k| {
            prefix += node_bins[k];
            (k, prefix)
        });
        sums.add_node(gains, node_bins[0], gains.direction(feature), prefixes);
    }
    let allowed = (1..=last).filter(|&k| candidates.allows(feature, k));
    let (gain, k, missing_left) = sums.best(allowed, total_count)?;
    let mut left_bins = BinSet::range(1, k + 1);
    if missing_left {
        left_bins.insert(0);
    }
    Some(LevelRule {
        feature,
        threshold: Some(k as u8),
        left_bins,
        gain,
    })
}

/// Categorical rules: the first k of the levels ordered by mean target over the level's pooled
/// rows (smoothed towards the pooled mean by `cat_smooth`; levels with fewer pooled rows than
/// `min_data_per_group` stay right), at most `max_cat_threshold` levels on the smaller side.
fn best_categorical(
    feature: usize,
    bins: &[&[BinStats]],
    gains: &[NodeGains<'_>],
    params: &SplitParams,
    candidates: &Candidates,
) -> Option<LevelRule> {
    let p = params.categorical;
    let mut pooled = vec![BinStats::default(); bins[0].len()];
    for node_bins in bins {
        for (sum, bin) in pooled.iter_mut().zip(node_bins.iter()) {
            *sum += *bin;
        }
    }
    let total = pooled.iter().fold(BinStats::default(), |a, &b| a + b);
    let order = categories_by_smoothed_mean(&pooled, total, &p);
    let n = order.len();
    let mut sums = Sums::new(n + 1);
    for (node_bins, gains) in bins.iter().zip(gains) {
        let mut prefix = BinStats::default();
        let prefixes = (1..=n).map(|k| {
            prefix += node_bins[order[k - 1] as usize];
            (k, prefix)
        });
        sums.add_node(gains, node_bins[0], 0, prefixes);
    }
    let allowed =
        (1..=n).filter(|&k| k.min(n - k) <= p.max_cat_threshold && candidates.allows(feature, k));
    let (gain, k, missing_left) = sums.best(allowed, u64::from(total.count))?;
    let mut left_bins = BinSet::default();
    for &b in &order[..k] {
        left_bins.insert(b);
    }
    if missing_left {
        left_bins.insert(0);
    }
    Some(LevelRule {
        feature,
        threshold: None,
        left_bins,
        gain,
    })
}

#[cfg(test)]
#[path = "oblivious_tests.rs"]
mod tests;
