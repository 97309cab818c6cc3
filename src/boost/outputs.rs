//! The loss as the methods see it, for one score per row (scalar losses) or K (multiclass losses,
//! one tree per class per iteration). Score matrices are row-major `n × K`; a scalar loss is the
//! case K = 1, so every method that supports multiclass runs one code path.

use super::vectors::{par_fill, par_sum, CHUNK};
use super::Context;
use crate::loss::{Loss, Objective};
use rayon::prelude::*;
use std::borrow::Cow;

impl Context<'_> {
    /// The scalar loss. Only the methods that reject multiclass losses at validation call it.
    pub fn loss(&self) -> &dyn Loss {
        match self.objective {
            Objective::Scalar(loss) => loss.as_ref(),
            Objective::Multiclass(loss) => {
                unreachable!(
                    "Params::validate rejects the multiclass loss {} for this method",
                    loss.name()
                )
            }
        }
    }

    /// K: scores per row.
    pub fn n_outputs(&self) -> usize {
        self.objective.n_outputs()
    }

    pub fn sigma(&self) -> Option<f64> {
        match self.objective {
            Objective::Scalar(loss) => loss.sigma(),
            Objective::Multiclass(loss) => loss.sigma(),
        }
    }

    /// −∂ℓ/∂F at F (n × K).
    pub fn negative_gradient(&self, f: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; f.len()];
        match self.objective {
            Objective::Scalar(loss) => par_fill(&mut out, |i| -loss.derivative(self.y[i], f[i])),
            Objective::Multiclass(loss) => self.per_row(f, &mut out, |y, f, out| {
                loss.gradient(y, f, out);
                out.iter_mut().for_each(|g| *g = -*g);
            }),
        }
        out
    }

    /// The diagonal of ∂²ℓ/∂F² at F (n × K).
    pub fn hessian(&self, f: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; f.len()];
        match self.objective {
            Objective::Scalar(loss) => {
                par_fill(&mut out, |i| loss.second_derivative(self.y[i], f[i]))
            }
            Objective::Multiclass(loss) => {
                self.per_row(f, &mut out, |y, f, out| loss.hessian_diag(y, f, out))
            }
        }
        out
    }

    /// The proximal direction (prox_{λℓ(y,·)}(z) − z)/λ at z (n × K).
    pub fn prox_directions(&self, z: &[f64], lambda: f64) -> Vec<f64> {
        let mut out = vec![0.0; z.len()];
        match self.objective {
            Objective::Scalar(loss) => par_fill(&mut out, |i| {
                super::prox_direction(loss.as_ref(), self.y[i], z[i], lambda)
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
        match self.objective {
            Objective::Scalar(loss) => loss.leaf_value(self.y, f, self.w, rows),
            Objective::Multiclass(loss) => loss.leaf_value(self.y, f, self.w, rows, class),
        }
    }

    /// argmin_γ Σ w ℓ(y, F + γ B), B n × K.
    pub fn line_search(&self, f: &[f64], b: &[f64]) -> f64 {
        let gamma = match self.objective {
            Objective::Scalar(loss) => loss.line_search(self.y, f, b, self.w),
            Objective::Multiclass(loss) => loss.line_search(self.y, f, b, self.w),
        };
        if gamma.is_finite() {
            gamma
        } else {
            0.0
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

/// Column `k` of a row-major n × K matrix (borrowed when K = 1).
pub fn column(matrix: &[f64], k: usize, n_outputs: usize) -> Cow<'_, [f64]> {
    if n_outputs == 1 {
        return Cow::Borrowed(matrix);
    }
    let mut out = vec![0.0; matrix.len() / n_outputs];
    par_fill(&mut out, |i| matrix[i * n_outputs + k]);
    Cow::Owned(out)
}

/// Σ w ℓ(y, F) / Σ w, in parallel and independent of the thread count.
pub fn mean_loss(objective: &Objective, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
    let total = match objective {
        Objective::Scalar(loss) => par_sum(y.len(), |i| w[i] * loss.value(y[i], f[i])),
        Objective::Multiclass(loss) => {
            let k = loss.n_classes();
            par_sum(y.len(), |i| w[i] * loss.value(y[i], &f[i * k..(i + 1) * k]))
        }
    };
    total / par_sum(y.len(), |i| w[i])
}
