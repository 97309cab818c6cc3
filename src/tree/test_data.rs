//! Seeded data for the unit tests of the tree engine.

use crate::data::{BinnedData, BinningParams, Feature, Frame};
use crate::tree::Node;

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

/// A leaf of value `value` reached by `count` training rows, for hand-built trees.
pub fn leaf(value: f64, count: u32) -> Node {
    Node {
        feature: 0,
        left: 0,
        right: 0,
        threshold: 0.0,
        bin: 0,
        default_left: false,
        category: None,
        value,
        gain: 0.0,
        count,
    }
}
