//! Row indices of every node, kept contiguous: a node owns `indices[start..end]`, and a split
//! reorders that range stably into left rows then right rows (so rows stay ascending inside a
//! node, which keeps the histogram kernel's reads of the matrix moving forward).
//!
//! The loop reads the split feature's bin of each row, from a column-major copy when one exists,
//! else in place from the row-major matrix (prefetched a few rows ahead as the histogram kernel
//! does; distances of 0 to 160 rows made no measurable difference at 1M rows), and is
//! branch-free (a row's direction is random, a branch would mispredict half the time).
//! Large ranges are cut into fixed-size chunks, partitioned in parallel into the scratch space and
//! copied back in parallel (every chunk's left rows, then every chunk's right rows, in chunk
//! order): the result does not depend on the thread count.

use super::bins::BinSet;
use super::histogram_kernel::{prefetch, PREFETCH_AHEAD};
use crate::data::FeatureBins;
use crate::rows::group_slots;
use rayon::prelude::*;

/// Rows per parallel chunk; ranges of at most this many rows are partitioned by one task.
const CHUNK_ROWS: usize = 8_192;

/// Stably moves the rows of `rows` that go left to its front; returns how many went left.
/// `scratch` is working space of at least `rows.len()` entries.
pub fn split_rows(
    rows: &mut [u32],
    scratch: &mut [u32],
    column: FeatureBins<'_>,
    left_bins: &BinSet,
) -> usize {
    let scratch = &mut scratch[..rows.len()];
    let goes_left = directions(left_bins);
    let counts: Vec<usize> = if rows.len() <= CHUNK_ROWS {
        vec![partition_chunk(rows, scratch, column, &goes_left)]
    } else {
        rows.par_chunks(CHUNK_ROWS)
            .zip(scratch.par_chunks_mut(CHUNK_ROWS))
            .map(|(chunk, out)| partition_chunk(chunk, out, column, &goes_left))
            .collect()
    };
    let n_left = counts.iter().sum();
    // Every chunk's left rows, then every chunk's right rows, in chunk order: each chunk's two
    // destinations are cut from `rows` in turn, and the copies run in parallel (one serial copy
    // of a million rows would leave the other threads idle).
    let (mut lefts, mut rights) = rows.split_at_mut(n_left);
    let mut moves = Vec::with_capacity(counts.len());
    for (sorted, &n) in scratch.chunks(CHUNK_ROWS).zip(&counts) {
        let (left, rest) = std::mem::take(&mut lefts).split_at_mut(n);
        lefts = rest;
        let (right, rest) = std::mem::take(&mut rights).split_at_mut(sorted.len() - n);
        rights = rest;
        moves.push(Move {
            left,
            right,
            sorted,
        });
    }
    if moves.len() == 1 {
        moves.into_iter().for_each(Move::apply);
    } else {
        moves.into_par_iter().for_each(Move::apply);
    }
    n_left
}

/// Sorts the row ids stably by group: row i belongs to group `group_of_bin[column[i]]`, and
/// `rows` gets group 0's rows, then group 1's, and so on, ascending inside each; returns each
/// group's row count. `scratch` is working space of at least `rows.len()` entries. For trees on
/// one feature, whose leaves are sets of that feature's bins: this instead of a partition per
/// node. Each chunk is sorted into the scratch space, then its groups are copied out, both in
/// parallel and the same with any number of threads.
pub fn rows_by_group(
    rows: &mut [u32],
    scratch: &mut [u32],
    column: FeatureBins<'_>,
    group_of_bin: &[u32],
    n_groups: usize,
) -> Vec<usize> {
    assert_eq!(rows.len(), column.n_rows());
    let scratch = &mut scratch[..rows.len()];
    let counts: Vec<Vec<usize>> = scratch
        .par_chunks_mut(CHUNK_ROWS)
        .enumerate()
        .map(|(k, sorted)| {
            let first = k * CHUNK_ROWS;
            let len = sorted.len();
            let chunk = || column.range(first, len);
            let mut counts = vec![0; n_groups];
            for b in chunk() {
                counts[group_of_bin[b as usize] as usize] += 1;
            }
            let mut next: Vec<usize> = (counts.iter())
                .scan(0, |start, &count| {
                    let this = *start;
                    *start += count;
                    Some(this)
                })
                .collect();
            for (i, b) in chunk().enumerate() {
                let group = group_of_bin[b as usize] as usize;
                sorted[next[group]] = (first + i) as u32;
                next[group] += 1;
            }
            counts
        })
        .collect();
    let mut slots = group_slots(rows, &counts);
    scratch
        .par_chunks(CHUNK_ROWS)
        .zip(slots.par_iter_mut())
        .for_each(|(mut sorted, chunk_slots)| {
            for slot in chunk_slots.iter_mut() {
                let (group_rows, tail) = sorted.split_at(slot.len());
                slot.copy_from_slice(group_rows);
                sorted = tail;
            }
        });
    (0..n_groups)
        .map(|group| counts.iter().map(|c| c[group]).sum())
        .collect()
}

/// 1 for the bins of `left_bins`, 0 for the others: the partition loop reads one byte a row
/// where the bit set costs a load and shifts (the loop is bound by its µops, not by memory).
fn directions(left_bins: &BinSet) -> [u8; 256] {
    let mut goes_left = [0u8; 256];
    for (bin, slot) in goes_left.iter_mut().enumerate() {
        *slot = u8::from(left_bins.contains(bin as u8));
    }
    goes_left
}

/// Writes the left rows of `rows` (those whose bin `goes_left`) to the front of `out` in their
/// order and the right rows to its back in reverse order; returns the left count. Both
/// candidate slots are written for every row (no branch): the slot not taken is free, or the
/// last one, which both sides share.
fn partition_chunk(
    rows: &[u32],
    out: &mut [u32],
    column: FeatureBins<'_>,
    goes_left: &[u8; 256],
) -> usize {
    let Some(last) = out.len().checked_sub(1) else {
        return 0;
    };
    assert!(rows.len() <= out.len());
    let mut n_left = 0;
    // Read in place, a node's rows are a cache line each: fetch them ahead so that the misses
    // overlap (a contiguous column shares lines between rows, and needs no hints).
    let strided = !column.is_contiguous();
    for (i, &r) in rows.iter().enumerate() {
        if strided {
            if let Some(ahead) = rows
                .get(i + PREFETCH_AHEAD)
                .and_then(|&a| column.address(a as usize))
            {
                prefetch(ahead);
            }
        }
        let left = usize::from(goes_left[usize::from(column.get(r as usize))]);
        // SAFETY: n_left ≤ i and i − n_left ≤ i, with i < rows.len() ≤ out.len() = last + 1,
        // so both slots are within `out` (two compares and branches a row in a µop-bound loop).
        unsafe {
            *out.get_unchecked_mut(n_left) = r;
            *out.get_unchecked_mut(last - (i - n_left)) = r;
        }
        n_left += left;
    }
    n_left
}

/// A chunk's rows as `partition_chunk` sorted them, and where its left and right rows go.
struct Move<'a> {
    left: &'a mut [u32],
    right: &'a mut [u32],
    sorted: &'a [u32],
}

impl Move<'_> {
    fn apply(self) {
        let (went_left, went_right) = self.sorted.split_at(self.left.len());
        self.left.copy_from_slice(went_left);
        for (to, &from) in self.right.iter_mut().zip(went_right.iter().rev()) {
            *to = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::BinnedMatrix;
    use crate::rng::uniform;

    /// A row-major matrix of `n_features` whose feature `feature` is `column` (the others hold
    /// other bytes, which a strided read must skip).
    fn matrix_with_column(column: &[u8], feature: usize, n_features: usize) -> BinnedMatrix {
        let bins = (column.iter())
            .flat_map(|&b| (0..n_features).map(move |j| if j == feature { b } else { !b }))
            .collect();
        BinnedMatrix::from_bins(bins, column.len(), n_features)
    }

    #[test]
    fn split_rows_is_a_stable_partition() {
        let mut state = 11;
        let n = 5 * CHUNK_ROWS;
        let column: Vec<u8> = (0..n)
            .map(|_| (uniform(&mut state) * 256.0) as u8)
            .collect();
        let mut left_bins = BinSet::default();
        for bin in 0..=255 {
            if uniform(&mut state) < 0.4 {
                left_bins.insert(bin);
            }
        }
        let matrix = matrix_with_column(&column, 2, 5);
        let mut scratch = vec![0; n];
        // Empty, one row, one chunk, one chunk and a row, several chunks and a short one.
        for len in [0, 1, 100, CHUNK_ROWS, CHUNK_ROWS + 1, 3 * CHUNK_ROWS + 17] {
            // Ascending rows with gaps, as a node's rows are.
            let rows: Vec<u32> = (0..n as u32)
                .filter(|_| uniform(&mut state) < 0.9)
                .take(len)
                .collect();
            assert_eq!(rows.len(), len);
            let (left, right): (Vec<u32>, Vec<u32>) = rows
                .iter()
                .partition(|&&r| left_bins.contains(column[r as usize]));
            // Read from the column, and in place from a row-major matrix holding it.
            for bins in [FeatureBins::column(&column), matrix.feature(2)] {
                let mut rows = rows.clone();
                let n_left = split_rows(&mut rows, &mut scratch, bins, &left_bins);
                assert_eq!(n_left, left.len(), "{len} rows");
                assert_eq!(rows, [left.clone(), right.clone()].concat(), "{len} rows");
            }
        }
    }

    #[test]
    fn rows_by_group_is_a_stable_sort_by_group() {
        let mut state = 5;
        let n = 3 * CHUNK_ROWS + 17;
        let column: Vec<u8> = (0..n).map(|_| (uniform(&mut state) * 40.0) as u8).collect();
        // Group 3 of 5 gets no bin, so it stays empty.
        let group_of_bin: Vec<u32> = (0..40)
            .map(|_| [0, 1, 2, 4][(uniform(&mut state) * 4.0) as usize])
            .collect();
        for len in [0, 1, 100, CHUNK_ROWS + 1, n] {
            let column = &column[..len];
            let mut expected: Vec<u32> = (0..len as u32).collect();
            expected.sort_by_key(|&i| group_of_bin[column[i as usize] as usize]);
            let mut scratch = vec![0; len];
            let matrix = matrix_with_column(column, 0, 3);
            for bins in [FeatureBins::column(column), matrix.feature(0)] {
                let mut rows = vec![u32::MAX; len];
                let counts = rows_by_group(&mut rows, &mut scratch, bins, &group_of_bin, 5);
                assert_eq!(rows, expected, "{len} rows");
                for (group, &count) in counts.iter().enumerate() {
                    let in_group = |&&b: &&u8| group_of_bin[b as usize] as usize == group;
                    assert_eq!(count, column.iter().filter(in_group).count(), "{len} rows");
                }
            }
        }
    }
}
