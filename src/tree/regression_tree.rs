//! A fitted regression tree. Every node keeps both forms of its rule: the bin rule used on
//! binned data and the raw rule (`x ≤ threshold`, or a set of category codes) used on raw data;
//! both send every row the same way.

use super::split::BinSet;
use crate::data::{FeatureValues, Frame};
use serde::{Deserialize, Serialize};

/// Leaves have `left == right == 0` (the root is never a child).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub feature: u32,
    pub left: u32,
    pub right: u32,
    /// Numeric rule: go left when `x ≤ threshold` (+∞ when only missing values go right).
    #[serde(with = "crate::data::nonfinite")]
    pub threshold: f64,
    /// The same rule on bins: bins 1..=bin go left.
    pub bin: u8,
    pub default_left: bool,
    /// Index into `Tree::categories` for a categorical rule.
    pub category: Option<u32>,
    /// The fitted value of the node (the leaf value for leaves).
    pub value: f64,
    /// Split gain (0 for leaves): the basis of gain feature importance.
    pub gain: f64,
    pub count: u32,
}

impl Node {
    pub fn is_leaf(&self) -> bool {
        self.left == 0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySplit {
    pub left_bins: BinSet,
    /// Bit c set when category code c goes left.
    pub left_codes: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub categories: Vec<CategorySplit>,
}

impl Tree {
    pub fn n_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.is_leaf()).count()
    }

    /// Split levels along the longest path (a stump has depth 1).
    ///
    /// One pass in node order, no recursion: children come after their parent (grown trees are
    /// built that way and `Model::validate` checks it of loaded ones), so a node's level is known
    /// before its children's. On a tree breaking that rule the result is meaningless, but the
    /// pass still ends after one look at each node.
    pub fn depth(&self) -> usize {
        let mut levels = vec![0usize; self.nodes.len()];
        let mut depth = 0;
        for (i, node) in self.nodes.iter().enumerate() {
            if node.is_leaf() {
                continue;
            }
            let child_level = levels[i] + 1;
            depth = depth.max(child_level);
            for child in [node.left, node.right] {
                if let Some(level) = levels.get_mut(child as usize) {
                    *level = child_level;
                }
            }
        }
        depth
    }

    /// The leaf reached by a row of bins.
    #[inline]
    pub fn leaf_of_bins(&self, bins: &[u8]) -> usize {
        let mut i = 0;
        loop {
            let n = &self.nodes[i];
            if n.is_leaf() {
                return i;
            }
            let bin = bins[n.feature as usize];
            let left = match n.category {
                Some(c) => self.categories[c as usize].left_bins.contains(bin),
                None => {
                    if bin == 0 {
                        n.default_left
                    } else {
                        bin <= n.bin
                    }
                }
            };
            i = if left { n.left } else { n.right } as usize;
        }
    }

    /// The leaf reached by row `row` of raw data.
    #[inline]
    pub fn leaf_of_raw(&self, frame: &Frame<'_>, row: usize) -> usize {
        let features = frame.features();
        let mut i = 0;
        loop {
            let n = &self.nodes[i];
            if n.is_leaf() {
                return i;
            }
            let left = match features[n.feature as usize].values {
                FeatureValues::Numeric(x) => {
                    let v = x[row];
                    if v.is_nan() {
                        n.default_left
                    } else {
                        v <= n.threshold
                    }
                }
                FeatureValues::Categorical { codes, .. } => {
                    let split = &self.categories[n.category.expect("categorical rule") as usize];
                    match usize::try_from(codes[row]) {
                        Ok(c) => split
                            .left_codes
                            .get(c / 64)
                            .map_or(n.default_left, |w| w >> (c % 64) & 1 == 1),
                        Err(_) => n.default_left,
                    }
                }
            };
            i = if left { n.left } else { n.right } as usize;
        }
    }

    pub fn predict_bins(&self, bins: &[u8]) -> f64 {
        self.nodes[self.leaf_of_bins(bins)].value
    }

    pub fn predict_raw(&self, frame: &Frame<'_>, row: usize) -> f64 {
        self.nodes[self.leaf_of_raw(frame, row)].value
    }

    /// Multiplies every node value by `factor` (a step size applied to the whole tree).
    pub fn scale(&mut self, factor: f64) {
        for n in &mut self.nodes {
            n.value *= factor;
        }
    }
}
