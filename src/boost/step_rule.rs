//! The weak learner and the step rules of SPEC §2, shared by every method: fit a tree to a
//! target (or a Newton tree at a point), then size the step along it.

use super::history::cosine;
use super::vectors::par_fill;
use super::Context;
use crate::params::StepRule;
use crate::tree::{grow, Candidates, FitStats, GrownTree};

/// A fitted tree and its values b(X) on the training rows.
pub struct Direction {
    pub grown: GrownTree,
    pub values: Vec<f64>,
    /// cos(target, b(X)).
    pub cos: f64,
}

impl Direction {
    fn new(ctx: &Context<'_>, grown: GrownTree, target: &[f64]) -> Direction {
        let values = grown.fitted_values(ctx.data.n_rows());
        let cos = cosine(target, &values);
        Direction { grown, values, cos }
    }

    /// Multiplies the tree and its values by `factor`.
    pub fn scale(&mut self, factor: f64) {
        self.grown.tree.scale(factor);
        self.values.iter_mut().for_each(|v| *v *= factor);
    }
}

/// b = argmin Σ w (t − b(x))² over the allowed trees.
pub fn fit_target(ctx: &Context<'_>, target: &[f64], candidates: &Candidates) -> Direction {
    let n = target.len();
    let mut vt = vec![0.0; n];
    par_fill(&mut vt, |i| ctx.w[i] * target[i]);
    let grown = grow(ctx.data, FitStats { vt: &vt, v: ctx.w }, &ctx.params.tree, candidates);
    Direction::new(ctx, grown, target)
}

/// The Newton tree at point `f`: grown on −g/h with weights w·h; its leaves are the Newton steps
/// −Σ w g / (Σ w h + λ_leaf).
pub fn fit_newton(ctx: &Context<'_>, f: &[f64], candidates: &Candidates) -> Direction {
    let n = f.len();
    let (mut vt, mut v) = (vec![0.0; n], vec![0.0; n]);
    par_fill(&mut vt, |i| -ctx.w[i] * ctx.loss.derivative(ctx.y[i], f[i]));
    par_fill(&mut v, |i| ctx.w[i] * ctx.loss.second_derivative(ctx.y[i], f[i]));
    let grown = grow(ctx.data, FitStats { vt: &vt, v: &v }, &ctx.params.tree, candidates);
    let mut target = vec![0.0; n];
    par_fill(&mut target, |i| if v[i] > 0.0 { vt[i] / v[i] } else { 0.0 });
    Direction::new(ctx, grown, &target)
}

/// Applies a non-Newton step rule at point `f`: rescales the tree (constant, line search) or
/// re-solves its leaves (leaf line search). Returns the factor applied to the fitted tree.
pub fn apply_step_rule(ctx: &Context<'_>, rule: StepRule, f: &[f64], dir: &mut Direction) -> f64 {
    match rule {
        StepRule::Newton => 1.0,
        StepRule::Constant => {
            let rho = ctx.params.rho.unwrap_or_else(|| ctx.loss.sigma().map_or(1.0, |s| 1.0 / s));
            dir.scale(rho);
            rho
        }
        StepRule::LineSearch => {
            let gamma = ctx.loss.line_search(ctx.y, f, &dir.values, ctx.w);
            let gamma = if gamma.is_finite() { gamma } else { 0.0 };
            dir.scale(gamma);
            gamma
        }
        StepRule::LeafLineSearch => {
            for leaf in &dir.grown.leaves {
                let rows = dir.grown.leaf_rows(leaf);
                let value = ctx.loss.leaf_value(ctx.y, f, ctx.w, rows);
                dir.grown.tree.nodes[leaf.node].value = if value.is_finite() { value } else { 0.0 };
            }
            dir.grown.fitted_values_into(&mut dir.values);
            1.0
        }
    }
}
