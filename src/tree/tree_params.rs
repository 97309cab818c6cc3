//! The parameters of one tree (`max_depth`, leaf size and L2, growth order, categorical
//! splits) and their checks.

use super::bins::BinStats;
use super::categorical::CategoricalParams;
use super::pending::Growth;
use super::scan::SplitParams;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The largest `max_depth`: no grown tree is deeper, depth-wise or leaf-wise (model files with
/// deeper trees are rejected).
pub const MAX_DEPTH: usize = 64;

/// `min_samples_leaf` where the loss does not set it: a pure node of a loss whose curvature
/// varies (logistic, softmax, …) has a Newton value that grows without bound as its rows'
/// curvature shrinks, and a row minimum keeps such leaves from fitting a few rows.
pub const MIN_SAMPLES_LEAF: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TreeParams {
    /// Split levels: 1 is a stump; at most `MAX_DEPTH`.
    pub max_depth: usize,
    pub max_leaves: usize,
    /// Fewest rows a leaf may hold. `None`: the booster's default for its loss (1 for least
    /// squares, 10 otherwise: docs/algorithms.md, "Leaf size and L2"), and 10 for a tree grown
    /// on its own.
    pub min_samples_leaf: Option<usize>,
    pub min_weight_leaf: f64,
    pub l2_leaf: f64,
    pub min_split_gain: f64,
    pub growth: Growth,
    /// Checkpoints written before these parameters existed ran unguarded categorical splits.
    #[serde(default = "CategoricalParams::unguarded")]
    pub categorical: CategoricalParams,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            max_depth: 3,
            max_leaves: 1 << 16,
            // docs/algorithms.md, "Leaf size and L2": measured test loss; L2 as XGBoost's λ.
            min_samples_leaf: None,
            min_weight_leaf: 1e-3,
            l2_leaf: 1.0,
            min_split_gain: 0.0,
            growth: Growth::Depthwise,
            categorical: CategoricalParams::default(),
        }
    }
}

impl TreeParams {
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_DEPTH).contains(&self.max_depth) {
            return Err(Error::param(
                "max_depth",
                self.max_depth,
                format!("an integer in 1..={MAX_DEPTH}"),
            ));
        }
        if self.max_leaves < 2 {
            return Err(Error::param(
                "max_leaves",
                self.max_leaves,
                "an integer ≥ 2",
            ));
        }
        for (name, value) in [
            ("min_weight_leaf", self.min_weight_leaf),
            ("l2_leaf", self.l2_leaf),
            ("min_split_gain", self.min_split_gain),
            ("cat_smooth", self.categorical.cat_smooth),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(Error::param(name, value, "a finite number ≥ 0"));
            }
        }
        if self.categorical.max_cat_threshold == 0 {
            return Err(Error::param("max_cat_threshold", 0, "an integer ≥ 1"));
        }
        Ok(())
    }

    /// Whether a node at `depth` holding `stats` may be split: above the depth limit, with rows
    /// enough for two leaves.
    pub(super) fn may_split(&self, depth: usize, stats: &BinStats) -> bool {
        let min_leaf = self.split_params().min_samples_leaf.max(1);
        depth < self.max_depth && stats.count as usize >= 2 * min_leaf
    }

    pub(super) fn split_params(&self) -> SplitParams {
        SplitParams {
            l2_leaf: self.l2_leaf,
            min_samples_leaf: self.min_samples_leaf.unwrap_or(MIN_SAMPLES_LEAF),
            min_weight_leaf: self.min_weight_leaf,
            min_split_gain: self.min_split_gain,
            categorical: self.categorical,
            noise: None,
        }
    }
}
