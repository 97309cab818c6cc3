//! When training stops and which iterate it keeps (docs/algorithms.md §5 and §9): the
//! iteration budget, early stopping on the validation loss, divergence, and a momentum run's best
//! iterate; and continuing after any of them.

use super::{Booster, Record};
use crate::metric::Metric;
use crate::params::Keep;
use serde::{Deserialize, Serialize};

/// Training has diverged (accelerated methods in the overfitting regime, docs/algorithms.md §5)
/// once its loss exceeds this multiple of the starting constant's: no descent method legitimately
/// ends up ten times worse than the model it started from, and slow explosions are caught long
/// before overflow.
const DIVERGENCE_FACTOR: f64 = 10.0;

/// A completed momentum run keeps an earlier iterate only if the last one's loss is worse by more
/// than this share of the starting constant's loss.
const KEEP_TOLERANCE: f64 = 1e-9;

/// A validation part of fewer rows than this (over all ranks) is small: a fall of its mean loss by
/// less than one row's share of it is within the noise of which rows it happens to hold, and
/// early stopping that counts such falls as improvements can run to the iteration cap on a few
/// rows whose loss keeps creeping down (Prechelt 1998, "Early stopping — but when?", on noisy
/// validation curves).
pub const SMALL_VALIDATION_ROWS: usize = 50;

/// Why training stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StopReason {
    /// `n_iter` iterations done.
    Completed,
    /// The validation loss did not improve for `early_stopping_rounds` iterations.
    EarlyStopping {
        /// The iteration whose model was kept.
        best_iteration: usize,
    },
    /// Non-finite values or an exploding loss; the best iterate was kept.
    Diverged {
        /// The iteration that diverged.
        iteration: usize,
        /// What was not finite, or grew.
        detail: String,
    },
    /// A rank of a data-parallel fit was lost during `iteration`; the model keeps the
    /// iterations before it.
    RankLost {
        /// The iteration during which the rank was lost.
        iteration: usize,
        /// The communication failure.
        detail: String,
    },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Completed => write!(f, "completed all iterations"),
            StopReason::EarlyStopping { best_iteration } => {
                write!(
                    f,
                    "early stopping: best validation loss at iteration {best_iteration}"
                )
            }
            StopReason::Diverged { iteration, detail } => {
                write!(
                    f,
                    "diverged at iteration {iteration} ({detail}); kept the best iterate"
                )
            }
            StopReason::RankLost { iteration, detail } => {
                write!(
                    f,
                    "a worker was lost in iteration {iteration} ({detail}); kept the \
                     iterations before it"
                )
            }
        }
    }
}

/// The best iterate so far, on the validation loss if there is one, else on the training loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Best {
    pub(super) iteration: usize,
    pub(super) loss: f64,
    pub(super) n_trees: usize,
    pub(super) weights: Vec<f64>,
}

/// A metric's value as a quantity to minimise: −AUC, the others as they are.
pub(super) fn oriented(metric: &Metric, value: f64) -> f64 {
    if metric.higher_is_better() {
        -value
    } else {
        value
    }
}

impl Booster {
    /// What early stopping and the best iterate follow: the first metric on the validation rows
    /// (oriented to be minimised) when there are metrics and validation rows, else the validation
    /// loss, else the training loss.
    fn monitored(&self, record: &Record) -> f64 {
        match (self.params.metrics.first(), record.valid_metrics.first()) {
            (Some(metric), Some(&value)) => oriented(metric, value),
            _ => record.valid_loss.unwrap_or(record.train_loss),
        }
    }

    /// A completed run of a momentum method, whose loss can rise, keeps its best iterate (on
    /// the validation loss if there is one, else on the training loss) when the last one is
    /// worse (beyond rounding, `KEEP_TOLERANCE`). The last iterate's model is kept aside for `extend`. Other methods keep
    /// the last iterate, as they always have (early stopping is their way to keep the best),
    /// and so does every method with `keep = "last"`.
    pub(super) fn keep_best_on_completion(&mut self) {
        let keeps_best = self.params.keep == Keep::Best && self.params.method.has_momentum();
        if !keeps_best || self.last_model.is_some() {
            return;
        }
        let Some(last) = self.history.last() else {
            return;
        };
        let monitored = self.monitored(last);
        // Rises at the level of rounding (a loss already ~0) are no reason to drop trees.
        let tolerance = KEEP_TOLERANCE * self.initial_train_loss.abs();
        if self.best.iteration < last.iteration && monitored - self.best.loss > tolerance {
            self.last_model = Some(self.model.clone());
            self.restore_best();
        }
    }

    /// The share of the best monitored validation value by which an iteration must lower it to
    /// count as an improvement: on a small validation part (`SMALL_VALIDATION_ROWS`) of n rows,
    /// 1/n, one row's share of the mean; else 0 (any decrease). The rows are counted over all
    /// ranks, so that every rank applies the same rule.
    pub(super) fn improvement_share(&self) -> f64 {
        let Some(valid) = &self.valid else {
            return 0.0;
        };
        let mut rows = [valid.w.len() as f64];
        self.collective.sum(&mut rows);
        if rows[0] > 0.0 && rows[0] < SMALL_VALIDATION_ROWS as f64 {
            1.0 / rows[0]
        } else {
            0.0
        }
    }

    /// The initial constant's validation loss (None without validation rows).
    pub fn initial_valid_loss(&self) -> Option<f64> {
        self.initial_valid_loss
    }

    pub(super) fn check_stop(&mut self, iteration: usize, record: &Record) -> Option<StopReason> {
        let monitored_loss = record.valid_loss.unwrap_or(record.train_loss);
        let finite =
            record.train_loss.is_finite() && monitored_loss.is_finite() && record.step.is_finite();
        let monitored = self.monitored(record);
        if !finite {
            return Some(StopReason::Diverged {
                iteration,
                detail: "non-finite loss or step".into(),
            });
        }
        if record.train_loss > DIVERGENCE_FACTOR * self.initial_train_loss {
            return Some(StopReason::Diverged {
                iteration,
                detail: format!(
                    "training loss {:.3e} exceeds {DIVERGENCE_FACTOR} × the starting constant's {:.3e}",
                    record.train_loss, self.initial_train_loss
                ),
            });
        }
        if monitored < self.best.loss - self.improvement_share * self.best.loss.abs() {
            self.best = Best {
                iteration,
                loss: monitored,
                n_trees: self.model.n_trees(),
                weights: self.model.weights.clone(),
            };
        }
        if let (Some(patience), Some(_)) = (self.params.early_stopping_rounds, record.valid_loss) {
            // Iterations the safeguard undid changed nothing: they do not use up the patience.
            let stale = self.history.records[self.best.iteration..]
                .iter()
                .filter(|r| !r.restarted)
                .count();
            if stale >= patience {
                return Some(StopReason::EarlyStopping {
                    best_iteration: self.best.iteration,
                });
            }
        }
        (iteration >= self.params.n_iter).then_some(StopReason::Completed)
    }

    /// Early stopping keeps the best iterate, and the last one aside for
    /// `continue_after_early_stopping`; with `keep = "last"` it keeps the last.
    pub(super) fn keep_best_on_early_stopping(&mut self) {
        if self.params.keep == Keep::Last {
            return;
        }
        self.last_model = Some(self.model.clone());
        self.restore_best();
    }

    pub(super) fn restore_best(&mut self) {
        let best = &self.best;
        self.model
            .keep_iteration(best.iteration, best.n_trees, best.weights.clone());
    }

    /// Allows `extra` more iterations (continued training). Has no effect once early stopping or
    /// divergence ended training.
    pub fn extend(&mut self, extra: usize) {
        self.params.n_iter += extra;
        if self.finished == Some(StopReason::Completed) {
            self.finished = None;
            if let Some(last) = self.last_model.take() {
                self.model = last;
            }
        }
    }

    /// Continues training that early stopping ended, from the last iterate (the method state
    /// never left it), with `rounds` as the new patience (None: no early stopping). The best
    /// iterate seen so far stays the reference. False when training did not end by early
    /// stopping.
    pub fn continue_after_early_stopping(&mut self, rounds: Option<usize>) -> bool {
        if !matches!(self.finished, Some(StopReason::EarlyStopping { .. })) {
            return false;
        }
        self.params.early_stopping_rounds = rounds;
        self.finished = None;
        if let Some(last) = self.last_model.take() {
            self.model = last;
        }
        true
    }
}
