//! Exponential loss ℓ(y, f) = e^{−β y f}, β > 0, labels ±1 (AdaBoost for β = 1).
//!
//! * ∂ℓ/∂f = −β y e^{−β y f}, ℓ'' = β² e^{−β y f}. Neither smooth nor strongly convex: σ, μ = None.
//!   The value overflows to +inf once −β y f > 709 (e^{709} is the largest f64 power of e); it is
//!   never NaN. (Proximal boosting, App. B.4, prints the gradient as −βY e^{−Y f}, dropping β in
//!   the exponent; the derivative of its own definition has e^{−βY f}, which is what is
//!   implemented.)
//! * prox_{λℓ}(z) = z + v/a with a = βy and v = W(λa² e^{−a z}) (Lambert W): the root of
//!   u − z − λa e^{−a u} = 0 in closed form. W is evaluated as W(eˣ) by Newton on t + eᵗ = x
//!   ([`solve::lambert_w_exp`]), so no exponential is formed and z = ±1e6 is safe. The result lies
//!   in the bracket between z and z − λℓ'(y, z) (docs/algorithms.md §8).
//! * Constant minimiser ln(W₊/W₋)/(2β) (Proximal boosting, App. B.4); ±36/β when one class is
//!   absent (the loss of a one-class sample is then ε_machine × its value at 0). Leaf: closed form
//!   ln(Σ_{y=+1} w e^{−βF} / Σ_{y=−1} w e^{βF})/(2β) by log-sum-exp (docs/algorithms.md §6), with
//!   the same cap on a one-class leaf. Tree line search: safeguarded Newton on the exact
//!   objective with the largest exponential factored out of φ' and φ''. Negative steps are allowed.
//! * `response` = σ(2βf), the population minimiser's probability (f* = ln(p/(1−p))/(2β)).

use super::solve::{self, log_sum_exp, sigmoid, Slope};
use super::{ScalarLoss, Terms};

/// The exponential loss, as `LossSpec::Exponential` builds it.
#[derive(Debug, Clone, Copy)]
pub struct Exponential {
    /// β > 0, the margin's scale.
    pub beta: f64,
}

impl Exponential {
    /// The loss with scale `beta`.
    pub fn new(beta: f64) -> Self {
        Exponential { beta }
    }
    fn cap(&self) -> f64 {
        solve::NEGLIGIBLE_LN / self.beta
    }
    /// (ln Σ_{y>0} w e^{−βf} − ln Σ_{y<0} w e^{βf})/(2β), the argmin when every b = 1; ±cap when
    /// one class is absent.
    fn log_ratio(&self, terms: Terms<'_>) -> f64 {
        let live = terms.iter().filter(|&(_, _, _, w)| w > 0.0);
        let pos = log_sum_exp(
            live.clone()
                .filter(|r| r.0 > 0.0)
                .map(|(_, f, _, w)| w.ln() - self.beta * f),
        );
        let neg = log_sum_exp(
            live.filter(|r| r.0 < 0.0)
                .map(|(_, f, _, w)| w.ln() + self.beta * f),
        );
        match (pos == f64::NEG_INFINITY, neg == f64::NEG_INFINITY) {
            (true, true) => 0.0,
            (false, true) => self.cap(),
            (true, false) => -self.cap(),
            (false, false) => (pos - neg) / (2.0 * self.beta),
        }
    }
}

impl ScalarLoss for Exponential {
    fn name(&self) -> &'static str {
        "exponential"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        (-self.beta * y * f).exp()
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        -self.beta * y * (-self.beta * y * f).exp()
    }
    fn second_derivative(&self, y: f64, f: f64) -> f64 {
        let a = self.beta * y;
        a * a * (-a * f).exp()
    }
    fn value_and_derivatives(&self, y: f64, f: f64) -> (f64, f64, f64) {
        // One exponential for the three; −(βy) f = (−β) y f exactly, so each result is identical
        // to the separate form's.
        let e = (-self.beta * y * f).exp();
        let a = self.beta * y;
        (e, -self.beta * y * e, a * a * e)
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let a = self.beta * y;
        if a == 0.0 {
            return z;
        }
        let v = solve::lambert_w_exp((lambda * a * a).ln() - a * z);
        z + v / a
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        if let Terms::Constant { .. } | Terms::Leaf { .. } = terms {
            return self.log_ratio(terms);
        }
        let live = terms
            .iter()
            .filter(|&(y, _, b, w)| w > 0.0 && b != 0.0 && y != 0.0);
        if live.clone().next().is_none() {
            return 0.0;
        }
        let beta = self.beta;
        let deriv = |g: f64| {
            let expo = |y: f64, f: f64, b: f64| -beta * y * (f + g * b);
            let m = live
                .clone()
                .map(|(y, f, b, _)| expo(y, f, b))
                .fold(f64::NEG_INFINITY, f64::max);
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            for (y, f, b, w) in live.clone() {
                let (a, e) = (beta * y, (expo(y, f, b) - m).exp());
                d1 -= w * b * a * e;
                d2 += w * b * b * a * a * e;
                noise += (w * b * a * e).abs();
            }
            Slope {
                d1,
                d2,
                ln_scale: m,
                noise,
            }
        };
        solve::minimize_convex(deriv, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn is_binary(&self) -> bool {
        true
    }
    fn response(&self, f: f64) -> f64 {
        sigmoid(2.0 * self.beta * f)
    }
}
