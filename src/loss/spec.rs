//! The public vocabulary of losses: [`LossSpec`] names a loss and its parameter, parses from and
//! prints to strings such as `"pinball(0.9)"`, validates, serialises (`{"name": "pinball",
//! "tau": 0.9}`) and builds the [`Loss`] the booster runs on.

use super::traits::{DefaultMetric, Family, Link, MetricFamily, Task, Traits};
use super::{
    Absolute, Aft, AftDistribution, Cox, Dist, Exponential, GammaDist, Hinge, Huber, LambdaRank,
    LogNormal, Logistic, Loss, MultiSquared, MulticlassHinge, NegativeBinomial, Normal, Pairwise,
    Pinball, Quantiles, RankXendcg, Ranked, Scalar, Softmax, Squared, StudentT, Ties, Tweedie,
    AFT_COLUMNS, COX_COLUMNS, MAX_LEVELS,
};
use crate::error::{Error, Number, Result};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A loss by name and parameter (docs/algorithms.md §6), as the `loss` parameter spells it.
///
/// ```
/// use optboost::LossSpec;
///
/// let loss: LossSpec = "pinball(0.9)".parse()?;
/// assert_eq!(loss, LossSpec::Pinball { tau: 0.9 });
/// assert!("pinball(2)".parse::<LossSpec>().is_err());
/// # Ok::<(), optboost::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum LossSpec {
    /// (y − f)²/2: the mean.
    Squared,
    /// |y − f|: the median.
    Absolute,
    /// The pinball loss: the quantile at level `tau`.
    Pinball {
        /// The level, in (0, 1).
        tau: f64,
    },
    /// Huber's loss: squared near the target, absolute in the tails.
    Huber {
        /// Where it turns linear, > 0.
        delta: f64,
    },
    /// Binary log-loss (labels 0/1 or ±1).
    Logistic {
        /// Weight of the ridge term on the scores, ≥ 0.
        ridge: f64,
    },
    /// e^{−β y f}, labels ±1 (AdaBoost at β = 1).
    Exponential {
        /// β > 0.
        beta: f64,
    },
    /// max(0, 1 − y f), labels ±1.
    Hinge,
    /// Multiclass log-loss over K scores (labels 0..K).
    Softmax,
    /// The multiclass hinge loss (labels 0..K).
    MulticlassHinge,
    /// Poisson deviance, log link: counts and rates.
    Poisson,
    /// Gamma deviance, log link: positive skewed targets.
    Gamma,
    /// Tweedie deviance, log link: non-negative targets with exact zeros.
    Tweedie {
        /// The variance power, in (1, 2).
        p: f64,
    },
    /// Cox proportional hazards; the label is the signed time (< 0: censored), or that, a start
    /// time and a stratum (`COX_COLUMNS`).
    Cox {
        /// How tied event times share the risk set.
        #[serde(default, skip_serializing_if = "Ties::is_breslow")]
        ties: Ties,
    },
    /// The squared loss over K outputs: the target is n × K, one column per output.
    MultiSquared,
    /// The pinball losses at K increasing levels, one output each (`quantiles(0.05, 0.5, 0.95)`).
    Quantiles {
        /// The quantile levels, increasing, each in (0, 1).
        levels: Vec<f64>,
    },
    /// Distributional losses (`distribution.rs`): the NLL of a distribution whose two
    /// parameters are the two outputs. The normal's: μ and ln σ.
    Normal,
    /// The log-normal's: μ and ln σ of ln y.
    Lognormal,
    /// The gamma distribution's mean and shape (`gamma` is the deviance of its mean alone).
    GammaDist,
    /// The negative binomial's of counts: ln μ and ln α.
    NegativeBinomial,
    /// Student's t at fixed degrees of freedom: μ and ln σ.
    StudentT {
        /// The degrees of freedom ν.
        df: f64,
    },
    /// The toy loss of `loss/toy.rs`, added as docs/adding_a_loss.md says (tests only).
    #[cfg(test)]
    Toy {
        /// The loss's one parameter.
        scale: f64,
    },
    /// Accelerated failure time: ln T = f + σ Z (`aft(logistic, 1.2)`); the label is the signed
    /// time or the bounds of an interval (`AFT_COLUMNS`).
    Aft {
        /// The distribution of Z (normal when a file leaves it out).
        #[serde(default)]
        distribution: AftDistribution,
        /// The scale σ > 0.
        sigma: f64,
    },
    /// A scalar loss given as an object (Python's `CustomLoss`), not rebuilt from its name: a
    /// model trained with it keeps its trees and predicts the link only.
    Custom,
    /// LambdaMART at NDCG@k (`k`: the truncation level); the target is (relevance, query group).
    Lambdarank {
        /// The truncation level: swaps below rank k do not count.
        k: f64,
    },
    /// RankNet's pairwise logistic loss within query groups.
    Pairwise,
    /// The XE-NDCG listwise cross entropy within query groups.
    RankXendcg,
}

/// A loss's parameter: its name, its default and its domain, checked by `LossSpec::validate`.
struct Param {
    name: &'static str,
    default: f64,
    valid: fn(f64) -> bool,
    domain: &'static str,
}

const fn param(
    name: &'static str,
    default: f64,
    valid: fn(f64) -> bool,
    domain: &'static str,
) -> Option<Param> {
    Some(Param {
        name,
        default,
        valid,
        domain,
    })
}

/// A loss of the vocabulary: its name, its parameter if it has one, the spec made from the
/// parameter's value (ignored without one), its link at that value, and its traits.
struct Entry {
    name: &'static str,
    param: Option<Param>,
    spec: fn(f64) -> LossSpec,
    link: fn(f64) -> Link,
    traits: Traits,
}

use DefaultMetric as D;
use MetricFamily as M;
use Task::*;

/// Every loss by name, one row each: parsing, validation, `name`, `link`, `traits`, `NAMES` and
/// the error message's list of losses all read it, and through `traits` every predicate, the
/// metric check, the data-parallel refusal, Python's `loss_info` and the exports. Defaults:
/// pinball τ = 0.5, huber δ = 1, logistic ridge 0, exponential β = 1, tweedie p = 1.5 (LightGBM's
/// and XGBoost's default variance power, midway between Poisson and gamma). The exponential
/// loss e^{−βyf} has the population minimiser log-odds / (2β): its probability is a sigmoid of
/// scale 2β.
#[rustfmt::skip]
const VOCABULARY: &[Entry] = &[
    Entry { name: "squared", param: None, spec: |_| LossSpec::Squared, link: |_| Link::Identity,
        traits: Traits { task: Regression, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Regression, default_metric: D::Mse,
            multi_output: Some("multi_squared"), r_gbm: Some("gaussian") } },
    Entry { name: "absolute", param: None, spec: |_| LossSpec::Absolute, link: |_| Link::Identity,
        traits: Traits { task: Regression, separable: true, piecewise_linear: true, sigma_from_data: false,
            distributable: true, metrics: M::Regression, default_metric: D::Mae,
            multi_output: None, r_gbm: Some("laplace") } },
    Entry { name: "pinball", param: param("tau", 0.5, |tau| tau > 0.0 && tau < 1.0, "a number in (0, 1)"),
        spec: |tau| LossSpec::Pinball { tau }, link: |_| Link::Identity,
        traits: Traits { task: Regression, separable: true, piecewise_linear: true, sigma_from_data: false,
            distributable: true, metrics: M::Regression, default_metric: D::Pinball,
            multi_output: None, r_gbm: Some("quantile") } },
    Entry { name: "huber", param: param("delta", 1.0, |delta| delta > 0.0 && delta.is_finite(), "a finite number > 0"),
        spec: |delta| LossSpec::Huber { delta }, link: |_| Link::Identity,
        traits: Traits { task: Regression, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Regression, default_metric: D::Mse,
            multi_output: None, r_gbm: None } },
    Entry { name: "logistic", param: param("ridge", 0.0, |ridge| ridge >= 0.0 && ridge.is_finite(), "a finite number >= 0"),
        spec: |ridge| LossSpec::Logistic { ridge }, link: |_| Link::Sigmoid { scale: 1.0 },
        traits: Traits { task: Binary, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Binary, default_metric: D::Logloss,
            multi_output: None, r_gbm: Some("bernoulli") } },
    Entry { name: "exponential", param: param("beta", 1.0, |beta| beta > 0.0 && beta.is_finite(), "a finite number > 0"),
        spec: |beta| LossSpec::Exponential { beta }, link: |beta| Link::Sigmoid { scale: 2.0 * beta },
        traits: Traits { task: Binary, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Binary, default_metric: D::Logloss,
            multi_output: None, r_gbm: Some("adaboost") } },
    Entry { name: "hinge", param: None, spec: |_| LossSpec::Hinge, link: |_| Link::Margin,
        traits: Traits { task: Binary, separable: true, piecewise_linear: true, sigma_from_data: false,
            distributable: true, metrics: M::Binary, default_metric: D::Error,
            multi_output: None, r_gbm: None } },
    Entry { name: "softmax", param: None, spec: |_| LossSpec::Softmax, link: |_| Link::Softmax,
        traits: Traits { task: Multiclass, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Multiclass, default_metric: D::Logloss,
            multi_output: None, r_gbm: Some("multinomial") } },
    Entry { name: "multiclass_hinge", param: None, spec: |_| LossSpec::MulticlassHinge, link: |_| Link::Margin,
        traits: Traits { task: Multiclass, separable: true, piecewise_linear: true, sigma_from_data: false,
            distributable: false, metrics: M::Multiclass, default_metric: D::Error,
            multi_output: None, r_gbm: None } },
    Entry { name: "poisson", param: None, spec: |_| LossSpec::Poisson, link: |_| Link::Exp,
        traits: Traits { task: Regression, separable: true, piecewise_linear: false, sigma_from_data: true,
            distributable: true, metrics: M::LogLink, default_metric: D::PoissonDeviance,
            multi_output: None, r_gbm: Some("poisson") } },
    Entry { name: "gamma", param: None, spec: |_| LossSpec::Gamma, link: |_| Link::Exp,
        traits: Traits { task: Regression, separable: true, piecewise_linear: false, sigma_from_data: true,
            distributable: true, metrics: M::LogLink, default_metric: D::GammaDeviance,
            multi_output: None, r_gbm: None } },
    Entry { name: "tweedie", param: param("p", 1.5, |p| p > 1.0 && p < 2.0, "a number in (1, 2) (p = 1 is `poisson`, p = 2 is `gamma`)"),
        spec: |p| LossSpec::Tweedie { p }, link: |_| Link::Exp,
        traits: Traits { task: Regression, separable: true, piecewise_linear: false, sigma_from_data: true,
            distributable: true, metrics: M::LogLink, default_metric: D::TweedieDeviance,
            multi_output: None, r_gbm: None } },
    Entry { name: "cox", param: None, spec: |_| LossSpec::Cox { ties: Ties::Breslow }, link: |_| Link::Exp,
        traits: Traits { task: Survival, separable: false, piecewise_linear: false, sigma_from_data: true,
            distributable: false, metrics: M::Regression, default_metric: D::Mse,
            multi_output: None, r_gbm: Some("coxph") } },
    Entry { name: "multi_squared", param: None, spec: |_| LossSpec::MultiSquared, link: |_| Link::Identity,
        traits: Traits { task: MultiOutput, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Regression, default_metric: D::Mse,
            multi_output: Some("multi_squared"), r_gbm: None } },
    Entry { name: "quantiles", param: None, spec: |_| LossSpec::Quantiles { levels: DEFAULT_LEVELS.to_vec() },
        link: |_| Link::Sorted,
        traits: Traits { task: Quantiles, separable: true, piecewise_linear: true, sigma_from_data: false,
            distributable: false, metrics: M::Quantiles, default_metric: D::Quantiles,
            multi_output: None, r_gbm: None } },
    Entry { name: "normal", param: None, spec: |_| LossSpec::Normal,
        link: |_| Link::Distribution(Family::Normal), traits: DISTRIBUTION },
    Entry { name: "lognormal", param: None, spec: |_| LossSpec::Lognormal,
        link: |_| Link::Distribution(Family::LogNormal), traits: DISTRIBUTION },
    Entry { name: "gamma_dist", param: None, spec: |_| LossSpec::GammaDist,
        link: |_| Link::Distribution(Family::Gamma), traits: DISTRIBUTION },
    Entry { name: "negative_binomial", param: None, spec: |_| LossSpec::NegativeBinomial,
        link: |_| Link::Distribution(Family::NegativeBinomial), traits: DISTRIBUTION },
    Entry { name: "student_t", param: param("df", 3.0, |df| df > 0.0 && df.is_finite(), "a finite number > 0"),
        spec: |df| LossSpec::StudentT { df }, link: |_| Link::Distribution(Family::StudentT),
        traits: DISTRIBUTION },
    Entry { name: "aft", param: param("sigma", 1.0, |sigma| sigma > 0.0 && sigma.is_finite(), "a finite number > 0"),
        spec: |sigma| LossSpec::Aft { distribution: AftDistribution::Normal, sigma }, link: |_| Link::Exp,
        traits: Traits { task: Survival, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: false, metrics: M::Regression, default_metric: D::Mse,
            multi_output: None, r_gbm: None } },
    #[cfg(test)]
    Entry { name: "toy", param: param("scale", 2.0, |scale| scale > 0.0 && scale.is_finite(), "a finite number > 0"),
        spec: |scale| LossSpec::Toy { scale }, link: |_| Link::Identity,
        traits: Traits { task: Regression, separable: true, piecewise_linear: false, sigma_from_data: false,
            distributable: true, metrics: M::Regression, default_metric: D::Mse,
            multi_output: None, r_gbm: None } },
    Entry { name: "lambdarank", param: param("k", 30.0, |k| k >= 1.0 && k <= 10_000.0 && k.fract() == 0.0, "a whole number in [1, 10000]"),
        spec: |k| LossSpec::Lambdarank { k }, link: |_| Link::Identity,
        traits: Traits { task: Ranking, separable: false, piecewise_linear: false, sigma_from_data: true,
            distributable: false, metrics: M::Ranking, default_metric: D::Ndcg,
            multi_output: None, r_gbm: None } },
    Entry { name: "pairwise", param: None, spec: |_| LossSpec::Pairwise, link: |_| Link::Identity,
        traits: Traits { task: Ranking, separable: false, piecewise_linear: false, sigma_from_data: true,
            distributable: false, metrics: M::Ranking, default_metric: D::Ndcg,
            multi_output: None, r_gbm: None } },
    Entry { name: "rank_xendcg", param: None, spec: |_| LossSpec::RankXendcg, link: |_| Link::Identity,
        traits: Traits { task: Ranking, separable: false, piecewise_linear: false, sigma_from_data: true,
            distributable: false, metrics: M::Ranking, default_metric: D::Ndcg,
            multi_output: None, r_gbm: None } },
];

/// The distributional losses' traits: one target, a predicted distribution; not data-parallel
/// (their initial constant is a maximum-likelihood fit over all rows).
const DISTRIBUTION: Traits = Traits {
    task: Task::Distribution,
    separable: true,
    piecewise_linear: false,
    sigma_from_data: false,
    distributable: false,
    metrics: MetricFamily::Distribution,
    default_metric: DefaultMetric::Nll,
    multi_output: None,
    r_gbm: None,
};

/// The levels of `quantiles` written without any: a 90% interval and the median.
const DEFAULT_LEVELS: [f64; 3] = [0.05, 0.5, 0.95];

/// A custom loss (Python's `CustomLoss`): a scalar loss on real targets whose response the crate
/// does not know (its predictions are the link), run by one process.
const CUSTOM: Traits = Traits {
    task: Regression,
    separable: true,
    piecewise_linear: false,
    sigma_from_data: false,
    distributable: false,
    metrics: MetricFamily::Regression,
    default_metric: DefaultMetric::Mse,
    multi_output: None,
    r_gbm: None,
};

/// The names accepted by `from_str`, for error messages: `pinball` and `pinball(tau)` alike.
fn allowed() -> String {
    let forms: Vec<String> = (VOCABULARY.iter())
        .flat_map(|e| {
            let with_param = e.param.as_ref().map(|p| format!("{}({})", e.name, p.name));
            [e.name.to_string()].into_iter().chain(with_param)
        })
        .collect();
    format!("one of {}", forms.join(", "))
}

impl LossSpec {
    /// Every loss's name, in the order of `VOCABULARY`.
    pub const NAMES: &'static [&'static str] = &{
        let mut names = [""; VOCABULARY.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = VOCABULARY[i].name;
            i += 1;
        }
        names
    };

    /// Every loss of the vocabulary at its default parameter, in the order of `NAMES`.
    pub fn vocabulary() -> impl Iterator<Item = LossSpec> {
        (VOCABULARY.iter()).map(|e| (e.spec)(e.param.as_ref().map_or(0.0, |p| p.default)))
    }

    /// The row of the vocabulary; `None` for `Custom`, which has none.
    fn entry(&self) -> Option<&'static Entry> {
        let kind = std::mem::discriminant(self);
        (VOCABULARY.iter()).find(|e| {
            let default = e.param.as_ref().map_or(0.0, |p| p.default);
            std::mem::discriminant(&(e.spec)(default)) == kind
        })
    }

    /// The loss's name in `loss=` strings, without parameters.
    pub fn name(&self) -> &'static str {
        self.entry().map_or("custom", |e| e.name)
    }

    /// The parameter's name and value, for a loss with one.
    pub fn parameter(&self) -> Option<(&'static str, f64)> {
        let value = match *self {
            LossSpec::Pinball { tau: v }
            | LossSpec::Huber { delta: v }
            | LossSpec::Logistic { ridge: v }
            | LossSpec::Exponential { beta: v }
            | LossSpec::Tweedie { p: v }
            | LossSpec::Lambdarank { k: v }
            | LossSpec::StudentT { df: v }
            | LossSpec::Aft { sigma: v, .. } => v,
            #[cfg(test)]
            LossSpec::Toy { scale } => scale,
            LossSpec::Squared
            | LossSpec::Absolute
            | LossSpec::Hinge
            | LossSpec::Softmax
            | LossSpec::MulticlassHinge
            | LossSpec::Poisson
            | LossSpec::Gamma
            | LossSpec::Cox { .. }
            | LossSpec::MultiSquared
            | LossSpec::Quantiles { .. }
            | LossSpec::Custom
            | LossSpec::Pairwise
            | LossSpec::RankXendcg
            | LossSpec::Normal
            | LossSpec::Lognormal
            | LossSpec::GammaDist
            | LossSpec::NegativeBinomial => return None,
        };
        let param = self.entry()?.param.as_ref()?;
        Some((param.name, value))
    }

    /// The levels of `quantiles`, in increasing order; `None` for every other loss.
    pub fn levels(&self) -> Option<&[f64]> {
        match self {
            LossSpec::Quantiles { levels } => Some(levels),
            _ => None,
        }
    }

    /// What the loss is (its row of the vocabulary).
    pub fn traits(&self) -> Traits {
        self.entry().map_or(CUSTOM, |e| e.traits)
    }

    /// How a row's scores map to the response scale.
    pub fn link(&self) -> Link {
        match (self.entry(), self.parameter()) {
            (Some(e), parameter) => (e.link)(parameter.map_or(0.0, |(_, v)| v)),
            (None, _) => Link::Margin,
        }
    }

    /// Checks the parameter against its domain (the vocabulary's): τ ∈ (0, 1), δ > 0 finite,
    /// ridge ≥ 0 finite, β > 0 finite, Tweedie power p ∈ (1, 2) (its ends are `poisson` and
    /// `gamma`).
    pub fn validate(&self) -> Result<()> {
        if let Some(levels) = self.levels() {
            return validate_levels(levels);
        }
        let param = self.entry().and_then(|e| e.param.as_ref());
        match (param, self.parameter()) {
            (Some(param), Some((_, value))) if !(param.valid)(value) => {
                Err(Error::param(param.name, value, param.domain))
            }
            _ => Ok(()),
        }
    }

    /// Smooth with a curvature that grows without bound (see `Traits::sigma_from_data`).
    pub fn sigma_from_data(&self) -> bool {
        self.traits().sigma_from_data
    }

    /// Piecewise linear in the score: no second derivative to take a Newton step with.
    pub fn is_piecewise_linear(&self) -> bool {
        self.traits().piecewise_linear
    }

    /// Not a sum of per-row terms: no per-row prox (see `Loss::separable`).
    pub fn is_separable(&self) -> bool {
        self.traits().separable
    }

    /// Labels must be ±1.
    pub fn is_binary(&self) -> bool {
        self.traits().task == Task::Binary
    }

    /// K scores per row, labels are class indices.
    pub fn is_multiclass(&self) -> bool {
        self.traits().task == Task::Multiclass
    }

    /// K scores per row from a target of K columns (n × K).
    pub fn is_multi_output(&self) -> bool {
        self.traits().task == Task::MultiOutput
    }

    /// Validates and builds the loss; `n_classes` is K for multiclass losses (≥ 2) and the
    /// multi-output loss (≥ 1), the target's columns for cox (`COX_COLUMNS` for start times and
    /// strata, else one), unused otherwise.
    pub fn build(&self, n_classes: usize) -> Result<Arc<dyn Loss>> {
        self.validate()?;
        if self.is_multiclass() && n_classes < 2 {
            return Err(Error::param(
                "loss",
                format!("{self} with {n_classes} classes"),
                "at least 2 classes",
            ));
        }
        if self.is_multi_output() && n_classes < 1 {
            return Err(Error::param(
                "loss",
                format!("{self} with {n_classes} outputs"),
                "at least 1 target column",
            ));
        }
        Ok(match *self {
            LossSpec::Squared => Arc::new(Scalar(Squared)),
            LossSpec::Absolute => Arc::new(Scalar(Absolute)),
            LossSpec::Pinball { tau } => Arc::new(Scalar(Pinball::new(tau))),
            LossSpec::Huber { delta } => Arc::new(Scalar(Huber::new(delta))),
            LossSpec::Logistic { ridge } => Arc::new(Scalar(Logistic::new(ridge))),
            LossSpec::Exponential { beta } => Arc::new(Scalar(Exponential::new(beta))),
            LossSpec::Hinge => Arc::new(Scalar(Hinge)),
            LossSpec::Softmax => Arc::new(Softmax::new(n_classes)),
            LossSpec::MulticlassHinge => Arc::new(MulticlassHinge::new(n_classes)),
            LossSpec::Poisson => Arc::new(Scalar(Tweedie::poisson())),
            LossSpec::Gamma => Arc::new(Scalar(Tweedie::gamma())),
            LossSpec::Tweedie { p } => Arc::new(Scalar(Tweedie::new(p))),
            LossSpec::Cox { ties } => Arc::new(Cox::new(ties, n_classes == COX_COLUMNS)),
            LossSpec::MultiSquared => Arc::new(MultiSquared::new(n_classes)),
            LossSpec::Quantiles { ref levels } => Arc::new(Quantiles::new(levels)),
            LossSpec::Normal => Arc::new(Dist(Normal)),
            LossSpec::Lognormal => Arc::new(Dist(LogNormal)),
            LossSpec::GammaDist => Arc::new(Dist(GammaDist)),
            LossSpec::NegativeBinomial => Arc::new(Dist(NegativeBinomial)),
            LossSpec::StudentT { df } => Arc::new(Dist(StudentT::new(df))),
            LossSpec::Aft {
                distribution,
                sigma,
            } => Arc::new(Aft::new(distribution, sigma, n_classes == AFT_COLUMNS)),
            #[cfg(test)]
            LossSpec::Toy { scale } => Arc::new(Scalar(super::Toy::new(scale))),
            LossSpec::Lambdarank { k } => Arc::new(Ranked::new(LambdaRank::new(k))),
            LossSpec::Pairwise => Arc::new(Ranked::new(Pairwise)),
            LossSpec::RankXendcg => Arc::new(Ranked::new(RankXendcg)),
            LossSpec::Custom => {
                return Err(Error::param(
                    "loss",
                    "custom",
                    "a loss object (optboost.CustomLoss): a custom loss is not saved, so it \
                     cannot be rebuilt from its name",
                ))
            }
        })
    }
}

/// 1 to `MAX_LEVELS` levels in (0, 1), strictly increasing (so that output k is the k-th
/// quantile and sorting a row's scores is the rearrangement).
fn validate_levels(levels: &[f64]) -> Result<()> {
    if levels.is_empty() || levels.len() > MAX_LEVELS {
        return Err(Error::param(
            "levels",
            format!("{} levels", levels.len()),
            format!("1 to {MAX_LEVELS} quantile levels"),
        ));
    }
    if let Some(&bad) = levels.iter().find(|&&tau| !(tau > 0.0 && tau < 1.0)) {
        return Err(Error::param("levels", bad, "numbers in (0, 1)"));
    }
    if let Some(pair) = levels.windows(2).find(|pair| pair[0] >= pair[1]) {
        return Err(Error::param(
            "levels",
            format!("{} then {}", Number(pair[0]), Number(pair[1])),
            "strictly increasing levels (each quantile once, lowest first)",
        ));
    }
    Ok(())
}

/// `quantiles(0.05, 0.5, 0.95)`'s levels (`levels=` accepted before them).
fn parse_levels(arg: &str) -> Result<Vec<f64>> {
    let list = (arg.strip_prefix("levels"))
        .and_then(|rest| rest.trim_start().strip_prefix('='))
        .unwrap_or(arg);
    let list = list.trim().trim_start_matches('[').trim_end_matches(']');
    if list.trim().is_empty() {
        return Ok(Vec::new()); // refused by `validate_levels`, which says how many it takes
    }
    (list.split(','))
        .map(|a| {
            (a.trim().parse::<f64>()).map_err(|_| Error::param("levels", a.trim(), "a number"))
        })
        .collect()
}

/// `cox(ties=efron)`'s ties (`ties=` and quotes optional).
fn parse_ties(arg: &str) -> Result<Ties> {
    let value = (arg.strip_prefix("ties"))
        .and_then(|rest| rest.trim_start().strip_prefix('='))
        .unwrap_or(arg)
        .trim()
        .trim_matches(|c| c == '"' || c == '\'');
    match value {
        "breslow" => Ok(Ties::Breslow),
        "efron" => Ok(Ties::Efron),
        _ => Err(Error::param("ties", value, "breslow or efron")),
    }
}

/// `aft(logistic, 1.2)`'s distribution and σ, in any order, each optionally named
/// (`distribution=`, `sigma=`).
fn parse_aft(arg: &str) -> Result<LossSpec> {
    let (mut distribution, mut sigma) = (AftDistribution::Normal, 1.0);
    for item in arg.split(',').map(str::trim).filter(|item| !item.is_empty()) {
        let (key, value) = match item.split_once('=') {
            Some((key, value)) => (Some(key.trim()), value.trim().trim_matches(|c| c == '"' || c == '\'')),
            None => (None, item.trim_matches(|c| c == '"' || c == '\'')),
        };
        let named = AftDistribution::ALL.iter().find(|d| d.name() == value);
        match (key, named) {
            (None | Some("distribution"), Some(&d)) => distribution = d,
            (None | Some("sigma"), None) => {
                sigma = value.parse().map_err(|_| Error::param("sigma", value, "a number"))?
            }
            _ => {
                return Err(Error::param(
                    "loss",
                    format!("aft({arg})"),
                    "aft(distribution, sigma) with a distribution normal, logistic or extreme \
                     and a number sigma > 0",
                ))
            }
        }
    }
    Ok(LossSpec::Aft {
        distribution,
        sigma,
    })
}

impl FromStr for LossSpec {
    type Err = Error;

    /// `name` or `name(parameter)`, case-insensitive, `-` accepted for `_`, with the defaults of
    /// `VOCABULARY` for a parameter left out. The result is validated.
    fn from_str(s: &str) -> Result<Self> {
        let text = s.trim().to_ascii_lowercase();
        let (name, arg) = match text.find('(') {
            Some(open) if text.ends_with(')') => (
                text[..open].trim(),
                Some(text[open + 1..text.len() - 1].trim()),
            ),
            Some(_) => return Err(Error::param("loss", s, allowed())),
            None => (text.as_str(), None),
        };
        let name = name.replace('-', "_");
        let entry = VOCABULARY.iter().find(|e| e.name == name);
        if entry.is_none() && name != "custom" {
            return Err(Error::param("loss", s, allowed()));
        }
        if let (Some(arg), "cox") = (arg, name.as_str()) {
            return parse_ties(arg).map(|ties| LossSpec::Cox { ties });
        }
        if let (Some(arg), "aft") = (arg, name.as_str()) {
            let spec = parse_aft(arg)?;
            spec.validate()?;
            return Ok(spec);
        }
        if let (Some(arg), "quantiles") = (arg, name.as_str()) {
            let spec = LossSpec::Quantiles {
                levels: parse_levels(arg)?,
            };
            spec.validate()?;
            return Ok(spec);
        }
        let param = entry.and_then(|e| e.param.as_ref());
        if arg.is_some() && param.is_none() {
            return Err(Error::param(
                "loss",
                s,
                format!("`{name}` without a parameter"),
            ));
        }
        let value = match (param, arg) {
            (None, _) => 0.0,
            (Some(param), None) => param.default,
            // `huber(2)` and `huber(delta=2)` alike, as the README's table spells them
            (Some(param), Some(a)) => (a.strip_prefix(param.name))
                .and_then(|rest| rest.trim_start().strip_prefix('='))
                .unwrap_or(a)
                .trim()
                .parse::<f64>()
                .map_err(|_| Error::param(param.name, a, "a number"))?,
        };
        let spec = entry.map_or(LossSpec::Custom, |e| (e.spec)(value));
        spec.validate()?;
        Ok(spec)
    }
}

impl fmt::Display for LossSpec {
    /// Parametric losses always print their parameter (`pinball(0.5)`) as a `Number`, the
    /// shortest string that parses back to the same value, so this round-trips through `FromStr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(levels) = self.levels() {
            let levels: Vec<String> = levels.iter().map(|&v| Number(v).to_string()).collect();
            return write!(f, "{}({})", self.name(), levels.join(", "));
        }
        if let LossSpec::Cox { ties: Ties::Efron } = self {
            return write!(f, "cox(ties=efron)");
        }
        if let LossSpec::Aft {
            distribution,
            sigma,
        } = self
        {
            return write!(f, "aft({}, {})", distribution.name(), Number(*sigma));
        }
        match self.parameter() {
            Some((_, value)) => write!(f, "{}({})", self.name(), Number(value)),
            None => f.write_str(self.name()),
        }
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
