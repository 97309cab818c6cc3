//! The `optboost._core` extension module. It only converts, releases the GIL and maps errors;
//! everything else is the core's (validation, defaults and the algorithms live in the Rust core).

mod booster;
mod convert;
mod custom_loss;
mod errors;
mod model;

use crate::boost::RowSplit;
use crate::loss::{Link, LossSpec};
use crate::metric::Metric;
use crate::params::{Method, Params};
use crate::LargeBlocks;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Large blocks go back to the kernel when freed (see `LargeBlocks`): the extension's
/// allocations only; Python's own and numpy's keep their allocator.
#[global_allocator]
static ALLOCATOR: LargeBlocks = LargeBlocks;

/// Every parameter name `Params::set` accepts.
#[pyfunction]
fn param_names() -> Vec<&'static str> {
    Params::NAMES.to_vec()
}

/// The defaults of the parameters every front end shows (method, loss, n_iter, learning_rate,
/// seed, n_threads), as training uses them when they are not given.
#[pyfunction]
fn param_defaults<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let params = Params::default();
    let out = PyDict::new(py);
    out.set_item("method", params.method.name())?;
    out.set_item("loss", params.loss.to_string())?;
    out.set_item("n_iter", params.n_iter)?;
    out.set_item("learning_rate", params.learning_rate)?;
    out.set_item("seed", params.seed)?;
    out.set_item("n_threads", params.n_threads)?;
    Ok(out)
}

/// Every built-in metric name (the `metrics` parameter's vocabulary).
#[pyfunction]
fn metric_names() -> Vec<&'static str> {
    Metric::NAMES.to_vec()
}

/// Every method name.
#[pyfunction]
fn method_names() -> Vec<&'static str> {
    Method::NAMES.to_vec()
}

/// Parses and validates `(name, value)` pairs the way training will (raises ParameterError), and
/// returns what training will use: the normalised method and loss, the kind of target the loss
/// needs, the step rule and ρ in force (the user's or the method's defaults), the preset and
/// the `(name, value)` settings it made.
#[pyfunction]
fn resolve_params<'py>(
    py: Python<'py>,
    params: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyDict>> {
    let (params, preset_settings, (step, rho)) = errors::guarded(|| {
        let mut given = Params::default();
        for (name, value) in &params {
            given.set(name, value)?;
        }
        let params = given.checked()?;
        let step = params.step_in_force()?;
        Ok((params, given.preset_settings(), step))
    })?;
    let out = PyDict::new(py);
    out.set_item("method", params.method.name())?;
    out.set_item("loss", params.loss.to_string())?;
    out.set_item("task", params.loss.traits().task.target_encoding())?;
    out.set_item("step", step.name())?;
    out.set_item("rho", rho)?;
    out.set_item("preset", params.preset.name())?;
    out.set_item("preset_settings", preset_settings)?;
    Ok(out)
}

/// Every loss name (without its parameter).
#[pyfunction]
fn loss_names() -> Vec<&'static str> {
    LossSpec::NAMES.to_vec()
}

/// The kind of target a loss needs: "regression", "binary" or "multiclass".
#[pyfunction]
fn loss_task(loss: &str) -> PyResult<&'static str> {
    let spec: LossSpec = errors::guarded(|| loss.trim().parse())?;
    Ok(spec.traits().task.target_encoding())
}

/// What a loss given by its text (`"pinball(0.9)"`, `"custom"`) is: its row of the core's loss
/// vocabulary, the one place the front end learns about losses from.
#[pyfunction]
fn loss_info<'py>(py: Python<'py>, loss: &str) -> PyResult<Bound<'py, PyDict>> {
    let spec: LossSpec = errors::guarded(|| loss.trim().parse())?;
    let traits = spec.traits();
    let link = spec.link();
    let out = PyDict::new(py);
    out.set_item("name", spec.name())?;
    out.set_item("parameter", spec.parameter())?;
    out.set_item("levels", spec.levels())?;
    out.set_item("task", traits.task.name())?;
    out.set_item("target", traits.task.target_encoding())?;
    out.set_item("link", link.name())?;
    out.set_item("link_scale", link.scale())?;
    // A distributional loss's parameters by name, in the order of its outputs' responses.
    let parameters = match link {
        Link::Distribution(family) => Some(family.parameter_names().to_vec()),
        _ => None,
    };
    out.set_item("parameters", parameters)?;
    out.set_item("separable", traits.separable)?;
    out.set_item("piecewise_linear", traits.piecewise_linear)?;
    out.set_item("sigma_from_data", traits.sigma_from_data)?;
    out.set_item("distributable", traits.distributable)?;
    let metrics: Vec<&str> = (Metric::ALL.iter())
        .filter(|m| m.fits(traits.metrics))
        .map(Metric::name)
        .collect();
    out.set_item("metrics", metrics)?;
    out.set_item("default_metric", traits.default_metric.name())?;
    out.set_item("multi_output", traits.multi_output)?;
    out.set_item("r_gbm", traits.r_gbm)?;
    Ok(out)
}

/// What a method is: the facts its file declares to the core.
#[pyfunction]
fn method_info<'py>(py: Python<'py>, method: &str) -> PyResult<Bound<'py, PyDict>> {
    let method: Method = errors::guarded(|| method.trim().parse())?;
    let out = PyDict::new(py);
    out.set_item("name", method.name())?;
    out.set_item("momentum", method.has_momentum())?;
    out.set_item("proximal", method.uses_prox())?;
    out.set_item("multiclass", method.supports_multiclass())?;
    out.set_item("trees_per_iteration", method.trees_per_iteration())?;
    let rules: Vec<&str> = method.step_rules().iter().map(|r| r.name()).collect();
    out.set_item("step_rules", rules)?;
    Ok(out)
}

#[pymodule]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_FORMAT_VERSION", crate::model::FORMAT_VERSION)?;
    m.add("HISTORY_SCHEMA", booster::HISTORY_SCHEMA.to_vec())?;
    // What a row is for, as `Booster(row_roles=)` reads it: (trains, validates, left out).
    m.add(
        "ROW_ROLES",
        (RowSplit::TRAINS, RowSplit::VALIDATES, RowSplit::LEFT_OUT),
    )?;
    m.add_class::<booster::PyBooster>()?;
    m.add_class::<model::PyModel>()?;
    m.add_function(wrap_pyfunction!(param_names, m)?)?;
    m.add_function(wrap_pyfunction!(method_names, m)?)?;
    m.add_function(wrap_pyfunction!(param_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(metric_names, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_params, m)?)?;
    m.add_function(wrap_pyfunction!(loss_names, m)?)?;
    m.add_function(wrap_pyfunction!(loss_task, m)?)?;
    m.add_function(wrap_pyfunction!(loss_info, m)?)?;
    m.add_function(wrap_pyfunction!(method_info, m)?)?;
    Ok(())
}
