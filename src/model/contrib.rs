//! SHAP values of the model's link-scale scores: exact, per row, by the path-dependent TreeSHAP
//! algorithm of Lundberg, Erion & Lee, "Consistent Individualized Feature Attribution for Tree
//! Ensembles" (Algorithm 2), and the SHAP interaction values of the same paper (Section 4).
//!
//! The value of a set S of known features is the tree's expectation when the features outside S
//! are unknown: at a rule on an unknown feature both children are followed, each weighted by its
//! share of the training rows that reached the node (node `count`, the "cover"). A row's own path
//! follows prediction exactly, missing values and categorical rules included. Contributions of
//! one row add up, with the bias, to the link-scale score `Model::predict` gives.
//!
//! Contributions read per-tree tables (`LeafTables`, after Yang's "Fast TreeSHAP: Accelerating
//! SHAP Value Computation for Trees"): each leaf's share of the SHAP values for each of the 2^d
//! ways a row can follow or leave the rules of the d features on its path, computed once per
//! call; a row then costs O(leaves · d) per tree instead of Algorithm 2's O(leaves · d²). Trees
//! whose tables would be too large, and interaction values, take Algorithm 2's recursive walk.
//!
//! Rows are processed in parallel in fixed blocks; each row's sums run over the trees in model
//! order, so results do not depend on the number of threads.

use super::flat::BLOCK_ROWS;
use super::Model;
use crate::data::{FeatureValues, Frame};
use crate::error::Result;
use crate::tree::Tree;
use rayon::prelude::*;

/// The feature index of the path's first element, which stands for no feature.
const NO_FEATURE: u32 = u32::MAX;

impl Model {
    /// SHAP contributions of every feature to the link-scale scores, row-major with
    /// `n_outputs · (n_features + 1)` values per row: for each output, one value per feature
    /// (in the model's feature order) followed by the bias, the expected score over the
    /// training rows. Each block sums to that output's `predict` score.
    pub fn predict_contrib(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        self.contrib_with(frame, &self.weights)
    }

    /// `predict_contrib` of the model after `iteration` iterations (0: the initial constant),
    /// whose blocks sum to that output's `predict_iteration` score.
    pub fn predict_contrib_iteration(
        &self,
        frame: &Frame<'_>,
        iteration: usize,
    ) -> Result<Vec<f64>> {
        let weights = self.weights_at(iteration)?;
        self.contrib_with(frame, &weights)
    }

    fn contrib_with(&self, frame: &Frame<'_>, weights: &[f64]) -> Result<Vec<f64>> {
        let frame = &self.aligned(frame)?;
        let trees = self.shap_trees(weights);
        let width = self.features.len() + 1;
        let row_width = self.n_outputs * width;
        let mut out = vec![0.0; frame.n_rows() * row_width];
        let biases = self.expected_values(&trees);
        let numeric: Vec<&[f64]> = frame
            .features()
            .iter()
            .map(|f| match f.values {
                FeatureValues::Numeric(x) => x,
                FeatureValues::Categorical { .. } => &[],
            })
            .collect();
        for row_out in out.chunks_mut(row_width) {
            for (k, &bias) in biases.iter().enumerate() {
                row_out[k * width + width - 1] = bias;
            }
        }
        // Trees in consecutive groups whose leaf tables fit a memory budget: a group's tables
        // are built, then every row adds the group's trees. Each row still sums its trees in
        // model order, so results depend neither on the thread count nor on the grouping.
        let mut first = 0;
        while first < trees.len() {
            let mut entries = 0;
            let mut last = first;
            while last < trees.len() && (last == first || entries < GROUP_TABLE_ENTRIES) {
                entries += trees[last].table_entries().unwrap_or(0);
                last += 1;
            }
            let group = &trees[first..last];
            let tables: Vec<Option<LeafTables>> = group.par_iter().map(LeafTables::new).collect();
            let max_depth = group.iter().map(|t| t.depth).max().unwrap_or(0);
            let max_nodes = group.iter().map(|t| t.tree.nodes.len()).max().unwrap_or(0);
            out.par_chunks_mut(BLOCK_ROWS * row_width)
                .enumerate()
                .for_each(|(b, block)| {
                    let start = b * BLOCK_ROWS;
                    let mut path = vec![PathElement::default(); path_len(max_depth)];
                    let mut masks = vec![0u32; max_nodes];
                    // Tree after tree over the block's rows, so that a tree's table stays in
                    // cache; each row still sums its trees in model order.
                    for (tree, table) in group.iter().zip(&tables) {
                        for (i, row_out) in block.chunks_mut(row_width).enumerate() {
                            let phi = &mut row_out[tree.output * width..][..width - 1];
                            match table {
                                Some(table) => table.add(
                                    tree.tree,
                                    frame,
                                    &numeric,
                                    start + i,
                                    phi,
                                    &mut masks,
                                ),
                                None => {
                                    tree.shap(frame, start + i, phi, &mut path, Condition::None)
                                }
                            }
                        }
                    }
                });
            first = last;
        }
        Ok(out)
    }

    /// SHAP interaction values, row-major with `n_outputs · (n_features + 1)²` values per row:
    /// for each output a symmetric (n_features + 1) × (n_features + 1) matrix whose entry (i, j),
    /// i ≠ j, is half the interaction effect of features i and j, whose diagonal holds each
    /// feature's main effect, and whose last diagonal entry is the bias. Row i sums to feature
    /// i's contribution (`predict_contrib`); the whole matrix sums to the `predict` score.
    pub fn predict_interactions(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        self.interactions_with(frame, &self.weights)
    }

    /// `predict_interactions` of the model after `iteration` iterations (0: the constant).
    pub fn predict_interactions_iteration(
        &self,
        frame: &Frame<'_>,
        iteration: usize,
    ) -> Result<Vec<f64>> {
        let weights = self.weights_at(iteration)?;
        self.interactions_with(frame, &weights)
    }

    fn interactions_with(&self, frame: &Frame<'_>, weights: &[f64]) -> Result<Vec<f64>> {
        let frame = &self.aligned(frame)?;
        let trees = self.shap_trees(weights);
        let n_features = self.features.len();
        let width = n_features + 1;
        let block_width = width * width;
        let row_width = self.n_outputs * block_width;
        let mut out = vec![0.0; frame.n_rows() * row_width];
        let max_depth = trees.iter().map(|t| t.depth).max().unwrap_or(0);
        let biases = self.expected_values(&trees);
        out.par_chunks_mut(row_width)
            .enumerate()
            .for_each(|(row, row_out)| {
                let mut path = vec![PathElement::default(); path_len(max_depth)];
                let (mut phi, mut on, mut off) = (
                    vec![0.0; n_features],
                    vec![0.0; n_features],
                    vec![0.0; n_features],
                );
                for (k, &bias) in biases.iter().enumerate() {
                    row_out[k * block_width + block_width - 1] = bias;
                }
                for tree in &trees {
                    let matrix = &mut row_out[tree.output * block_width..][..block_width];
                    for &j in &tree.features {
                        phi[j] = 0.0;
                    }
                    tree.shap(frame, row, &mut phi, &mut path, Condition::None);
                    for &j in &tree.features {
                        matrix[j * width + j] += phi[j];
                    }
                    // The effect of j on the others' values: their SHAP values with j known minus
                    // with j unknown, split between the entries (j, k) and (k, j).
                    for &j in &tree.features {
                        for &k in &tree.features {
                            on[k] = 0.0;
                            off[k] = 0.0;
                        }
                        tree.shap(frame, row, &mut on, &mut path, Condition::Known(j as u32));
                        tree.shap(
                            frame,
                            row,
                            &mut off,
                            &mut path,
                            Condition::Unknown(j as u32),
                        );
                        for &k in tree.features.iter().filter(|&&k| k != j) {
                            let half = (on[k] - off[k]) / 2.0;
                            matrix[j * width + k] += half;
                            matrix[j * width + j] -= half;
                        }
                    }
                }
            });
        Ok(out)
    }

    /// The trees in the form the SHAP walk reads, with weights `weights` (trees of weight 0
    /// left out, as in `predict`).
    fn shap_trees(&self, weights: &[f64]) -> Vec<ShapTree<'_>> {
        self.trees
            .iter()
            .zip(weights)
            .zip(&self.tree_outputs)
            .filter(|((_, &weight), _)| weight != 0.0)
            .map(|((tree, &weight), &output)| ShapTree::new(tree, weight, output as usize))
            .collect()
    }

    /// The bias of each output: its constant plus the trees' cover-weighted expectations.
    fn expected_values(&self, trees: &[ShapTree<'_>]) -> Vec<f64> {
        let mut bias = self.bias.clone();
        for tree in trees {
            bias[tree.output] += tree.weight * tree.expected;
        }
        bias
    }
}

/// Which feature, if any, is held known or unknown whatever the other features (the
/// conditioning that gives interaction values).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Condition {
    None,
    Known(u32),
    Unknown(u32),
}

/// One feature on the unique path from the root to a node: the share of training rows that
/// follow the path's rules on it (`zero`, the feature unknown), whether the row follows them
/// (`one`, the feature known), and the weight of subsets of each size (`pweight`).
#[derive(Debug, Clone, Copy, Default)]
struct PathElement {
    feature: u32,
    zero: f64,
    one: f64,
    pweight: f64,
}

/// Path elements a walk needs: one path per level, each at most one longer than its parent's.
fn path_len(depth: usize) -> usize {
    (depth + 2) * (depth + 3) / 2
}

struct ShapTree<'t> {
    tree: &'t Tree,
    weight: f64,
    output: usize,
    /// The share of its parent's training rows that reach each node (1 for the root).
    share: Vec<f64>,
    /// The cover-weighted mean of the leaf values: the tree's value when nothing is known.
    expected: f64,
    depth: usize,
    /// The distinct features the tree splits on, ascending.
    features: Vec<usize>,
    /// Each leaf's path, when the tree is small enough to tabulate (`LeafTables`).
    layout: Option<Layout>,
}

impl<'t> ShapTree<'t> {
    fn new(tree: &'t Tree, weight: f64, output: usize) -> Self {
        let mut share = vec![1.0; tree.nodes.len()];
        let mut features = Vec::new();
        for node in tree.nodes.iter().filter(|n| !n.is_leaf()) {
            let (left, right) = (node.left as usize, node.right as usize);
            let (l, r) = (tree.nodes[left].count, tree.nodes[right].count);
            // Children's counts rather than the parent's, so that shares always add up to one;
            // a node no training row reached (possible only in a hand-made file) splits evenly.
            let total = l as f64 + r as f64;
            (share[left], share[right]) = if total > 0.0 {
                (l as f64 / total, r as f64 / total)
            } else {
                (0.5, 0.5)
            };
            features.push(node.feature as usize);
        }
        features.sort_unstable();
        features.dedup();
        let mut shap_tree = ShapTree {
            tree,
            weight,
            output,
            share,
            expected: 0.0,
            depth: tree.depth(),
            features,
            layout: None,
        };
        shap_tree.expected = shap_tree.expectation(0);
        shap_tree.layout = Layout::new(&shap_tree);
        shap_tree
    }

    /// The size of the tree's leaf tables, `None` when it has none.
    fn table_entries(&self) -> Option<usize> {
        self.layout.as_ref().map(|l| l.entries)
    }

    fn expectation(&self, node: usize) -> f64 {
        let n = &self.tree.nodes[node];
        if n.is_leaf() {
            return n.value;
        }
        let (left, right) = (n.left as usize, n.right as usize);
        self.share[left] * self.expectation(left) + self.share[right] * self.expectation(right)
    }

    /// Adds `weight ·` SHAP values of row `row` to `phi` (one slot per model feature).
    fn shap(
        &self,
        frame: &Frame<'_>,
        row: usize,
        phi: &mut [f64],
        path: &mut [PathElement],
        condition: Condition,
    ) {
        let mut walk = Walk {
            tree: self,
            frame,
            row,
            phi,
            condition,
        };
        walk.recurse(0, path, 0, 1.0, 1.0, NO_FEATURE, 1.0);
    }
}

struct Walk<'a, 'f> {
    tree: &'a ShapTree<'a>,
    frame: &'a Frame<'f>,
    row: usize,
    phi: &'a mut [f64],
    condition: Condition,
}

impl Walk<'_, '_> {
    /// Algorithm 2's RECURSE. `parent_path[..=depth]` holds the parent's unique path (its last
    /// slot is free); this node's path is built after it, in the rest of the buffer.
    #[allow(clippy::too_many_arguments)]
    fn recurse(
        &mut self,
        node: usize,
        parent_path: &mut [PathElement],
        depth: usize,
        zero: f64,
        one: f64,
        feature: u32,
        condition_fraction: f64,
    ) {
        if condition_fraction == 0.0 {
            return;
        }
        let conditioned = match self.condition {
            Condition::None => false,
            Condition::Known(j) | Condition::Unknown(j) => j == feature,
        };
        // An element with both fractions zero makes every subset's weight zero below it (and
        // the unwinding below would divide by zero): nothing to add.
        if !conditioned && zero == 0.0 && one == 0.0 {
            return;
        }
        let (parent, path) = parent_path.split_at_mut(depth + 1);
        path[..=depth].copy_from_slice(parent);
        if !conditioned {
            extend(path, depth, zero, one, feature);
        }
        let n = &self.tree.tree.nodes[node];
        if n.is_leaf() {
            let value = self.tree.weight * n.value * condition_fraction;
            for i in 1..=depth {
                let e = path[i];
                let w = unwound_sum(path, depth, i);
                self.phi[e.feature as usize] += w * (e.one - e.zero) * value;
            }
            return;
        }
        let (hot, cold) = if self.tree.tree.goes_left_raw(n, self.frame, self.row) {
            (n.left as usize, n.right as usize)
        } else {
            (n.right as usize, n.left as usize)
        };
        let (hot_zero, cold_zero) = (self.tree.share[hot], self.tree.share[cold]);
        let (mut incoming_zero, mut incoming_one) = (1.0, 1.0);
        let mut depth = depth;
        // A feature met again: its earlier rule leaves the path and its fractions carry over.
        if let Some(i) = (1..=depth).find(|&i| path[i].feature == n.feature) {
            incoming_zero = path[i].zero;
            incoming_one = path[i].one;
            unwind(path, depth, i);
            depth -= 1;
        }
        let (mut hot_condition, mut cold_condition) = (condition_fraction, condition_fraction);
        let mut child_depth = depth + 1;
        match self.condition {
            Condition::Known(j) if j == n.feature => {
                cold_condition = 0.0;
                child_depth -= 1;
            }
            Condition::Unknown(j) if j == n.feature => {
                hot_condition *= hot_zero;
                cold_condition *= cold_zero;
                child_depth -= 1;
            }
            _ => {}
        }
        let f = n.feature;
        let hot_fraction = hot_zero * incoming_zero;
        self.recurse(
            hot,
            path,
            child_depth,
            hot_fraction,
            incoming_one,
            f,
            hot_condition,
        );
        let cold_fraction = cold_zero * incoming_zero;
        self.recurse(
            cold,
            path,
            child_depth,
            cold_fraction,
            0.0,
            f,
            cold_condition,
        );
    }
}

/// Leaf tables are built for trees whose leaves have at most this many distinct features on
/// their paths (a table has 2^d rows of d values) ...
const MAX_TABLE_DEPTH: usize = 16;
/// ... and at most this many table values in all (8 bytes each); others take the recursive walk.
const MAX_TREE_TABLE_ENTRIES: usize = 1 << 20;
/// Trees are tabulated in groups of about this many values (16 MiB), whatever the model's size.
const GROUP_TABLE_ENTRIES: usize = 1 << 21;

/// The unique path of every leaf of a tree (the distinct features on it in order of first
/// appearance, with the share of training rows that follows the path's rules on each), and for
/// each rule the position of its feature on the paths through it.
struct Layout {
    /// Per node: the position of a rule's feature on its path (0 for leaves).
    positions: Vec<u8>,
    /// Leaves with at least one feature on their path.
    leaves: Vec<LeafPath>,
    /// Σ 2^d · d over the leaves: the values of the tree's tables.
    entries: usize,
}

struct LeafPath {
    node: u32,
    features: Vec<u32>,
    zeros: Vec<f64>,
}

impl Layout {
    /// `None` when a path or the tables would be too long (`MAX_TABLE_DEPTH`,
    /// `MAX_TREE_TABLE_ENTRIES`).
    fn new(tree: &ShapTree<'_>) -> Option<Layout> {
        let mut layout = Layout {
            positions: vec![0; tree.tree.nodes.len()],
            leaves: Vec::new(),
            entries: 0,
        };
        let mut path = Vec::new();
        layout.visit(tree, 0, &mut path)?;
        Some(layout)
    }

    fn visit(
        &mut self,
        tree: &ShapTree<'_>,
        node: usize,
        path: &mut Vec<(u32, f64)>,
    ) -> Option<()> {
        let n = &tree.tree.nodes[node];
        if n.is_leaf() {
            if !path.is_empty() {
                let d = path.len();
                self.entries += d << d;
                if self.entries > MAX_TREE_TABLE_ENTRIES {
                    return None;
                }
                self.leaves.push(LeafPath {
                    node: node as u32,
                    features: path.iter().map(|e| e.0).collect(),
                    zeros: path.iter().map(|e| e.1).collect(),
                });
            }
            return Some(());
        }
        // A feature met again keeps its place; its share multiplies in.
        let found = path.iter().position(|e| e.0 == n.feature);
        let position = found.unwrap_or(path.len());
        if position >= MAX_TABLE_DEPTH {
            return None;
        }
        self.positions[node] = position as u8;
        for child in [n.left as usize, n.right as usize] {
            let share = tree.share[child];
            match found {
                Some(i) => {
                    let zero = path[i].1;
                    path[i].1 = zero * share;
                    self.visit(tree, child, path)?;
                    path[i].1 = zero;
                }
                None => {
                    path.push((n.feature, share));
                    self.visit(tree, child, path)?;
                    path.pop();
                }
            }
        }
        Some(())
    }
}

/// A tree's SHAP values tabulated per leaf, the precomputation of "Fast TreeSHAP: Accelerating
/// SHAP Value Computation for Trees" (Yang, algorithm v2): a leaf's share of the SHAP values of
/// a row depends on the row only through which of its path's d features the row follows (the
/// "one" fractions), so all 2^d cases are computed once per tree (`fill_leaf_table`). A row
/// then costs one pass over the rules to find, for each leaf, the bit set of path features it
/// follows, and d additions per leaf, instead of Algorithm 2's O(d²) per leaf.
struct LeafTables {
    /// The tree's rules in node order (parents before children).
    rules: Vec<Rule>,
    /// Leaves with at least one path feature, in order of path length, so that the length
    /// (the trip count of the additions) changes rarely from one leaf to the next.
    leaves: Vec<TableLeaf>,
    /// The leaves' path features, one run per leaf.
    features: Vec<u32>,
    /// The leaves' tables: per leaf 2^d rows of d values, row s for the rows that follow the
    /// rules of the features whose bits s holds (`fill_leaf_table`).
    values: Vec<f64>,
}

/// A rule in the compact form the per-row pass reads.
struct Rule {
    threshold: f64,
    node: u32,
    feature: u32,
    left: u32,
    right: u32,
    /// The bit of the rule's feature in the bit sets of the paths through it.
    bit: u32,
    default_left: bool,
    categorical: bool,
}

struct TableLeaf {
    node: u32,
    depth: u32,
    features: u32,
    values: usize,
}

impl LeafTables {
    fn new(tree: &ShapTree<'_>) -> Option<LeafTables> {
        let layout = tree.layout.as_ref()?;
        let nodes = &tree.tree.nodes;
        let rules = nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_leaf())
            .map(|(i, n)| Rule {
                threshold: n.threshold,
                node: i as u32,
                feature: n.feature,
                left: n.left,
                right: n.right,
                bit: 1 << layout.positions[i],
                default_left: n.default_left,
                categorical: n.category.is_some(),
            })
            .collect();
        let mut paths: Vec<&LeafPath> = layout.leaves.iter().collect();
        paths.sort_by_key(|p| p.features.len());
        let mut tables = LeafTables {
            rules,
            leaves: Vec::with_capacity(paths.len()),
            features: Vec::new(),
            values: vec![0.0; layout.entries],
        };
        let mut at = 0;
        for leaf in paths {
            let d = leaf.features.len();
            tables.leaves.push(TableLeaf {
                node: leaf.node,
                depth: d as u32,
                features: tables.features.len() as u32,
                values: at,
            });
            tables.features.extend(&leaf.features);
            let value = tree.weight * nodes[leaf.node as usize].value;
            fill_leaf_table(&leaf.zeros, value, &mut tables.values[at..at + (d << d)]);
            at += d << d;
        }
        Some(tables)
    }

    /// Adds the tree's SHAP values of row `row` to `phi`; `masks` has a slot per node, and
    /// `numeric[j]` is feature j's column when it is numeric.
    #[inline]
    fn add(
        &self,
        tree: &Tree,
        frame: &Frame<'_>,
        numeric: &[&[f64]],
        row: usize,
        phi: &mut [f64],
        masks: &mut [u32],
    ) {
        // masks[node]: the path features up to `node` whose rules the row follows.
        masks[0] = u32::MAX;
        for rule in &self.rules {
            let left = if rule.categorical {
                tree.goes_left_raw(&tree.nodes[rule.node as usize], frame, row)
            } else {
                // Without a branch on the row's value, which no predictor guesses.
                let v = numeric[rule.feature as usize][row];
                (v <= rule.threshold) | (v.is_nan() & rule.default_left)
            };
            let mask = masks[rule.node as usize];
            let cleared = mask & !rule.bit;
            masks[rule.left as usize] = if left { mask } else { cleared };
            masks[rule.right as usize] = if left { cleared } else { mask };
        }
        for leaf in &self.leaves {
            let s = masks[leaf.node as usize] as usize;
            // A fixed trip count for the usual lengths, unrolled.
            match leaf.depth {
                1 => self.add_leaf::<1>(leaf, s, phi),
                2 => self.add_leaf::<2>(leaf, s, phi),
                3 => self.add_leaf::<3>(leaf, s, phi),
                4 => self.add_leaf::<4>(leaf, s, phi),
                5 => self.add_leaf::<5>(leaf, s, phi),
                6 => self.add_leaf::<6>(leaf, s, phi),
                7 => self.add_leaf::<7>(leaf, s, phi),
                8 => self.add_leaf::<8>(leaf, s, phi),
                d => {
                    let d = d as usize;
                    let s = s & ((1 << d) - 1);
                    let values = &self.values[leaf.values + s * d..][..d];
                    let features = &self.features[leaf.features as usize..][..d];
                    for (&f, &v) in features.iter().zip(values) {
                        phi[f as usize] += v;
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn add_leaf<const D: usize>(&self, leaf: &TableLeaf, s: usize, phi: &mut [f64]) {
        let s = s & ((1 << D) - 1);
        let values: &[f64; D] = self.values[leaf.values + s * D..][..D].try_into().unwrap();
        let features: &[u32; D] = self.features[leaf.features as usize..][..D]
            .try_into()
            .unwrap();
        for i in 0..D {
            phi[features[i] as usize] += values[i];
        }
    }
}

/// The table of a leaf of value `value` whose path has features with zero fractions `zeros`
/// (2^d rows of d values, as `LeafTables::values`).
///
/// The leaf adds v · Π_j (o_j if j is known, else z_j) to the value of a set of known features
/// (o_j ∈ {0, 1}: whether the row follows the path's rules on feature j), so the Shapley value
/// of feature i, a sum over the coalitions S of the d − 1 other path features weighted by
/// c_|S| = |S|! (d − 1 − |S|)! / d!, is
///
///   v · (o_i − z_i) · Π_{j ∈ B} z_j · Σ_{S ⊆ A} c_|S| · Π_{j ∈ A∖S} z_j
///   = v · (o_i − z_i) · Π_{j ∈ B} z_j · Σ_k c_k · e_{|A|−k}(z_A),
///
/// where A and B are the other features the row follows and does not (a coalition holding one
/// of B has weight zero: o_j = 0), and e_m the elementary symmetric polynomials. Both factors are
/// built for every subset by adding one feature at a time: O(2^d · d) for the whole table, with
/// sums of positive terms only (no division, unlike Algorithm 2's UNWIND).
fn fill_leaf_table(zeros: &[f64], value: f64, table: &mut [f64]) {
    let d = zeros.len();
    let n = 1usize << d;
    // c_k = 1 / (d · binomial(d − 1, k)), exact for d ≤ MAX_TABLE_DEPTH.
    let mut weights = vec![0.0; d];
    let mut binomial = 1.0;
    for (k, c) in weights.iter_mut().enumerate() {
        *c = 1.0 / (d as f64 * binomial);
        binomial = binomial * (d - 1 - k) as f64 / (k + 1) as f64;
    }
    // Per subset A (a bit set): e_0..e_|A| of its zero fractions, Π_{j ∈ A} z_j, and the
    // coalition sum g(A) = Σ_k c_k e_{|A|−k}, for |A| ≤ d − 1.
    let width = d + 1;
    let mut symmetric = vec![0.0; n * width];
    let mut product = vec![1.0; n];
    let mut coalitions = vec![0.0; n];
    symmetric[0] = 1.0;
    for set in 0..n {
        let size = set.count_ones() as usize;
        if set > 0 {
            // The set without its lowest feature j, then j added: e_m += z_j · e_{m−1}.
            let j = set.trailing_zeros() as usize;
            let rest = set & (set - 1);
            product[set] = product[rest] * zeros[j];
            for m in 0..=size {
                let lower = if m > 0 {
                    symmetric[rest * width + m - 1]
                } else {
                    0.0
                };
                symmetric[set * width + m] = symmetric[rest * width + m] + zeros[j] * lower;
            }
        }
        if size < d {
            coalitions[set] = (0..=size)
                .map(|k| weights[k] * symmetric[set * width + size - k])
                .sum();
        }
    }
    for (s, row) in table.chunks_mut(d).enumerate() {
        for (i, v) in row.iter_mut().enumerate() {
            let bit = 1 << i;
            let one = if s & bit != 0 { 1.0 } else { 0.0 };
            let (followed, missed) = (s & !bit, !s & (n - 1) & !bit);
            *v = value * (one - zeros[i]) * product[missed] * coalitions[followed];
        }
    }
}

/// Algorithm 2's EXTEND: adds a feature to the path, updating the subset-size weights.
fn extend(path: &mut [PathElement], depth: usize, zero: f64, one: f64, feature: u32) {
    path[depth] = PathElement {
        feature,
        zero,
        one,
        pweight: if depth == 0 { 1.0 } else { 0.0 },
    };
    let d = (depth + 1) as f64;
    for i in (0..depth).rev() {
        path[i + 1].pweight += one * path[i].pweight * (i + 1) as f64 / d;
        path[i].pweight = zero * path[i].pweight * (depth - i) as f64 / d;
    }
}

/// Algorithm 2's UNWIND: removes element `index` from the path, undoing its EXTEND.
fn unwind(path: &mut [PathElement], depth: usize, index: usize) {
    let PathElement { one, zero, .. } = path[index];
    let d = (depth + 1) as f64;
    let mut next_one = path[depth].pweight;
    for i in (0..depth).rev() {
        if one != 0.0 {
            let previous = path[i].pweight;
            path[i].pweight = next_one * d / ((i + 1) as f64 * one);
            next_one = previous - path[i].pweight * zero * (depth - i) as f64 / d;
        } else {
            path[i].pweight = path[i].pweight * d / (zero * (depth - i) as f64);
        }
    }
    for i in index..depth {
        path[i].feature = path[i + 1].feature;
        path[i].zero = path[i + 1].zero;
        path[i].one = path[i + 1].one;
    }
}

/// The total subset weight of the path with element `index` unwound, without changing it.
fn unwound_sum(path: &[PathElement], depth: usize, index: usize) -> f64 {
    let PathElement { one, zero, .. } = path[index];
    let d = (depth + 1) as f64;
    let mut next_one = path[depth].pweight;
    let mut total = 0.0;
    for i in (0..depth).rev() {
        if one != 0.0 {
            let w = next_one * d / ((i + 1) as f64 * one);
            total += w;
            next_one = path[i].pweight - w * zero * (depth - i) as f64 / d;
        } else {
            total += path[i].pweight * d / (zero * (depth - i) as f64);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{BinMapper, Feature};
    use crate::loss::LossSpec;
    use crate::model::FeatureSpec;
    use crate::params::Method;
    use crate::tree::test_data::leaf;
    use crate::tree::CategorySplit;

    const N_LEVELS: u32 = 5;

    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            crate::tree::test_data::uniform(&mut self.0)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.uniform() * n as f64) as usize
        }
    }

    /// A random tree of depth ≤ `depth` on features whose kinds are `categorical[j]`, that may
    /// test a feature several times on one path, with counts that add up.
    fn random_tree(rng: &mut Rng, categorical: &[bool], depth: usize) -> Tree {
        fn grow(rng: &mut Rng, categorical: &[bool], tree: &mut Tree, node: usize, depth: usize) {
            let count = tree.nodes[node].count;
            if depth == 0 || count < 2 || rng.uniform() < 0.2 {
                return;
            }
            let feature = rng.below(categorical.len());
            let left_count = 1 + rng.below(count as usize - 1) as u32;
            let (left, right) = (tree.nodes.len(), tree.nodes.len() + 1);
            tree.nodes.push(leaf(rng.uniform() * 2.0 - 1.0, left_count));
            tree.nodes
                .push(leaf(rng.uniform() * 2.0 - 1.0, count - left_count));
            let n = &mut tree.nodes[node];
            n.feature = feature as u32;
            n.left = left as u32;
            n.right = right as u32;
            n.default_left = rng.uniform() < 0.5;
            n.gain = 1.0;
            if categorical[feature] {
                let codes = (0..N_LEVELS).filter(|_| rng.uniform() < 0.5);
                let bits = codes.fold(0u64, |bits, c| bits | 1 << c);
                n.category = Some(tree.categories.len() as u32);
                tree.categories.push(CategorySplit {
                    left_bins: Default::default(),
                    left_codes: vec![bits],
                });
            } else {
                n.threshold = rng.uniform();
            }
            grow(rng, categorical, tree, left, depth - 1);
            grow(rng, categorical, tree, right, depth - 1);
        }
        let mut tree = Tree {
            nodes: vec![leaf(0.0, 1000)],
            categories: Vec::new(),
        };
        grow(rng, categorical, &mut tree, 0, depth);
        tree
    }

    struct Case {
        model: Model,
        numeric: Vec<Vec<f64>>,
        codes: Vec<Vec<i32>>,
    }

    impl Case {
        fn new(seed: u64, n_outputs: usize, categorical: &[bool], n_rows: usize) -> Case {
            let mut rng = Rng(seed);
            let features = categorical
                .iter()
                .enumerate()
                .map(|(j, &c)| FeatureSpec {
                    name: format!("x{j}"),
                    mapper: if c {
                        BinMapper::Categorical {
                            level_bins: (1..=N_LEVELS as u8 + 1).collect(),
                            n_bins: N_LEVELS as usize + 2,
                        }
                    } else {
                        BinMapper::Numeric { cuts: vec![0.5] }
                    },
                })
                .collect();
            let mut model = Model {
                method: Method::Gbm,
                loss: LossSpec::Squared,
                n_outputs,
                bias: (0..n_outputs).map(|k| 0.25 * k as f64 - 0.1).collect(),
                trees: Vec::new(),
                weights: Vec::new(),
                tree_outputs: Vec::new(),
                features,
                best_iteration: None,
                iteration_trees: Vec::new(),
                iteration_weights: Vec::new(),
            };
            for t in 0..4 * n_outputs {
                let tree = random_tree(&mut rng, categorical, 4);
                // A weight of zero as well: such trees count for nothing.
                let weight = if t == 1 { 0.0 } else { 0.5 + rng.uniform() };
                model.push_tree(tree, weight, t % n_outputs);
            }
            let mut numeric = Vec::new();
            let mut codes = Vec::new();
            for &c in categorical {
                if c {
                    // -1 is missing; N_LEVELS is a level the splits' bit sets do not mention.
                    codes.push((0..n_rows).map(|_| rng.below(7) as i32 - 1).collect());
                    numeric.push(Vec::new());
                } else {
                    let mut draw = || {
                        let x = rng.uniform();
                        if rng.uniform() < 0.2 {
                            f64::NAN
                        } else {
                            x
                        }
                    };
                    numeric.push((0..n_rows).map(|_| draw()).collect());
                    codes.push(Vec::new());
                }
            }
            Case {
                model,
                numeric,
                codes,
            }
        }

        fn frame(&self) -> Frame<'_> {
            let features = self
                .model
                .features
                .iter()
                .enumerate()
                .map(|(j, spec)| match spec.mapper {
                    BinMapper::Categorical { .. } => {
                        Feature::categorical(spec.name.clone(), &self.codes[j], N_LEVELS + 1)
                    }
                    BinMapper::Numeric { .. } => {
                        Feature::numeric(spec.name.clone(), &self.numeric[j])
                    }
                })
                .collect();
            Frame::new(features).unwrap()
        }
    }

    /// The tree's expected value given the features in `known` (a bit set): the row's
    /// direction at their rules, the cover-weighted mean of both children at the others.
    fn conditional_expectation(
        tree: &Tree,
        frame: &Frame<'_>,
        row: usize,
        known: u32,
        node: usize,
    ) -> f64 {
        let n = &tree.nodes[node];
        if n.is_leaf() {
            return n.value;
        }
        let (left, right) = (n.left as usize, n.right as usize);
        if known >> n.feature & 1 == 1 {
            let next = if tree.goes_left_raw(n, frame, row) {
                left
            } else {
                right
            };
            return conditional_expectation(tree, frame, row, known, next);
        }
        let (l, r) = (
            tree.nodes[left].count as f64,
            tree.nodes[right].count as f64,
        );
        (l * conditional_expectation(tree, frame, row, known, left)
            + r * conditional_expectation(tree, frame, row, known, right))
            / (l + r)
    }

    /// The model's output-k value of a set of known features.
    fn value(model: &Model, frame: &Frame<'_>, row: usize, k: usize, known: u32) -> f64 {
        let mut v = model.bias[k];
        for ((tree, &w), &o) in model
            .trees
            .iter()
            .zip(&model.weights)
            .zip(&model.tree_outputs)
        {
            if o as usize == k {
                v += w * conditional_expectation(tree, frame, row, known, 0);
            }
        }
        v
    }

    fn factorial(n: usize) -> f64 {
        (1..=n).map(|i| i as f64).product()
    }

    /// Shapley values by enumerating every subset of the features (and the value of the empty
    /// set as the bias).
    fn brute_force_shap(model: &Model, frame: &Frame<'_>, row: usize, k: usize) -> Vec<f64> {
        let m = model.features.len();
        let mut phi = vec![0.0; m + 1];
        for i in 0..m {
            for s in 0u32..1 << m {
                if s >> i & 1 == 1 {
                    continue;
                }
                let size = s.count_ones() as usize;
                let weight = factorial(size) * factorial(m - size - 1) / factorial(m);
                phi[i] += weight
                    * (value(model, frame, row, k, s | 1 << i) - value(model, frame, row, k, s));
            }
        }
        phi[m] = value(model, frame, row, k, 0);
        phi
    }

    /// Shapley interaction indices by enumeration; the diagonal is what the pairs leave of each
    /// feature's Shapley value.
    fn brute_force_interactions(
        model: &Model,
        frame: &Frame<'_>,
        row: usize,
        k: usize,
    ) -> Vec<f64> {
        let m = model.features.len();
        let w = m + 1;
        let v = |s: u32| value(model, frame, row, k, s);
        let mut matrix = vec![0.0; w * w];
        for i in 0..m {
            for j in (0..m).filter(|&j| j != i) {
                let mut total = 0.0;
                for s in 0u32..1 << m {
                    if s >> i & 1 == 1 || s >> j & 1 == 1 {
                        continue;
                    }
                    let size = s.count_ones() as usize;
                    let weight =
                        factorial(size) * factorial(m - size - 2) / (2.0 * factorial(m - 1));
                    total +=
                        weight * (v(s | 1 << i | 1 << j) - v(s | 1 << i) - v(s | 1 << j) + v(s));
                }
                matrix[i * w + j] = total;
            }
        }
        let phi = brute_force_shap(model, frame, row, k);
        for i in 0..m {
            let others: f64 = (0..m).filter(|&j| j != i).map(|j| matrix[i * w + j]).sum();
            matrix[i * w + i] = phi[i] - others;
        }
        matrix[w * w - 1] = phi[m];
        matrix
    }

    fn assert_close(got: &[f64], expected: &[f64], what: &str) {
        for (g, e) in got.iter().zip(expected) {
            assert!(
                (g - e).abs() <= 1e-9 * (1.0 + e.abs()),
                "{what}: {got:?} vs {expected:?}"
            );
        }
    }

    const KINDS: [&[bool]; 3] = [
        &[false, false, false, false, false],
        &[false, true, false, true],
        &[true, false, true, false, false, true],
    ];

    #[test]
    fn contributions_equal_brute_force_shapley_values_and_sum_to_the_score() {
        for (seed, categorical) in KINDS.iter().enumerate() {
            for n_outputs in [1, 3] {
                let case = Case::new(seed as u64 + 1, n_outputs, categorical, 40);
                let frame = case.frame();
                let model = &case.model;
                let contrib = model.predict_contrib(&frame).unwrap();
                let scores = model.predict(&frame).unwrap();
                let w = model.features.len() + 1;
                for row in 0..frame.n_rows() {
                    for k in 0..n_outputs {
                        let block = &contrib[(row * n_outputs + k) * w..][..w];
                        let expected = brute_force_shap(model, &frame, row, k);
                        assert_close(block, &expected, "contributions");
                        let sum: f64 = block.iter().sum();
                        let score = scores[row * n_outputs + k];
                        assert!((sum - score).abs() <= 1e-9 * (1.0 + score.abs()));
                    }
                }
            }
        }
    }

    #[test]
    fn interaction_values_equal_brute_force_shapley_interaction_indices() {
        for (seed, categorical) in KINDS.iter().enumerate() {
            let n_outputs = 1 + seed % 2;
            let case = Case::new(seed as u64 + 10, n_outputs, categorical, 15);
            let frame = case.frame();
            let model = &case.model;
            let interactions = model.predict_interactions(&frame).unwrap();
            let contrib = model.predict_contrib(&frame).unwrap();
            let w = model.features.len() + 1;
            for row in 0..frame.n_rows() {
                for k in 0..n_outputs {
                    let matrix = &interactions[(row * n_outputs + k) * w * w..][..w * w];
                    assert_close(
                        matrix,
                        &brute_force_interactions(model, &frame, row, k),
                        "interactions",
                    );
                    let phi = &contrib[(row * n_outputs + k) * w..][..w];
                    let row_sums: Vec<f64> = matrix.chunks(w).map(|r| r.iter().sum()).collect();
                    assert_close(&row_sums, phi, "interaction rows sum to contributions");
                }
            }
        }
    }

    #[test]
    fn contributions_at_an_iteration_sum_to_that_iterations_score() {
        for n_outputs in [1, 3] {
            let case = Case::new(21, n_outputs, KINDS[2], 40);
            let mut model = case.model.clone();
            // One tree per output and iteration; the momentum form (rewritten weights) too.
            model.iteration_trees = (1..=4).map(|i| i * n_outputs).collect();
            let frame = case.frame();
            let w = model.features.len() + 1;
            for momentum in [false, true] {
                if momentum {
                    model.iteration_weights = (1..=4)
                        .map(|i| model.weights.iter().map(|v| v * i as f64 / 4.0).collect())
                        .collect();
                }
                for k in 0..=4 {
                    let contrib = model.predict_contrib_iteration(&frame, k).unwrap();
                    let scores = model.predict_iteration(&frame, k).unwrap();
                    for (block, score) in contrib.chunks(w).zip(&scores) {
                        let sum: f64 = block.iter().sum();
                        assert!((sum - score).abs() <= 1e-9 * (1.0 + score.abs()));
                    }
                    let interactions = model.predict_interactions_iteration(&frame, k).unwrap();
                    for (matrix, phi) in interactions.chunks(w * w).zip(contrib.chunks(w)) {
                        let row_sums: Vec<f64> = matrix.chunks(w).map(|r| r.iter().sum()).collect();
                        assert_close(&row_sums, phi, "interactions at an iteration");
                    }
                }
                assert!(model.predict_contrib_iteration(&frame, 5).is_err());
            }
            assert_eq!(
                model.predict_contrib_iteration(&frame, 4).unwrap(),
                model.predict_contrib(&frame).unwrap()
            );
        }
    }

    #[test]
    fn leaf_tables_equal_the_recursive_walk_on_deep_trees() {
        let categorical = [false, true, false, false, true, false, false, false];
        let case = Case::new(5, 1, &categorical, 50);
        let frame = case.frame();
        let numeric: Vec<&[f64]> = case.numeric.iter().map(|x| &x[..]).collect();
        let mut rng = Rng(99);
        for _ in 0..6 {
            let tree = random_tree(&mut rng, &categorical, 9);
            let shap_tree = ShapTree::new(&tree, 0.7, 0);
            let tables = LeafTables::new(&shap_tree).expect("a depth-9 tree has tables");
            let mut path = vec![PathElement::default(); path_len(shap_tree.depth)];
            let mut masks = vec![0; tree.nodes.len()];
            for row in 0..frame.n_rows() {
                let (mut walked, mut tabled) = (vec![0.0; 8], vec![0.0; 8]);
                shap_tree.shap(&frame, row, &mut walked, &mut path, Condition::None);
                tables.add(&tree, &frame, &numeric, row, &mut tabled, &mut masks);
                assert_close(&tabled, &walked, "tables against the walk");
            }
        }
    }

    #[test]
    fn a_feature_no_rule_tests_gets_exactly_zero() {
        let case = Case::new(7, 2, &[false, false, true, false], 30);
        let mut model = case.model.clone();
        // Feature 3 leaves every tree: its rules become leaves' parents on feature 0.
        for tree in &mut model.trees {
            for node in tree
                .nodes
                .iter_mut()
                .filter(|n| !n.is_leaf() && n.feature == 3)
            {
                node.feature = 0;
            }
        }
        let contrib = model.predict_contrib(&case.frame()).unwrap();
        let w = model.features.len() + 1;
        assert!(contrib.chunks(w).all(|block| block[3] == 0.0));
    }

    #[test]
    fn contributions_do_not_depend_on_the_thread_count() {
        let case = Case::new(3, 2, KINDS[1], 3 * BLOCK_ROWS + 17);
        let frame = case.frame();
        let many = case.model.predict_contrib(&frame).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let one = pool.install(|| case.model.predict_contrib(&frame).unwrap());
        assert_eq!(many, one);
    }
}
