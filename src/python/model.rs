//! `optboost._core.CoreModel`: a trained model (immutable), its JSON form and prediction.

use super::convert::{contiguous, Columns};
use super::errors::{guarded, DataError};
use crate::metric::Metric;
use crate::model::Model;
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

/// Runs `work` on `n_threads` threads (the pool training with that count uses; 0: rayon's global
/// pool, all cores).
fn in_threads<T: Send>(
    n_threads: usize,
    work: impl FnOnce() -> crate::Result<T> + Send,
) -> crate::Result<T> {
    if n_threads == 0 {
        work()
    } else {
        crate::threads::shared_pool(n_threads)?.install(work)
    }
}

#[pyclass(module = "optboost._core", name = "CoreModel", frozen)]
pub struct PyModel {
    model: Model,
}

impl PyModel {
    pub fn new(model: Model) -> Self {
        PyModel { model }
    }

    /// The core model (for training it further).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The columns as a frame, after checking they are the model's features in its order.
    fn check_names(&self, columns: &Columns<'_>) -> PyResult<()> {
        let expected = self.model.input_names();
        let given: Vec<&str> = columns.names().iter().map(String::as_str).collect();
        if expected != given {
            return Err(DataError::new_err(format!(
                "the model's features are {expected:?}; got columns {given:?}"
            )));
        }
        Ok(())
    }

    fn scores<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        (response, iteration, n_threads): (bool, Option<usize>, usize),
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let columns = Columns::extract(features)?;
        self.check_names(&columns)?;
        let frame = columns.frame()?;
        let n_rows = frame.n_rows();
        let model = &self.model;
        let values = py.detach(|| {
            guarded(|| {
                in_threads(n_threads, || {
                    let scores = match iteration {
                        None => model.predict(&frame)?,
                        Some(k) => model.predict_iteration(&frame, k)?,
                    };
                    if response {
                        model.response(scores)
                    } else {
                        Ok(scores)
                    }
                })
            })
        })?;
        PyArray1::from_vec(py, values).reshape([n_rows, model.n_outputs])
    }
}

#[pymethods]
impl PyModel {
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        guarded(|| Model::from_json(text)).map(PyModel::new)
    }

    /// A Python model file (`Model.save`) as bytes, parsed in one pass: the core model of its
    /// "model" entry, validated, and the raw JSON text of each other top-level entry (the small
    /// ones: formula, design, history) for the Python layer to check. Fails with a
    /// ModelFileError on any file the core would not load, and on files that are no JSON
    /// object or repeat a key.
    #[staticmethod]
    fn from_file_json(py: Python<'_>, data: &[u8]) -> PyResult<(Self, Vec<(String, String)>)> {
        let (model, others) = py.detach(|| {
            guarded(|| {
                let text = std::str::from_utf8(data)
                    .map_err(|e| crate::Error::Model(format!("not UTF-8 text: {e}")))?;
                Model::from_json_in(text, "model")
            })
        })?;
        Ok((PyModel::new(model), others))
    }

    fn to_json(&self) -> PyResult<String> {
        guarded(|| Ok(self.model.to_json()))
    }

    /// Link-scale scores, shape (n, n_outputs); of the model after `iteration` iterations if
    /// given. `n_threads`: as training's (0: all cores); the scores do not depend on it.
    #[pyo3(signature = (features, iteration=None, n_threads=0))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        iteration: Option<usize>,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.scores(py, features, (false, iteration, n_threads))
    }

    /// The built-in metric `name` of the model on rows `features` with targets `y` as the front
    /// end encodes them (0/1, class indices; n × K row-major for K outputs) and `weights`
    /// (None: 1): the core's metric, as the history records it.
    #[pyo3(signature = (name, features, y, weights=None, n_threads=0))]
    fn metric(
        &self,
        py: Python<'_>,
        name: &str,
        features: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, f64>,
        weights: Option<PyReadonlyArray1<'_, f64>>,
        n_threads: usize,
    ) -> PyResult<f64> {
        let metric: Metric = guarded(|| name.trim().parse())?;
        guarded(|| metric.check(&self.model.loss))?;
        let columns = Columns::extract(features)?;
        self.check_names(&columns)?;
        let frame = columns.frame()?;
        let n = frame.n_rows();
        let y = contiguous("target", &y)?;
        let ones;
        let weights = match &weights {
            Some(w) => contiguous("weights", w)?,
            None => {
                ones = vec![1.0; n];
                &ones
            }
        };
        let width = guarded(|| self.model.loss())?.target_width();
        if y.len() != n * width || weights.len() != n {
            return Err(DataError::new_err(format!(
                "metric {name}: {} targets and {} weights for {n} rows",
                y.len(),
                weights.len()
            )));
        }
        let model = &self.model;
        py.detach(|| {
            guarded(|| {
                in_threads(n_threads, || {
                    let scores = model.predict(&frame)?;
                    Ok(metric.evaluate(&*model.loss()?, y, &scores, weights))
                })
            })
        })
    }

    /// Response-scale predictions (probabilities for classification losses), shape (n, n_outputs).
    #[pyo3(signature = (features, iteration=None, n_threads=0))]
    fn predict_response<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        iteration: Option<usize>,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.scores(py, features, (true, iteration, n_threads))
    }

    /// Scores of the model after each of `iterations`, each shape (n, n_outputs), every tree
    /// evaluated once; response scale if `response`.
    #[pyo3(signature = (features, iterations, response, n_threads=0))]
    fn predict_staged<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        iterations: Vec<usize>,
        response: bool,
        n_threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyArray2<f64>>>> {
        let columns = Columns::extract(features)?;
        self.check_names(&columns)?;
        let frame = columns.frame()?;
        let n_rows = frame.n_rows();
        let model = &self.model;
        let stages = py.detach(|| {
            guarded(|| {
                in_threads(n_threads, || {
                    let stages = model.predict_staged(&frame, &iterations)?;
                    if response {
                        stages.into_iter().map(|s| model.response(s)).collect()
                    } else {
                        Ok(stages)
                    }
                })
            })
        })?;
        stages
            .into_iter()
            .map(|s| PyArray1::from_vec(py, s).reshape([n_rows, model.n_outputs]))
            .collect()
    }

    /// Iterations whose model `predict(..., iteration=k)` reproduces (0..=n_iterations).
    #[getter]
    fn n_iterations(&self) -> usize {
        self.model.n_iterations()
    }

    /// Link-scale scores (n, n_outputs) mapped to the response scale, as `predict_response`
    /// does (for scores to which the caller added an offset).
    fn response<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let shape = scores.shape().to_vec();
        if shape[1] != self.model.n_outputs {
            return Err(DataError::new_err(format!(
                "scores have {} columns, the model {} outputs",
                shape[1], self.model.n_outputs
            )));
        }
        let values = scores.as_array().iter().copied().collect::<Vec<f64>>();
        let model = &self.model;
        let values = py.detach(|| guarded(|| model.response(values)))?;
        PyArray1::from_vec(py, values).reshape([shape[0], shape[1]])
    }

    /// `(feature names, total gain, split count)` per feature.
    fn feature_importance(&self) -> PyResult<(Vec<String>, Vec<f64>, Vec<usize>)> {
        let (gain, splits) = guarded(|| Ok(self.model.feature_importance()))?;
        Ok((self.feature_names(), gain, splits))
    }

    #[getter]
    fn feature_names(&self) -> Vec<String> {
        self.model.features.iter().map(|f| f.name.clone()).collect()
    }
    /// The data column each feature reads (its own name, or the categorical column of its
    /// target statistic).
    #[getter]
    fn feature_sources(&self) -> Vec<String> {
        self.model
            .feature_sources()
            .into_iter()
            .map(String::from)
            .collect()
    }
    /// Per feature, the second column a combination statistic reads (None for the others).
    #[getter]
    fn feature_combined_with(&self) -> Vec<Option<String>> {
        (self.model.features.iter())
            .map(|f| Some(f.target_stats.as_ref()?.with.as_ref()?.source.clone()))
            .collect()
    }
    /// Per feature, the number of levels of the categorical column it reads (through its
    /// mapper, or through a target statistic per level), None for a numeric one.
    #[getter]
    fn feature_levels(&self) -> Vec<Option<usize>> {
        (self.model.features.iter())
            .map(|f| match (&f.target_stats, f.mapper.kind()) {
                (Some(stat), _) => Some(stat.source_levels()),
                (None, crate::data::FeatureKind::Numeric) => None,
                (None, crate::data::FeatureKind::Categorical { n_levels }) => {
                    Some(n_levels as usize)
                }
            })
            .collect()
    }
    #[getter]
    fn n_outputs(&self) -> usize {
        self.model.n_outputs
    }
    #[getter]
    fn n_trees(&self) -> usize {
        self.model.n_trees()
    }
    #[getter]
    fn method(&self) -> String {
        self.model.method.to_string()
    }
    #[getter]
    fn loss(&self) -> String {
        self.model.loss.to_string()
    }
    /// How the model's scores map to its predictions: (`Link::name`, the sigmoid's scale or None).
    #[getter]
    fn link(&self) -> (&'static str, Option<f64>) {
        let link = self.model.loss.link();
        (link.name(), link.scale())
    }
    #[getter]
    fn best_iteration(&self) -> Option<usize> {
        self.model.best_iteration
    }

    /// SHAP contributions (`Model::predict_contrib`), shape (n, n_outputs · (n_features + 1));
    /// of the model after `iteration` iterations if given.
    #[pyo3(signature = (features, iteration=None))]
    fn predict_contrib<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        iteration: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let width = self.model.n_outputs * (self.model.features.len() + 1);
        self.explained(py, features, width, |model, frame| match iteration {
            None => model.predict_contrib(frame),
            Some(k) => model.predict_contrib_iteration(frame, k),
        })
    }

    /// SHAP interaction values (`Model::predict_interactions`), shape
    /// (n, n_outputs · (n_features + 1)²); of the model after `iteration` iterations if given.
    #[pyo3(signature = (features, iteration=None))]
    fn predict_interactions<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        iteration: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let width = self.model.n_outputs * (self.model.features.len() + 1).pow(2);
        self.explained(py, features, width, |model, frame| match iteration {
            None => model.predict_interactions(frame),
            Some(k) => model.predict_interactions_iteration(frame, k),
        })
    }
}

impl PyModel {
    /// Runs a per-row explanation of `width` values a row without the GIL.
    fn explained<'py>(
        &self,
        py: Python<'py>,
        features: &Bound<'py, PyAny>,
        width: usize,
        explain: impl Fn(&Model, &crate::data::Frame<'_>) -> crate::Result<Vec<f64>> + Sync,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let columns = Columns::extract(features)?;
        self.check_names(&columns)?;
        let frame = columns.frame()?;
        let n_rows = frame.n_rows();
        let model = &self.model;
        let values = py.detach(|| guarded(|| explain(model, &frame)))?;
        PyArray1::from_vec(py, values).reshape([n_rows, width])
    }
}
