//! The `optboost._core` extension module. It only converts, releases the GIL and maps errors;
//! everything else is the core's (validation, defaults and the algorithms live in the Rust core).

mod booster;
mod convert;
mod custom_loss;
mod errors;
mod model;

use crate::loss::LossSpec;
use crate::params::{Method, Params};
use pyo3::prelude::*;

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

/// Parses and validates `(name, value)` pairs the way training will; raises ParameterError.
#[pyfunction]
fn check_params(params: Vec<(String, String)>) -> PyResult<()> {
    errors::guarded(|| booster::params_from_pairs(&params).map(|_| ()))
}

/// The kind of target a loss needs: "regression", "binary" or "multiclass".
#[pyfunction]
fn loss_task(loss: &str) -> PyResult<&'static str> {
    let spec: LossSpec = errors::guarded(|| loss.trim().parse())?;
    Ok(if spec.is_multiclass() {
        "multiclass"
    } else if spec.is_binary() {
        "binary"
    } else {
        "regression"
    })
}

#[pymodule]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_FORMAT_VERSION", crate::model::FORMAT_VERSION)?;
    m.add_class::<booster::PyBooster>()?;
    m.add_class::<model::PyModel>()?;
    m.add_function(wrap_pyfunction!(param_names, m)?)?;
    m.add_function(wrap_pyfunction!(method_names, m)?)?;
    m.add_function(wrap_pyfunction!(check_params, m)?)?;
    m.add_function(wrap_pyfunction!(loss_task, m)?)?;
    Ok(())
}
