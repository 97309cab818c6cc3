//! `repeated_gbm`: Grubb & Bagnell's repeated gradient projection (Alg. 2). At iteration t the
//! gradient is projected onto the trees by up to k_t = min(t, max_inner) least-squares fits in
//! a row, each to what the previous ones left, and the sum is one descent direction:
//! ```text
//! F ← c0
//! for t = 1, 2, …:
//!     r ← −∂ℓ(y, F) ;  d ← 0
//!     repeat k_t times:  b ← fit(r) ;  d ← d + b(X) ;  r ← r − b(X)
//!     F ← F + η_t s(d)
//! ```
//! For a least-squares tree ⟨b, r⟩ = ‖b‖², so the paper's projection coefficient is 1. The inner
//! loop stops early once a fit explains nothing (a zero tree). Step rules: `constant` (default,
//! ρ = 1/σ or 1) and `line_search` along d; η_t = learning_rate, or learning_rate/√t with
//! `schedule = "inv_sqrt"` (the paper's schedule for non-smooth losses). The direction's trees
//! all enter the model with the same weight η_t · step.

use super::step_rule::{fit_target, Direction};
use super::vectors::{axpy, par_fill};
use super::{Context, Iteration};
use crate::params::StepRule;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedState {
    /// F on the training rows.
    pub f: Vec<f64>,
}

pub fn step(state: &mut RepeatedState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    let n = state.f.len();
    let inner = ctx.iteration.min(ctx.params.max_inner);
    let mut remaining = vec![0.0; n];
    par_fill(&mut remaining, |i| -ctx.loss.derivative(ctx.y[i], state.f[i]));
    let mut direction = vec![0.0; n];
    let mut trees: Vec<Direction> = Vec::with_capacity(inner);
    for _ in 0..inner {
        let fit = fit_target(ctx, &remaining, candidates);
        if fit.values.iter().all(|&v| v == 0.0) {
            break;
        }
        axpy(&mut direction, 1.0, &fit.values);
        axpy(&mut remaining, -1.0, &fit.values);
        trees.push(fit);
    }
    let factor = match ctx.step_rule() {
        StepRule::LineSearch => {
            let gamma = ctx.loss.line_search(ctx.y, &state.f, &direction, ctx.w);
            if gamma.is_finite() { gamma } else { 0.0 }
        }
        _ => ctx.rho(),
    };
    let step = ctx.nu() * factor;
    axpy(&mut state.f, step, &direction);
    let cos = trees.iter().map(|t| t.cos).collect();
    for tree in trees {
        ctx.add_tree(tree.grown.tree, step, 0);
    }
    Iteration { cos, step }
}
