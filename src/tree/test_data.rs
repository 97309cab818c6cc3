//! Seeded data for the unit tests of the tree engine.

use crate::data::{BinnedData, BinningParams, Feature, Frame};

/// A uniform draw in [0, 1) from a 64-bit LCG.
pub fn uniform(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// Numeric columns x0, x1, … binned with the default parameters.
pub fn binned(columns: &[Vec<f64>]) -> BinnedData {
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
