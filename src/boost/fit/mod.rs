//! Fitting a tree to a target and applying it to the per-row vectors, with the fused fast paths:
//! a tree's values, cos(target, b) and, for a constant step, F ← F + ν·ρ·b(X) computed in one
//! pass over the rows (`passes.rs`), with no vector of fitted values where none is needed. The
//! maths is the weak learner's fit(t, v) and the step of docs/algorithms.md §1 and §3; the tree
//! itself (tree/) only says which leaf each row is in.

mod passes;

use super::outputs::Columns;
use super::ranks::shared;
use super::vectors::{add_column, par_fill, par_sum, CHUNK};
use super::Context;
use crate::params::StepRule;
use crate::threads::{as_team_member, with_awake_workers};
use crate::tree::{grow_with_options, Candidates, FitStats, GrownTree};
use passes::{
    add_to_column_with_cosine_sums, fitted_values_and_cosine_sums, leaf_index_and_cosine_sums,
    subtract_and_add_with_cosine_sums,
};
use rayon::prelude::*;
use std::time::Instant;

/// A fitted tree and its values b(X) on the training rows.
pub struct Direction {
    pub grown: GrownTree,
    /// Empty for trees fitted by `fit_target_leaf_search` and after a leaf line search: whoever
    /// needs their values adds them from the leaf index (`add_to_column`).
    pub values: Vec<f64>,
    /// cos(target, b(X)).
    pub cos: f64,
    /// The leaf of every row (`GrownTree::leaf_index`), when the fit computed it.
    pub(in crate::boost) leaf_of: Option<Vec<u32>>,
}

impl Direction {
    /// The tree's values b(X), in a reused buffer, and cos(t, b(X)) for t_i = `target(i)`.
    fn new(ctx: &Context<'_>, grown: GrownTree, target: impl Fn(usize) -> f64 + Sync) -> Direction {
        let mut values = ctx.buffers.values(ctx.data.n_rows());
        let (tb, tt, bb) = fitted_values_and_cosine_sums(&grown, ctx.data, &mut values, target);
        Direction {
            grown,
            values,
            cos: ctx.cosine_from_sums(tb, tt, bb),
            leaf_of: None,
        }
    }

    /// Column `class` of the row-major matrix `x` += coef · b(X), from the fitted values or,
    /// when there are none, from the leaf index (the same numbers).
    pub fn add_to_column(&self, x: &mut [f64], coef: f64, class: usize) {
        match (&self.leaf_of, self.values.is_empty()) {
            (Some(leaf_of), true) => {
                let leaf_values = self.grown.leaf_values();
                let k = x.len() / leaf_of.len();
                x.par_chunks_mut(k)
                    .with_min_len(CHUNK / k)
                    .zip(leaf_of.par_iter())
                    .for_each(|(row, &leaf)| row[class] += coef * leaf_values[leaf as usize]);
            }
            _ => add_column(x, coef, &self.values, class),
        }
    }

    /// Multiplies the tree and its values by `factor`.
    pub fn scale(&mut self, factor: f64) {
        self.grown.tree.scale(factor);
        self.values.iter_mut().for_each(|v| *v *= factor);
    }
}

/// Grows a tree with the booster's reused row lists, and counts the time it takes.
fn grow(ctx: &Context<'_>, stats: FitStats<'_>, candidates: &Candidates) -> GrownTree {
    let started = Instant::now();
    let grown = with_awake_workers(|| {
        grow_with_options(
            ctx.data,
            stats,
            &ctx.params.tree,
            candidates,
            &mut ctx.buffers.grow(),
            &ctx.sample.grow_options(ctx.constraints, ctx.collective),
        )
    });
    ctx.add_tree_fit_time(started.elapsed());
    grown
}

/// What the L2 penalty of a least-squares tree (`l2_leaf`) shrinks towards 0: every leaf value
/// (`Penalised`, the tree of penalised least squares), or only the leaves' deviations from the
/// target's weighted mean over the tree's rows (`Free`: the tree is grown on t − t̄ and t̄ is
/// added back to every node). See docs/algorithms.md §4.4 for which trees take which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offset {
    Penalised,
    Free,
}

/// b = argmin Σ w (t − b(x))² over the allowed trees.
pub fn fit_target(ctx: &Context<'_>, target: &[f64], candidates: &Candidates) -> Direction {
    fit_target_with(ctx, target, candidates, Offset::Penalised)
}

/// `fit_target` with the root offset penalised or not.
fn fit_target_with(
    ctx: &Context<'_>,
    target: &[f64],
    candidates: &Candidates,
    offset: Offset,
) -> Direction {
    let grown = grow_on_target(ctx, target, candidates, offset);
    Direction::new(ctx, grown, |i| target[i])
}

/// The trees of one iteration for the step rule `rule`, `fit_target` for every output k on
/// column k of the n × K `target`; for the leaf line search, `fit_target_leaf_search`.
pub fn fit_targets(
    ctx: &Context<'_>,
    rule: StepRule,
    target: &[f64],
    candidates: &Candidates,
    offset: Offset,
) -> Vec<Direction> {
    let fit = if rule == StepRule::LeafLineSearch {
        fit_target_leaf_search
    } else {
        fit_target_with
    };
    let columns = Columns::new(target, ctx.n_outputs());
    let mut dirs = Vec::with_capacity(ctx.n_outputs());
    for_each_output(
        ctx,
        |class| fit(ctx, columns.get(class), candidates, offset),
        |_, dir| dirs.push(dir),
    );
    dirs
}

/// `fit(class)` for every output, as many classes side by side as the pool has threads, handed
/// to `finish` in class order. The trees of one iteration are fitted at the same point, so they
/// do not depend on one another; on a few thousand rows a tree is mostly serial work (its
/// histograms are one block of rows, its nodes too small to share), and the classes are what
/// gives the other threads theirs. At most a thread's worth of trees is held before `finish`.
/// Across ranks the classes go one by one: every rank must reduce the same tree's histograms at
/// the same time.
pub(in crate::boost) fn for_each_output<T: Send>(
    ctx: &Context<'_>,
    fit: impl Fn(usize) -> T + Sync,
    finish: impl FnMut(usize, T),
) {
    side_by_side(ctx, ctx.n_outputs(), fit, finish);
}

/// `fit(job)` for the independent jobs 0..n_jobs (trees fitted at the same point), handed to
/// `finish` in job order: as `for_each_output`, for any number of trees.
pub(in crate::boost) fn side_by_side<T: Send>(
    ctx: &Context<'_>,
    n_jobs: usize,
    fit: impl Fn(usize) -> T + Sync,
    mut finish: impl FnMut(usize, T),
) {
    let at_once = match shared(ctx.collective) {
        Some(_) => 1,
        None => rayon::current_num_threads().max(1),
    };
    let jobs: Vec<usize> = (0..n_jobs).collect();
    for chunk in jobs.chunks(at_once) {
        let fitted: Vec<T> = if chunk.len() == 1 {
            vec![fit(chunk[0])]
        } else {
            chunk
                .par_iter()
                .map(|&job| as_team_member(|| fit(job)))
                .collect()
        };
        for (&job, t) in chunk.iter().zip(fitted) {
            finish(job, t);
        }
    }
}

/// `fit_target` for a tree whose leaves the leaf line search re-solves before its values are
/// used: cos(t, b(X)) and the leaf of every row in one pass, which the search needs, and no
/// fitted values (`Direction::add_to_column` adds the re-solved tree from the leaf index).
fn fit_target_leaf_search(
    ctx: &Context<'_>,
    target: &[f64],
    candidates: &Candidates,
    offset: Offset,
) -> Direction {
    let grown = grow_on_target(ctx, target, candidates, offset);
    let (leaf_of, (tb, tt, bb)) = leaf_index_and_cosine_sums(&grown, ctx.data, |i| target[i]);
    Direction {
        grown,
        values: Vec::new(),
        cos: ctx.cosine_from_sums(tb, tt, bb),
        leaf_of: Some(leaf_of),
    }
}

/// Adds `weight`·(`scale`·b(x)) for the tree `grown` on `target` to column `class` of the n × K
/// scores `f` (and, with `also` = (h, coefficient), coefficient·b(x) to the same column of h:
/// VAGBM's two sequences) in the pass that computes cos(t, b), with no vector of fitted values:
/// for a tree whose values are needed only once. Returns the tree (unscaled) and cos(t, b).
pub fn add_grown_tree(
    ctx: &Context<'_>,
    grown: GrownTree,
    target: &[f64],
    (f, class): (&mut [f64], usize),
    (weight, scale): (f64, f64),
    also: Option<(&mut [f64], f64)>,
) -> (GrownTree, f64) {
    let k = ctx.n_outputs();
    let (tb, tt, bb) = add_to_column_with_cosine_sums(
        &grown,
        ctx.data,
        (f, also),
        (k, class),
        (weight, scale),
        |i| target[i],
    );
    (grown, ctx.cosine_from_sums(tb, tt, bb))
}

/// AGBM's second tree, `grown` on column `class` of the n × K `target`, which becomes
/// target − b(X) (the carry), while column `class` of `h` (when given) gets `coef`·b(X); with no
/// vector of fitted values. Returns the tree and cos(t, b).
pub fn subtract_grown_tree(
    ctx: &Context<'_>,
    grown: GrownTree,
    target: &mut [f64],
    (h, coef): (Option<&mut [f64]>, f64),
    class: usize,
) -> (GrownTree, f64) {
    let k = ctx.n_outputs();
    let (tb, tt, bb) =
        subtract_and_add_with_cosine_sums(&grown, ctx.data, (target, h), (k, class), coef);
    (grown, ctx.cosine_from_sums(tb, tt, bb))
}

pub fn grow_on_target(
    ctx: &Context<'_>,
    target: &[f64],
    candidates: &Candidates,
    offset: Offset,
) -> GrownTree {
    // Without L2 the offset is not shrunk anyway (centring changes only the rounding).
    let mean = match offset {
        Offset::Free if ctx.params.tree.l2_leaf > 0.0 => mean_on_tree_rows(ctx, target),
        _ => 0.0,
    };
    if mean == 0.0 {
        return match ctx.w.given() {
            // Unit weights: vt = 1·t = t, and the kernel's unit-weight path needs no vector of
            // ones.
            None => grow(ctx, FitStats { vt: target, v: &[] }, candidates),
            Some(w) => {
                let mut vt = vec![0.0; target.len()];
                par_fill(&mut vt, |i| w[i] * target[i]);
                grow(ctx, FitStats { vt: &vt, v: w }, candidates)
            }
        };
    }
    let mut vt = ctx.buffers.values(target.len());
    let weights = ctx.w.given();
    par_fill(&mut vt, |i| {
        weights.map_or(1.0, |w| w[i]) * (target[i] - mean)
    });
    let v = weights.unwrap_or(&[]);
    let mut grown = grow(ctx, FitStats { vt: &vt, v }, candidates);
    ctx.buffers.recycle_values(vt);
    grown.tree.shift(mean);
    grown
}

/// t̄ = Σ w t / Σ w over the rows the tree is grown on (this iteration's sample, on every rank),
/// the root value of an unpenalised tree; 0 where it is not a finite number.
fn mean_on_tree_rows(ctx: &Context<'_>, target: &[f64]) -> f64 {
    let weights = ctx.w.given();
    let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
    let mut sums = match ctx.sample.rows() {
        None => [
            par_sum(target.len(), |i| weight(i) * target[i]),
            par_sum(target.len(), weight),
        ],
        Some(rows) => {
            let row = |j: usize| rows[j] as usize;
            [
                par_sum(rows.len(), |j| weight(row(j)) * target[row(j)]),
                par_sum(rows.len(), |j| weight(row(j))),
            ]
        }
    };
    if let Some(collective) = shared(ctx.collective) {
        // Summed in rank order: every rank gets the same t̄ and grows the same tree.
        collective.sum(&mut sums);
    }
    let mean = sums[0] / sums[1];
    if mean.is_finite() {
        mean
    } else {
        0.0
    }
}

/// The Newton tree of one output: grown on −g/h with weights w·h, where `neg_gradient` (−g) and
/// `hessian` are that output's columns at the current point (an empty `hessian`: h ≡ 1); its
/// leaves are the Newton steps −Σ w g / (Σ w h + λ_leaf).
pub fn fit_newton(
    ctx: &Context<'_>,
    neg_gradient: &[f64],
    hessian: &[f64],
    candidates: &Candidates,
) -> Direction {
    let NewtonFit { grown, weighted } = grow_newton(ctx, neg_gradient, hessian, candidates);
    let target = NewtonTarget::new(&weighted, neg_gradient, hessian);
    Direction::new(ctx, grown, |i| target.at(i))
}

/// A Newton tree, grown, with the weighted statistics it was grown on when the rows have
/// weights (`None`: −g and h themselves).
pub struct NewtonFit {
    pub grown: GrownTree,
    weighted: Option<(Vec<f64>, Vec<f64>)>,
}

/// Grows the Newton tree of `fit_newton` and bounds its leaves.
pub fn grow_newton(
    ctx: &Context<'_>,
    neg_gradient: &[f64],
    hessian: &[f64],
    candidates: &Candidates,
) -> NewtonFit {
    // vt = w·(−g), v = w·h; with unit weights these are −g and h themselves (1·x = x).
    let weighted = ctx.w.given().map(|w| {
        let n = neg_gradient.len();
        let (mut vt, mut v) = (vec![0.0; n], vec![0.0; n]);
        par_fill(&mut vt, |i| w[i] * neg_gradient[i]);
        if hessian.is_empty() {
            v.copy_from_slice(w);
        } else {
            par_fill(&mut v, |i| w[i] * hessian[i]);
        }
        (vt, v)
    });
    let target = NewtonTarget::new(&weighted, neg_gradient, hessian);
    let mut grown = grow(
        ctx,
        FitStats {
            vt: target.vt,
            v: target.v,
        },
        candidates,
    );
    let bound = ctx.params.max_leaf_value;
    if bound > 0.0 {
        let values: Vec<f64> = (grown.leaf_values().into_iter())
            .map(|v| bound_leaf(v, bound))
            .collect();
        grown.set_leaf_values(&values);
    }
    NewtonFit { grown, weighted }
}

/// The Newton tree of `fit` (grown by `grow_newton` on the same columns) added to output
/// `class` of the n × K scores `f` with weight `nu` (with no vector of fitted values); returns
/// the tree and cos(−g/h, b).
pub fn add_newton_fit(
    ctx: &Context<'_>,
    fit: NewtonFit,
    neg_gradient: &[f64],
    hessian: &[f64],
    (f, class, nu): (&mut [f64], usize, f64),
) -> (GrownTree, f64) {
    let NewtonFit { grown, weighted } = fit;
    let target = NewtonTarget::new(&weighted, neg_gradient, hessian);
    let k = ctx.n_outputs();
    let (tb, tt, bb) =
        add_to_column_with_cosine_sums(&grown, ctx.data, (f, None), (k, class), (nu, 1.0), |i| {
            target.at(i)
        });
    (grown, ctx.cosine_from_sums(tb, tt, bb))
}

/// A leaf step clipped to ±`bound` (0: no bound), as XGBoost's max_delta_step clips Newton
/// leaves: where the loss keeps falling as a leaf's value grows (a leaf of one class under the
/// logistic loss), the step is a choice, not an optimum, and the bound makes it a finite one.
pub(in crate::boost) fn bound_leaf(value: f64, bound: f64) -> f64 {
    if bound > 0.0 {
        value.clamp(-bound, bound)
    } else {
        value
    }
}

/// The Newton target −g/h = vt/v row by row, without a vector for it (a concrete type rather
/// than a `dyn Fn`, so that the per-row call inlines).
#[derive(Clone, Copy)]
struct NewtonTarget<'a> {
    vt: &'a [f64],
    /// Empty: every v is 1.
    v: &'a [f64],
}

impl<'a> NewtonTarget<'a> {
    /// The statistics a Newton tree is grown on: the `weighted` ones, when the rows have
    /// weights, else −g and h.
    fn new(
        weighted: &'a Option<(Vec<f64>, Vec<f64>)>,
        neg_gradient: &'a [f64],
        hessian: &'a [f64],
    ) -> Self {
        match weighted {
            Some((vt, v)) => NewtonTarget { vt, v },
            None => NewtonTarget {
                vt: neg_gradient,
                v: hessian,
            },
        }
    }

    #[inline]
    fn at(&self, i: usize) -> f64 {
        if self.v.is_empty() {
            self.vt[i]
        } else if self.v[i] > 0.0 {
            self.vt[i] / self.v[i]
        } else {
            0.0
        }
    }
}

/// Newton trees for every output from −∂ℓ/∂F and the Hessian diagonal at the current point
/// (n × K each).
pub fn fit_newton_all(
    ctx: &Context<'_>,
    neg_gradient: &[f64],
    hessian: &[f64],
    candidates: &Candidates,
) -> Vec<Direction> {
    let k = ctx.n_outputs();
    let (neg_gradient, hessian) = (Columns::new(neg_gradient, k), Columns::new(hessian, k));
    let mut dirs = Vec::with_capacity(k);
    for_each_output(
        ctx,
        |class| fit_newton(ctx, neg_gradient.get(class), hessian.get(class), candidates),
        |_, dir| dirs.push(dir),
    );
    dirs
}
