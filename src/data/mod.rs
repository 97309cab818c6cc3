//! Data flows one way: borrowed columns (`Frame`) → learned cut points (`BinMapper`) → `u8` bins
//! (`BinnedMatrix`). The mappers learned on the training data bin validation and prediction data.

mod binned;
mod binning;
mod bundles;
pub(crate) mod categories;
mod frame;
pub(crate) mod nonfinite;
mod sketch;
pub(crate) mod target_stats;
#[cfg(test)]
pub(crate) mod test_data;

pub use binned::{BinnedMatrix, FeatureBins};
pub use binning::{BinMapper, BinningParams};
pub(crate) use bundles::Bundles;
pub use categories::Categories;
#[cfg(feature = "python")]
pub(crate) use frame::check_csc;
pub use frame::{Feature, FeatureKind, FeatureValues, Frame, Strided, StridedIter};
pub use target_stats::{CatEncoding, CatEncodings, TargetStat};

use crate::collective::Collective;
use crate::error::{Error, Result};

/// Training features in binned form, with the mappers that produced them and each feature's
/// offset into a histogram laid out feature after feature.
#[derive(Debug, Clone)]
pub struct BinnedData {
    /// Binned by `mappers`, always (fields private): the histogram kernel relies on every bin of
    /// feature j being below `mappers[j].n_bins()`.
    matrix: BinnedMatrix,
    mappers: Vec<BinMapper>,
    names: Vec<String>,
    offsets: Vec<usize>,
    /// The same bins column-major, built by `keep_columns` for fits with `memory = "fast"` (the
    /// default) and for those whose histograms are built on a few features: partitioning a node
    /// or a histogram pass over one feature then reads one contiguous column instead of a cache
    /// line per row of the matrix. With `memory = "low"` a feature is read in place from the
    /// matrix: the copy is a byte per row and feature, a quarter of training's memory.
    columns: Option<Vec<u8>>,
    /// Whether some row of feature j is in its missing bin 0.
    has_missing: Vec<bool>,
    /// Sparse features sharing histogram columns (`None`: every feature has its own).
    bundles: Option<Bundles>,
}

impl BinnedData {
    /// Learns mappers on `frame` and bins it.
    pub fn learn(frame: &Frame<'_>, params: &BinningParams) -> Result<Self> {
        params.validate()?;
        let mappers: Vec<BinMapper> = {
            use rayon::prelude::*;
            frame
                .features()
                .par_iter()
                .map(|f| BinMapper::learn(f.values, params))
                .collect()
        };
        Self::with_mappers(frame, mappers, frame.names())
    }

    /// Learns mappers on the rows of every rank of a data-parallel fit (`frame` holds this
    /// rank's; `rows`: their global row ranges, in their order, or `None` for the rows after
    /// those of the ranks before) and bins `frame`: every rank gets the mappers one process
    /// learns on all the rows, and the same features marked as having missing values. No
    /// bundles: their layout would depend on each rank's rows.
    pub fn learn_over_ranks(
        frame: &Frame<'_>,
        params: &BinningParams,
        collective: &dyn Collective,
        rows: Option<&[std::ops::Range<usize>]>,
    ) -> Result<Self> {
        params.validate()?;
        let mappers = sketch::learn_over_ranks(frame, params, collective, rows)?;
        let mut data = Self::with_mappers(frame, mappers, frame.names())?;
        data.bundles = None;
        let mut missing: Vec<f64> = data
            .has_missing
            .iter()
            .map(|&m| f64::from(u8::from(m)))
            .collect();
        collective.max(&mut missing);
        data.has_missing = missing.iter().map(|&m| m > 0.0).collect();
        Ok(data)
    }

    /// Bins `frame` with mappers learned earlier (resuming from a checkpoint).
    pub fn with_mappers(
        frame: &Frame<'_>,
        mappers: Vec<BinMapper>,
        names: Vec<String>,
    ) -> Result<Self> {
        if let Some(j) = (0..mappers.len()).find(|&j| !mappers[j].bins_fit()) {
            return Err(Error::data(format!(
                "the bin mapper of feature {} is inconsistent (more than 256 bins, or a level \
                 binned outside its bin count)",
                names.get(j).map_or("?", String::as_str)
            )));
        }
        let matrix = BinnedMatrix::from_frame(frame, &mappers)?;
        let mut offsets = Vec::with_capacity(mappers.len() + 1);
        let mut total = 0;
        for m in &mappers {
            offsets.push(total);
            total += m.n_bins();
        }
        offsets.push(total);
        let summaries = matrix.bin_summaries();
        let has_missing = match matrix.n_rows() {
            0 => vec![false; mappers.len()],
            _ => summaries.iter().map(|s| s.missing > 0).collect(),
        };
        let bundles = Bundles::find(&mappers, &matrix, &summaries);
        Ok(BinnedData {
            matrix,
            mappers,
            names,
            offsets,
            columns: None,
            has_missing,
            bundles,
        })
    }

    /// The bins, row-major.
    pub fn matrix(&self) -> &BinnedMatrix {
        &self.matrix
    }
    pub(crate) fn bundles(&self) -> Option<&Bundles> {
        self.bundles.as_ref()
    }
    /// One mapper per feature, as learnt (or given).
    pub fn mappers(&self) -> &[BinMapper] {
        &self.mappers
    }
    /// The features' names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The bins of one feature for every row: its column when `keep_columns` built them, else
    /// read in place from the matrix. The same bins either way.
    pub fn column(&self, feature: usize) -> FeatureBins<'_> {
        match self.column_major(feature) {
            Some(column) => FeatureBins::column(column),
            None => self.matrix.feature(feature),
        }
    }

    /// The contiguous column of `feature`, if `keep_columns` built them.
    fn column_major(&self, feature: usize) -> Option<&[u8]> {
        let n = self.matrix.n_rows();
        (self.columns.as_deref()).map(|columns| &columns[feature * n..(feature + 1) * n])
    }

    /// The bins column-major (feature after feature, a byte per row), if `keep_columns` built
    /// them.
    pub(crate) fn kept_columns(&self) -> Option<&[u8]> {
        self.columns.as_deref()
    }

    /// Builds the column-major copy of the bins (once), for partitions (`memory = "fast"`, what
    /// training does by default) and histogram passes over a few features (see
    /// `histogram_kernel::column_pass_pays`). Without it, trees read every feature in place from the
    /// row-major matrix: the same trees, a byte per row and feature less memory, slower splits.
    pub fn keep_columns(&mut self) {
        if self.columns.is_none() {
            self.columns = Some(transpose(&self.matrix));
        }
    }

    /// Bins other data (validation, prediction) with the training mappers.
    pub fn bin(&self, frame: &Frame<'_>) -> Result<BinnedMatrix> {
        BinnedMatrix::from_frame(frame, &self.mappers)
    }

    /// Rows binned.
    pub fn n_rows(&self) -> usize {
        self.matrix.n_rows()
    }
    /// Features binned.
    pub fn n_features(&self) -> usize {
        self.mappers.len()
    }
    /// Where each feature's bins start in a histogram laid out feature after feature.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }
    /// Bins over all features: a histogram's length.
    pub fn total_bins(&self) -> usize {
        *self.offsets.last().unwrap_or(&0)
    }
    /// Whether some row has a missing value of `feature` (bin 0).
    pub fn has_missing(&self, feature: usize) -> bool {
        self.has_missing[feature]
    }
    /// True when feature `feature` has level bins, not cuts.
    pub fn is_categorical(&self, feature: usize) -> bool {
        matches!(self.mappers[feature], BinMapper::Categorical { .. })
    }
}

/// Column-major copy of a row-major matrix, one column per task.
fn transpose(matrix: &BinnedMatrix) -> Vec<u8> {
    use rayon::prelude::*;
    let (n, p) = (matrix.n_rows(), matrix.n_features());
    let mut columns = vec![0u8; n * p];
    if n > 0 {
        columns
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(j, column)| {
                for (r, out) in column.iter_mut().enumerate() {
                    *out = matrix.get(r, j);
                }
            });
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::test_data::binned;

    #[test]
    fn columns_read_in_place_or_kept_are_the_same_bins() {
        let n = 5_000;
        let columns: Vec<Vec<f64>> = (0..4)
            .map(|j| {
                (0..n)
                    .map(|i| match (j, i % 97) {
                        // Feature 1 misses a value at every 97th row, feature 3 at row 4 999 only.
                        (1, 0) => f64::NAN,
                        (3, _) if i == n - 1 => f64::NAN,
                        _ => ((i * (j + 3)) % 101) as f64,
                    })
                    .collect()
            })
            .collect();
        let mut data = binned(&columns);
        let in_place: Vec<Vec<u8>> = (0..4)
            .map(|j| data.column(j).range(0, n).collect())
            .collect();
        for (j, column) in in_place.iter().enumerate() {
            assert!(
                (0..n).all(|r| column[r] == data.matrix().get(r, j)),
                "feature {j}"
            );
        }
        let missing: Vec<bool> = (0..4).map(|j| data.has_missing(j)).collect();
        assert_eq!(missing, [false, true, false, true]);
        data.keep_columns();
        for (j, column) in in_place.iter().enumerate() {
            let kept = data.column(j);
            assert!(kept.is_contiguous());
            assert!(kept.range(0, n).eq(column.iter().copied()), "feature {j}");
        }
    }
}
