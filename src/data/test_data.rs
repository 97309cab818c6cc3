//! Seeded binned data for the unit tests of the engine.

use super::{BinnedData, BinningParams, Feature, Frame};

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
