//! Deterministic parallel loops over rows: element-wise maps need no care, and reductions sum
//! fixed-size chunks in chunk order, so results do not depend on the thread count.

use rayon::prelude::*;
use std::ops::Range;

pub const CHUNK: usize = 16_384;

/// Σ_i term(i) over 0..n, summed in fixed chunks.
pub fn par_sum(n: usize, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    par_sum_ranges(n, |rows| rows.map(&term).sum::<f64>())
}

/// Σ over the fixed row chunks of `par_sum` of `chunk_sum(chunk's rows)`, in chunk order: with
/// `chunk_sum` adding its rows in order, the sum of `par_sum`.
pub fn par_sum_ranges(n: usize, chunk_sum: impl Fn(Range<usize>) -> f64 + Sync) -> f64 {
    let partials: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| chunk_sum(c * CHUNK..((c + 1) * CHUNK).min(n)))
        .collect();
    partials.iter().sum()
}

/// Σ over the fixed row chunks of `par_sum` of `chunk_sum(first row, a rows, b rows)`, where the
/// row-major n × k matrices `a` and `b` (`b` may be empty) are cut into those chunks.
pub fn par_sum_chunks_mut(
    k: usize,
    a: &mut [f64],
    b: &mut [f64],
    chunk_sum: impl Fn(usize, &mut [f64], &mut [f64]) -> f64 + Sync,
) -> f64 {
    let partials: Vec<f64> = if b.is_empty() {
        a.par_chunks_mut(CHUNK * k)
            .enumerate()
            .map(|(c, a)| chunk_sum(c * CHUNK, a, &mut []))
            .collect()
    } else {
        a.par_chunks_mut(CHUNK * k)
            .zip(b.par_chunks_mut(CHUNK * k))
            .enumerate()
            .map(|(c, (a, b))| chunk_sum(c * CHUNK, a, b))
            .collect()
    };
    partials.iter().sum()
}

/// `fill(rows, their entries of out)` over the fixed row chunks of `par_sum`, `out` being
/// row-major n × k, in parallel: a kernel that takes a chunk at a time (a `Loss` batch method)
/// is called once per chunk rather than once per row through `dyn`.
pub fn par_fill_rows(k: usize, out: &mut [f64], fill: impl Fn(Range<usize>, &mut [f64]) + Sync) {
    out.par_chunks_mut(CHUNK * k)
        .enumerate()
        .for_each(|(c, out)| fill(c * CHUNK..c * CHUNK + out.len() / k, out));
}

/// out[i] = value(i) for every row, in parallel.
pub fn par_fill(out: &mut [f64], value: impl Fn(usize) -> f64 + Sync) {
    out.par_iter_mut()
        .with_min_len(CHUNK)
        .enumerate()
        .for_each(|(i, o)| *o = value(i));
}

/// y ← y + a·x
pub fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    y.par_iter_mut()
        .with_min_len(CHUNK)
        .zip(x.par_iter())
        .for_each(|(y, &x)| *y += a * x);
}

/// Column `k` of the row-major matrix `x` (K = x.len() / values.len() columns) += coef · values.
pub fn add_column(x: &mut [f64], coef: f64, values: &[f64], k: usize) {
    if x.is_empty() {
        // No rows (a rank of a data-parallel fit without validation rows).
        return;
    }
    let n_outputs = x.len() / values.len().max(1);
    if n_outputs == 1 {
        axpy(x, coef, values);
    } else {
        x.par_chunks_mut(n_outputs)
            .with_min_len(CHUNK / n_outputs)
            .zip(values.par_iter())
            .for_each(|(row, &v)| row[k] += coef * v);
    }
}
