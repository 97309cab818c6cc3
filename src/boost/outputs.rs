//! The loss as the methods see it, for one score per row (scalar losses) or K (multiclass losses,
//! one tree per class per iteration). Score matrices are row-major `n × K`; a scalar loss is the
//! case K = 1, so every method that supports multiclass runs one code path.

use super::vectors::{
    par_fill, par_fill_chunks, par_sum, par_sum_chunks_mut, par_sum_ranges, par_sum_rows_mut, CHUNK,
};
use super::weights::Weights;
use super::Context;
use crate::loss::Objective;
use rayon::prelude::*;
use std::borrow::Cow;

/// What the next iteration needs at the method's output F, when it starts from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Gradient,
    GradientAndHessian,
}

/// −∂ℓ/∂F and the Hessian diagonal (n × K) at the method's output, kept by the booster between
/// iterations: the loss pass that records the training loss computes them in the same pass (one
/// `exp` per row for the logistic loss instead of three), and the buffers are reused every
/// iteration. Not part of a checkpoint: after a resume they are stale and recomputed, with the
/// same functions, so the model is the same.
#[derive(Debug, Default)]
pub struct Derivatives {
    pub neg_gradient: Vec<f64>,
    pub hessian: Vec<f64>,
    /// What the vectors hold at the current output; `None` when stale.
    fresh: Option<Need>,
}

impl Derivatives {
    /// Marks the vectors stale (the output moved).
    pub fn invalidate(&mut self) {
        self.fresh = None;
    }
}

impl Context<'_> {
    /// K: scores per row.
    pub fn n_outputs(&self) -> usize {
        self.objective.n_outputs()
    }

    pub fn sigma(&self) -> Option<f64> {
        self.sigma
    }

    /// −∂ℓ/∂F at F (n × K), in a reused buffer (`Buffers::recycle_values` takes it back).
    pub fn negative_gradient(&self, f: &[f64]) -> Vec<f64> {
        let mut out = self.buffers.values(f.len());
        self.negative_gradient_into(f, &mut out);
        out
    }

    /// −∂ℓ/∂F at F into `out`.
    pub fn negative_gradient_into(&self, f: &[f64], out: &mut [f64]) {
        match self.objective {
            Objective::Scalar(loss) => par_fill_chunks(out, |start, out| {
                let rows = start..start + out.len();
                loss.derivatives_into(&self.y[rows.clone()], &f[rows], out);
                out.iter_mut().for_each(|g| *g = -*g);
            }),
            Objective::Multiclass(loss) => self.per_row(f, out, |y, f, out| {
                loss.gradient(y, f, out);
                out.iter_mut().for_each(|g| *g = -*g);
            }),
        }
    }

    /// The diagonal of ∂²ℓ/∂F² at F (n × K).
    pub fn hessian(&self, f: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; f.len()];
        self.hessian_into(f, &mut out);
        out
    }

    fn hessian_into(&self, f: &[f64], out: &mut [f64]) {
        match self.objective {
            Objective::Scalar(loss) => par_fill_chunks(out, |start, out| {
                let rows = start..start + out.len();
                loss.second_derivatives_into(&self.y[rows.clone()], &f[rows], out);
            }),
            Objective::Multiclass(loss) => {
                self.per_row(f, out, |y, f, out| loss.hessian_diag(y, f, out))
            }
        }
    }

    /// Leaves −∂ℓ/∂F (and the Hessian diagonal if `need` says so) at `f` in `self.derivs`. `f`
    /// must be the method's output, where the booster's loss pass may have computed them
    /// already.
    pub fn derivatives_at_output(&mut self, f: &[f64], need: Need) {
        let fresh = self.derivs.fresh;
        if fresh == Some(need) || fresh == Some(Need::GradientAndHessian) {
            return;
        }
        let mut derivs = std::mem::take(self.derivs);
        derivs.neg_gradient.resize(f.len(), 0.0);
        self.negative_gradient_into(f, &mut derivs.neg_gradient);
        if need == Need::GradientAndHessian {
            derivs.hessian.resize(f.len(), 0.0);
            self.hessian_into(f, &mut derivs.hessian);
        }
        derivs.fresh = Some(need);
        *self.derivs = derivs;
    }

    /// The proximal direction (prox_{λℓ(y,·)}(z) − z)/λ at z (n × K), in a reused buffer
    /// (`Buffers::recycle_values` takes it back).
    pub fn prox_directions(&self, z: &[f64], lambda: f64) -> Vec<f64> {
        let mut out = self.buffers.values(z.len());
        match self.objective {
            // (prox − z)/λ as `prox_direction` computes it, a chunk of proxes at a time.
            Objective::Scalar(loss) => par_fill_chunks(&mut out, |start, out| {
                let rows = start..start + out.len();
                let z = &z[rows.clone()];
                loss.prox_into(&self.y[rows], z, lambda, out);
                out.iter_mut()
                    .zip(z)
                    .for_each(|(o, &z)| *o = (*o - z) / lambda);
            }),
            Objective::Multiclass(loss) => self.per_row(z, &mut out, |y, z, out| {
                loss.prox(y, z, lambda, out);
                out.iter_mut()
                    .zip(z)
                    .for_each(|(o, &z)| *o = (*o - z) / lambda);
            }),
        }
        out
    }

    /// argmin_c Σ_{rows} w ℓ(y, F + c e_class): the per-leaf line search.
    pub fn leaf_value(&self, f: &[f64], rows: &[u32], class: usize) -> f64 {
        let w = self.line_search_weights().slice();
        match self.objective {
            Objective::Scalar(loss) => loss.leaf_value(self.y, f, w, rows),
            Objective::Multiclass(loss) => loss.leaf_value(self.y, f, w, rows, class),
        }
    }

    /// `steps` Newton steps from c = 0 on φ(c) = Σ_{rows} w ℓ(y, F + c e_class) + λc²/2, with λ
    /// = `l2_leaf`: with one step, the leaf of a Newton tree on this partition, −Σwg/(Σwh + λ)
    /// (Friedman's LogitBoost and gbm leaves). `None` when φ has no curvature at 0 (a
    /// piecewise-linear loss, or rows all in a linear piece): Newton has no step there.
    /// A later step without curvature keeps the iterate reached.
    pub fn leaf_newton_value(
        &self,
        f: &[f64],
        rows: &[u32],
        class: usize,
        steps: usize,
    ) -> Option<f64> {
        // undrawn rows of a subsampled iteration weigh 0, as in the exact searches
        let w = self.line_search_weights().slice();
        let l2 = self.params.tree.l2_leaf;
        let mut c = 0.0;
        for step in 0..steps {
            // d2 holds the loss's own curvature: a leaf without any (absolute, pinball,
            // hinge) takes the exact search, however large l2_leaf.
            let (mut d1, mut d2) = (l2 * c, 0.0);
            match self.objective {
                Objective::Scalar(loss) => {
                    let (g, h) = loss.shifted_derivative_sums(self.y, f, w, rows, c);
                    d1 += g;
                    d2 += h;
                }
                Objective::Multiclass(loss) => {
                    let k = loss.n_classes();
                    let (mut u, mut g, mut h) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
                    for &r in rows {
                        let r = r as usize;
                        u.copy_from_slice(&f[r * k..(r + 1) * k]);
                        u[class] += c;
                        loss.gradient(self.y[r], &u, &mut g);
                        loss.hessian_diag(self.y[r], &u, &mut h);
                        d1 += w[r] * g[class];
                        d2 += w[r] * h[class];
                    }
                }
            }
            if !(d2 > 0.0 && d2.is_finite() && d1.is_finite()) {
                return (step > 0).then_some(c);
            }
            c -= d1 / (d2 + l2);
        }
        Some(c)
    }

    /// argmin_γ Σ w ℓ(y, F + γ B), B n × K.
    pub fn line_search(&self, f: &[f64], b: &[f64]) -> f64 {
        let w = self.line_search_weights().slice();
        let gamma = match self.objective {
            Objective::Scalar(loss) => loss.line_search(self.y, f, b, w),
            Objective::Multiclass(loss) => loss.line_search(self.y, f, b, w),
        };
        if !gamma.is_finite() {
            0.0
        } else if self.constraints.monotone().is_some() {
            // A negative step would turn the monotone trees the other way: the argmin over
            // γ ≥ 0 of the convex line-search objective is max(γ*, 0).
            gamma.max(0.0)
        } else {
            gamma
        }
    }

    /// Runs `row(y_i, F_i, out_i)` over all rows in parallel.
    fn per_row(&self, f: &[f64], out: &mut [f64], row: impl Fn(f64, &[f64], &mut [f64]) + Sync) {
        let k = self.n_outputs();
        out.par_chunks_mut(k)
            .with_min_len(CHUNK / k.max(1))
            .enumerate()
            .for_each(|(i, out)| row(self.y[i], &f[i * k..(i + 1) * k], out));
    }
}

/// What a Newton step needs: the Hessian too, unless it is the constant 1 (then `fit_newton`
/// takes an empty Hessian, which saves a vector of n ones).
pub fn newton_need(objective: &Objective) -> Need {
    match objective {
        Objective::Scalar(loss) if loss.unit_curvature() => Need::Gradient,
        _ => Need::GradientAndHessian,
    }
}

/// Column `k` of a row-major n × K matrix (borrowed when K = 1).
pub fn column(matrix: &[f64], k: usize, n_outputs: usize) -> Cow<'_, [f64]> {
    if n_outputs == 1 {
        return Cow::Borrowed(matrix);
    }
    let mut out = vec![0.0; matrix.len() / n_outputs];
    par_fill(&mut out, |i| matrix[i * n_outputs + k]);
    Cow::Owned(out)
}

/// The training loss Σ w ℓ(y, F) / Σ w at the method's output F, in the chunks of `mean_loss`
/// (equal to it, except that unweighted scalar losses may sum a chunk their own way, see
/// `Loss::sum_value_and_derivatives`). With `need`, the same pass leaves −∂ℓ/∂F (and the Hessian
/// diagonal) at F in `derivs` for the next iteration, from `Loss::value_and_derivatives`
/// (scalar losses) or the per-row forms (multiclass losses), which give the numbers the separate
/// passes would.
pub fn train_loss_pass(
    objective: &Objective,
    y: &[f64],
    f: &[f64],
    w: &Weights,
    need: Option<Need>,
    derivs: &mut Derivatives,
) -> f64 {
    let Some(need) = need else {
        if let Some(w) = w.given() {
            return mean_loss(objective, y, f, w);
        }
        // Unweighted: the terms 1·ℓ of `mean_loss` without the ones.
        let total = match objective {
            Objective::Scalar(loss) => par_sum_ranges(y.len(), |rows| {
                loss.sum_values(&y[rows.clone()], &f[rows], &[])
            }),
            Objective::Multiclass(loss) => {
                let k = loss.n_classes();
                par_sum(y.len(), |i| loss.value(y[i], &f[i * k..(i + 1) * k]))
            }
        };
        return total / w.total();
    };
    let hessian = need == Need::GradientAndHessian;
    derivs.neg_gradient.resize(f.len(), 0.0);
    if hessian {
        derivs.hessian.resize(f.len(), 0.0);
    }
    let h_out: &mut [f64] = if hessian {
        &mut derivs.hessian
    } else {
        &mut []
    };
    let weight = |i: usize| w.given().map_or(1.0, |w| w[i]);
    let total = match objective {
        Objective::Scalar(loss) if w.given().is_none() => {
            par_sum_chunks_mut(1, &mut derivs.neg_gradient, h_out, |start, g, h| {
                let rows = start..start + g.len();
                loss.sum_value_and_derivatives(&y[rows.clone()], &f[rows], g, h)
            })
        }
        Objective::Scalar(loss) => {
            par_sum_rows_mut(1, &mut derivs.neg_gradient, h_out, |i, g, h| {
                let (value, d1, d2) = loss.value_and_derivatives(y[i], f[i]);
                g[0] = -d1;
                if let Some(h) = h.first_mut() {
                    *h = d2;
                }
                weight(i) * value
            })
        }
        Objective::Multiclass(loss) => {
            let k = loss.n_classes();
            par_sum_rows_mut(k, &mut derivs.neg_gradient, h_out, |i, g, h| {
                let f = &f[i * k..(i + 1) * k];
                loss.gradient(y[i], f, g);
                g.iter_mut().for_each(|g| *g = -*g);
                if !h.is_empty() {
                    loss.hessian_diag(y[i], f, h);
                }
                weight(i) * loss.value(y[i], f)
            })
        }
    };
    derivs.fresh = Some(need);
    total / w.total()
}

/// Σ w ℓ(y, F) / Σ w, in parallel and independent of the thread count.
pub fn mean_loss(objective: &Objective, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
    let total = match objective {
        Objective::Scalar(loss) => par_sum_ranges(y.len(), |rows| {
            loss.sum_values(&y[rows.clone()], &f[rows.clone()], &w[rows])
        }),
        Objective::Multiclass(loss) => {
            let k = loss.n_classes();
            par_sum(y.len(), |i| w[i] * loss.value(y[i], &f[i * k..(i + 1) * k]))
        }
    };
    total / par_sum(y.len(), |i| w[i])
}
