//! Hinge loss ℓ(y, f) = max(0, 1 − y f), labels y ∈ {−1, +1}.
//!
//! * ∂ℓ/∂f = −y if y f < 1, 0 otherwise (Proximal boosting, App. B.6; 0 at the kink y f = 1);
//!   ℓ'' = 0.
//! * prox_{λℓ}(z) = z + λy if y z < 1 − λ; z if y z > 1; y otherwise (the kink y u = 1).
//! * Constant minimiser: sign(Σ w y) (Proximal boosting, App. B.6). Checked: on [−1, 1] the risk is
//!   W + c(W₋ − W₊), outside it only grows, so the minimiser is +1 if W₊ > W₋, −1 if W₊ < W₋ and
//!   any c ∈ [−1, 1] on a tie (we return 0). This is finite for one-class labels too (±1).
//! * Line searches: γ ↦ Σ w max(0, 1 − y f − γ y b) is convex piecewise linear with breakpoints
//!   (1 − y f)/(y b); the exact minimiser is found in O(n) by selection. Flat argmin intervals
//!   resolve to the midpoint when bounded, else to the point closest to 0 (e.g. the smallest step
//!   that puts every row past the margin). Negative steps are allowed (exact argmin).
//! * `response` maps f to (clip(f, −1, 1) + 1)/2 ∈ [0, 1]: a score, not a calibrated probability
//!   (the hinge risk minimiser is sign(2p − 1)), equal to ½ on the decision boundary.
//! * σ, μ = None.

use super::solve::{self, Kink};
use super::{ScalarLoss, Terms};

/// ℓ(y, f) = max(0, 1 − y f), labels ±1: non-smooth, for the proximal methods.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hinge;

impl ScalarLoss for Hinge {
    fn name(&self) -> &'static str {
        "hinge"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        (1.0 - y * f).max(0.0)
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        if y * f < 1.0 {
            -y
        } else {
            0.0
        }
    }
    fn second_derivative(&self, _y: f64, _f: f64) -> f64 {
        0.0
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let m = y * z;
        if m < 1.0 - lambda {
            z + lambda * y
        } else if m > 1.0 {
            z
        } else {
            y
        }
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        if let Terms::Constant { y, w } = terms {
            // The constant minimiser in closed form, sign(Σ w y) (see the header).
            let s: f64 = y.iter().zip(w).map(|(y, w)| y * w).sum();
            return if s > 0.0 {
                1.0
            } else if s < 0.0 {
                -1.0
            } else {
                0.0
            };
        }
        let (slope, mut kinks) = self.kinks(terms).expect("the hinge loss has kinks");
        solve::piecewise_linear_point(slope, &mut kinks)
    }
    /// The kinks of every problem, the constant one included (whose closed form is the point
    /// the kink search picks).
    fn kinks(&self, terms: Terms<'_>) -> Option<(f64, Vec<Kink>)> {
        let mut kinks = Vec::with_capacity(terms.iter().len());
        let mut slope = 0.0;
        terms.for_each(|y, f, b, w| {
            // Row term: w · max(0, 1 − y f − γ a) with a = y b.
            let a = y * b;
            if w > 0.0 && a != 0.0 {
                kinks.push(Kink {
                    at: (1.0 - y * f) / a,
                    jump: w * a.abs(),
                });
                if a > 0.0 {
                    slope -= w * a;
                }
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
    fn is_binary(&self) -> bool {
        true
    }
    fn response(&self, f: f64) -> f64 {
        0.5 * (f.clamp(-1.0, 1.0) + 1.0)
    }
}
