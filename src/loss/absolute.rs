//! Absolute (least absolute deviations) loss ℓ(y, f) = |y − f|.
//!
//! * ∂ℓ/∂f = sign(f − y), 0 at the kink f = y (the subgradient of Proximal boosting, App. B.2);
//!   ℓ'' = 0.
//! * prox_{λℓ}(z) = y + max(0, 1 − λ/|z − y|)(z − y), written as the soft threshold
//!   y + sign(z − y)·max(|z − y| − λ, 0) so that z = y needs no division.
//! * Constant minimiser: weighted median. Leaf and tree line searches: the exact minimiser of the
//!   convex piecewise-linear Σ w |r_i − γ b_i| (r = y − f), a weighted median of the breakpoints
//!   r_i/b_i with weights w_i|b_i| (rows with b_i = 0 contribute nothing), O(n) by selection.
//!   Flat argmin intervals resolve to their midpoint ([`solve::pick`]); negative steps are allowed
//!   (exact argmin).
//! * Neither smooth nor strongly convex: σ, μ = None.

use super::solve::{self, Kink};
use super::{ScalarLoss, Terms};

/// ℓ(y, f) = |y − f|: the median; piecewise linear, so its steps are line searches or proxes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Absolute;

impl ScalarLoss for Absolute {
    fn name(&self) -> &'static str {
        "absolute"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        (y - f).abs()
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        if f > y {
            1.0
        } else if f < y {
            -1.0
        } else {
            0.0
        }
    }
    fn second_derivative(&self, _y: f64, _f: f64) -> f64 {
        0.0
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let r = z - y;
        y + r.signum() * (r.abs() - lambda).max(0.0)
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        let (slope, mut kinks) = self.kinks(terms).expect("the absolute loss has kinks");
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
                    jump: 2.0 * a,
                });
                slope -= a;
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
