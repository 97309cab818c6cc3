//! The Cox proportional-hazards loss: the negative log partial likelihood of right-censored
//! survival data with Breslow's handling of ties (Cox, "Regression models and life-tables", 1972;
//! Breslow 1974), the objective of R gbm's `coxph` and XGBoost's `survival:cox`
//! (docs/algorithms.md §6).
//!
//! * Label: the signed time (XGBoost's convention): y > 0 an event at time y, y < 0 a row
//!   censored at time |y|; 0 and non-finite labels are refused. δ_i = [y_i > 0], t_i = |y_i|.
//! * With risk sets R_k = Σ_{j: t_j ≥ t_k} w_j e^{f_j} (ties share theirs: Breslow), the loss is
//!   L(f) = Σ_{k: event} w_k (ln R_k − f_k); `sum_values` returns it, so the booster's mean loss is
//!   L / Σ w (per unit of total weight, as for every other loss).
//! * It is not a sum of per-row terms: row i's derivatives depend on every score through the risk
//!   sets containing it. Per unit of its own weight (∂L/∂f_i = w_i g_i, the convention of the
//!   weighted Newton leaves Σ w g / Σ w h): g_i = −δ_i + e^{f_i} A_i, A_i = Σ_{k: event, t_k ≤ t_i}
//!   w_k / R_k, and the Hessian diagonal h_i = e^{f_i} A_i − w_i e^{2 f_i} B_i, B_i = Σ_k w_k / R_k²
//!   (exact: ∂²L/∂f_i² / w_i; with unit weights XGBoost's and gbm's). Every batch form makes one
//!   sort by time and two passes of cumulative sums, O(n log n), with the largest score factored
//!   out of the exponentials so that nothing overflows.
//! * The loss is invariant to a constant added to every score: the initial constant is 0.
//! * Line search along b: φ(γ) = L(f + γ b) is convex with φ'(γ) = Σ_k w_k (M_k − b_k), where M_k is
//!   the mean of b over R_k weighted by w e^{f + γ b}, and φ'' = Σ_k w_k Var_k(b) ≥ 0; solved by the
//!   shared safeguarded Newton (`solve::minimize_convex`), the risk-set sums recomputed at each γ.
//! * A leaf's value is one Newton step from the Hessian diagonal, −Σ w g / Σ w h over its rows
//!   (what gbm and XGBoost do); each leaf's exact 1-D problem would need a pass over all rows per
//!   iteration per leaf.
//! * No σ bounds the curvature; at f the Hessian is below diag(w_i e^{f_i} A_i), so the default
//!   constant step takes σ = max_i e^{f_i} A_i at the start, as the log-link losses take theirs.
//! * The proximal operator of L is not a per-row problem: the proximal methods refuse this loss
//!   (`Params::validate`).
//! * `response` = e^f, the relative hazard.

use super::solve::{self, Slope};
use super::Loss;

/// The Cox partial-likelihood loss (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct Cox;

/// Rows sorted by time, ascending, and where each run of tied times starts (`starts`, with the
/// end `n` last).
struct ByTime {
    order: Vec<usize>,
    starts: Vec<usize>,
}

impl ByTime {
    fn new(y: &[f64]) -> ByTime {
        let mut order: Vec<usize> = (0..y.len()).collect();
        order.sort_by(|&a, &b| y[a].abs().total_cmp(&y[b].abs()));
        let mut starts = Vec::new();
        for (pos, &i) in order.iter().enumerate() {
            if pos == 0 || y[i].abs() != y[order[pos - 1]].abs() {
                starts.push(pos);
            }
        }
        starts.push(order.len());
        ByTime { order, starts }
    }
    /// The rows of each run of tied times, from the latest time to the earliest.
    fn groups_descending(&self) -> impl Iterator<Item = &[usize]> {
        self.starts
            .windows(2)
            .rev()
            .map(|s| &self.order[s[0]..s[1]])
    }
}

/// Weight of row i (`w` empty: unit weights).
#[inline]
fn weight(w: &[f64], i: usize) -> f64 {
    if w.is_empty() {
        1.0
    } else {
        w[i]
    }
}

/// The largest finite score of a row with positive weight (0 if none): the factor taken out of
/// every exponential.
fn shift(scores: impl Iterator<Item = (f64, f64)>) -> f64 {
    let m = scores
        .filter(|&(_, w)| w > 0.0)
        .map(|(s, _)| s)
        .filter(|s| s.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if m.is_finite() {
        m
    } else {
        0.0
    }
}

impl Cox {
    /// L(f) = Σ_{event} w_k (ln R_k − f_k), leaving g and h (see the header) in `neg_gradient`
    /// (negated) and `hessian` when they are not empty.
    fn evaluate(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        let n = y.len();
        if n == 0 {
            return 0.0;
        }
        let by_time = ByTime::new(y);
        let m = shift((0..n).map(|i| (f[i], weight(w, i))));
        let e: Vec<f64> = f.iter().map(|&f| (f - m).exp()).collect();
        // Risk-set sums (scaled by e^{−m}) of each run of ties, latest first, and the loss.
        let mut risk = Vec::with_capacity(by_time.starts.len() - 1);
        let (mut r, mut value) = (0.0, 0.0);
        for group in by_time.groups_descending() {
            r += group.iter().map(|&i| weight(w, i) * e[i]).sum::<f64>();
            risk.push(r);
            for &i in group {
                let wi = weight(w, i);
                if y[i] > 0.0 && wi > 0.0 {
                    value += wi * (r.ln() + m - f[i]);
                }
            }
        }
        if neg_gradient.is_empty() && hessian.is_empty() {
            return value;
        }
        // A_i and B_i accumulate over the events up to t_i, earliest first.
        let (mut a, mut b) = (0.0, 0.0);
        let groups = by_time.starts.windows(2).zip(risk.iter().rev());
        for (bounds, &r) in groups {
            let group = &by_time.order[bounds[0]..bounds[1]];
            let events: f64 = (group.iter())
                .filter(|&&i| y[i] > 0.0)
                .map(|&i| weight(w, i))
                .sum();
            if events > 0.0 {
                a += events / r;
                b += events / (r * r);
            }
            for &i in group {
                let event = if y[i] > 0.0 { 1.0 } else { 0.0 };
                if let Some(g) = neg_gradient.get_mut(i) {
                    *g = event - e[i] * a;
                }
                if let Some(h) = hessian.get_mut(i) {
                    *h = e[i] * a - weight(w, i) * e[i] * e[i] * b;
                }
            }
        }
        value
    }

    /// φ'(γ) and φ''(γ) of φ(γ) = L(f + γ b), as a [`Slope`] for the line search.
    fn slope_at(
        by_time: &ByTime,
        (y, f, b, w): (&[f64], &[f64], &[f64], &[f64]),
        gamma: f64,
    ) -> Slope {
        let s = |i: usize| f[i] + gamma * b[i];
        let m = shift((0..y.len()).map(|i| (s(i), weight(w, i))));
        let (mut r0, mut r1, mut r2) = (0.0, 0.0, 0.0);
        let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
        for group in by_time.groups_descending() {
            for &i in group {
                let we = weight(w, i) * (s(i) - m).exp();
                r0 += we;
                r1 += we * b[i];
                r2 += we * b[i] * b[i];
            }
            if r0 <= 0.0 {
                continue;
            }
            let mean = r1 / r0;
            let var = (r2 / r0 - mean * mean).max(0.0);
            for &i in group {
                let wi = weight(w, i);
                if y[i] > 0.0 && wi > 0.0 {
                    d1 += wi * (mean - b[i]);
                    d2 += wi * var;
                    noise += wi * (mean.abs() + b[i].abs());
                }
            }
        }
        Slope {
            d1,
            d2,
            ln_scale: 0.0,
            noise,
        }
    }
}

impl Loss for Cox {
    fn name(&self) -> &'static str {
        "cox"
    }
    fn n_outputs(&self) -> usize {
        1
    }
    fn separable(&self) -> bool {
        false
    }
    /// A row alone is its own risk set: ℓ = ln e^f − f = 0 (the row forms see a data set of one).
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        self.sum_values(y, f, &[])
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.evaluate(y, f, &[], out, &mut []);
        out[0] = -out[0];
    }
    fn row_hessian(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.evaluate(y, f, &[], &mut [], out);
    }
    /// The zero function's prox (a data set of one row); the proximal methods refuse this loss.
    fn row_prox(&self, _y: &[f64], z: &[f64], _lambda: f64, out: &mut [f64]) {
        out.copy_from_slice(z);
    }
    /// L is invariant to a constant: 0.
    fn init(&self, _y: &[f64], _w: &[f64]) -> Vec<f64> {
        vec![0.0]
    }
    /// One Newton step from the Hessian diagonal over the leaf's rows (see the header).
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], _class: usize) -> f64 {
        let (d1, d2) = self.shifted_derivative_sums(y, f, w, rows, (0, 0.0), 0.0);
        if d2 > 0.0 && d1.is_finite() {
            -d1 / d2
        } else {
            0.0
        }
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let by_time = ByTime::new(y);
        let slope = |gamma| Cox::slope_at(&by_time, (y, f, b, w), gamma);
        solve::minimize_convex(slope, solve::LINE_SEARCH_TOL, solve::LINE_SEARCH_MAX_ITER)
    }
    fn sigma(&self) -> Option<f64> {
        None
    }
    fn mu(&self) -> Option<f64> {
        None
    }
    fn newton_by_default(&self) -> bool {
        true
    }
    fn sigma_from(&self, y: &[f64], f: &[f64]) -> Option<f64> {
        let mut g = vec![0.0; y.len()];
        self.evaluate(y, f, &[], &mut g, &mut []);
        // e^{f_i} A_i = g_i + δ_i = δ_i − (−g_i).
        let largest = (0..y.len())
            .map(|i| if y[i] > 0.0 { 1.0 } else { 0.0 } - g[i])
            .fold(0.0, f64::max);
        (largest.is_finite() && largest > 0.0).then_some(largest)
    }
    fn target_error(&self, y: &[f64]) -> Option<String> {
        let row = y.iter().position(|&v| !(v.is_finite() && v != 0.0))?;
        Some(format!(
            "row {row} is {} (the cox loss needs a signed time: > 0 for an event at that time, \
             < 0 for a row censored at its absolute value; never 0 or missing)",
            y[row]
        ))
    }
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        out[0] = f[0].exp();
    }
    fn sum_values(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        self.evaluate(y, f, w, &mut [], &mut [])
    }
    fn sum_values_and_derivatives(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        self.evaluate(y, f, w, neg_gradient, hessian)
    }
    fn neg_gradient_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.evaluate(y, f, &[], out, &mut []);
    }
    fn hessian_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.evaluate(y, f, &[], &mut [], out);
    }
    /// (d1 + Σ_{rows} w ∂L/∂f / w, Σ_{rows} w h) at f + c on `rows`: every row's derivatives
    /// change with the leaf's shift, so each call is a pass over all rows.
    fn shifted_derivative_sums(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        rows: &[u32],
        (_class, c): (usize, f64),
        d1: f64,
    ) -> (f64, f64) {
        let mut shifted = f.to_vec();
        rows.iter().for_each(|&r| shifted[r as usize] += c);
        let (mut g, mut h) = (vec![0.0; y.len()], vec![0.0; y.len()]);
        self.evaluate(y, &shifted, w, &mut g, &mut h);
        let (mut d1, mut d2) = (d1, 0.0);
        for &r in rows {
            let r = r as usize;
            d1 -= w[r] * g[r];
            d2 += w[r] * h[r];
        }
        (d1, d2)
    }
}
