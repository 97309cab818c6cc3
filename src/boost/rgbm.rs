//! `rgbm`: randomized gradient boosting (Lu & Mazumder, Alg. 2). It is `gbm` whose weak-learner
//! search only sees a random candidate set J, drawn afresh every iteration from the booster's
//! seeded generator (part of the checkpoint, so a resumed run draws the same sets):
//! - `selection = "all"` (Type 0): every candidate, i.e. `gbm`;
//! - `"random"` (Type 1): t (feature, threshold) candidates uniformly without replacement;
//! - `"group"` (Type 2): every candidate of one random feature;
//! - `"groups"` (Type 3): every candidate of t random features (the paper's experiments).
//!
//! A candidate is a (feature, bin threshold) split: numeric thresholds 1..=n_bins−1 (bins 1..=t go
//! left), categorical thresholds k (the k levels of lowest mean target go left). For trees deeper
//! than a stump, J restricts every split of that iteration's tree. Default step rule `constant`
//! with ρ = 1/σ (the paper's theory).

use super::method::{inverse_smoothness, BoostingMethod, MethodState, Start};
use super::GbmState;
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::Loss;
use crate::params::{Params, Selection, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;

/// Draws this iteration's candidate set.
pub fn draw(params: &Params, data: &BinnedData, rng: &mut Rng) -> Candidates {
    let p = data.n_features();
    match params.selection {
        Selection::All => Candidates::All,
        Selection::Group => features(p, &rng.sample(p, 1)),
        Selection::Groups => features(p, &rng.sample(p, params.t)),
        Selection::Random => {
            let thresholds: Vec<usize> = data
                .mappers()
                .iter()
                .map(|m| m.n_bins().saturating_sub(1))
                .collect();
            let total: usize = thresholds.iter().sum();
            let mut allowed: Vec<Vec<bool>> =
                thresholds.iter().map(|&k| vec![false; k + 1]).collect();
            let mut picks = rng.sample(total, params.t);
            picks.sort_unstable();
            let (mut feature, mut start) = (0, 0);
            for pick in picks {
                while pick >= start + thresholds[feature] {
                    start += thresholds[feature];
                    feature += 1;
                }
                allowed[feature][pick - start + 1] = true;
            }
            Candidates::Splits(allowed)
        }
    }
}

fn features(p: usize, chosen: &[usize]) -> Candidates {
    let mut allowed = vec![false; p];
    chosen.iter().for_each(|&j| allowed[j] = true);
    Candidates::Features(allowed)
}

/// `rgbm` (docs/algorithms.md §4.2): gbm's iteration on random candidates, with the constant
/// step ρ = 1/σ of the paper's theory by default.
pub struct Rgbm;

impl BoostingMethod for Rgbm {
    fn step_rules(&self) -> &'static [StepRule] {
        &[
            StepRule::Constant,
            StepRule::LineSearch,
            StepRule::LeafLineSearch,
            StepRule::Newton,
            StepRule::Natural,
        ]
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
        Some(1)
    }
    fn starts_from_output(&self) -> bool {
        true
    }
    fn candidates(&self, params: &Params, data: &BinnedData, rng: &mut Rng) -> Candidates {
        draw(params, data, rng)
    }
    fn start(&self, _params: &Params, _loss: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        Ok(MethodState::Gbm(GbmState {
            f: start.train.to_vec(),
        }))
    }
}
