//! Pinball (quantile) loss ℓ(y, f) = max(τ(y − f), (τ − 1)(y − f)), τ ∈ (0, 1).
//!
//! * ∂ℓ/∂f = −τ if y > f, 1 − τ if y < f, 0 at the kink (Proximal boosting, App. B.3); ℓ'' = 0.
//! * prox_{λℓ}(z) = z + λτ if y − z > λτ; z + λ(τ − 1) if y − z < λ(τ − 1); y otherwise.
//! * Constant minimiser: weighted τ-quantile. Line searches: exact minimiser of the convex
//!   piecewise-linear Σ w ρ_τ(r_i − γ b_i) over the breakpoints r_i/b_i (r = y − f): below a
//!   breakpoint the row's slope is −τ w b (b > 0) or −(1 − τ) w |b| (b < 0), and it rises by
//!   w|b| there, so the answer is a weighted quantile; O(n) by selection, rows with b = 0 ignored.
//!   Flat argmin intervals resolve to their midpoint; negative steps are allowed (exact argmin).
//! * σ, μ = None.

use super::solve::{self, Kink};
use super::{ScalarLoss, Terms};

/// The pinball loss, as `LossSpec::Pinball` builds it.
#[derive(Debug, Clone, Copy)]
pub struct Pinball {
    /// τ in (0, 1), the quantile level.
    pub tau: f64,
}

impl Pinball {
    /// The loss at level `tau`.
    pub fn new(tau: f64) -> Self {
        Pinball { tau }
    }
}

impl ScalarLoss for Pinball {
    fn name(&self) -> &'static str {
        "pinball"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        let r = y - f;
        (self.tau * r).max((self.tau - 1.0) * r)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        if y > f {
            -self.tau
        } else if y < f {
            1.0 - self.tau
        } else {
            0.0
        }
    }
    fn second_derivative(&self, _y: f64, _f: f64) -> f64 {
        0.0
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let r = y - z;
        if r > lambda * self.tau {
            z + lambda * self.tau
        } else if r < lambda * (self.tau - 1.0) {
            z + lambda * (self.tau - 1.0)
        } else {
            y
        }
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        let (slope, mut kinks) = self.kinks(terms).expect("the pinball loss has kinks");
        solve::piecewise_linear_point(slope, &mut kinks)
    }
    fn kinks(&self, terms: Terms<'_>) -> Option<(f64, Vec<Kink>)> {
        let mut kinks = Vec::with_capacity(terms.iter().len());
        let mut slope = 0.0;
        terms.for_each(|y, f, b, w| {
            let a = w * b.abs();
            if a > 0.0 {
                kinks.push(Kink {
                    at: (y - f) / b,
                    jump: a,
                });
                slope -= if b > 0.0 {
                    self.tau * a
                } else {
                    (1.0 - self.tau) * a
                };
            }
        });
        Some((slope, kinks))
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn curvature_can_vanish(&self) -> bool {
        true
    }
    fn mu(&self) -> Option<f64> {
        None
    }
}
