//! Evaluation metrics recorded in the history beside the loss (`metrics` parameter), for the
//! training and validation rows after every iteration. With any metric, early stopping and the
//! best iterate follow the first one on the validation rows (LightGBM's `first_metric_only`),
//! instead of the validation loss.
//!
//! A metric reads the engine's targets (binary labels ±1, class indices) and the link scores,
//! and maps the scores to the response scale through the loss itself, so it means the same for
//! every loss of a task. Means are weighted by the sample weights.

mod ranking;

use crate::collective::{Collective, Local};
use crate::error::{Error, Result};
use crate::loss::{Link, Loss, LossSpec, MetricFamily};
use std::fmt;
use std::str::FromStr;

/// A built-in evaluation metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// √(Σ w (y − ŷ)² / Σ w), ŷ the response.
    Rmse,
    /// Σ w |y − ŷ| / Σ w.
    Mae,
    /// Mean negative log-likelihood of the predicted probabilities (binary or multiclass).
    Logloss,
    /// Weighted share of misclassified rows (probability 0.5 or the largest class score).
    Error,
    /// Area under the ROC curve (binary; ties in the score count half); higher is better.
    Auc,
    /// Mean Poisson deviance 2(y ln(y/μ) − (y − μ)), μ the response.
    PoissonDeviance,
    /// Mean gamma deviance 2(ln(μ/y) + y/μ − 1).
    GammaDeviance,
    /// NDCG@k over the query groups of a ranking loss (`ndcg@10`; `ndcg` is @10); higher is
    /// better (`metric/ranking.rs`).
    Ndcg {
        /// The cut-off rank.
        k: u32,
    },
    /// Mean average precision at k over the query groups (`map@10`; `map` is @10).
    Map {
        /// The cut-off rank.
        k: u32,
    },
    /// Mean reciprocal rank of the first relevant row over the query groups.
    Mrr,
    /// Mean negative log-likelihood −ln p(y) of a predicted distribution.
    Nll,
    /// Mean continuous ranked probability score ∫ (F(t) − [t ≥ y])² dt of a predicted
    /// distribution (Gneiting & Raftery 2007), for the families with a closed form.
    Crps,
}

/// The `k` of `ndcg` and `map` written without one.
const DEFAULT_K: u32 = 10;

impl Metric {
    /// Every metric, in the order of `NAMES`.
    pub const ALL: &'static [Metric] = &[
        Metric::Rmse,
        Metric::Mae,
        Metric::Logloss,
        Metric::Error,
        Metric::Auc,
        Metric::PoissonDeviance,
        Metric::GammaDeviance,
        Metric::Ndcg { k: DEFAULT_K },
        Metric::Map { k: DEFAULT_K },
        Metric::Mrr,
        Metric::Nll,
        Metric::Crps,
    ];
    /// Every metric's name, as `metrics=` takes it.
    pub const NAMES: &'static [&'static str] = &[
        "rmse",
        "mae",
        "logloss",
        "error",
        "auc",
        "poisson_deviance",
        "gamma_deviance",
        "ndcg@k",
        "map@k",
        "mrr",
        "nll",
        "crps",
    ];

    /// The metric's name in the vocabulary (`ndcg@k`); `Display` writes its k (`ndcg@10`).
    pub fn name(&self) -> &'static str {
        match self {
            Metric::Ndcg { .. } => "ndcg@k",
            Metric::Map { .. } => "map@k",
            Metric::Mrr => "mrr",
            Metric::Rmse => "rmse",
            Metric::Mae => "mae",
            Metric::Logloss => "logloss",
            Metric::Error => "error",
            Metric::Auc => "auc",
            Metric::PoissonDeviance => "poisson_deviance",
            Metric::GammaDeviance => "gamma_deviance",
            Metric::Nll => "nll",
            Metric::Crps => "crps",
        }
    }

    /// True for metrics where larger values are better (AUC): early stopping minimises −value.
    pub fn higher_is_better(&self) -> bool {
        matches!(
            self,
            Metric::Auc | Metric::Ndcg { .. } | Metric::Map { .. } | Metric::Mrr
        )
    }

    /// Whether the metric means something for the targets and predictions of `loss` (the
    /// metric family of its row in the loss vocabulary).
    pub fn check(&self, loss: &LossSpec) -> Result<()> {
        if let (Metric::Crps, Link::Distribution(family)) = (self, loss.link()) {
            if !family.has_closed_form_crps() {
                return Err(Error::param(
                    "metrics",
                    format!("crps with the {loss} loss"),
                    "a distribution whose CRPS has a closed form (normal, lognormal); \"nll\" \
                     for the others",
                ));
            }
        }
        if self.fits(loss.traits().metrics) {
            return Ok(());
        }
        let losses: Vec<&str> = (LossSpec::vocabulary())
            .filter(|spec| self.fits(spec.traits().metrics))
            .map(|spec| spec.name())
            .collect();
        Err(Error::param(
            "metrics",
            format!("{} with the {} loss", self.name(), loss),
            format!("a loss among {}", losses.join(", ")),
        ))
    }

    /// The ranking metric this is, if it is one.
    fn ranking(&self) -> Option<ranking::Ranking> {
        match *self {
            Metric::Ndcg { k } => Some(ranking::Ranking::Ndcg(k as usize)),
            Metric::Map { k } => Some(ranking::Ranking::Map(k as usize)),
            Metric::Mrr => Some(ranking::Ranking::Mrr),
            _ => None,
        }
    }

    /// Whether the metric is one of `family`'s.
    pub fn fits(&self, family: MetricFamily) -> bool {
        match family {
            MetricFamily::Regression => matches!(self, Metric::Rmse | Metric::Mae),
            MetricFamily::LogLink => matches!(
                self,
                Metric::Rmse | Metric::Mae | Metric::PoissonDeviance | Metric::GammaDeviance
            ),
            MetricFamily::Binary => matches!(
                self,
                Metric::Rmse | Metric::Mae | Metric::Logloss | Metric::Error | Metric::Auc
            ),
            MetricFamily::Multiclass => matches!(self, Metric::Logloss | Metric::Error),
            MetricFamily::Quantiles => false,
            MetricFamily::Ranking => self.ranking().is_some(),
            MetricFamily::Distribution => {
                matches!(self, Metric::Rmse | Metric::Mae | Metric::Nll | Metric::Crps)
            }
        }
    }

    /// The metric over rows with targets `y` (engine encoding), link scores `scores` (n × K for
    /// a multiclass loss) and weights `w`.
    pub fn evaluate(&self, loss: &dyn Loss, y: &[f64], scores: &[f64], w: &[f64]) -> f64 {
        self.evaluate_over(loss, y, scores, w, &Local)
    }

    /// `evaluate` over the rows of every rank of a data-parallel fit (these are this rank's):
    /// the weighted sums of the terms and the weights are added over the ranks. Not for `auc`,
    /// which ranks all the rows together.
    pub fn evaluate_over(
        &self,
        loss: &dyn Loss,
        y: &[f64],
        scores: &[f64],
        w: &[f64],
        collective: &dyn Collective,
    ) -> f64 {
        let total: f64 = w.iter().sum();
        let over_ranks = |sum: f64| {
            let mut sums = [sum, total];
            collective.sum(&mut sums);
            sums[0] / sums[1]
        };
        let mean = |term: &dyn Fn(usize) -> f64| -> f64 {
            over_ranks((0..y.len()).map(|i| w[i] * term(i)).sum::<f64>())
        };
        if let Some(metric) = self.ranking() {
            let (total, weight) = ranking::sums(metric, y, scores, w);
            let mut sums = [total, weight];
            collective.sum(&mut sums);
            return sums[0] / sums[1];
        }
        if let Some(d) = loss.distribution() {
            let row = |i: usize| &scores[i * 2..i * 2 + 2];
            let error = |i: usize| y[i] - d.family().mean(row(i));
            return match self {
                Metric::Rmse => mean(&|i| error(i).powi(2)).sqrt(),
                Metric::Mae => mean(&|i| error(i).abs()),
                Metric::Crps => mean(&|i| d.crps(y[i], row(i)).unwrap_or(f64::NAN)),
                _ => mean(&|i| d.nll(y[i], row(i))),
            };
        }
        let mut response = vec![0.0; scores.len()];
        loss.response_into(scores, &mut response);
        let k = loss.n_outputs();
        if loss.target_width() > 1 {
            // One target per output: the row's mean error over its K outputs (RMSE and MAE over
            // all n × K entries, rows weighted).
            let n = w.len();
            let row = |i: usize, e: &dyn Fn(f64) -> f64| -> f64 {
                (0..k)
                    .map(|j| e(y[i * k + j] - response[i * k + j]))
                    .sum::<f64>()
                    / k as f64
            };
            let mean =
                |e: &dyn Fn(f64) -> f64| over_ranks((0..n).map(|i| w[i] * row(i, e)).sum::<f64>());
            return match self {
                Metric::Rmse => mean(&|d| d * d).sqrt(),
                _ => mean(&|d: f64| d.abs()),
            };
        }
        if k > 1 {
            // Class probabilities: the log loss of the true class, or whether another is likelier.
            let rows: Vec<(f64, bool)> = (0..y.len())
                .map(|i| {
                    let p = &response[i * k..(i + 1) * k];
                    let class = y[i] as usize;
                    let best = (0..k).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0);
                    (-p[class].max(f64::MIN_POSITIVE).ln(), best != class)
                })
                .collect();
            return match self {
                Metric::Logloss => mean(&|i| rows[i].0),
                _ => mean(&|i| f64::from(u8::from(rows[i].1))),
            };
        }
        // Binary targets ±1 inside the engine; metrics read them as 0/1.
        let target = |i: usize| {
            if loss.is_binary() {
                f64::from(u8::from(y[i] > 0.0))
            } else {
                y[i]
            }
        };
        match self {
            Metric::Rmse => mean(&|i| (target(i) - response[i]).powi(2)).sqrt(),
            Metric::Mae => mean(&|i| (target(i) - response[i]).abs()),
            Metric::Logloss => mean(&|i| {
                let p = if target(i) > 0.5 {
                    response[i]
                } else {
                    1.0 - response[i]
                };
                -p.max(f64::MIN_POSITIVE).ln()
            }),
            Metric::Error => {
                mean(&|i| f64::from(u8::from((response[i] > 0.5) != (target(i) > 0.5))))
            }
            Metric::Auc => auc(&(0..y.len()).map(target).collect::<Vec<_>>(), scores, w),
            Metric::PoissonDeviance => mean(&|i| {
                let (t, mu) = (target(i), response[i]);
                let t_ln = if t > 0.0 { t * (t / mu).ln() } else { 0.0 };
                2.0 * (t_ln - (t - mu))
            }),
            Metric::Ndcg { .. } | Metric::Map { .. } | Metric::Mrr => unreachable!("above"),
            Metric::GammaDeviance => mean(&|i| {
                let (t, mu) = (target(i), response[i]);
                2.0 * ((mu / t).ln() + t / mu - 1.0)
            }),
            // Checked out by `check`: a distribution's metrics are answered above.
            Metric::Nll | Metric::Crps => f64::NAN,
        }
    }
}

/// Weighted AUC: the probability that a random positive scores above a random negative (ties
/// count half), both drawn in proportion to their weights. One sort, then a sweep over runs of
/// tied scores.
fn auc(target: &[f64], scores: &[f64], w: &[f64]) -> f64 {
    let mut order: Vec<usize> = (0..target.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let (mut negatives_below, mut area) = (0.0, 0.0);
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        let (mut pos, mut neg) = (0.0, 0.0);
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            let i = order[end];
            if target[i] > 0.5 {
                pos += w[i];
            } else {
                neg += w[i];
            }
            end += 1;
        }
        area += pos * (negatives_below + 0.5 * neg);
        negatives_below += neg;
        start = end;
    }
    let positives: f64 = (0..target.len())
        .filter(|&i| target[i] > 0.5)
        .map(|i| w[i])
        .sum();
    if positives == 0.0 || negatives_below == 0.0 {
        // One class only: no pair to rank.
        return f64::NAN;
    }
    area / (positives * negatives_below)
}

impl FromStr for Metric {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let name = s.trim().to_ascii_lowercase();
        Ok(match name.as_str() {
            "rmse" => Metric::Rmse,
            "mae" => Metric::Mae,
            "logloss" => Metric::Logloss,
            "error" => Metric::Error,
            "auc" => Metric::Auc,
            "poisson_deviance" => Metric::PoissonDeviance,
            "gamma_deviance" => Metric::GammaDeviance,
            "ndcg" => Metric::Ndcg { k: DEFAULT_K },
            "map" => Metric::Map { k: DEFAULT_K },
            "mrr" => Metric::Mrr,
            _ if name.starts_with("ndcg@") || name.starts_with("map@") => {
                let (family, k) = name.split_once('@').unwrap_or_default();
                let k = (k.parse::<u32>().ok())
                    .filter(|k| (1..=10_000).contains(k))
                    .ok_or_else(|| {
                        Error::param("metrics", format!("{s:?}"), "a cut-off k in 1..10000 after @")
                    })?;
                if family == "ndcg" {
                    Metric::Ndcg { k }
                } else {
                    Metric::Map { k }
                }
            }
            "nll" => Metric::Nll,
            "crps" => Metric::Crps,
            _ => {
                return Err(Error::param(
                    "metrics",
                    format!("{s:?}"),
                    format!("names among {}", Metric::NAMES.join(", ")),
                ))
            }
        })
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Ndcg { k } => write!(f, "ndcg@{k}"),
            Metric::Map { k } => write!(f, "map@{k}"),
            _ => f.write_str(self.name()),
        }
    }
}

impl serde::Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// `metrics`: names separated by commas (empty: none).
pub(crate) fn parse_metrics(value: &str) -> Result<Vec<Metric>> {
    value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_counts_ordered_pairs_and_half_ties() {
        // Positives at scores 0.9, 0.5; negatives at 0.5, 0.1: pairs (0.9 > 0.5, 0.9 > 0.1,
        // 0.5 tie 0.5, 0.5 > 0.1) = (1 + 1 + 0.5 + 1)/4.
        let target = [1.0, 1.0, 0.0, 0.0];
        let scores = [0.9, 0.5, 0.5, 0.1];
        assert_eq!(auc(&target, &scores, &[1.0; 4]), 3.5 / 4.0);
        // Weight 2 on the first negative counts it twice.
        assert_eq!(
            auc(&target, &scores, &[1.0, 1.0, 2.0, 1.0]),
            (2.0 + 1.0 + 1.0 + 1.0) / 6.0
        );
        assert!(auc(&[1.0, 1.0], &[0.1, 0.2], &[1.0, 1.0]).is_nan());
    }

    #[test]
    fn names_parse_and_check_against_the_loss() {
        assert_eq!(
            parse_metrics("auc, logloss,").unwrap(),
            vec![Metric::Auc, Metric::Logloss]
        );
        assert!(parse_metrics("accuracy").is_err());
        let logistic: LossSpec = "logistic".parse().unwrap();
        assert!(Metric::Auc.check(&logistic).is_ok());
        assert!(Metric::Auc.check(&LossSpec::Squared).is_err());
        assert!(Metric::PoissonDeviance.check(&LossSpec::Poisson).is_ok());
        assert!(Metric::Rmse.check(&LossSpec::Softmax).is_err());
    }
}
