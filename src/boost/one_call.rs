//! `Model::fit`: the common case, training on the columns of one frame to its end, in one call.

use super::{Booster, TrainData};
use crate::data::{Feature, Frame};
use crate::error::{did_you_mean, Error, Result};
use crate::model::Model;
use crate::params::Params;

impl Model {
    /// Trains on every column of `frame` but `target`, which holds the target: numbers, or a
    /// categorical column whose codes are the classes (as `Categories::from_strings` codes
    /// labels, in sorted order). Runs `params.n_iter` iterations, or until early stopping; the
    /// `Booster` is there for validation rows, weights, offsets and watching each iteration.
    ///
    /// ```
    /// use optboost::{Categories, Feature, Frame, LossSpec, Model, Params};
    ///
    /// let x: Vec<f64> = (0..300).map(|i| i as f64 / 300.0).collect();
    /// let label = Categories::from_strings(
    ///     &x.iter().map(|&v| if v > 0.5 { "yes" } else { "no" }).collect::<Vec<_>>(),
    /// )?;
    /// let frame = Frame::new(vec![Feature::numeric("x", &x), Feature::categorical_strings("buys", &label)])?;
    /// let params = Params::new().loss(LossSpec::Logistic { ridge: 0.0 }).n_iter(20);
    /// let model = Model::fit(&frame, "buys", &params)?;
    /// let p = model.predict_response(&frame)?; // P(buys = "yes"), the second level
    /// assert!(p[0] < 0.5 && p[299] > 0.5);
    /// # Ok::<(), optboost::Error>(())
    /// ```
    pub fn fit(frame: &Frame<'_>, target: &str, params: &Params) -> Result<Model> {
        let columns = frame.features();
        let Some(target_column) = columns.iter().find(|f| f.name == target) else {
            let names: Vec<&str> = columns.iter().map(|f| f.name.as_str()).collect();
            return Err(Error::data(format!(
                "no target column `{target}`{} among the frame's columns {:?}",
                did_you_mean(target, &names),
                &names[..names.len().min(30)]
            )));
        };
        let y = target_values(target_column);
        let features: Vec<Feature<'_>> = (columns.iter())
            .filter(|f| f.name != target)
            .cloned()
            .collect();
        if features.is_empty() {
            return Err(Error::data(format!(
                "the frame has no feature columns besides the target `{target}`"
            )));
        }
        let train = TrainData {
            frame: Frame::new(features)?,
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(params.clone(), &train, None)?;
        booster.run(|_| true)?;
        Ok(booster.into_model())
    }
}

/// The target as numbers: a categorical column's codes (missing: NaN, which the booster
/// refuses naming the row).
fn target_values(column: &Feature<'_>) -> Vec<f64> {
    match column.values.numeric() {
        Some(values) => values.rows(0, values.len()).collect(),
        None => match column.values {
            crate::data::FeatureValues::Categorical { codes, .. } => (codes.iter())
                .map(|&c| if c < 0 { f64::NAN } else { c as f64 })
                .collect(),
            _ => Vec::new(),
        },
    }
}
