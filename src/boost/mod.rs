//! The `Booster`: one state machine for every method of docs/algorithms.md §4. All state lives in
//! the struct; `step()` performs exactly one iteration, and a finished booster keeps answering
//! `Finished`. A booster can be checkpointed (serialized) mid-training and resumed to the identical
//! model.

mod agbm;
mod buffers;
mod checkpoint;
mod context;
mod continuation;
mod fit;
mod gbm;
mod history;
mod method;
mod one_call;
mod outputs;
mod projection;
mod proximal;
mod ranks;
mod rgbm;
mod row_roles;
mod sampling;
mod step_rule;
mod stopping;
mod target_encoding;
#[cfg(test)]
mod toy;
mod tracked;
mod training_data;
mod undo;
mod vagbm;
mod vectors;
mod weights;

use crate::rng::Rng;
pub use agbm::AgbmState;
pub use checkpoint::Checkpoint;
pub use context::Context;
pub use gbm::GbmState;
pub use history::{History, Record};
pub(crate) use method::Iteration;
pub use method::MethodState;
use method::{method, Start};
pub use projection::RepeatedState;
pub use proximal::{DirectionKind, MetaState, Switches};
pub use row_roles::RowSplit;
pub use stopping::StopReason;
pub use tracked::Tracked;
pub use training_data::{Offsets, TrainData};
pub use vagbm::VagbmState;

use crate::collective::{Collective, Local, Traffic};
use crate::data::BinnedData;
use crate::error::{Error, Result};
use crate::loss::{Loss, LossSpec, Task};
use crate::model::{BuiltLoss, FeatureSpec, Model};
use crate::params::{Init, Memory, Params, Safeguard, StepRule};
use crate::tree::{column_pass_pays, Constraints};
use buffers::Buffers;
use outputs::{mean_loss, newton_need, train_loss_pass, Derivatives, Need};
use ranks::{check_distributable, global_rows, init_over_ranks, shared, sigma_over_ranks};
use sampling::Sample;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stopping::Best;
use target_encoding::with_target_stats;
use training_data::{
    checked_offset, checked_target, count_classes, count_outputs, default_min_samples_leaf,
    Validation,
};
use weights::Weights;

#[derive(Debug, Clone, PartialEq)]
/// The outcome of [`Booster::step`]: the iteration's record, or why training is over (returned
/// again by every later call).
pub enum Step {
    /// An iteration finished and training goes on.
    Continue(Record),
    /// Training ended (the last call's record is already in the history).
    Finished(StopReason),
}

/// Trains one model: binned data, the loss, the method's state, the model and its history.
/// [`step`](Booster::step) runs one iteration (docs/algorithms.md §4); [`run`](Booster::run)
/// runs to a stopping rule; [`checkpoint`](Booster::checkpoint) and
/// [`resume`](Booster::resume) continue a run later with the same result.
///
/// ```
/// use optboost::{Booster, Feature, Frame, Params, Step, TrainData};
///
/// let x: Vec<f64> = (0..100).map(|i| i as f64).collect();
/// let y: Vec<f64> = x.iter().map(|v| if *v < 50.0 { 1.0 } else { 0.0 }).collect();
/// let mut params = Params::default();
/// params.set("loss", "logistic")?.set("n_iter", "5")?;
/// let train = TrainData { frame: Frame::new(vec![Feature::numeric("x", &x)])?, y: &y, weights: None };
/// let mut booster = Booster::new(params, &train, None)?;
/// while let Step::Continue(record) = booster.step()? {
///     assert!(record.train_loss.is_finite());
/// }
/// assert_eq!(booster.history().len(), 5);
/// # Ok::<(), optboost::Error>(())
/// ```
pub struct Booster {
    params: Params,
    data: BinnedData,
    y: Vec<f64>,
    w: Weights,
    loss: Arc<dyn Loss>,
    /// σ for the default constant step (`Loss::sigma_from` at the initial model).
    sigma: Option<f64>,
    valid: Option<Validation>,
    valid_pred: Option<Vec<f64>>,
    model: Model,
    state: MethodState,
    history: History,
    best: Best,
    finished: Option<StopReason>,
    /// The last iterate's model while `model` holds an earlier, better one after a completed
    /// run (momentum methods; see `keep_best_on_completion`): `extend` resumes from it.
    /// Not part of a checkpoint, which holds the last iterate's model.
    last_model: Option<Model>,
    rng: Rng,
    pool: Arc<rayon::ThreadPool>,
    seconds: f64,
    /// Training loss of the initial constant (what iteration 1 starts from).
    initial_train_loss: f64,
    /// Validation loss of the initial constant, when there are validation rows.
    initial_valid_loss: Option<f64>,
    /// The share of the best monitored validation value by which it must fall to count as an
    /// improvement (0 unless the validation part is small: `stopping::improvement_share`).
    improvement_share: f64,
    /// Derivatives at the output, cached by the loss pass for the next iteration (not part of a
    /// checkpoint).
    derivs: Derivatives,
    buffers: Buffers,
    /// Nanoseconds spent growing trees (see `tree_fit_seconds`); atomic because the fits see the
    /// booster through a shared `Context`.
    tree_fit_nanos: AtomicU64,
    /// `params`' constraints by feature index.
    constraints: Constraints,
    /// The ranks of a data-parallel fit (`Local`: this process holds every row).
    collective: Arc<dyn Collective>,
    /// The global indices of this process's training rows, in order: the row draws
    /// (`subsample`, GOSS, the bootstrap's weights) are keyed by them.
    row_ranges: Vec<std::ops::Range<u64>>,
    /// Iterations of the model before this booster's (continuation.rs); 0 for a fresh fit.
    iterations_before: usize,
}

impl Booster {
    /// Validates parameters and data, bins the features and prepares iteration 0.
    pub fn new(
        params: Params,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
    ) -> Result<Booster> {
        Self::with_offsets(params, train, valid, Offsets::default())
    }

    /// `new`, starting from the initial constant plus `offsets` (see `Offsets`).
    pub fn with_offsets(
        params: Params,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
        offsets: Offsets<'_>,
    ) -> Result<Booster> {
        let params = params.checked()?;
        let binning = params.binning;
        with_target_stats(&params.clone(), train, valid, |train, valid| {
            Self::start(params, train, valid, offsets, None, Arc::new(Local), || {
                BinnedData::learn(&train.frame, &binning)
            })
        })
    }

    /// `with_offsets` for one rank of a data-parallel fit (docs/algorithms.md §12): `train`
    /// and `valid` hold this rank's rows, and every rank of `collective` makes this call with
    /// the same parameters. The ranks bin with the same mappers (from merged summaries of their
    /// rows), grow the same trees from summed histograms and take the same steps, so each ends
    /// with the model of all the rows. A lost rank ends `step` with an error; the model keeps
    /// the iterations finished before it.
    ///
    /// Not available: the losses whose traits say they are not distributable (`cox`, whose value
    /// is not a sum over rows, `multiclass_hinge`, a custom loss), and the `auc` metric (a
    /// ranking of all the rows).
    ///
    /// The ranks' rows are taken to follow one another in rank order (rank 0 holds the first
    /// rows): `distributed_rows` says where they are otherwise.
    pub fn distributed(
        params: Params,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
        offsets: Offsets<'_>,
        collective: Arc<dyn Collective>,
    ) -> Result<Booster> {
        Self::distributed_rows(params, train, valid, offsets, collective, None)
    }

    /// `distributed` with this rank's training rows at the global row ranges `rows` (in the
    /// order of its rows; the ranges of all the ranks tile 0..n): the binning sample is drawn by
    /// global row index, so the mappers, and hence the model, are those of one process on the
    /// rows in that global order.
    pub fn distributed_rows(
        params: Params,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
        offsets: Offsets<'_>,
        collective: Arc<dyn Collective>,
        rows: Option<&[std::ops::Range<usize>]>,
    ) -> Result<Booster> {
        let params = params.checked()?;
        check_distributable(&params, &train.frame)?;
        let binning = params.binning;
        let shared = Arc::clone(&collective);
        let row_ranges = global_rows(&*collective, rows, train.frame.n_rows())?;
        let mut booster = Self::start(params, train, valid, offsets, None, collective, || {
            BinnedData::learn_over_ranks(&train.frame, &binning, &*shared, rows)
        })?;
        booster.row_ranges = row_ranges;
        Ok(booster)
    }

    /// `with_offsets` with a scalar loss (one score per row) given as an object rather than by
    /// `params.loss` (which must then be `custom`): a loss defined outside the crate, e.g. by
    /// Python callables.
    pub fn with_loss(
        params: Params,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
        offsets: Offsets<'_>,
        loss: Box<dyn Loss>,
    ) -> Result<Booster> {
        if params.loss != LossSpec::Custom {
            return Err(Error::param(
                "loss",
                params.loss.to_string(),
                "`custom` when a loss object is given",
            ));
        }
        if loss.n_outputs() != 1 {
            return Err(Error::param(
                "loss",
                loss.name(),
                "a loss object with one score per row (a custom loss is scalar)",
            ));
        }
        let params = params.checked()?;
        let binning = params.binning;
        with_target_stats(&params.clone(), train, valid, |train, valid| {
            Self::start(
                params,
                train,
                valid,
                offsets,
                Some(loss),
                Arc::new(Local),
                || BinnedData::learn(&train.frame, &binning),
            )
        })
    }

    /// Creates the booster's thread pool and, inside it, bins the training data with `bin` and
    /// prepares iteration 0. Binning and every later pass run in that pool: the thread count
    /// applies to all the work, and the allocator serves training from the arenas that binning
    /// freed memory into (with threads outside the pool, glibc keeps that memory in their arenas).
    fn start(
        params: Params,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
        offsets: Offsets<'_>,
        custom: Option<Box<dyn Loss>>,
        collective: Arc<dyn Collective>,
        bin: impl FnOnce() -> Result<BinnedData> + Send,
    ) -> Result<Booster> {
        let pool = match shared(&*collective) {
            Some(_) => Arc::new(crate::threads::own_pool(params.n_threads)?),
            // Shared with other boosters.
            None => crate::threads::shared_pool(params.n_threads)?,
        };
        let booster = Arc::clone(&pool).install(|| {
            let data = bin()?;
            Self::prepare(
                params, data, train, valid, offsets, custom, pool, collective,
            )
        })?;
        match booster.collective.failure() {
            Some(error) => Err(error),
            None => Ok(booster),
        }
    }

    /// Called inside `pool`.
    fn prepare(
        params: Params,
        data: BinnedData,
        train: &TrainData<'_>,
        valid: Option<&TrainData<'_>>,
        offsets: Offsets<'_>,
        custom: Option<Box<dyn Loss>>,
        pool: Arc<rayon::ThreadPool>,
        collective: Arc<dyn Collective>,
    ) -> Result<Booster> {
        let n_classes = if params.loss.is_multiclass() {
            let mut classes = [count_classes(train.y)? as f64];
            collective.max(&mut classes);
            classes[0] as usize
        } else if params.loss.is_multi_output() || params.loss.traits().task == Task::Survival {
            count_outputs(train)? // a survival target's columns: stop, start, stratum
        } else {
            2
        };
        let loss: Arc<dyn Loss> = match custom {
            Some(loss) => Arc::from(loss),
            None => params.loss.build(n_classes)?,
        };
        let mut params = params;
        (params.tree.min_samples_leaf).get_or_insert(default_min_samples_leaf(&*loss));
        let constraints = Constraints::by_name(&params.monotone, &params.interactions, &data)?;
        let (y, w) = checked_target(train, &*loss, "training")?;
        let n = train.frame.n_rows();
        let mut w = Weights::new(w, n);
        w.add_totals_over(&*collective);
        let valid = valid
            .map(|v| -> Result<Validation> {
                let (y, w) = checked_target(v, &*loss, "validation")?;
                Ok(Validation {
                    matrix: data.bin(&v.frame)?,
                    w: w.unwrap_or_else(|| vec![1.0; v.frame.n_rows()]),
                    y,
                })
            })
            .transpose()?;
        // Across ranks, validation rows on some rank mean validation for all: a rank without
        // any takes part in the validation sums with none.
        let mut validated = [f64::from(u8::from(valid.is_some()))];
        collective.max(&mut validated);
        let valid = match valid {
            None if validated[0] > 0.0 => Some(Validation::empty(data.n_features())),
            valid => valid,
        };
        let k = loss.n_outputs();
        let offset = checked_offset(offsets.train, n * k, "training")?;
        let valid_offset = match &valid {
            Some(v) => checked_offset(offsets.valid, v.w.len() * k, "validation")?,
            None => None,
        };
        let bias = {
            // A temporary vector of ones for unweighted data: the booster keeps none.
            let ones;
            let w = match w.given() {
                Some(w) => w,
                None => {
                    ones = vec![1.0; n];
                    &ones
                }
            };
            let rows: Vec<u32>;
            match (params.init, offset) {
                (Init::Optimal, offset) if shared(&*collective).is_some() => {
                    init_over_ranks(&*collective, &*loss, &y, w, offset)
                }
                (Init::Optimal, None) => loss.init(&y, w),
                // The constant that fits best on top of the offset, as glm's intercept does
                // (for K classes, class by class).
                (Init::Optimal, Some(offset)) => {
                    rows = (0..n as u32).collect();
                    (0..k)
                        .map(|class| loss.leaf_value(&y, offset, w, &rows, class))
                        .collect()
                }
                (Init::Zero, _) => vec![0.0; k],
            }
        };
        if let Some(b) = bias.iter().find(|b| !b.is_finite()) {
            return Err(Error::Training(format!(
                "the initial constant is not finite ({b})"
            )));
        }
        let features: Vec<FeatureSpec> = data
            .names()
            .iter()
            .zip(data.mappers())
            .map(|(name, mapper)| FeatureSpec {
                name: name.clone(),
                mapper: mapper.clone(),
                target_stats: None,
                levels: None,
            })
            .collect();
        let model = Model {
            method: params.method,
            loss: params.loss.clone(),
            n_outputs: k,
            bias: bias.clone(),
            trees: Vec::new(),
            weights: Vec::new(),
            tree_outputs: Vec::new(),
            features,
            best_iteration: None,
            iteration_trees: Vec::new(),
            iteration_weights: Vec::new(),
            built_loss: BuiltLoss::default(),
        };
        let start = |n: usize, offset: Option<&[f64]>| -> Vec<f64> {
            let mut start = bias.repeat(n);
            if let Some(offset) = offset {
                start.iter_mut().zip(offset).for_each(|(s, o)| *s += o);
            }
            start
        };
        let train_start = start(n, offset);
        let valid_pred = valid.as_ref().map(|v| start(v.w.len(), valid_offset));
        let sigma = sigma_over_ranks(&*collective, loss.sigma_from(&y, &train_start));
        let start = Start {
            train: &train_start,
            valid: valid_pred.as_deref(),
            sigma,
        };
        let state = method(params.method).start(&params, &*loss, start)?;
        let rng = Rng::new(params.seed);
        let mut booster = Booster {
            params,
            data,
            y,
            w,
            loss,
            sigma,
            valid,
            valid_pred,
            model,
            state,
            history: History::default(),
            best: Best {
                iteration: 0,
                loss: f64::INFINITY,
                n_trees: 0,
                weights: Vec::new(),
            },
            finished: None,
            last_model: None,
            rng,
            pool,
            seconds: 0.0,
            initial_train_loss: f64::NAN,
            initial_valid_loss: None,
            improvement_share: 0.0,
            derivs: Derivatives::default(),
            buffers: Buffers::default(),
            tree_fit_nanos: AtomicU64::new(0),
            constraints,
            collective,
            row_ranges: vec![0..n as u64],
            iterations_before: 0,
        };
        let (train, valid) = booster.monitored_losses();
        (booster.initial_train_loss, booster.initial_valid_loss) = (train, valid);
        booster.best.loss = valid.unwrap_or(train);
        let (_, valid_metrics) = booster.metric_values();
        if let (Some(metric), Some(&start)) =
            (booster.params.metrics.first(), valid_metrics.first())
        {
            if !start.is_finite() {
                return Err(Error::value(
                    "validation target",
                    format!("the first metric, {metric}, is {start} on the validation rows (auc needs both classes)"),
                ));
            }
            booster.best.loss = stopping::oriented(metric, start);
        }
        booster.improvement_share = booster.improvement_share();
        Ok(booster)
    }

    /// The parameters in force: the given ones with the preset applied.
    pub fn params(&self) -> &Params {
        &self.params
    }
    /// The model so far (or the kept iterate once finished).
    pub fn model(&self) -> &Model {
        &self.model
    }
    /// The model, ending the booster.
    pub fn into_model(self) -> Model {
        self.model
    }
    /// Every iteration's record so far.
    pub fn history(&self) -> &History {
        &self.history
    }
    /// The current model's predictions on the response scale (n × K row-major for a multiclass
    /// loss) on the training rows and, if any, the validation rows: what evaluation metrics
    /// computed outside the core read after each iteration.
    pub fn response_outputs(&self) -> (Vec<f64>, Option<Vec<f64>>) {
        let response = |scores: &[f64]| {
            let mut out = vec![0.0; scores.len()];
            self.loss.response_into(scores, &mut out);
            out
        };
        (
            response(self.state.iterate().output()),
            self.valid_pred.as_deref().map(response),
        )
    }
    /// Iterations this booster has run (its history's length).
    pub fn iteration(&self) -> usize {
        self.history.len()
    }
    /// Why training stopped, once it has.
    pub fn finished(&self) -> Option<&StopReason> {
        self.finished.as_ref()
    }
    /// The method's state (its sequences, corrected residuals, momentum coefficients, …).
    pub fn state(&self) -> &MethodState {
        &self.state
    }
    /// Time this booster object (since `new` or `resume`) spent growing trees: the weak
    /// learner's work, as opposed to the method's gradients, proximal operators, step rules and
    /// weight updates. The sum of the trees' wall times: when the trees of several classes grow
    /// side by side it can exceed the fit's wall time. Not part of a checkpoint; compare it with
    /// the time of the `step` calls of the same object, not with the history's `seconds`, which
    /// a resumed booster carries on.
    pub fn tree_fit_seconds(&self) -> f64 {
        Duration::from_nanos(self.tree_fit_nanos.load(Ordering::Relaxed)).as_secs_f64()
    }
    /// Predictions of the current model on the training rows.
    pub fn train_predictions(&self) -> &[f64] {
        self.state.iterate().output()
    }

    /// Bytes and messages this rank has exchanged with the others (zero on one process).
    pub fn traffic(&self) -> Traffic {
        self.collective.traffic()
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
        let model_iteration = self.iterations_before + iteration;
        let undo = self.undo_point();
        let candidates =
            method(self.params.method).candidates(&self.params, &self.data, &mut self.rng);
        let sample = Sample::draw(
            &self.params,
            &self.data,
            &mut self.rng,
            model_iteration,
            (&self.row_ranges, &self.w),
            &*self.collective,
        );
        let candidates = sample.restrict(candidates);
        // The column-major copy of the bins serves partitions (`memory = "fast"`) and trees on a
        // few features (RGBM's candidates, a small `colsample_bytree`), which build their
        // histograms column by column: it is made at the first tree that uses it, here, outside
        // the parallel passes, and kept for the following ones.
        let n_features = self.data.n_features();
        if self.params.memory == Memory::Fast
            || (candidates.allowed_features(n_features))
                .is_some_and(|allowed| column_pass_pays(allowed.len(), n_features))
        {
            self.data.keep_columns();
        }
        let train_loss = self
            .history
            .last()
            .map_or(self.initial_train_loss, |r| r.train_loss);
        // The safeguard (docs/algorithms.md §9): a momentum step that raises the training loss,
        // or (`restart`) the validation loss, is undone and the momentum restarted. Only steps
        // that use momentum are guarded: a plain step from the output is the descent step the
        // restart falls back on, and rejecting it would repeat it forever.
        let guarded = (self.params.safeguard != Safeguard::None
            && self.state.iterate().momentum_active())
        .then(|| {
            (
                self.state.iterate().restart_point(),
                self.valid_pred.clone(),
                self.model.n_trees(),
            )
        });
        // What a lost rank leaves: the model of the last finished iteration.
        let before_failure =
            shared(&*self.collective).map(|_| (self.model.n_trees(), self.model.weights.clone()));
        let mut ctx = Context {
            params: &self.params,
            data: &self.data,
            y: &self.y,
            w: sample.weights(&self.w),
            loss: &*self.loss,
            sigma: self.sigma,
            model: &mut self.model,
            iteration: model_iteration,
            train_loss,
            valid: self.valid.as_ref(),
            valid_pred: self.valid_pred.as_mut(),
            derivs: &mut self.derivs,
            buffers: &self.buffers,
            tree_fit_nanos: &self.tree_fit_nanos,
            sample: &sample,
            constraints: &self.constraints,
            collective: &*self.collective,
        };
        let report = self.state.iterate_mut().step(&mut ctx, &candidates);
        self.derivs.invalidate();
        let (mut new_train_loss, mut valid_loss) = self.monitored_losses();
        let mut restarted = false;
        if let Some((state, valid_pred, n_trees)) = guarded {
            let previous_valid_loss = self.history.last().and_then(|r| r.valid_loss);
            let valid_rose = self.params.safeguard == Safeguard::Restart
                && valid_loss
                    .zip(previous_valid_loss)
                    .is_some_and(|(new, old)| undo::rose(new, old));
            if undo::rose(new_train_loss, train_loss) || valid_rose {
                self.state = state;
                self.state.iterate_mut().restart_momentum();
                self.valid_pred = valid_pred;
                let weights = (self.state.iterate().output_tracked())
                    .expect("only momentum methods are guarded")
                    .weights_for(n_trees);
                self.model.keep_trees(n_trees, weights);
                self.derivs.invalidate();
                // The same pass on the same output: the losses of the previous iteration.
                (new_train_loss, valid_loss) = self.monitored_losses();
                restarted = true;
            }
        }
        if let Some(error) = self.collective.failure() {
            let (n_trees, weights) = before_failure.expect("only ranks fail");
            self.model.keep_trees(n_trees, weights);
            let detail = match error {
                Error::Training(detail) => detail,
                other => other.to_string(),
            };
            let message = format!(
                "data-parallel training stopped in iteration {iteration}: {detail}; the model \
                 keeps the {} finished iterations",
                iteration - 1
            );
            self.finished = Some(StopReason::RankLost { iteration, detail });
            return Err(Error::Training(message));
        }
        let (train_metrics, valid_metrics) = self.metric_values();
        if let Some(undo) = undo.filter(|_| self.loss.interrupted()) {
            self.undo(undo);
            return Err(Error::Training(format!(
                "the loss was interrupted in iteration {iteration}; the model keeps the {} \
                 finished iterations",
                iteration - 1
            )));
        }
        self.record_iteration_path();
        self.seconds += started.elapsed().as_secs_f64();
        let record = Record {
            iteration,
            n_trees: self.model.n_trees(),
            train_loss: new_train_loss,
            valid_loss,
            cos: report.cos,
            step: report.step,
            seconds: self.seconds,
            restarted,
            train_metrics,
            valid_metrics,
        };
        self.history.records.push(record.clone());
        self.finished = self.check_stop(iteration, &record);
        match &self.finished {
            Some(StopReason::Completed) => self.keep_best_on_completion(),
            Some(StopReason::EarlyStopping { .. }) => self.keep_best_on_early_stopping(),
            Some(_) => self.restore_best(),
            None => {}
        }
        Ok(Step::Continue(record))
    }

    /// Appends the model after this iteration to its iteration path (`Model::weights_at`).
    fn record_iteration_path(&mut self) {
        self.model
            .record_iteration(self.params.method.has_momentum());
    }

    /// The training and validation losses of the current output. The training loss pass also
    /// caches the derivatives the next iteration needs at the output, if it starts from there.
    fn monitored_losses(&mut self) -> (f64, Option<f64>) {
        let need = self.output_need();
        let train = train_loss_pass(
            &*self.loss,
            &self.y,
            self.state.iterate().output(),
            &self.w,
            need,
            &mut self.derivs,
            &*self.collective,
        );
        let valid = self
            .valid
            .as_ref()
            .zip(self.valid_pred.as_ref())
            .map(|(v, pred)| mean_loss(&*self.loss, &v.y, pred, &v.w, &*self.collective));
        (train, valid)
    }

    /// What the next iteration needs at the output: the gradient for the methods that start
    /// from it (`gbm`, `rgbm`, `repeated_gbm`, `residual_gbm`), and the Hessian too for Newton
    /// steps. The others start from another point or use the proximal direction.
    fn output_need(&self) -> Option<Need> {
        let newton = step_rule_in_force(&self.params, &*self.loss) == StepRule::Newton;
        let at_output = method(self.params.method).starts_from_output();
        at_output.then_some(if newton {
            newton_need(&*self.loss)
        } else {
            Need::Gradient
        })
    }

    /// The `metrics` on the training and the validation rows at the current output.
    fn metric_values(&self) -> (Vec<f64>, Vec<f64>) {
        let metrics = &self.params.metrics;
        let train_output = self.state.iterate().output();
        let train = metrics
            .iter()
            .map(|m| {
                m.evaluate_over(
                    &*self.loss,
                    &self.y,
                    train_output,
                    self.w.slice(),
                    &*self.collective,
                )
            })
            .collect();
        let valid = match (self.valid.as_ref(), self.valid_pred.as_ref()) {
            (Some(v), Some(pred)) => metrics
                .iter()
                .map(|m| m.evaluate_over(&*self.loss, &v.y, pred, &v.w, &*self.collective))
                .collect(),
            _ => Vec::new(),
        };
        (train, valid)
    }
}

/// The step rule in force: the user's, or the method's default.
fn step_rule_in_force(params: &Params, loss: &dyn Loss) -> StepRule {
    params
        .step
        .unwrap_or_else(|| method(params.method).default_step_rule(loss.newton_by_default()))
}
