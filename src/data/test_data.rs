//! Seeded binned data for the unit tests of the engine.

use super::{BinnedData, BinningParams, Feature, Frame};
use crate::rng::uniform;

/// `n_features` columns of `n_rows` values uniform on [0, 1), drawn column after column from
/// `state`.
pub(crate) fn uniform_columns(state: &mut u64, n_rows: usize, n_features: usize) -> Vec<Vec<f64>> {
    (0..n_features)
        .map(|_| (0..n_rows).map(|_| uniform(state)).collect())
        .collect()
}

/// Numeric columns x0, x1, … binned with the default parameters.
pub(crate) fn binned(columns: &[Vec<f64>]) -> BinnedData {
    let frame = Frame::new(
        columns
            .iter()
            .enumerate()
            .map(|(j, c)| Feature::numeric(format!("x{j}"), c))
            .collect(),
    )
    .unwrap();
    BinnedData::learn(&frame, &BinningParams::default()).unwrap()
}
