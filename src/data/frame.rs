//! Feature columns borrowed from the caller (zero-copy from numpy / polars).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The values of one feature column. Numeric NaN and negative categorical codes mean missing.
#[derive(Debug, Clone, Copy)]
pub enum FeatureValues<'a> {
    Numeric(&'a [f64]),
    Categorical { codes: &'a [i32], n_levels: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FeatureKind {
    Numeric,
    Categorical { n_levels: u32 },
}

#[derive(Debug, Clone)]
pub struct Feature<'a> {
    pub name: String,
    pub values: FeatureValues<'a>,
}

impl<'a> Feature<'a> {
    pub fn numeric(name: impl Into<String>, values: &'a [f64]) -> Self {
        Feature {
            name: name.into(),
            values: FeatureValues::Numeric(values),
        }
    }
    pub fn categorical(name: impl Into<String>, codes: &'a [i32], n_levels: u32) -> Self {
        Feature {
            name: name.into(),
            values: FeatureValues::Categorical { codes, n_levels },
        }
    }
    pub fn len(&self) -> usize {
        match self.values {
            FeatureValues::Numeric(v) => v.len(),
            FeatureValues::Categorical { codes, .. } => codes.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn kind(&self) -> FeatureKind {
        match self.values {
            FeatureValues::Numeric(_) => FeatureKind::Numeric,
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

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    pub fn n_features(&self) -> usize {
        self.features.len()
    }
    pub fn features(&self) -> &[Feature<'a>] {
        &self.features
    }
    pub fn kinds(&self) -> Vec<FeatureKind> {
        self.features.iter().map(Feature::kind).collect()
    }
    pub fn names(&self) -> Vec<String> {
        self.features.iter().map(|f| f.name.clone()).collect()
    }
}
