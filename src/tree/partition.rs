//! Row indices of every node, kept contiguous: a node owns `indices[start..end]`, and a split
//! reorders that range stably into left rows then right rows (so rows stay ascending inside a
//! node, which keeps the histogram kernel's reads of the matrix moving forward).
//!
//! The loop reads the split feature's column (column-major bins: one byte per row, contiguous)
//! and is branch-free (a row's direction is random, a branch would mispredict half the time).
//! Large ranges are cut into
//! fixed-size chunks partitioned in parallel and then concatenated in chunk order: the result
//! does not depend on the thread count.

use super::split::BinSet;
use rayon::prelude::*;

/// Rows per parallel chunk; ranges of at most this many rows are partitioned by one task.
const CHUNK_ROWS: usize = 8_192;

/// Stably moves the rows of `rows` that go left to its front; returns how many went left.
/// `scratch` is working space of at least `rows.len()` entries.
pub fn split_rows(
    rows: &mut [u32],
    scratch: &mut [u32],
    column: &[u8],
    left_bins: &BinSet,
) -> usize {
    let scratch = &mut scratch[..rows.len()];
    if rows.len() <= CHUNK_ROWS {
        let n_left = partition_chunk(rows, scratch, column, left_bins);
        let n_right = rows.len() - n_left;
        rows[n_left..].copy_from_slice(&scratch[..n_right]);
        return n_left;
    }
    let counts: Vec<usize> = rows
        .par_chunks_mut(CHUNK_ROWS)
        .zip(scratch.par_chunks_mut(CHUNK_ROWS))
        .map(|(chunk, spill)| partition_chunk(chunk, spill, column, left_bins))
        .collect();
    // Chunk k's left rows sit at the front of chunk k; move them down behind the earlier chunks'
    // (never past their own start), then append every chunk's right rows from the scratch.
    let mut at = 0;
    for (k, &n_left) in counts.iter().enumerate() {
        let start = k * CHUNK_ROWS;
        rows.copy_within(start..start + n_left, at);
        at += n_left;
    }
    let n_left = at;
    for (k, &chunk_left) in counts.iter().enumerate() {
        let start = k * CHUNK_ROWS;
        let n_right = (rows.len() - start).min(CHUNK_ROWS) - chunk_left;
        rows[at..at + n_right].copy_from_slice(&scratch[start..start + n_right]);
        at += n_right;
    }
    n_left
}

/// Left rows to the front of `rows` (in place: a row is read before its slot can be written),
/// right rows to the front of `spill`, both in their original order. Returns the left count.
fn partition_chunk(
    rows: &mut [u32],
    spill: &mut [u32],
    column: &[u8],
    left_bins: &BinSet,
) -> usize {
    let (mut n_left, mut n_right) = (0, 0);
    for i in 0..rows.len() {
        let r = rows[i];
        let left = left_bins.contains(column[r as usize]) as usize;
        rows[n_left] = r;
        spill[n_right] = r;
        n_left += left;
        n_right += 1 - left;
    }
    n_left
}
