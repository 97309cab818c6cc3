//! Level names of categorical columns: kept by the model (`FeatureSpec::levels`), checked on
//! load, and matched by name at predict, so that a column whose levels are coded otherwise than
//! in training (another order, more or fewer levels) gives the same predictions. A level the
//! model never saw is missing, as Python's front end treats it.

use super::{validate::model_error, FeatureSpec, Model};
use crate::data::categories::{level_index, named_levels, recode, Recoded};
use crate::data::{BinMapper, Frame};
use crate::error::{Error, Result};
use std::collections::HashMap;

/// The longest level name a model holds, in bytes: the bound a model file puts on each name.
pub const MAX_LEVEL_NAME_BYTES: usize = 4096;

impl Model {
    /// The level names of each data column the model reads with names.
    fn levels_by_source(&self) -> HashMap<&str, &[String]> {
        (self.features.iter().zip(self.feature_sources()))
            .filter_map(|(f, source)| Some((source, f.levels.as_deref()?)))
            .collect()
    }

    /// The columns of `frame` whose level names differ from the model's, recoded by name to
    /// the model's codes (a level the model lacks is missing). A column given by codes alone is
    /// taken to be in the model's codes; a named column the model knows only by codes is
    /// refused, as its codes may mean other levels than in training.
    pub(crate) fn by_level_names(&self, frame: &Frame<'_>) -> Result<Recoded> {
        let sources = self.feature_sources();
        recode(frame, &self.levels_by_source(), |name| {
            sources.contains(&name)
        })
    }

    /// Gives each feature the level names of the column of `frame` it reads, if that column
    /// has names. Training calls it on the frame it was given.
    pub(crate) fn take_levels(&mut self, frame: &Frame<'_>) -> Result<()> {
        let named = named_levels(frame);
        let sources: Vec<String> = self
            .feature_sources()
            .iter()
            .map(|s| s.to_string())
            .collect();
        for (feature, source) in self.features.iter_mut().zip(sources) {
            let Some(levels) = named.get(source.as_str()) else {
                continue;
            };
            if let Some(long) = levels.iter().find(|l| l.len() > MAX_LEVEL_NAME_BYTES) {
                return Err(Error::value(
                    &source,
                    format!(
                        "a level name of {} bytes (at most {MAX_LEVEL_NAME_BYTES}): {:?}…",
                        long.len(),
                        long.chars().take(40).collect::<String>()
                    ),
                ));
            }
            feature.levels = Some(levels.to_vec());
        }
        Ok(())
    }

    pub(super) fn has_levels(&self) -> bool {
        self.features.iter().any(|f| f.levels.is_some())
    }
}

/// Level names as training stores them: one per level of the feature's categorical mapper or
/// target statistic, distinct, each at most `MAX_LEVEL_NAME_BYTES`, and the same for every
/// feature reading the same column.
pub(super) fn validate(model: &Model) -> Result<()> {
    let mut by_source: HashMap<&str, &[String]> = HashMap::new();
    for (j, (feature, source)) in model
        .features
        .iter()
        .zip(model.feature_sources())
        .enumerate()
    {
        let Some(levels) = &feature.levels else {
            continue;
        };
        let fail = |msg: String| model_error(format!("feature {j}: `{}` {msg}", feature.name));
        let count =
            level_count(feature).ok_or_else(|| fail("has level names but is numeric".into()))?;
        if levels.len() != count {
            return Err(fail(format!(
                "has {} level names for {count} levels",
                levels.len()
            )));
        }
        if let Some(long) = levels.iter().position(|l| l.len() > MAX_LEVEL_NAME_BYTES) {
            return Err(fail(format!(
                "level {long}'s name has {} bytes; at most {MAX_LEVEL_NAME_BYTES}",
                levels[long].len()
            )));
        }
        level_index(levels).map_err(|e| fail(e.to_string()))?;
        if *by_source.entry(source).or_insert(levels) != &levels[..] {
            return Err(fail(format!(
                "names other levels of column `{source}` than another feature reading it"
            )));
        }
    }
    Ok(())
}

/// The levels a feature reads: its categorical mapper's, or its target statistic's.
fn level_count(feature: &FeatureSpec) -> Option<usize> {
    match (&feature.mapper, &feature.target_stats) {
        (_, Some(stat)) => Some(stat.levels.len()),
        (BinMapper::Categorical { level_bins, .. }, None) => Some(level_bins.len()),
        (BinMapper::Numeric { .. }, None) => None,
    }
}
