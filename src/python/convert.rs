//! Python column lists to borrowed core frames. Numeric columns arrive as float64 and categorical
//! codes as int32 numpy arrays; both are read in place (no copy), so they must be 1-D and
//! C-contiguous, which the Python layer guarantees.
//!
//! Numeric columns may also come as one block, the columns of a 2-D float64 array under a list of
//! names: a wide frame's thousands of columns then cross in one item, where a tuple and an array
//! view per column would cost more than the core's work on a few rows. A block may be in Fortran
//! order (each column contiguous) or C order (a numpy matrix as scikit-learn users pass it); the
//! core reads either in place, so a C-order matrix is never copied to columns.

use super::errors::DataError;
use crate::data::{Feature, Frame};
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyAnyMethods, PyList};

#[derive(Clone)]
enum Values<'py> {
    Numeric(PyReadonlyArray1<'py, f64>),
    /// Column `column` of block `block` (`Columns::blocks`).
    InBlock {
        block: usize,
        column: usize,
    },
    Categorical {
        codes: PyReadonlyArray1<'py, i32>,
        n_levels: u32,
    },
    /// Column `column` of sparse block `block` (`Columns::sparse`).
    InSparse {
        block: usize,
        column: usize,
    },
}

/// A scipy CSC matrix's arrays: the row indices and values read in place, the column pointers
/// (one per column) copied to `usize`.
struct SparseBlock<'py> {
    indptr: Vec<usize>,
    indices: PyReadonlyArray1<'py, u32>,
    values: PyReadonlyArray1<'py, f64>,
    n_rows: usize,
}

/// Named feature columns held (and borrowed read-only) for the duration of one call.
pub struct Columns<'py> {
    names: Vec<String>,
    values: Vec<Values<'py>>,
    blocks: Vec<PyReadonlyArray2<'py, f64>>,
    sparse: Vec<SparseBlock<'py>>,
}

impl<'py> Columns<'py> {
    /// Reads a sequence of `(name, values, kind, n_levels)` tuples, `kind` being "numeric"
    /// (float64 values) or "categorical" (int32 codes, -1 = missing, below `n_levels`), and of
    /// numeric blocks `(names, values, "numeric", 0)`: a list of names and a Fortran- or C-order
    /// float64 array with a column per name; and of sparse blocks `(names, (indptr, indices,
    /// values, n_rows), "sparse", 0)`: a CSC matrix's int64 column pointers, uint32 row indices
    /// and float64 values.
    pub fn extract(columns: &Bound<'py, PyAny>) -> PyResult<Self> {
        let mut names = Vec::new();
        let mut values = Vec::new();
        let mut blocks = Vec::new();
        let mut sparse = Vec::new();
        for item in columns.try_iter()? {
            let item = item?;
            let (name, array, kind, n_levels): (Bound<'py, PyAny>, Bound<'py, PyAny>, String, u32) =
                item.extract().map_err(|_| {
                    DataError::new_err(
                        "a feature column must be a (name, values, kind, n_levels) tuple",
                    )
                })?;
            if name.is_instance_of::<PyList>() {
                let block_names: Vec<String> = name
                    .extract()
                    .map_err(|_| DataError::new_err("a block's names must be a list of strings"))?;
                if kind == "sparse" {
                    let block = sparse_block(&block_names, &array)?;
                    for (column, name) in block_names.into_iter().enumerate() {
                        names.push(name);
                        values.push(Values::InSparse {
                            block: sparse.len(),
                            column,
                        });
                    }
                    sparse.push(block);
                    continue;
                }
                let block = numeric_block(&block_names, &array, &kind)?;
                for (column, name) in block_names.into_iter().enumerate() {
                    names.push(name);
                    values.push(Values::InBlock {
                        block: blocks.len(),
                        column,
                    });
                }
                blocks.push(block);
                continue;
            }
            let name: String = name.extract().map_err(|_| {
                DataError::new_err(
                    "a feature column's name must be a string (or a block's, a list)",
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
        Ok(Columns {
            names,
            values,
            blocks,
            sparse,
        })
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
                &Values::InBlock { block, column } => {
                    let block = &self.blocks[block];
                    let [n_rows, n_columns] = [block.shape()[0], block.shape()[1]];
                    // One of the two orders (checked by `numeric_block`).
                    let values = block.as_slice().map_err(|_| {
                        DataError::new_err(format!(
                            "the block of column `{name}` is not contiguous"
                        ))
                    })?;
                    if block.is_fortran_contiguous() {
                        Feature::numeric(
                            name.clone(),
                            &values[column * n_rows..(column + 1) * n_rows],
                        )
                    } else {
                        Feature::strided(name.clone(), values, n_columns, column)
                    }
                }
                Values::Categorical { codes, n_levels } => {
                    Feature::categorical(name.clone(), contiguous(name, codes)?, *n_levels)
                }
                &Values::InSparse { block, column } => {
                    let block = &self.sparse[block];
                    let stored = block.indptr[column]..block.indptr[column + 1];
                    let indices = contiguous(name, &block.indices)?;
                    let values = contiguous(name, &block.values)?;
                    Feature::sparse(
                        name.clone(),
                        &indices[stored.clone()],
                        &values[stored],
                        block.n_rows,
                    )
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

/// A sparse block's arrays, checked as `Frame::from_csc` checks them (so that its columns can
/// be cut out of them safely).
fn sparse_block<'py>(names: &[String], arrays: &Bound<'py, PyAny>) -> PyResult<SparseBlock<'py>> {
    let first = names.first().map_or("", String::as_str);
    let (indptr, indices, values, n_rows): (
        PyReadonlyArray1<'py, i64>,
        PyReadonlyArray1<'py, u32>,
        PyReadonlyArray1<'py, f64>,
        usize,
    ) = arrays.extract().map_err(|_| {
        DataError::new_err(format!(
            "the sparse block of columns from `{first}` must be (indptr int64, indices uint32, \
             values float64, n_rows) 1-D numpy arrays and a row count"
        ))
    })?;
    let indptr: Vec<usize> = (indptr.as_array().iter())
        .map(|&p| usize::try_from(p))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            DataError::new_err(format!(
                "the sparse block of columns from `{first}` has a negative column pointer"
            ))
        })?;
    let block = SparseBlock {
        indptr,
        indices,
        values,
        n_rows,
    };
    crate::data::check_csc(
        names,
        n_rows,
        &block.indptr,
        contiguous(first, &block.indices)?,
        contiguous(first, &block.values)?,
    )
    .map_err(super::errors::to_py_err)?;
    Ok(block)
}

/// A numeric block's array, checked: 2-D float64, Fortran or C order, a column per name.
fn numeric_block<'py>(
    names: &[String],
    array: &Bound<'py, PyAny>,
    kind: &str,
) -> PyResult<PyReadonlyArray2<'py, f64>> {
    let first = names.first().map_or("", String::as_str);
    if kind != "numeric" {
        return Err(DataError::new_err(format!(
            "the block of columns from `{first}` has kind {kind:?}; blocks are \"numeric\""
        )));
    }
    let block: PyReadonlyArray2<'py, f64> = array.extract().map_err(|_| {
        DataError::new_err(format!(
            "the block of columns from `{first}` must be a 2-D float64 numpy array"
        ))
    })?;
    if block.shape()[1] != names.len()
        || !(block.is_fortran_contiguous() || block.is_c_contiguous())
    {
        return Err(DataError::new_err(format!(
            "the block of columns from `{first}` must be a contiguous (Fortran- or C-order) \
             array of {} columns (its names), not shape {:?}",
            names.len(),
            block.shape()
        )));
    }
    Ok(block)
}
