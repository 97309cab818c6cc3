//! The loss as the methods see it, for one score per row (scalar losses) or K (multiclass losses,
//! one tree per class per iteration). Score matrices are row-major `n × K`; a scalar loss is the
//! case K = 1, so every method that supports multiclass runs one code path.

use super::ranks::{shared, sum_one};
use super::vectors::{par_fill, par_fill_rows, par_sum, par_sum_chunks_mut, par_sum_ranges};
use super::weights::Weights;
use super::Context;
use crate::collective::Collective;
use crate::loss::Loss;
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
        self.loss.n_outputs()
    }

    pub fn sigma(&self) -> Option<f64> {
        self.sigma
    }

    /// The targets of a run of rows (T values per row).
    fn targets(&self, rows: std::ops::Range<usize>) -> &[f64] {
        let t = self.loss.target_width();
        &self.y[rows.start * t..rows.end * t]
    }

    /// −∂ℓ/∂F at F (n × K), in a reused buffer (`Buffers::recycle_values` takes it back).
    pub fn negative_gradient(&self, f: &[f64]) -> Vec<f64> {
        let mut out = self.buffers.values(f.len());
        self.negative_gradient_into(f, &mut out);
        out
    }

    /// −∂ℓ/∂F at the scores `f` of the rows `rows` into `out`, for a separable loss (one row's
    /// derivatives depend on that row alone): a method that moves its scores and takes the
    /// gradient there in one pass over row blocks.
    pub fn negative_gradient_of_rows(
        &self,
        rows: std::ops::Range<usize>,
        f: &[f64],
        out: &mut [f64],
    ) {
        debug_assert!(self.loss.separable());
        self.loss.neg_gradient_into(self.targets(rows), f, out);
    }

    /// −∂ℓ/∂F at F into `out`.
    pub fn negative_gradient_into(&self, f: &[f64], out: &mut [f64]) {
        if !self.loss.separable() {
            let w = self.w.given().unwrap_or(&[]);
            self.loss
                .sum_values_and_derivatives(self.y, f, w, out, &mut []);
            return;
        }
        let k = self.n_outputs();
        par_fill_rows(k, out, |rows, out| {
            let scores = &f[rows.start * k..rows.end * k];
            self.loss.neg_gradient_into(self.targets(rows), scores, out);
        });
    }

    /// The diagonal of ∂²ℓ/∂F² at F (n × K).
    pub fn hessian(&self, f: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; f.len()];
        self.hessian_into(f, &mut out);
        out
    }

    fn hessian_into(&self, f: &[f64], out: &mut [f64]) {
        if !self.loss.separable() {
            let w = self.w.given().unwrap_or(&[]);
            let mut g = vec![0.0; f.len()];
            self.loss
                .sum_values_and_derivatives(self.y, f, w, &mut g, out);
            return;
        }
        let k = self.n_outputs();
        par_fill_rows(k, out, |rows, out| {
            let scores = &f[rows.start * k..rows.end * k];
            self.loss.hessian_into(self.targets(rows), scores, out);
        });
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

    /// The natural gradient −I(f)⁻¹ ∂ℓ/∂f row by row (n × K) from the fresh −g at `f`, I the
    /// diagonal Fisher information of the loss's distribution (`Distribution::fisher`).
    pub fn natural_gradient(&self, f: &[f64]) -> Vec<f64> {
        let k = self.n_outputs();
        let mut out = self.derivs.neg_gradient.clone();
        let Some(d) = self.loss.distribution() else {
            return out; // `Params::validate` allows the natural step for distributions only
        };
        out.par_chunks_mut(k)
            .zip(f.par_chunks(k))
            .for_each_init(
                || vec![0.0; k],
                |fisher, (g, f)| {
                    d.fisher(f, fisher);
                    for (g, &i) in g.iter_mut().zip(fisher.iter()) {
                        *g = if i > 0.0 { *g / i } else { 0.0 };
                    }
                },
            );
        out
    }

    /// The proximal direction (prox_{λℓ(y,·)}(z) − z)/λ at z (n × K), in a reused buffer
    /// (`Buffers::recycle_values` takes it back).
    pub fn prox_directions(&self, z: &[f64], lambda: f64) -> Vec<f64> {
        let mut out = self.buffers.values(z.len());
        let k = self.n_outputs();
        // A chunk of proxes at a time, then (prox − z)/λ.
        par_fill_rows(k, &mut out, |rows, out| {
            let z = &z[rows.start * k..rows.end * k];
            self.loss.prox_into(self.targets(rows), z, lambda, out);
            out.iter_mut()
                .zip(z)
                .for_each(|(o, &z)| *o = (*o - z) / lambda);
        });
        out
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
        let mut at_zero = None;
        for step in 0..steps {
            // d1 starts from the penalty's gradient λc; d2 holds the loss's own curvature: a
            // leaf without any (absolute, pinball, hinge) takes the exact search, however large
            // l2_leaf.
            let (d1, d2) =
                self.loss
                    .shifted_derivative_sums(self.y, f, w, rows, (class, c), l2 * c);
            if !(d2 > 0.0 && d2.is_finite() && d1.is_finite()) {
                return (step > 0).then_some(c);
            }
            at_zero.get_or_insert((d1, d2));
            c -= d1 / (d2 + l2);
        }
        // On the log scale a Newton step can pass the leaf's optimum by orders of magnitude
        // ((Σy − Σμ)/Σμ against ln(Σy/Σμ) for Poisson: 10⁵ against 11.5 for counts 10⁵ times
        // their prediction, and e^f overflows). The step taken, ν·c, stops at the optimum: it
        // then never raises the leaf's loss, while a moderate overshoot that shrinkage brings
        // back short of the optimum is kept (it is what makes the first trees fast).
        let optimum = at_zero.and_then(|(d1, d2)| self.loss.leaf_optimum_from_derivatives(d1, d2));
        if let Some(optimum) = optimum {
            let reach = optimum / self.nu();
            if c * reach > 0.0 && c.abs() > reach.abs() {
                c = reach;
            }
        }
        Some(c)
    }

    /// The leaves of a loss that is not a sum of per-row terms (one score per row): one Newton
    /// step from the Hessian diagonal, −Σ w g / (Σ w h + λ) with λ = `l2_leaf`, from one pass over
    /// all rows (each leaf's exact problem would take a pass per leaf and Newton step). 0 for a
    /// leaf without curvature.
    pub fn diagonal_newton_leaves(&self, f: &[f64], leaves: &[&[u32]]) -> Vec<f64> {
        let w = self.line_search_weights().slice();
        let (mut g, mut h) = (vec![0.0; f.len()], vec![0.0; f.len()]);
        self.loss
            .sum_values_and_derivatives(self.y, f, w, &mut g, &mut h);
        let l2 = self.params.tree.l2_leaf;
        (leaves.iter())
            .map(|rows| {
                let (mut d1, mut d2) = (0.0, 0.0);
                for &r in rows.iter() {
                    let r = r as usize;
                    d1 += w[r] * g[r];
                    d2 += w[r] * h[r];
                }
                if d2 + l2 > 0.0 {
                    d1 / (d2 + l2)
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// argmin_γ Σ w ℓ(y, F + γ B), B n × K.
    pub fn line_search(&self, f: &[f64], b: &[f64]) -> f64 {
        let gamma = match shared(self.collective) {
            Some(collective) => self.line_search_over_ranks(collective, f, b),
            None => {
                let w = self.line_search_weights().slice();
                self.loss.line_search(self.y, f, b, w)
            }
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
}

/// What a Newton step needs: the Hessian too, unless it is the constant 1 (then `fit_newton`
/// takes an empty Hessian, which saves a vector of n ones).
pub fn newton_need(loss: &dyn Loss) -> Need {
    if loss.unit_curvature() {
        Need::Gradient
    } else {
        Need::GradientAndHessian
    }
}

/// The columns of a row-major n × K matrix, each contiguous (the matrix itself when K = 1):
/// transposed in one pass, block of rows by block of rows, where K calls of `column` would
/// read the whole matrix K times with stride K (with 26 classes, a tenth of a softmax fit).
pub struct Columns<'a> {
    columns: Cow<'a, [f64]>,
    n_rows: usize,
}

impl<'a> Columns<'a> {
    /// An empty `matrix` (an omitted Hessian, h ≡ 1) gives empty columns.
    pub fn new(matrix: &'a [f64], n_outputs: usize) -> Self {
        let n_rows = matrix.len() / n_outputs;
        if n_outputs == 1 {
            return Columns {
                columns: Cow::Borrowed(matrix),
                n_rows,
            };
        }
        const BLOCK_ROWS: usize = 2_048;
        let mut columns = vec![0.0; matrix.len()];
        // Block b of every column, for block b of the rows.
        let mut blocks: Vec<Vec<&mut [f64]>> = (0..n_rows.div_ceil(BLOCK_ROWS))
            .map(|_| Vec::with_capacity(n_outputs))
            .collect();
        for column in columns.chunks_mut(n_rows.max(1)) {
            for (block, piece) in blocks.iter_mut().zip(column.chunks_mut(BLOCK_ROWS)) {
                block.push(piece);
            }
        }
        blocks
            .par_iter_mut()
            .zip(matrix.par_chunks(BLOCK_ROWS * n_outputs))
            .for_each(|(pieces, rows)| {
                for (i, row) in rows.chunks_exact(n_outputs).enumerate() {
                    for (piece, &x) in pieces.iter_mut().zip(row) {
                        piece[i] = x;
                    }
                }
            });
        Columns {
            columns: Cow::Owned(columns),
            n_rows,
        }
    }

    /// Column `k` (empty for an empty matrix).
    pub fn get(&self, k: usize) -> &[f64] {
        let n = self.n_rows;
        self.columns.get(k * n..(k + 1) * n).unwrap_or(&[])
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
/// (equal to it, except that a loss may sum an unweighted chunk its own way, see
/// `Loss::sum_values_and_derivatives`). With `need`, the same pass leaves −∂ℓ/∂F (and the
/// Hessian diagonal) at F in `derivs` for the next iteration, the numbers the separate passes
/// would give.
pub fn train_loss_pass(
    loss: &dyn Loss,
    y: &[f64],
    f: &[f64],
    w: &Weights,
    need: Option<Need>,
    derivs: &mut Derivatives,
    collective: &dyn Collective,
) -> f64 {
    // Across ranks: this rank's Σ w ℓ, added over the ranks, over the total weight of all.
    let mean = |total: f64| sum_one(collective, total) / w.total();
    // Unweighted: the terms 1·ℓ of `mean_loss` without the ones.
    let weights = w.given().unwrap_or(&[]);
    let (k, t) = (loss.n_outputs(), loss.target_width());
    if !loss.separable() {
        let total = match need {
            None => loss.sum_values(y, f, weights),
            Some(need) => {
                derivs.neg_gradient.resize(f.len(), 0.0);
                let mut no_hessian = Vec::new();
                let h_out = if need == Need::GradientAndHessian {
                    derivs.hessian.resize(f.len(), 0.0);
                    &mut derivs.hessian
                } else {
                    &mut no_hessian
                };
                let total =
                    loss.sum_values_and_derivatives(y, f, weights, &mut derivs.neg_gradient, h_out);
                derivs.fresh = Some(need);
                total
            }
        };
        return mean(total);
    }
    let Some(need) = need else {
        if weights.is_empty() {
            let total = par_sum_ranges(y.len() / t, |rows| {
                let y = &y[rows.start * t..rows.end * t];
                loss.sum_values(y, &f[rows.start * k..rows.end * k], &[])
            });
            return mean(total);
        }
        return mean_loss(loss, y, f, weights, collective);
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
    let total = par_sum_chunks_mut(k, &mut derivs.neg_gradient, h_out, |start, g, h| {
        let rows = start..start + g.len() / k;
        let w = if weights.is_empty() {
            &[][..]
        } else {
            &weights[rows.clone()]
        };
        let scores = &f[rows.start * k..rows.end * k];
        let y = &y[rows.start * t..rows.end * t];
        loss.sum_values_and_derivatives(y, scores, w, g, h)
    });
    derivs.fresh = Some(need);
    mean(total)
}

/// Σ w ℓ(y, F) / Σ w, in parallel and independent of the thread count.
pub fn mean_loss(
    loss: &dyn Loss,
    y: &[f64],
    f: &[f64],
    w: &[f64],
    collective: &dyn Collective,
) -> f64 {
    let mean = |total: f64| {
        let mut sums = [total, par_sum(w.len(), |i| w[i])];
        collective.sum(&mut sums);
        sums[0] / sums[1]
    };
    if !loss.separable() {
        return mean(loss.sum_values(y, f, w));
    }
    let (k, t) = (loss.n_outputs(), loss.target_width());
    let total = par_sum_ranges(w.len(), |rows| {
        let scores = &f[rows.start * k..rows.end * k];
        let y = &y[rows.start * t..rows.end * t];
        loss.sum_values(y, scores, &w[rows])
    });
    mean(total)
}
