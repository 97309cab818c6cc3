//! Feature columns borrowed from the caller (zero-copy from numpy / polars).

use super::categories::{level_index, Categories};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The values of one feature column. Numeric NaN and negative categorical codes mean missing.
#[derive(Debug, Clone, Copy)]
pub enum FeatureValues<'a> {
    /// A column of numbers, read in place.
    Numeric(&'a [f64]),
    /// A column of a row-major matrix, read in place: binning a C-order array column by column
    /// needs no column-major copy of its floats (which would double the memory of the data).
    Strided(Strided<'a>),
    /// Integer level codes.
    Categorical {
        /// One code per row, below `n_levels` (negative: missing).
        codes: &'a [i32],
        /// The number of levels the codes index.
        n_levels: u32,
    },
}

impl<'a> FeatureValues<'a> {
    /// The numeric values (either layout) as a strided view; `None` for categorical codes.
    #[inline]
    pub fn numeric(&self) -> Option<Strided<'a>> {
        match *self {
            FeatureValues::Numeric(x) => Some(Strided {
                values: x,
                stride: 1,
                rows: None,
            }),
            FeatureValues::Strided(x) => Some(x),
            FeatureValues::Categorical { .. } => None,
        }
    }
}

/// Numeric values `values[i * stride]`, i = 0, 1, ...: one column of a row-major matrix; or,
/// with a row selection, `values[rows[i] * stride]`: the training rows of a column whose other
/// rows are held out for validation, read in place instead of copied. The default has no rows.
#[derive(Debug, Clone, Copy)]
pub struct Strided<'a> {
    values: &'a [f64],
    stride: usize,
    rows: Option<&'a [usize]>,
}

impl Default for Strided<'_> {
    fn default() -> Self {
        Strided {
            values: &[],
            stride: 1,
            rows: None,
        }
    }
}

impl<'a> Strided<'a> {
    /// Column `column` of the row-major matrix `matrix` with `n_columns` columns (its length
    /// a multiple of `n_columns`, `column` below it: `Frame::from_row_major` checks both).
    fn column(matrix: &'a [f64], n_columns: usize, column: usize) -> Self {
        Strided {
            values: &matrix[column.min(matrix.len())..],
            stride: n_columns,
            rows: None,
        }
    }
    /// Rows `rows` of this column, in that order; `None` if one is not a row of it.
    pub fn select(self, rows: &'a [usize]) -> Option<Self> {
        debug_assert!(self.rows.is_none(), "a selection of a selection");
        let n_rows = self.len();
        rows.iter().all(|&r| r < n_rows).then_some(Strided {
            rows: Some(rows),
            ..self
        })
    }
    /// Rows of the column (or of the selection).
    #[inline]
    pub fn len(&self) -> usize {
        match self.rows {
            Some(rows) => rows.len(),
            None => self.values.len().div_ceil(self.stride),
        }
    }
    /// True for a column without rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The value of `row` (of the selection, when there is one).
    #[inline]
    pub fn get(&self, row: usize) -> f64 {
        let at = match self.rows {
            Some(rows) => rows[row],
            None => row,
        };
        self.values[at * self.stride]
    }
    /// The values of rows `start..start + n` (within the column).
    #[inline]
    pub fn rows(&self, start: usize, n: usize) -> StridedIter<'a> {
        match self.rows {
            Some(rows) => StridedIter::Selected {
                values: self.values,
                stride: self.stride,
                rows: rows[start..start + n].iter().step_by(1),
            },
            None => {
                let values: &'a [f64] = if n == 0 {
                    &[]
                } else {
                    &self.values[start * self.stride..(start + n - 1) * self.stride + 1]
                };
                StridedIter::InPlace(values.iter().step_by(self.stride))
            }
        }
    }
    /// Every `step`-th value, from row 0.
    pub fn every(&self, step: usize) -> StridedIter<'a> {
        match self.rows {
            Some(rows) => StridedIter::Selected {
                values: self.values,
                stride: self.stride,
                rows: rows.iter().step_by(step),
            },
            None => StridedIter::InPlace(self.values.iter().step_by(self.stride * step)),
        }
    }
}

/// The values of a `Strided` column, in row order.
pub enum StridedIter<'a> {
    /// A column read in place, every `stride`-th value.
    InPlace(std::iter::StepBy<std::slice::Iter<'a, f64>>),
    /// A selection of rows, each read at its place in the column.
    Selected {
        /// The column's values.
        values: &'a [f64],
        /// The distance between a column's consecutive values.
        stride: usize,
        /// The selected rows still to read.
        rows: std::iter::StepBy<std::slice::Iter<'a, usize>>,
    },
}

impl Iterator for StridedIter<'_> {
    type Item = f64;
    #[inline]
    fn next(&mut self) -> Option<f64> {
        match self {
            StridedIter::InPlace(values) => values.next().copied(),
            StridedIter::Selected {
                values,
                stride,
                rows,
            } => rows.next().map(|&r| values[r * *stride]),
        }
    }
}

/// What a column holds, as a model records it to refuse the other kind at predict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FeatureKind {
    /// Numbers (NaN: missing).
    Numeric,
    /// Level codes below `n_levels`.
    Categorical {
        /// The levels the column was coded with.
        n_levels: u32,
    },
}

/// One named column of a `Frame`, borrowed from the caller.
#[derive(Debug, Clone)]
pub struct Feature<'a> {
    /// The column's name, by which a model finds it at predict.
    pub name: String,
    /// The column's values, borrowed.
    pub values: FeatureValues<'a>,
    /// The name of each code of a categorical column; a model trained with them keeps them
    /// and matches a predicted column's levels by name (`None`: the codes are taken as given).
    pub levels: Option<&'a [String]>,
}

impl<'a> Feature<'a> {
    /// A numeric column (NaN: missing), read in place.
    pub fn numeric(name: impl Into<String>, values: &'a [f64]) -> Self {
        Feature {
            name: name.into(),
            values: FeatureValues::Numeric(values),
            levels: None,
        }
    }
    /// Column `column` of `matrix`, a row-major matrix of `n_columns` columns, read in place
    /// (`Frame::from_row_major` builds a frame of them all, checking the shape).
    pub(crate) fn strided(
        name: impl Into<String>,
        matrix: &'a [f64],
        n_columns: usize,
        column: usize,
    ) -> Self {
        Feature {
            name: name.into(),
            values: FeatureValues::Strided(Strided::column(matrix, n_columns.max(1), column)),
            levels: None,
        }
    }
    /// A categorical column of codes below `n_levels` (negative: missing), taken as given.
    pub fn categorical(name: impl Into<String>, codes: &'a [i32], n_levels: u32) -> Self {
        Feature {
            name: name.into(),
            values: FeatureValues::Categorical { codes, n_levels },
            levels: None,
        }
    }
    /// A categorical column from strings: its codes and level names, which the model keeps,
    /// so that at predict a column is matched to it by level name whatever its codes.
    ///
    /// ```
    /// use optboost::{Categories, Feature, Frame};
    ///
    /// let city = Categories::from_strings(&["paris", "oslo", "paris"])?;
    /// let frame = Frame::new(vec![Feature::categorical_strings("city", &city)])?;
    /// assert_eq!(frame.features()[0].levels.unwrap(), ["oslo", "paris"]);
    /// # Ok::<(), optboost::Error>(())
    /// ```
    pub fn categorical_strings(name: impl Into<String>, column: &'a Categories) -> Self {
        Self::categorical_with_levels(name, column.codes(), column.levels())
    }
    /// Codes into `levels`, the name of each code (−1 or any negative code: missing).
    pub fn categorical_with_levels(
        name: impl Into<String>,
        codes: &'a [i32],
        levels: &'a [String],
    ) -> Self {
        Feature {
            name: name.into(),
            // Beyond u32, `Frame::new` refuses the level count as not matching the names.
            values: FeatureValues::Categorical {
                codes,
                n_levels: u32::try_from(levels.len()).unwrap_or(0),
            },
            levels: Some(levels),
        }
    }
    /// Rows of the column.
    pub fn len(&self) -> usize {
        match self.values {
            FeatureValues::Numeric(v) => v.len(),
            FeatureValues::Strided(v) => v.len(),
            FeatureValues::Categorical { codes, .. } => codes.len(),
        }
    }
    /// True for a column without rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Numeric or categorical, with the level count.
    pub fn kind(&self) -> FeatureKind {
        match self.values {
            FeatureValues::Numeric(_) | FeatureValues::Strided(_) => FeatureKind::Numeric,
            FeatureValues::Categorical { n_levels, .. } => FeatureKind::Categorical { n_levels },
        }
    }
}

/// A validated set of equally long feature columns, borrowed from the caller. Numeric NaN and
/// negative categorical codes are missing values.
///
/// ```
/// use optboost::{Feature, Frame};
///
/// let age = [31.0, f64::NAN, 58.0];
/// let city = [0, 2, -1];
/// let frame = Frame::new(vec![Feature::numeric("age", &age), Feature::categorical("city", &city, 3)])?;
/// assert_eq!((frame.n_rows(), frame.n_features()), (3, 2));
/// assert!(Frame::new(vec![Feature::numeric("age", &age), Feature::numeric("short", &age[..2])]).is_err());
/// # Ok::<(), optboost::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Frame<'a> {
    features: Vec<Feature<'a>>,
    n_rows: usize,
}

impl<'a> Frame<'a> {
    /// Checks that there is at least one column and one row, that all columns have the same
    /// length, and that categorical codes lie below their level count.
    pub fn new(features: Vec<Feature<'a>>) -> Result<Self> {
        let first = features
            .first()
            .ok_or_else(|| Error::data("no feature columns"))?;
        let n_rows = first.len();
        if n_rows == 0 {
            return Err(Error::data("no rows: the feature columns are empty"));
        }
        for feature in &features {
            if feature.len() != n_rows {
                return Err(Error::data(format!(
                    "columns of different lengths: `{}` has {} rows, `{}` has {}",
                    first.name,
                    n_rows,
                    feature.name,
                    feature.len()
                )));
            }
            check_levels(feature)?;
            if let FeatureValues::Categorical { codes, n_levels } = feature.values {
                if n_levels == 0 {
                    return Err(Error::value(
                        &feature.name,
                        "a categorical column needs at least one level",
                    ));
                }
                if let Some(row) = codes.iter().position(|&c| c >= 0 && c as u32 >= n_levels) {
                    return Err(Error::value(
                        &feature.name,
                        format!(
                            "code {} at row {} is not below the level count {}",
                            codes[row], row, n_levels
                        ),
                    ));
                }
            }
        }
        Ok(Frame { features, n_rows })
    }

    /// A frame of the columns of `matrix`, row-major with a column per name, read in place: a
    /// C-order array needs no column-major copy (`Frame::new` with `Feature::numeric` would).
    ///
    /// ```
    /// use optboost::Frame;
    ///
    /// let rows = [1.0, 10.0, 2.0, f64::NAN, 3.0, 30.0]; // 3 rows of (a, b)
    /// let frame = Frame::from_row_major(vec!["a".into(), "b".into()], &rows)?;
    /// assert_eq!((frame.n_rows(), frame.n_features()), (3, 2));
    /// assert!(Frame::from_row_major(vec!["a".into(), "b".into()], &rows[..5]).is_err());
    /// # Ok::<(), optboost::Error>(())
    /// ```
    pub fn from_row_major(names: Vec<String>, matrix: &'a [f64]) -> Result<Self> {
        let n_columns = names.len();
        if n_columns > 0 && !matrix.len().is_multiple_of(n_columns) {
            return Err(Error::data(format!(
                "a row-major matrix of {n_columns} columns cannot have {} values (not a \
                 multiple of the column count)",
                matrix.len()
            )));
        }
        let features = names
            .into_iter()
            .enumerate()
            .map(|(j, name)| Feature::strided(name, matrix, n_columns, j))
            .collect();
        Frame::new(features)
    }

    /// Rows in every column.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// Columns.
    pub fn n_features(&self) -> usize {
        self.features.len()
    }
    /// The columns, in the order given.
    pub fn features(&self) -> &[Feature<'a>] {
        &self.features
    }
    /// Each column's kind, in order.
    pub fn kinds(&self) -> Vec<FeatureKind> {
        self.features.iter().map(Feature::kind).collect()
    }
    /// Each column's name, in order.
    pub fn names(&self) -> Vec<String> {
        self.features.iter().map(|f| f.name.clone()).collect()
    }
}

/// Level names belong to a categorical column, one distinct name per level.
fn check_levels(feature: &Feature<'_>) -> Result<()> {
    let Some(levels) = feature.levels else {
        return Ok(());
    };
    let FeatureValues::Categorical { n_levels, .. } = feature.values else {
        return Err(Error::value(
            &feature.name,
            "level names are given for a numeric column",
        ));
    };
    if levels.len() != n_levels as usize {
        return Err(Error::value(
            &feature.name,
            format!(
                "{} level names for a column of {n_levels} levels",
                levels.len()
            ),
        ));
    }
    level_index(levels).map_err(|e| Error::value(&feature.name, e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_columns_read_the_rows_of_a_row_major_matrix() {
        // 4 rows × 3 columns, value = 10 * row + column
        let matrix: Vec<f64> = (0..4)
            .flat_map(|r| (0..3).map(move |c| (10 * r + c) as f64))
            .collect();
        let column = Strided::column(&matrix, 3, 2);
        assert_eq!(column.len(), 4);
        assert_eq!(column.get(3), 32.0);
        assert_eq!(column.rows(1, 2).collect::<Vec<_>>(), vec![12.0, 22.0]);
        assert_eq!(column.rows(4, 0).count(), 0);
        assert_eq!(column.every(3).collect::<Vec<_>>(), vec![2.0, 32.0]);
        let first = Strided::column(&matrix, 3, 0);
        assert_eq!(
            first.rows(0, 4).collect::<Vec<_>>(),
            vec![0.0, 10.0, 20.0, 30.0]
        );
        assert!(Strided::default().is_empty());
        assert_eq!(Strided::default().every(1).count(), 0);
        // a selection of rows, in the given order
        let rows = [3, 0, 2];
        let selected = column.select(&rows).unwrap();
        assert_eq!((selected.len(), selected.get(0)), (3, 32.0));
        assert_eq!(selected.rows(1, 2).collect::<Vec<_>>(), vec![2.0, 22.0]);
        assert_eq!(selected.every(2).collect::<Vec<_>>(), vec![32.0, 22.0]);
        assert!(column.select(&[4]).is_none());
        let frame = Frame::from_row_major(vec!["a".into(), "b".into(), "c".into()], &matrix);
        assert_eq!(frame.unwrap().n_rows(), 4);
    }
}
