//! `gbm`: gradient boosting (Friedman; Alg. 1 of every paper).
//! ```text
//! F ← c0;  repeat:  r ← −∂ℓ(y, F)/∂F;  b ← fit(r);  F ← F + ν s(b)
//! ```
//! With the `newton` step the tree is grown on −g/h with weights w·h (XGBoost, LightGBM).

use super::step_rule::{apply_step_rule, fit_newton, fit_target};
use super::vectors::{axpy, par_fill};
use super::{Context, Iteration};
use crate::params::StepRule;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GbmState {
    /// F on the training rows.
    pub f: Vec<f64>,
}

pub fn step(state: &mut GbmState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    let rule = ctx.step_rule();
    let (direction, factor) = if rule == StepRule::Newton {
        (fit_newton(ctx, &state.f, candidates), 1.0)
    } else {
        let mut r = vec![0.0; state.f.len()];
        par_fill(&mut r, |i| -ctx.loss.derivative(ctx.y[i], state.f[i]));
        let mut direction = fit_target(ctx, &r, candidates);
        let factor = apply_step_rule(ctx, rule, &state.f, &mut direction);
        (direction, factor)
    };
    let nu = ctx.params.learning_rate;
    axpy(&mut state.f, nu, &direction.values);
    ctx.add_tree(direction.grown.tree, nu, 0);
    Iteration { cos: vec![direction.cos], step: nu * factor }
}
