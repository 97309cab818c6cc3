//! What a loss is, beside how it computes: the traits each row of the loss vocabulary
//! (`spec.rs`) states once, with its [`Link`]. Every question the crate and the Python front end ask about a loss
//! by name — which targets it takes, how a score maps to a prediction, which metrics mean
//! something for it, whether a data-parallel fit or the proximal step can run it — reads these.
//! Every `match` on them is exhaustive, so a new task or link makes the compiler name each place
//! that must decide what it means (ranking and distributional losses will add their tasks here).

/// The traits of one loss (one row of the vocabulary).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traits {
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
}

impl Task {
    pub fn name(&self) -> &'static str {
        match self {
            Task::Regression => "regression",
            Task::Binary => "binary",
            Task::Multiclass => "multiclass",
            Task::MultiOutput => "multi_output",
            Task::Survival => "survival",
            Task::Quantiles => "quantiles",
        }
    }

    /// How the front end encodes the target: real values ("regression"), two labels ("binary")
    /// or class codes ("multiclass").
    pub fn target_encoding(&self) -> &'static str {
        match self {
            Task::Regression | Task::MultiOutput | Task::Survival | Task::Quantiles => "regression",
            Task::Binary => "binary",
            Task::Multiclass => "multiclass",
        }
    }
}

/// How one row's scores map to the response scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Link {
    Identity,
    /// P(y = 1) = 1 / (1 + e^{−scale·f}).
    Sigmoid {
        scale: f64,
    },
    /// Class probabilities, the softmax of the K scores.
    Softmax,
    /// The mean (or Cox's relative hazard) e^f.
    Exp,
    Margin,
    /// Quantiles at increasing levels: the row's scores sorted increasingly (the rearrangement
    /// of Chernozhukov, Fernández-Val & Galichon 2010, which never increases the pinball loss).
    Sorted,
}

impl Link {
    pub fn name(&self) -> &'static str {
        match self {
            Link::Identity => "identity",
            Link::Sigmoid { .. } => "sigmoid",
            Link::Softmax => "softmax",
            Link::Exp => "exp",
            Link::Margin => "margin",
            Link::Sorted => "sorted",
        }
    }

    /// The sigmoid's scale; `None` for the other links.
    pub fn scale(&self) -> Option<f64> {
        match self {
            Link::Sigmoid { scale } => Some(*scale),
            Link::Identity | Link::Softmax | Link::Exp | Link::Margin | Link::Sorted => None,
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
        }
        true
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
}

/// The loss-like metric of response-scale predictions; the parametric ones take the loss's
/// parameter (pinball's τ, Tweedie's power).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultMetric {
    Mse,
    Mae,
    Logloss,
    /// The error rate, for margins.
    Error,
    PoissonDeviance,
    GammaDeviance,
    TweedieDeviance,
    Pinball,
    /// The sum over the levels of the pinball losses, per row.
    Quantiles,
}

impl DefaultMetric {
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
        }
    }
}
