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

/// The deepest oblivious tree: its leaf table has 2^depth entries (CatBoost's limit too).
pub const MAX_OBLIVIOUS_DEPTH: usize = 16;

/// The kind of tree a fit grows: ordinary (every node its own split) or oblivious (every node
/// of a level the same split, as in CatBoost).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeKind {
    /// Each node splits on its own rule.
    #[default]
    Ordinary,
    /// Every node of a level splits on the same rule (CatBoost's symmetric trees).
    Oblivious,
}

impl TreeKind {
    fn is_ordinary(&self) -> bool {
        *self == TreeKind::Ordinary
    }
}

impl std::str::FromStr for TreeKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "ordinary" => Ok(TreeKind::Ordinary),
            "oblivious" => Ok(TreeKind::Oblivious),
            _ => Err(Error::param("tree", s, "\"ordinary\", \"oblivious\"")),
        }
    }
}

/// The weak learner's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TreeParams {
    /// Split levels: 1 is a stump; at most `MAX_DEPTH`.
    pub max_depth: usize,
    /// The most leaves a leaf-wise tree may have.
    pub max_leaves: usize,
    /// Fewest rows a leaf may hold. `None`: the booster's default for its loss (1 for least
    /// squares, 10 otherwise: docs/algorithms.md, "Leaf size and L2"), and 10 for a tree grown
    /// on its own.
    pub min_samples_leaf: Option<usize>,
    /// The least fitting weight a leaf may have.
    pub min_weight_leaf: f64,
    /// λ of the leaf value Σvt / (Σv + λ).
    pub l2_leaf: f64,
    /// The least gain a split must bring.
    pub min_split_gain: f64,
    /// Depth-wise or leaf-wise growth.
    pub growth: Growth,
    /// Ordinary trees, or oblivious ones (one rule per level: oblivious.rs). Left out of
    /// checkpoints when ordinary, so that those written before oblivious trees read the same.
    #[serde(default, skip_serializing_if = "TreeKind::is_ordinary")]
    pub tree: TreeKind,
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
            tree: TreeKind::Ordinary,
            categorical: CategoricalParams::default(),
        }
    }
}

impl TreeParams {
    /// Checks every setting's domain.
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
        if self.tree == TreeKind::Oblivious {
            if self.max_depth > MAX_OBLIVIOUS_DEPTH {
                return Err(Error::param(
                    "max_depth",
                    self.max_depth,
                    format!(
                        "an integer in 1..={MAX_OBLIVIOUS_DEPTH} with tree=\"oblivious\" \
                         (its leaf table has 2^max_depth entries)"
                    ),
                ));
            }
            if self.growth == Growth::Leafwise {
                return Err(Error::param(
                    "growth",
                    "leafwise",
                    "\"depthwise\" with tree=\"oblivious\" (an oblivious tree grows level by level)",
                ));
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
