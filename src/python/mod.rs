//! The `optboost._core` extension module. It only converts, releases the GIL and maps errors;
//! everything else is the core's (validation, defaults and the algorithms live in the Rust core).

mod booster;
mod convert;
mod custom_loss;
mod errors;
mod model;

use crate::loss::LossSpec;
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

/// Every method name.
#[pyfunction]
fn method_names() -> Vec<&'static str> {
    Method::NAMES.to_vec()
}

/// Parses and validates `(name, value)` pairs the way training will (raises ParameterError), and
/// returns what training will use: the normalised method and loss, the kind of target the loss
/// needs, and the step rule and ρ in force (the user's or the method's defaults).
#[pyfunction]
fn resolve_params<'py>(
    py: Python<'py>,
    params: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyDict>> {
    let (params, (step, rho)) = errors::guarded(|| {
        let params = booster::params_from_pairs(&params)?;
        let step = params.step_in_force()?;
        Ok((params, step))
    })?;
    let out = PyDict::new(py);
    out.set_item("method", params.method.name())?;
    out.set_item("loss", params.loss.to_string())?;
    out.set_item("task", task(&params.loss))?;
    out.set_item("step", step.name())?;
    out.set_item("rho", rho)?;
    Ok(out)
}

/// Every loss name (without its parameter).
#[pyfunction]
fn loss_names() -> Vec<&'static str> {
    LossSpec::NAMES.to_vec()
}

fn task(spec: &LossSpec) -> &'static str {
    if spec.is_multiclass() {
        "multiclass"
    } else if spec.is_binary() {
        "binary"
    } else {
        "regression"
    }
}

/// The kind of target a loss needs: "regression", "binary" or "multiclass".
#[pyfunction]
fn loss_task(loss: &str) -> PyResult<&'static str> {
    let spec: LossSpec = errors::guarded(|| loss.trim().parse())?;
    Ok(task(&spec))
}

#[pymodule]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_FORMAT_VERSION", crate::model::FORMAT_VERSION)?;
    m.add("HISTORY_SCHEMA", booster::HISTORY_SCHEMA.to_vec())?;
    m.add_class::<booster::PyBooster>()?;
    m.add_class::<model::PyModel>()?;
    m.add_function(wrap_pyfunction!(param_names, m)?)?;
    m.add_function(wrap_pyfunction!(method_names, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_params, m)?)?;
    m.add_function(wrap_pyfunction!(loss_names, m)?)?;
    m.add_function(wrap_pyfunction!(loss_task, m)?)?;
    Ok(())
}
