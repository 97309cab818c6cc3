//! Data flows one way: borrowed columns (`Frame`) → learned cut points (`BinMapper`) → `u8` bins
//! (`BinnedMatrix`). The mappers learned on the training data bin validation and prediction data.

mod binned;
mod binning;
mod bundles;
mod frame;
pub(crate) mod nonfinite;
mod sketch;
#[cfg(test)]
pub(crate) mod test_data;

pub use binned::BinnedMatrix;
pub use binning::{BinMapper, BinningParams};
pub(crate) use bundles::Bundles;
pub use frame::{Feature, FeatureKind, FeatureValues, Frame, Strided, StridedIter};

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
    /// The same bins column-major: a split reads one feature of every row of a node, and one
    /// contiguous column (n bytes, cache-resident) is far cheaper to read than a byte from every
    /// row of the row-major matrix (which the histogram kernel wants).
    columns: Vec<u8>,
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
    /// rank's) and bins `frame`: every rank gets the same mappers, and the same features marked
    /// as having missing values. No bundles: their layout would depend on each rank's rows.
    pub fn learn_over_ranks(
        frame: &Frame<'_>,
        params: &BinningParams,
        collective: &dyn Collective,
    ) -> Result<Self> {
        params.validate()?;
        let mappers = sketch::learn_over_ranks(frame, params, collective)?;
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
        let columns = transpose(&matrix);
        let has_missing = if matrix.n_rows() == 0 {
            vec![false; mappers.len()]
        } else {
            use rayon::prelude::*;
            columns
                .par_chunks(matrix.n_rows())
                .map(|column| column.contains(&0))
                .collect()
        };
        let bundles = Bundles::find(&mappers, &columns, matrix.n_rows());
        Ok(BinnedData {
            matrix,
            mappers,
            names,
            offsets,
            columns,
            has_missing,
            bundles,
        })
    }

    pub fn matrix(&self) -> &BinnedMatrix {
        &self.matrix
    }
    pub(crate) fn bundles(&self) -> Option<&Bundles> {
        self.bundles.as_ref()
    }
    pub fn mappers(&self) -> &[BinMapper] {
        &self.mappers
    }
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The bins of one feature for every row.
    pub fn column(&self, feature: usize) -> &[u8] {
        let n = self.matrix.n_rows();
        &self.columns[feature * n..(feature + 1) * n]
    }

    /// Bins other data (validation, prediction) with the training mappers.
    pub fn bin(&self, frame: &Frame<'_>) -> Result<BinnedMatrix> {
        BinnedMatrix::from_frame(frame, &self.mappers)
    }

    pub fn n_rows(&self) -> usize {
        self.matrix.n_rows()
    }
    pub fn n_features(&self) -> usize {
        self.mappers.len()
    }
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }
    pub fn total_bins(&self) -> usize {
        *self.offsets.last().unwrap_or(&0)
    }
    /// Whether some row has a missing value of `feature` (bin 0).
    pub fn has_missing(&self, feature: usize) -> bool {
        self.has_missing[feature]
    }
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
