//! Seeded uniform numbers for the examples' synthetic data (SplitMix64, the generator the
//! booster uses for its own draws), so every example builds its data the same reproducible way.

use optboost::{Feature, Frame};

/// An endless stream of uniform numbers in [0, 1) from `seed`.
pub fn uniform_stream(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The frame of `columns`, named x0, x1, …
pub fn numeric_frame(columns: &[Vec<f64>]) -> Frame<'_> {
    let features = (columns.iter().enumerate())
        .map(|(j, c)| Feature::numeric(format!("x{j}"), c))
        .collect();
    Frame::new(features).expect("a frame of equal, non-empty columns")
}
