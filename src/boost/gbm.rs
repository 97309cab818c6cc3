//! `gbm`: gradient boosting (Friedman; Alg. 1 of every paper), and `rgbm`, which is `gbm` on a
//! random candidate set (see `rgbm.rs`).
//! ```text
//! F ← c0;  repeat:  r ← −∂ℓ(y, F)/∂F;  b ← fit(r);  F ← F + ν s(b)
//! ```
//! With the `newton` step the tree is grown on −g/h with weights w·h (XGBoost, LightGBM); it is
//! the default for twice-differentiable losses, `leaf_line_search` otherwise (`rgbm`: `constant`
//! with ρ = 1/σ). For a multiclass loss one tree per class is fitted at the same F, the line
//! search is one γ along the K trees together, and the leaf line search re-solves each class's
//! leaves.

use super::outputs::{column, newton_need, Need};
use super::step_rule::{apply_step_rule, fit_newton_all, fit_target};
use super::vectors::add_column;
use super::{Context, Iteration};
use crate::params::StepRule;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GbmState {
    /// F on the training rows (n × K).
    pub f: Vec<f64>,
}

pub fn step(state: &mut GbmState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    let rule = ctx.step_rule();
    let k = ctx.n_outputs();
    // F is the output: the booster's loss pass usually has −g (and h) at F already.
    let (dirs, factor) = if rule == StepRule::Newton {
        let need = newton_need(ctx.objective);
        ctx.derivatives_at_output(&state.f, need);
        let d = &*ctx.derivs;
        let hessian: &[f64] = match need {
            Need::GradientAndHessian => &d.hessian,
            Need::Gradient => &[],
        };
        (
            fit_newton_all(ctx, &d.neg_gradient, hessian, candidates),
            1.0,
        )
    } else {
        ctx.derivatives_at_output(&state.f, Need::Gradient);
        let r = &ctx.derivs.neg_gradient;
        let mut dirs: Vec<_> = (0..k)
            .map(|class| fit_target(ctx, &column(r, class, k), candidates))
            .collect();
        let factor = apply_step_rule(ctx, rule, &state.f, &mut dirs);
        (dirs, factor)
    };
    let nu = ctx.nu();
    let cos = dirs.iter().map(|d| d.cos).collect();
    for (class, dir) in dirs.into_iter().enumerate() {
        add_column(&mut state.f, nu, &dir.values, class);
        ctx.add_tree(dir.grown.tree, nu, class);
        ctx.buffers.recycle(dir.grown.rows, dir.values);
    }
    Iteration {
        cos,
        step: nu * factor,
    }
}
