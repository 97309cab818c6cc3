//! What the learning-to-rank losses share (`lambdarank.rs`, `pairwise.rs`, `rank_xendcg.rs`):
//! query groups, and the [`Loss`] made from a loss of one group ([`GroupLoss`]) by [`Ranked`].
//!
//! * Target: two values per row (T = 2, row-major): the relevance label, then the row's query
//!   group, a whole number ≥ 0. The rows of a group need not be contiguous; a group of one row
//!   has no pair and contributes nothing.
//! * The loss is Σ_g W_g L_g(s_g), L_g the group loss of the group's scores s_g (its rows in row
//!   order) and W_g the mean weight of its rows (LightGBM and XGBoost take one weight per query;
//!   equal weights within a group are that weight). It is not a sum of per-row terms: the
//!   booster calls every batch form on all rows at once, as for Cox's partial likelihood.
//! * Per unit of its own weight (the convention of the weighted Newton leaves Σ w g / Σ w h):
//!   g_i = (W_g / w_i) ∂L_g/∂s_i and likewise the Hessian diagonal; a row of weight 0 gets 0.
//! * Every L_g is invariant to a constant added to the group's scores: the initial constant is 0.
//! * The line search along b: each group's φ_g(γ) = L_g(s + γ b) is convex (lambdarank's with its
//!   pair weights frozen at γ = 0, see `lambdarank.rs`); Σ W_g φ_g is minimised by the shared
//!   safeguarded Newton (`solve::minimize_convex`). A leaf's value is one Newton step from the
//!   Hessian diagonal, −Σ w g / Σ w h over its rows, as LightGBM and XGBoost take it.
//! * Groups are evaluated in parallel, each into its own buffers, and added in group order: the
//!   result does not depend on the thread count.
//! * The group → rows index is built once per target (training, validation) and kept: a call
//!   whose group column equals a kept one reuses its index.

use super::solve::{self, Slope};
use super::Loss;
use rayon::prelude::*;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

/// The largest group code: a whole number an f64 holds exactly.
const MAX_GROUP: f64 = 9_007_199_254_740_992.0;

/// One query group's loss L(s) of its scores `s` given the relevance labels `y` (the group's rows
/// in row order).
pub trait GroupLoss: Send + Sync + Debug {
    /// The loss's name in the vocabulary.
    fn name(&self) -> &'static str;
    /// What is wrong with a relevance label, if anything (for the error message).
    fn label_error(&self, label: f64) -> Option<String>;
    /// L(s), leaving ∂L/∂s in `gradient` and the Hessian diagonal in `hessian` unless they are
    /// empty. `key` is the group's code, for losses that draw fixed numbers per group.
    fn evaluate(
        &self,
        key: u64,
        y: &[f64],
        s: &[f64],
        gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64;
    /// φ'(γ), φ''(γ) and a magnitude of the terms of φ'(γ) (rounding noise) of φ(γ) = L(s + γ b).
    fn slope(&self, key: u64, y: &[f64], s: &[f64], b: &[f64], gamma: f64) -> (f64, f64, f64);
}

/// The rows of every query group: `rows[starts[g]..starts[g + 1]]` are group g's, in row order,
/// groups by increasing code.
#[derive(Debug)]
pub struct Groups {
    codes: Vec<f64>,
    rows: Vec<usize>,
    starts: Vec<usize>,
}

impl Groups {
    /// The groups of a ranking target `y` (n × 2: label, group).
    pub fn of(y: &[f64]) -> Groups {
        let codes: Vec<f64> = y.chunks_exact(2).map(|row| row[1]).collect();
        let mut rows: Vec<usize> = (0..codes.len()).collect();
        rows.sort_by(|&a, &b| codes[a].total_cmp(&codes[b])); // stable: row order within a group
        let mut starts = Vec::new();
        for (pos, &r) in rows.iter().enumerate() {
            if pos == 0 || codes[r] != codes[rows[pos - 1]] {
                starts.push(pos);
            }
        }
        starts.push(rows.len());
        Groups {
            codes,
            rows,
            starts,
        }
    }

    /// The number of groups.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True without groups.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Group g's rows, in row order.
    pub fn rows(&self, g: usize) -> &[usize] {
        &self.rows[self.starts[g]..self.starts[g + 1]]
    }

    /// Group g's code.
    pub fn key(&self, g: usize) -> u64 {
        self.codes[self.rows(g)[0]] as u64
    }

    fn matches(&self, y: &[f64]) -> bool {
        self.codes.len() * 2 == y.len()
            && (self.codes.iter())
                .zip(y.chunks_exact(2))
                .all(|(&c, row)| c.to_bits() == row[1].to_bits())
    }
}

/// A ranking target's errors: a label the loss refuses, or a group that is not a whole number
/// ≥ 0; `None` when every row suits.
pub fn target_error(loss: &dyn GroupLoss, y: &[f64]) -> Option<String> {
    if y.len() % 2 != 0 {
        return Some(format!(
            "the {} loss needs two values per row (relevance, query group), found {} values",
            loss.name(),
            y.len()
        ));
    }
    for (i, row) in y.chunks_exact(2).enumerate() {
        if let Some(why) = loss.label_error(row[0]) {
            return Some(format!("row {i}: relevance {} ({why})", row[0]));
        }
        let g = row[1];
        if !(g >= 0.0 && g.fract() == 0.0 && g < MAX_GROUP) {
            return Some(format!(
                "row {i}: query group {g} (groups are whole numbers >= 0; the {} loss needs \
                 group= with a column of query ids)",
                loss.name()
            ));
        }
    }
    None
}

/// A ranking loss over all rows from its group loss (see the module header).
#[derive(Debug)]
pub struct Ranked<L> {
    pub(super) group_loss: L,
    /// The last two group indexes built (training and validation targets alternate).
    kept: Mutex<Vec<Arc<Groups>>>,
}

/// One group's share of a batch form: its weighted value and its rows' g and h.
struct Share {
    value: f64,
    gradient: Vec<f64>,
    hessian: Vec<f64>,
}

#[inline]
fn weight(w: &[f64], i: usize) -> f64 {
    if w.is_empty() {
        1.0
    } else {
        w[i]
    }
}

impl<L: GroupLoss> Ranked<L> {
    /// The loss over query groups of `group_loss`.
    pub fn new(group_loss: L) -> Self {
        Ranked {
            group_loss,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// The groups of `y`, built once per distinct group column.
    fn groups(&self, y: &[f64]) -> Arc<Groups> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = kept.iter().find(|g| g.matches(y)) {
            return Arc::clone(found);
        }
        let built = Arc::new(Groups::of(y));
        if kept.len() == 2 {
            kept.remove(0);
        }
        kept.push(Arc::clone(&built));
        built
    }

    /// Σ_g W_g L_g(f), leaving g and h (per unit of own weight) in `neg_gradient` (negated) and
    /// `hessian` unless they are empty.
    fn evaluate(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        let groups = self.groups(y);
        let (want_g, want_h) = (!neg_gradient.is_empty(), !hessian.is_empty());
        let shares: Vec<Share> = (0..groups.len())
            .into_par_iter()
            .map(|g| {
                let rows = groups.rows(g);
                let labels: Vec<f64> = rows.iter().map(|&i| y[2 * i]).collect();
                let scores: Vec<f64> = rows.iter().map(|&i| f[i]).collect();
                let mut gradient = vec![0.0; if want_g { rows.len() } else { 0 }];
                let mut h = vec![0.0; if want_h { rows.len() } else { 0 }];
                let value = (self.group_loss).evaluate(
                    groups.key(g),
                    &labels,
                    &scores,
                    &mut gradient,
                    &mut h,
                );
                let group_weight =
                    rows.iter().map(|&i| weight(w, i)).sum::<f64>() / rows.len() as f64;
                let per_own = |d: &mut Vec<f64>| {
                    for (d, &i) in d.iter_mut().zip(rows) {
                        let wi = weight(w, i);
                        *d = if wi > 0.0 {
                            *d * group_weight / wi
                        } else {
                            0.0
                        };
                    }
                };
                per_own(&mut gradient);
                per_own(&mut h);
                Share {
                    value: group_weight * value,
                    gradient,
                    hessian: h,
                }
            })
            .collect();
        let mut total = 0.0;
        for (g, share) in shares.iter().enumerate() {
            total += share.value;
            for (pos, &i) in groups.rows(g).iter().enumerate() {
                if want_g {
                    neg_gradient[i] = -share.gradient[pos];
                }
                if want_h {
                    hessian[i] = share.hessian[pos];
                }
            }
        }
        total
    }

    /// φ'(γ) and φ''(γ) of Σ_g W_g L_g(f + γ b).
    fn slope_at(
        &self,
        groups: &Groups,
        (y, f, b, w): (&[f64], &[f64], &[f64], &[f64]),
        gamma: f64,
    ) -> Slope {
        let parts: Vec<(f64, f64, f64)> = (0..groups.len())
            .into_par_iter()
            .map(|g| {
                let rows = groups.rows(g);
                let labels: Vec<f64> = rows.iter().map(|&i| y[2 * i]).collect();
                let scores: Vec<f64> = rows.iter().map(|&i| f[i]).collect();
                let dir: Vec<f64> = rows.iter().map(|&i| b[i]).collect();
                let group_weight =
                    rows.iter().map(|&i| weight(w, i)).sum::<f64>() / rows.len() as f64;
                let (d1, d2, noise) =
                    (self.group_loss).slope(groups.key(g), &labels, &scores, &dir, gamma);
                (group_weight * d1, group_weight * d2, group_weight * noise)
            })
            .collect();
        let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
        for (a, b, c) in parts {
            d1 += a;
            d2 += b;
            noise += c;
        }
        Slope {
            d1,
            d2,
            ln_scale: 0.0,
            noise,
        }
    }
}

impl<L: GroupLoss> Loss for Ranked<L> {
    fn name(&self) -> &'static str {
        self.group_loss.name()
    }
    fn n_outputs(&self) -> usize {
        1
    }
    fn target_width(&self) -> usize {
        2
    }
    fn separable(&self) -> bool {
        false
    }
    /// A row alone is a group of one: no pair, loss 0 (the row forms see a data set of one).
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
    /// Invariant to a constant: 0.
    fn init(&self, _y: &[f64], _w: &[f64]) -> Vec<f64> {
        vec![0.0]
    }
    /// One Newton step from the Hessian diagonal over the leaf's rows.
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], _class: usize) -> f64 {
        let (d1, d2) = self.shifted_derivative_sums(y, f, w, rows, (0, 0.0), 0.0);
        if d2 > 0.0 && d1.is_finite() {
            -d1 / d2
        } else {
            0.0
        }
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let groups = self.groups(y);
        let slope = |gamma| self.slope_at(&groups, (y, f, b, w), gamma);
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
    /// The largest Hessian diagonal entry at f: the curvature of a group grows with its pairs.
    fn sigma_from(&self, y: &[f64], f: &[f64]) -> Option<f64> {
        let mut h = vec![0.0; f.len()];
        self.evaluate(y, f, &[], &mut [], &mut h);
        let largest = h.iter().copied().fold(0.0, f64::max);
        (largest.is_finite() && largest > 0.0).then_some(largest)
    }
    fn target_error(&self, y: &[f64]) -> Option<String> {
        target_error(&self.group_loss, y)
    }
    /// The score itself: a ranking score has no response scale but its order.
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        out[0] = f[0];
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
    /// (d1 + Σ_{rows} w ∂L/∂f / w, Σ_{rows} w h) at f + c on `rows`: the derivatives of every row
    /// of a group change with the leaf's shift, so each call is a pass over all rows.
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
        let n = f.len();
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
        self.evaluate(y, &shifted, w, &mut g, &mut h);
        let (mut d1, mut d2) = (d1, 0.0);
        for &r in rows {
            let r = r as usize;
            d1 -= weight(w, r) * g[r];
            d2 += weight(w, r) * h[r];
        }
        (d1, d2)
    }
}

/// The pairs (high, low) of a group whose labels differ, `high` the more relevant, with each
/// pair's weight, and the pairwise logistic cost Σ δ ln(1 + e^{−(s_h − s_l)}) along b: the value,
/// ∂/∂s and the Hessian diagonal at s (`evaluate`), or φ', φ'' at s + γ b (`slope`). RankNet
/// (Burges et al. 2005) weighs every pair 1; LambdaRank weighs it by |ΔNDCG|.
pub(super) struct Pairs {
    pub(super) pairs: Vec<(usize, usize, f64)>,
}

impl Pairs {
    pub(super) fn evaluate(&self, s: &[f64], gradient: &mut [f64], hessian: &mut [f64]) -> f64 {
        let mut value = 0.0;
        for &(h, l, delta) in &self.pairs {
            let d = s[h] - s[l];
            value += delta * solve::softplus(-d);
            let rho = solve::sigmoid(-d); // 1 / (1 + e^{d})
            if !gradient.is_empty() {
                gradient[h] -= delta * rho;
                gradient[l] += delta * rho;
            }
            if !hessian.is_empty() {
                let curvature = delta * rho * (1.0 - rho);
                hessian[h] += curvature;
                hessian[l] += curvature;
            }
        }
        value
    }

    pub(super) fn slope(&self, s: &[f64], b: &[f64], gamma: f64) -> (f64, f64, f64) {
        let (mut d1, mut d2, mut noise) = (0.0, 0.0, 0.0);
        for &(h, l, delta) in &self.pairs {
            let db = b[h] - b[l];
            let rho = solve::sigmoid(-(s[h] - s[l] + gamma * db));
            d1 -= delta * rho * db;
            d2 += delta * rho * (1.0 - rho) * db * db;
            noise += delta * rho * db.abs();
        }
        (d1, d2, noise)
    }
}
