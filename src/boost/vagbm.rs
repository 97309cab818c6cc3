//! `vagbm`: vanilla accelerated gradient boosting (Lu et al., Alg. 4; = Biau et al.'s accelerated
//! GBM). One tree per iteration, fitted to the gradient at g, drives both sequences:
//! ```text
//! f ← h ← c0
//! for m = 0, 1, …:
//!     θ ← 2/(m+2) ;  g ← (1−θ) f + θ h ;  r ← −∂ℓ(y, g)/∂g ;  b ← fit(r)
//!     f ← g + η b ;  h ← h + (η/θ) b
//! output f
//! ```
//! Kept faithful on purpose: the momentum amplifies the weak learner's error and the method may
//! diverge (the AGBM paper's §5.1) when the safeguard is off (`safeguard = "none"`); divergence
//! is detected by the booster, which keeps the best iterate. With `safeguard = "restart"` the
//! booster rejects an iteration that raised the training loss and restarts the momentum. γ is not used (Alg. 4 has none). Step rule: `constant`, η = learning_rate · ρ (ρ = 1/σ
//! unless given, as for AGBM).

use super::agbm::momentum_point;
use super::fit::{add_grown_tree, for_each_output, grow_on_target, Offset};
use super::method::{inverse_smoothness, BoostingMethod, Iterate, MethodState, Start};
use super::outputs::Columns;
use super::tracked::Tracked;
use super::{Context, Iteration};
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::Loss;
use crate::params::{Params, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

/// VAGBM's iterate: its two sequences and the momentum counter, which a restart resets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VagbmState {
    /// The output sequence.
    pub f: Tracked,
    /// The auxiliary sequence momentum extrapolates from.
    pub h: Tracked,
    /// Iterations since the momentum last restarted (the m of the recursion).
    pub m: usize,
}

impl VagbmState {
    /// Forgets the momentum: h ← f and m ← 0, so the next iteration is a plain gradient step.
    pub fn restart(&mut self) {
        self.h = self.f.clone();
        self.m = 0;
    }

    /// Whether the next iteration uses momentum (θ < 1, so g ≠ f).
    pub fn momentum_active(&self) -> bool {
        self.m > 0
    }
}

pub fn step(state: &mut VagbmState, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
    let m = state.m as f64;
    let theta = 2.0 / (m + 2.0);
    let mut r = ctx.buffers.values(state.f.train.len());
    // g ← (1−θ) f + θ h in f's buffers (f's old value is not needed again: f ← g + η b) and
    // r ← −∂ℓ(y, g), in one pass.
    momentum_point((&mut state.f, &state.h), ctx, theta, (&mut r, None), 0.0);
    // With K outputs (a multiclass loss), one tree per output, as gbm does, grown side by side;
    // each added to f and h in the pass that computes its cosine (the trees' targets do not
    // depend on f or h).
    let k = ctx.n_outputs();
    let eta = ctx.params.learning_rate * ctx.rho();
    let targets = Columns::new(&r, k);
    let mut trees = Vec::with_capacity(k);
    for_each_output(
        ctx,
        |class| grow_on_target(ctx, targets.get(class), candidates, Offset::Penalised),
        |class, grown| {
            let f = (&mut state.f.train[..], class);
            let h = Some((&mut state.h.train[..], eta / theta));
            let target = targets.get(class);
            trees.push(add_grown_tree(ctx, grown, target, f, (eta, 1.0), h));
        },
    );
    drop(targets);
    let cos = trees.iter().map(|(_, cos)| *cos).collect();
    for (class, (b, _)) in trees.into_iter().enumerate() {
        let b = ctx.store_grown(b, class);
        state.f.add_tree_off_train(&b, eta);
        state.h.add_tree_off_train(&b, eta / theta);
    }
    ctx.buffers.recycle_values(r);
    state.m += 1;
    ctx.publish(&state.f);
    Iteration { cos, step: eta }
}

/// `vagbm` (docs/algorithms.md §4.3): a fixed step η, ρ = 1/σ.
pub struct Vagbm;

impl BoostingMethod for Vagbm {
    fn step_rules(&self) -> &'static [StepRule] {
        &[StepRule::Constant]
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
        true
    }
    fn uses_prox(&self) -> bool {
        false
    }
    fn trees_per_iteration(&self) -> Option<usize> {
        Some(1)
    }
    fn starts_from_output(&self) -> bool {
        false
    }
    fn candidates(&self, _params: &Params, _data: &BinnedData, _rng: &mut Rng) -> Candidates {
        Candidates::All
    }
    fn start(&self, _params: &Params, _loss: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        Ok(MethodState::Vagbm(VagbmState {
            f: start.tracked(),
            h: start.tracked(),
            m: 0,
        }))
    }
}

impl Iterate for VagbmState {
    fn step(&mut self, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration {
        step(self, ctx, candidates)
    }
    fn output(&self) -> &[f64] {
        &self.f.train
    }
    fn output_tracked(&self) -> Option<&Tracked> {
        Some(&self.f)
    }
    fn momentum_active(&self) -> bool {
        VagbmState::momentum_active(self)
    }
    fn restart_momentum(&mut self) {
        self.restart()
    }
    fn restart_point(&self) -> MethodState {
        MethodState::Vagbm(VagbmState {
            f: self.f.par_clone(),
            h: Tracked::default(),
            m: self.m,
        })
    }
}
