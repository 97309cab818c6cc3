//! Checkpoints: everything a booster needs to resume besides the data, so that a resumed run
//! gives the identical model.

use super::stopping::{Best, StopReason};
use super::target_encoding::with_target_stats;
use super::{Booster, History, MethodState, Offsets, Rng, TrainData};
use crate::collective::Local;
use crate::data::BinnedData;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::params::Params;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Everything a booster needs to resume besides the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    params: Params,
    model: Model,
    state: MethodState,
    history: History,
    best: Best,
    finished: Option<StopReason>,
    rng: Rng,
    valid_pred: Option<Vec<f64>>,
    seconds: f64,
}

impl Booster {
    /// Saves the state needed to resume: parameters, model, method state, history, generator.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            params: self.params.clone(),
            // The last iterate's model: the method state refers to its trees.
            model: self.last_model.as_ref().unwrap_or(&self.model).clone(),
            state: self.state.clone(),
            history: self.history.clone(),
            best: self.best.clone(),
            finished: self.finished.clone(),
            rng: self.rng.clone(),
            valid_pred: self.valid_pred.clone(),
            seconds: self.seconds,
        }
    }

    /// Resumes from a checkpoint with the same training (and validation) data.
    pub fn resume(
        checkpoint: Checkpoint,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
    ) -> Result<Booster> {
        let mappers: Vec<_> = checkpoint
            .model
            .features
            .iter()
            .map(|f| f.mapper.clone())
            .collect();
        let names = checkpoint
            .model
            .features
            .iter()
            .map(|f| f.name.clone())
            .collect();
        // The checkpoint's state already holds any offset; its target statistics are drawn
        // again from the same seed and rows.
        let params = checkpoint.params.clone();
        let mut booster = with_target_stats(&params, train, valid, |train, valid| {
            Self::start(
                checkpoint.params,
                train,
                valid,
                Offsets::default(),
                None,
                Arc::new(Local),
                || BinnedData::with_mappers(&train.frame, mappers, names),
            )
        })?;
        let k = booster.model.n_outputs;
        let n = train.frame.n_rows();
        if n * k != checkpoint.state.iterate().output().len() {
            return Err(Error::data(format!(
                "the checkpoint was trained on {} rows, got {n}",
                checkpoint.state.iterate().output().len() / k,
            )));
        }
        if booster.valid_pred.as_ref().map(Vec::len) != checkpoint.valid_pred.as_ref().map(Vec::len)
        {
            return Err(Error::data(
                "the validation data differs from the checkpoint's",
            ));
        }
        booster.model = checkpoint.model;
        booster.state = checkpoint.state;
        booster.history = checkpoint.history;
        booster.best = checkpoint.best;
        booster.finished = checkpoint.finished;
        booster.rng = checkpoint.rng;
        booster.valid_pred = checkpoint.valid_pred;
        booster.seconds = checkpoint.seconds;
        match booster.finished {
            Some(StopReason::Completed) => booster.keep_best_on_completion(),
            Some(StopReason::EarlyStopping { .. }) => booster.keep_best_on_early_stopping(),
            _ => {}
        }
        // The loss pass of `start` cached derivatives at the initial constant, not at the
        // checkpoint's output.
        booster.derivs.invalidate();
        Ok(booster)
    }
}
