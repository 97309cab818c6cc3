//! The public vocabulary of losses: [`LossSpec`] names a loss and its parameter, parses from and
//! prints to strings such as `"pinball(0.9)"`, validates, serialises (`{"name": "pinball",
//! "tau": 0.9}`) and builds the [`Loss`] the booster runs on.

use super::{
    Absolute, Exponential, Hinge, Huber, Logistic, Loss, MulticlassHinge, Pinball, Scalar, Softmax,
    Squared, Tweedie,
};
use crate::error::{Error, Result};
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
    Squared,
    Absolute,
    Pinball {
        tau: f64,
    },
    Huber {
        delta: f64,
    },
    Logistic {
        ridge: f64,
    },
    Exponential {
        beta: f64,
    },
    Hinge,
    Softmax,
    MulticlassHinge,
    Poisson,
    Gamma,
    Tweedie {
        p: f64,
    },
    /// A scalar loss given as an object (Python's `CustomLoss`), not rebuilt from its name: a
    /// model trained with it keeps its trees and predicts the link only.
    Custom,
}

const ALLOWED: &str = "one of squared, absolute, pinball, pinball(tau), huber, huber(delta), logistic, \
                       logistic(ridge), exponential, exponential(beta), hinge, softmax, multiclass_hinge, poisson, \
                       gamma, tweedie, tweedie(p)";

impl LossSpec {
    pub const NAMES: &'static [&'static str] = &[
        "squared",
        "absolute",
        "pinball",
        "huber",
        "logistic",
        "exponential",
        "hinge",
        "softmax",
        "multiclass_hinge",
        "poisson",
        "gamma",
        "tweedie",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            LossSpec::Squared => "squared",
            LossSpec::Absolute => "absolute",
            LossSpec::Pinball { .. } => "pinball",
            LossSpec::Huber { .. } => "huber",
            LossSpec::Logistic { .. } => "logistic",
            LossSpec::Exponential { .. } => "exponential",
            LossSpec::Hinge => "hinge",
            LossSpec::Softmax => "softmax",
            LossSpec::MulticlassHinge => "multiclass_hinge",
            LossSpec::Poisson => "poisson",
            LossSpec::Gamma => "gamma",
            LossSpec::Tweedie { .. } => "tweedie",
            LossSpec::Custom => "custom",
        }
    }

    /// Checks the parameter: τ ∈ (0, 1), δ > 0 finite, ridge ≥ 0 finite, β > 0 finite,
    /// Tweedie power p ∈ (1, 2) (its ends are `poisson` and `gamma`).
    pub fn validate(&self) -> Result<()> {
        match *self {
            LossSpec::Pinball { tau } if !(tau > 0.0 && tau < 1.0) => {
                Err(Error::param("tau", tau, "a number in (0, 1)"))
            }
            LossSpec::Huber { delta } if !(delta > 0.0 && delta.is_finite()) => {
                Err(Error::param("delta", delta, "a finite number > 0"))
            }
            LossSpec::Logistic { ridge } if !(ridge >= 0.0 && ridge.is_finite()) => {
                Err(Error::param("ridge", ridge, "a finite number >= 0"))
            }
            LossSpec::Exponential { beta } if !(beta > 0.0 && beta.is_finite()) => {
                Err(Error::param("beta", beta, "a finite number > 0"))
            }
            LossSpec::Tweedie { p } if !(p > 1.0 && p < 2.0) => Err(Error::param(
                "p",
                p,
                "a number in (1, 2) (p = 1 is `poisson`, p = 2 is `gamma`)",
            )),
            _ => Ok(()),
        }
    }

    /// Smooth with a curvature that grows without bound (the log-link losses): the default
    /// constant step takes σ from the data at the start (`ScalarLoss::sigma_from`).
    pub fn sigma_from_data(&self) -> bool {
        matches!(
            self,
            LossSpec::Poisson | LossSpec::Gamma | LossSpec::Tweedie { .. }
        )
    }

    /// Labels must be ±1.
    pub fn is_binary(&self) -> bool {
        matches!(
            self,
            LossSpec::Logistic { .. } | LossSpec::Exponential { .. } | LossSpec::Hinge
        )
    }

    /// K scores per row, labels are class indices.
    pub fn is_multiclass(&self) -> bool {
        matches!(self, LossSpec::Softmax | LossSpec::MulticlassHinge)
    }

    /// Validates and builds the loss; `n_classes` is used by multiclass losses only (≥ 2).
    pub fn build(&self, n_classes: usize) -> Result<Arc<dyn Loss>> {
        self.validate()?;
        if self.is_multiclass() && n_classes < 2 {
            return Err(Error::param(
                "loss",
                format!("{self} with {n_classes} classes"),
                "at least 2 classes",
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

impl FromStr for LossSpec {
    type Err = Error;

    /// `name` or `name(parameter)`, case-insensitive, `-` accepted for `_`. Defaults: pinball τ = 0.5,
    /// huber δ = 1, logistic ridge 0, exponential β = 1, tweedie p = 1.5 (LightGBM's and
    /// XGBoost's default variance power, midway between Poisson and gamma). The result is
    /// validated.
    fn from_str(s: &str) -> Result<Self> {
        let text = s.trim().to_ascii_lowercase();
        let (name, arg) = match text.find('(') {
            Some(open) if text.ends_with(')') => (
                text[..open].trim(),
                Some(text[open + 1..text.len() - 1].trim()),
            ),
            Some(_) => return Err(Error::param("loss", s, ALLOWED)),
            None => (text.as_str(), None),
        };
        let name = name.replace('-', "_");
        let name = name.as_str();
        let number = |param: &str, default: f64| -> Result<f64> {
            match arg {
                None => Ok(default),
                // `huber(2)` and `huber(delta=2)` alike, as the README's table spells them
                Some(a) => a
                    .strip_prefix(param)
                    .and_then(|rest| rest.trim_start().strip_prefix('='))
                    .unwrap_or(a)
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| Error::param(param, a, "a number")),
            }
        };
        let spec = match name {
            "squared" => LossSpec::Squared,
            "absolute" => LossSpec::Absolute,
            "pinball" => LossSpec::Pinball {
                tau: number("tau", 0.5)?,
            },
            "huber" => LossSpec::Huber {
                delta: number("delta", 1.0)?,
            },
            "logistic" => LossSpec::Logistic {
                ridge: number("ridge", 0.0)?,
            },
            "exponential" => LossSpec::Exponential {
                beta: number("beta", 1.0)?,
            },
            "hinge" => LossSpec::Hinge,
            "softmax" => LossSpec::Softmax,
            "multiclass_hinge" => LossSpec::MulticlassHinge,
            "poisson" => LossSpec::Poisson,
            "gamma" => LossSpec::Gamma,
            "tweedie" => LossSpec::Tweedie {
                p: number("p", 1.5)?,
            },
            "custom" => LossSpec::Custom,
            _ => return Err(Error::param("loss", s, ALLOWED)),
        };
        let parametric = matches!(
            spec,
            LossSpec::Pinball { .. }
                | LossSpec::Huber { .. }
                | LossSpec::Logistic { .. }
                | LossSpec::Exponential { .. }
                | LossSpec::Tweedie { .. }
        );
        if arg.is_some() && !parametric {
            return Err(Error::param(
                "loss",
                s,
                format!("`{name}` without a parameter"),
            ));
        }
        spec.validate()?;
        Ok(spec)
    }
}

impl fmt::Display for LossSpec {
    /// Parametric losses always print their parameter (`pinball(0.5)`); f64 `Display` is the
    /// shortest string that parses back to the same value, so this round-trips through `FromStr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LossSpec::Pinball { tau } => write!(f, "pinball({tau})"),
            LossSpec::Huber { delta } => write!(f, "huber({delta})"),
            LossSpec::Logistic { ridge } => write!(f, "logistic({ridge})"),
            LossSpec::Exponential { beta } => write!(f, "exponential({beta})"),
            LossSpec::Tweedie { p } => write!(f, "tweedie({p})"),
            other => f.write_str(other.name()),
        }
    }
}
