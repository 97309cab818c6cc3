//! Several quantiles in one model: K outputs, output k the pinball loss at level τ_k
//! (τ_1 < … < τ_K in (0, 1)), ℓ(y, f) = Σ_k ρ_{τ_k}(y − f_k) with ρ_τ(r) = max(τr, (τ − 1)r).
//!
//! The loss is separable over rows and over outputs: every per-output quantity is the pinball
//! loss's (`pinball.rs`: subgradient −τ / 1 − τ / 0 at the kink, ℓ'' = 0, its closed-form prox,
//! σ = μ = None), the constant of output k is the weighted τ_k-quantile of y and the leaf value of
//! output k the exact weighted τ_k-quantile of the leaf's residuals y − f_k (the same kink search
//! as `pinball`). The line search along a tree's K outputs is one convex piecewise-linear problem
//! in γ over all n × K entries, solved exactly by the same kink search.
//!
//! Non-crossing by rearrangement (Chernozhukov, Fernández-Val & Galichon 2010, "Quantile and
//! probability curves without crossing", Econometrica 78(3)): the response of a row is its K
//! scores sorted increasingly, so a lower level is never above a higher one. Sorting never
//! increases the loss, for every y: ρ_τ(y − q) = τ(y − q) + (q − y)₊, so
//! Σ_k ρ_{τ_k}(y − q_{π(k)}) = y Σ τ_k − Σ_k τ_k q_{π(k)} + Σ_k (q_k − y)₊, whose last term does
//! not depend on the permutation π and whose middle term is smallest when q_{π(k)} increases with
//! τ_k (the rearrangement inequality). See docs/algorithms.md §6.

use super::solve::{self, Kink};
use super::{Loss, Pinball, ScalarLoss};

/// At most this many levels (a model file's loss is bounded like its outputs).
pub const MAX_LEVELS: usize = 99;

/// The pinball losses at several levels, one output each, as `LossSpec::Quantiles` builds it.
#[derive(Debug, Clone)]
pub struct Quantiles {
    levels: Vec<Pinball>,
}

impl Quantiles {
    /// `levels` strictly increasing in (0, 1) (checked by `LossSpec::validate`).
    pub fn new(levels: &[f64]) -> Self {
        Quantiles {
            levels: levels.iter().map(|&tau| Pinball::new(tau)).collect(),
        }
    }

    /// The kinks of Σ_i Σ_k w_i ρ_{τ_k}(y_i − f_ik − γ b_ik) in γ, and the slope below them.
    fn kinks(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> (f64, Vec<Kink>) {
        let k = self.levels.len();
        let mut kinks = Vec::with_capacity(f.len());
        let mut slope = 0.0;
        for (e, (&f, &b)) in f.iter().zip(b).enumerate() {
            let (row, tau) = (e / k, self.levels[e % k].tau);
            let a = w[row] * b.abs();
            if a > 0.0 {
                kinks.push(Kink {
                    at: (y[row] - f) / b,
                    jump: a,
                });
                slope -= if b > 0.0 { tau * a } else { (1.0 - tau) * a };
            }
        }
        (slope, kinks)
    }
}

impl Loss for Quantiles {
    fn name(&self) -> &'static str {
        "quantiles"
    }
    fn n_outputs(&self) -> usize {
        self.levels.len()
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        (self.levels.iter().zip(f))
            .map(|(p, &f)| p.value(y[0], f))
            .sum()
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        for ((o, p), &f) in out.iter_mut().zip(&self.levels).zip(f) {
            *o = p.derivative(y[0], f);
        }
    }
    fn row_hessian(&self, _y: &[f64], _f: &[f64], out: &mut [f64]) {
        out.fill(0.0);
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        for ((o, p), &z) in out.iter_mut().zip(&self.levels).zip(z) {
            *o = p.prox(y[0], z, lambda);
        }
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        self.levels.iter().map(|p| p.init(y, w)).collect()
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], class: usize) -> f64 {
        let (k, tau) = (self.levels.len(), self.levels[class].tau);
        let mut kinks = Vec::with_capacity(rows.len());
        let mut total = 0.0;
        for &r in rows {
            let r = r as usize;
            if w[r] > 0.0 {
                kinks.push(Kink {
                    at: y[r] - f[r * k + class],
                    jump: w[r],
                });
                total += w[r];
            }
        }
        solve::piecewise_linear_point(-tau * total, &mut kinks)
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let (slope, mut kinks) = self.kinks(y, f, b, w);
        solve::piecewise_linear_point(slope, &mut kinks)
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn curvature_can_vanish(&self) -> bool {
        true
    }
    /// Any finite value is a target (finiteness is checked with the shapes).
    fn target_error(&self, _y: &[f64]) -> Option<String> {
        None
    }
    /// The rearrangement: the row's scores in increasing order (see the module header).
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        out.copy_from_slice(f);
        out.sort_unstable_by(f64::total_cmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::Terms;
    use crate::rng::uniform;

    /// The scalar pinball loss's leaf value on one output's column.
    fn pinball_leaf(tau: f64, y: &[f64], f: &[f64], w: &[f64], rows: &[u32]) -> f64 {
        Pinball::new(tau).minimize(Terms::Leaf { y, f, w, rows })
    }

    const LEVELS: [f64; 3] = [0.1, 0.5, 0.9];

    fn data(n: usize, k: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut state = 5;
        let mut next = || uniform(&mut state);
        let y = (0..n).map(|_| 3.0 * next()).collect();
        let f = (0..n * k).map(|_| 2.0 * next() - 1.0).collect();
        let b = (0..n * k).map(|_| 2.0 * next() - 1.0).collect();
        let w = (0..n).map(|_| 0.5 + next()).collect();
        (y, f, b, w)
    }

    #[test]
    fn each_output_is_the_pinball_loss_of_its_level() {
        let loss = Quantiles::new(&LEVELS);
        let (n, k) = (50, LEVELS.len());
        let (y, f, _, w) = data(n, k);
        let init = loss.init(&y, &w);
        let rows: Vec<u32> = (0..n as u32).filter(|r| r % 3 != 1).collect();
        for (class, &tau) in LEVELS.iter().enumerate() {
            assert_eq!(init[class], Pinball::new(tau).init(&y, &w));
            let column: Vec<f64> = (0..n).map(|i| f[i * k + class]).collect();
            let expected = pinball_leaf(tau, &y, &column, &w, &rows);
            let got = loss.leaf_value(&y, &f, &w, &rows, class);
            assert!(
                (got - expected).abs() <= 1e-12,
                "{tau}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn line_search_is_the_exact_minimiser_over_all_outputs() {
        let loss = Quantiles::new(&LEVELS);
        let (n, k) = (40, LEVELS.len());
        let (y, f, b, w) = data(n, k);
        let total = |gamma: f64| -> f64 {
            (0..n)
                .map(|i| {
                    let row: Vec<f64> = (0..k)
                        .map(|j| f[i * k + j] + gamma * b[i * k + j])
                        .collect();
                    w[i] * loss.row_value(&y[i..=i], &row)
                })
                .sum()
        };
        let gamma = loss.line_search(&y, &f, &b, &w);
        for step in [-1e-3, 1e-3, -0.1, 0.1, 1.0] {
            assert!(
                total(gamma) <= total(gamma + step) + 1e-12,
                "{gamma} vs {step}"
            );
        }
    }

    #[test]
    fn sorting_never_increases_the_loss() {
        let loss = Quantiles::new(&[0.05, 0.2, 0.5, 0.8, 0.95]);
        let mut state = 9;
        for _ in 0..2000 {
            let y = [4.0 * uniform(&mut state) - 2.0];
            let f: Vec<f64> = (0..5).map(|_| 4.0 * uniform(&mut state) - 2.0).collect();
            let mut sorted = vec![0.0; 5];
            loss.row_response(&f, &mut sorted);
            assert!(sorted.windows(2).all(|p| p[0] <= p[1]));
            assert!(loss.row_value(&y, &sorted) <= loss.row_value(&y, &f) + 1e-12);
        }
    }
}
