//! Logistic loss with ridge d ≥ 0 (Randomized Gradient Boosting Machine, §4):
//! ℓ(y, f) = ln(1 + e^{−y f}) + d f²/2, labels ±1, natural log (Proximal boosting, App. B.5, uses
//! log₂, which only rescales the loss; same minimisers).
//!
//! * ∂ℓ/∂f = −y σ(−y f) + d f, ℓ'' = σ(f)(1 − σ(f)) + d for y = ±1 (σ the sigmoid);
//!   σ-smooth with σ = 1/4 + d, μ = d when d > 0 (RGBM paper, §4). `response` = σ(f).
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
use super::vectorized::{exp_nonpositive, with_avx2};
use super::{ScalarLoss, Terms};

/// The logistic loss, as `LossSpec::Logistic` builds it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logistic {
    /// d ≥ 0 of the ridge term d f²/2, which keeps separable data's scores finite.
    pub ridge: f64,
}

impl Logistic {
    /// The loss with ridge `ridge`.
    pub fn new(ridge: f64) -> Self {
        Logistic { ridge }
    }
    /// (e, max(−y f, 0), ∂ℓ/∂f, ∂²ℓ/∂f²) at one point, with e = exp(−|y f|), which softplus,
    /// the sigmoid and the curvature share: ℓ = max(−y f, 0) + ln(1 + e) + d f²/2. Each
    /// expression is the one of `value`, `derivative`, `second_derivative` with that e
    /// substituted, so the results are identical.
    #[inline(always)]
    fn terms(&self, y: f64, f: f64) -> (f64, f64, f64, f64) {
        let x = -y * f;
        let e = exp_nonpositive(-x.abs());
        let r = 1.0 / (1.0 + e);
        let sigmoid_x = if x >= 0.0 { r } else { e * r };
        let derivative = -y * sigmoid_x + self.ridge * f;
        // sigmoid(−|y f|) = e/(1 + e), also when y f = 0 (e = 1: both branches give 1/2).
        let s = e * r;
        let curvature = y * y * s * (1.0 - s) + self.ridge;
        (e, x.max(0.0), derivative, curvature)
    }
    /// Σ ℓ(y_i, f_i) over unweighted rows, writing −∂ℓ/∂f and ∂²ℓ/∂f² of `terms` into
    /// `neg_gradient` and `hessian` unless they are empty (`DERIVATIVES`: whether either is
    /// wanted). Σ ln(1 + e_i) is taken as the logarithm of products of factors in [1, 2]: over
    /// runs of LOG_RUN rows, in LANES interleaved partial products (at most 2^16 each, their
    /// product at most 2^64, far from overflow), one `ln` per run instead of a `ln_1p` per row,
    /// which was the costliest step of the pass. Rounding 1 + e_i loses at most 1.1e-16 of each
    /// term.
    #[inline(always)]
    fn sum_unweighted_portable<const DERIVATIVES: bool>(
        &self,
        y: &[f64],
        f: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        const LOG_RUN: usize = 64;
        const LANES: usize = 4;
        // Per-row results of a run, so that the row loop has no sum to carry and vectorizes;
        // derivatives nobody asked for go to scratch arrays.
        let mut one_plus_e = [0.0; LOG_RUN];
        let mut linear = [0.0; LOG_RUN];
        let mut unused_derivatives = [0.0; LOG_RUN];
        let mut unused_curvatures = [0.0; LOG_RUN];
        let mut linear_sums = [0.0; LANES];
        let mut log_sum = 0.0;
        for start in (0..y.len()).step_by(LOG_RUN) {
            let end = (start + LOG_RUN).min(y.len());
            let n = end - start;
            let neg_derivatives = if neg_gradient.is_empty() {
                &mut unused_derivatives[..n]
            } else {
                &mut neg_gradient[start..end]
            };
            let curvatures = if hessian.is_empty() {
                &mut unused_curvatures[..n]
            } else {
                &mut hessian[start..end]
            };
            let rows = y[start..end].iter().zip(&f[start..end]);
            for (i, (&y, &f)) in rows.enumerate() {
                let (e, x_plus, d, c) = self.terms(y, f);
                one_plus_e[i] = 1.0 + e;
                linear[i] = x_plus + self.ridge_term(f);
                if DERIVATIVES {
                    neg_derivatives[i] = -d;
                    curvatures[i] = c;
                }
            }
            let mut products = [1.0; LANES];
            for (i, (factor, linear)) in one_plus_e[..n].iter().zip(&linear[..n]).enumerate() {
                products[i % LANES] *= factor;
                linear_sums[i % LANES] += linear;
            }
            log_sum += (products[0] * products[1] * (products[2] * products[3])).ln();
        }
        (linear_sums[0] + linear_sums[1]) + (linear_sums[2] + linear_sums[3]) + log_sum
    }
    /// Where the prox of z starts: the bracket [lo, hi] of the root of h(u) = u − z + λℓ'(u)
    /// (see the header), and the Newton step from z (where h(z) = λℓ'(z)), the first iterate a
    /// start at z would take, without evaluating h at z once more. When the bracket is a point
    /// (hi ≤ lo), the prox is lo. Branch-free, for the lanes of `prox_into`.
    #[inline(always)]
    fn prox_start(&self, y: f64, z: f64, lambda: f64) -> ProxStart {
        let (_, _, derivative_z, curvature_z) = self.terms(y, z);
        let (mut lo, mut hi) = (z + lambda * y.min(0.0), z + lambda * y.max(0.0));
        if self.ridge != 0.0 {
            let shrink = 1.0 + lambda * self.ridge;
            (lo, hi) = (lo / shrink, hi / shrink);
        }
        let other = z - lambda * derivative_z;
        if other.is_finite() {
            lo = lo.max(z.min(other));
            hi = hi.min(z.max(other));
        }
        let newton = z - lambda * derivative_z / (1.0 + lambda * curvature_z);
        let x0 = if hi <= lo { lo } else { newton.max(lo).min(hi) };
        ProxStart { x0, lo, hi }
    }
    /// (h(u), h'(u)) for h(u) = u − z + λℓ'(y, u), from one exponential and one division (of
    /// `terms`): the prox runs for every row at every iteration of the proximal methods.
    #[inline(always)]
    fn prox_residual(&self, y: f64, z: f64, lambda: f64, u: f64) -> (f64, f64) {
        let (_, _, derivative, curvature) = self.terms(y, u);
        (u - z + lambda * derivative, 1.0 + lambda * curvature)
    }
    /// True when λσ ≤ 1, where plain Newton needs no bracketing (`plain_newton_step`).
    fn plain_newton_converges(&self, lambda: f64) -> bool {
        lambda * self.sigma().expect("the logistic loss is smooth") <= 1.0
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

impl ScalarLoss for Logistic {
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
    /// `sum_unweighted_portable`, compiled for AVX2 when the CPU has it: the per-row loop then
    /// runs four rows per instruction, with the same IEEE operations, so the same results.
    /// Without derivatives the pass is compiled without them (their division is a third of the
    /// row loop): the same sum.
    fn sum_value_and_derivatives(
        &self,
        y: &[f64],
        f: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        with_avx2(
            #[inline(always)]
            || {
                if neg_gradient.is_empty() && hessian.is_empty() {
                    self.sum_unweighted_portable::<false>(y, f, neg_gradient, hessian)
                } else {
                    self.sum_unweighted_portable::<true>(y, f, neg_gradient, hessian)
                }
            },
        )
    }
    fn derivatives_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        with_avx2(
            #[inline(always)]
            || {
                for i in 0..y.len() {
                    out[i] = self.derivative(y[i], f[i]);
                }
            },
        )
    }
    fn second_derivatives_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        with_avx2(
            #[inline(always)]
            || {
                for i in 0..y.len() {
                    out[i] = self.curvature(y[i], f[i]);
                }
            },
        )
    }
    fn sum_values(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        if w.is_empty() {
            // The sum of the fused pass, without its derivatives.
            self.sum_value_and_derivatives(y, f, &mut [], &mut [])
        } else {
            (0..y.len()).map(|i| w[i] * self.value(y[i], f[i])).sum()
        }
    }
    fn prox(&self, y: f64, z: f64, lambda: f64) -> f64 {
        let ProxStart { x0, lo, hi } = self.prox_start(y, z, lambda);
        if hi <= lo {
            return x0;
        }
        let h = |u: f64| self.prox_residual(y, z, lambda, u);
        if self.plain_newton_converges(lambda) {
            let mut x = x0;
            for _ in 0..solve::PROX_MAX_ITER {
                let (next, converged) = plain_newton_step(h(x), x, lo, hi, lambda);
                x = next;
                if converged {
                    break;
                }
            }
            return x;
        }
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
    /// The proxes of `prox`, for a batch of rows. When plain Newton applies, `PROX_LANES` rows
    /// at a time take their Newton iterations in lock step, compiled for AVX2 when the CPU has
    /// it: each iteration runs on every lane, and a lane keeps its iterate once it has
    /// converged, so every row takes exactly the iterations of `prox` (the same results), and
    /// the exponentials and divisions of the lanes run four per instruction. 1M rows, one
    /// thread: 51 ms when each row iterated on its own with libm's `exp`, 21 ms in lanes (a
    /// group of 8 rows runs 2.8 iterations where a row needs 2.2 on average).
    fn prox_into(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        if !self.plain_newton_converges(lambda) {
            for i in 0..y.len() {
                out[i] = self.prox(y[i], z[i], lambda);
            }
            return;
        }
        with_avx2(
            #[inline(always)]
            || {
                for ((y, z), out) in y
                    .chunks(PROX_LANES)
                    .zip(z.chunks(PROX_LANES))
                    .zip(out.chunks_mut(PROX_LANES))
                {
                    // A short last chunk repeats its last row in the lanes it does not fill.
                    let lane = |v: &[f64], k: usize| v[k.min(v.len() - 1)];
                    let y: [f64; PROX_LANES] = std::array::from_fn(|k| lane(y, k));
                    let z: [f64; PROX_LANES] = std::array::from_fn(|k| lane(z, k));
                    let mut x = [0.0; PROX_LANES];
                    let mut lo = [0.0; PROX_LANES];
                    let mut hi = [0.0; PROX_LANES];
                    let mut searching = [false; PROX_LANES];
                    for k in 0..PROX_LANES {
                        let start = self.prox_start(y[k], z[k], lambda);
                        (x[k], lo[k], hi[k]) = (start.x0, start.lo, start.hi);
                        searching[k] = start.lo < start.hi;
                    }
                    for _ in 0..solve::PROX_MAX_ITER {
                        if !searching.contains(&true) {
                            break;
                        }
                        for k in 0..PROX_LANES {
                            let residual = self.prox_residual(y[k], z[k], lambda, x[k]);
                            let (next, converged) =
                                plain_newton_step(residual, x[k], lo[k], hi[k], lambda);
                            x[k] = if searching[k] { next } else { x[k] };
                            searching[k] &= !converged;
                        }
                    }
                    out.copy_from_slice(&x[..out.len()]);
                }
            },
        )
    }
    fn minimize(&self, terms: Terms<'_>) -> f64 {
        if let (Terms::Constant { y, w }, false) = (terms, self.ridge > 0.0) {
            return self.log_odds(y, w);
        }
        if let Terms::Leaf { y, f, w, rows } = terms {
            if let Some(leaf) = LeafExponentials::new(y, f, w, rows) {
                let deriv = |c: f64| leaf.slope(self.ridge, c);
                return leaf_newton(deriv).unwrap_or_else(|| {
                    solve::minimize_convex(
                        deriv,
                        solve::LINE_SEARCH_TOL,
                        solve::LINE_SEARCH_MAX_ITER,
                    )
                });
            }
        }
        let deriv = |g: f64| {
            let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
            terms.for_each(|y, f, b, w| {
                if w != 0.0 && b != 0.0 {
                    let u = f + g * b;
                    // One exponential for ℓ' and ℓ'' (bit for bit `derivative`, `curvature`).
                    let (_, _, derivative, curvature) = self.terms(y, u);
                    let t = w * b * derivative;
                    d1 += t;
                    d2 += w * b * b * curvature;
                    noise += t.abs();
                }
            });
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

/// Where a prox search starts (`Logistic::prox_start`).
struct ProxStart {
    x0: f64,
    lo: f64,
    hi: f64,
}

/// Rows whose prox iterations `Logistic::prox_into` runs in lock step.
const PROX_LANES: usize = 8;

/// One Newton iteration for the root of h(u) = u − z + λℓ'(u) in [lo, hi], from x with
/// `(g, dg)` = (h(x), h'(x)), when λσ ≤ 1 (σ: the bound on ℓ''): (next iterate, converged).
/// Then h' = 1 + λℓ'' lies in [1, 2], so a Newton step multiplies the error by
/// 1 − h'(ξ)/h'(x) ∈ (−1, 1): it always shrinks, and no bracketing is needed. Near the root a
/// step squares the error, times at most C = λ max|ℓ'''| / 2 < 0.05 λ: once C·step² is below the
/// tolerance, the step just taken has converged and needs no evaluation to confirm it (the
/// bracketed solver spends one more exponential per row on that).
/// Branch-free, for the lanes of `Logistic::prox_into`.
#[inline(always)]
fn plain_newton_step((g, dg): (f64, f64), x: f64, lo: f64, hi: f64, lambda: f64) -> (f64, bool) {
    let next = (x - g / dg).max(lo).min(hi);
    let step = (next - x).abs();
    let tol = solve::PROX_TOL * next.abs().max(f64::MIN_POSITIVE);
    let converged = g == 0.0 || step <= tol || 0.05 * lambda * step * step <= tol;
    (if g == 0.0 { x } else { next }, converged)
}

/// argmin φ for the per-leaf line search by plain Newton from 0, while the steps shrink.
/// Every row's ℓ''' = ℓ''·(1 − 2σ) is at most ℓ'' in size, so |φ'''| ≤ φ'' and φ'' changes by
/// at most a factor e^{|δ|} over a distance δ: near the minimiser, a Newton step s leaves an
/// error of s²(1 + O(s)). Once 2 s² is below the tolerance, the step just taken has converged
/// and needs no evaluation to confirm it (the bracketed search spent about twice as many passes
/// over the leaf). `None` (the caller then runs the safeguarded search) when a step is not
/// finite or not smaller than the one before (no convergence in sight: e.g. a one-class leaf,
/// whose infimum is at infinity), or when the iterations run out.
fn leaf_newton(deriv: impl Fn(f64) -> Slope) -> Option<f64> {
    let mut c = 0.0;
    let mut slope = deriv(c);
    if slope.d1 == 0.0 || !slope.d1.is_finite() {
        // A zero direction, or one the safeguarded search rejects the same way.
        return None;
    }
    let mut last_step = f64::INFINITY;
    for _ in 0..solve::LINE_SEARCH_MAX_ITER {
        let step = -slope.d1 / slope.d2;
        if step.is_nan() || step.abs() >= last_step {
            return None;
        }
        last_step = step.abs();
        c += step;
        if 2.0 * step * step <= solve::LINE_SEARCH_TOL * c.abs() || step == 0.0 {
            return Some(c);
        }
        slope = deriv(c);
        if slope.d1 == 0.0 {
            return Some(c);
        }
    }
    None
}

/// Margins beyond which the factored exponentials of [`LeafExponentials`] are not used: the
/// products e^{±350}·e^{±350} stay finite and nonzero.
const FACTORED_LIMIT: f64 = 350.0;

/// The per-leaf line search φ(c) = Σ w ℓ(y, f + c) needs, at each Newton iterate c, σ(−y(f + c))
/// for every row: with e^{y(f + c)} = e^{y f}·e^{y c} one exponential per row, computed once,
/// and two per iterate serve them all, instead of one per row and iterate (the search took
/// several times the tree fit under the proximal methods). With P = e^{y f} e^{y c}, the
/// sigmoid is 1/(1 + P) and 1 − σ = P/(1 + P): one division per row, a few ulps from `terms`.
/// The rows are kept by label, so that a pass multiplies by e^{c} or e^{−c} without choosing
/// per row: a choice `if y > 0 { e^c } else { e^{−c} }` in the loop is folded by the compiler
/// into e^{±c} computed per row, one exponential per row and iterate again.
struct LeafExponentials {
    /// (w, f, e^{f}) of the rows with y = 1 and w ≠ 0.
    positive: Vec<[f64; 3]>,
    /// (w, f, e^{−f}) of the rows with y = −1 and w ≠ 0.
    negative: Vec<[f64; 3]>,
}

impl LeafExponentials {
    /// `None` unless every label is ±1 and every margin within ±`FACTORED_LIMIT`.
    fn new(y: &[f64], f: &[f64], w: &[f64], rows: &[u32]) -> Option<LeafExponentials> {
        // Sized up front: growing them by doubling cost a fifth of the search (copies and page
        // faults of every leaf's vectors at every iteration).
        let n_positive = rows.iter().filter(|&&r| y[r as usize] > 0.0).count();
        let mut positive = Vec::with_capacity(n_positive);
        let mut negative = Vec::with_capacity(rows.len() - n_positive);
        for &r in rows {
            let r = r as usize;
            let (y, f, w) = (y[r], f[r], w[r]);
            if w == 0.0 {
                continue;
            }
            let margin = y * f;
            if margin.abs() > FACTORED_LIMIT {
                return None;
            }
            if y == 1.0 {
                positive.push([w, f, margin.exp()]);
            } else if y == -1.0 {
                negative.push([w, f, margin.exp()]);
            } else {
                return None;
            }
        }
        Some(LeafExponentials { positive, negative })
    }

    /// φ'(c) and φ''(c), with the rounding noise of φ' (see `Slope`): the positive rows' terms,
    /// then the negative ones'.
    fn slope(&self, ridge: f64, c: f64) -> Slope {
        let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
        let mut add = |w: f64, y: f64, u: f64, p: f64| {
            let s = 1.0 / (1.0 + p);
            // 1 − s = P s, except where P overflowed (then s = 0 and 1 − s = 1).
            let one_minus_s = if p.is_finite() { p * s } else { 1.0 };
            let t = w * (-y * s + ridge * u);
            d1 += t;
            d2 += w * (s * one_minus_s + ridge);
            noise += t.abs();
        };
        for (rows, y) in [(&self.positive, 1.0), (&self.negative, -1.0)] {
            if c.abs() <= FACTORED_LIMIT {
                let factor = (y * c).exp();
                for &[w, f, e] in rows {
                    add(w, y, f + c, e * factor);
                }
            } else {
                // Far beyond any useful step: the exponential itself (possibly 0 or ∞).
                for &[w, f, _] in rows {
                    let u = f + c;
                    add(w, y, u, (y * u).exp());
                }
            }
        }
        Slope {
            noise,
            ..Slope::new(d1, d2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_pass_compiled_for_avx2_equals_the_baseline_build_bit_for_bit() {
        // On a CPU with AVX2 `sum_value_and_derivatives` runs the vectorized build; models must not depend
        // on the machine's instruction set. Scores reach the clamp of the exponential and every
        // run length, with and without the ridge.
        let n = 64 * 40 + 37;
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let f: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 2001) as f64 / 1000.0 - 1.0)
            .map(|u| u * if u > 0.9 { 900.0 } else { 30.0 })
            .collect();
        for loss in [Logistic::new(0.0), Logistic::new(0.3)] {
            for len in [0, 1, 63, 64, 65, n] {
                let (y, f) = (&y[..len], &f[..len]);
                let (mut g, mut h) = (vec![0.0; len], vec![0.0; len]);
                let (mut g_base, mut h_base) = (vec![0.0; len], vec![0.0; len]);
                let total = loss.sum_value_and_derivatives(y, f, &mut g, &mut h);
                let base = loss.sum_unweighted_portable::<true>(y, f, &mut g_base, &mut h_base);
                assert_eq!(total.to_bits(), base.to_bits(), "{len} rows");
                // The loss alone, either build: the same sum.
                let alone = loss.sum_value_and_derivatives(y, f, &mut [], &mut []);
                let alone_base = loss.sum_unweighted_portable::<false>(y, f, &mut [], &mut []);
                assert_eq!(alone.to_bits(), total.to_bits(), "{len} rows");
                assert_eq!(alone_base.to_bits(), total.to_bits(), "{len} rows");
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&g), bits(&g_base));
                assert_eq!(bits(&h), bits(&h_base));
                let mut d = vec![0.0; len];
                loss.derivatives_into(y, f, &mut d);
                let d_base: Vec<f64> = (0..len).map(|i| loss.derivative(y[i], f[i])).collect();
                assert_eq!(bits(&d), bits(&d_base));
            }
        }
    }
}
