//! Per-node feature sampling (`colsample_bynode`).

use super::candidates::Candidates;
use crate::data::BinnedData;
use crate::rng::Rng;

/// Draws the features each node of one tree may split on (`colsample_bynode`): from the tree's
/// candidate features, a fixed number, with a generator seeded by the tree's seed and the node's
/// id, so that the draw depends on neither the order the nodes are searched in nor the threads.
pub(super) struct NodeFeatureSampler {
    features: Vec<usize>,
    n_draw: usize,
    n_features: usize,
    seed: u64,
}

impl NodeFeatureSampler {
    /// The sampler of a tree with `GrowOptions`' `colsample_bynode` and `node_seed`; `None`
    /// when every node may use every candidate feature.
    pub(super) fn new(
        data: &BinnedData,
        candidates: &Candidates,
        (colsample_bynode, node_seed): (f64, u64),
    ) -> Option<NodeFeatureSampler> {
        if colsample_bynode >= 1.0 {
            return None;
        }
        let n_features = data.n_features();
        let features: Vec<usize> = (0..n_features)
            .filter(|&f| candidates.allows_feature(f))
            .collect();
        let n_draw = fraction_of(features.len(), colsample_bynode);
        Some(NodeFeatureSampler {
            features,
            n_draw,
            n_features,
            seed: node_seed,
        })
    }

    pub(super) fn candidates(&self, candidates: &Candidates, node: usize) -> Candidates {
        let mut rng = Rng::new(self.seed ^ (node as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut allowed = vec![false; self.n_features];
        for pick in rng.sample(self.features.len(), self.n_draw) {
            allowed[self.features[pick]] = true;
        }
        candidates.within(&allowed)
    }
}

/// round(fraction · n), at least 1 when n > 0.
pub fn fraction_of(n: usize, fraction: f64) -> usize {
    ((fraction * n as f64).round() as usize).clamp(n.min(1), n)
}
