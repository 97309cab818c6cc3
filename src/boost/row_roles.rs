//! What each row of a fit's data is for: it trains, it validates, or it is left out (a row of
//! weight 0, which would otherwise still shape the bin thresholds). A front end that holds a
//! fraction of the rows out for validation gives one role per row instead of two copies of the
//! data: both sides read the features in place at their rows, so that holding rows out copies no
//! floats; y, weights and offsets (row-major, several values a row for several outputs) and the
//! int32 categorical codes (a small fraction of the data) are taken row by row.

use super::{Offsets, TrainData};
use crate::data::{Feature, FeatureValues, Frame};
use crate::error::{Error, Result};

/// The rows of one side, with the values taken at them.
#[derive(Debug, Default)]
struct Side {
    rows: Vec<usize>,
    y: Vec<f64>,
    weights: Option<Vec<f64>>,
    offset: Option<Vec<f64>>,
    /// The codes of the side's rows, one vector per categorical feature in feature order.
    codes: Vec<Vec<i32>>,
}

/// A fit's rows dealt out by role (`split`), owning what it copies; `sides` lends the two sides
/// as the booster takes them.
#[derive(Debug)]
pub struct RowSplit {
    train: Side,
    valid: Side,
}

impl RowSplit {
    /// The role of a row that trains.
    pub const TRAINS: u8 = 0;
    /// The role of a validation row.
    pub const VALIDATES: u8 = 1;
    /// The role of a row that takes no part in the fit.
    pub const LEFT_OUT: u8 = 2;

    /// Deals the rows of `data` (and of its `offset`, if any) out by `roles`, one per row.
    pub fn split(roles: &[u8], data: &TrainData<'_>, offset: Option<&[f64]>) -> Result<Self> {
        let n = data.frame.n_rows();
        if roles.len() != n {
            return Err(Error::data(format!(
                "row_roles has {} entries for the {n} rows of the features",
                roles.len()
            )));
        }
        let (mut train, mut valid) = (Side::default(), Side::default());
        for (row, &role) in roles.iter().enumerate() {
            match role {
                Self::TRAINS => train.rows.push(row),
                Self::VALIDATES => valid.rows.push(row),
                Self::LEFT_OUT => {}
                other => {
                    return Err(Error::data(format!(
                        "row_roles must be {} (train), {} (validate) or {} (leave out); row \
                         {row} has {other}",
                        Self::TRAINS,
                        Self::VALIDATES,
                        Self::LEFT_OUT
                    )))
                }
            }
        }
        for side in [&mut train, &mut valid] {
            side.y = take("the target", data.y, &side.rows, n)?;
            side.weights = (data.weights)
                .map(|w| take("the weights", w, &side.rows, n))
                .transpose()?;
            side.offset = offset
                .map(|o| take("the offset", o, &side.rows, n))
                .transpose()?;
            side.codes = (data.frame.features().iter())
                .filter_map(|f| match f.values {
                    FeatureValues::Categorical { codes, .. } => {
                        Some(side.rows.iter().map(|&r| codes[r]).collect())
                    }
                    _ => None,
                })
                .collect();
        }
        Ok(RowSplit { train, valid })
    }

    /// The training side, the validation side (None without validation rows) and their
    /// offsets: `frame` (the one `split` read) at each side's rows.
    pub fn sides<'s>(
        &'s self,
        frame: &Frame<'s>,
    ) -> Result<(TrainData<'s>, Option<TrainData<'s>>, Offsets<'s>)> {
        let data = |side: &'s Side| -> Result<TrainData<'s>> {
            Ok(TrainData {
                frame: at_rows(frame, side)?,
                y: &side.y,
                weights: side.weights.as_deref(),
            })
        };
        let has_valid = !self.valid.rows.is_empty();
        let offsets = Offsets {
            train: self.train.offset.as_deref(),
            valid: self.valid.offset.as_deref().filter(|_| has_valid),
        };
        let valid = has_valid.then(|| data(&self.valid)).transpose()?;
        Ok((data(&self.train)?, valid, offsets))
    }
}

/// `values` (n × width, row-major) at `rows`.
fn take(name: &str, values: &[f64], rows: &[usize], n: usize) -> Result<Vec<f64>> {
    if !values.len().is_multiple_of(n.max(1)) || (n == 0) != values.is_empty() {
        return Err(Error::data(format!(
            "{name} has {} values for the {n} rows of row_roles",
            values.len()
        )));
    }
    let width = values.len() / n.max(1);
    Ok(rows
        .iter()
        .flat_map(|&r| &values[r * width..(r + 1) * width])
        .copied()
        .collect())
}

/// `frame` at the side's rows: numeric columns read in place, categorical ones from the side's
/// copied codes.
fn at_rows<'s>(frame: &Frame<'s>, side: &'s Side) -> Result<Frame<'s>> {
    let mut codes = side.codes.iter();
    let features = (frame.features().iter())
        .map(|feature| {
            let values = match feature.values {
                FeatureValues::Categorical { n_levels, .. } => FeatureValues::Categorical {
                    codes: codes.next().map_or(&[][..], Vec::as_slice),
                    n_levels,
                },
                values => {
                    let column = values.numeric().and_then(|c| c.select(&side.rows));
                    FeatureValues::Strided(column.ok_or_else(|| {
                        Error::data(format!(
                            "a selected row is not a row of column `{}`",
                            feature.name
                        ))
                    })?)
                }
            };
            Ok(Feature {
                name: feature.name.clone(),
                values,
                levels: feature.levels,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Frame::new(features)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_read_their_rows_of_every_column_and_value() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        let codes = [0, 1, 0, 1, -1];
        let frame = Frame::new(vec![
            Feature::numeric("x", &x),
            Feature::categorical("c", &codes, 2),
        ])
        .unwrap();
        let y = [10.0, 11.0, 12.0, 13.0, 14.0];
        let w = [1.0, 2.0, 3.0, 4.0, 5.0];
        let offset = [0.1, 0.2, 0.3, 0.4, 0.5];
        let data = TrainData {
            frame: frame.clone(),
            y: &y,
            weights: Some(&w),
        };
        let (t, v, l) = (RowSplit::TRAINS, RowSplit::VALIDATES, RowSplit::LEFT_OUT);
        let roles = [t, v, l, t, v];
        let split = RowSplit::split(&roles, &data, Some(&offset)).unwrap();
        let (train, valid, offsets) = split.sides(&frame).unwrap();
        let valid = valid.unwrap();
        assert_eq!(train.y, &[10.0, 13.0]);
        assert_eq!(valid.y, &[11.0, 14.0]);
        assert_eq!(train.weights.unwrap(), &[1.0, 4.0]);
        assert_eq!(offsets.valid.unwrap(), &[0.2, 0.5]);
        let numeric = train.frame.features()[0].values.numeric().unwrap();
        assert_eq!((numeric.get(0), numeric.get(1)), (0.0, 3.0));
        match valid.frame.features()[1].values {
            FeatureValues::Categorical { codes, .. } => assert_eq!(codes, &[1, -1]),
            _ => panic!("categorical column expected"),
        }
    }

    #[test]
    fn bad_roles_and_lengths_are_named() {
        let x = [0.0, 1.0];
        let frame = Frame::new(vec![Feature::numeric("x", &x)]).unwrap();
        let data = TrainData {
            frame,
            y: &[1.0, 2.0],
            weights: None,
        };
        let err = RowSplit::split(&[0, 7], &data, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("row 1 has 7"), "{err}");
        let err = RowSplit::split(&[0], &data, None).unwrap_err().to_string();
        assert!(err.contains("1 entries for the 2 rows"), "{err}");
        let err = RowSplit::split(&[0, 1], &data, Some(&[0.0; 3]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("the offset has 3 values"), "{err}");
    }
}
