//! Huber loss with threshold δ > 0: ℓ(y, f) = ½(y − f)² if |y − f| ≤ δ, δ|y − f| − δ²/2 otherwise.
//!
//! * ∂ℓ/∂f = clip(f − y, −δ, δ); ℓ'' = 1 if |y − f| ≤ δ, else 0. σ = 1 (RGBM §4), μ = None.
//! * prox_{λℓ}(z) = y + (z − y)/(1 + λ) if |z − y| ≤ δ(1 + λ), z − λδ·sign(z − y) otherwise
//!   (from (z − u)/λ = clip(u − y, −δ, δ)).
//! * Every 1-D minimisation (constant, leaf, tree line search) is exact: the derivative of
//!   γ ↦ Σ w ℓ(y, f + γ b) is Σ clamp(w b²(γ − t_i), −w|b|δ, w|b|δ) with t_i = (y_i − f_i)/b_i,
//!   a continuous increasing piecewise-linear function with kinks at t_i ± δ/|b_i|. A sweep over
//!   the sorted kinks near its zero (bracketed by a few Newton steps) finds the piece holding
//!   it, which is then solved in closed form from the rows that are inside their quadratic zone
//!   (O(n log n) at worst, O(n) when the bracket holds few kinks). When the zero set is an
//!   interval (every row saturated, balanced), its midpoint is returned. Negative steps are
//!   allowed.

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

/// Smallest zero of D(γ) = Σ clamp(a(γ − t), −cap, cap), increasing and piecewise linear with
/// kinks (events) at t ± half: a sweep over the sorted events finds the piece where D turns
/// non-negative, solved there in closed form (`solve_piece`). Only the events near the zero are
/// sorted: a few Newton steps from the least-squares point `start` = Σ a t / Σ a (the zero when
/// no row saturates) bracket it first, and the sweep starts at the bracket's left end, with D
/// there kept from those steps (sorting all 2n events made the Huber leaf search cost more than
/// the tree).
fn first_root(ramps: &[Ramp], start: f64) -> f64 {
    let Bracket { lo, hi, at_lo } = newton_bracket(ramps, start);
    // The events in (lo, hi], the first one above hi, and the last one at or below lo (the
    // piece's left end if the zero lies before the first event in the bracket).
    let (mut below, mut above) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut events: Vec<(f64, f64)> = Vec::new();
    for r in ramps {
        for (x, jump) in [(r.t - r.half, r.a), (r.t + r.half, -r.a)] {
            // Selects for the common cases (either side of the bracket, a coin flip), a branch
            // for the rare one.
            below = below.max(if x <= lo { x } else { f64::NEG_INFINITY });
            above = above.min(if x > hi { x } else { f64::INFINITY });
            if lo < x && x <= hi {
                events.push((x, jump));
            }
        }
    }
    if above < f64::INFINITY {
        // Its jump is not needed: the sweep stops there at the latest (D(hi) ≥ 0).
        events.push((above, 0.0));
    }
    events.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let (mut v, mut slope) = at_lo;
    let mut x_prev = lo;
    let mut prev_event = below;
    for &(x, jump) in &events {
        let v_e = if x_prev == f64::NEG_INFINITY {
            v
        } else {
            v + slope * (x - x_prev)
        };
        if v_e >= 0.0 {
            return if prev_event == f64::NEG_INFINITY {
                x
            } else {
                solve_piece(ramps, prev_event, x)
            };
        }
        slope += jump;
        v = v_e;
        x_prev = x;
        prev_event = x;
    }
    prev_event
}

/// lo < hi with D(lo) < 0 ≤ D(hi) (either end possibly infinite), and (D, slope) at lo.
struct Bracket {
    lo: f64,
    hi: f64,
    at_lo: (f64, f64),
}

/// The bracket of at most a few Newton steps on D started at the least-squares point `x`.
fn newton_bracket(ramps: &[Ramp], mut x: f64) -> Bracket {
    let mut bracket = Bracket {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
        // D tends to −Σ cap, with slope 0, at −∞.
        at_lo: (-ramps.iter().map(|r| r.cap).sum::<f64>(), 0.0),
    };
    for _ in 0..NEWTON_STEPS {
        if !x.is_finite() {
            break;
        }
        let (v, slope) = derivative_and_slope(ramps, x);
        if v >= 0.0 {
            bracket.hi = x;
        } else {
            bracket.lo = x;
            bracket.at_lo = (v, slope);
        }
        let next = x - v / slope;
        if v == 0.0 || !(bracket.lo < next && next < bracket.hi) {
            break;
        }
        x = next;
    }
    bracket
}

/// Newton steps of `newton_bracket`: on a piecewise-linear D a step from the right piece lands
/// on the zero, so a few steps leave few events between the bracket's ends.
const NEWTON_STEPS: usize = 4;

/// D(x), and the slope of D just right of x (Σ a over the rows unsaturated there). Branch-free
/// (adding 0 leaves a sum as it is): whether a row saturates is a coin flip near the zero, and
/// mispredicted branches cost more than the arithmetic of these passes.
fn derivative_and_slope(ramps: &[Ramp], x: f64) -> (f64, f64) {
    let (mut v, mut slope) = (0.0, 0.0);
    for r in ramps {
        v += (r.a * (x - r.t)).max(-r.cap).min(r.cap);
        let unsaturated = r.t - r.half <= x && x < r.t + r.half;
        slope += if unsaturated { r.a } else { 0.0 };
    }
    (v, slope)
}

/// The zero on the piece [lo, hi], where the set of unsaturated rows is fixed. Branch-free, as
/// `derivative_and_slope`.
fn solve_piece(ramps: &[Ramp], lo: f64, hi: f64) -> f64 {
    let mid = lo + 0.5 * (hi - lo);
    let (mut a, mut at, mut c) = (0.0, 0.0, 0.0);
    for r in ramps {
        let below = mid <= r.t - r.half;
        let above = mid >= r.t + r.half;
        c += if below {
            -r.cap
        } else if above {
            r.cap
        } else {
            0.0
        };
        let unsaturated = !(below || above);
        a += if unsaturated { r.a } else { 0.0 };
        at += if unsaturated { r.a * r.t } else { 0.0 };
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
        let (mut a, mut at) = (0.0, 0.0);
        terms.for_each(|y, f, b, w| {
            if w > 0.0 && b != 0.0 {
                let ramp = Ramp {
                    t: (y - f) / b,
                    half: self.delta / b.abs(),
                    a: w * b * b,
                    cap: w * b.abs() * self.delta,
                };
                a += ramp.a;
                at += ramp.a * ramp.t;
                ramps.push(ramp);
            }
        });
        if ramps.is_empty() {
            return 0.0;
        }
        let least_squares = at / a;
        let left = first_root(&ramps, least_squares);
        // Where some row is unsaturated just right of the smallest zero, D rises there and the
        // zero is unique; otherwise the zero set may be an interval, whose midpoint is taken.
        if derivative_and_slope(&ramps, left).1 > 0.0 {
            return left;
        }
        for r in ramps.iter_mut() {
            r.t = -r.t;
        }
        let right = -first_root(&ramps, -least_squares);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest zero by the bracketed sweep, from the least-squares point.
    fn root(ramps: &[Ramp]) -> f64 {
        let (a, at) = ramps
            .iter()
            .fold((0.0, 0.0), |(a, at), r| (a + r.a, at + r.a * r.t));
        first_root(ramps, at / a)
    }

    /// The former sweep over all sorted events, as the reference for the bracketed one.
    fn full_sweep_root(ramps: &[Ramp]) -> f64 {
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

    #[test]
    fn a_flat_zero_set_gives_its_midpoint_and_a_rising_one_its_root() {
        let huber = Huber::new(1.0);
        let minimize = |y: &[f64], w: &[f64]| huber.minimize(Terms::Constant { y, w });
        // Both rows saturated, in balance, from −9 to 19.
        assert_eq!(minimize(&[-10.0, 20.0], &[1.0, 1.0]), 5.0);
        // The third row is unsaturated at the zero, 0.5 (D = (γ − 0.5) there).
        assert_eq!(minimize(&[-10.0, 0.5, 20.0], &[1.0, 1.0, 1.0]), 0.5);
        // Two saturated rows on each side: the zero set is again [−9, 19].
        assert_eq!(minimize(&[-10.0, -30.0, 20.0, 40.0], &[1.0; 4]), 5.0);
    }

    #[test]
    fn bracketed_sweep_equals_the_full_sweep() {
        // Centres on a small grid (ties, and rows saturated on both sides of the zero, so that
        // flat zero sets occur), widths from tiny to wide, weights in quarters: the two sweeps
        // must find the same piece and so the same root.
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = move |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for case in 0..5000 {
            let n = 1 + next(40) as usize;
            let ramps: Vec<Ramp> = (0..n)
                .map(|_| {
                    let half = [0.01, 0.5, 1.0, 3.0, 100.0][next(5) as usize];
                    let a = 0.25 * (1 + next(8)) as f64;
                    Ramp {
                        t: next(21) as f64 * 0.5 - 5.0,
                        half,
                        a,
                        cap: a * half,
                    }
                })
                .collect();
            let (ours, reference) = (root(&ramps), full_sweep_root(&ramps));
            assert!(
                ours == reference || (ours - reference).abs() <= 1e-12 * (1.0 + reference.abs()),
                "case {case}: {ours} against {reference} for {ramps:?}"
            );
        }
    }
}
