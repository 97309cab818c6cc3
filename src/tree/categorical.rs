//! Categorical splits: a subset of levels goes left. Levels are ordered by their mean target,
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

use super::histogram::BinStats;
use super::split::{BinSet, Candidates, Scan, SplitCandidate};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CategoricalParams {
    pub cat_smooth: f64,
    pub min_data_per_group: usize,
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

/// The best split of a categorical feature from its bins (bin 0: missing values).
pub(super) fn best_categorical(
    scan: &Scan,
    bins: &[BinStats],
    feature: usize,
    candidates: &Candidates,
) -> Option<SplitCandidate> {
    let p = scan.params.categorical;
    let total = scan.total;
    let node_mean = if total.sum_v > 0.0 {
        total.sum_vt / total.sum_v
    } else {
        0.0
    };
    let placed = |s: &BinStats| {
        let denominator = s.sum_v + p.cat_smooth;
        if denominator > 0.0 {
            (s.sum_vt + p.cat_smooth * node_mean) / denominator
        } else {
            0.0
        }
    };
    let mut order: Vec<u8> = (1..bins.len())
        .filter(|&b| bins[b].count > 0 && bins[b].count as usize >= p.min_data_per_group.max(1))
        .map(|b| b as u8)
        .collect();
    order.sort_by(|&a, &b| {
        placed(&bins[a as usize])
            .total_cmp(&placed(&bins[b as usize]))
            .then(a.cmp(&b))
    });
    let missing = bins[0];
    let n = order.len();
    // Rows of levels too rare to be ordered: they stay right.
    let ordered: u64 = order.iter().map(|&b| bins[b as usize].count as u64).sum();
    let rare = total.count as u64 > ordered + missing.count as u64;
    let mut best: Option<(f64, usize, bool)> = None;
    let mut prefix = BinStats::default();
    for k in 1..=n {
        prefix += bins[order[k - 1] as usize];
        if k.min(n - k) > p.max_cat_threshold || !candidates.allows(feature, k) {
            continue;
        }
        let mut consider = |left: BinStats, missing_left: bool| {
            if let Some(gain) = scan.gain(left, 0) {
                if best.is_none_or(|(g, _, _)| gain > g) {
                    best = Some((gain, k, missing_left));
                }
            }
        };
        if missing.count == 0 {
            // No missing values here: send future missing values to the larger child.
            let right_count = total.count - prefix.count;
            consider(prefix, prefix.count >= right_count);
        } else {
            consider(prefix, false);
            if k < n || rare {
                consider(prefix + missing, true);
            }
        }
    }
    let (gain, k, missing_left) = best?;
    let mut left_bins = BinSet::default();
    let mut left = BinStats::default();
    for &b in &order[..k] {
        left_bins.insert(b);
        left += bins[b as usize];
    }
    if missing_left {
        left_bins.insert(0);
        left += missing;
    }
    Some(SplitCandidate {
        feature,
        gain,
        threshold: None,
        left_bins,
        left,
        right: total - left,
    })
}
