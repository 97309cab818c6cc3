//! RankNet's pairwise logistic loss (Burges et al., "Learning to rank using gradient descent",
//! ICML 2005; Burges, MSR-TR-2010-82 §2): within a group, every pair (h, l) with rel_h > rel_l
//! costs ln(1 + e^{−(s_h − s_l)}) (σ = 1), XGBoost's `rank:pairwise`.
//!
//! * ∂/∂s_h −= ρ, ∂/∂s_l += ρ with ρ = 1 / (1 + e^{s_h − s_l}); the Hessian diagonal adds
//!   ρ(1 − ρ) to both. Smooth and convex; the line search along a tree is exact.
//! * Labels: any finite numbers (only their order within a group matters).
//! * A group of n rows has up to n(n − 1)/2 pairs: the cost is quadratic in the group's size.

use super::ranking::{GroupLoss, Pairs};

/// RankNet's loss of one group (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct Pairwise;

fn pairs(y: &[f64]) -> Pairs {
    let n = y.len();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if y[i] > y[j] {
                pairs.push((i, j, 1.0));
            }
        }
    }
    Pairs { pairs }
}

impl GroupLoss for Pairwise {
    fn name(&self) -> &'static str {
        "pairwise"
    }
    fn label_error(&self, label: f64) -> Option<String> {
        (!label.is_finite()).then(|| "pairwise needs finite relevance labels".to_string())
    }
    fn evaluate(
        &self,
        _key: u64,
        y: &[f64],
        s: &[f64],
        gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        pairs(y).evaluate(s, gradient, hessian)
    }
    fn slope(&self, _key: u64, y: &[f64], s: &[f64], b: &[f64], gamma: f64) -> (f64, f64, f64) {
        pairs(y).slope(s, b, gamma)
    }
}
