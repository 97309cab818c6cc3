//! `optboost._core.Booster`: a training run driven from Python in short batches of `step()`s,
//! each with the GIL released, so that a progress bar can update and Ctrl-C is seen between
//! batches while the booster keeps a valid model of every finished iteration. The binding only
//! converts Python's arguments: the core deals rows out by their roles (`RowSplit`).

use super::convert::{contiguous, Columns};
use super::custom_loss::{Failure, PyLoss};
use super::errors::{guarded, DataError, ParameterError, TrainingError};
use super::model::PyModel;
use crate::boost::{Booster, Offsets, RowSplit, Step, StopReason, TrainData};
use crate::collective::Tcp;
use crate::loss::Scalar;
use crate::params::Params;
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyKeyboardInterrupt, PyUserWarning};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// Parameters from `(name, value)` pairs, validated as a whole.
pub fn params_from_pairs(pairs: &[(String, String)]) -> crate::Result<Params> {
    let mut params = Params::default();
    for (name, value) in pairs {
        params.set(name, value)?;
    }
    params.checked()
}

/// `(kind, message)` of a stop reason; kind is "completed", "early_stopping", "diverged" or
/// "worker_lost".
fn describe(reason: &StopReason) -> (&'static str, String) {
    let kind = match reason {
        StopReason::Completed => "completed",
        StopReason::EarlyStopping { .. } => "early_stopping",
        StopReason::Diverged { .. } => "diverged",
        StopReason::RankLost { .. } => "worker_lost",
    };
    (kind, reason.to_string())
}

/// The columns of `PyBooster::history`, in order, with their types: the Python front end builds
/// its history tables from this (`optboost._core.HISTORY_SCHEMA`) instead of a copy.
pub const HISTORY_SCHEMA: [(&str, &str); 9] = [
    ("iteration", "int64"),
    ("trees", "int64"),
    ("train_loss", "float64"),
    ("valid_loss", "float64"),
    ("cos_mean", "float64"),
    ("cos_min", "float64"),
    ("step", "float64"),
    ("seconds", "float64"),
    ("restarted", "bool"),
];

#[pyclass(module = "optboost._core", name = "Booster", frozen)]
pub struct PyBooster {
    /// Held for the whole of each call. A call made while another runs (`update()` of the same
    /// model from a second Python thread) fails at once with a busy error instead of waiting:
    /// waiting with the GIL held would deadlock with the running call, which needs the GIL to
    /// return.
    booster: Mutex<Booster>,
    /// The first failure of a custom loss's callables (see `custom_loss.rs`).
    custom_error: Option<Arc<Mutex<Option<Failure>>>>,
}

impl PyBooster {
    fn lock(&self) -> PyResult<MutexGuard<'_, Booster>> {
        self.booster.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => TrainingError::new_err(
                "the model is busy: another call is training it or reading it (update() from \
                 another thread?); calls on one model must not overlap",
            ),
            // Only a panic outside `guarded` poisons the lock; the booster may be half-updated.
            TryLockError::Poisoned(_) => TrainingError::new_err(
                "internal error in the optboost core (please report it): an earlier call on \
                 this model failed midway; the model cannot train further",
            ),
        })
    }
}

/// Warns (`UserWarning`, pointing at the caller of the function that created the booster) when
/// `requested` threads are more than the machine runs at once: training uses fewer.
fn warn_if_capped(py: Python<'_>, requested: usize) -> PyResult<()> {
    let used = crate::threads::threads_used(requested);
    if used == requested {
        return Ok(());
    }
    let message = format!(
        "n_threads={requested} is more than the {used} threads this machine runs at once; \
         training uses {used}"
    );
    let message = CString::new(message).map_err(|e| TrainingError::new_err(e.to_string()))?;
    PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, 2)
}

/// Raises the kept failure of a custom loss's callables, if any: `KeyboardInterrupt` for an
/// interruption, which it clears (the booster undid the iteration; training can go on).
fn raise_custom_error(failure: &Option<Arc<Mutex<Option<Failure>>>>) -> PyResult<()> {
    let Some(failure) = failure else {
        return Ok(());
    };
    let mut failure = failure.lock().unwrap_or_else(|e| e.into_inner());
    match &*failure {
        Some(Failure::Error(message)) => Err(TrainingError::new_err(message.clone())),
        Some(Failure::Interrupted) => {
            *failure = None;
            Err(PyKeyboardInterrupt::new_err(()))
        }
        None => Ok(()),
    }
}

#[pymethods]
impl PyBooster {
    /// Bins the data and prepares iteration 0 (with the GIL released).
    #[new]
    #[pyo3(signature = (params, features, y, weights=None, valid_features=None, valid_y=None, valid_weights=None, offset=None, valid_offset=None, custom_loss=None, row_roles=None, distributed=None, init_model=None))]
    fn new<'py>(
        py: Python<'py>,
        params: Vec<(String, String)>,
        features: &Bound<'py, PyAny>,
        y: PyReadonlyArray1<'py, f64>,
        weights: Option<PyReadonlyArray1<'py, f64>>,
        valid_features: Option<&Bound<'py, PyAny>>,
        valid_y: Option<PyReadonlyArray1<'py, f64>>,
        valid_weights: Option<PyReadonlyArray1<'py, f64>>,
        offset: Option<PyReadonlyArray1<'py, f64>>,
        valid_offset: Option<PyReadonlyArray1<'py, f64>>,
        custom_loss: Option<&Bound<'py, PyAny>>,
        row_roles: Option<PyReadonlyArray1<'py, u8>>,
        distributed: Option<(
            usize,
            usize,
            String,
            Vec<u8>,
            f64,
            Option<Vec<(usize, usize)>>,
        )>,
        init_model: Option<PyRef<'py, PyModel>>,
    ) -> PyResult<Self> {
        let init_model = init_model.map(|m| m.model().clone());
        if init_model.is_some() && (custom_loss.is_some() || distributed.is_some()) {
            return Err(ParameterError::new_err(
                "a model is trained further in one process with a built-in loss: pass no \
                 custom loss and no workers with init_model",
            ));
        }
        if init_model.is_some() && (offset.is_some() || valid_offset.is_some()) {
            return Err(ParameterError::new_err(
                "a model trained further starts from its own scores: pass no offset with \
                 init_model",
            ));
        }
        let params = guarded(|| params_from_pairs(&params))?;
        warn_if_capped(py, params.n_threads)?;
        let columns = Columns::extract(features)?;
        let y = contiguous("target", &y)?;
        let weights = weights
            .as_ref()
            .map(|w| contiguous("weights", w))
            .transpose()?;
        let offset = offset
            .as_ref()
            .map(|o| contiguous("offset", o))
            .transpose()?;
        let valid_columns = valid_features.map(Columns::extract).transpose()?;
        let valid_y = valid_y
            .as_ref()
            .map(|y| contiguous("validation target", y))
            .transpose()?;
        let valid_weights = (valid_weights.as_ref())
            .map(|w| contiguous("validation weights", w))
            .transpose()?;
        let valid_offset = (valid_offset.as_ref())
            .map(|o| contiguous("validation offset", o))
            .transpose()?;
        let frame = columns.frame()?;
        let given = TrainData {
            frame: frame.clone(),
            y,
            weights,
        };
        let split = match row_roles {
            Some(roles) => {
                if valid_columns.is_some()
                    || valid_y.is_some()
                    || valid_weights.is_some()
                    || valid_offset.is_some()
                {
                    return Err(DataError::new_err(
                        "row_roles hold rows out for validation: pass no validation data as well",
                    ));
                }
                let roles = contiguous("row_roles", &roles)?;
                Some(guarded(|| RowSplit::split(roles, &given, offset))?)
            }
            None => None,
        };
        let valid_frame = valid_columns.as_ref().map(Columns::frame).transpose()?;
        let (train, valid, offsets) = match &split {
            Some(split) => guarded(|| split.sides(&frame))?,
            None => {
                let valid = match (valid_frame, valid_y) {
                    (Some(frame), Some(y)) => Some(TrainData {
                        frame,
                        y,
                        weights: valid_weights,
                    }),
                    (None, None) => None,
                    _ => {
                        return Err(DataError::new_err(
                            "validation data needs both features and a target",
                        ))
                    }
                };
                let offsets = Offsets {
                    train: offset,
                    valid: valid_offset,
                };
                (given, valid, offsets)
            }
        };
        let custom = custom_loss
            .map(|loss| -> PyResult<PyLoss> {
                let hessian = loss.getattr("hessian")?;
                Ok(PyLoss::new(
                    loss.getattr("value")?.unbind(),
                    loss.getattr("gradient")?.unbind(),
                    (!hessian.is_none()).then(|| hessian.unbind()),
                ))
            })
            .transpose()?;
        let custom_error = custom.as_ref().map(|loss| Arc::clone(&loss.failure));
        if let Some((rank, world, root, secret, timeout, rows)) = distributed {
            if custom.is_some() {
                return Err(ParameterError::new_err(
                    "a custom loss cannot be trained across workers (its callables run in \
                     each worker's Python)",
                ));
            }
            let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
                ParameterError::new_err(format!(
                    "timeout must be a positive number of seconds, got {timeout}"
                ))
            })?;
            // Joining blocks until every rank has: without the GIL.
            let booster = py.detach(|| {
                guarded(|| {
                    let collective = Arc::new(Tcp::connect(rank, world, &root, &secret, timeout)?);
                    let rows: Option<Vec<std::ops::Range<usize>>> = rows.map(|rows| {
                        (rows.iter())
                            .map(|&(start, len)| start..start.saturating_add(len))
                            .collect()
                    });
                    Booster::distributed_rows(
                        params,
                        &train,
                        valid.as_ref(),
                        offsets,
                        collective,
                        rows.as_deref(),
                    )
                })
            });
            return Ok(PyBooster {
                booster: Mutex::new(booster?),
                custom_error: None,
            });
        }
        let booster = py.detach(|| {
            guarded(|| match (custom, init_model) {
                (_, Some(model)) => Booster::continue_model(params, model, &train, valid.as_ref()),
                (Some(loss), None) => Booster::with_loss(
                    params,
                    &train,
                    valid.as_ref(),
                    offsets,
                    Box::new(Scalar(loss)),
                ),
                (None, None) => Booster::with_offsets(params, &train, valid.as_ref(), offsets),
            })
        });
        raise_custom_error(&custom_error)?;
        Ok(PyBooster {
            booster: Mutex::new(booster?),
            custom_error,
        })
    }

    /// Runs iterations, at least one, until `max_steps` are done, `max_seconds` have passed or
    /// training finishes; then checks for Ctrl-C (raising KeyboardInterrupt). Returns the number
    /// of iterations done and, once training has finished, `(kind, message)` of the reason.
    fn advance(
        &self,
        py: Python<'_>,
        max_steps: usize,
        max_seconds: f64,
    ) -> PyResult<(usize, Option<(&'static str, String)>)> {
        let mut booster = self.lock()?;
        let booster = &mut *booster;
        let result = py.detach(|| {
            guarded(|| {
                let started = Instant::now();
                let mut done = 0;
                loop {
                    match booster.step()? {
                        Step::Finished(reason) => return Ok((done, Some(reason))),
                        Step::Continue(_) => done += 1,
                    }
                    if let Some(reason) = booster.finished() {
                        return Ok((done, Some(reason.clone())));
                    }
                    if done >= max_steps || started.elapsed().as_secs_f64() >= max_seconds {
                        return Ok((done, None));
                    }
                }
            })
        });
        raise_custom_error(&self.custom_error)?;
        let (done, finished) = result?;
        py.check_signals()?;
        Ok((done, finished.as_ref().map(describe)))
    }

    /// Allows `extra` more iterations (no effect after early stopping or divergence).
    fn extend(&self, extra: usize) -> PyResult<()> {
        let mut booster = self.lock()?;
        if booster.params().n_iter.checked_add(extra).is_none() {
            return Err(super::errors::ParameterError::new_err(format!(
                "extend({extra}): the iteration count would overflow"
            )));
        }
        booster.extend(extra);
        Ok(())
    }

    /// Continues training that early stopping ended, with a new patience (None: none); false
    /// when training did not end by early stopping.
    #[pyo3(signature = (rounds=None))]
    fn continue_after_early_stopping(&self, rounds: Option<usize>) -> PyResult<bool> {
        Ok(self.lock()?.continue_after_early_stopping(rounds))
    }

    /// Bytes and messages this rank exchanged with the other ranks of a data-parallel fit.
    fn traffic(&self) -> PyResult<HashMap<&'static str, u64>> {
        let traffic = self.lock()?.traffic();
        Ok(HashMap::from([
            ("bytes_sent", traffic.bytes_sent),
            ("bytes_received", traffic.bytes_received),
            ("messages", traffic.messages),
        ]))
    }

    /// `(kind, message)` of why training ended, or None while it can go on.
    #[getter]
    fn finished(&self) -> PyResult<Option<(&'static str, String)>> {
        Ok(self.lock()?.finished().map(describe))
    }

    #[getter]
    fn iteration(&self) -> PyResult<usize> {
        Ok(self.lock()?.iteration())
    }

    /// The initial constant's validation loss (None without validation rows).
    #[getter]
    fn initial_valid_loss(&self) -> PyResult<Option<f64>> {
        Ok(self.lock()?.initial_valid_loss())
    }

    /// A snapshot of the current model.
    fn model(&self) -> PyResult<PyModel> {
        Ok(PyModel::new(self.lock()?.model().clone()))
    }

    /// The current predictions on the response scale, training rows and validation rows (None
    /// without them), as flat lists (n × K row-major for a multiclass loss).
    fn response_outputs(&self) -> PyResult<(Vec<f64>, Option<Vec<f64>>)> {
        Ok(self.lock()?.response_outputs())
    }

    /// The history from iteration `start` (0-based) on, as the columns of `HISTORY_SCHEMA`
    /// (valid_loss None without validation data).
    #[pyo3(signature = (start=0))]
    fn history<'py>(&self, py: Python<'py>, start: usize) -> PyResult<Bound<'py, PyDict>> {
        let booster = self.lock()?;
        let records = &booster.history().records;
        let records = &records[start.min(records.len())..];
        let column =
            |f: &dyn Fn(&crate::Record) -> f64| records.iter().map(f).collect::<Vec<f64>>();
        let cos_mean = |r: &crate::Record| r.cos.iter().sum::<f64>() / r.cos.len().max(1) as f64;
        let cos_min = |r: &crate::Record| r.cos.iter().copied().fold(f64::INFINITY, f64::min);
        let out = PyDict::new(py);
        out.set_item(
            "iteration",
            records.iter().map(|r| r.iteration).collect::<Vec<_>>(),
        )?;
        out.set_item(
            "trees",
            records.iter().map(|r| r.n_trees).collect::<Vec<_>>(),
        )?;
        out.set_item("train_loss", column(&|r| r.train_loss))?;
        out.set_item(
            "valid_loss",
            records.iter().map(|r| r.valid_loss).collect::<Vec<_>>(),
        )?;
        out.set_item(
            "cos_mean",
            column(&|r| {
                if r.cos.is_empty() {
                    f64::NAN
                } else {
                    cos_mean(r)
                }
            }),
        )?;
        out.set_item(
            "cos_min",
            column(&|r| {
                if r.cos.is_empty() {
                    f64::NAN
                } else {
                    cos_min(r)
                }
            }),
        )?;
        out.set_item("step", column(&|r| r.step))?;
        out.set_item("seconds", column(&|r| r.seconds))?;
        out.set_item(
            "restarted",
            records.iter().map(|r| r.restarted).collect::<Vec<_>>(),
        )?;
        // One column per metric and row set: train_<name>, valid_<name> (None without
        // validation rows).
        for (j, metric) in booster.params().metrics.iter().enumerate() {
            out.set_item(
                format!("train_{metric}"),
                column(&|r| r.train_metrics.get(j).copied().unwrap_or(f64::NAN)),
            )?;
            out.set_item(
                format!("valid_{metric}"),
                records
                    .iter()
                    .map(|r| r.valid_metrics.get(j).copied())
                    .collect::<Vec<_>>(),
            )?;
        }
        Ok(out)
    }
}
