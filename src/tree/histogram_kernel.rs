//! The histogram kernel, the hot loop of training: per-bin sums of one packed statistic a row
//! over a node's rows, for the bins of the built features (tree/histogram.rs turns them into
//! `BinStats`). What it does, and why:
//! - Each row adds one packed statistic to one bin per feature: `[vt, 1]` (16 bytes, one SIMD
//!   add) when every fitting weight is the same (unweighted least squares: Σ v = v₀ · count), else
//!   `[vt, v, 1, 0]`, or `[vt, v]` when the split search can do without bin counts (see
//!   `RowStats::without_counts`): half the bytes, and 12–15% less time at large nodes. Sums stay
//!   in f64: the count is exact below 2⁵³ and subtraction stays exact to rounding. Quantized
//!   statistics (`quantized_gradients`) add one i64 a row, or an i64 and a count (`Packed`).
//! - A node's rows are scattered over the matrix; the loop prefetches the bin row and statistics
//!   of a row a few iterations ahead, so the cache misses of many rows overlap.
//! - Rows are cut into a number of blocks that depends only on the row count, never on the thread
//!   count, and block histograms are summed in block order: the same sums with 1 or N threads.
//!   Blocks are few and large (each has its own buffer to clear and merge).
//! - A pass may build only some features (RGBM's candidate features, `Features::Only`): the
//!   others cost no additions, no clearing and no merging, and their bins are left as they were.
//!   Those bins are stale, and nothing reads them: the split search only looks at candidate
//!   features, and subtraction takes the same feature list. A few features are read from the
//!   column-major copy of the bins instead of the rows when the fit built one (the booster does
//!   when its passes are of this kind: `column_pass_pays`). Every bin still sums its rows in the
//!   same order, so a bin's sum does not depend on which other features are built, nor how.

use crate::data::{BinnedData, BinnedMatrix, Bundles};
use crate::threads;
use rayon::prelude::*;

/// Rows per block below which a histogram is built by one task.
const MIN_BLOCK_ROWS: usize = 8_192;
/// At most this many blocks (and parallel tasks) per histogram.
const MAX_BLOCKS: usize = 8;
/// Row-bins (rows × columns) of a one-block histogram from which its columns are shared out
/// among awake workers (`threads::workers_awake`): a row-bin is about a nanosecond's work.
const MIN_SHARED_ROW_BINS: usize = 4_096;
/// Rows between a prefetch and the use of the prefetched row.
pub(super) const PREFETCH_AHEAD: usize = 12;
/// Histograms of at most this many features, and at most a quarter of all (RGBM's small
/// candidate sets), are built column by column. Measured with stumps to depth 6 at 1M rows × 28
/// features: columns take 0.6× the time of row-major passes for 1 feature, 0.85× for 7, 1.2×
/// for 14; on adult (26k rows × 14), 7 features by column cost more than all 14 by row.
const COLUMN_PASS_MAX_FEATURES: usize = 8;

/// Whether a histogram of `n_selected` of `n_features` features costs less built column by
/// column (from `BinnedData::keep_columns`' copy) than from the rows.
pub(crate) fn column_pass_pays(n_selected: usize, n_features: usize) -> bool {
    n_selected <= COLUMN_PASS_MAX_FEATURES && 4 * n_selected <= n_features
}

/// The features whose bins a histogram pass builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Features<'a> {
    All,
    /// These features only, ascending.
    Only(&'a [usize]),
}

impl Features<'_> {
    /// The (first bin, bin count) of every built feature in a histogram of `data`.
    pub(super) fn ranges(&self, data: &BinnedData) -> Vec<(usize, usize)> {
        let offsets = data.offsets();
        let range = |f: usize| (offsets[f], offsets[f + 1] - offsets[f]);
        match *self {
            Features::All => vec![(0, data.total_bins())],
            Features::Only(features) => features.iter().map(|&f| range(f)).collect(),
        }
    }

    /// How many bins a pass over these features builds.
    pub(super) fn n_bins(&self, data: &BinnedData) -> usize {
        self.ranges(data).iter().map(|&(_, len)| len).sum()
    }
}

/// A bin's sums as the kernel adds them: a few f64 lanes, or quantized statistics packed in one
/// i64 (`quantize.rs`).
pub(super) trait Packed: Copy + Send + Sync {
    const ZERO: Self;
    fn add(&mut self, other: &Self);
    /// Runs `fill` on `len` zeroed sums in this thread's reusable buffer.
    fn with_zeroed(len: usize, fill: impl FnOnce(&mut [Self]));
}

impl<const K: usize> Packed for [f64; K] {
    const ZERO: Self = [0.0; K];
    #[inline(always)]
    fn add(&mut self, other: &Self) {
        for k in 0..K {
            self[k] += other[k];
        }
    }
    fn with_zeroed(len: usize, fill: impl FnOnce(&mut [Self])) {
        with_buffer(&PACKED, len * K, 0.0, |buffer| {
            fill(buffer.as_chunks_mut::<K>().0)
        });
    }
}

impl Packed for i64 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn add(&mut self, other: &Self) {
        *self = self.wrapping_add(*other);
    }
    fn with_zeroed(len: usize, fill: impl FnOnce(&mut [Self])) {
        with_buffer(&PACKED_QUANTIZED, len, 0, fill);
    }
}

/// Quantized sums and a row count.
impl Packed for [i64; 2] {
    const ZERO: Self = [0; 2];
    /// One 16-byte add, as the f64 pairs get: two scalar adds to memory cost more µops than
    /// the halved bytes save.
    #[inline(always)]
    fn add(&mut self, other: &Self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of every x86_64 CPU; the loads and stores are unaligned ones of
        // the 16 bytes of each array.
        unsafe {
            use std::arch::x86_64::{__m128i, _mm_add_epi64, _mm_loadu_si128, _mm_storeu_si128};
            let a = _mm_loadu_si128(self.as_ptr().cast::<__m128i>());
            let b = _mm_loadu_si128(other.as_ptr().cast::<__m128i>());
            _mm_storeu_si128(self.as_mut_ptr().cast::<__m128i>(), _mm_add_epi64(a, b));
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self[0] = self[0].wrapping_add(other[0]);
            self[1] = self[1].wrapping_add(other[1]);
        }
    }
    fn with_zeroed(len: usize, fill: impl FnOnce(&mut [Self])) {
        with_buffer(&PACKED_QUANTIZED, len * 2, 0, |buffer| {
            fill(buffer.as_chunks_mut::<2>().0)
        });
    }
}

// The block buffers are reused from call to call: fresh ones of this size come from mmap, and
// their page faults and unmapping cost more than filling them. The thread's buffer is still
// borrowed when this thread, while waiting for the blocks of a build, has picked up a job of
// another booster sharing the pool (`threads::shared_pool`) that builds a histogram too: that
// build gets a fresh buffer (a buffer is zeroed before use either way: the same sums).
thread_local! {
    static PACKED: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
    static PACKED_QUANTIZED: std::cell::RefCell<Vec<i64>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn with_buffer<T: Copy + 'static>(
    key: &'static std::thread::LocalKey<std::cell::RefCell<Vec<T>>>,
    len: usize,
    zero: T,
    fill: impl FnOnce(&mut [T]),
) {
    let zeroed = |buffer: &mut Vec<T>| {
        buffer.clear();
        buffer.resize(len, zero);
        fill(buffer)
    };
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => zeroed(&mut buffer),
        Err(_) => zeroed(&mut Vec::new()),
    });
}

/// Packed per-bin sums of `stat(row)` over `rows`, blocks merged in block order, for the bins of
/// `features` one after another (all bins, for `Features::All`).
pub(super) fn build_packed<P: Packed>(
    data: &BinnedData,
    rows: &[u32],
    features: Features<'_>,
    stat: impl Fn(usize) -> P + Sync,
    prefetch_stat: impl Fn(usize) + Sync,
    consume: impl FnOnce(&[P]),
) {
    let n_blocks = (rows.len() / MIN_BLOCK_ROWS).clamp(1, MAX_BLOCKS);
    // A pass over all features reads the bundled columns where sparse features share them.
    let bundles = match features {
        Features::All => data.bundles(),
        Features::Only(_) => None,
    };
    let matrix = bundles.map_or(data.matrix(), Bundles::matrix);
    // Where each built feature's (or column's) bins start in the packed buffer, and (for a
    // subset) where its bin sits in a matrix row.
    let (offsets, selected, total_bins): (Vec<u32>, Option<Vec<u32>>, usize) = match features {
        Features::All if bundles.is_some() => {
            let bundles = bundles.expect("just checked");
            (
                bundles.column_offsets().to_vec(),
                None,
                bundles.total_bins(),
            )
        }
        Features::All => (
            data.offsets()[..data.n_features()]
                .iter()
                .map(|&o| o as u32)
                .collect(),
            None,
            data.total_bins(),
        ),
        Features::Only(list) => {
            let mut offsets = Vec::with_capacity(list.len());
            let mut total = 0;
            for &f in list {
                offsets.push(total as u32);
                total += data.mappers()[f].n_bins();
            }
            (
                offsets,
                Some(list.iter().map(|&f| f as u32).collect()),
                total,
            )
        }
    };
    let selected = selected.as_deref();
    if total_bins == 0 {
        return consume(&[]);
    }
    P::with_zeroed(total_bins * n_blocks, |partials| {
        let block_rows = rows.len().div_ceil(n_blocks);
        let shared_by_columns = n_blocks == 1
            && selected.is_none()
            && offsets.len() > 1
            && threads::workers_awake()
            && rows.len() * offsets.len() >= MIN_SHARED_ROW_BINS;
        if shared_by_columns {
            // Each half of the columns into its own bins: the same additions in the same order.
            let mid = offsets.len() / 2;
            let (low, high) = partials.split_at_mut(offsets[mid] as usize);
            let high_offsets: Vec<u32> = offsets[mid..].iter().map(|o| o - offsets[mid]).collect();
            let high_offsets = &high_offsets;
            let accumulate_columns = |hist: &mut [P], offsets: &[u32], first_column: usize| {
                accumulate_fastest(
                    hist,
                    offsets,
                    first_column,
                    None,
                    data,
                    matrix,
                    rows,
                    &stat,
                    &prefetch_stat,
                )
            };
            rayon::join(
                || accumulate_columns(low, &offsets[..mid], 0),
                || accumulate_columns(high, high_offsets, mid),
            );
        } else if n_blocks == 1 {
            accumulate_fastest(
                partials,
                &offsets,
                0,
                selected,
                data,
                matrix,
                rows,
                &stat,
                &prefetch_stat,
            );
        } else {
            partials
                .par_chunks_mut(total_bins)
                .zip(rows.par_chunks(block_rows))
                .for_each(|(hist, block)| {
                    accumulate_fastest(
                        hist,
                        &offsets,
                        0,
                        selected,
                        data,
                        matrix,
                        block,
                        &stat,
                        &prefetch_stat,
                    );
                });
        }
        let (first, rest) = partials.split_at_mut(total_bins);
        for partial in rest.chunks_exact(total_bins) {
            for (a, b) in first.iter_mut().zip(partial) {
                a.add(b);
            }
        }
        match bundles {
            Some(bundles) => {
                let mut expanded = vec![P::ZERO; data.total_bins()];
                bundles.expand(first, data.offsets(), &mut expanded, (P::ZERO, P::add));
                consume(&expanded);
            }
            None => consume(first),
        }
    });
}

/// `accumulate` compiled for AVX when the CPU has it: a 4-wide statistic is then one 32-byte add
/// per bin instead of two 16-byte ones (the same IEEE additions, so the same sums).
fn accumulate_fastest<P: Packed>(
    hist: &mut [P],
    offsets: &[u32],
    first_column: usize,
    selected: Option<&[u32]>,
    data: &BinnedData,
    matrix: &BinnedMatrix,
    rows: &[u32],
    stat: &impl Fn(usize) -> P,
    prefetch_stat: &impl Fn(usize),
) {
    #[cfg(target_arch = "x86_64")]
    if size_of::<P>() == 32 && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU supports AVX, checked just above.
        unsafe {
            accumulate_avx(
                hist,
                offsets,
                first_column,
                selected,
                data,
                matrix,
                rows,
                stat,
                prefetch_stat,
            )
        };
        return;
    }
    accumulate(
        hist,
        offsets,
        first_column,
        selected,
        data,
        matrix,
        rows,
        stat,
        prefetch_stat,
    );
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn accumulate_avx<P: Packed>(
    hist: &mut [P],
    offsets: &[u32],
    first_column: usize,
    selected: Option<&[u32]>,
    data: &BinnedData,
    matrix: &BinnedMatrix,
    rows: &[u32],
    stat: &impl Fn(usize) -> P,
    prefetch_stat: &impl Fn(usize),
) {
    accumulate(
        hist,
        offsets,
        first_column,
        selected,
        data,
        matrix,
        rows,
        stat,
        prefetch_stat,
    );
}

/// Adds `stat(r)` for every row r of `rows` to the bins of the built columns in `hist`: column
/// j's bins start at `offsets[j]`; without `selected`, the columns are the matrix's from
/// `first_column` on, one for each offset.
#[inline(always)]
fn accumulate<P: Packed>(
    hist: &mut [P],
    offsets: &[u32],
    first_column: usize,
    selected: Option<&[u32]>,
    data: &BinnedData,
    matrix: &BinnedMatrix,
    rows: &[u32],
    stat: &impl Fn(usize) -> P,
    prefetch_stat: &impl Fn(usize),
) {
    let add = |h: &mut P, s: &P| h.add(s);
    // Separate loops rather than one with a per-row branch: the loop over all features stays
    // the tight zip it was.
    let by_column = selected
        .filter(|selected| column_pass_pays(selected.len(), matrix.n_features()))
        .and_then(|selected| Some((selected, data.kept_columns()?)));
    match (selected, by_column) {
        // A few features: one pass per feature over its column (one byte per row) costs less
        // than reading every row of the matrix whole.
        (_, Some((selected, columns))) => {
            let n = data.n_rows();
            for (&offset, &feature) in offsets.iter().zip(selected) {
                let feature = feature as usize;
                let column = &columns[feature * n..(feature + 1) * n];
                for (i, &r) in rows.iter().enumerate() {
                    if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
                        prefetch(&column[ahead as usize]);
                        prefetch_stat(ahead as usize);
                    }
                    let r = r as usize;
                    add(&mut hist[offset as usize + column[r] as usize], &stat(r));
                }
            }
        }
        (None, _) => for_rows(matrix, rows, prefetch_stat, |r, row| {
            let s = stat(r);
            for (&offset, &bin) in offsets.iter().zip(&row[first_column..]) {
                // SAFETY: `offset` is column j's offset in `hist` and `bin` < its bin count (a
                // `BinnedData` is always binned by its checked mappers, and its bundles' bins are
                // below their columns' counts), so the index is below the offset of the column
                // after j, at most the length of `hist` (`build_packed` hands a half of the
                // columns the bins from its first column's to its last column's end). The bounds
                // check would cost ~5% of the kernel.
                add(
                    unsafe { hist.get_unchecked_mut(offset as usize + bin as usize) },
                    &s,
                );
            }
        }),
        (Some(selected), None) => for_rows(matrix, rows, prefetch_stat, |r, row| {
            let s = stat(r);
            for (&offset, &feature) in offsets.iter().zip(selected) {
                add(
                    &mut hist[offset as usize + row[feature as usize] as usize],
                    &s,
                );
            }
        }),
    }
}

/// Calls `visit(r, bins of row r)` for every row of `rows`, in order, with prefetching.
#[inline(always)]
fn for_rows(
    matrix: &BinnedMatrix,
    rows: &[u32],
    prefetch_stat: &impl Fn(usize),
    mut visit: impl FnMut(usize, &[u8]),
) {
    // Rows are ascending and distinct, so these are consecutive (a block of the root): walk
    // the matrix in order, where the hardware prefetcher does better than the hints.
    if let (Some(&first), Some(&last)) = (rows.first(), rows.last()) {
        if last.checked_sub(first).map(|d| d as usize + 1) == Some(rows.len()) {
            let p = matrix.n_features();
            let bins = &matrix.rows(first as usize, last as usize + 1);
            for (r, row) in (first as usize..).zip(bins.chunks_exact(p.max(1))) {
                visit(r, row);
            }
            return;
        }
    }
    for (i, &r) in rows.iter().enumerate() {
        if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
            // A row may straddle two cache lines: fetch both ends.
            let row = matrix.row(ahead as usize);
            prefetch(row.as_ptr());
            prefetch(row.as_ptr_range().end.wrapping_sub(1));
            prefetch_stat(ahead as usize);
        }
        visit(r as usize, matrix.row(r as usize));
    }
}

/// A hint to load the cache line at `p`; it never faults and changes no state.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it is defined for any address, valid or not.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
