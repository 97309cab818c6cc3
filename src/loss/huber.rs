//! Huber loss with threshold δ > 0: ℓ(y, f) = ½(y − f)² if |y − f| ≤ δ, δ|y − f| − δ²/2 otherwise.
//!
//! * ∂ℓ/∂f = clip(f − y, −δ, δ); ℓ'' = 1 if |y − f| ≤ δ, else 0. σ = 1 (RGBM §4), μ = None.
//! * prox_{λℓ}(z) = y + (z − y)/(1 + λ) if |z − y| ≤ δ(1 + λ), z − λδ·sign(z − y) otherwise
//!   (from (z − u)/λ = clip(u − y, −δ, δ)).
//! * Every 1-D minimisation (constant, leaf, tree line search) is exact: the derivative of
//!   γ ↦ Σ w ℓ(y, f + γ b) is Σ clamp(w b²(γ − t_i), −w|b|δ, w|b|δ) with t_i = (y_i − f_i)/b_i,
//!   a continuous increasing piecewise-linear function with kinks at t_i ± δ/|b_i|. One sorted
//!   sweep finds the piece holding its zero, which is then solved in closed form from the rows
//!   that are inside their quadratic zone (O(n log n)). When the zero set is an interval (every
//!   row saturated, balanced), its midpoint is returned. Negative steps are allowed.

use super::{Loss, Terms};

#[derive(Debug, Clone, Copy)]
pub struct Huber {
    pub delta: f64,
}

/// One row's contribution clamp(a(γ − t), −cap, cap) to the derivative; quadratic on t ± half.
#[derive(Debug, Clone, Copy)]
struct Ramp {
    t: f64,
    half: f64,
    a: f64,
    cap: f64,
}

/// Smallest zero of γ ↦ Σ clamp(a(γ − t), −cap, cap).
fn first_root(ramps: &[Ramp]) -> f64 {
    let mut events: Vec<(f64, f64)> = Vec::with_capacity(2 * ramps.len());
    for r in ramps {
        events.push((r.t - r.half, r.a));
        events.push((r.t + r.half, -r.a));
    }
    events.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut v: f64 = -ramps.iter().map(|r| r.cap).sum::<f64>();
    let (mut slope, mut x_prev) = (0.0, events[0].0);
    for &(x, ds) in &events {
        let v_e = v + slope * (x - x_prev);
        if v_e >= 0.0 {
            return solve_piece(ramps, x_prev, x);
        }
        slope += ds;
        v = v_e;
        x_prev = x;
    }
    x_prev
}

/// The zero on the piece [lo, hi], where the set of unsaturated rows is fixed.
fn solve_piece(ramps: &[Ramp], lo: f64, hi: f64) -> f64 {
    let mid = lo + 0.5 * (hi - lo);
    let (mut a, mut at, mut c) = (0.0, 0.0, 0.0);
    for r in ramps {
        if mid <= r.t - r.half {
            c -= r.cap;
        } else if mid >= r.t + r.half {
            c += r.cap;
        } else {
            a += r.a;
            at += r.a * r.t;
        }
    }
    if a > 0.0 {
        ((at - c) / a).clamp(lo, hi)
    } else {
        lo
    }
}

impl Huber {
    pub fn new(delta: f64) -> Self {
        Huber { delta }
    }
}

impl Loss for Huber {
    fn name(&self) -> &'static str {
        "huber"
    }
    fn value(&self, y: f64, f: f64) -> f64 {
        let r = (y - f).abs();
        if r <= self.delta {
            0.5 * r * r
        } else {
            self.delta * (r - 0.5 * self.delta)
        }
    }
    fn derivative(&self, y: f64, f: f64) -> f64 {
        (f - y).clamp(-self.delta, self.delta)
    }
    fn second_derivative(&self, y: f64, f: f64) -> f64 {
        if (y - f).abs() <= self.delta {
            1.0
        } else {
            0.0
        }
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let r = z - y;
        if r.abs() <= self.delta * (1.0 + lambda) {
            y + r / (1.0 + lambda)
        } else {
            z - lambda * self.delta * r.signum()
        }
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        let mut ramps: Vec<Ramp> = Vec::with_capacity(terms.iter().len());
        terms.for_each(|y, f, b, w| {
            if w > 0.0 && b != 0.0 {
                let half = self.delta / b.abs();
                ramps.push(Ramp {
                    t: (y - f) / b,
                    half,
                    a: w * b * b,
                    cap: w * b.abs() * self.delta,
                });
            }
        });
        if ramps.is_empty() {
            return 0.0;
        }
        let left = first_root(&ramps);
        for r in ramps.iter_mut() {
            r.t = -r.t;
        }
        let right = -first_root(&ramps);
        if right > left {
            left + 0.5 * (right - left)
        } else {
            left
        }
    }
    fn sigma(&self) -> Option<f64> {
        Some(1.0)
    }
    fn mu(&self) -> Option<f64> {
        None
    }
}
