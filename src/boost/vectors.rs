//! Deterministic parallel loops over rows: element-wise maps need no care, and reductions sum
//! fixed-size chunks in chunk order, so results do not depend on the thread count.

use rayon::prelude::*;

const CHUNK: usize = 16_384;

/// Σ_i term(i) over 0..n, summed in fixed chunks.
pub fn par_sum(n: usize, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    let partials: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| (c * CHUNK..((c + 1) * CHUNK).min(n)).map(&term).sum::<f64>())
        .collect();
    partials.iter().sum()
}

/// out[i] = value(i) for every row, in parallel.
pub fn par_fill(out: &mut [f64], value: impl Fn(usize) -> f64 + Sync) {
    out.par_iter_mut().with_min_len(CHUNK).enumerate().for_each(|(i, o)| *o = value(i));
}

/// y ← y + a·x
pub fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    y.par_iter_mut().with_min_len(CHUNK).zip(x.par_iter()).for_each(|(y, &x)| *y += a * x);
}
