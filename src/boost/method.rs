//! The method as the unit of extension. Each method file (`gbm.rs`, `rgbm.rs`, `agbm.rs`,
//! `vagbm.rs`, `proximal.rs`, `projection.rs`) declares, through [`BoostingMethod`], everything
//! the rest of the crate needs to know about its methods — the step rules it accepts, its default
//! step rule and ρ, multiclass support, momentum, whether an iteration starts from its output,
//! the split candidates of an iteration and its starting state — and, through [`Iterate`], what
//! its state does in one iteration (docs/algorithms.md §4).
//!
//! Adding a method: a new file with its state and the two implementations, a `Method` name in
//! params.rs, one line in [`method`] and, for a new state type, one line in `method_states!`.
//! Every dispatch below is an exhaustive `match`: the compiler names any case left out.
//! docs/adding_a_method.md walks through it.

use super::context::Context;
use super::tracked::Tracked;
use super::{agbm, gbm, projection, proximal, rgbm, vagbm};
use super::{AgbmState, GbmState, MetaState, RepeatedState, VagbmState};
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::{Loss, LossSpec, Task};
use crate::params::{Method, Params, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;
use serde::{Deserialize, Serialize};

/// What the booster and the parameter checks need to know about one public method.
pub(crate) trait BoostingMethod: Sync {
    /// The step rules that make sense for the method (docs/algorithms.md §3–4).
    fn step_rules(&self) -> &'static [StepRule];
    /// The step rule when the user names none; `newton`: the loss's `Loss::newton_by_default`.
    fn default_step_rule(&self, newton: bool) -> StepRule;
    /// ρ of the `constant` rule when the user gives none.
    fn default_rho(&self, sigma: Option<f64>, lambda: f64) -> f64;
    /// Whether it runs with a multiclass loss (K trees per fitted target).
    fn supports_multiclass(&self) -> bool;
    /// Whether its output mixes old iterates (Nesterov momentum), so old tree weights change.
    fn has_momentum(&self) -> bool;
    /// Whether its direction is the per-row proximal step (which needs a separable loss).
    fn uses_prox(&self) -> bool;
    /// The trees it fits per output in one iteration; `None` when that varies with the
    /// iteration (`repeated_gbm`'s inner fits).
    fn trees_per_iteration(&self) -> Option<usize>;
    /// Whether each iteration starts with the gradient at the output, which the booster's loss
    /// pass then computes on the way (`Booster::output_need`).
    fn starts_from_output(&self) -> bool;
    /// The split candidates of this iteration's trees (RGBM's random sets; all for the others).
    fn candidates(&self, params: &Params, data: &BinnedData, rng: &mut Rng) -> Candidates;
    /// The state before the first iteration, every sequence at `start`.
    fn start(&self, params: &Params, loss: &dyn Loss, start: Start<'_>) -> Result<MethodState>;
}

/// The rules of `name`: the registry of methods.
pub(crate) fn method(name: Method) -> &'static dyn BoostingMethod {
    match name {
        Method::Gbm => &gbm::Gbm,
        Method::Rgbm => &rgbm::Rgbm,
        Method::Agbm => &agbm::Agbm,
        Method::Agbmr => &agbm::Agbm,
        Method::Vagbm => &vagbm::Vagbm,
        Method::Proximal => &proximal::PROXIMAL,
        Method::ResidualProximal => &proximal::RESIDUAL_PROXIMAL,
        Method::AcceleratedProximal => &proximal::ACCELERATED_PROXIMAL,
        Method::ResidualGbm => &proximal::RESIDUAL_GBM,
        Method::AcceleratedGbm => &proximal::ACCELERATED_GBM,
        Method::RepeatedGbm => &projection::RepeatedGbm,
        #[cfg(test)]
        Method::Toy => &super::toy::Toy,
    }
}

/// The public face of the registry: what `Params::validate` and users ask of a method name.
impl Method {
    /// The step rules that make sense for the method (docs/algorithms.md §3–4).
    pub fn step_rules(&self) -> &'static [StepRule] {
        method(*self).step_rules()
    }
    /// Whether the method runs with a multiclass loss.
    pub fn supports_multiclass(&self) -> bool {
        method(*self).supports_multiclass()
    }
    /// Methods whose output mixes old iterates (Nesterov momentum): old tree weights change.
    pub fn has_momentum(&self) -> bool {
        method(*self).has_momentum()
    }
    /// Methods whose direction is the per-row proximal step (the proximal family's
    /// `proximal`, `residual_proximal`, `accelerated_proximal`).
    pub fn uses_prox(&self) -> bool {
        method(*self).uses_prox()
    }
    /// The trees fitted per output in one iteration; `None` when that varies.
    pub fn trees_per_iteration(&self) -> Option<usize> {
        method(*self).trees_per_iteration()
    }
}

/// ρ = 1/σ, the constant step of RGBM's and AGBM's theory; 1 for a loss without a smoothness
/// constant.
pub(crate) fn inverse_smoothness(sigma: Option<f64>) -> f64 {
    sigma.map_or(1.0, |s| 1.0 / s)
}

/// The starting point of every sequence: the initial constant (plus offsets) on the training
/// rows (n × K) and on the validation rows.
#[derive(Clone, Copy)]
pub(crate) struct Start<'a> {
    pub train: &'a [f64],
    pub valid: Option<&'a [f64]>,
    /// σ for the default constant step (`Loss::sigma_from` at the start).
    pub sigma: Option<f64>,
}

impl Start<'_> {
    /// A sequence tracked on the training rows, the validation rows and the tree weights.
    pub fn tracked(&self) -> Tracked {
        Tracked {
            train: self.train.to_vec(),
            valid: self.valid.map(<[f64]>::to_vec),
            weights: Vec::new(),
        }
    }
}

/// What a method's state does between and during iterations.
pub(crate) trait Iterate {
    /// One iteration (docs/algorithms.md §4): fit its trees, add them to the model, move the
    /// sequences.
    fn step(&mut self, ctx: &mut Context<'_>, candidates: &Candidates) -> Iteration;
    /// The output sequence on the training rows (the model's predictions).
    fn output(&self) -> &[f64];
    /// The output sequence with its tree weights, for methods whose weights change (momentum).
    fn output_tracked(&self) -> Option<&Tracked>;
    /// Whether the next iteration uses momentum (it is not a plain step from the output).
    fn momentum_active(&self) -> bool;
    /// Forgets the momentum, keeping the output.
    fn restart_momentum(&mut self);
    /// The state to fall back on if the next step is rejected: a copy of what
    /// `restart_momentum` keeps. The momentum sequences, which the restart that follows a
    /// rejection overwrites, are left out: copying them took about 7% of AGBM's iteration at
    /// 1M rows.
    fn restart_point(&self) -> MethodState;
}

/// What one iteration of a method reports besides the losses the booster computes.
pub struct Iteration {
    pub cos: Vec<f64>,
    pub step: f64,
}

/// Declares the method states: the serialisable enum a checkpoint holds, and its dispatch to
/// [`Iterate`].
macro_rules! method_states {
    ($($(#[$doc:meta])* $variant:ident($state:ty)),+ $(,)?) => {
        /// The method's own state (docs/algorithms.md §4): prediction vectors on the training rows
        /// and whatever its recursion carries.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub enum MethodState {
            $($(#[$doc])* $variant($state)),+
        }

        impl MethodState {
            pub(crate) fn iterate(&self) -> &dyn Iterate {
                match self {
                    $(MethodState::$variant(state) => state),+
                }
            }
            pub(crate) fn iterate_mut(&mut self) -> &mut dyn Iterate {
                match self {
                    $(MethodState::$variant(state) => state),+
                }
            }
        }
    };
}

method_states! {
    /// `gbm` and `rgbm` (which only restricts the candidates).
    Gbm(GbmState),
    /// `agbm`, `agbmr`.
    Agbm(AgbmState),
    /// `vagbm`.
    Vagbm(VagbmState),
    /// The proximal meta-algorithm: `proximal`, `residual_proximal`, `accelerated_proximal`,
    /// `residual_gbm`, `accelerated_gbm`.
    Meta(MetaState),
    /// `repeated_gbm`.
    Repeated(RepeatedState),
}

/// The step the booster will take, resolved from the parameters: what the user named, or the
/// method's defaults for the loss.
impl Params {
    /// The step rule in force (`step`, or the method's default for the loss's smoothness) and ρ
    /// of the `constant` rule (`rho`, or the method's default; None when that default is set
    /// from the data, for the losses of `LossSpec::sigma_from_data`). Validates the parameters
    /// first.
    ///
    /// ```
    /// use optboost::{Params, StepRule};
    ///
    /// let mut params = Params::default();
    /// params.set("method", "rgbm")?.set("loss", "logistic")?;
    /// assert_eq!(params.step_in_force()?, (StepRule::Constant, Some(4.0))); // ρ = 1/σ, σ = 1/4
    /// # Ok::<(), optboost::Error>(())
    /// ```
    pub fn step_in_force(&self) -> Result<(StepRule, Option<f64>)> {
        let params = self.checked()?;
        params.resolved_step()
    }

    fn resolved_step(&self) -> Result<(StepRule, Option<f64>)> {
        // σ does not depend on the number of classes: any K ≥ 2 builds the loss.
        // A custom loss (built from Python callables) states no smoothness constant.
        let (sigma, newton) = match self.loss {
            LossSpec::Custom => (None, false),
            _ => {
                let loss = self.loss.build(2)?;
                (loss.sigma(), loss.newton_by_default())
            }
        };
        let rules = method(self.method);
        // A distributional loss steps along its natural gradient wherever the method allows it.
        let natural = self.loss.traits().task == Task::Distribution
            && rules.step_rules().contains(&StepRule::Natural);
        let rule = match self.step {
            Some(rule) => rule,
            None if natural => StepRule::Natural,
            None => rules.default_step_rule(newton),
        };
        let rho = match self.rho {
            Some(rho) => Some(rho),
            None if self.loss.sigma_from_data() => None,
            None => Some(rules.default_rho(sigma, self.lambda)),
        };
        Ok((rule, rho))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boost::{AgbmState, DirectionKind, MetaState, Switches, Tracked, VagbmState};

    /// A sequence with distinct values everywhere: training, validation and weights.
    fn sequence(offset: f64) -> Tracked {
        Tracked {
            train: (0..5).map(|i| offset + i as f64).collect(),
            valid: Some(vec![offset - 1.0, offset - 2.0]),
            weights: vec![0.5 * offset, 0.25],
        }
    }

    /// Falling back on `restart_point` and restarting gives the state that restarting the whole
    /// state gives: the fallback keeps everything a restart does not overwrite.
    #[test]
    fn a_restart_from_the_restart_point_equals_a_restart_from_the_whole_state() {
        let agbm = AgbmState {
            f: sequence(1.0),
            h: sequence(7.0),
            m: 3,
            residual: vec![0.1; 5],
            carry: vec![-0.2; 5],
            period: Some(4),
            restarts: 2,
            previous_loss: 0.7,
        };
        let vagbm = VagbmState {
            f: sequence(2.0),
            h: sequence(-3.0),
            m: 5,
        };
        let meta = |residual: bool| MetaState {
            switches: Switches {
                direction: DirectionKind::Proximal,
                residual,
                accelerated: true,
            },
            x: sequence(4.0),
            v: Some(sequence(9.0)),
            delta: vec![0.3; 5],
            beta: 2.5,
        };
        for state in [
            MethodState::Agbm(agbm),
            MethodState::Vagbm(vagbm),
            MethodState::Meta(meta(false)),
            MethodState::Meta(meta(true)),
        ] {
            let mut whole = state.clone();
            whole.iterate_mut().restart_momentum();
            let mut fallback = state.iterate().restart_point();
            fallback.iterate_mut().restart_momentum();
            assert_eq!(fallback, whole);
        }
    }
}
