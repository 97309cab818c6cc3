//! The parameters of categorical splits (the search is `best_categorical` in split.rs): a subset
//! of levels goes left. Levels are ordered by their mean target,
//! smoothed towards the node's mean, and prefixes of that order are scanned (exact for least
//! squares without smoothing, as in LightGBM and Fisher's ordering). Three guards against
//! fitting noise in many-level features (LightGBM's `cat_smooth`, `max_cat_threshold`, and a
//! per-level form of `min_data_per_group`):
//!
//! * `cat_smooth` s: a level is placed by (Σvt + s·m)/(Σv + s), m the node's mean target, so a
//!   level with few rows sits near the middle of the order instead of at an end, where a
//!   prefix could isolate it on the strength of a few rows.
//! * `min_data_per_group`: levels with fewer rows in the node are not ordered at all; they stay
//!   with the right child (with the other levels not sent left).
//! * `max_cat_threshold`: the smaller side of a split holds at most this many of the ordered
//!   levels (LightGBM scans at most this many levels from each end of the order).

use serde::{Deserialize, Serialize};

/// How categorical splits are searched (LightGBM's many-vs-many partition, Fisher 1958).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CategoricalParams {
    /// Added to each level's weight when its levels are ordered by mean target.
    pub cat_smooth: f64,
    /// The fewest rows a side of a categorical split may have.
    pub min_data_per_group: usize,
    /// The most levels a categorical split may send left.
    pub max_cat_threshold: usize,
}

impl Default for CategoricalParams {
    /// The defaults, chosen by measured test loss (docs/algorithms.md, "Categorical splits").
    fn default() -> Self {
        CategoricalParams {
            cat_smooth: 10.0,
            min_data_per_group: 10,
            max_cat_threshold: 32,
        }
    }
}

impl CategoricalParams {
    /// No guard: the ordering by raw mean target over every level, as before these parameters
    /// existed (what checkpoints written then ran).
    pub fn unguarded() -> Self {
        CategoricalParams {
            cat_smooth: 0.0,
            min_data_per_group: 1,
            max_cat_threshold: 256,
        }
    }
}
