//! Shared one-dimensional solvers for the losses.
//!
//! * [`piecewise_linear_argmin`]: exact minimiser of a convex piecewise-linear function
//!   φ(γ) = Σ_i φ_i(γ) given by its slope below every kink and the slope increase (`jump`) at
//!   each kink. A weighted selection (quickselect on the kinks) makes it O(n); the weighted
//!   τ-quantile is the special case of the pinball loss. It returns the whole argmin interval;
//!   [`pick`] chooses one point ([`piecewise_linear_point`] does both, and answers 0 when there
//!   is no kink).
//! * [`minimize_convex`]: argmin of a smooth convex φ by a bracket search from γ = 0 followed by
//!   safeguarded Newton (bisection whenever the Newton point leaves the bracket). When φ keeps
//!   decreasing (the infimum is at ±∞, e.g. a one-class leaf under the logistic loss without
//!   ridge), the search stops where the slope has fallen below `f64::EPSILON` times its value at
//!   0, so the answer is always finite.
//! * [`bracketed_newton`]: root of an increasing function inside a known bracket.
//! * [`lambert_w_exp`]: W(eˣ) (principal Lambert W) without overflow, for the proximal operators
//!   of the exponential and softmax losses.

use super::vectorized::exp_nonpositive;
use std::cmp::Ordering;

/// −ln(ε_machine) ≈ 36.04: where a minimiser is at infinity (one class only), scores are capped so
/// that the loss has fallen to ε_machine times its value at 0; beyond it nothing changes in f64.
pub const NEGLIGIBLE_LN: f64 = 36.0;

/// Relative tolerance and iteration cap of every line search (docs/algorithms.md §3).
pub const LINE_SEARCH_TOL: f64 = 1e-10;
/// Cap on a line search's Newton steps.
pub const LINE_SEARCH_MAX_ITER: usize = 20;
/// Relative tolerance and iteration cap of the proximal operators solved numerically.
pub const PROX_TOL: f64 = 1e-12;
/// Cap on a numeric prox's Newton steps.
pub const PROX_MAX_ITER: usize = 50;

/// A kink of a convex piecewise-linear function: at `at` its slope increases by `jump` ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kink {
    /// Where the slope changes.
    pub at: f64,
    /// By how much it increases there (≥ 0).
    pub jump: f64,
}

/// The argmin interval `[lo, hi]` (ends possibly infinite) of the convex piecewise-linear function
/// whose slope is `slope_left` below every kink and increases by `kink.jump` at `kink.at`.
/// Reorders `kinks`. Slopes within 1e-12 (relative to the total variation of the slope) of zero
/// count as zero, so that flat pieces are recognised despite rounding.
///
/// `lo` is the first kink where the slope reaches −tol, `hi` the first where it exceeds +tol:
/// two weighted quantiles of the kinks, found by selection in O(n) rather than by sorting all
/// kinks (the sort made the leaf line searches of the piecewise-linear losses a third of an
/// iteration at 1M rows).
pub fn piecewise_linear_argmin(slope_left: f64, kinks: &mut [Kink]) -> (f64, f64) {
    let scale: f64 = slope_left.abs() + kinks.iter().map(|k| k.jump).sum::<f64>();
    let tol = 1e-12 * scale;
    if slope_left > tol {
        // φ increases everywhere: no minimiser; the infimum is at −∞.
        return (f64::NEG_INFINITY, f64::NEG_INFINITY);
    }
    let reaches_zero = |slope: f64| slope >= -tol;
    let rises = |slope: f64| slope > tol;
    let lo_known = reaches_zero(slope_left);
    let (lo, hi) = first_kinks_where(
        kinks,
        slope_left,
        (!lo_known).then_some(&reaches_zero),
        Some(&rises),
    );
    let lo = if lo_known {
        f64::NEG_INFINITY
    } else if let Some(lo) = lo {
        lo
    } else {
        // φ decreases everywhere: the infimum is at +∞.
        return (f64::INFINITY, f64::INFINITY);
    };
    (lo, hi.unwrap_or(f64::INFINITY))
}

/// A monotone condition on the slope: once true, true for every larger slope.
type Condition<'a> = &'a dyn Fn(f64) -> bool;

/// With slope(x) = `slope_below` + Σ jumps of the `kinks` at or before x, the first kink position
/// where each condition holds (`None`: not there, or not asked); neither may hold at
/// `slope_below`. Weighted quickselect: split the kinks at their median and search each answer
/// only on its side, so every level halves the slice (O(n) in all); while both answers lie on
/// one side, one pass serves both.
fn first_kinks_where(
    kinks: &mut [Kink],
    slope_below: f64,
    first: Option<Condition<'_>>,
    second: Option<Condition<'_>>,
) -> (Option<f64>, Option<f64>) {
    if kinks.is_empty() || (first.is_none() && second.is_none()) {
        return (None, None);
    }
    // Kinks at the median's position may lie on both sides: harmless, since an answer at that
    // position is found from either side (the slopes beside it count all kinks before it).
    let mid = kinks.len() / 2;
    let (less, median, greater) = kinks.select_nth_unstable_by(mid, |a, b| a.at.total_cmp(&b.at));
    let pivot = median.at;
    let slope_less = slope_below + less.iter().map(|k| k.jump).sum::<f64>();
    let slope_through = slope_less + median.jump;
    let side = |condition: Option<Condition<'_>>| {
        condition.map(|holds| {
            if holds(slope_less) {
                Ordering::Less
            } else if holds(slope_through) {
                Ordering::Equal
            } else {
                Ordering::Greater
            }
        })
    };
    let (first_side, second_side) = (side(first), side(second));
    let on = |side: Option<Ordering>, condition, wanted| {
        (side == Some(wanted)).then_some(condition).flatten()
    };
    let below = first_kinks_where(
        less,
        slope_below,
        on(first_side, first, Ordering::Less),
        on(second_side, second, Ordering::Less),
    );
    let above = first_kinks_where(
        greater,
        slope_through,
        on(first_side, first, Ordering::Greater),
        on(second_side, second, Ordering::Greater),
    );
    let answer = |side, below, above| match side {
        Some(Ordering::Less) => below,
        Some(Ordering::Equal) => Some(pivot),
        Some(Ordering::Greater) => above,
        None => None,
    };
    (
        answer(first_side, below.0, above.0),
        answer(second_side, below.1, above.1),
    )
}

/// One point of an argmin interval: the midpoint when both ends are finite (the classical median
/// convention), otherwise the point of the interval closest to 0 (0 when the interval is the
/// whole line, i.e. the function is constant). Never NaN; ±∞ only if an end is ±∞ on both sides.
pub fn pick((lo, hi): (f64, f64)) -> f64 {
    if lo.is_finite() && hi.is_finite() {
        lo + 0.5 * (hi - lo)
    } else if lo == hi {
        lo
    } else {
        0.0f64.clamp(lo, hi)
    }
}

/// [`pick`] of [`piecewise_linear_argmin`], and 0 when there is no kink (a zero direction or no
/// weight: φ is constant).
pub fn piecewise_linear_point(slope_left: f64, kinks: &mut [Kink]) -> f64 {
    if kinks.is_empty() {
        return 0.0;
    }
    pick(piecewise_linear_argmin(slope_left, kinks))
}

/// The first and second derivatives of a convex function at a point, both multiplied by the same
/// positive factor `exp(-ln_scale)`: true φ' = `d1 · exp(ln_scale)`. Losses whose derivatives can
/// overflow (exponential) factor out their largest exponential; the others set `ln_scale = 0`.
/// `noise` (same scaling) is the sum of the magnitudes of the terms of φ' where they may cancel;
/// |φ'| below 1e-13 × `noise` is rounding, and counts as φ' = 0 (0 when unknown).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slope {
    /// φ', scaled.
    pub d1: f64,
    /// φ'', scaled.
    pub d2: f64,
    /// The log of the factor taken out of both.
    pub ln_scale: f64,
    /// The summed magnitude of the terms of φ' that may cancel, scaled (0: unknown).
    pub noise: f64,
}

impl Slope {
    /// Unscaled derivatives, with no noise estimate.
    pub fn new(d1: f64, d2: f64) -> Self {
        Slope {
            d1,
            d2,
            ln_scale: 0.0,
            noise: 0.0,
        }
    }
    fn is_zero(&self) -> bool {
        self.d1.abs() <= 1e-13 * self.noise
    }
    /// ln |φ'|, comparable between points.
    fn ln_abs_d1(&self) -> f64 {
        self.d1.abs().ln() + self.ln_scale
    }
}

/// argmin_γ φ(γ) for a smooth convex φ given through `deriv(γ)`. Returns 0 when φ'(0) = 0 (a zero
/// direction). Otherwise brackets the root of φ' by expanding from 0 in the descent direction
/// (the Newton step, doubled while φ' keeps its sign; at most 64 expansions), then runs
/// [`bracketed_newton`] with `tol` relative and at most `max_iter` iterations. If φ' keeps its sign
/// until it has shrunk to ε_machine · |φ'(0)| (or to rounding noise), the infimum is at infinity
/// and that point is returned (finite; φ is within rounding of its infimum there).
pub fn minimize_convex<F: FnMut(f64) -> Slope>(mut deriv: F, tol: f64, max_iter: usize) -> f64 {
    let s0 = deriv(0.0);
    if s0.d1 == 0.0 || s0.is_zero() || !s0.d1.is_finite() {
        return 0.0;
    }
    let dir = if s0.d1 < 0.0 { 1.0 } else { -1.0 };
    // ψ(t) = φ(dir·t), ψ'(0) < 0; g(t) = ψ'(t).
    let mut eval = |t: f64| {
        let s = deriv(dir * t);
        Slope {
            d1: dir * s.d1,
            ..s
        }
    };
    let g0 = Slope {
        d1: dir * s0.d1,
        ..s0
    };
    let ln_negligible = g0.ln_abs_d1() + f64::EPSILON.ln();
    let newton = |s: &Slope| -s.d1 / s.d2;
    let mut t = match newton(&g0) {
        x if x.is_finite() && x > 0.0 => x,
        _ => 1.0,
    };
    let (mut lo, mut s_lo) = (0.0, g0);
    let mut bracket = None;
    for _ in 0..64 {
        let s = eval(t);
        if s.d1 >= 0.0 || s.d1.is_nan() {
            bracket = Some((t, s));
            break;
        }
        if s.ln_abs_d1() <= ln_negligible || s.is_zero() {
            return dir * t;
        }
        lo = t;
        s_lo = s;
        let nt = t + newton(&s);
        t = if nt.is_finite() && nt > 2.0 * t {
            nt
        } else {
            2.0 * t
        };
        if !t.is_finite() {
            return dir * lo;
        }
    }
    let Some((hi, s_hi)) = bracket else {
        return dir * lo;
    };
    if s_hi.d1 == 0.0 {
        return dir * hi;
    }
    // Start from the end with the smaller |φ'|.
    let (x0, s_x0) = if s_hi.d1.is_finite() && s_hi.ln_abs_d1() < s_lo.ln_abs_d1() {
        (hi, s_hi)
    } else {
        (lo, s_lo)
    };
    let eval_g = |x| {
        let s = eval(x);
        (s.d1, s.d2)
    };
    dir * bracketed_newton(
        eval_g,
        lo,
        hi,
        x0,
        (s_x0.d1, s_x0.d2),
        tol,
        f64::MIN_POSITIVE,
        max_iter,
    )
}

/// Root of an increasing function g on `[lo, hi]` with g(lo) ≤ 0 ≤ g(hi), by Newton steps from
/// `x0` (whose `(g, g')` is `gx0`) that are replaced by bisection whenever they leave the current
/// bracket, are not finite or do not shrink (rtsafe). `eval` may return g and g' multiplied by a common positive factor.
/// Stops when a step is below `tol · |x|` (or the bracket is that narrow), when g = 0, or after
/// `max_iter` iterations. `floor` bounds the scale |x| from below (1 gives an absolute
/// tolerance near 0, `f64::MIN_POSITIVE` a purely relative one).
pub fn bracketed_newton<F: FnMut(f64) -> (f64, f64)>(
    mut eval: F,
    mut lo: f64,
    mut hi: f64,
    x0: f64,
    gx0: (f64, f64),
    tol: f64,
    floor: f64,
    max_iter: usize,
) -> f64 {
    let (mut x, (mut g, mut dg)) = (x0, gx0);
    // rtsafe (Numerical Recipes §9.4): a Newton step is taken only if it stays inside the bracket
    // and is at most half the step before last; otherwise bisect. This rules out the two-cycles
    // Newton falls into on S-shaped functions (e.g. u − z + λσ(u)).
    let (mut step_old, mut step_last) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..max_iter {
        if g == 0.0 {
            return x;
        }
        let newton = x - g / dg;
        // A few ulps of slack: a root on an analytic bracket end is often missed by rounding.
        let slack = 4.0 * f64::EPSILON * lo.abs().max(hi.abs());
        let inside = newton >= lo - slack && newton <= hi + slack;
        let ok = inside && (newton - x).abs() <= 0.5 * step_old;
        let next = if ok { newton } else { lo + 0.5 * (hi - lo) };
        let step = (next - x).abs();
        (step_old, step_last) = (step_last, step);
        x = next;
        (g, dg) = eval(x);
        if g < 0.0 {
            lo = x;
        } else if g > 0.0 {
            hi = x;
        } else if g.is_nan() {
            // Cannot happen with the stable forms; keep the bracket midpoint as the answer.
            return lo + 0.5 * (hi - lo);
        }
        let scale = x.abs().max(floor);
        if step <= tol * scale || hi - lo <= tol * scale {
            return x;
        }
    }
    x
}

/// W(eˣ), the principal branch of Lambert's W at eˣ, i.e. the v > 0 with v + ln v = x, computed
/// without overflow for any finite x by Newton on t + eᵗ = x (t = ln v), a convex increasing
/// function; started right of the root, the iterates decrease monotonically to it.
pub fn lambert_w_exp(x: f64) -> f64 {
    // Bracket: for x ≤ 1 the root lies in [x − 1, x]; for x > 1 in [ln(x − ln x), ln x].
    let (lo, hi) = if x <= 1.0 {
        (x - 1.0, x)
    } else {
        ((x - x.ln()).ln(), x.ln())
    };
    let eval = |t: f64| {
        let e = t.exp();
        (t + e - x, 1.0 + e)
    };
    let t = bracketed_newton(eval, lo, hi, hi, eval(hi), 1e-15, 1.0, 100);
    t.exp()
}

/// ln Σ exp(a_i) over the finite entries, −∞ for an empty or all −∞ input.
pub fn log_sum_exp<I: Iterator<Item = f64> + Clone>(a: I) -> f64 {
    let m = a.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + a.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// softplus(x) = ln(1 + eˣ), overflow-safe.
#[inline]
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + exp_nonpositive(-x.abs()).ln_1p()
}

/// The logistic sigmoid 1/(1 + e^{−x}), both branches stable.
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    // One division: e/(1 + e) as e · 1/(1 + e).
    let e = exp_nonpositive(-x.abs());
    let r = 1.0 / (1.0 + e);
    if x >= 0.0 {
        r
    } else {
        e * r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_median_by_kinks() {
        // |γ − 1| + 2|γ − 3| + |γ − 10|: slope −4 left, jumps 2, 4, 2 → argmin {3}.
        let mut k = vec![
            Kink {
                at: 10.0,
                jump: 2.0,
            },
            Kink { at: 1.0, jump: 2.0 },
            Kink { at: 3.0, jump: 4.0 },
        ];
        assert_eq!(piecewise_linear_argmin(-4.0, &mut k), (3.0, 3.0));
        let mut k = vec![Kink { at: 1.0, jump: 2.0 }, Kink { at: 2.0, jump: 2.0 }];
        assert_eq!(piecewise_linear_argmin(-2.0, &mut k), (1.0, 2.0));
        assert_eq!(pick((1.0, 2.0)), 1.5);
        assert_eq!(pick((-3.0, f64::INFINITY)), 0.0);
        assert_eq!(pick((2.0, f64::INFINITY)), 2.0);
    }

    /// The former O(n log n) sweep over the sorted kinks, as the reference for the selection.
    fn sorted_argmin(slope_left: f64, kinks: &mut [Kink]) -> (f64, f64) {
        kinks.sort_unstable_by(|a, b| a.at.total_cmp(&b.at));
        let scale: f64 = slope_left.abs() + kinks.iter().map(|k| k.jump).sum::<f64>();
        let tol = 1e-12 * scale;
        let mut slope = slope_left;
        let mut lo = if slope >= -tol {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
        if slope > tol {
            return (f64::NEG_INFINITY, f64::NEG_INFINITY);
        }
        for k in kinks.iter() {
            slope += k.jump;
            if lo.is_nan() && slope >= -tol {
                lo = k.at;
            }
            if slope > tol {
                return (lo, k.at);
            }
        }
        if lo.is_nan() {
            return (f64::INFINITY, f64::INFINITY);
        }
        (lo, f64::INFINITY)
    }

    #[test]
    fn selection_equals_the_sorted_sweep() {
        // Positions from a small grid (many ties, ±0.0 among them) and jumps in multiples of 1/4
        // with many zeros: every partial sum is exact in any order, so both methods must agree
        // bit for bit, flat argmin intervals (zero slope between kinks) included.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        let mut flat = 0;
        for case in 0..3000 {
            let n = 1 + next(if case % 10 == 0 { 300 } else { 25 }) as usize;
            let spread = 1 + next(12);
            let mut kinks: Vec<Kink> = (0..n)
                .map(|_| {
                    let at = match next(8) {
                        0 => -0.0,
                        _ => next(2 * spread + 1) as f64 - spread as f64,
                    };
                    let jump = if next(3) == 0 {
                        0.0
                    } else {
                        next(9) as f64 / 4.0
                    };
                    Kink { at, jump }
                })
                .collect();
            let total: f64 = kinks.iter().map(|k| k.jump).sum();
            // Slopes at −∞ from beyond −total (φ decreasing everywhere) to positive (increasing).
            let slope_left = -(next(4 * n as u64 + 2) as f64 / 4.0).min(total + 1.0)
                + if next(20) == 0 { 0.5 } else { 0.0 };
            let mut reference = kinks.clone();
            let ours = piecewise_linear_argmin(slope_left, &mut kinks);
            let expected = sorted_argmin(slope_left, &mut reference);
            assert_eq!(
                (ours.0.to_bits(), ours.1.to_bits()),
                (expected.0.to_bits(), expected.1.to_bits()),
                "case {case}: slope_left {slope_left}, ours {ours:?}, sorted {expected:?}"
            );
            flat += usize::from(ours.0 < ours.1 && ours.0.is_finite() && ours.1.is_finite());
        }
        assert!(
            flat > 100,
            "too few flat argmin intervals exercised: {flat}"
        );
    }

    #[test]
    fn lambert() {
        for &x in &[-800.0, -30.0, -1.0, 0.0, 0.5, 1.0, 2.0, 50.0, 1e6] {
            let w = lambert_w_exp(x);
            if x < -700.0 {
                assert!((0.0..1e-300).contains(&w)); // e^x underflows, W(e^x) ≈ e^x
                continue;
            }
            assert!(
                ((w.ln() + w) - x).abs() <= 1e-12 * (1.0 + x.abs()),
                "x={x} w={w}"
            );
        }
    }

    #[test]
    fn convex_newton() {
        // φ(γ) = e^γ + e^{-2γ}: φ' = e^γ − 2e^{−2γ} = 0 at γ = ln 2 / 3.
        let g = minimize_convex(
            |x| {
                Slope::new(
                    x.exp() - 2.0 * (-2.0 * x).exp(),
                    x.exp() + 4.0 * (-2.0 * x).exp(),
                )
            },
            1e-12,
            50,
        );
        assert!((g - 2f64.ln() / 3.0).abs() < 1e-12);
        // φ(γ) = e^{−γ}: infimum at +∞, finite answer near −ln ε.
        let g = minimize_convex(|x| Slope::new(-(-x).exp(), (-x).exp()), 1e-10, 20);
        assert!(g.is_finite() && g > 30.0 && g < 100.0, "{g}");
    }
}
