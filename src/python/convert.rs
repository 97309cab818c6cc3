//! Python column lists to borrowed core frames. Numeric columns arrive as float64 and categorical
//! codes as int32 numpy arrays; both are read in place (no copy), so they must be 1-D and
//! C-contiguous, which the Python layer guarantees.

use super::errors::DataError;
use crate::data::{Feature, Frame};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyAnyMethods;

enum Values<'py> {
    Numeric(PyReadonlyArray1<'py, f64>),
    Categorical {
        codes: PyReadonlyArray1<'py, i32>,
        n_levels: u32,
    },
}

/// Named feature columns held (and borrowed read-only) for the duration of one call.
pub struct Columns<'py> {
    names: Vec<String>,
    values: Vec<Values<'py>>,
}

impl<'py> Columns<'py> {
    /// Reads a sequence of `(name, values, kind, n_levels)` tuples, `kind` being "numeric"
    /// (float64 values) or "categorical" (int32 codes, -1 = missing, below `n_levels`).
    pub fn extract(columns: &Bound<'py, PyAny>) -> PyResult<Self> {
        let mut names = Vec::new();
        let mut values = Vec::new();
        for item in columns.try_iter()? {
            let item = item?;
            let (name, array, kind, n_levels): (String, Bound<'py, PyAny>, String, u32) =
                item.extract().map_err(|_| {
                    DataError::new_err(
                        "a feature column must be a (name, values, kind, n_levels) tuple",
                    )
                })?;
            let column = match kind.as_str() {
                "numeric" => Values::Numeric(array.extract().map_err(|_| {
                    DataError::new_err(format!(
                        "numeric column `{name}` must be a 1-D float64 numpy array"
                    ))
                })?),
                "categorical" => Values::Categorical {
                    codes: array.extract().map_err(|_| {
                        DataError::new_err(format!(
                            "categorical column `{name}` must be a 1-D int32 numpy array"
                        ))
                    })?,
                    n_levels,
                },
                other => {
                    return Err(DataError::new_err(format!(
                    "column `{name}` has kind {other:?}; expected \"numeric\" or \"categorical\""
                )))
                }
            };
            names.push(name);
            values.push(column);
        }
        Ok(Columns { names, values })
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The columns as a core frame borrowing the numpy buffers.
    pub fn frame(&self) -> PyResult<Frame<'_>> {
        let mut features = Vec::with_capacity(self.values.len());
        for (name, values) in self.names.iter().zip(&self.values) {
            let feature = match values {
                Values::Numeric(array) => Feature::numeric(name.clone(), contiguous(name, array)?),
                Values::Categorical { codes, n_levels } => {
                    Feature::categorical(name.clone(), contiguous(name, codes)?, *n_levels)
                }
            };
            features.push(feature);
        }
        Frame::new(features).map_err(super::errors::to_py_err)
    }
}

/// The array's buffer as a slice.
pub fn contiguous<'a, T: numpy::Element>(
    name: &str,
    array: &'a PyReadonlyArray1<'_, T>,
) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|_| DataError::new_err(format!("column `{name}` must be a C-contiguous array")))
}
