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

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    pub fn n_features(&self) -> usize {
        self.n_features
    }
    #[inline]
    pub fn row(&self, row: usize) -> &[u8] {
        &self.bins[row * self.n_features..(row + 1) * self.n_features]
    }
    /// The bins of rows `start..end`, one row after another.
    #[inline]
    pub fn rows(&self, start: usize, end: usize) -> &[u8] {
        &self.bins[start * self.n_features..end * self.n_features]
    }
    #[inline]
    pub fn get(&self, row: usize, feature: usize) -> u8 {
        self.bins[row * self.n_features + feature]
    }
}
