//! The public vocabulary of losses: [`LossSpec`] names a loss and its parameter, parses from and
//! prints to strings such as `"pinball(0.9)"`, validates, serialises (`{"name": "pinball",
//! "tau": 0.9}`) and builds the [`Loss`] the booster runs on.

use super::{
    Absolute, Cox, Exponential, Hinge, Huber, Logistic, Loss, MultiSquared, MulticlassHinge,
    Pinball, Scalar, Softmax, Squared, Tweedie,
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
    /// Cox proportional hazards; the label is the signed time (< 0: censored).
    Cox,
    /// The squared loss over K outputs: the target is n × K, one column per output.
    MultiSquared,
    /// A scalar loss given as an object (Python's `CustomLoss`), not rebuilt from its name: a
    /// model trained with it keeps its trees and predicts the link only.
    Custom,
}

/// A loss of the vocabulary: its name and, for a loss with a parameter, the parameter's name and
/// default; `spec` makes the spec from the parameter (ignored without one).
struct Entry {
    name: &'static str,
    param: Option<(&'static str, f64)>,
    spec: fn(f64) -> LossSpec,
}

const fn entry(
    name: &'static str,
    param: Option<(&'static str, f64)>,
    spec: fn(f64) -> LossSpec,
) -> Entry {
    Entry { name, param, spec }
}

/// Every loss by name, one row each: parsing, `LossSpec::name`, `LossSpec::NAMES` and the list of
/// the error message all read it. Defaults: pinball τ = 0.5, huber δ = 1, logistic ridge 0,
/// exponential β = 1, tweedie p = 1.5 (LightGBM's and XGBoost's default variance power, midway
/// between Poisson and gamma).
#[rustfmt::skip]
const VOCABULARY: [Entry; 14] = [
    entry("squared", None, |_| LossSpec::Squared),
    entry("absolute", None, |_| LossSpec::Absolute),
    entry("pinball", Some(("tau", 0.5)), |tau| LossSpec::Pinball { tau }),
    entry("huber", Some(("delta", 1.0)), |delta| LossSpec::Huber { delta }),
    entry("logistic", Some(("ridge", 0.0)), |ridge| LossSpec::Logistic { ridge }),
    entry("exponential", Some(("beta", 1.0)), |beta| LossSpec::Exponential { beta }),
    entry("hinge", None, |_| LossSpec::Hinge),
    entry("softmax", None, |_| LossSpec::Softmax),
    entry("multiclass_hinge", None, |_| LossSpec::MulticlassHinge),
    entry("poisson", None, |_| LossSpec::Poisson),
    entry("gamma", None, |_| LossSpec::Gamma),
    entry("tweedie", Some(("p", 1.5)), |p| LossSpec::Tweedie { p }),
    entry("cox", None, |_| LossSpec::Cox),
    entry("multi_squared", None, |_| LossSpec::MultiSquared),
];

/// The names accepted by `from_str`, for error messages: `pinball` and `pinball(tau)` alike.
fn allowed() -> String {
    let forms: Vec<String> = (VOCABULARY.iter())
        .flat_map(|e| {
            let with_param = e.param.map(|(param, _)| format!("{}({param})", e.name));
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

    pub fn name(&self) -> &'static str {
        let kind = std::mem::discriminant(self);
        (VOCABULARY.iter())
            .find(|e| std::mem::discriminant(&(e.spec)(e.param.map_or(0.0, |(_, d)| d))) == kind)
            .map_or("custom", |e| e.name)
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
            LossSpec::Poisson | LossSpec::Gamma | LossSpec::Tweedie { .. } | LossSpec::Cox
        )
    }

    /// Piecewise linear in the score: no second derivative to take a Newton step with.
    pub fn is_piecewise_linear(&self) -> bool {
        matches!(
            self,
            LossSpec::Absolute
                | LossSpec::Pinball { .. }
                | LossSpec::Hinge
                | LossSpec::MulticlassHinge
        )
    }

    /// Not a sum of per-row terms: no per-row prox (see `Loss::separable`).
    pub fn is_separable(&self) -> bool {
        !matches!(self, LossSpec::Cox)
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

    /// K scores per row from a target of K columns (n × K).
    pub fn is_multi_output(&self) -> bool {
        matches!(self, LossSpec::MultiSquared)
    }

    /// Validates and builds the loss; `n_classes` is K for multiclass losses (≥ 2) and the
    /// multi-output loss (≥ 1), unused otherwise.
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
            LossSpec::Cox => Arc::new(Cox),
            LossSpec::MultiSquared => Arc::new(MultiSquared::new(n_classes)),
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
        let param = entry.and_then(|e| e.param);
        if arg.is_some() && param.is_none() {
            return Err(Error::param(
                "loss",
                s,
                format!("`{name}` without a parameter"),
            ));
        }
        let value = match (param, arg) {
            (None, _) => 0.0,
            (Some((_, default)), None) => default,
            // `huber(2)` and `huber(delta=2)` alike, as the README's table spells them
            (Some((param, _)), Some(a)) => (a.strip_prefix(param))
                .and_then(|rest| rest.trim_start().strip_prefix('='))
                .unwrap_or(a)
                .trim()
                .parse::<f64>()
                .map_err(|_| Error::param(param, a, "a number"))?,
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
        match *self {
            LossSpec::Pinball { tau } => write!(f, "pinball({})", Number(tau)),
            LossSpec::Huber { delta } => write!(f, "huber({})", Number(delta)),
            LossSpec::Logistic { ridge } => write!(f, "logistic({})", Number(ridge)),
            LossSpec::Exponential { beta } => write!(f, "exponential({})", Number(beta)),
            LossSpec::Tweedie { p } => write!(f, "tweedie({})", Number(p)),
            ref other => f.write_str(other.name()),
        }
    }
}
