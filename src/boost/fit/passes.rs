//! The row-order passes behind the fused fits: a tree's value on every training row, found from
//! its leaf row lists in fixed chunks (the same sums with any number of threads), combined in
//! the same pass with the cosine sums and the update of a column of scores.

use crate::data::BinnedData;
use crate::tree::{GrownTree, ROW_CHUNK};
use rayon::iter::Either;
use rayon::prelude::*;

/// `fitted_values_into`, returning in the same pass the sums (Σ t b, Σ t², Σ b²) over the
/// rows for t_i = `target(i)` and b the fitted values, which give cos(t, b).
pub(super) fn fitted_values_and_cosine_sums(
    grown: &GrownTree,
    data: &BinnedData,
    out: &mut [f64],
    target: impl Fn(usize) -> f64 + Sync,
) -> (f64, f64, f64) {
    let per_chunk = fold_rows(
        grown,
        data,
        (out, None),
        (1, 0),
        |sums, i, (o, _), value| {
            *o = value;
            add_cosine_terms(sums, target(i), value);
        },
    );
    add_in_order(per_chunk)
}

/// Adds `weight` × (`scale` × the tree's value) to column `column` of the row-major
/// n × `n_columns` matrix `out` and, with `also` = (second matrix, coefficient), coefficient ×
/// the value to the same column of the second matrix (VAGBM's f and h), with no vector of fitted
/// values; returns the cosine sums of `fitted_values_and_cosine_sums` for the tree's own values.
pub(super) fn add_to_column_with_cosine_sums(
    grown: &GrownTree,
    data: &BinnedData,
    (out, also): (&mut [f64], Option<(&mut [f64], f64)>),
    (n_columns, column): (usize, usize),
    (weight, scale): (f64, f64),
    target: impl Fn(usize) -> f64 + Sync,
) -> (f64, f64, f64) {
    let (second, also_coef) = also.map_or((None, 0.0), |(second, coef)| (Some(second), coef));
    let per_chunk = fold_rows(
        grown,
        data,
        (out, second),
        (n_columns, column),
        |sums, i, (o, second), value| {
            *o += weight * (scale * value);
            if let Some(second) = second {
                *second += also_coef * value;
            }
            add_cosine_terms(sums, target(i), value);
        },
    );
    add_in_order(per_chunk)
}

/// Subtracts the tree's values from column `column` of the row-major n × `n_columns` matrix
/// `target`, which holds the target t the tree was fitted to, and adds `coef` × the values to
/// the same column of `h` (when given), with no vector of fitted values; returns the cosine sums of
/// `fitted_values_and_cosine_sums` for t and the tree's values (AGBM's carry c − b2(X) and
/// momentum sequence h ← h + coef · b2(X)).
pub(super) fn subtract_and_add_with_cosine_sums(
    grown: &GrownTree,
    data: &BinnedData,
    (target, h): (&mut [f64], Option<&mut [f64]>),
    (n_columns, column): (usize, usize),
    coef: f64,
) -> (f64, f64, f64) {
    let per_chunk = fold_rows(
        grown,
        data,
        (target, h),
        (n_columns, column),
        |sums, _, (t, h), value| {
            add_cosine_terms(sums, *t, value);
            *t -= value;
            if let Some(h) = h {
                *h += coef * value;
            }
        },
    );
    add_in_order(per_chunk)
}

/// Calls `visit(acc, i, (entry, second), value)` for every row i in order, with `entry` the
/// entry i·`stride` + `offset` of `out`, `second` the same entry of `second_out` (when given)
/// and `value` the tree's value on row i. Rows are taken in fixed chunks, in parallel, each with
/// its own accumulator; returns the accumulators in chunk order (the same with any number of
/// threads).
///
/// Row order rather than leaf by leaf: a leaf's rows are scattered over `out` and the
/// caller's vectors, and one cache miss per row and vector cost more than finding each
/// leaf's rows inside a chunk (its rows are ascending).
fn fold_rows<A: Default + Send>(
    grown: &GrownTree,
    data: &BinnedData,
    (out, second_out): (&mut [f64], Option<&mut [f64]>),
    (stride, offset): (usize, usize),
    visit: impl Fn(&mut A, usize, (&mut f64, Option<&mut f64>), f64) + Sync,
) -> Vec<A> {
    assert!(offset < stride);
    let n_rows = out.len() / stride;
    assert_eq!(grown.n_rows(), n_rows, "a tree's leaves cover every row");
    let chunk = ROW_CHUNK * stride;
    let n_chunks = out.len().div_ceil(chunk);
    let seconds = match second_out {
        Some(second) => {
            assert_eq!(second.len(), out.len());
            Either::Left(second.par_chunks_mut(chunk).map(Some))
        }
        None => Either::Right(rayon::iter::repeat_n((), n_chunks).map(|()| None)),
    };
    let finder = grown.leaf_finder(data);
    let leaf_values = grown.leaf_values();
    fn entries(
        rows: &mut [f64],
        (stride, offset): (usize, usize),
    ) -> impl Iterator<Item = &mut f64> {
        rows.chunks_exact_mut(stride)
            .map(move |row| &mut row[offset])
    }
    (out.par_chunks_mut(chunk).zip(seconds))
        .enumerate()
        .map_init(Vec::new, |values: &mut Vec<f64>, (k, (rows, second))| {
            let first = k * ROW_CHUNK;
            values.clear();
            values.resize(rows.len() / stride, 0.0);
            grown.fill_chunk(&finder, k, values, |leaf| leaf_values[leaf]);
            let mut acc = A::default();
            let values = values.iter().enumerate();
            match second {
                Some(second) => {
                    for ((entry, second), (j, &value)) in entries(rows, (stride, offset))
                        .zip(entries(second, (stride, offset)))
                        .zip(values)
                    {
                        visit(&mut acc, first + j, (entry, Some(second)), value);
                    }
                }
                None => {
                    for (entry, (j, &value)) in entries(rows, (stride, offset)).zip(values) {
                        visit(&mut acc, first + j, (entry, None), value);
                    }
                }
            }
            acc
        })
        .collect()
}

/// `leaf_index` and the cosine sums of `fitted_values_and_cosine_sums` (the same numbers),
/// in one pass and without writing fitted values: for a step rule that re-solves the leaves
/// and only then needs the values.
pub(super) fn leaf_index_and_cosine_sums(
    grown: &GrownTree,
    data: &BinnedData,
    target: impl Fn(usize) -> f64 + Sync,
) -> (Vec<u32>, (f64, f64, f64)) {
    let finder = grown.leaf_finder(data);
    let leaf_values = grown.leaf_values();
    let mut index = vec![0; grown.n_rows()];
    let per_chunk = index
        .par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(k, out)| {
            grown.fill_chunk(&finder, k, out, |leaf| leaf as u32);
            let first = k * ROW_CHUNK;
            let mut sums = (0.0, 0.0, 0.0);
            for (j, &leaf) in out.iter().enumerate() {
                add_cosine_terms(&mut sums, target(first + j), leaf_values[leaf as usize]);
            }
            sums
        })
        .collect();
    (index, add_in_order(per_chunk))
}

#[inline]
fn add_cosine_terms(sums: &mut (f64, f64, f64), t: f64, b: f64) {
    sums.0 += t * b;
    sums.1 += t * t;
    sums.2 += b * b;
}

fn add_in_order(sums: Vec<(f64, f64, f64)>) -> (f64, f64, f64) {
    sums.into_iter()
        .fold((0.0, 0.0, 0.0), |(a, b, c), (x, y, z)| {
            (a + x, b + y, c + z)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_data::{binned, uniform_columns};
    use crate::rng::uniform;
    use crate::tree::{grow, Candidates, CategoricalParams, FitStats, Growth, TreeParams};

    /// The fused passes against the tree walked row by row, on enough rows for several chunks
    /// and leaves scattered over all of them; for a tree on several features (leaves found from
    /// the row lists) and on one (from the bins).
    #[test]
    fn fused_passes_match_the_walked_tree() {
        let mut state = 12;
        let n = 30_001;
        let x = uniform_columns(&mut state, n, 3);
        let t: Vec<f64> = (0..n)
            .map(|i| (9.0 * x[0][i]).sin() + x[1][i] * x[2][i] + uniform(&mut state))
            .collect();
        let data = binned(&x);
        let params = TreeParams {
            max_depth: 8,
            max_leaves: 40,
            growth: Growth::Leafwise,
            min_samples_leaf: Some(1),
            l2_leaf: 0.0,
            categorical: CategoricalParams::unguarded(),
            ..TreeParams::default()
        };
        let stats = FitStats { vt: &t, v: &[] };
        for candidates in [
            Candidates::All,
            Candidates::Features(vec![true, false, false]),
        ] {
            let grown = grow(&data, stats, &params, &candidates);
            check_passes(&data, &grown, &t);
        }
    }

    fn check_passes(data: &BinnedData, grown: &GrownTree, t: &[f64]) {
        let n = t.len();
        let walked: Vec<f64> = (0..n)
            .map(|i| grown.tree.predict_bins(data.matrix().row(i)))
            .collect();
        // Column 2 of an n × 3 matrix gets 0.5 b; the other columns are left alone.
        let mut out: Vec<f64> = (0..3 * n).map(|k| k as f64).collect();
        let target = |i: usize| t[i] - 0.25;
        let (tb, tt, bb) = add_to_column_with_cosine_sums(
            grown,
            data,
            (&mut out, None),
            (3, 2),
            (0.5, 1.0),
            target,
        );
        for i in 0..n {
            assert_eq!(out[3 * i], (3 * i) as f64);
            assert_eq!(out[3 * i + 1], (3 * i + 1) as f64);
            assert_eq!(
                out[3 * i + 2],
                (3 * i + 2) as f64 + 0.5 * walked[i],
                "row {i}"
            );
        }
        let expected = (0..n).fold((0.0, 0.0, 0.0), |(a, b, c), i| {
            let (ti, bi) = (target(i), walked[i]);
            (a + ti * bi, b + ti * ti, c + bi * bi)
        });
        for (got, want) in [(tb, expected.0), (tt, expected.1), (bb, expected.2)] {
            assert!((got - want).abs() <= 1e-12 * want.abs(), "{got} vs {want}");
        }
        // The leaf line search's pass: the leaf index, and the sums of the fitted-values pass
        // bit for bit (the cos reported must not depend on which pass ran).
        let mut fitted = vec![0.0; n];
        let sums = fitted_values_and_cosine_sums(grown, data, &mut fitted, target);
        assert_eq!(fitted, walked);
        let (index, sums_too) = leaf_index_and_cosine_sums(grown, data, target);
        assert_eq!(index, grown.leaf_index(data));
        assert_eq!(
            [sums_too.0, sums_too.1, sums_too.2].map(f64::to_bits),
            [sums.0, sums.1, sums.2].map(f64::to_bits)
        );
        assert_eq!(sums.0, tb, "the same sums as the column update's");
        // AGBM's pass: column 1 of an n × 2 target loses b, the same column of h gains 0.5 b,
        // with the sums of the fitted-values pass for that target.
        let mut carry: Vec<f64> = (0..2 * n)
            .map(|k| if k % 2 == 1 { target(k / 2) } else { -1.0 })
            .collect();
        let mut h: Vec<f64> = (0..2 * n).map(|k| k as f64).collect();
        let sums_carry =
            subtract_and_add_with_cosine_sums(grown, data, (&mut carry, Some(&mut h)), (2, 1), 0.5);
        for i in 0..n {
            assert_eq!((carry[2 * i], h[2 * i]), (-1.0, (2 * i) as f64));
            assert_eq!(carry[2 * i + 1], target(i) - walked[i], "row {i}");
            assert_eq!(
                h[2 * i + 1],
                (2 * i + 1) as f64 + 0.5 * walked[i],
                "row {i}"
            );
        }
        assert_eq!(
            [sums_carry.0, sums_carry.1, sums_carry.2].map(f64::to_bits),
            [sums.0, sums.1, sums.2].map(f64::to_bits)
        );
        // VAGBM's pass: 0.5 b to column 0 of f, 4 b to the same column of h.
        let mut f: Vec<f64> = (0..2 * n).map(|k| k as f64).collect();
        let mut h: Vec<f64> = (0..2 * n).map(|k| -(k as f64)).collect();
        let sums_both = add_to_column_with_cosine_sums(
            grown,
            data,
            (&mut f, Some((&mut h, 4.0))),
            (2, 0),
            (0.5, 1.0),
            target,
        );
        for i in 0..n {
            assert_eq!(
                (f[2 * i + 1], h[2 * i + 1]),
                ((2 * i + 1) as f64, -((2 * i + 1) as f64))
            );
            assert_eq!(f[2 * i], (2 * i) as f64 + 0.5 * walked[i], "row {i}");
            assert_eq!(h[2 * i], -((2 * i) as f64) + 4.0 * walked[i], "row {i}");
        }
        assert_eq!(
            [sums_both.0, sums_both.1, sums_both.2].map(f64::to_bits),
            [sums.0, sums.1, sums.2].map(f64::to_bits)
        );
    }
}
