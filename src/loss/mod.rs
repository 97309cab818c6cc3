//! Losses ℓ(y, f) of SPEC §5. A scalar loss maps one label and one score to a number; a multiclass
//! loss maps a class index and K scores. Binary labels are ±1 inside the engine.
//!
//! Every one-dimensional minimisation the step rules need (`init`, per-leaf line search, line search
//! along a tree) is `argmin_c Σ w_i ℓ(y_i, f_i + c·b_i)` over some rows; each loss answers it in
//! closed form where one exists and with the shared safeguarded solvers of `solve.rs` otherwise.

mod spec;
mod squared;

pub use spec::{LossSpec, Objective};
pub use squared::Squared;

use std::fmt::Debug;

/// A scalar loss. Slices `y`, `f`, `b`, `w` are aligned by row; `w` are sample weights.
pub trait Loss: Send + Sync + Debug {
    /// The public name, as accepted by `LossSpec::from_str`.
    fn name(&self) -> &'static str;
    /// ℓ(y, f).
    fn value(&self, y: f64, f: f64) -> f64;
    /// ∂ℓ/∂f; a subgradient where ℓ has a kink.
    fn derivative(&self, y: f64, f: f64) -> f64;
    /// ∂²ℓ/∂f²; zero where ℓ is piecewise linear.
    fn second_derivative(&self, y: f64, f: f64) -> f64;
    /// prox_{λ ℓ(y, ·)}(z) = argmin_u ℓ(y, u) + (u − z)² / (2λ).
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64;
    /// The constant minimiser argmin_c Σ w ℓ(y, c).
    fn init(&self, y: &[f64], w: &[f64]) -> f64;
    /// argmin_c Σ_{i ∈ rows} w_i ℓ(y_i, f_i + c): the per-leaf line search.
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32]) -> f64;
    /// argmin_γ Σ w_i ℓ(y_i, f_i + γ b_i): the line search along a tree's predictions.
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64;
    /// Smoothness constant σ (ℓ'' ≤ σ), if ℓ is smooth.
    fn sigma(&self) -> Option<f64>;
    /// Strong-convexity constant μ (ℓ'' ≥ μ), if positive.
    fn mu(&self) -> Option<f64>;
    /// True when labels must be ±1.
    fn is_binary(&self) -> bool {
        false
    }
    /// Maps a link-scale score to the response scale (probability for binary losses).
    fn response(&self, f: f64) -> f64 {
        f
    }

    /// Σ w ℓ(y, f) / Σ w.
    fn mean_value(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        let (mut total, mut weight) = (0.0, 0.0);
        for i in 0..y.len() {
            total += w[i] * self.value(y[i], f[i]);
            weight += w[i];
        }
        total / weight
    }
}
