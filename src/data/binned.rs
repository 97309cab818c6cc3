//! The binned feature matrix, row-major `u8`: the histogram kernel reads all features of a row
//! from one cache line, and a row's bins are contiguous when a node's rows are gathered.

use super::binning::BinMapper;
use super::frame::{FeatureValues, Frame};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Rows per parallel binning task.
const ROW_BLOCK: usize = 16_384;
/// Rows binned feature after feature within a task: 512 rows of a few hundred float64 features
/// fit in a core's L2 cache.
const CACHE_ROWS: usize = 512;

/// Binned features, row-major: what the histogram kernel reads, one byte per row and feature.
#[derive(Debug, Clone)]
pub struct BinnedMatrix {
    bins: Vec<u8>,
    n_rows: usize,
    n_features: usize,
}

impl BinnedMatrix {
    /// Bins `frame` with mappers learned earlier (on this frame or on training data).
    pub fn from_frame(frame: &Frame<'_>, mappers: &[BinMapper]) -> Result<Self> {
        if frame.n_features() != mappers.len() {
            return Err(Error::data(format!(
                "expected {} feature columns, got {}",
                mappers.len(),
                frame.n_features()
            )));
        }
        for (feature, mapper) in frame.features().iter().zip(mappers) {
            mapper.check_compatible(&feature.name, &feature.values)?;
        }
        let (n_rows, n_features) = (frame.n_rows(), frame.n_features());
        let mut bins = vec![0u8; n_rows * n_features];
        advise_huge_pages(&mut bins);
        bins.par_chunks_mut(ROW_BLOCK * n_features)
            .enumerate()
            .for_each(|(block, out)| {
                let block_start = block * ROW_BLOCK;
                // Feature after feature over a few rows at a time: the rows of a row-major
                // input then stay in cache while each of their features is read.
                for (part, out) in out.chunks_mut(CACHE_ROWS * n_features).enumerate() {
                    let start = block_start + part * CACHE_ROWS;
                    let rows = out.len() / n_features;
                    for (j, (feature, mapper)) in frame.features().iter().zip(mappers).enumerate() {
                        let column = out[j..].iter_mut().step_by(n_features);
                        match (feature.values, mapper) {
                            (FeatureValues::Numeric(x), BinMapper::Numeric { cuts }) => {
                                for (out, &v) in column.zip(&x[start..start + rows]) {
                                    *out = BinMapper::bin_numeric(cuts, v);
                                }
                            }
                            (FeatureValues::Strided(x), BinMapper::Numeric { cuts }) => {
                                for (out, v) in column.zip(x.rows(start, rows)) {
                                    *out = BinMapper::bin_numeric(cuts, v);
                                }
                            }
                            (
                                FeatureValues::Categorical { codes, .. },
                                BinMapper::Categorical { level_bins, .. },
                            ) => {
                                for (out, &c) in column.zip(&codes[start..start + rows]) {
                                    *out = BinMapper::bin_code(level_bins, c);
                                }
                            }
                            _ => unreachable!("kinds checked above"),
                        }
                    }
                }
            });
        Ok(BinnedMatrix {
            bins,
            n_rows,
            n_features,
        })
    }

    /// A matrix of bins computed elsewhere (`bins`: `n_rows` rows of `n_features` bytes).
    pub(crate) fn from_bins(bins: Vec<u8>, n_rows: usize, n_features: usize) -> Self {
        debug_assert_eq!(bins.len(), n_rows * n_features);
        BinnedMatrix {
            bins,
            n_rows,
            n_features,
        }
    }

    /// Rows binned.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// Features per row.
    pub fn n_features(&self) -> usize {
        self.n_features
    }
    /// The bins of one row, feature by feature.
    #[inline]
    pub fn row(&self, row: usize) -> &[u8] {
        &self.bins[row * self.n_features..(row + 1) * self.n_features]
    }
    /// The bins of rows `start..end`, one row after another.
    #[inline]
    pub fn rows(&self, start: usize, end: usize) -> &[u8] {
        &self.bins[start * self.n_features..end * self.n_features]
    }
    /// The bin of one row's feature.
    #[inline]
    pub fn get(&self, row: usize, feature: usize) -> u8 {
        self.bins[row * self.n_features + feature]
    }

    /// The bins of `feature` for every row, read in place (one byte every `n_features`).
    pub fn feature(&self, feature: usize) -> FeatureBins<'_> {
        assert!(feature < self.n_features, "feature {feature} out of range");
        FeatureBins {
            bins: &self.bins[feature..],
            stride: self.n_features,
            n_rows: self.n_rows,
        }
    }

    /// What binning needs to know of each feature's bins: whether a row is missing (bin 0) and
    /// the most frequent bin. Features are counted in batches of `COUNT_BATCH` and rows in
    /// blocks, with a small table per batch and block: a table of every feature (2 kB each) per
    /// block would cost more than the counting for a few rows of thousands of features. Exact
    /// integer counts, so the same whatever the thread count.
    ///
    /// A table is bin-major (the batch's counters of one bin side by side): most rows of a
    /// feature fall in a few bins, and with a table per feature those few counters sat 2 kB
    /// apart, in the same two sets of the first-level cache, which every row then missed (on
    /// 50,000 rows × 120 one-hot columns this pass took a third of binning).
    pub(crate) fn bin_summaries(&self) -> Vec<BinSummary> {
        const COUNT_BATCH: usize = 64;
        let p = self.n_features;
        let mut summaries = vec![BinSummary::default(); p];
        summaries
            .par_chunks_mut(COUNT_BATCH)
            .enumerate()
            .for_each(|(batch, summaries)| {
                let (first, width) = (batch * COUNT_BATCH, summaries.len());
                // counts[bin * width + j]: rows of batch feature j in `bin`.
                let counts = (self.bins.par_chunks(ROW_BLOCK * p))
                    .map(|block| {
                        let mut counts = vec![0usize; 256 * width];
                        for row in block.chunks_exact(p) {
                            let bins = &row[first..first + width];
                            for (j, &bin) in bins.iter().enumerate() {
                                counts[bin as usize * width + j] += 1;
                            }
                        }
                        counts
                    })
                    .reduce_with(|mut total, block| {
                        total.iter_mut().zip(&block).for_each(|(t, b)| *t += b);
                        total
                    })
                    .unwrap_or_else(|| vec![0; 256 * width]);
                for (j, summary) in summaries.iter_mut().enumerate() {
                    let feature_counts: [usize; 256] =
                        std::array::from_fn(|b| counts[b * width + j]);
                    *summary = BinSummary::of(&feature_counts);
                }
            });
        summaries
    }
}

/// A feature's bin counts as binning uses them (`BinnedMatrix::bin_summaries`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BinSummary {
    /// Rows in the missing bin 0.
    pub missing: usize,
    /// The lowest of the most frequent bins, and its row count.
    pub mode: u8,
    pub mode_count: usize,
}

impl BinSummary {
    fn of(counts: &[usize; 256]) -> BinSummary {
        // `max_by_key` keeps the last maximum: from the highest bin down, that is the lowest.
        let mode = (0..256).rev().max_by_key(|&b| counts[b]).unwrap_or(0);
        BinSummary {
            missing: counts[0],
            mode: mode as u8,
            mode_count: counts[mode],
        }
    }
}

/// One feature's bins for every row: a contiguous column (`stride` 1) or a strided view of a
/// row-major matrix. Keeping only the row-major matrix saves a byte per row and feature; the
/// readers that go row by row over a feature (partitions, leaf placement) read it through this.
#[derive(Debug, Clone, Copy)]
pub struct FeatureBins<'a> {
    /// Row r's bin is `bins[r * stride]`.
    bins: &'a [u8],
    stride: usize,
    n_rows: usize,
}

impl<'a> FeatureBins<'a> {
    /// A contiguous column of bins, one per row.
    pub fn column(bins: &'a [u8]) -> Self {
        FeatureBins {
            bins,
            stride: 1,
            n_rows: bins.len(),
        }
    }

    /// Rows of the column.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// The bin of `row`.
    #[inline(always)]
    pub fn get(&self, row: usize) -> u8 {
        self.bins[row * self.stride]
    }

    /// Whether consecutive rows are adjacent bytes (a column of its own).
    pub fn is_contiguous(&self) -> bool {
        self.stride == 1
    }

    /// Where row `row`'s bin lives, for a prefetch hint; `None` past the last row.
    #[inline(always)]
    pub fn address(&self, row: usize) -> Option<&'a u8> {
        self.bins.get(row * self.stride)
    }

    /// The bins of rows `start..start + len`, in order.
    pub fn range(&self, start: usize, len: usize) -> impl Iterator<Item = u8> + 'a {
        let bins: &'a [u8] = if len == 0 {
            &[]
        } else {
            &self.bins[start * self.stride..(start + len - 1) * self.stride + 1]
        };
        bins.iter().step_by(self.stride).copied()
    }
}

/// Asks the kernel to back `bins` with 2 MB pages (before its pages are first written, when it
/// can): the histogram kernel and the partitions read rows scattered over the whole matrix, and
/// with 4 kB pages most of those reads miss the TLB as well as the cache.
fn advise_huge_pages(bins: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let start = bins.as_mut_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bins.len()) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            // SAFETY: [first, end) lies within `bins`; MADV_HUGEPAGE changes no contents.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bins;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::uniform;

    /// Rows × features of bins, more rows than a binning block so that counts are merged.
    fn random_matrix(n_rows: usize, n_features: usize) -> BinnedMatrix {
        let mut state = 3;
        let bins = (0..n_rows * n_features)
            .map(|_| (uniform(&mut state) * 256.0) as u8)
            .collect();
        BinnedMatrix::from_bins(bins, n_rows, n_features)
    }

    #[test]
    fn a_feature_read_in_place_is_its_column() {
        let matrix = random_matrix(1_000, 7);
        for feature in 0..7 {
            let bins = matrix.feature(feature);
            let column: Vec<u8> = (0..1_000).map(|r| matrix.get(r, feature)).collect();
            assert_eq!(bins.n_rows(), 1_000);
            assert!(!bins.is_contiguous());
            assert!((0..1_000).all(|r| bins.get(r) == column[r]));
            for (start, len) in [(0, 0), (0, 1_000), (999, 1), (123, 456), (1_000, 0)] {
                let range: Vec<u8> = bins.range(start, len).collect();
                assert_eq!(range, column[start..start + len], "{start}+{len}");
            }
            assert!(bins.address(999).is_some() && bins.address(1_000).is_none());
            let own = FeatureBins::column(&column);
            assert!(own.is_contiguous() && own.range(10, 5).eq(column[10..15].iter().copied()));
        }
    }

    #[test]
    fn bin_summaries_count_every_feature_over_all_rows() {
        // More features than a counting batch, rows over several binning blocks, and features
        // whose bins are few (so that modes tie and missing rows occur).
        let (n, p) = (2 * ROW_BLOCK + 77, 70);
        let mut state = 5;
        let bins = (0..n * p)
            .map(|k| (uniform(&mut state) * (1 + k % p % 4) as f64) as u8)
            .collect();
        let matrix = BinnedMatrix::from_bins(bins, n, p);
        let summaries = matrix.bin_summaries();
        assert_eq!(summaries.len(), p);
        for (feature, summary) in summaries.iter().enumerate() {
            let mut counts = [0usize; 256];
            (0..n).for_each(|r| counts[matrix.get(r, feature) as usize] += 1);
            let most = *counts.iter().max().unwrap();
            let mode = counts.iter().position(|&c| c == most).unwrap();
            let expected = BinSummary {
                missing: counts[0],
                mode: mode as u8,
                mode_count: most,
            };
            assert_eq!(summary, &expected, "feature {feature}");
        }
        assert!(random_matrix(0, 3)
            .bin_summaries()
            .iter()
            .all(|s| *s == BinSummary::default()));
    }
}
