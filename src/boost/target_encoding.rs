//! Categorical columns as ordered target statistics (data/target_stats.rs) before binning: the
//! booster trains on the derived numeric features, and its model keeps each level's statistic.

use super::training_data::{count_classes, count_outputs};
use super::{Booster, TrainData};
use crate::data::categories::{named_levels, recode, Recoded};
use crate::data::target_stats::{self, Derived, Targets};
use crate::data::{Frame, TargetStat};
use crate::error::Result;
use crate::params::Params;

/// `fit(train, valid)` on the data with the columns `params.cat_encoding` gives target
/// statistics replaced by them (ordered on `train`, all-row on `valid`), the statistics then
/// stored in the booster's model; `fit` on the data as given when there are none.
///
/// A validation column named by levels is first recoded by name to the training column's
/// codes, and the model keeps the training columns' level names.
pub(super) fn with_target_stats(
    params: &Params,
    train: &TrainData<'_>,
    valid: Option<&TrainData<'_>>,
    fit: impl FnOnce(&TrainData<'_>, Option<&TrainData<'_>>) -> Result<Booster>,
) -> Result<Booster> {
    let known = named_levels(&train.frame);
    let recoded = match valid {
        Some(v) => recode(&v.frame, &known, |name| train_has(&train.frame, name))?,
        None => Recoded::default(),
    };
    let valid = match valid {
        Some(v) => Some(TrainData {
            frame: recoded.frame(&v.frame)?,
            ..*v
        }),
        None => None,
    };
    let mut booster = encoded(params, train, valid.as_ref(), fit)?;
    booster.model.take_levels(&train.frame)?;
    Ok(booster)
}

fn train_has(frame: &Frame<'_>, name: &str) -> bool {
    frame.features().iter().any(|f| f.name == name)
}

fn encoded(
    params: &Params,
    train: &TrainData<'_>,
    valid: Option<&TrainData<'_>>,
    fit: impl FnOnce(&TrainData<'_>, Option<&TrainData<'_>>) -> Result<Booster>,
) -> Result<Booster> {
    if !params.cat_encoding.uses_target_stats() {
        return fit(train, valid);
    }
    let targets = if params.loss.is_multiclass() {
        Targets::Classes {
            y: train.y,
            n: count_classes(train.y)?,
        }
    } else if params.loss.is_multi_output() {
        Targets::Outputs {
            y: train.y,
            n: count_outputs(train)?,
        }
    } else {
        Targets::Scalar(train.y)
    };
    let (derived, stats) = target_stats::fit_ordered(
        &train.frame,
        &params.cat_encoding,
        targets,
        train.weights,
        target_stats::Settings {
            prior_weight: params.cat_prior_weight,
            permutations: params.cat_permutations,
            combinations: params.cat_combinations,
        },
        params.seed,
    )?;
    let by_name: Vec<(&str, &TargetStat)> = stats.iter().map(|(n, s)| (n.as_str(), s)).collect();
    let valid_derived = match valid {
        Some(v) => target_stats::apply(&v.frame, &by_name)?,
        None => Derived::default(),
    };
    let train = TrainData {
        frame: derived.frame(&train.frame)?,
        ..*train
    };
    let valid = match valid {
        Some(v) => Some(TrainData {
            frame: valid_derived.frame(&v.frame)?,
            ..*v
        }),
        None => None,
    };
    let mut booster = fit(&train, valid.as_ref())?;
    for (name, stat) in stats {
        if let Some(f) = booster.model.features.iter_mut().find(|f| f.name == name) {
            f.target_stats = Some(stat);
        }
    }
    Ok(booster)
}
