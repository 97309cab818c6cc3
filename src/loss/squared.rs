//! Squared loss ℓ(y, f) = (y − f)²/2. σ = μ = 1; every minimisation has the closed form
//! Σ w b (y − f) / Σ w b² (weighted means when b = 1), and prox_{λℓ}(z) = (z + λy)/(1 + λ).

use super::{Loss, Terms};

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
            num += w * b * (y - f);
            den += w * b * b;
        }
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
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
