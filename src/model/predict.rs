//! Prediction: rows in fixed blocks, processed in parallel; inside a block, tree after tree, so
//! that one tree's nodes stay in cache while it visits the block's rows. Trees are first turned
//! into their compact prediction form (`flat.rs`).

use super::flat::{Predictor, RawColumns, BLOCK_ROWS};
use super::Model;
use crate::data::{BinMapper, BinnedMatrix, Frame};
use crate::error::{Error, Result};
use crate::loss::Objective;
use rayon::prelude::*;

impl Model {
    /// Link-scale scores, row-major n × `n_outputs`.
    pub fn predict(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        self.check_frame(frame)?;
        let columns = RawColumns::new(frame);
        Ok(self.accumulate(
            frame.n_rows(),
            |start, rows| columns.block(start, rows),
            |tree, block, start, weight, out| tree.add_raw(frame, block, start, weight, out),
        ))
    }

    /// Response-scale predictions: probabilities for classification losses (for binary losses
    /// the probability of the positive class), the score otherwise.
    pub fn predict_response(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        let scores = self.predict(frame)?;
        self.response(scores)
    }

    /// Scores of data binned with this model's mappers (validation data during training).
    pub fn predict_binned(&self, matrix: &BinnedMatrix) -> Vec<f64> {
        self.accumulate(
            matrix.n_rows(),
            |_, _| (),
            |tree, (), start, weight, out| tree.add_binned(matrix, start, weight, out),
        )
    }

    /// Scores (row-major n × `n_outputs`) on the response scale. Fails, rather than returning
    /// the scores unchanged, for a loss that does not build (a parameter out of range, or a
    /// multiclass loss with fewer than 2 outputs): loaded models were checked for that already.
    pub fn response(&self, mut scores: Vec<f64>) -> Result<Vec<f64>> {
        match self.objective()? {
            Objective::Scalar(loss) => scores
                .par_iter_mut()
                .with_min_len(BLOCK_ROWS)
                .for_each(|s| *s = loss.response(*s)),
            // Class probabilities: the softmax of each row's K scores.
            Objective::Multiclass(loss) => scores.par_chunks_mut(self.n_outputs).for_each(|row| {
                let f = row.to_vec();
                loss.response(&f, row);
            }),
        }
        Ok(scores)
    }

    /// Scores of `n_rows` rows, in blocks of `BLOCK_ROWS`: `block(start, rows)` prepares what
    /// the trees read from rows `start..start + rows`, and `add(tree, block, start, weight, out)`
    /// adds `weight · tree` for those rows to `out`.
    fn accumulate<B>(
        &self,
        n_rows: usize,
        block: impl Fn(usize, usize) -> B + Sync,
        add: impl Fn(&Predictor<'_>, &B, usize, f64, &mut [f64]) + Sync,
    ) -> Vec<f64> {
        let k = self.n_outputs;
        let numeric: Vec<bool> = self
            .features
            .iter()
            .map(|f| matches!(f.mapper, BinMapper::Numeric { .. }))
            .collect();
        let trees: Vec<(Predictor<'_>, f64, usize)> = self
            .trees
            .iter()
            .zip(&self.weights)
            .zip(&self.tree_outputs)
            .filter(|((_, &weight), _)| weight != 0.0)
            .map(|((tree, &weight), &output)| {
                (Predictor::new(tree, &numeric), weight, output as usize)
            })
            .collect();
        let mut out = vec![0.0; n_rows * k];
        out.par_chunks_mut(BLOCK_ROWS * k)
            .enumerate()
            .for_each(|(b, out)| {
                let start = b * BLOCK_ROWS;
                let rows = out.len() / k;
                let block = block(start, rows);
                // One contiguous run of scores per output, so that a tree adds to consecutive rows.
                let mut scores: Vec<f64> = self
                    .bias
                    .iter()
                    .flat_map(|&b| std::iter::repeat_n(b, rows))
                    .collect();
                for (tree, weight, output) in &trees {
                    add(
                        tree,
                        &block,
                        start,
                        *weight,
                        &mut scores[output * rows..(output + 1) * rows],
                    );
                }
                for (i, row) in out.chunks_mut(k).enumerate() {
                    for (j, o) in row.iter_mut().enumerate() {
                        *o = scores[j * rows + i];
                    }
                }
            });
        out
    }

    pub(super) fn check_frame(&self, frame: &Frame<'_>) -> Result<()> {
        if frame.n_features() != self.features.len() {
            return Err(Error::data(format!(
                "the model expects {} feature columns ({}), got {}",
                self.features.len(),
                self.features
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                frame.n_features()
            )));
        }
        for (spec, feature) in self.features.iter().zip(frame.features()) {
            spec.mapper.check_compatible(&spec.name, &feature.values)?;
        }
        Ok(())
    }
}
