//! The `Booster`: one state machine for every method of SPEC §3. All state lives in the struct;
//! `step()` performs exactly one iteration, and a finished booster keeps answering `Finished`.
//! A booster can be checkpointed (serialized) mid-training and resumed to the identical model.

mod gbm;
mod history;
mod rng;
mod step_rule;
mod vectors;

pub use history::{cosine, History, Record};

use crate::data::{BinnedData, BinnedMatrix, Frame};
use crate::error::{Error, Result};
use crate::loss::{Loss, Objective};
use crate::model::{FeatureSpec, Model};
use crate::params::{Init, Method, Params, StepRule};
use crate::tree::{Candidates, Tree};
use rng::Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;
use vectors::{axpy, par_sum};

/// The training loss may grow by this factor over its best value before training is declared
/// divergent (accelerated methods in the overfitting regime, SPEC §4).
const DIVERGENCE_FACTOR: f64 = 1e6;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StopReason {
    /// `n_iter` iterations done.
    Completed,
    /// The validation loss did not improve for `early_stopping_rounds` iterations.
    EarlyStopping { best_iteration: usize },
    /// Non-finite values or an exploding loss; the best iterate was kept.
    Diverged { iteration: usize, detail: String },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Completed => write!(f, "completed all iterations"),
            StopReason::EarlyStopping { best_iteration } => {
                write!(f, "early stopping: best validation loss at iteration {best_iteration}")
            }
            StopReason::Diverged { iteration, detail } => {
                write!(f, "diverged at iteration {iteration} ({detail}); kept the best iterate")
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Continue(Record),
    Finished(StopReason),
}

/// What one iteration of a method reports besides the losses the booster computes.
pub struct Iteration {
    pub cos: Vec<f64>,
    pub step: f64,
}

/// The method's own state (SPEC §3): prediction vectors on the training rows and whatever its
/// recursion carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum MethodState {
    Gbm(gbm::GbmState),
}

impl MethodState {
    fn new(params: &Params, bias: f64, n: usize) -> Result<Self> {
        match params.method {
            Method::Gbm => Ok(MethodState::Gbm(gbm::GbmState { f: vec![bias; n] })),
            other => Err(Error::param("method", other, "\"gbm\" (this build)")),
        }
    }

    /// The output sequence on the training rows (the model's predictions).
    fn output(&self) -> &[f64] {
        match self {
            MethodState::Gbm(s) => &s.f,
        }
    }
}

#[derive(Debug, Clone)]
struct Validation {
    matrix: BinnedMatrix,
    y: Vec<f64>,
    w: Vec<f64>,
}

/// The best iterate so far, on the validation loss if there is one, else on the training loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Best {
    iteration: usize,
    loss: f64,
    n_trees: usize,
    weights: Vec<f64>,
}

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

/// Training data handed to a booster: features, target and optional sample weights.
#[derive(Debug, Clone)]
pub struct TrainData<'a> {
    pub frame: Frame<'a>,
    pub y: &'a [f64],
    pub weights: Option<&'a [f64]>,
}

pub struct Booster {
    params: Params,
    data: BinnedData,
    y: Vec<f64>,
    w: Vec<f64>,
    loss: Box<dyn Loss>,
    valid: Option<Validation>,
    valid_pred: Option<Vec<f64>>,
    model: Model,
    state: MethodState,
    history: History,
    best: Best,
    finished: Option<StopReason>,
    rng: Rng,
    pool: Arc<rayon::ThreadPool>,
    seconds: f64,
}

/// Borrowed view of a booster that a method's `step` works with.
pub struct Context<'a> {
    pub params: &'a Params,
    pub data: &'a BinnedData,
    pub y: &'a [f64],
    pub w: &'a [f64],
    pub loss: &'a dyn Loss,
    pub model: &'a mut Model,
    pub rng: &'a mut Rng,
    valid: Option<&'a Validation>,
    valid_pred: Option<&'a mut Vec<f64>>,
}

impl Context<'_> {
    /// The step rule in force: the user's, or the method's default.
    pub fn step_rule(&self) -> StepRule {
        self.params.step.unwrap_or_else(|| default_step_rule(self.params, self.loss))
    }

    /// Adds `weight · tree` to output `output` of the model and of the validation predictions.
    pub fn add_tree(&mut self, tree: Tree, weight: f64, output: usize) {
        if let (Some(valid), Some(pred)) = (self.valid, self.valid_pred.as_deref_mut()) {
            let values: Vec<f64> = (0..valid.matrix.n_rows()).map(|r| tree.predict_bins(valid.matrix.row(r))).collect();
            axpy(pred, weight, &values);
        }
        self.model.push_tree(tree, weight, output);
    }
}

fn default_step_rule(params: &Params, loss: &dyn Loss) -> StepRule {
    match params.method {
        Method::Gbm if loss.sigma().is_some() => StepRule::Newton,
        _ => StepRule::LeafLineSearch,
    }
}

impl Booster {
    /// Validates parameters and data, bins the features and prepares iteration 0.
    pub fn new(params: Params, train: &TrainData<'_>, valid: Option<&TrainData<'_>>) -> Result<Booster> {
        params.validate()?;
        let data = BinnedData::learn(&train.frame, &params.binning)?;
        Self::start(params, data, train, valid)
    }

    fn start(params: Params, data: BinnedData, train: &TrainData<'_>, valid: Option<&TrainData<'_>>) -> Result<Booster> {
        let loss = match params.loss.build(2)? {
            Objective::Scalar(loss) => loss,
            Objective::Multiclass(_) => {
                return Err(Error::Training("multiclass losses need the methods branch's booster".into()))
            }
        };
        let (y, w) = checked_target(train, loss.as_ref(), "training")?;
        let valid = valid
            .map(|v| -> Result<Validation> {
                let (y, w) = checked_target(v, loss.as_ref(), "validation")?;
                Ok(Validation { matrix: data.bin(&v.frame)?, y, w })
            })
            .transpose()?;
        let bias = match params.init {
            Init::Optimal => loss.init(&y, &w),
            Init::Zero => 0.0,
        };
        if !bias.is_finite() {
            return Err(Error::Training(format!("the initial constant is not finite ({bias})")));
        }
        let features: Vec<FeatureSpec> = data
            .names
            .iter()
            .zip(&data.mappers)
            .map(|(name, mapper)| FeatureSpec { name: name.clone(), mapper: mapper.clone() })
            .collect();
        let model = Model {
            method: params.method,
            loss: params.loss.clone(),
            n_outputs: 1,
            bias: vec![bias],
            trees: Vec::new(),
            weights: Vec::new(),
            tree_outputs: Vec::new(),
            features,
            best_iteration: None,
        };
        let state = MethodState::new(&params, bias, y.len())?;
        let valid_pred = valid.as_ref().map(|v| vec![bias; v.y.len()]);
        let pool = Arc::new(thread_pool(params.n_threads)?);
        let rng = Rng::new(params.seed);
        let mut booster = Booster {
            params,
            data,
            y,
            w,
            loss,
            valid,
            valid_pred,
            model,
            state,
            history: History::default(),
            best: Best { iteration: 0, loss: f64::INFINITY, n_trees: 0, weights: Vec::new() },
            finished: None,
            rng,
            pool,
            seconds: 0.0,
        };
        booster.best.loss = booster.monitored_loss().0;
        Ok(booster)
    }

    /// Saves the state needed to resume: parameters, model, method state, history, generator.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            params: self.params.clone(),
            model: self.model.clone(),
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
    pub fn resume(checkpoint: Checkpoint, train: &TrainData<'_>, valid: Option<&TrainData<'_>>) -> Result<Booster> {
        let mappers: Vec<_> = checkpoint.model.features.iter().map(|f| f.mapper.clone()).collect();
        let names = checkpoint.model.features.iter().map(|f| f.name.clone()).collect();
        let matrix = BinnedMatrix::from_frame(&train.frame, &mappers)?;
        let data = BinnedData::new(matrix, mappers, names);
        let mut booster = Self::start(checkpoint.params, data, train, valid)?;
        if booster.y.len() != checkpoint.state.output().len() {
            return Err(Error::data(format!(
                "the checkpoint was trained on {} rows, got {}",
                checkpoint.state.output().len(),
                booster.y.len()
            )));
        }
        if booster.valid_pred.as_ref().map(Vec::len) != checkpoint.valid_pred.as_ref().map(Vec::len) {
            return Err(Error::data("the validation data differs from the checkpoint's"));
        }
        booster.model = checkpoint.model;
        booster.state = checkpoint.state;
        booster.history = checkpoint.history;
        booster.best = checkpoint.best;
        booster.finished = checkpoint.finished;
        booster.rng = checkpoint.rng;
        booster.valid_pred = checkpoint.valid_pred;
        booster.seconds = checkpoint.seconds;
        Ok(booster)
    }

    pub fn params(&self) -> &Params {
        &self.params
    }
    pub fn model(&self) -> &Model {
        &self.model
    }
    pub fn into_model(self) -> Model {
        self.model
    }
    pub fn history(&self) -> &History {
        &self.history
    }
    pub fn iteration(&self) -> usize {
        self.history.len()
    }
    pub fn finished(&self) -> Option<&StopReason> {
        self.finished.as_ref()
    }
    /// Predictions of the current model on the training rows.
    pub fn train_predictions(&self) -> &[f64] {
        self.state.output()
    }

    /// Allows `extra` more iterations (continued training). Has no effect once early stopping or
    /// divergence ended training.
    pub fn extend(&mut self, extra: usize) {
        self.params.n_iter += extra;
        if self.finished == Some(StopReason::Completed) {
            self.finished = None;
        }
    }

    /// Performs exactly one iteration.
    pub fn step(&mut self) -> Result<Step> {
        if let Some(reason) = &self.finished {
            return Ok(Step::Finished(reason.clone()));
        }
        let pool = Arc::clone(&self.pool);
        pool.install(|| self.step_in_pool())
    }

    /// Steps until finished; `callback` sees every record and may stop early by returning false.
    pub fn run(&mut self, mut callback: impl FnMut(&Record) -> bool) -> Result<StopReason> {
        loop {
            match self.step()? {
                Step::Continue(record) => {
                    if !callback(&record) {
                        return Ok(self.finished.clone().unwrap_or(StopReason::Completed));
                    }
                }
                Step::Finished(reason) => return Ok(reason),
            }
        }
    }

    fn step_in_pool(&mut self) -> Result<Step> {
        let started = Instant::now();
        let iteration = self.history.len() + 1;
        let candidates = Candidates::All;
        let mut ctx = Context {
            params: &self.params,
            data: &self.data,
            y: &self.y,
            w: &self.w,
            loss: self.loss.as_ref(),
            model: &mut self.model,
            rng: &mut self.rng,
            valid: self.valid.as_ref(),
            valid_pred: self.valid_pred.as_mut(),
        };
        let report = match &mut self.state {
            MethodState::Gbm(state) => gbm::step(state, &mut ctx, &candidates),
        };
        let (train_loss, valid_loss) = self.monitored_losses();
        self.seconds += started.elapsed().as_secs_f64();
        let record = Record {
            iteration,
            n_trees: self.model.n_trees(),
            train_loss,
            valid_loss,
            cos: report.cos,
            step: report.step,
            seconds: self.seconds,
        };
        self.history.records.push(record.clone());
        self.finished = self.check_stop(iteration, &record);
        if let Some(reason) = &self.finished {
            if !matches!(reason, StopReason::Completed) {
                self.restore_best();
            }
        }
        Ok(Step::Continue(record))
    }

    fn monitored_losses(&self) -> (f64, Option<f64>) {
        let train = mean_loss(self.loss.as_ref(), &self.y, self.state.output(), &self.w);
        let valid = self
            .valid
            .as_ref()
            .zip(self.valid_pred.as_ref())
            .map(|(v, pred)| mean_loss(self.loss.as_ref(), &v.y, pred, &v.w));
        (train, valid)
    }

    /// (monitored loss, train loss): the validation loss when there is a validation set.
    fn monitored_loss(&self) -> (f64, f64) {
        let (train, valid) = self.monitored_losses();
        (valid.unwrap_or(train), train)
    }

    fn check_stop(&mut self, iteration: usize, record: &Record) -> Option<StopReason> {
        let monitored = record.valid_loss.unwrap_or(record.train_loss);
        let finite = record.train_loss.is_finite() && monitored.is_finite() && record.step.is_finite();
        if !finite {
            return Some(StopReason::Diverged { iteration, detail: "non-finite loss or step".into() });
        }
        let best_train = self.history.records.iter().map(|r| r.train_loss).fold(f64::INFINITY, f64::min);
        if record.train_loss > DIVERGENCE_FACTOR * best_train.max(f64::MIN_POSITIVE) && record.train_loss > 1.0 {
            return Some(StopReason::Diverged {
                iteration,
                detail: format!("training loss {:.3e} exceeds {DIVERGENCE_FACTOR:.0e} × its best {best_train:.3e}", record.train_loss),
            });
        }
        if monitored < self.best.loss {
            self.best = Best { iteration, loss: monitored, n_trees: self.model.n_trees(), weights: self.model.weights.clone() };
        }
        if let (Some(patience), Some(_)) = (self.params.early_stopping_rounds, record.valid_loss) {
            if iteration - self.best.iteration >= patience {
                return Some(StopReason::EarlyStopping { best_iteration: self.best.iteration });
            }
        }
        (iteration >= self.params.n_iter).then_some(StopReason::Completed)
    }

    fn restore_best(&mut self) {
        let best = &self.best;
        self.model.trees.truncate(best.n_trees);
        self.model.tree_outputs.truncate(best.n_trees);
        self.model.weights = best.weights.clone();
        self.model.best_iteration = Some(best.iteration);
    }
}

fn mean_loss(loss: &dyn Loss, y: &[f64], f: &[f64], w: &[f64]) -> f64 {
    let total = par_sum(y.len(), |i| w[i] * loss.value(y[i], f[i]));
    let weight = par_sum(y.len(), |i| w[i]);
    total / weight
}

fn thread_pool(n_threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .build()
        .map_err(|e| Error::param("n_threads", n_threads, format!("a thread count the system allows ({e})")))
}

/// Checks the target and weights of a data set; binary losses get labels mapped to ±1.
fn checked_target(data: &TrainData<'_>, loss: &dyn Loss, role: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let n = data.frame.n_rows();
    if data.y.len() != n {
        return Err(Error::data(format!("{role} target has {} rows, the features have {n}", data.y.len())));
    }
    if let Some(row) = data.y.iter().position(|v| !v.is_finite()) {
        return Err(Error::value(
            format!("{role} target"),
            format!("row {row} is {} (targets must be finite)", data.y[row]),
        ));
    }
    let mut y = data.y.to_vec();
    if loss.is_binary() {
        let zero_one = y.iter().all(|&v| v == 0.0 || v == 1.0);
        let signs = y.iter().all(|&v| v == -1.0 || v == 1.0);
        if !(zero_one || signs) {
            let bad = y.iter().find(|&&v| v != 0.0 && v != 1.0 && v != -1.0).copied().unwrap_or(f64::NAN);
            return Err(Error::value(
                format!("{role} target"),
                format!("the {} loss needs binary labels 0/1 or -1/+1, found {bad}", loss.name()),
            ));
        }
        if zero_one {
            y.iter_mut().for_each(|v| *v = 2.0 * *v - 1.0);
        }
    }
    let w = match data.weights {
        None => vec![1.0; n],
        Some(w) => {
            if w.len() != n {
                return Err(Error::data(format!("{role} weights have {} rows, the features have {n}", w.len())));
            }
            if let Some(row) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(Error::value(
                    format!("{role} weights"),
                    format!("row {row} is {} (weights must be finite and ≥ 0)", w[row]),
                ));
            }
            if !w.iter().any(|&v| v > 0.0) {
                return Err(Error::value(format!("{role} weights"), "all weights are zero"));
            }
            w.to_vec()
        }
    };
    Ok((y, w))
}
