//! Training a saved model further on data given again: the data are binned with the model's
//! own mappers, the method starts from the model's scores, and the iterations go on numbered
//! after the model's, so that where the method's state is the model's output alone (`gbm`,
//! `rgbm`, `proximal`) the result is, bit for bit, the model of one longer fit on the same data
//! and parameters. The methods that carry more than the output between iterations (momentum
//! sequences, corrected residuals, `repeated_gbm`'s inner count) are refused: a model file does
//! not hold that state.

use super::method::{method, Start};
use super::ranks::sigma_over_ranks;
use super::sampling::Sample;
use super::target_encoding::with_target_stats;
use super::{Booster, MethodState, Offsets, TrainData};
use crate::collective::Local;
use crate::data::BinnedData;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::params::{Method, Params};
use std::sync::Arc;

/// The methods whose state between iterations is the model's output.
const CONTINUABLE: &[Method] = &[Method::Gbm, Method::Rgbm, Method::Proximal];

impl Booster {
    /// A booster that trains `model` further on `train` (and monitors `valid`) for
    /// `params.n_iter` more iterations. `params` must name the model's method and loss; for
    /// the model of one longer fit, they and the data must be the fit's.
    pub fn continue_model(
        params: Params,
        model: Model,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
    ) -> Result<Booster> {
        params.validate()?;
        check_continuable(&params, &model)?;
        // Columns named by levels are read in the model's codes.
        let (train_codes, valid_codes) = (
            model.by_level_names(&train.frame)?,
            valid.map(|v| model.by_level_names(&v.frame)).transpose()?,
        );
        let train = &TrainData {
            frame: train_codes.frame(&train.frame)?,
            ..*train
        };
        let valid = match (valid, &valid_codes) {
            (Some(v), Some(codes)) => Some(TrainData {
                frame: codes.frame(&v.frame)?,
                ..*v
            }),
            _ => None,
        };
        let valid = valid.as_ref();
        let mappers = model.features.iter().map(|f| f.mapper.clone()).collect();
        let names = model.features.iter().map(|f| f.name.clone()).collect();
        let mut booster = with_target_stats(&params.clone(), train, valid, |train, valid| {
            Self::start(
                params,
                train,
                valid,
                Offsets::default(),
                None,
                Arc::new(Local),
                || BinnedData::with_mappers(&train.frame, mappers, names),
            )
        })?;
        let pool = Arc::clone(&booster.pool);
        pool.install(|| booster.take_over(model))?;
        Ok(booster)
    }

    /// Replaces the fresh model and state of a booster with `model`'s, as they stood after its
    /// last iteration.
    fn take_over(&mut self, mut model: Model) -> Result<()> {
        if model.n_outputs != self.model.n_outputs {
            return Err(Error::data(format!(
                "the model has {} outputs, the data {}",
                model.n_outputs, self.model.n_outputs
            )));
        }
        model.best_iteration = None;
        let iterations = model.n_iterations();
        let train = model.predict_binned(self.data.matrix());
        let valid = (self.valid.as_ref()).map(|v| model.predict_binned(&v.matrix));
        // σ at the initial constant, as the longer fit computed it.
        let n = self.y.len() / self.loss.target_width();
        let constant = model.bias.repeat(n);
        self.sigma = sigma_over_ranks(&*self.collective, self.loss.sigma_from(&self.y, &constant));
        let start = Start {
            train: &train,
            valid: valid.as_deref(),
            sigma: self.sigma,
        };
        self.state = method(self.params.method).start(&self.params, &*self.loss, start)?;
        // The proximal family tracks its output's tree weights: the model's, so far.
        if let MethodState::Meta(state) = &mut self.state {
            state.x.weights = model.weights.clone();
        }
        self.valid_pred = valid;
        self.model = model;
        // The generator where the longer fit's stood: the draws of the iterations done.
        for iteration in 1..=iterations {
            method(self.params.method).candidates(&self.params, &self.data, &mut self.rng);
            let rows = (&self.row_ranges[..], &self.w);
            Sample::draw(
                &self.params,
                &self.data,
                &mut self.rng,
                iteration,
                rows,
                &*self.collective,
            );
        }
        self.iterations_before = iterations;
        self.derivs.invalidate();
        let (train_loss, valid_loss) = self.monitored_losses();
        (self.initial_train_loss, self.initial_valid_loss) = (train_loss, valid_loss);
        self.best.loss = valid_loss.unwrap_or(train_loss);
        let (_, valid_metrics) = self.metric_values();
        if let (Some(metric), Some(&start)) = (self.params.metrics.first(), valid_metrics.first()) {
            self.best.loss = super::stopping::oriented(metric, start);
        }
        self.best.n_trees = self.model.n_trees();
        self.best.weights = self.model.weights.clone();
        self.improvement_share = self.improvement_share();
        Ok(())
    }
}

/// The model can be continued with `params`: same method and loss, a method without state
/// beyond the output, no target statistics (drawn from the training rows of the first fit).
fn check_continuable(params: &Params, model: &Model) -> Result<()> {
    if params.method != model.method {
        return Err(Error::param(
            "method",
            format!("{:?}", params.method.name()),
            format!("the model's method, {:?}", model.method.name()),
        ));
    }
    if params.loss != model.loss {
        return Err(Error::param(
            "loss",
            params.loss.to_string(),
            format!("the model's loss, {}", model.loss),
        ));
    }
    if !CONTINUABLE.contains(&params.method) {
        let names: Vec<&str> = CONTINUABLE.iter().map(Method::name).collect();
        return Err(Error::Training(format!(
            "a model of method {:?} cannot be trained further from a file: its iterations \
             carry state (momentum sequences, corrected residuals or inner iteration counts) \
             that the model does not hold; methods that can: {}. Fit again with a larger n_iter",
            params.method.name(),
            names.join(", ")
        )));
    }
    if params.cat_encoding.uses_target_stats() {
        return Err(Error::param(
            "cat_encoding",
            "target_stats",
            "partition when training a model further (target statistics are drawn from the \
             first fit's training rows)",
        ));
    }
    if let Some(feature) = model.features.iter().find(|f| f.target_stats.is_some()) {
        return Err(Error::Training(format!(
            "feature {:?} holds target statistics, which the fit drew from its own training \
             rows: a model with cat_encoding=\"target_stats\" cannot be trained further from a \
             file",
            feature.name
        )));
    }
    if model.n_iterations() == 0 && model.n_trees() > 0 {
        return Err(Error::Training(
            "the model records no iterations (a file from before they were stored): it cannot \
             be trained further"
                .to_string(),
        ));
    }
    Ok(())
}
