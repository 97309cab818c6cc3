//! The Cox proportional-hazards loss: the negative log partial likelihood of survival data, with
//! Breslow's (1974) or Efron's (1977) handling of tied event times, strata and counting-process
//! data (Cox, "Regression models and life-tables", 1972; Andersen & Gill 1982), the objective of
//! R gbm's `coxph`, XGBoost's `survival:cox` and R survival's `coxph` (docs/algorithms.md §6).
//!
//! * Label (`cox_risk.rs`): the signed time (XGBoost's convention), y > 0 an event at time y,
//!   y < 0 a row censored at time |y|; or three columns, the signed stop time, a start time and a
//!   stratum. δ_i is the event, t_i the stop time. Row j is at risk at t when it is in the
//!   stratum of the event, s_j < t ≤ t_j.
//! * With risk sums R(t) = Σ_{j at risk at t} w_j e^{f_j}, Breslow's loss is
//!   L(f) = Σ_{k: event} w_k (ln R(t_k) − f_k): tied events share the risk set. Efron's replaces,
//!   for the d events D tied at t (mean weight w̄, E = Σ_{k∈D} w_k e^{f_k}), the d terms ln R(t) by
//!   Σ_{l<d} ln(R(t) − (l/d) E), weighted w̄ (R survival's weighted Efron); without ties the two
//!   agree. `sum_values` returns L, so the booster's mean loss is L / Σ w.
//! * It is not a sum of per-row terms: row i's derivatives depend on every score through the risk
//!   sets containing it. Per unit of its own weight (∂L/∂f_i = w_i g_i, the convention of the
//!   weighted Newton leaves Σ w g / Σ w h): g_i = −δ_i + e^{f_i} A_i and the exact Hessian
//!   diagonal h_i = e^{f_i} A_i − w_i e^{2 f_i} B_i, with A_i = Σ_{terms at whose time i is at
//!   risk} c w/R and B_i = Σ c² w/R² (c = 1, or 1 − l/d for Efron's l-th term of i's own tied
//!   events; with unit weights and Breslow, XGBoost's and gbm's). Every batch form makes one sort
//!   by stratum and time and two sweeps of cumulative sums, O(n log n): rows enter the risk sums
//!   at their stop time and, with start times, leave them at their start time (A_i is then a
//!   difference of cumulative sums at t_i and s_i). The largest score is factored out of the
//!   exponentials so that nothing overflows.
//! * The loss is invariant to a constant added to every score: the initial constant is 0.
//! * Line search along b: φ(γ) = L(f + γ b) is convex with φ'(γ) = Σ_terms w (M − b_k), where M is
//!   the mean of b over the term's risk set weighted by w e^{f + γ b}, and φ'' = Σ w Var(b) ≥ 0;
//!   solved by the shared safeguarded Newton (`solve::minimize_convex`), the risk sums
//!   recomputed at each γ.
//! * A leaf's value is one Newton step from the Hessian diagonal, −Σ w g / Σ w h over its rows
//!   (what gbm and XGBoost do); each leaf's exact 1-D problem would need a pass over all rows per
//!   iteration per leaf.
//! * No σ bounds the curvature; at f the Hessian is below diag(w_i e^{f_i} A_i), so the default
//!   constant step takes σ = max_i e^{f_i} A_i at the start, as the log-link losses take theirs.
//! * The proximal operator of L is not a per-row problem: the proximal methods refuse this loss
//!   (`Params::validate`).
//! * `response` = e^f, the relative hazard.

use super::cox_risk::{Labels, RiskSets, COX_COLUMNS};
use super::solve::{self, Slope};
use super::Loss;

/// How tied event times share their risk set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// Every tied event sees the whole risk set (Breslow 1974): the default, gbm's and XGBoost's.
    #[default]
    Breslow,
    /// The tied events leave the risk set in equal shares (Efron 1977): R survival's default.
    Efron,
}

impl Ties {
    /// Breslow's, the default (left out of model files).
    pub fn is_breslow(&self) -> bool {
        *self == Ties::Breslow
    }
    /// The name `cox(ties=...)` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Ties::Breslow => "breslow",
            Ties::Efron => "efron",
        }
    }
}

/// The Cox partial-likelihood loss (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct Cox {
    ties: Ties,
    width: usize,
}

impl Cox {
    /// Breslow's ties on a target of signed times (one column).
    pub const BRESLOW: Cox = Cox {
        ties: Ties::Breslow,
        width: 1,
    };

    /// The loss with `ties`, on targets of one column (signed times) or, with `counting`, of
    /// [`COX_COLUMNS`] (signed stop time, start time, stratum).
    pub fn new(ties: Ties, counting: bool) -> Cox {
        let width = if counting { COX_COLUMNS } else { 1 };
        Cox { ties, width }
    }

    fn labels<'a>(&self, y: &'a [f64]) -> Labels<'a> {
        Labels {
            y,
            width: self.width,
        }
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

/// One run of tied stop times' part of A and B (see the header): `a`, `b` for the rows at risk,
/// `own_a`, `own_b` for its own events (they differ under Efron's ties).
#[derive(Clone, Copy, Default)]
struct RunTerms {
    a: f64,
    b: f64,
    own_a: f64,
    own_b: f64,
}

/// The events of a run with positive weight: their count d, total weight, and Σ w e^{f − m}
/// (`e`: the scaled exponentials).
fn tied_events(labels: Labels<'_>, group: &[usize], w: &[f64], e: &[f64]) -> (usize, f64, f64) {
    let (mut d, mut total, mut exp_sum) = (0, 0.0, 0.0);
    for &i in group {
        let wi = weight(w, i);
        if labels.event(i) && wi > 0.0 {
            d += 1;
            total += wi;
            exp_sum += wi * e[i];
        }
    }
    (d, total, exp_sum)
}

impl Cox {
    /// L(f) = Σ_{event} w_k (ln R_k − f_k) (Efron's terms under its ties), leaving g and h (see
    /// the header) in `neg_gradient` (negated) and `hessian` when they are not empty.
    fn evaluate(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        let labels = self.labels(y);
        let n = labels.n();
        if n == 0 {
            return 0.0;
        }
        let sets = RiskSets::new(labels);
        let m = shift((0..n).map(|i| (f[i], weight(w, i))));
        let e: Vec<f64> = f.iter().map(|&f| (f - m).exp()).collect();
        let mut terms = vec![RunTerms::default(); sets.n_runs()];
        let mut value = 0.0;
        // Risk sums (scaled by e^{−m}) of each run of ties, latest first, and the loss.
        for s in 0..sets.n_strata() {
            let mut leaving = sets.by_start(s).iter().peekable();
            let mut r = 0.0;
            for run in sets.runs(s).rev() {
                let group = sets.rows(run);
                r += group.iter().map(|&i| weight(w, i) * e[i]).sum::<f64>();
                let t = labels.stop(group[0]);
                while let Some(&&j) = leaving.peek() {
                    if labels.start(j) < t {
                        break;
                    }
                    r -= weight(w, j) * e[j];
                    leaving.next();
                }
                let (d, total, exp_sum) = tied_events(labels, group, w, &e);
                // The tied events are in their own risk set: a bound that rounding in the
                // differences of start times cannot cross (a no-op for sums of positive terms).
                let r = r.max(exp_sum);
                match self.ties {
                    Ties::Breslow => {
                        for &i in group {
                            let wi = weight(w, i);
                            if labels.event(i) && wi > 0.0 {
                                value += wi * (r.ln() + m - f[i]);
                            }
                        }
                        let events: f64 = (group.iter())
                            .filter(|&&i| labels.event(i))
                            .map(|&i| weight(w, i))
                            .sum();
                        if events > 0.0 {
                            let (a, b) = (events / r, events / (r * r));
                            terms[run] = RunTerms { a, b, own_a: a, own_b: b };
                        }
                    }
                    Ties::Efron => {
                        let mean_weight = total / d.max(1) as f64;
                        let t = &mut terms[run];
                        for l in 0..d {
                            let left = l as f64 / d as f64;
                            // R − (l/d) E ≥ (1 − l/d) E > 0.
                            let risk = (r - left * exp_sum).max((1.0 - left) * exp_sum);
                            value += mean_weight * (risk.ln() + m);
                            let (a, b) = (mean_weight / risk, mean_weight / (risk * risk));
                            t.a += a;
                            t.b += b;
                            t.own_a += (1.0 - left) * a;
                            t.own_b += (1.0 - left) * (1.0 - left) * b;
                        }
                        for &i in group {
                            let wi = weight(w, i);
                            if labels.event(i) && wi > 0.0 {
                                value -= wi * f[i];
                            }
                        }
                    }
                }
            }
        }
        if neg_gradient.is_empty() && hessian.is_empty() {
            return value;
        }
        // A_i and B_i: cumulative sums over the runs up to t_i, earliest first, less those up
        // to s_i (the sums when row i enters the risk sets).
        let mut entry = vec![(0.0, 0.0); if labels.counting() { n } else { 0 }];
        for s in 0..sets.n_strata() {
            let (mut a, mut b) = (0.0, 0.0);
            let mut entering = sets.by_start(s).iter().rev().peekable();
            for run in sets.runs(s) {
                let group = sets.rows(run);
                let t = labels.stop(group[0]);
                while let Some(&&j) = entering.peek() {
                    if labels.start(j) >= t {
                        break;
                    }
                    entry[j] = (a, b);
                    entering.next();
                }
                let before = (a, b);
                let run_terms = terms[run];
                a += run_terms.a;
                b += run_terms.b;
                for &i in group {
                    let wi = weight(w, i);
                    let (mut ai, mut bi) = (a, b);
                    if self.ties == Ties::Efron && labels.event(i) && wi > 0.0 {
                        ai = before.0 + run_terms.own_a;
                        bi = before.1 + run_terms.own_b;
                    }
                    if let Some(&(a0, b0)) = entry.get(i) {
                        ai -= a0;
                        bi -= b0;
                    }
                    let event = if labels.event(i) { 1.0 } else { 0.0 };
                    if let Some(g) = neg_gradient.get_mut(i) {
                        *g = event - e[i] * ai;
                    }
                    if let Some(h) = hessian.get_mut(i) {
                        *h = e[i] * ai - wi * e[i] * e[i] * bi;
                        if labels.counting() {
                            // Each term of h_i is ≥ 0; differences of sums can round below.
                            *h = h.max(0.0);
                        }
                    }
                }
            }
        }
        value
    }

    /// φ'(γ) and φ''(γ) of φ(γ) = L(f + γ b), as a [`Slope`] for the line search.
    fn slope_at(
        &self,
        sets: &RiskSets,
        (y, f, b, w): (&[f64], &[f64], &[f64], &[f64]),
        gamma: f64,
    ) -> Slope {
        let labels = self.labels(y);
        let s = |i: usize| f[i] + gamma * b[i];
        let m = shift((0..labels.n()).map(|i| (s(i), weight(w, i))));
        let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
        for stratum in 0..sets.n_strata() {
            let mut leaving = sets.by_start(stratum).iter().peekable();
            let (mut r0, mut r1, mut r2) = (0.0, 0.0, 0.0);
            for run in sets.runs(stratum).rev() {
                let group = sets.rows(run);
                for &i in group {
                    let we = weight(w, i) * (s(i) - m).exp();
                    r0 += we;
                    r1 += we * b[i];
                    r2 += we * b[i] * b[i];
                }
                let t = labels.stop(group[0]);
                while let Some(&&j) = leaving.peek() {
                    if labels.start(j) < t {
                        break;
                    }
                    let we = weight(w, j) * (s(j) - m).exp();
                    r0 -= we;
                    r1 -= we * b[j];
                    r2 -= we * b[j] * b[j];
                    leaving.next();
                }
                if r0 <= 0.0 {
                    continue;
                }
                // The tied events' own sums (Efron's shares): Σ w e, Σ w e b, Σ w e b².
                let (mut e0, mut e1, mut e2, mut d, mut total) = (0.0, 0.0, 0.0, 0usize, 0.0);
                for &i in group {
                    let wi = weight(w, i);
                    if labels.event(i) && wi > 0.0 {
                        if self.ties == Ties::Efron {
                            let we = wi * (s(i) - m).exp();
                            (e0, e1, e2) = (e0 + we, e1 + we * b[i], e2 + we * b[i] * b[i]);
                            d += 1;
                            total += wi;
                            d1 -= wi * b[i];
                            noise += wi * b[i].abs();
                            continue;
                        }
                        let mean = r1 / r0;
                        let var = (r2 / r0 - mean * mean).max(0.0);
                        d1 += wi * (mean - b[i]);
                        d2 += wi * var;
                        noise += wi * (mean.abs() + b[i].abs());
                    }
                }
                let mean_weight = total / d.max(1) as f64;
                for l in 0..d {
                    let left = l as f64 / d as f64;
                    let q0 = (r0 - left * e0).max((1.0 - left) * e0);
                    let mean = (r1 - left * e1) / q0;
                    let var = ((r2 - left * e2) / q0 - mean * mean).max(0.0);
                    d1 += mean_weight * mean;
                    d2 += mean_weight * var;
                    noise += mean_weight * mean.abs();
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
    fn target_width(&self) -> usize {
        self.width
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
        let sets = RiskSets::new(self.labels(y));
        let slope = |gamma| self.slope_at(&sets, (y, f, b, w), gamma);
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
        let labels = self.labels(y);
        let mut g = vec![0.0; labels.n()];
        self.evaluate(y, f, &[], &mut g, &mut []);
        // e^{f_i} A_i = g_i + δ_i = δ_i − (−g_i).
        let largest = (0..labels.n())
            .map(|i| if labels.event(i) { 1.0 } else { 0.0 } - g[i])
            .fold(0.0, f64::max);
        (largest.is_finite() && largest > 0.0).then_some(largest)
    }
    fn target_error(&self, y: &[f64]) -> Option<String> {
        self.labels(y).error()
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
        let (mut g, mut h) = (vec![0.0; f.len()], vec![0.0; f.len()]);
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
