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
    /// Or a column of a sparse (CSC) matrix, whose rows not stored are 0.0.
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
                layout: Layout::Dense {
                    values: x,
                    stride: 1,
                },
                rows: None,
            }),
            FeatureValues::Strided(x) => Some(x),
            FeatureValues::Categorical { .. } => None,
        }
    }
}

/// A numeric column read in place: `values[i * stride]`, i = 0, 1, ..., one column of a
/// row-major matrix; or one column of a compressed sparse column (CSC) matrix, whose rows not
/// stored are 0.0. With a row selection, row i is row `rows[i]` of that column: the training
/// rows of a column whose other rows are held out for validation, read in place instead of
/// copied. The default has no rows.
#[derive(Debug, Clone, Copy)]
pub struct Strided<'a> {
    layout: Layout<'a>,
    rows: Option<&'a [usize]>,
}

#[derive(Debug, Clone, Copy)]
enum Layout<'a> {
    Dense {
        values: &'a [f64],
        stride: usize,
    },
    /// `values[k]` is the value of row `rows[k]` (ascending); every other row of the
    /// `n_rows` is 0.0, as scikit-learn and LightGBM read an implicit zero (not missing).
    Sparse {
        rows: &'a [u32],
        values: &'a [f64],
        n_rows: usize,
    },
}

impl<'a> Layout<'a> {
    #[inline]
    fn len(&self) -> usize {
        match *self {
            Layout::Dense { values, stride } => values.len().div_ceil(stride),
            Layout::Sparse { n_rows, .. } => n_rows,
        }
    }
    #[inline]
    fn get(&self, row: usize) -> f64 {
        match *self {
            Layout::Dense { values, stride } => values[row * stride],
            Layout::Sparse { rows, values, .. } => {
                assert!(row < self.len(), "row {row} out of range");
                match rows.binary_search(&(row as u32)) {
                    Ok(k) => values[k],
                    Err(_) => 0.0,
                }
            }
        }
    }
}

impl Default for Strided<'_> {
    fn default() -> Self {
        Strided {
            layout: Layout::Dense {
                values: &[],
                stride: 1,
            },
            rows: None,
        }
    }
}

impl<'a> Strided<'a> {
    /// Column `column` of the row-major matrix `matrix` with `n_columns` columns (its length
    /// a multiple of `n_columns`, `column` below it: `Frame::from_row_major` checks both).
    fn column(matrix: &'a [f64], n_columns: usize, column: usize) -> Self {
        Strided {
            layout: Layout::Dense {
                values: &matrix[column.min(matrix.len())..],
                stride: n_columns,
            },
            rows: None,
        }
    }
    /// A sparse column of `n_rows` rows: `values[k]` at row `rows[k]`, 0.0 elsewhere (`rows`
    /// strictly ascending and below `n_rows`, as `Frame::from_csc` checks).
    fn sparse(rows: &'a [u32], values: &'a [f64], n_rows: usize) -> Self {
        Strided {
            layout: Layout::Sparse {
                rows,
                values,
                n_rows,
            },
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
            None => self.layout.len(),
        }
    }
    /// True for a column without rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The value of `row` (of the selection, when there is one; a binary search in a sparse
    /// column).
    #[inline]
    pub fn get(&self, row: usize) -> f64 {
        let at = match self.rows {
            Some(rows) => rows[row],
            None => row,
        };
        self.layout.get(at)
    }
    /// The values of rows `start..start + n` (within the column).
    #[inline]
    pub fn rows(&self, start: usize, n: usize) -> StridedIter<'a> {
        match (self.rows, self.layout) {
            (Some(rows), layout) => StridedIter(Walk::Selected {
                layout,
                rows: rows[start..start + n].iter().step_by(1),
            }),
            (None, Layout::Dense { values, stride }) => {
                let values: &'a [f64] = if n == 0 {
                    &[]
                } else {
                    &values[start * stride..(start + n - 1) * stride + 1]
                };
                StridedIter(Walk::InPlace(values.iter().step_by(stride)))
            }
            (None, Layout::Sparse { rows, values, .. }) => {
                assert!(
                    start + n <= self.len(),
                    "rows {start}..{} out of range",
                    start + n
                );
                let first = rows.partition_point(|&r| (r as usize) < start);
                StridedIter(Walk::Sparse {
                    rows: &rows[first..],
                    values: &values[first..],
                    next: start,
                    step: 1,
                    end: start + n,
                })
            }
        }
    }
    /// Every `step`-th value from row 0 of a sparse column (with no row selection) as its
    /// stored values at those rows, in row order, and the count of the rows not stored (0.0)
    /// among them: a sample in time proportional to the stored values, not to the rows.
    pub(crate) fn sparse_every(&self, step: usize) -> Option<(Vec<f64>, usize)> {
        let Layout::Sparse {
            rows,
            values,
            n_rows,
        } = self.layout
        else {
            return None;
        };
        if self.rows.is_some() {
            return None;
        }
        let stored: Vec<f64> = (rows.iter().zip(values))
            .filter(|(&r, _)| (r as usize).is_multiple_of(step))
            .map(|(_, &v)| v)
            .collect();
        let zeros = n_rows.div_ceil(step) - stored.len();
        Some((stored, zeros))
    }
    /// Every `step`-th value, from row 0.
    pub fn every(&self, step: usize) -> StridedIter<'a> {
        match (self.rows, self.layout) {
            (Some(rows), layout) => StridedIter(Walk::Selected {
                layout,
                rows: rows.iter().step_by(step),
            }),
            (None, Layout::Dense { values, stride }) => {
                StridedIter(Walk::InPlace(values.iter().step_by(stride * step)))
            }
            (
                None,
                Layout::Sparse {
                    rows,
                    values,
                    n_rows,
                },
            ) => StridedIter(Walk::Sparse {
                rows,
                values,
                next: 0,
                step,
                end: n_rows,
            }),
        }
    }
}

/// The values of a `Strided` column, in row order.
pub struct StridedIter<'a>(Walk<'a>);

enum Walk<'a> {
    InPlace(std::iter::StepBy<std::slice::Iter<'a, f64>>),
    /// A selection of rows, each read at its place in the column.
    Selected {
        layout: Layout<'a>,
        rows: std::iter::StepBy<std::slice::Iter<'a, usize>>,
    },
    /// Rows `next`, `next + step`, ... below `end` of a sparse column; `rows` and `values`
    /// start at the first stored row not below `next`.
    Sparse {
        rows: &'a [u32],
        values: &'a [f64],
        next: usize,
        step: usize,
        end: usize,
    },
}

impl Iterator for StridedIter<'_> {
    type Item = f64;
    #[inline]
    fn next(&mut self) -> Option<f64> {
        match &mut self.0 {
            Walk::InPlace(values) => values.next().copied(),
            Walk::Selected { layout, rows } => rows.next().map(|&r| layout.get(r)),
            Walk::Sparse {
                rows,
                values,
                next,
                step,
                end,
            } => {
                let row = *next;
                if row >= *end {
                    return None;
                }
                *next = row.saturating_add(*step);
                // Skip the stored rows passed over by the step.
                let skip = rows.iter().take_while(|&&r| (r as usize) < row).count();
                *rows = &rows[skip..];
                *values = &values[skip..];
                match rows.first() {
                    Some(&r) if r as usize == row => Some(values[0]),
                    _ => Some(0.0),
                }
            }
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
    /// A sparse numeric column of `n_rows` rows: `values[k]` at row `rows[k]`, 0.0 at every
    /// other row (`Frame::from_csc` builds a frame of them, checking the rows).
    pub(crate) fn sparse(
        name: impl Into<String>,
        rows: &'a [u32],
        values: &'a [f64],
        n_rows: usize,
    ) -> Self {
        Feature {
            name: name.into(),
            values: FeatureValues::Strided(Strided::sparse(rows, values, n_rows)),
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

    /// A frame of the columns of a compressed sparse column (CSC) matrix of `n_rows` rows and a
    /// column per name, read in place: column j's stored values are
    /// `values[indptr[j]..indptr[j + 1]]`, at the rows `indices` holds over the same range
    /// (strictly ascending in each column); the rows not stored are 0.0, not missing (a NaN
    /// stored is missing). The model is the one the dense matrix gives, bit for bit; its floats
    /// are never densified (the bins training keeps are still a byte per row and feature).
    ///
    /// ```
    /// use optboost::Frame;
    ///
    /// // [[0, 2], [1, 0], [0, NaN]]: column a holds row 1, column b rows 0 and 2.
    /// let (indptr, indices, values) = ([0, 1, 3], [1, 0, 2], [1.0, 2.0, f64::NAN]);
    /// let frame = Frame::from_csc(vec!["a".into(), "b".into()], 3, &indptr, &indices, &values)?;
    /// assert_eq!((frame.n_rows(), frame.n_features()), (3, 2));
    /// let b = frame.features()[1].values.numeric().unwrap();
    /// assert_eq!((b.get(0), b.get(1), b.get(2).is_nan()), (2.0, 0.0, true));
    /// let unsorted = [1, 2, 0];
    /// assert!(Frame::from_csc(vec!["a".into(), "b".into()], 3, &indptr, &unsorted, &values).is_err());
    /// # Ok::<(), optboost::Error>(())
    /// ```
    pub fn from_csc(
        names: Vec<String>,
        n_rows: usize,
        indptr: &'a [usize],
        indices: &'a [u32],
        values: &'a [f64],
    ) -> Result<Self> {
        check_csc(&names, n_rows, indptr, indices, values)?;
        let features = (names.into_iter().enumerate())
            .map(|(j, name)| {
                let stored = indptr[j]..indptr[j + 1];
                Feature::sparse(name, &indices[stored.clone()], &values[stored], n_rows)
            })
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

/// Checks the arrays of a CSC matrix of `n_rows` rows and a column per name (see
/// `Frame::from_csc`), naming the first problem.
pub(crate) fn check_csc(
    names: &[String],
    n_rows: usize,
    indptr: &[usize],
    indices: &[u32],
    values: &[f64],
) -> Result<()> {
    if n_rows > u32::MAX as usize {
        return Err(Error::data(format!(
            "a sparse matrix of {n_rows} rows: at most {} rows are supported",
            u32::MAX
        )));
    }
    if indptr.len() != names.len() + 1 {
        return Err(Error::data(format!(
            "a sparse matrix of {} columns needs {} column pointers (indptr), got {}",
            names.len(),
            names.len() + 1,
            indptr.len()
        )));
    }
    if indices.len() != values.len() {
        return Err(Error::data(format!(
            "a sparse matrix has {} row indices but {} values",
            indices.len(),
            values.len()
        )));
    }
    if indptr[0] != 0 || indptr[names.len()] != values.len() {
        return Err(Error::data(format!(
            "the column pointers (indptr) of a sparse matrix must run from 0 to its {} stored \
             values, got {} to {}",
            values.len(),
            indptr[0],
            indptr[names.len()]
        )));
    }
    if let Some(j) = (0..names.len()).find(|&j| indptr[j] > indptr[j + 1]) {
        return Err(Error::value(
            &names[j],
            format!(
                "the column pointers (indptr) decrease: {} then {}",
                indptr[j],
                indptr[j + 1]
            ),
        ));
    }
    for (j, name) in names.iter().enumerate() {
        let (start, end) = (indptr[j], indptr[j + 1]);
        let rows = &indices[start..end];
        if let Some(k) = (1..rows.len()).find(|&k| rows[k] <= rows[k - 1]) {
            let what = if rows[k] == rows[k - 1] {
                "duplicate"
            } else {
                "unsorted"
            };
            return Err(Error::value(
                name,
                format!(
                    "{what} row indices in a sparse column ({} after {}): each row at most \
                     once, ascending (scipy: sum_duplicates())",
                    rows[k],
                    rows[k - 1]
                ),
            ));
        }
        if let Some(&last) = rows.last().filter(|&&r| r as usize >= n_rows) {
            return Err(Error::value(
                name,
                format!("row index {last} of a sparse column is not below the row count {n_rows}"),
            ));
        }
    }
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

    #[test]
    fn sparse_columns_read_as_their_dense_columns() {
        // 10 rows; stored rows 0, 3, 4 and 9 (an explicit 0.0 and a NaN among them).
        let (rows, values) = ([0u32, 3, 4, 9], [5.0, 0.0, f64::NAN, -2.0]);
        let dense = [5.0, 0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0, -2.0];
        let sparse = Strided::sparse(&rows, &values, 10);
        let column = Strided::column(&dense, 1, 0);
        let bits = |values: StridedIter<'_>| values.map(f64::to_bits).collect::<Vec<_>>();
        assert_eq!(sparse.len(), 10);
        assert!((0..10).all(|r| sparse.get(r).to_bits() == dense[r].to_bits()));
        for start in 0..=10 {
            for n in 0..=10 - start {
                assert_eq!(bits(sparse.rows(start, n)), bits(column.rows(start, n)));
            }
        }
        for step in 1..12 {
            assert_eq!(
                bits(sparse.every(step)),
                bits(column.every(step)),
                "step {step}"
            );
        }
        let selection = [9, 4, 1, 0];
        let (a, b) = (
            sparse.select(&selection).unwrap(),
            column.select(&selection).unwrap(),
        );
        assert_eq!(bits(a.rows(1, 3)), bits(b.rows(1, 3)));
        assert_eq!(bits(a.every(2)), bits(b.every(2)));
        assert!(sparse.select(&[10]).is_none());
        assert!(Strided::sparse(&[], &[], 3).every(1).all(|v| v == 0.0));
    }

    #[test]
    fn bad_csc_arrays_are_refused_by_name() {
        let names = || vec!["a".to_string(), "b".to_string()];
        let error = |indptr: &[usize], indices: &[u32], values: &[f64], n_rows: usize| {
            Frame::from_csc(names(), n_rows, indptr, indices, values)
                .unwrap_err()
                .to_string()
        };
        let (one, two) = ([1.0], [1.0, 2.0]);
        assert!(error(&[0, 1], &[0], &one, 3).contains("needs 3 column pointers"));
        assert!(error(&[0, 1, 1], &[0, 1], &one, 3).contains("2 row indices but 1 values"));
        assert!(error(&[0, 1, 2], &[0], &one, 3).contains("from 0 to its 1 stored values"));
        assert!(error(&[0, 2, 1], &[0], &one, 3).contains("decrease"));
        let duplicate = error(&[0, 2, 2], &[1, 1], &two, 3);
        assert!(
            duplicate.contains("duplicate") && duplicate.contains('a'),
            "{duplicate}"
        );
        assert!(error(&[0, 0, 2], &[2, 1], &two, 3).contains("unsorted"));
        assert!(error(&[0, 0, 2], &[1, 3], &two, 3).contains("row index 3"));
        assert!(error(&[0, 0, 0], &[], &[], u32::MAX as usize + 1).contains("at most"));
        assert!(error(&[0, 0, 0], &[], &[], 0).contains("no rows"));
    }
}
