//! The proximal-boosting meta-algorithm (Fouillen, Boyer, Sangnier, Alg. 5 and 8) with its three
//! switches, which gives `proximal` (Alg. 2), `residual_proximal` (Alg. 3),
//! `accelerated_proximal` (Alg. 4/8) and, with the gradient direction, `residual_gbm`
//! (Grubb & Bagnell Alg. 3) and `accelerated_gbm` (Biau et al.):
//! ```text
//! x ← v ← c0 ; Δ ← 0 ; β ← 1
//! repeat:
//!     r ← direction at v      proximal: (prox_{λℓ(y,·)}(v) − v)/λ ;  gradient: −∂ℓ(y, v)
//!     b ← fit(r + Δ)
//!     Δ ← r + Δ − b(X)        if residual, else 0
//!     x_new ← v + ν s(b)      (step rule, docs/algorithms.md §3, at v)
//!     accelerated: β_new ← (1 + √(1+4β²))/2 ; α ← (β − 1)/β_new ; v ← x_new + α (x_new − x) ; β ← β_new
//!     otherwise:   v ← x_new
//!     x ← x_new
//! output x
//! ```
//! FISTA's sequence starts at β₁ = 1 (β₀ = 0 of the paper's eq. (1) already applied), so the first
//! momentum coefficient is 0, as Property 7 states and the authors' code does; starting the
//! pseudo-code above at β = 0 would give α = −1 and undo the first step.
//!
//! Defaults: step rule `leaf_line_search` (the "multiple line search" of the paper's §5; for
//! `accelerated_gbm`, `newton` where gbm defaults to it); with
//! `constant`, ρ = λ for the proximal direction (Alg. 2's `f + λ g`) and 1/σ (or 1) for the
//! gradient one. The line searches run at v, the point the step starts from (the authors' code;
//! Alg. 8 line 8 writes f_t). Newton steps are allowed for `accelerated_gbm` only: there the target
//! is the gradient at v. x and v are `Tracked` sequences, so tree weights follow Property 8:
//! `w ← (w − w_prev)(1 + α) + w_prev` plus the new tree at ν·step.

use super::fit::{fit_newton_all, fit_targets, Offset};
use super::method::{inverse_smoothness, BoostingMethod, Iterate, MethodState, Start};
use super::outputs::Need;
use super::step_rule::apply_step_rule;
use super::tracked::Tracked;
use super::vectors::axpy;
use super::{Context, Iteration};
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::Loss;
use crate::params::{Params, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

/// The direction a proximal-family step fits its tree to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DirectionKind {
    /// −∂ℓ(y, z)
    Gradient,
    /// (prox_{λℓ(y,·)}(z) − z) / λ
    Proximal,
}

/// The three switches of Alg. 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switches {
    /// Gradient or proximal direction.
    pub direction: DirectionKind,
    /// Carry the projection error Δ into the next direction (the residual variants).
    pub residual: bool,
    /// Nesterov momentum (accelerated variants).
    pub accelerated: bool,
}

/// The proximal family's iterate (Alg. 5): one state for its six variants, set by switches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaState {
    /// Which variant this is.
    pub switches: Switches,
    /// The output sequence x.
    pub x: Tracked,
    /// The interpolated point v (accelerated only; otherwise v = x).
    pub v: Option<Tracked>,
    /// The carried projection error Δ, n × K (residual only; empty before the first iteration).
    pub delta: Vec<f64>,
    /// FISTA's β_t.
    pub beta: f64,
}

impl MetaState {
    /// The state at `start`, before the first iteration.
    pub fn new(switches: Switches, start: Tracked) -> MetaState {
        let v = switches.accelerated.then(|| start.clone());
        MetaState {
            switches,
            x: start,
            v,
            delta: Vec::new(),
            beta: 1.0,
        }
    }
}

impl MetaState {
    /// Forgets the momentum: v ← x and β ← 1, so the next step starts from x with α = 0.
    pub fn restart(&mut self) {
        if self.switches.accelerated {
            self.v = Some(self.x.clone());
            self.beta = 1.0;
        }
    }

    /// Whether the next step starts from a point other than x (α of the last step ≠ 0): with
    /// α = 0 the interpolation v ← (1 + α) x_new − α x gives x_new's weights exactly.
    pub fn momentum_active(&self) -> bool {
        self.v.as_ref().is_some_and(|v| v.weights != self.x.weights)
    }
}

pub fn step(state: &mut MetaState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    let switches = state.switches;
    let point = state.v.as_ref().unwrap_or(&state.x);
    let rule = ctx.step_rule();

    let (dirs, factor) = if rule == StepRule::Newton {
        let (g, h) = (
            ctx.negative_gradient(&point.train),
            ctx.hessian(&point.train),
        );
        let dirs = fit_newton_all(ctx, &g, &h, candidates);
        ctx.buffers.recycle_values(g);
        ctx.buffers.recycle_values(h);
        (dirs, 1.0)
    } else {
        // Without momentum the point is the output x, where the booster's loss pass usually has
        // −g already; its buffer becomes the target (and Δ).
        let from_output = switches.direction == DirectionKind::Gradient && !switches.accelerated;
        let mut target = match switches.direction {
            DirectionKind::Gradient if from_output => {
                ctx.derivatives_at_output(&point.train, Need::Gradient);
                std::mem::take(&mut ctx.derivs.neg_gradient)
            }
            DirectionKind::Gradient => ctx.negative_gradient(&point.train),
            DirectionKind::Proximal => ctx.prox_directions(&point.train, ctx.params.lambda),
        };
        if switches.residual && !state.delta.is_empty() {
            axpy(&mut target, 1.0, &state.delta);
        }
        // The prox direction is not centred, even at the loss's constant optimum (docs/algorithms.md
        // §4.4): its trees leave the mean out of the L2 penalty.
        let offset = match switches.direction {
            DirectionKind::Proximal => Offset::Free,
            DirectionKind::Gradient => Offset::Penalised,
        };
        let mut dirs = fit_targets(ctx, rule, &target, candidates, offset);
        if switches.residual {
            // Δ ← (r + Δ) − b(X), with b the least-squares fit, before any step rule rescales it.
            for (class, dir) in dirs.iter().enumerate() {
                dir.add_to_column(&mut target, -1.0, class);
            }
            let old_delta = std::mem::replace(&mut state.delta, target);
            if from_output {
                // The old Δ's buffer takes the gradient's place, for the next loss pass.
                ctx.derivs.neg_gradient = old_delta;
            } else if !old_delta.is_empty() {
                ctx.buffers.recycle_values(old_delta);
            }
        } else {
            ctx.buffers.recycle_values(target);
        }
        let factor = apply_step_rule(ctx, rule, &point.train, &mut dirs);
        (dirs, factor)
    };
    let cos = dirs.iter().map(|d| d.cos).collect();
    let nu = ctx.nu();
    // x_new ← point + ν·trees in the point's buffers (v, or x without momentum): the point is
    // not needed afterwards.
    let mut x_new = match state.v.take() {
        Some(v) => v,
        None => std::mem::take(&mut state.x),
    };
    for (class, mut dir) in dirs.into_iter().enumerate() {
        // The step rule already scaled the tree, so its weight is ν.
        dir.add_to_column(&mut x_new.train, nu, class);
        ctx.buffers.recycle_values(std::mem::take(&mut dir.values));
        let tree = ctx.store_grown(dir.grown, class);
        x_new.add_tree_off_train(&tree, nu);
    }
    if switches.accelerated {
        let beta_new = (1.0 + (1.0 + 4.0 * state.beta * state.beta).sqrt()) / 2.0;
        let alpha = (state.beta - 1.0) / beta_new;
        // v ← (1 + α) x_new − α x, in the old x's buffers.
        let mut v = std::mem::take(&mut state.x);
        v.affine_from(1.0 + alpha, &x_new, -alpha);
        state.v = Some(v);
        state.beta = beta_new;
    }
    state.x = x_new;
    ctx.publish(&state.x);
    Iteration {
        cos,
        step: nu * factor,
    }
}

/// A method of the proximal family (docs/algorithms.md §4.4): the meta-algorithm with its
/// switches.
pub struct MetaMethod(Switches);

pub const PROXIMAL: MetaMethod = MetaMethod(Switches {
    direction: DirectionKind::Proximal,
    residual: false,
    accelerated: false,
});
pub const RESIDUAL_PROXIMAL: MetaMethod = MetaMethod(Switches {
    direction: DirectionKind::Proximal,
    residual: true,
    accelerated: false,
});
pub const ACCELERATED_PROXIMAL: MetaMethod = MetaMethod(Switches {
    direction: DirectionKind::Proximal,
    residual: false,
    accelerated: true,
});
pub const RESIDUAL_GBM: MetaMethod = MetaMethod(Switches {
    direction: DirectionKind::Gradient,
    residual: true,
    accelerated: false,
});
pub const ACCELERATED_GBM: MetaMethod = MetaMethod(Switches {
    direction: DirectionKind::Gradient,
    residual: false,
    accelerated: true,
});

impl BoostingMethod for MetaMethod {
    /// `newton` needs the fitted target to be the gradient at the point the step starts from:
    /// the gradient direction without a carried residual.
    fn step_rules(&self) -> &'static [StepRule] {
        let Switches {
            direction,
            residual,
            ..
        } = self.0;
        match (direction, residual) {
            (DirectionKind::Gradient, false) => &[
                StepRule::Constant,
                StepRule::LineSearch,
                StepRule::LeafLineSearch,
                StepRule::Newton,
            ],
            (DirectionKind::Gradient, true) | (DirectionKind::Proximal, _) => &[
                StepRule::Constant,
                StepRule::LineSearch,
                StepRule::LeafLineSearch,
            ],
        }
    }
    /// The papers' multiple line search, except for `accelerated_gbm` on a loss that gbm fits
    /// with Newton trees: it then takes gbm's rule too, so that the momentum is the only
    /// difference between the two (docs/algorithms.md §4.4).
    fn default_step_rule(&self, newton: bool) -> StepRule {
        if newton && self.step_rules().contains(&StepRule::Newton) {
            StepRule::Newton
        } else {
            StepRule::LeafLineSearch
        }
    }
    /// λ for the proximal direction (Alg. 2 steps f + λ g, which reaches the proximal point when
    /// the tree fits the direction exactly); 1/σ for the gradient one.
    fn default_rho(&self, sigma: Option<f64>, lambda: f64) -> f64 {
        match self.0.direction {
            DirectionKind::Proximal => lambda,
            DirectionKind::Gradient => inverse_smoothness(sigma),
        }
    }
    fn supports_multiclass(&self) -> bool {
        true
    }
    fn has_momentum(&self) -> bool {
        self.0.accelerated
    }
    fn uses_prox(&self) -> bool {
        self.0.direction == DirectionKind::Proximal
    }
    fn trees_per_iteration(&self) -> Option<usize> {
        Some(1)
    }
    fn starts_from_output(&self) -> bool {
        self.0.direction == DirectionKind::Gradient && !self.0.accelerated
    }
    fn candidates(&self, _params: &Params, _data: &BinnedData, _rng: &mut Rng) -> Candidates {
        Candidates::All
    }
    fn start(&self, _params: &Params, _loss: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        Ok(MethodState::Meta(MetaState::new(self.0, start.tracked())))
    }
}

impl Iterate for MetaState {
    fn step(&mut self, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
        step(self, ctx, candidates)
    }
    fn output(&self) -> &[f64] {
        &self.x.train
    }
    fn output_tracked(&self) -> Option<&Tracked> {
        Some(&self.x)
    }
    fn momentum_active(&self) -> bool {
        MetaState::momentum_active(self)
    }
    fn restart_momentum(&mut self) {
        self.restart()
    }
    fn restart_point(&self) -> MethodState {
        // The restart sets v from x (accelerated), and keeps the residual's Δ.
        MethodState::Meta(MetaState {
            x: self.x.par_clone(),
            v: None,
            delta: self.delta.clone(),
            ..*self
        })
    }
}
