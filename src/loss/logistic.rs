//! Logistic loss with ridge d ≥ 0 (RGBM §4): ℓ(y, f) = ln(1 + e^{−y f}) + d f²/2, labels ±1,
//! natural log (000 App. B.5 uses log₂, which only rescales the loss; same minimisers).
//!
//! * ∂ℓ/∂f = −y σ(−y f) + d f, ℓ'' = σ(f)(1 − σ(f)) + d for y = ±1 (σ the sigmoid);
//!   σ-smooth with σ = 1/4 + d, μ = d when d > 0 (RGBM §4). `response` = σ(f).
//! * prox_{λℓ}(z): the root of u − z + λ ℓ'(y, u) = 0 by safeguarded Newton (tolerance 1e-12
//!   relative, ≤ 50 iterations, bisection fallback) inside the bracket between z and
//!   z − λℓ'(y, z), intersected with [(z + λ min(0, y))/(1 + λd), (z + λ max(0, y))/(1 + λd)]
//!   (valid because y σ(−y u) lies between 0 and y), which stays finite for any finite z.
//! * Constant minimiser: ln(W₊/W₋) for d = 0 (W± the weights of each class); ±36 when one class
//!   is absent (≈ −ln ε_machine: the loss of a one-class sample is then ε_machine × its value at 0);
//!   for d > 0 a 1-D solve. Leaf and tree line searches: safeguarded Newton on the exact
//!   objective ([`solve::minimize_convex`], ≤ 20 iterations, 1e-10 relative); when the infimum is
//!   at infinity (d = 0 and one class along the direction) the step stops where the slope is
//!   ε_machine × its value at 0. Negative steps are allowed.
//! * All forms are overflow-safe (softplus via ln_1p of e^{−|x|}, two-branch sigmoid): no NaN or
//!   inf for finite scores, even ±1e6.

use super::solve::{self, sigmoid, softplus, Slope};
use super::{Loss, Terms};

#[derive(Debug, Clone, Copy, Default)]
pub struct Logistic {
    pub ridge: f64,
}

impl Logistic {
    pub fn new(ridge: f64) -> Self {
        Logistic { ridge }
    }
    /// (e, max(−y f, 0), ∂ℓ/∂f, ∂²ℓ/∂f²) at one point, with e = exp(−|y f|), which softplus,
    /// the sigmoid and the curvature share: ℓ = max(−y f, 0) + ln(1 + e) + d f²/2. Each
    /// expression is the one of `value`, `derivative`, `second_derivative` with that e
    /// substituted, so the results are identical.
    fn terms(&self, y: f64, f: f64) -> (f64, f64, f64, f64) {
        let x = -y * f;
        let e = (-x.abs()).exp();
        let sigmoid_x = if x >= 0.0 {
            1.0 / (1.0 + e)
        } else {
            e / (1.0 + e)
        };
        let derivative = -y * sigmoid_x + self.ridge * f;
        // sigmoid(−|y f|) = e/(1 + e), also when y f = 0 (e = 1: both branches give 1/2).
        let s = e / (1.0 + e);
        let curvature = y * y * s * (1.0 - s) + self.ridge;
        (e, x.max(0.0), derivative, curvature)
    }
    fn ridge_term(&self, f: f64) -> f64 {
        0.5 * self.ridge * f * f
    }
    fn curvature(&self, y: f64, f: f64) -> f64 {
        let s = sigmoid(-(y * f).abs());
        y * y * s * (1.0 - s) + self.ridge
    }
    /// The constant minimiser without ridge in closed form, ln(W₊/W₋) (capped, see the header).
    fn log_odds(&self, y: &[f64], w: &[f64]) -> f64 {
        let (mut pos, mut neg) = (0.0, 0.0);
        for (&y, &w) in y.iter().zip(w) {
            if y > 0.0 {
                pos += w;
            } else if y < 0.0 {
                neg += w;
            }
        }
        match (pos > 0.0, neg > 0.0) {
            (false, false) => 0.0,
            (true, false) => solve::NEGLIGIBLE_LN,
            (false, true) => -solve::NEGLIGIBLE_LN,
            (true, true) => pos.ln() - neg.ln(),
        }
    }
}

impl Loss for Logistic {
    fn name(&self) -> &'static str {
        "logistic"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        softplus(-y * f) + self.ridge_term(f)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        -y * sigmoid(-y * f) + self.ridge * f
    }
    fn second_derivative(&self, y: f64, f: f64) -> f64 {
        self.curvature(y, f)
    }
    fn value_and_derivatives(&self, y: f64, f: f64) -> (f64, f64, f64) {
        let (e, x_plus, derivative, curvature) = self.terms(y, f);
        (
            x_plus + e.ln_1p() + self.ridge_term(f),
            derivative,
            curvature,
        )
    }
    fn sum_value_and_derivatives(
        &self,
        y: &[f64],
        f: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        // Σ ln(1 + e_i) as the logarithm of products of LOG_RUN factors in [1, 2] (at most 2^64,
        // far from overflow): one `ln` per run instead of a `ln_1p` per row, which was the
        // costliest step of the pass. Rounding 1 + e_i loses at most 1.1e-16 of each term.
        const LOG_RUN: usize = 64;
        let (mut linear_sum, mut log_sum) = (0.0, 0.0);
        for start in (0..y.len()).step_by(LOG_RUN) {
            let mut product = 1.0;
            for i in start..(start + LOG_RUN).min(y.len()) {
                let (e, x_plus, derivative, curvature) = self.terms(y[i], f[i]);
                neg_gradient[i] = -derivative;
                if let Some(h) = hessian.get_mut(i) {
                    *h = curvature;
                }
                linear_sum += x_plus + self.ridge_term(f[i]);
                product *= 1.0 + e;
            }
            log_sum += product.ln();
        }
        linear_sum + log_sum
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        // ℓ' and ℓ'' from one exponential (`terms`, bit for bit `derivative` and `curvature`):
        // the prox runs for every row at every iteration of the proximal methods.
        let derivatives = |u: f64| {
            let (_, _, derivative, curvature) = self.terms(y, u);
            (derivative, curvature)
        };
        let h = |u: f64| {
            let (derivative, curvature) = derivatives(u);
            (u - z + lambda * derivative, 1.0 + lambda * curvature)
        };
        let (derivative_z, curvature_z) = derivatives(z);
        let shrink = 1.0 + lambda * self.ridge;
        let (mut lo, mut hi) = (
            (z + lambda * y.min(0.0)) / shrink,
            (z + lambda * y.max(0.0)) / shrink,
        );
        let other = z - lambda * derivative_z;
        if other.is_finite() {
            lo = lo.max(z.min(other));
            hi = hi.min(z.max(other));
        }
        if hi <= lo {
            return lo;
        }
        // Start from the Newton step from z (where h(z) = λℓ'(z)), the first iterate a start at z
        // would take, without evaluating h at z once more.
        let x0 = (z - lambda * derivative_z / (1.0 + lambda * curvature_z)).clamp(lo, hi);
        solve::bracketed_newton(
            h,
            lo,
            hi,
            x0,
            h(x0),
            solve::PROX_TOL,
            f64::MIN_POSITIVE,
            solve::PROX_MAX_ITER,
        )
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        if let (Terms::Constant { y, w }, false) = (terms, self.ridge > 0.0) {
            return self.log_odds(y, w);
        }
        let deriv = |g: f64| {
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            for (y, f, b, w) in terms.iter() {
                if w != 0.0 && b != 0.0 {
                    let u = f + g * b;
                    // One exponential for ℓ' and ℓ'' (bit for bit `derivative`, `curvature`).
                    let (_, _, derivative, curvature) = self.terms(y, u);
                    let t = w * b * derivative;
                    d1 += t;
                    d2 += w * b * b * curvature;
                    noise += t.abs();
                }
            }
            Slope {
                noise,
                ..Slope::new(d1, d2)
            }
        };
        solve::minimize_convex(deriv, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
    fn sigma(&self) -> Option<f64> {
        Some(0.25 + self.ridge)
    }
    fn mu(&self) -> Option<f64> {
        (self.ridge > 0.0).then_some(self.ridge)
    }
    fn is_binary(&self) -> bool {
        true
    }
    fn response(&self, f: f64) -> f64 {
        sigmoid(f)
    }
}
