//! The split, partition and leaf phases of growing a tree: the nodes as they are added, each
//! split's rule and its children's values (clamped to their intervals under monotone
//! constraints) and limits; the rows of every node kept contiguous and partitioned at every split
//! (partition.rs) or, on one feature, the node of each bin; and at the end the rows of every leaf.

use super::bins::BinStats;
use super::constraints::NodeLimits;
use super::grown::{
    cover_every_row, leaf_of_bins, sort_rows_into_leaves, BinLeaves, GrownTree, LeafRows,
};
use super::partition::split_rows;
use super::ranks::Ranks;
use super::regression_tree::{CategorySplit, Node, Tree};
use super::split::SplitCandidate;
use crate::data::{BinMapper, BinnedData};
use std::ops::Range;

/// One child of a split: its node, its rows `rows[start..end]` (this rank's), its statistics
/// (over every rank) and the limits its own splits must respect.
pub(super) struct Child {
    pub(super) node: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) stats: BinStats,
    pub(super) limits: NodeLimits,
}

/// A tree being grown, with the rows of its nodes.
pub(super) struct GrowingTree<'a> {
    data: &'a BinnedData,
    ranks: Ranks<'a>,
    l2_leaf: f64,
    monotone: Option<&'a [i8]>,
    /// Bin counts are left out of the histograms: a split's counts come from its partition.
    uncounted: bool,
    nodes: Vec<Node>,
    categories: Vec<CategorySplit>,
    leaves: Vec<LeafRows>,
    /// The rows the tree is grown on, each node's contiguous.
    rows: Vec<u32>,
    scratch: &'a mut Vec<u32>,
    /// Grown on a sample of the rows: the leaves take the others in at the end.
    sampled: bool,
    /// On one feature: the feature, and the node that holds the rows of each of its bins.
    node_of_bin: Option<(usize, Vec<u32>)>,
}

impl<'a> GrowingTree<'a> {
    /// A tree of no nodes yet, grown on `sample` (`None`: every row of `data`) kept in the list
    /// `rows` (any contents), with `scratch` as working space; `one_feature`: split on that
    /// feature only.
    pub(super) fn new(
        data: &'a BinnedData,
        sample: Option<&[u32]>,
        mut rows: Vec<u32>,
        scratch: &'a mut Vec<u32>,
        ranks: Ranks<'a>,
        l2_leaf: f64,
        monotone: Option<&'a [i8]>,
        uncounted: bool,
        one_feature: Option<usize>,
    ) -> Self {
        rows.clear();
        match sample {
            Some(sample) => rows.extend_from_slice(sample),
            None => rows.extend(0..data.n_rows() as u32),
        }
        scratch.resize(data.n_rows(), 0);
        GrowingTree {
            data,
            ranks,
            l2_leaf,
            monotone,
            uncounted,
            nodes: Vec::new(),
            categories: Vec::new(),
            leaves: Vec::new(),
            rows,
            scratch,
            sampled: sample.is_some(),
            node_of_bin: one_feature.map(|f| (f, vec![0u32; data.mappers()[f].n_bins()])),
        }
    }

    pub(super) fn rows(&self) -> &[u32] {
        &self.rows
    }

    pub(super) fn n_leaves(&self) -> usize {
        // Every split adds two nodes to the root.
        self.nodes.len().div_ceil(2)
    }

    /// Adds the root, a leaf holding `total`.
    pub(super) fn add_root(&mut self, total: BinStats) {
        self.nodes.push(leaf_node(total, self.l2_leaf));
    }

    /// Makes `node`, whose rows are `rows[range]`, a leaf of the grown tree.
    pub(super) fn add_leaf(&mut self, node: usize, range: Range<usize>) {
        self.leaves.push(LeafRows {
            node,
            start: range.start,
            end: range.end,
        });
    }

    /// Splits `node`, whose rows are `rows[range]` and limits `limits`, by `split`: partitions
    /// its rows, adds its two children as leaves and returns them. Where the histograms had no
    /// counts, `split` takes them from the partition.
    pub(super) fn split(
        &mut self,
        node: usize,
        range: Range<usize>,
        limits: &NodeLimits,
        split: &mut SplitCandidate,
    ) -> [Child; 2] {
        let (left_id, right_id) = (self.nodes.len(), self.nodes.len() + 1);
        let n_left = self.partition(node, range.clone(), split, (left_id, right_id));
        if self.uncounted {
            let n_right = range.len() - n_left;
            split.left.count = n_left as u32;
            split.right.count = n_right as u32;
            // Where best_split sends the missing values of a feature that has none here.
            if n_left >= n_right {
                split.left_bins.insert(0);
            } else {
                split.left_bins.remove(0);
            }
        }
        debug_assert!(!self.ranks.alone() || n_left == split.left.count as usize);
        let (mut left_node, mut right_node) = (
            leaf_node(split.left, self.l2_leaf),
            leaf_node(split.right, self.l2_leaf),
        );
        let direction = match self.monotone {
            Some(monotone) if !self.data.is_categorical(split.feature) => monotone[split.feature],
            _ => 0,
        };
        if self.monotone.is_some() {
            // The values the split search compared: clamped to this node's interval.
            let clamp = |v: f64| v.clamp(limits.lower, limits.upper);
            left_node.value = clamp(left_node.value);
            right_node.value = clamp(right_node.value);
        }
        let (left_limits, right_limits) = limits.children(
            split.feature,
            direction,
            (left_node.value, right_node.value),
        );
        self.nodes.push(left_node);
        self.nodes.push(right_node);
        set_rule(
            &mut self.nodes[node],
            &mut self.categories,
            split,
            self.data,
            left_id,
            right_id,
        );
        let mid = range.start + n_left;
        [
            Child {
                node: left_id,
                start: range.start,
                end: mid,
                stats: split.left,
                limits: left_limits,
            },
            Child {
                node: right_id,
                start: mid,
                end: range.end,
                stats: split.right,
                limits: right_limits,
            },
        ]
    }

    /// Sends the rows of `node` (`rows[range]`) to its children `(left, right)` by `split`: on one
    /// feature, its bins; else its rows, left ones first. Returns the rows gone left here.
    fn partition(
        &mut self,
        node: usize,
        range: Range<usize>,
        split: &SplitCandidate,
        (left, right): (usize, usize),
    ) -> usize {
        match &mut self.node_of_bin {
            Some((_, node_of_bin)) => {
                for (bin, owner) in node_of_bin.iter_mut().enumerate() {
                    if *owner as usize == node {
                        let goes_left = split.left_bins.contains(bin as u8);
                        *owner = if goes_left { left } else { right } as u32;
                    }
                }
                split.left.count as usize
            }
            None => split_rows(
                &mut self.rows[range],
                self.scratch,
                self.data.column(split.feature),
                &split.left_bins,
            ),
        }
    }

    /// The grown tree, its leaves holding their rows (on one feature, sorted into them now; on a
    /// sample, every row of the data).
    pub(super) fn finish(self) -> GrownTree {
        let GrowingTree {
            data,
            nodes,
            categories,
            mut leaves,
            mut rows,
            scratch,
            sampled,
            node_of_bin,
            ..
        } = self;
        let tree = Tree { nodes, categories };
        let bin_leaves = node_of_bin.map(|(feature, node_of_bin)| {
            let leaf_of_bin = if sampled {
                leaf_of_bins(&node_of_bin, &leaves, tree.nodes.len())
            } else {
                sort_rows_into_leaves(
                    &mut rows,
                    scratch,
                    data.column(feature),
                    &node_of_bin,
                    &leaves,
                    tree.nodes.len(),
                )
            };
            BinLeaves {
                feature,
                leaf_of_bin,
            }
        });
        if sampled {
            cover_every_row(
                data,
                &tree,
                &mut leaves,
                &mut rows,
                bin_leaves.as_ref(),
                scratch,
            );
        }
        GrownTree {
            tree,
            leaves,
            rows,
            bin_leaves,
        }
    }
}

/// A leaf holding `stats`: its value minimises its rows' least squares with an L2 penalty.
fn leaf_node(stats: BinStats, l2_leaf: f64) -> Node {
    let denominator = stats.sum_v + l2_leaf;
    Node {
        feature: 0,
        left: 0,
        right: 0,
        threshold: 0.0,
        bin: 0,
        default_left: false,
        category: None,
        value: if denominator > 0.0 {
            stats.sum_vt / denominator
        } else {
            0.0
        },
        gain: 0.0,
        count: stats.count,
    }
}

/// Turns `node` into the split `split` with the children `left` and `right`.
fn set_rule(
    node: &mut Node,
    categories: &mut Vec<CategorySplit>,
    split: &SplitCandidate,
    data: &BinnedData,
    left: usize,
    right: usize,
) {
    node.feature = split.feature as u32;
    node.left = left as u32;
    node.right = right as u32;
    node.gain = split.gain;
    node.default_left = split.default_left();
    match (&data.mappers()[split.feature], split.threshold) {
        (BinMapper::Numeric { cuts }, Some(t)) => {
            node.bin = t;
            // t = the last bin sends every non-missing value left.
            node.threshold = cuts.get(t as usize - 1).copied().unwrap_or(f64::INFINITY);
        }
        (BinMapper::Categorical { level_bins, .. }, None) => {
            let mut left_codes = vec![0u64; level_bins.len().div_ceil(64)];
            for (code, &bin) in level_bins.iter().enumerate() {
                if split.left_bins.contains(bin) {
                    left_codes[code / 64] |= 1 << (code % 64);
                }
            }
            node.category = Some(categories.len() as u32);
            categories.push(CategorySplit {
                left_bins: split.left_bins,
                left_codes,
            });
        }
        _ => unreachable!("split kind follows the feature kind"),
    }
}
