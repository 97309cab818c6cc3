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
//! all enter the model with the same weight η_t · step. For a multiclass loss each class's
//! gradient column is projected the same way (k_t trees per class).

use super::fit::{fit_target, Direction};
use super::method::{inverse_smoothness, BoostingMethod, Iterate, MethodState, Start};
use super::outputs::{column, Need};
use super::tracked::Tracked;
use super::vectors::{add_column, axpy};
use super::{Context, Iteration};
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::Loss;
use crate::params::{Params, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

/// repeated_gbm's iterate: the output and the inner count, which a model file does not hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedState {
    /// F on the training rows (n × K).
    pub f: Vec<f64>,
}

pub fn step(
    state: &mut RepeatedState,
    ctx: &mut Context<'_>,
    candidates: &Candidates,
) -> Iteration {
    let k = ctx.n_outputs();
    let inner = ctx.iteration.min(ctx.params.max_inner);
    // F is the output: the booster's loss pass usually has −g at F already. Its buffer serves
    // as `remaining` and goes back to the booster afterwards.
    ctx.derivatives_at_output(&state.f, Need::Gradient);
    let mut remaining = std::mem::take(&mut ctx.derivs.neg_gradient);
    let mut direction = vec![0.0; state.f.len()];
    // (class, fitted tree) in fitting order.
    let mut trees: Vec<(usize, Direction)> = Vec::with_capacity(inner * k);
    for class in 0..k {
        for _ in 0..inner {
            let fit = fit_target(ctx, &column(&remaining, class, k), candidates);
            if fit.values.iter().all(|&v| v == 0.0) {
                break;
            }
            add_column(&mut direction, 1.0, &fit.values, class);
            add_column(&mut remaining, -1.0, &fit.values, class);
            trees.push((class, fit));
        }
    }
    let factor = match ctx.step_rule() {
        StepRule::LineSearch => ctx.line_search(&state.f, &direction),
        StepRule::Constant => ctx.rho(),
        StepRule::LeafLineSearch | StepRule::Newton | StepRule::Natural => {
            unreachable!("Params::validate rejects step rules outside RepeatedGbm::step_rules")
        }
    };
    let step = ctx.nu() * factor;
    axpy(&mut state.f, step, &direction);
    ctx.derivs.neg_gradient = remaining;
    let cos = trees.iter().map(|(_, t)| t.cos).collect();
    for (class, fit) in trees {
        let (tree, rows) = fit.grown.into_parts();
        ctx.add_tree(tree, step, class);
        ctx.buffers.recycle(rows, fit.values);
    }
    Iteration { cos, step }
}

/// `repeated_gbm` (docs/algorithms.md §4.5): the direction is a sum of trees, so it has no single
/// partition for the leaf line search or Newton leaves.
pub struct RepeatedGbm;

impl BoostingMethod for RepeatedGbm {
    fn step_rules(&self) -> &'static [StepRule] {
        &[StepRule::Constant, StepRule::LineSearch]
    }
    fn default_step_rule(&self, _newton: bool) -> StepRule {
        StepRule::Constant
    }
    fn default_rho(&self, sigma: Option<f64>, _lambda: f64) -> f64 {
        inverse_smoothness(sigma)
    }
    fn supports_multiclass(&self) -> bool {
        true
    }
    fn has_momentum(&self) -> bool {
        false
    }
    fn uses_prox(&self) -> bool {
        false
    }
    fn trees_per_iteration(&self) -> Option<usize> {
        None
    }
    fn starts_from_output(&self) -> bool {
        true
    }
    fn candidates(&self, _params: &Params, _data: &BinnedData, _rng: &mut Rng) -> Candidates {
        Candidates::All
    }
    fn start(&self, _params: &Params, _loss: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        Ok(MethodState::Repeated(RepeatedState {
            f: start.train.to_vec(),
        }))
    }
}

impl Iterate for RepeatedState {
    fn step(&mut self, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
        step(self, ctx, candidates)
    }
    fn output(&self) -> &[f64] {
        &self.f
    }
    fn output_tracked(&self) -> Option<&Tracked> {
        None
    }
    fn momentum_active(&self) -> bool {
        false
    }
    fn restart_momentum(&mut self) {}
    fn restart_point(&self) -> MethodState {
        MethodState::Repeated(self.clone())
    }
}
