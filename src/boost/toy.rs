//! `toy`: a method added exactly as docs/adding_a_method.md says, compiled for tests only: this
//! file, its name in `Method` (`params.rs`), `mod toy;` (`boost/mod.rs`) and its line in the
//! registry (`method.rs`). It is `gbm` with the constant step ρ = 1/σ only (reusing `GbmState`,
//! so `method_states!` needs no line), and the tests below check that the booster, the
//! parameter checks and the method's facts all reach it through those four places.
//! ```text
//! F ← c0;  repeat:  r ← −∂ℓ(y, F)/∂F;  b ← fit(r);  F ← F + ν ρ b
//! ```

use super::method::{inverse_smoothness, BoostingMethod, MethodState, Start};
use super::GbmState;
use crate::data::BinnedData;
use crate::error::Result;
use crate::loss::Loss;
use crate::params::{Params, StepRule};
use crate::rng::Rng;
use crate::tree::Candidates;

pub struct Toy;

impl BoostingMethod for Toy {
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
    fn candidates(&self, _: &Params, _: &BinnedData, _: &mut Rng) -> Candidates {
        Candidates::All
    }
    fn start(&self, _: &Params, _: &dyn Loss, start: Start<'_>) -> Result<MethodState> {
        Ok(MethodState::Gbm(GbmState {
            f: start.train.to_vec(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::loss::LossSpec;
    use crate::metric::Metric;
    use crate::params::Method;
    use crate::{Booster, Feature, Frame, Params, StepRule, TrainData};

    /// The training predictions of `pairs` on a small regression problem.
    fn fit(pairs: &[(&str, &str)]) -> Vec<f64> {
        let x: Vec<f64> = (0..300).map(|i| (i as f64 * 0.37).sin()).collect();
        let z: Vec<f64> = (0..300).map(|i| (i % 7) as f64).collect();
        let y: Vec<f64> = (x.iter().zip(&z)).map(|(x, z)| 2.0 * x + 0.3 * z).collect();
        let frame = || Frame::new(vec![Feature::numeric("x", &x), Feature::numeric("z", &z)]);
        let mut params = Params::default();
        params
            .set("n_iter", "15")
            .unwrap()
            .set("min_samples_leaf", "5")
            .unwrap();
        for (name, value) in pairs {
            params.set(name, value).unwrap();
        }
        let train = TrainData {
            frame: frame().unwrap(),
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(params, &train, None).unwrap();
        booster.run(|_| true).unwrap();
        booster.into_model().predict(&frame().unwrap()).unwrap()
    }

    #[test]
    fn the_toy_method_is_named_checked_and_trained_through_its_four_places() {
        let toy: Method = "toy".parse().unwrap();
        assert!(Method::NAMES.contains(&"toy"));
        assert_eq!(toy.trees_per_iteration(), Some(1));
        assert!(!toy.has_momentum() && !toy.uses_prox());
        let mut params = Params::default();
        params.set("method", "toy").unwrap();
        assert_eq!(
            params.step_in_force().unwrap(),
            (StepRule::Constant, Some(1.0))
        );
        params.set("step", "newton").unwrap();
        let refused = params.validate().unwrap_err().to_string();
        assert!(refused.contains("constant"), "{refused}");

        let by_toy = fit(&[("method", "toy")]);
        let by_gbm = fit(&[("method", "gbm"), ("step", "constant"), ("rho", "1")]);
        assert_eq!(by_toy, by_gbm);
        assert_ne!(
            by_toy,
            fit(&[("method", "gbm"), ("step", "constant"), ("rho", "0.5")])
        );
    }

    #[test]
    fn the_metrics_follow_the_toy_loss_row() {
        let toy: LossSpec = "toy(3)".parse().unwrap();
        assert!(Metric::Rmse.check(&toy).is_ok());
        let refused = Metric::Auc.check(&toy).unwrap_err().to_string();
        assert!(
            refused.ends_with("a loss among logistic, exponential, hinge"),
            "{refused}"
        );
    }

    #[test]
    fn the_toy_loss_trains_with_the_toy_method_as_the_squared_loss_does() {
        // toy(2) = (y − f)²: twice the squared loss's gradient, half its ρ = 1/σ: the same
        // steps, bit for bit (powers of two scale exactly).
        let toy = fit(&[("method", "toy"), ("loss", "toy(2)")]);
        assert_eq!(toy, fit(&[("method", "toy"), ("loss", "squared")]));
        assert_ne!(toy, fit(&[("method", "toy"), ("loss", "toy(3)")]));
    }
}
