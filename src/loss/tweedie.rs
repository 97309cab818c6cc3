//! The log-link losses of the Tweedie family: the negative log-likelihoods (up to terms free of f)
//! of a response with mean μ = e^f and variance ∝ μ^p, p ∈ [1, 2] — Poisson (p = 1), compound
//! Poisson–gamma (`tweedie(p)`, 1 < p < 2) and gamma (p = 2) (Jørgensen, "Exponential dispersion
//! models"; the same objectives as LightGBM's `poisson`, `tweedie`, `gamma`). With a = 2 − p and
//! a − 1 = 1 − p (docs/algorithms.md §6):
//!
//! * ℓ(y, f) = e^{a f}/a − y e^{(a−1) f}/(a − 1) + y^a/(a(a − 1)), half the unit deviance:
//!   ℓ ≥ 0 with ℓ = 0 at e^f = y, like every other loss (the booster's divergence rule compares
//!   losses by ratio). Its limits are e^f − y f + y ln y − y (p = 1) and f + y e^{−f} − 1 − ln y
//!   (p = 2); LightGBM's metrics are the same without the terms free of f. ∂ℓ/∂f = e^{a f} − y e^{(a−1) f} = e^{(1−p) f}(e^f − y), ℓ'' = a e^{a f}
//!   − (a − 1) y e^{(a−1) f} > 0 for y ≥ 0 (gamma: y > 0). Neither smooth nor strongly convex on
//!   the whole line: σ, μ = None. Values overflow to +inf beyond e^{709}, never NaN.
//! * Targets: y ≥ 0 for p < 2 (counts, or non-negative amounts), y > 0 for the gamma loss.
//! * Constant minimiser ln(Σ w y / Σ w); leaf value (b = 1) in closed form for every p, because
//!   Σ w ℓ'(y, f + c) = e^{a c} Σ w e^{a f} − e^{(a−1) c} Σ w y e^{(a−1) f} vanishes at
//!   c = ln Σ w y e^{(a−1) f} − ln Σ w e^{a f} (both sums by log-sum-exp). When every y is 0 the
//!   infimum is at −∞; the answer is where the loss has fallen to ε_machine times its value
//!   (c = −36/a; −36 for the gamma loss, whose loss then decreases linearly). Tree line search:
//!   safeguarded Newton on the exact objective with the largest exponential factored out.
//! * prox_{λℓ}(z) solves u − z + λ(e^{a u} − y e^{(a−1) u}) = 0. Poisson: u = z + λy −
//!   W(λ e^{z + λy}); gamma: u = z − λ + W(λ y e^{λ − z}) (W the principal Lambert W, evaluated as
//!   W(eˣ) without forming the exponential, [`solve::lambert_w_exp`]), then one Newton step to
//!   restore digits lost to cancellation; 1 < p < 2: safeguarded Newton inside a bracket whose
//!   ends are the Lambert W solutions with one of the two exponentials dropped (`prox_newton`).
//! * `response` = e^f, the mean.

use super::solve::{self, log_sum_exp, Slope};
use super::{ScalarLoss, Terms};

/// A Tweedie-family loss with power `p` ∈ [1, 2]: `poisson` at 1, `gamma` at 2.
#[derive(Debug, Clone, Copy)]
pub struct Tweedie {
    p: f64,
}

impl Tweedie {
    /// The Poisson deviance (power 1).
    pub fn poisson() -> Self {
        Tweedie { p: 1.0 }
    }
    /// The gamma deviance (power 2).
    pub fn gamma() -> Self {
        Tweedie { p: 2.0 }
    }
    /// 1 < p < 2 (checked by `LossSpec::validate`).
    pub fn new(p: f64) -> Self {
        Tweedie { p }
    }
    /// The variance power p.
    pub fn power(&self) -> f64 {
        self.p
    }
    /// The rate a = 2 − p of the mean term e^{a f}.
    fn a(&self) -> f64 {
        2.0 - self.p
    }
    /// The rate a − 1 = 1 − p of the target term y e^{(a−1) f}.
    fn b(&self) -> f64 {
        1.0 - self.p
    }
    /// Where the infimum of a leaf or constant is at −∞ (every target 0): the score at which the
    /// loss has fallen to ε_machine times its value at 0.
    fn floor(&self) -> f64 {
        if self.a() > 0.0 {
            -solve::NEGLIGIBLE_LN / self.a()
        } else {
            -solve::NEGLIGIBLE_LN
        }
    }
    /// ln Σ w y e^{(a−1) f} − ln Σ w e^{a f}: the exact minimiser when every b = 1.
    fn closed_form(&self, terms: Terms<'_>) -> f64 {
        let (a, b) = (self.a(), self.b());
        let live = terms.iter().filter(|&(_, _, _, w)| w > 0.0);
        let mean = log_sum_exp(live.clone().map(|(_, f, _, w)| w.ln() + a * f));
        let target = log_sum_exp(
            live.filter(|&(y, ..)| y > 0.0)
                .map(|(y, f, _, w)| w.ln() + y.ln() + b * f),
        );
        if mean == f64::NEG_INFINITY {
            0.0
        } else if target == f64::NEG_INFINITY {
            self.floor()
        } else {
            target - mean
        }
    }
    /// The root of the prox residual h(u) = u − z + λ(e^{a u} − y e^{(a−1) u}) for 1 < p < 2.
    /// Dropping either exponential gives an equation Lambert W solves: u₁ = z − W(λa e^{a z})/a
    /// without the target term (h ≤ its residual, so h(u₁) ≤ 0) and u₂ = z + W(λ(p − 1)y
    /// e^{(1−p) z})/(p − 1) without the mean term (h(u₂) ≥ 0). The bracket [u₁, u₂] is a few
    /// units wide even where ℓ'(z) overflows, and safeguarded Newton finishes inside it (plain
    /// Newton from z crawls down an exponential one unit per step).
    fn prox_newton(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let (a, b) = (self.a(), self.b());
        let residual = |u: f64| {
            let (_, d1, d2) = self.value_and_derivatives(y, u);
            (u - z + lambda * d1, 1.0 + lambda * d2)
        };
        let lo = z - solve::lambert_w_exp((lambda * a).ln() + a * z) / a;
        let hi = if y > 0.0 {
            z + solve::lambert_w_exp((-b * lambda * y).ln() + b * z) / -b
        } else {
            z
        };
        let (h_lo, h_hi) = (residual(lo), residual(hi));
        if h_lo.0 >= 0.0 {
            return polish(lo, h_lo);
        }
        if h_hi.0 <= 0.0 {
            return polish(hi, h_hi);
        }
        let (x0, h0) = if -h_lo.0 < h_hi.0 {
            (lo, h_lo)
        } else {
            (hi, h_hi)
        };
        solve::bracketed_newton(
            residual,
            lo,
            hi,
            x0,
            h0,
            solve::PROX_TOL,
            1.0,
            solve::PROX_MAX_ITER,
        )
    }
}

/// One Newton step from a closed-form prox `u` whose residual and slope are `(h, h')`. The closed
/// forms subtract two nearly equal numbers when λy or z is large (u = 3 from z + λy = 354 and
/// W = 351); the step restores the digits lost.
fn polish(u: f64, (h, dh): (f64, f64)) -> f64 {
    let polished = u - h / dh;
    if polished.is_finite() {
        polished
    } else {
        u
    }
}

impl ScalarLoss for Tweedie {
    fn name(&self) -> &'static str {
        if self.p == 1.0 {
            "poisson"
        } else if self.p == 2.0 {
            "gamma"
        } else {
            "tweedie"
        }
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        if self.p == 1.0 {
            let y_ln_y = if y > 0.0 { y * y.ln() } else { 0.0 };
            f.exp() - y * f + (y_ln_y - y)
        } else if self.p == 2.0 {
            f + y * (-f).exp() - (1.0 + y.ln())
        } else {
            let (a, b) = (self.a(), self.b());
            (a * f).exp() / a - y * (b * f).exp() / b + y.powf(a) / (a * b)
        }
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        (self.a() * f).exp() - y * (self.b() * f).exp()
    }
    fn second_derivative(&self, y: f64, f: f64) -> f64 {
        let (a, b) = (self.a(), self.b());
        a * (a * f).exp() - b * y * (b * f).exp()
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let closed = if self.p == 1.0 {
            let shifted = z + lambda * y;
            shifted - solve::lambert_w_exp(lambda.ln() + shifted)
        } else if self.p == 2.0 {
            if y == 0.0 {
                return z - lambda;
            }
            z - lambda + solve::lambert_w_exp((lambda * y).ln() + lambda - z)
        } else {
            return self.prox_newton(y, z, lambda);
        };
        let (_, d1, d2) = self.value_and_derivatives(y, closed);
        polish(closed, (closed - z + lambda * d1, 1.0 + lambda * d2))
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        if let Terms::Constant { .. } | Terms::Leaf { .. } = terms {
            return self.closed_form(terms);
        }
        let live = terms.iter().filter(|&(_, _, b, w)| w > 0.0 && b != 0.0);
        if live.clone().next().is_none() {
            return 0.0;
        }
        let (a, b) = (self.a(), self.b());
        let deriv = |g: f64| {
            // Factor out the largest exponential (at least e^0, so that e^{−m} cannot overflow).
            let m = live
                .clone()
                .map(|(y, f, d, _)| {
                    let s = f + g * d;
                    let target = if y > 0.0 { b * s } else { f64::NEG_INFINITY };
                    (a * s).max(target)
                })
                .fold(0.0, f64::max);
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            for (y, f, d, w) in live.clone() {
                let s = f + g * d;
                let mean = (a * s - m).exp();
                let target = if y > 0.0 { y * (b * s - m).exp() } else { 0.0 };
                d1 += w * d * (mean - target);
                d2 += w * d * d * (a * mean - b * target);
                noise += (w * d).abs() * (mean + target);
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
    /// With A = Σ w y e^{(1−p)f} and B = Σ w e^{(2−p)f}, ℓ'(y, f + c) summed is B e^{(2−p)c} −
    /// A e^{(1−p)c}: both terms factor out of c, and the optimum is c = ln A − ln B. At c = 0
    /// the sums are d1 = B − A and d2 = (2−p)B − (1−p)A, which give B = d2 − (1−p)d1 and A = B −
    /// d1 (−∞ when no row has y > 0).
    fn leaf_optimum_from_derivatives(&self, d1: f64, d2: f64) -> Option<f64> {
        let b = d2 - (1.0 - self.p) * d1;
        let a = b - d1;
        (b > 0.0).then(|| {
            if a > 0.0 {
                a.ln() - b.ln()
            } else {
                f64::NEG_INFINITY
            }
        })
    }
    fn sigma_from(&self, y: &[f64], f: &[f64]) -> Option<f64> {
        let largest = (y.iter().zip(f))
            .map(|(&y, &f)| self.second_derivative(y, f))
            .fold(0.0, f64::max);
        (largest.is_finite() && largest > 0.0).then_some(largest)
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn response(&self, f: f64) -> f64 {
        f.exp()
    }
    fn target_requirement(&self, y: f64) -> Option<&'static str> {
        if self.p == 2.0 {
            (y <= 0.0).then_some("targets > 0")
        } else {
            (y < 0.0).then_some("targets ≥ 0")
        }
    }
}
