//! Row indices of every node, kept contiguous: a node owns `indices[start..end]`, and a split
//! reorders that range stably into left rows then right rows.

use super::split::BinSet;
use crate::data::BinnedMatrix;
use rayon::prelude::*;

const PARALLEL_ROWS: usize = 65_536;

/// Stably moves the rows of `range` that go left to its front; returns how many went left.
pub fn split_rows(
    rows: &mut [u32],
    matrix: &BinnedMatrix,
    feature: usize,
    left_bins: &BinSet,
) -> usize {
    let goes_left = |r: u32| left_bins.contains(matrix.get(r as usize, feature));
    if rows.len() < PARALLEL_ROWS {
        let mut right = Vec::with_capacity(rows.len() / 2);
        let mut n_left = 0;
        for i in 0..rows.len() {
            let r = rows[i];
            if goes_left(r) {
                rows[n_left] = r;
                n_left += 1;
            } else {
                right.push(r);
            }
        }
        rows[n_left..].copy_from_slice(&right);
        return n_left;
    }
    let pieces: Vec<(Vec<u32>, Vec<u32>)> = rows
        .par_chunks(PARALLEL_ROWS / 4)
        .map(|chunk| chunk.iter().partition(|&&r| goes_left(r)))
        .collect();
    let n_left: usize = pieces.iter().map(|(l, _)| l.len()).sum();
    let mut at = 0;
    for (left, _) in &pieces {
        rows[at..at + left.len()].copy_from_slice(left);
        at += left.len();
    }
    for (_, right) in &pieces {
        rows[at..at + right.len()].copy_from_slice(right);
        at += right.len();
    }
    n_left
}
