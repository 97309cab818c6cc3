//! Squared loss over K outputs (multi-output regression): ℓ(y, f) = ½ Σ_k (y_k − f_k)², with a
//! target of K values per row (row-major n × K, `target_width` = K). The loss is separable, so
//! every output is the scalar squared loss of its own column: gradient f_k − y_k, Hessian 1
//! (σ = μ = 1), prox (z_k + λ y_k)/(1 + λ), the per-output weighted mean as the constant, and the
//! per-leaf search of output k the squared loss's leaf value on column k (the same sums, in the
//! same order, so a K-output model grows each output's trees as a single-output fit would). The
//! line search along a tree's K outputs has the closed form Σ w b (y − f) / Σ w b² over all
//! entries.

use super::squared::{leaf_sums, ratio, terms_of};
use super::Loss;

/// The squared loss over K outputs, as `LossSpec::MultiSquared` builds it.
#[derive(Debug, Clone, Copy)]
pub struct MultiSquared {
    /// K, the target's columns.
    pub n_outputs: usize,
}

impl MultiSquared {
    /// The loss over `n_outputs` outputs.
    pub fn new(n_outputs: usize) -> Self {
        MultiSquared { n_outputs }
    }
}

impl Loss for MultiSquared {
    fn name(&self) -> &'static str {
        "multi_squared"
    }
    fn n_outputs(&self) -> usize {
        self.n_outputs
    }
    fn target_width(&self) -> usize {
        self.n_outputs
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        y.iter()
            .zip(f)
            .map(|(&y, &f)| 0.5 * (y - f) * (y - f))
            .sum()
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        for ((o, &y), &f) in out.iter_mut().zip(y).zip(f) {
            *o = f - y;
        }
    }
    fn row_hessian(&self, _y: &[f64], _f: &[f64], out: &mut [f64]) {
        out.fill(1.0);
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        for ((o, &y), &z) in out.iter_mut().zip(y).zip(z) {
            *o = (z + lambda * y) / (1.0 + lambda);
        }
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let k = self.n_outputs;
        (0..k)
            .map(|class| {
                let (mut num, mut den) = (0.0, 0.0);
                for (row, &w) in y.chunks_exact(k).zip(w) {
                    let (n, d) = terms_of(row[class], 0.0, 1.0, w);
                    num += n;
                    den += d;
                }
                ratio(num, den)
            })
            .collect()
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], class: usize) -> f64 {
        let k = self.n_outputs;
        let (num, den) = leaf_sums(rows.iter().map(|&r| {
            let (r, e) = (r as usize, r as usize * k + class);
            (r, terms_of(y[e], f[e], 1.0, w[r]))
        }));
        ratio(num, den)
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let k = self.n_outputs;
        let (mut num, mut den) = (0.0, 0.0);
        for (e, ((&y, &f), &b)) in y.iter().zip(f).zip(b).enumerate() {
            let (n, d) = terms_of(y, f, b, w[e / k]);
            num += n;
            den += d;
        }
        ratio(num, den)
    }
    fn sigma(&self) -> Option<f64> {
        Some(1.0)
    }
    fn mu(&self) -> Option<f64> {
        Some(1.0)
    }
    fn unit_curvature(&self) -> bool {
        true
    }
    /// Any finite value is a target (finiteness is checked with the shapes).
    fn target_error(&self, _y: &[f64]) -> Option<String> {
        None
    }
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        out.copy_from_slice(f);
    }
}
