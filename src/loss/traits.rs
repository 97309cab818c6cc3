//! What a loss is, beside how it computes: the traits each row of the loss vocabulary
//! (`spec.rs`) states once, with its [`Link`]. Every question the crate and the Python front end ask about a loss
//! by name — which targets it takes, how a score maps to a prediction, which metrics mean
//! something for it, whether a data-parallel fit or the proximal step can run it — reads these.
//! Every `match` on them is exhaustive, so a new task or link makes the compiler name each place
//! that must decide what it means (ranking and distributional losses will add their tasks here).

/// The traits of one loss (one row of the vocabulary).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traits {
    /// What the target is, which decides how the front ends encode it.
    pub task: Task,
    /// ℓ is a sum of per-row terms (`Loss::separable`): the per-row prox and any run of rows
    /// make sense.
    pub separable: bool,
    /// Piecewise linear in the score: no second derivative to take a Newton step with.
    pub piecewise_linear: bool,
    /// Smooth with a curvature that grows without bound (the log-link losses): the default
    /// constant step takes σ from the data at the start (`Loss::sigma_from`).
    pub sigma_from_data: bool,
    /// A data-parallel fit (`Booster::distributed`) can run it: its value, init and leaf values
    /// add over ranks.
    pub distributable: bool,
    /// The built-in metrics (`metrics` parameter) that mean something for its targets.
    pub metrics: MetricFamily,
    /// The loss-like metric of a prediction on the response scale, e.g. for permutation importance.
    pub default_metric: DefaultMetric,
    /// The loss (by name) that fits this one to several target columns (an n × K target).
    pub multi_output: Option<&'static str>,
    /// R gbm's name of the same loss (its `distribution`), which the Python front end accepts.
    pub r_gbm: Option<&'static str>,
}

/// The kind of target a loss fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// One real target per row.
    Regression,
    /// Labels ±1 (0/1 are mapped to them).
    Binary,
    /// Class indices 0..K−1, K scores per row.
    Multiclass,
    /// K real targets per row (an n × K target), K scores per row.
    MultiOutput,
    /// Signed survival times (< 0: censored), one score per row.
    Survival,
    /// One real target per row, one score per quantile level.
    Quantiles,
    /// A relevance label and a query group per row (n × 2), one score per row.
    Ranking,
    /// One real target per row, one score per parameter of its distribution.
    Distribution,
}

impl Task {
    /// The task's name, as the Python front end reports it.
    pub fn name(&self) -> &'static str {
        match self {
            Task::Regression => "regression",
            Task::Binary => "binary",
            Task::Multiclass => "multiclass",
            Task::MultiOutput => "multi_output",
            Task::Survival => "survival",
            Task::Quantiles => "quantiles",
            Task::Ranking => "ranking",
            Task::Distribution => "distribution",
        }
    }

    /// How the front end encodes the target: real values ("regression"), two labels ("binary")
    /// or class codes ("multiclass").
    pub fn target_encoding(&self) -> &'static str {
        match self {
            Task::Regression
            | Task::MultiOutput
            | Task::Survival
            | Task::Quantiles
            | Task::Ranking
            | Task::Distribution => "regression",
            Task::Binary => "binary",
            Task::Multiclass => "multiclass",
        }
    }
}

/// How one row's scores map to the response scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Link {
    /// Scores are the response.
    Identity,
    /// P(y = 1) = 1 / (1 + e^{−scale·f}).
    Sigmoid {
        /// The factor of the score inside the sigmoid (2β for the exponential loss).
        scale: f64,
    },
    /// Class probabilities, the softmax of the K scores.
    Softmax,
    /// The mean (or Cox's relative hazard) e^f.
    Exp,
    /// Signs of the score: a class, with no probability (the hinge losses).
    Margin,
    /// Quantiles at increasing levels: the row's scores sorted increasingly (the rearrangement
    /// of Chernozhukov, Fernández-Val & Galichon 2010, which never increases the pinball loss).
    Sorted,
    /// A distribution's parameters by name (`Family::parameters_into`).
    Distribution(Family),
}

impl Link {
    /// The link's name, as the Python front end reports it.
    pub fn name(&self) -> &'static str {
        match self {
            Link::Identity => "identity",
            Link::Sigmoid { .. } => "sigmoid",
            Link::Softmax => "softmax",
            Link::Exp => "exp",
            Link::Margin => "margin",
            Link::Sorted => "sorted",
            Link::Distribution(_) => "distribution",
        }
    }

    /// The sigmoid's scale; `None` for the other links.
    pub fn scale(&self) -> Option<f64> {
        match self {
            Link::Sigmoid { scale } => Some(*scale),
            Link::Identity
            | Link::Softmax
            | Link::Exp
            | Link::Margin
            | Link::Sorted
            | Link::Distribution(_) => None,
        }
    }

    /// One row's response from its scores `f` into `out`; `false` (and `out` untouched) for a
    /// margin, which has no response scale.
    pub fn response_into(&self, f: &[f64], out: &mut [f64]) -> bool {
        match *self {
            Link::Identity => out.copy_from_slice(f),
            Link::Sigmoid { scale } => {
                for (o, &f) in out.iter_mut().zip(f) {
                    *o = 1.0 / (1.0 + (-scale * f).exp());
                }
            }
            Link::Softmax => super::softmax_into(f, out),
            Link::Exp => {
                for (o, &f) in out.iter_mut().zip(f) {
                    *o = f.exp();
                }
            }
            Link::Margin => return false,
            Link::Sorted => {
                out.copy_from_slice(f);
                out.sort_unstable_by(f64::total_cmp);
            }
            Link::Distribution(family) => family.parameters_into(f, out),
        }
        true
    }
}

/// The family of a distributional loss (`distribution.rs`): how its two outputs map to the
/// parameters that scipy.stats names (normal and lognormal: as R names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Outputs (μ, ln σ); parameters `mean`, `sd`.
    Normal,
    /// Outputs (μ, ln σ) of ln y; parameters `meanlog`, `sdlog`.
    LogNormal,
    /// Outputs (ln mean, ln shape); parameters `a` (the shape) and `scale` = mean / a.
    Gamma,
    /// Outputs (ln mean, ln α), variance μ + αμ²; parameters `n` = 1/α and `p` = n / (n + μ).
    NegativeBinomial,
    /// Outputs (μ, ln σ) at fixed degrees of freedom; parameters `loc`, `scale`.
    StudentT,
}

impl Family {
    /// The distribution's parameters by name, as `predict(type="distribution")` gives them.
    pub fn parameter_names(&self) -> [&'static str; 2] {
        match self {
            Family::Normal => ["mean", "sd"],
            Family::LogNormal => ["meanlog", "sdlog"],
            Family::Gamma => ["a", "scale"],
            Family::NegativeBinomial => ["n", "p"],
            Family::StudentT => ["loc", "scale"],
        }
    }

    /// The parameters of one row's outputs `f`, into `out` (log-scale outputs clamped as in
    /// `distribution::log_param`).
    pub fn parameters_into(&self, f: &[f64], out: &mut [f64]) {
        let log = super::distribution::log_param;
        match self {
            Family::Normal | Family::LogNormal | Family::StudentT => {
                out[0] = f[0];
                out[1] = log(f[1]).exp();
            }
            Family::Gamma => {
                out[0] = log(f[1]).exp();
                out[1] = (log(f[0]) - log(f[1])).exp();
            }
            Family::NegativeBinomial => {
                let (ln_mean, ln_alpha) = (log(f[0]), log(f[1]));
                out[0] = (-ln_alpha).exp();
                // p = 1 / (1 + αμ), without overflow
                out[1] = 1.0 / (1.0 + (ln_alpha + ln_mean).exp());
            }
        }
    }

    /// Whether `Distribution::crps` has a closed form (the `crps` metric).
    pub fn has_closed_form_crps(&self) -> bool {
        matches!(self, Family::Normal | Family::LogNormal)
    }

    /// The mean of the distribution of one row's outputs `f` (the t's location: its mean when
    /// it has one, degrees of freedom > 1).
    pub fn mean(&self, f: &[f64]) -> f64 {
        let log = super::distribution::log_param;
        match self {
            Family::Normal | Family::StudentT => f[0],
            Family::LogNormal => (f[0] + 0.5 * log(f[1]).exp().powi(2)).exp(),
            Family::Gamma | Family::NegativeBinomial => log(f[0]).exp(),
        }
    }
}

/// Which built-in metrics fit a loss's targets and predictions (`Metric::fits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricFamily {
    /// Errors of a real prediction: rmse, mae.
    Regression,
    /// A positive mean: rmse, mae and the Poisson and gamma deviances.
    LogLink,
    /// A probability of ±1 labels: rmse, mae, logloss, error, auc.
    Binary,
    /// Class probabilities: logloss, error.
    Multiclass,
    /// Several quantiles of one target: none of the built-in metrics (the loss itself, the sum
    /// of the levels' pinball losses, is what validation and early stopping follow).
    Quantiles,
    /// Scores ranked within query groups: ndcg@k, map@k, mrr.
    Ranking,
    /// A predicted distribution: rmse and mae of its mean, nll, crps.
    Distribution,
}

/// The loss-like metric of response-scale predictions; the parametric ones take the loss's
/// parameter (pinball's τ, Tweedie's power).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultMetric {
    /// Mean squared error.
    Mse,
    /// Mean absolute error.
    Mae,
    /// Mean log-loss of the predicted probabilities.
    Logloss,
    /// The error rate, for margins.
    Error,
    /// Mean Poisson deviance.
    PoissonDeviance,
    /// Mean gamma deviance.
    GammaDeviance,
    /// Mean Tweedie deviance at the loss's power.
    TweedieDeviance,
    /// Mean pinball loss at the loss's level.
    Pinball,
    /// The sum over the levels of the pinball losses, per row.
    Quantiles,
    /// NDCG@10 within query groups (higher is better).
    Ndcg,
    /// The negative log-likelihood of a predicted distribution.
    Nll,
}

impl DefaultMetric {
    /// The metric's name, as in `metrics=`.
    pub fn name(&self) -> &'static str {
        match self {
            DefaultMetric::Mse => "mse",
            DefaultMetric::Mae => "mae",
            DefaultMetric::Logloss => "logloss",
            DefaultMetric::Error => "error",
            DefaultMetric::PoissonDeviance => "poisson_deviance",
            DefaultMetric::GammaDeviance => "gamma_deviance",
            DefaultMetric::TweedieDeviance => "tweedie_deviance",
            DefaultMetric::Pinball => "pinball",
            DefaultMetric::Quantiles => "quantiles",
            DefaultMetric::Ndcg => "ndcg@10",
            DefaultMetric::Nll => "nll",
        }
    }
}
