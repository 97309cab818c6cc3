//! The synthetic rows the engine benchmarks grow trees on (benches/engine.rs,
//! benches/leafwise.rs), from one seeded generator so that every run times the same data.

use optboost::{Feature, Frame};

/// A 64-bit LCG: uniform in [0, 1).
pub fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// `p` feature columns of `n` rows (every fourth an integer 0..20, with ties and few distinct
/// values; the others uniform) and the target sin(6·x0) + x1·x3 + noise. Returns the
/// generator's state after them, for the caller's further draws.
pub fn regression_data(n: usize, p: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<f64>, u64) {
    let mut s = seed;
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|j| {
            (0..n)
                .map(|_| {
                    if j % 4 == 3 {
                        (lcg(&mut s) * 20.0).floor()
                    } else {
                        lcg(&mut s)
                    }
                })
                .collect()
        })
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (columns[0][i] * 6.0).sin() + columns[1][i] * columns[3][i] + lcg(&mut s))
        .collect();
    (columns, y, s)
}

/// The frame of `columns`, named x0, x1, …
pub fn numeric_frame(columns: &[Vec<f64>]) -> Frame<'_> {
    let features = (columns.iter().enumerate())
        .map(|(j, c)| Feature::numeric(format!("x{j}"), c))
        .collect();
    Frame::new(features).expect("a frame of equal, non-empty columns")
}
