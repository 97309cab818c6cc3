//! Squared loss ℓ(y, f) = (y − f)²/2. σ = μ = 1; every minimisation has a closed form
//! (weighted means), and prox_{λℓ}(z) = (z + λy)/(1 + λ).

use super::Loss;

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
    fn init(&self, y: &[f64], w: &[f64]) -> f64 {
        let (mut sum, mut weight) = (0.0, 0.0);
        for i in 0..y.len() {
            sum += w[i] * y[i];
            weight += w[i];
        }
        if weight > 0.0 {
            sum / weight
        } else {
            0.0
        }
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32]) -> f64 {
        let (mut sum, mut weight) = (0.0, 0.0);
        for &i in rows {
            let i = i as usize;
            sum += w[i] * (y[i] - f[i]);
            weight += w[i];
        }
        if weight > 0.0 {
            sum / weight
        } else {
            0.0
        }
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..y.len() {
            num += w[i] * b[i] * (y[i] - f[i]);
            den += w[i] * b[i] * b[i];
        }
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
    }
    fn sigma(&self) -> Option<f64> {
        Some(1.0)
    }
    fn mu(&self) -> Option<f64> {
        Some(1.0)
    }
}
