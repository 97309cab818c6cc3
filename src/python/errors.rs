//! Rust errors and panics as Python exceptions. The exception classes live in the pure-Python
//! module `optboost.errors`, so that they can inherit from both `OptboostError` and the matching
//! built-in (`ValueError`, `RuntimeError`) and so that the Python layer can raise them without
//! the extension.

use crate::error::Error;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

pyo3::import_exception!(optboost.errors, DataError);
pyo3::import_exception!(optboost.errors, InvalidValueError);
pyo3::import_exception!(optboost.errors, ParameterError);
pyo3::import_exception!(optboost.errors, ModelFileError);
pyo3::import_exception!(optboost.errors, TrainingError);

/// The Python exception for a core error, with the core's message.
pub fn to_py_err(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::Data(_) => DataError::new_err(message),
        Error::Value { .. } => InvalidValueError::new_err(message),
        Error::Param { .. } => ParameterError::new_err(message),
        Error::Model(_) => ModelFileError::new_err(message),
        Error::Training(_) => TrainingError::new_err(message),
    }
}

/// Runs a call into the core so that neither its errors nor a panic cross into Python raw: a
/// panic is a bug in optboost, reported as a `TrainingError` instead of aborting the caller's
/// program or surfacing as pyo3's `PanicException` (which is not an `Exception`).
pub fn guarded<T>(call: impl FnOnce() -> crate::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result.map_err(to_py_err),
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(TrainingError::new_err(format!(
                "internal error in the optboost core (please report it): {detail}"
            )))
        }
    }
}
