//! Categorical columns given as strings: the codes a `Frame` borrows, and the level names that
//! give each code its meaning, so that a model can match levels by name at predict.

use super::{FeatureValues, Frame};
use crate::error::{Error, Result};
use std::collections::HashMap;

/// A categorical column from strings, owned: codes into `levels` (−1: missing), for
/// `Feature::categorical_strings` to borrow. Levels are the distinct values sorted, as Python's
/// front end orders a string column's levels, so that the codes do not depend on row order.
///
/// ```
/// use optboost::Categories;
///
/// let city = Categories::from_strings(&["paris", "oslo", "paris"])?;
/// assert_eq!(city.levels(), ["oslo", "paris"]);
/// assert_eq!(city.codes(), [1, 0, 1]);
/// let with_missing = Categories::from_optional(&[Some("oslo"), None])?;
/// assert_eq!(with_missing.codes(), [0, -1]);
/// // Coded with given levels: a value outside them is missing.
/// let coded = Categories::with_levels(&[Some("rome"), Some("oslo")], city.levels())?;
/// assert_eq!(coded.codes(), [-1, 0]);
/// # Ok::<(), optboost::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Categories {
    codes: Vec<i32>,
    levels: Vec<String>,
}

impl Categories {
    /// Every value a level: the distinct values, sorted.
    pub fn from_strings<S: AsRef<str>>(values: &[S]) -> Result<Categories> {
        let values: Vec<Option<&str>> = values.iter().map(|v| Some(v.as_ref())).collect();
        Categories::from_optional(&values)
    }

    /// `None` is a missing value; the other values' distinct ones, sorted, are the levels.
    pub fn from_optional<S: AsRef<str>>(values: &[Option<S>]) -> Result<Categories> {
        let mut levels: Vec<&str> = values.iter().flatten().map(AsRef::as_ref).collect();
        levels.sort_unstable();
        levels.dedup();
        let levels: Vec<String> = levels.into_iter().map(str::to_string).collect();
        Categories::with_levels(values, &levels)
    }

    /// Codes into `levels` (distinct names, at most 2^31 − 1 of them); a value outside them
    /// is missing, as an unseen level is at predict.
    pub fn with_levels<S: AsRef<str>>(
        values: &[Option<S>],
        levels: &[String],
    ) -> Result<Categories> {
        if levels.len() > i32::MAX as usize {
            return Err(Error::data(format!(
                "{} levels; a categorical column has at most 2^31 − 1",
                levels.len()
            )));
        }
        let index = level_index(levels)?;
        let codes = (values.iter())
            .map(|v| match v {
                Some(v) => index.get(v.as_ref()).map_or(-1, |&code| code),
                None => -1,
            })
            .collect();
        Ok(Categories {
            codes,
            levels: levels.to_vec(),
        })
    }

    /// Codes into `levels`, −1 for a missing value.
    pub fn codes(&self) -> &[i32] {
        &self.codes
    }

    /// The name of each code.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }
}

/// Each level's code, or an error naming a repeated level.
pub(crate) fn level_index(levels: &[String]) -> Result<HashMap<&str, i32>> {
    let mut index = HashMap::with_capacity(levels.len());
    for (code, level) in levels.iter().enumerate() {
        if index.insert(level.as_str(), code as i32).is_some() {
            return Err(Error::data(format!(
                "the level {level:?} is named twice; level names must be distinct"
            )));
        }
    }
    Ok(index)
}

/// Columns of a frame recoded to the model's codes: (column index, codes, the model's level
/// count).
#[derive(Debug, Default)]
pub(crate) struct Recoded {
    columns: Vec<(usize, Vec<i32>, u32)>,
}

impl Recoded {
    /// `frame` with the recoded columns in place of their own codes.
    pub(crate) fn frame<'s>(&'s self, frame: &Frame<'s>) -> Result<Frame<'s>> {
        if self.columns.is_empty() {
            return Ok(frame.clone());
        }
        let mut features = frame.features().to_vec();
        for (j, codes, n_levels) in &self.columns {
            features[*j].values = FeatureValues::Categorical {
                codes,
                n_levels: *n_levels,
            };
            // The codes are the model's now: the given names no longer describe them.
            features[*j].levels = None;
        }
        Frame::new(features)
    }
}

/// The categorical columns of `frame` whose level names differ from those `known` for their
/// name, recoded by name to the known codes (a level not known is missing, as Python's front end
/// treats an unseen level). A column given by codes alone is taken to be in the known codes; a
/// named column that `reads` but knows only by codes is refused, as its codes may mean other
/// levels than those it was trained on.
pub(crate) fn recode(
    frame: &Frame<'_>,
    known: &HashMap<&str, &[String]>,
    reads: impl Fn(&str) -> bool,
) -> Result<Recoded> {
    let mut recoded = Recoded::default();
    for (j, feature) in frame.features().iter().enumerate() {
        let (Some(given), FeatureValues::Categorical { codes, .. }) =
            (feature.levels, feature.values)
        else {
            continue;
        };
        let Some(&target) = known.get(feature.name.as_str()) else {
            if reads(&feature.name) {
                return Err(Error::value(
                    &feature.name,
                    "the column has level names but the model was trained on its codes \
                     alone; give the codes it was trained with (Feature::categorical)",
                ));
            }
            continue;
        };
        if given == target {
            continue;
        }
        let index = level_index(target)?;
        let to_target: Vec<i32> = (given.iter())
            .map(|level| index.get(level.as_str()).map_or(-1, |&code| code))
            .collect();
        // `Frame::new` checked the codes against the given levels.
        let codes = (codes.iter())
            .map(|&c| usize::try_from(c).map_or(-1, |c| to_target[c]))
            .collect();
        let n_levels = u32::try_from(target.len()).unwrap_or(u32::MAX);
        recoded.columns.push((j, codes, n_levels));
    }
    Ok(recoded)
}

/// The level names of `frame`'s named categorical columns, by column name.
pub(crate) fn named_levels<'r>(frame: &'r Frame<'_>) -> HashMap<&'r str, &'r [String]> {
    (frame.features().iter())
        .filter_map(|f| Some((f.name.as_str(), f.levels?)))
        .collect()
}
