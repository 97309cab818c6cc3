//! `optboost._core.Booster`: a training run driven from Python in short batches of `step()`s,
//! each with the GIL released, so that a progress bar can update and Ctrl-C is seen between
//! batches while the booster keeps a valid model of every finished iteration.

use super::convert::{contiguous, Columns};
use super::errors::{guarded, DataError};
use super::model::PyModel;
use crate::boost::{Booster, Offsets, Step, StopReason, TrainData};
use crate::params::Params;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::time::Instant;

/// Parameters from `(name, value)` pairs, validated as a whole.
pub fn params_from_pairs(pairs: &[(String, String)]) -> crate::Result<Params> {
    let mut params = Params::default();
    for (name, value) in pairs {
        params.set(name, value)?;
    }
    params.validate()?;
    Ok(params)
}

/// `(kind, message)` of a stop reason; kind is "completed", "early_stopping" or "diverged".
fn describe(reason: &StopReason) -> (&'static str, String) {
    let kind = match reason {
        StopReason::Completed => "completed",
        StopReason::EarlyStopping { .. } => "early_stopping",
        StopReason::Diverged { .. } => "diverged",
    };
    (kind, reason.to_string())
}

#[pyclass(module = "optboost._core", name = "Booster")]
pub struct PyBooster {
    booster: Booster,
}

#[pymethods]
impl PyBooster {
    /// Bins the data and prepares iteration 0 (with the GIL released).
    #[new]
    #[pyo3(signature = (params, features, y, weights=None, valid_features=None, valid_y=None, valid_weights=None, offset=None, valid_offset=None))]
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
    ) -> PyResult<Self> {
        let params = guarded(|| params_from_pairs(&params))?;
        let columns = Columns::extract(features)?;
        let train = TrainData {
            frame: columns.frame()?,
            y: contiguous("target", &y)?,
            weights: weights
                .as_ref()
                .map(|w| contiguous("weights", w))
                .transpose()?,
        };
        let valid_columns = valid_features.map(Columns::extract).transpose()?;
        let valid = match (&valid_columns, &valid_y) {
            (Some(columns), Some(y)) => Some(TrainData {
                frame: columns.frame()?,
                y: contiguous("validation target", y)?,
                weights: valid_weights
                    .as_ref()
                    .map(|w| contiguous("validation weights", w))
                    .transpose()?,
            }),
            (None, None) => None,
            _ => {
                return Err(DataError::new_err(
                    "validation data needs both features and a target",
                ))
            }
        };
        let offsets = Offsets {
            train: offset
                .as_ref()
                .map(|o| contiguous("offset", o))
                .transpose()?,
            valid: (valid_offset.as_ref())
                .map(|o| contiguous("validation offset", o))
                .transpose()?,
        };
        let booster = py.detach(|| {
            guarded(|| Booster::with_offsets(params, &train, valid.as_ref(), offsets))
        })?;
        Ok(PyBooster { booster })
    }

    /// Runs iterations, at least one, until `max_steps` are done, `max_seconds` have passed or
    /// training finishes; then checks for Ctrl-C (raising KeyboardInterrupt). Returns the number
    /// of iterations done and, once training has finished, `(kind, message)` of the reason.
    fn advance(
        &mut self,
        py: Python<'_>,
        max_steps: usize,
        max_seconds: f64,
    ) -> PyResult<(usize, Option<(&'static str, String)>)> {
        let booster = &mut self.booster;
        let (done, finished) = py.detach(|| {
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
        })?;
        py.check_signals()?;
        Ok((done, finished.as_ref().map(describe)))
    }

    /// Allows `extra` more iterations (no effect after early stopping or divergence).
    fn extend(&mut self, extra: usize) {
        self.booster.extend(extra);
    }

    /// `(kind, message)` of why training ended, or None while it can go on.
    #[getter]
    fn finished(&self) -> Option<(&'static str, String)> {
        self.booster.finished().map(describe)
    }

    #[getter]
    fn iteration(&self) -> usize {
        self.booster.iteration()
    }

    /// A snapshot of the current model.
    fn model(&self) -> PyModel {
        PyModel::new(self.booster.model().clone())
    }

    /// The history from iteration `start` (0-based) on, as columns: iteration, trees, train_loss,
    /// valid_loss (None without validation data), cos_mean, cos_min, step, seconds.
    #[pyo3(signature = (start=0))]
    fn history<'py>(&self, py: Python<'py>, start: usize) -> PyResult<Bound<'py, PyDict>> {
        let records = &self.booster.history().records[start.min(self.booster.iteration())..];
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
        Ok(out)
    }
}
