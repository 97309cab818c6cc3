//! The weak learner and the step rules of SPEC §2, shared by every method: fit a tree to a
//! target (or a Newton tree at a point), then size the step along it.

use super::history::cosine;
use super::vectors::par_fill;
use super::Context;
use crate::loss::Loss;
use crate::params::{Method, StepRule};
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
            let rho = ctx.rho();
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

/// The step rule a method uses when the user names none:
/// - `gbm`: `newton` for twice-differentiable losses (σ known), `leaf_line_search` otherwise;
/// - `rgbm`: `constant` with ρ = 1/σ (Lu & Mazumder's theory);
/// - `agbm`, `agbmr`, `vagbm`: `constant` (the papers' fixed step η);
/// - the §3.4 family (`proximal`, `residual_*`, `accelerated_*`): `leaf_line_search`, the multiple
///   line search of Alg. 5 and the authors' code;
/// - `repeated_gbm`: `constant` (Grubb & Bagnell's step schedule η_t).
pub fn default_step_rule(method: Method, loss: &dyn Loss) -> StepRule {
    match method {
        Method::Gbm if loss.sigma().is_some() => StepRule::Newton,
        Method::Gbm => StepRule::LeafLineSearch,
        Method::Rgbm | Method::Agbm | Method::Agbmr | Method::Vagbm | Method::RepeatedGbm => StepRule::Constant,
        Method::Proximal
        | Method::ResidualProximal
        | Method::AcceleratedProximal
        | Method::ResidualGbm
        | Method::AcceleratedGbm => StepRule::LeafLineSearch,
    }
}

/// ρ of the `constant` rule when the user gives none: 1 for the AGBM family (the step is then the
/// papers' η = learning_rate); λ for the proximal methods (Alg. 2 steps `f + λ g`, which reaches
/// the proximal point exactly when the tree fits the direction exactly); 1/σ otherwise (RGBM's
/// theory), or 1 for a non-smooth loss.
pub fn default_rho(method: Method, loss: &dyn Loss, lambda: f64) -> f64 {
    match method {
        Method::Agbm | Method::Agbmr | Method::Vagbm => 1.0,
        Method::Proximal | Method::ResidualProximal | Method::AcceleratedProximal => lambda,
        _ => loss.sigma().map_or(1.0, |s| 1.0 / s),
    }
}
