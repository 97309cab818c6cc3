//! Squared loss ℓ(y, f) = (y − f)²/2. σ = μ = 1; every minimisation has the closed form
//! Σ w b (y − f) / Σ w b² (weighted means when b = 1), and prox_{λℓ}(z) = (z + λy)/(1 + λ).

use super::{LeafScratch, Loss, Terms};

#[derive(Debug, Clone, Copy, Default)]
pub struct Squared;

impl Loss for Squared {
    fn name(&self) -> &'static str {
        "squared"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        0.5 * (y - f) * (y - f)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        f - y
    }
    fn second_derivative(&self, _y: f64, _f: f64) -> f64 {
        1.0
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        (z + lambda * y) / (1.0 + lambda)
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        // Σ w b (y − f) / Σ w b². With b = 1 and f = 0 every product is exact (w·1 = w, y − 0 = y),
        // so `init` and `leaf_value` give the weighted means bit for bit.
        let (mut num, mut den) = (0.0, 0.0);
        for (y, f, b, w) in terms.iter() {
            let (n, d) = terms_of(y, f, b, w);
            num += n;
            den += d;
        }
        ratio(num, den)
    }
    fn leaf_values(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        leaves: &[&[u32]],
        leaf_of: &[u32],
        _: &mut LeafScratch,
    ) -> Vec<f64> {
        // One pass over the rows in order instead of one gather per leaf: a leaf's rows are
        // scattered, and gathering them reads a cache line of y, f and w per row, which cost
        // several times the sums. Each leaf still adds its rows in ascending order, the order
        // of its row list, so the values are `leaf_value`'s bit for bit. (One thread: splitting
        // the rows would regroup the sums.)
        let mut sums = vec![(0.0, 0.0); leaves.len()];
        for (i, &leaf) in leaf_of.iter().enumerate() {
            let (n, d) = terms_of(y[i], f[i], 1.0, w[i]);
            let s = &mut sums[leaf as usize];
            s.0 += n;
            s.1 += d;
        }
        sums.into_iter().map(|(n, d)| ratio(n, d)).collect()
    }
    fn unit_curvature(&self) -> bool {
        true
    }
    fn sigma(&self) -> Option<f64> {
        Some(1.0)
    }
    fn mu(&self) -> Option<f64> {
        Some(1.0)
    }
}

/// The terms (w b (y − f), w b²) of one row in Σ w b (y − f) / Σ w b².
#[inline]
fn terms_of(y: f64, f: f64, b: f64, w: f64) -> (f64, f64) {
    (w * b * (y - f), w * b * b)
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}
