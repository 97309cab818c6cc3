//! [`Loss`]: the one interface the booster, the model and the metrics use, for every loss. A loss
//! gives K = `n_outputs()` scores per row (1 for a scalar loss, the number of classes for a
//! multiclass one); every score matrix (`f`, `b`, `z`, and the outputs written) is row-major
//! n × K. Targets are row-major n × T with T = `target_width()`: one label per row (T = 1) for
//! every loss but the multi-output squared loss, whose target is n × K. A scalar loss implements [`ScalarLoss`] and gets `Loss` from it
//! (K = 1, with its chunked fast paths); a loss with K scores implements `Loss` itself: the
//! per-row forms, `init`, the per-class leaf value and the line search, with the batch forms
//! provided.

use super::solve::Kink;
use super::{softmax_into, LeafScratch, ScalarLoss, Terms};
use rayon::prelude::*;
use std::fmt::Debug;

/// A loss over K scores per row (see the module header).
pub trait Loss: Send + Sync + Debug {
    /// The public name, as accepted by `LossSpec::from_str`.
    fn name(&self) -> &'static str;
    /// K, the scores per row.
    fn n_outputs(&self) -> usize;
    /// T, the target values per row (see the module header).
    fn target_width(&self) -> usize {
        1
    }
    /// ℓ(y, f) for one row's T targets `y` and K scores `f`.
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64;
    /// ∂ℓ/∂f_k (a subgradient where ℓ has a kink) into `out` (K entries).
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]);
    /// ∂²ℓ/∂f_k² into `out` (zero for piecewise-linear losses).
    fn row_hessian(&self, y: &[f64], f: &[f64], out: &mut [f64]);
    /// argmin_u ℓ(y, u) + ‖u − z‖²/(2λ) into `out`.
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]);
    /// The constant minimiser argmin_c Σ w ℓ(y, c) (K values, finite even if a class is absent).
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64>;
    /// argmin_c Σ_{i ∈ rows} w_i ℓ(y_i, F_i + c e_class): the per-leaf line search of one output.
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], class: usize) -> f64;
    /// argmin_γ Σ w_i ℓ(y_i, F_i + γ B_i).
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64;
    /// Smoothness constant σ (largest Hessian eigenvalue bound), if ℓ is smooth.
    fn sigma(&self) -> Option<f64>;
    /// Strong-convexity constant μ, if positive.
    fn mu(&self) -> Option<f64>;
    /// `ScalarLoss::kinks` of a scalar piecewise-linear loss; `None` for every other loss.
    fn kinks(&self, _terms: Terms<'_>) -> Option<(f64, Vec<Kink>)> {
        None
    }
    /// The distribution of a distributional loss (its NLL, Fisher information, CRPS), for the
    /// natural step and the metrics; `None` for every other loss.
    fn distribution(&self) -> Option<&dyn super::Distribution> {
        None
    }
    /// `init` from the total weight of each class, for a loss whose constant minimiser depends
    /// on the rows through those totals only (softmax): a data-parallel fit adds the totals
    /// over its ranks. `None` for the others.
    fn init_from_class_weights(&self, _totals: &[f64]) -> Option<Vec<f64>> {
        None
    }

    /// The σ of the default constant step ρ = 1/σ on rows `y` starting from `f`: `sigma()` unless
    /// the curvature has no bound (see `ScalarLoss::sigma_from`).
    fn sigma_from(&self, _y: &[f64], _f: &[f64]) -> Option<f64> {
        self.sigma()
    }
    /// True when ℓ is a sum of per-row terms, so that a batch form may be called on any run of
    /// rows. A loss that is not (Cox's partial likelihood, whose risk sets tie rows together) has
    /// every batch form called on all rows at once, its gradient and Hessian through
    /// `sum_values_and_derivatives` with the weights.
    fn separable(&self) -> bool {
        true
    }
    /// True when `gbm` takes Newton steps unless told otherwise: when σ is known and the
    /// curvature cannot vanish, or when the loss's own leaves are Newton steps anyway (Cox, as in
    /// R gbm).
    fn newton_by_default(&self) -> bool {
        self.sigma().is_some() && !self.curvature_can_vanish()
    }
    /// `ScalarLoss::leaf_optimum_from_derivatives`; `None` for a loss without that form.
    fn leaf_optimum_from_derivatives(&self, _d1: f64, _d2: f64) -> Option<f64> {
        None
    }
    /// `ScalarLoss::can_be_interrupted`.
    fn can_be_interrupted(&self) -> bool {
        false
    }
    /// `ScalarLoss::interrupted`.
    fn interrupted(&self) -> bool {
        false
    }
    /// True when ℓ'' can be 0 where ℓ' is not (Huber's linear part; the piecewise-linear losses
    /// everywhere). A Newton step −Σg/Σh then has no bound: a leaf or tree whose rows are mostly
    /// on the linear part gets its curvature from the few others and overshoots its minimiser
    /// by as much as their share is small. Such a loss grows at least linearly, so every leaf
    /// has a finite minimiser: its leaf line search is exact (never `leaf_newton_steps`) and
    /// `gbm` does not default to Newton trees (docs/algorithms.md §10).
    fn curvature_can_vanish(&self) -> bool {
        false
    }
    /// True when labels must be ±1 (the booster maps 0/1 labels to them).
    fn is_binary(&self) -> bool {
        false
    }
    /// True when ℓ'' ≡ 1: a Newton tree is then the gradient tree, with no Hessian vector.
    fn unit_curvature(&self) -> bool {
        false
    }
    /// `None` when every label of `y` suits the loss, else what is wrong with the first that does
    /// not, for the error message. Provided: labels are class indices 0..K−1.
    fn target_error(&self, y: &[f64]) -> Option<String> {
        let k = self.n_outputs();
        let bad = y
            .iter()
            .find(|&&v| !(v >= 0.0 && v.fract() == 0.0 && (v as usize) < k))?;
        Some(format!(
            "the {} loss with {k} classes needs class indices 0..{}, found {bad}",
            self.name(),
            k - 1
        ))
    }
    /// One row's K scores on the response scale, into `out`. Provided: class probabilities, the
    /// softmax of the scores.
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        softmax_into(f, out);
    }

    /// Σ w_i ℓ(y_i, F_i) over a run of rows, added in row order (`w` empty: unit weights, the
    /// terms ℓ themselves).
    fn sum_values(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        let (k, t) = (self.n_outputs(), self.target_width());
        let row = |i: usize| self.row_value(&y[i * t..(i + 1) * t], &f[i * k..(i + 1) * k]);
        let n = y.len() / t;
        if w.is_empty() {
            (0..n).map(row).sum()
        } else {
            (0..n).map(|i| w[i] * row(i)).sum()
        }
    }
    /// Σ w_i ℓ(y_i, F_i) over a run of rows (`w` empty: unit weights), leaving −∂ℓ/∂F in
    /// `neg_gradient` and the Hessian diagonal in `hessian` unless it is empty: the booster's loss
    /// pass over one chunk of rows, with the derivatives of `neg_gradient_into` and
    /// `hessian_into`.
    fn sum_values_and_derivatives(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        let (k, t) = (self.n_outputs(), self.target_width());
        (0..y.len() / t)
            .map(|i| {
                let (y, f, g) = (
                    &y[i * t..(i + 1) * t],
                    &f[i * k..(i + 1) * k],
                    &mut neg_gradient[i * k..(i + 1) * k],
                );
                self.row_gradient(y, f, g);
                g.iter_mut().for_each(|g| *g = -*g);
                if !hessian.is_empty() {
                    self.row_hessian(y, f, &mut hessian[i * k..(i + 1) * k]);
                }
                let value = self.row_value(y, f);
                if w.is_empty() {
                    value
                } else {
                    w[i] * value
                }
            })
            .sum()
    }
    /// −∂ℓ/∂F over a run of rows into `out`.
    fn neg_gradient_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        let (k, t) = (self.n_outputs(), self.target_width());
        for i in 0..y.len() / t {
            let out = &mut out[i * k..(i + 1) * k];
            self.row_gradient(&y[i * t..(i + 1) * t], &f[i * k..(i + 1) * k], out);
            out.iter_mut().for_each(|g| *g = -*g);
        }
    }
    /// The Hessian diagonal over a run of rows into `out`.
    fn hessian_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        let (k, t) = (self.n_outputs(), self.target_width());
        for i in 0..y.len() / t {
            let (y, f) = (&y[i * t..(i + 1) * t], &f[i * k..(i + 1) * k]);
            self.row_hessian(y, f, &mut out[i * k..(i + 1) * k]);
        }
    }
    /// prox_{λℓ(y_i,·)}(Z_i) over a run of rows into `out`.
    fn prox_into(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        let (k, t) = (self.n_outputs(), self.target_width());
        for i in 0..y.len() / t {
            let rows = i * k..(i + 1) * k;
            self.row_prox(
                &y[i * t..(i + 1) * t],
                &z[rows.clone()],
                lambda,
                &mut out[rows],
            );
        }
    }
    /// The scores of a run of rows on the response scale, into `out`.
    fn response_into(&self, f: &[f64], out: &mut [f64]) {
        let k = self.n_outputs();
        for (f, out) in f.chunks(k).zip(out.chunks_mut(k)) {
            self.row_response(f, out);
        }
    }
    /// `leaf_value` of output `class` for every leaf of a tree: `leaves[j]` are the rows of leaf
    /// j (ascending) and `leaf_of[i]` the leaf of row i; `scratch` is storage reused from call
    /// to call. Provided: the leaves in parallel, each its own problem.
    fn leaf_values(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        leaves: &[&[u32]],
        _leaf_of: &[u32],
        _scratch: &mut LeafScratch,
        class: usize,
    ) -> Vec<f64> {
        leaves
            .par_iter()
            .map(|rows| self.leaf_value(y, f, w, rows, class))
            .collect()
    }
    /// (d1 + Σ w ∂ℓ/∂F_class, Σ w ∂²ℓ/∂F_class²) at F + c e_class over `rows`, summed in their
    /// order: a Newton step of the leaf search. A loss may add its terms onto `d1` one by one or
    /// add their sum to it; each keeps its own order, so that models stay the same.
    fn shifted_derivative_sums(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        rows: &[u32],
        (class, c): (usize, f64),
        d1: f64,
    ) -> (f64, f64) {
        let (k, t) = (self.n_outputs(), self.target_width());
        let (mut u, mut g, mut h) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let (mut d1, mut d2) = (d1, 0.0);
        for &r in rows {
            let r = r as usize;
            u.copy_from_slice(&f[r * k..(r + 1) * k]);
            u[class] += c;
            let y = &y[r * t..(r + 1) * t];
            self.row_gradient(y, &u, &mut g);
            self.row_hessian(y, &u, &mut h);
            d1 += w[r] * g[class];
            d2 += w[r] * h[class];
        }
        (d1, d2)
    }
}

/// A scalar loss as a [`Loss`] with one score per row: its row forms on `f[0]`, and its chunked
/// batch forms (one call per chunk of rows, which lets the per-row calls inline and a Python
/// loss make one call per chunk). A wrapper rather than a blanket impl, so that a scalar loss's
/// own methods (`init`, `leaf_value`, …) keep their scalar forms with both traits in scope.
#[derive(Debug, Clone, Copy)]
pub struct Scalar<L>(pub L);

impl<L: ScalarLoss> Loss for Scalar<L> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn n_outputs(&self) -> usize {
        1
    }
    fn row_value(&self, y: &[f64], f: &[f64]) -> f64 {
        self.0.value(y[0], f[0])
    }
    fn row_gradient(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        out[0] = self.0.derivative(y[0], f[0]);
    }
    fn row_hessian(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        out[0] = self.0.second_derivative(y[0], f[0]);
    }
    fn row_prox(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        out[0] = self.0.prox(y[0], z[0], lambda);
    }
    fn init(&self, y: &[f64], w: &[f64]) -> Vec<f64> {
        vec![self.0.init(y, w)]
    }
    fn leaf_value(&self, y: &[f64], f: &[f64], w: &[f64], rows: &[u32], _class: usize) -> f64 {
        self.0.leaf_value(y, f, w, rows)
    }
    fn line_search(&self, y: &[f64], f: &[f64], b: &[f64], w: &[f64]) -> f64 {
        self.0.line_search(y, f, b, w)
    }
    fn sigma(&self) -> Option<f64> {
        self.0.sigma()
    }
    fn mu(&self) -> Option<f64> {
        self.0.mu()
    }
    fn kinks(&self, terms: Terms<'_>) -> Option<(f64, Vec<Kink>)> {
        self.0.kinks(terms)
    }
    fn sigma_from(&self, y: &[f64], f: &[f64]) -> Option<f64> {
        self.0.sigma_from(y, f)
    }
    fn is_binary(&self) -> bool {
        self.0.is_binary()
    }
    fn unit_curvature(&self) -> bool {
        self.0.unit_curvature()
    }
    fn curvature_can_vanish(&self) -> bool {
        self.0.curvature_can_vanish()
    }
    fn leaf_optimum_from_derivatives(&self, d1: f64, d2: f64) -> Option<f64> {
        self.0.leaf_optimum_from_derivatives(d1, d2)
    }
    fn can_be_interrupted(&self) -> bool {
        self.0.can_be_interrupted()
    }
    fn interrupted(&self) -> bool {
        self.0.interrupted()
    }
    /// Binary labels are checked (and mapped to ±1) by the booster, per `is_binary`.
    fn target_error(&self, y: &[f64]) -> Option<String> {
        let (row, rule) = (y.iter().enumerate())
            .find_map(|(row, &v)| self.0.target_requirement(v).map(|rule| (row, rule)))?;
        Some(format!(
            "row {row} is {} (the {} loss needs {rule})",
            y[row],
            self.0.name()
        ))
    }
    fn row_response(&self, f: &[f64], out: &mut [f64]) {
        out[0] = self.0.response(f[0]);
    }
    fn sum_values(&self, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
        self.0.sum_values(y, f, w)
    }
    /// Unweighted: the loss's own chunk form (`ScalarLoss::sum_value_and_derivatives`).
    fn sum_values_and_derivatives(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        neg_gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> f64 {
        if w.is_empty() {
            return self
                .0
                .sum_value_and_derivatives(y, f, neg_gradient, hessian);
        }
        (0..y.len())
            .map(|i| {
                let (value, d1, d2) = self.0.value_and_derivatives(y[i], f[i]);
                neg_gradient[i] = -d1;
                if let Some(h) = hessian.get_mut(i) {
                    *h = d2;
                }
                w[i] * value
            })
            .sum()
    }
    fn neg_gradient_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.0.derivatives_into(y, f, out);
        out.iter_mut().for_each(|g| *g = -*g);
    }
    fn hessian_into(&self, y: &[f64], f: &[f64], out: &mut [f64]) {
        self.0.second_derivatives_into(y, f, out);
    }
    fn prox_into(&self, y: &[f64], z: &[f64], lambda: f64, out: &mut [f64]) {
        self.0.prox_into(y, z, lambda, out);
    }
    fn response_into(&self, f: &[f64], out: &mut [f64]) {
        for (o, &f) in out.iter_mut().zip(f) {
            *o = self.0.response(f);
        }
    }
    /// The loss's own form over all leaves (`ScalarLoss::leaf_values`).
    fn leaf_values(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        leaves: &[&[u32]],
        leaf_of: &[u32],
        scratch: &mut LeafScratch,
        _class: usize,
    ) -> Vec<f64> {
        self.0.leaf_values(y, f, w, leaves, leaf_of, scratch)
    }
    /// d1 plus the loss's sum (`ScalarLoss::shifted_derivative_sums`).
    fn shifted_derivative_sums(
        &self,
        y: &[f64],
        f: &[f64],
        w: &[f64],
        rows: &[u32],
        (_class, c): (usize, f64),
        d1: f64,
    ) -> (f64, f64) {
        let (g, h) = self.0.shifted_derivative_sums(y, f, w, rows, c);
        (d1 + g, h)
    }
}
