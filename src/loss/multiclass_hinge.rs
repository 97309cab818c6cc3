//! Crammer–Singer multiclass hinge loss, as used by Grubb & Bagnell (2011, §5, citing Crammer &
//! Singer 2002): ℓ(y, f) = max(0, max_{k≠y} (1 + f_k − f_y)) = max_k (f_k + Δ_k) − f_y with
//! Δ_k = 1 − [k = y].
//!
//! * Subgradient: e_{k*} − e_y with k* the first arg max_{k≠y} f_k when 1 + f_{k*} − f_y > 0, else 0.
//!   Hessian 0; σ, μ = None. The response (`row_response`, provided) is the softmax of the scores.
//! * prox, exact: by duality ℓ(u) = max_{α ∈ simplex} ⟨α − e_y, u⟩ + ⟨α, Δ⟩, and
//!   prox_{λℓ}(z) = z − λ(α − e_y) with α the Euclidean projection of e_y + (z + Δ)/λ onto the
//!   simplex (sort-based, O(K log K)).
//! * Constant minimiser: ordering the scores, L(c) ≥ W_top·max(0, 1 − g) + (W − W_top)(1 + g),
//!   g = gap between the two largest scores, with equality at c = g e_top; hence c = e_m (m the
//!   heaviest class) if W_m > W/2, else c = 0. Returned centred (scores sum to 0).
//! * Leaf and tree line searches: each row's loss along F_i + γ B_i is the upper envelope of K
//!   lines in γ (convex hull trick); all rows' envelope kinks go to the exact breakpoint search of
//!   `solve.rs` (O(nK log K + nK log n)). Flat argmin intervals: midpoint when bounded, else the
//!   point closest to 0. Negative steps are allowed.

use super::solve::{self, Kink};
use super::Loss;

/// The multiclass hinge loss, as `LossSpec::MulticlassHinge` builds it.
#[derive(Debug, Clone, Copy)]
pub struct MulticlassHinge {
    /// K, the classes.
    pub n_classes: usize,
}

/// Adds the kinks of max_k (a_k + s_k γ), weighted by `w`, to `kinks`; returns w × its slope at −∞.
/// `lines` holds (s_k, a_k) and is reordered.
fn envelope_kinks(
    lines: &mut [(f64, f64)],
    w: f64,
    hull: &mut Vec<(f64, f64)>,
    kinks: &mut Vec<Kink>,
) -> f64 {
    lines.sort_unstable_by(|p, q| p.0.total_cmp(&q.0).then(q.1.total_cmp(&p.1)));
    let cross = |p: (f64, f64), q: (f64, f64)| (p.1 - q.1) / (q.0 - p.0);
    hull.clear();
    for &line in lines.iter() {
        if hull.last().is_some_and(|h| h.0 == line.0) {
            continue; // same slope, smaller intercept: never on top
        }
        while hull.len() >= 2 {
            let (p, q) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            if cross(q, line) <= cross(p, q) {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(line);
    }
    for pair in hull.windows(2) {
        kinks.push(Kink {
            at: cross(pair[0], pair[1]),
            jump: w * (pair[1].0 - pair[0].0),
        });
    }
    w * hull[0].0
}

impl MulticlassHinge {
    /// The loss over `n_classes` classes.
    pub fn new(n_classes: usize) -> Self {
        MulticlassHinge { n_classes }
    }
    /// argmin_γ Σ w ℓ(y_i, F_i + γ B_i) over the given rows; `dir(i, k)` is B_ik.
    fn argmin(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        rows: impl Iterator<Item = usize>,
        dir: impl Fn(usize, usize) -> f64,
    ) -> f64 {
        let k = self.n_classes;
        let (mut lines, mut hull, mut kinks) =
            (Vec::with_capacity(k), Vec::with_capacity(k), Vec::new());
        let mut slope = 0.0;
        for i in rows {
            if w[i] <= 0.0 {
                continue;
            }
            let yk = y[i] as usize;
            let (fy, by) = (f[i * k + yk], dir(i, yk));
            lines.clear();
            for j in 0..k {
                let delta = if j == yk { 0.0 } else { 1.0 };
                lines.push((dir(i, j) - by, f[i * k + j] + delta - fy));
            }
            slope += envelope_kinks(&mut lines, w[i], &mut hull, &mut kinks);
        }
        solve::piecewise_linear_point(slope, &mut kinks)
    }
}

/// Euclidean projection of `v` onto the probability simplex, in place.
fn project_simplex(v: &mut [f64]) {
    let mut sorted = v.to_vec();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let (mut cum, mut theta) = (0.0, 0.0);
    for (j, &x) in sorted.iter().enumerate() {
        cum += x;
        let t = (cum - 1.0) / (j + 1) as f64;
        if x - t > 0.0 {
            theta = t;
        }
    }
    for x in v.iter_mut() {
        *x = (*x - theta).max(0.0);
    }
}

impl Loss for MulticlassHinge {
    fn name(&self) -> &'static str {
        "multiclass_hinge"
    }
    fn n_outputs(&self) -> usize {
        self.n_classes
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        let yk = y[0] as usize;
        let m = f
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != yk)
            .map(|(_, &x)| x)
            .fold(f64::NEG_INFINITY, f64::max);
        (1.0 + m - f[yk]).max(0.0)
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        let yk = y[0] as usize;
        out.fill(0.0);
        let mut best: Option<usize> = None;
        for j in (0..f.len()).filter(|&j| j != yk) {
            if best.is_none_or(|b| f[j] > f[b]) {
                best = Some(j);
            }
        }
        if let Some(b) = best {
            if 1.0 + f[b] - f[yk] > 0.0 {
                out[b] = 1.0;
                out[yk] = -1.0;
            }
        }
    }
    fn row_hessian(&self, _y: &[f64], _f: &[f64], out: &mut [f64]) {
        out.fill(0.0);
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        let yk = y[0] as usize;
        for (j, o) in out.iter_mut().enumerate() {
            let (e, delta) = if j == yk { (1.0, 0.0) } else { (0.0, 1.0) };
            *o = e + (z[j] + delta) / lambda;
        }
        project_simplex(out);
        for (j, o) in out.iter_mut().enumerate() {
            let e = if j == yk { 1.0 } else { 0.0 };
            *o = z[j] - lambda * (*o - e);
        }
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        let k = self.n_classes;
        let mut share = vec![0.0; k];
        for (&y, &w) in y.iter().zip(w) {
            share[y as usize] += w;
        }
        let total: f64 = share.iter().sum();
        let (m, &wm) = share
            .iter()
            .enumerate()
            .fold((0, &share[0]), |a, b| if b.1 > a.1 { b } else { a });
        if wm > 0.5 * total {
            (0..k)
                .map(|j| if j == m { 1.0 } else { 0.0 } - 1.0 / k as f64)
                .collect()
        } else {
            vec![0.0; k]
        }
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], class: usize) -> f64 {
        self.argmin(y, f, w, rows.iter().map(|&i| i as usize), |_, j| {
            if j == class {
                1.0
            } else {
                0.0
            }
        })
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        let k = self.n_classes;
        self.argmin(y, f, w, 0..y.len(), |i, j| b[i * k + j])
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
