//! Softmax cross-entropy over K classes: ℓ(y, f) = ln Σ_k e^{f_k} − f_y (log-sum-exp form).
//!
//! * ∂ℓ/∂f_k = p_k − [k = y] with p = softmax(f); diagonal Hessian p_k(1 − p_k). The full Hessian
//!   diag(p) − p pᵀ has largest eigenvalue ≤ ½ (attained at p = (½, ½, 0, …)), so σ = ½;
//!   μ = None (ℓ is invariant to adding a constant to every score).
//! * prox: u = z − λ(p(u) − e_y) exactly characterises the minimiser. Writing c = z + λ e_y and
//!   s = ln Σ e^{u_k}, each coordinate solves u_k + λ e^{u_k − s} = c_k, i.e. λ p_k = W(λ e^{c_k − s})
//!   (Lambert W), and s is the unique root of the decreasing Σ_k W(λ e^{c_k − s}) = λ, which lies
//!   in [max c − λ, ln Σ e^{c_k}]. A 1-D safeguarded Newton on s (≤ 50 iterations) then gives
//!   u = c − λp; no exponential of a score is ever formed, so ±1e6 scores are safe.
//! * Constant minimiser: c_k = ln W_k − mean_j ln W_j (centred log class shares); an absent class
//!   gets ln W_max − 36 before centring (its probability is then ≈ ε_machine), so it stays finite.
//! * Leaf value of class k: with a_i = F_ik − ln Σ_{j≠k} e^{F_ij}, the objective in c is
//!   Σ w [softplus(a_i + c) − [y_i = k](a_i + c)], a logistic problem solved by safeguarded Newton.
//!   Tree line search: safeguarded Newton with φ' = Σ w (⟨p, B_i⟩ − B_iy) and
//!   φ'' = Σ w Var_p(B_i). Negative steps are allowed; infima at infinity stop at a finite step.

use super::solve::{self, log_sum_exp, sigmoid, Slope};
use super::{softmax_into, Loss};

/// The multinomial log-likelihood, as `LossSpec::Softmax` builds it.
#[derive(Debug, Clone, Copy)]
pub struct Softmax {
    /// K, the classes.
    pub n_classes: usize,
}

impl Softmax {
    /// The loss over `n_classes` classes.
    pub fn new(n_classes: usize) -> Self {
        Softmax { n_classes }
    }
}

impl Loss for Softmax {
    fn name(&self) -> &'static str {
        "softmax"
    }
    fn n_outputs(&self) -> usize {
        self.n_classes
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        let yk = y[0] as usize;
        // ln Σ e^{f_k − f_y}: exact also when f_y is the largest score.
        log_sum_exp(f.iter().map(|&x| x - f[yk]))
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        softmax_into(f, out);
        out[y[0] as usize] -= 1.0;
    }
    fn row_hessian(&self, _y: &[f64], f: &[f64], out: &mut [f64]) {
        softmax_into(f, out);
        for p in out.iter_mut() {
            *p *= 1.0 - *p;
        }
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        let yk = y[0] as usize;
        out.copy_from_slice(z);
        out[yk] += lambda; // out = c = z + λ e_y
        let c: &[f64] = out;
        let ln_lambda = lambda.ln();
        // G(s) = λ − Σ W(λ e^{c_k − s}) is increasing in s; G' = Σ W/(1 + W).
        let eval = |s: f64| {
            let (mut sum, mut dsum) = (0.0, 0.0);
            for &ck in c {
                let w = solve::lambert_w_exp(ln_lambda + ck - s);
                sum += w;
                dsum += w / (1.0 + w);
            }
            (lambda - sum, dsum)
        };
        let c_max = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lo = c_max - lambda;
        let hi = log_sum_exp(c.iter().copied()).max(lo);
        let s =
            solve::bracketed_newton(eval, lo, hi, hi, eval(hi), 1e-15, 1.0, solve::PROX_MAX_ITER);
        for o in out.iter_mut() {
            *o -= solve::lambert_w_exp(ln_lambda + *o - s);
        }
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let mut share = vec![0.0; self.n_classes];
        for (&y, &w) in y.iter().zip(w) {
            share[y as usize] += w;
        }
        self.init_from_class_weights(&share)
            .expect("softmax's constant depends on the class weights only")
    }
    fn init_from_class_weights(&self, share: &[f64]) -> Option<Vec<f64>> {
        let k = self.n_classes;
        let logs: Vec<f64> = share
            .iter()
            .map(|&s| if s > 0.0 { s.ln() } else { f64::NEG_INFINITY })
            .collect();
        let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if top == f64::NEG_INFINITY {
            return Some(vec![0.0; k]);
        }
        let floored: Vec<f64> = logs
            .iter()
            .map(|&l| l.max(top - solve::NEGLIGIBLE_LN))
            .collect();
        let mean = floored.iter().sum::<f64>() / k as f64;
        Some(floored.iter().map(|l| l - mean).collect())
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], class: usize) -> f64 {
        let k = self.n_classes;
        // (a_i, target_i, w_i) of the live rows.
        let rows: Vec<(f64, f64, f64)> = rows
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| w[i] > 0.0)
            .map(|i| {
                let fi = &f[i * k..(i + 1) * k];
                let rest = log_sum_exp(
                    fi.iter()
                        .enumerate()
                        .filter(|&(j, _)| j != class)
                        .map(|(_, &x)| x),
                );
                let t = if y[i] as usize == class { 1.0 } else { 0.0 };
                (fi[class] - rest, t, w[i])
            })
            .collect();
        let deriv = |c: f64| {
            let (mut d1, mut d2) = (0.0, 0.0);
            for &(a, t, w) in &rows {
                let p = sigmoid(a + c);
                let q = sigmoid(-(a + c));
                d1 += w * (p - t);
                d2 += w * p * q;
            }
            Slope::new(d1, d2)
        };
        solve::minimize_convex(deriv, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let k = self.n_classes;
        let mut u = vec![0.0; k];
        let mut p = vec![0.0; k];
        let deriv = |g: f64| {
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            for i in 0..y.len() {
                if w[i] <= 0.0 {
                    continue;
                }
                let (fi, bi) = (&f[i * k..(i + 1) * k], &b[i * k..(i + 1) * k]);
                for j in 0..k {
                    u[j] = fi[j] + g * bi[j];
                }
                softmax_into(&u, &mut p);
                let mean: f64 = p.iter().zip(bi).map(|(p, b)| p * b).sum();
                let var: f64 = p
                    .iter()
                    .zip(bi)
                    .map(|(p, b)| p * (b - mean) * (b - mean))
                    .sum();
                let by = bi[y[i] as usize];
                d1 += w[i] * (mean - by);
                d2 += w[i] * var;
                let spread: f64 = p.iter().zip(bi).map(|(p, b)| p * b.abs()).sum();
                noise += w[i] * (spread + by.abs());
            }
            // A direction adding the same amount to every score leaves ℓ unchanged: φ' is then
            // pure rounding, which `noise` lets the solver recognise (step 0).
            Slope {
                noise,
                ..Slope::new(d1, d2)
            }
        };
        solve::minimize_convex(deriv, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
    fn sigma(&self) -> Option<f64> {
        Some(0.5)
    }
    fn mu(&self) -> Option<f64> {
        None
    }
}
