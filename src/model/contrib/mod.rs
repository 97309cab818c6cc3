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

use super::{value_buffer, Model};
use crate::data::{Frame, Strided};
use crate::error::Result;
use crate::tree::Tree;
use crate::tree::BLOCK_ROWS;
use rayon::prelude::*;
use tables::{Layout, LeafTables, GROUP_TABLE_ENTRIES};

mod tables;

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
        let recoded = self.by_level_names(frame)?;
        let frame = &recoded.frame(frame)?;
        let derived = self.target_stats(frame)?;
        let frame = &self.aligned(&derived.frame(frame)?)?;
        let trees = self.shap_trees(weights);
        let width = self.features.len() + 1;
        let row_width = self.n_outputs * width;
        let mut out = value_buffer(frame.n_rows(), row_width, "values")?;
        let biases = self.expected_values(&trees);
        let numeric: Vec<Strided<'_>> = frame
            .features()
            .iter()
            .map(|f| f.values.numeric().unwrap_or_default())
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
        let recoded = self.by_level_names(frame)?;
        let frame = &recoded.frame(frame)?;
        let derived = self.target_stats(frame)?;
        let frame = &self.aligned(&derived.frame(frame)?)?;
        let trees = self.shap_trees(weights);
        let n_features = self.features.len();
        let width = n_features + 1;
        let block_width = width.saturating_mul(width);
        let row_width = self.n_outputs.saturating_mul(block_width);
        let mut out = value_buffer(frame.n_rows(), row_width, "values")?;
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
mod tests;
