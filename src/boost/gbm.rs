//! `gbm`: gradient boosting (Friedman; Alg. 1 of every paper), and `rgbm`, which is `gbm` on a
//! random candidate set (see `rgbm.rs`).
//! ```text
//! F ← c0;  repeat:  r ← −∂ℓ(y, F)/∂F;  b ← fit(r);  F ← F + ν s(b)
//! ```
//! With the `natural` step (distributional losses) the trees are fitted to the natural
//! gradient −I(F)⁻¹g row by row, I the Fisher information, then a line search scales them
//! (NGBoost, Duan et al. 2020, Alg. 1).
//! With the `newton` step the tree is grown on −g/h with weights w·h (XGBoost, LightGBM); it is
//! the default for twice-differentiable losses, `leaf_line_search` otherwise (`rgbm`: `constant`
//! with ρ = 1/σ). For a multiclass loss one tree per class is fitted at the same F, the line
//! search is one γ along the K trees together, and the leaf line search re-solves each class's
//! leaves.

use super::fit::{
    add_grown_tree, add_newton_fit, fit_targets, for_each_output, grow_newton, grow_on_target,
    Offset,
};
use super::method::{inverse_smoothness, BoostingMethod, Iterate, MethodState, Start};
use super::outputs::{newton_need, Columns, Need};
use super::step_rule::apply_step_rule;
use super::tracked::Tracked;
use super::{Context, Iteration};
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::Loss;
use crate::params::Params;
use crate::params::StepRule;
use crate::rng::Rng;
use crate::tree::{Candidates, GrownTree};
use serde::{Deserialize, Serialize};

/// Plain gradient boosting's iterate: the output alone, so that a saved model continues it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GbmState {
    /// F on the training rows (n × K).
    pub f: Vec<f64>,
}

pub fn step(state: &mut GbmState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    let rule = ctx.step_rule();
    let nu = ctx.nu();
    // F is the output: the booster's loss pass usually has −g (and h) at F already.
    if rule == StepRule::Newton {
        return newton_step(state, ctx, candidates, nu);
    }
    ctx.derivatives_at_output(&state.f, Need::Gradient);
    if rule == StepRule::Constant {
        return constant_step(state, ctx, candidates, nu);
    }
    let natural;
    let target = if rule == StepRule::Natural {
        natural = ctx.natural_gradient(&state.f);
        &natural
    } else {
        &ctx.derivs.neg_gradient
    };
    let mut dirs = fit_targets(ctx, rule, target, candidates, Offset::Penalised);
    let factor = apply_step_rule(ctx, rule, &state.f, &mut dirs);
    let cos = dirs.iter().map(|d| d.cos).collect();
    for (class, dir) in dirs.into_iter().enumerate() {
        dir.add_to_column(&mut state.f, nu, class);
        let (tree, rows) = dir.grown.into_parts();
        ctx.add_tree(tree, nu, class);
        ctx.buffers.recycle(rows, dir.values);
    }
    Iteration {
        cos,
        step: nu * factor,
    }
}

/// The trees of one iteration with a constant step ρ, each added to F once grown (no vector of
/// fitted values), all fitted to −g at the same F.
fn constant_step(
    state: &mut GbmState,
    ctx: &mut Context<'_>,
    candidates: &Candidates,
    nu: f64,
) -> Iteration {
    let derivs = std::mem::take(ctx.derivs);
    let targets = Columns::new(&derivs.neg_gradient, ctx.n_outputs());
    let rho = ctx.rho();
    let cos = add_tree_by_tree(
        state,
        ctx,
        nu,
        |ctx, class| grow_on_target(ctx, targets.get(class), candidates, Offset::Penalised),
        |ctx, f, class, grown| {
            let target = targets.get(class);
            let (mut grown, cos) = add_grown_tree(ctx, grown, target, (f, class), (nu, rho), None);
            grown.tree.scale(rho);
            (grown, cos)
        },
    );
    drop(targets);
    *ctx.derivs = derivs;
    Iteration {
        cos,
        step: nu * rho,
    }
}

/// The Newton trees of one iteration, each added to F once grown (no vector of fitted values).
/// The trees of all classes are fitted at the same F: its derivatives are computed before any
/// tree is added.
fn newton_step(
    state: &mut GbmState,
    ctx: &mut Context<'_>,
    candidates: &Candidates,
    nu: f64,
) -> Iteration {
    let k = ctx.n_outputs();
    let need = newton_need(ctx.loss);
    ctx.derivatives_at_output(&state.f, need);
    let derivs = std::mem::take(ctx.derivs);
    let hessian: &[f64] = match need {
        Need::GradientAndHessian => &derivs.hessian,
        Need::Gradient => &[],
    };
    let (g, h) = (
        Columns::new(&derivs.neg_gradient, k),
        Columns::new(hessian, k),
    );
    let cos = add_tree_by_tree(
        state,
        ctx,
        nu,
        |ctx, class| grow_newton(ctx, g.get(class), h.get(class), candidates),
        |ctx, f, class, fit| add_newton_fit(ctx, fit, g.get(class), h.get(class), (f, class, nu)),
    );
    drop((g, h));
    *ctx.derivs = derivs;
    Iteration { cos, step: nu }
}

/// For every output: `grow(ctx, class)` grows its tree (classes side by side, see
/// `for_each_output`), then `add(ctx, F, class, grown)` adds it to F (n × K), class by class in
/// order; the tree joins the model with weight `nu`. Returns each tree's cos(target, b).
fn add_tree_by_tree<G: Send>(
    state: &mut GbmState,
    ctx: &mut Context<'_>,
    nu: f64,
    grow: impl Fn(&Context<'_>, usize) -> G + Sync,
    add: impl Fn(&Context<'_>, &mut [f64], usize, G) -> (GrownTree, f64),
) -> Vec<f64> {
    let mut added = Vec::with_capacity(ctx.n_outputs());
    for_each_output(
        ctx,
        |class| grow(ctx, class),
        |class, grown| {
            let (grown, cos) = add(ctx, &mut state.f, class, grown);
            let (tree, rows) = grown.into_parts();
            ctx.buffers.grow().recycle(rows);
            added.push((tree, cos));
        },
    );
    added
        .into_iter()
        .enumerate()
        .map(|(class, (tree, cos))| {
            ctx.add_tree(tree, nu, class);
            cos
        })
        .collect()
}

/// `gbm` (docs/algorithms.md §4.1): Newton steps where the loss has a smoothness constant (it is
/// twice differentiable), the leaf line search otherwise.
pub struct Gbm;

impl BoostingMethod for Gbm {
    fn step_rules(&self) -> &'static [StepRule] {
        &[
            StepRule::Constant,
            StepRule::LineSearch,
            StepRule::LeafLineSearch,
            StepRule::Newton,
            StepRule::Natural,
        ]
    }
    fn default_step_rule(&self, newton: bool) -> StepRule {
        if newton {
            StepRule::Newton
        } else {
            StepRule::LeafLineSearch
        }
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
        Some(1)
    }
    fn starts_from_output(&self) -> bool {
        true
    }
    fn candidates(&self, _params: &Params, _data: &BinnedData, _rng: &mut Rng) -> Candidates {
        Candidates::All
    }
    fn start(&self, _params: &Params, _loss: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        Ok(MethodState::Gbm(GbmState {
            f: start.train.to_vec(),
        }))
    }
}

impl Iterate for GbmState {
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
        MethodState::Gbm(self.clone())
    }
}
