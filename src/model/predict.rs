//! Prediction: rows in fixed blocks, processed in parallel; inside a block, tree after tree, so
//! that one tree's nodes stay in cache while it visits the block's rows.

use super::Model;
use crate::data::{BinnedMatrix, Frame};
use crate::error::{Error, Result};
use crate::loss::Objective;
use rayon::prelude::*;

const ROW_BLOCK: usize = 512;

impl Model {
    /// Link-scale scores, row-major n × `n_outputs`.
    pub fn predict(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        self.check_frame(frame)?;
        Ok(self.accumulate(frame.n_rows(), |tree, row| tree.predict_raw(frame, row)))
    }

    /// Response-scale predictions: probabilities for classification losses (for binary losses
    /// the probability of the positive class), the score otherwise.
    pub fn predict_response(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        let scores = self.predict(frame)?;
        Ok(self.response(scores))
    }

    /// Scores of data binned with this model's mappers (validation data during training).
    pub fn predict_binned(&self, matrix: &BinnedMatrix) -> Vec<f64> {
        self.accumulate(matrix.n_rows(), |tree, row| {
            tree.predict_bins(matrix.row(row))
        })
    }

    pub fn response(&self, mut scores: Vec<f64>) -> Vec<f64> {
        match self.loss.build(self.n_outputs.max(2)) {
            Ok(Objective::Scalar(loss)) => scores.iter_mut().for_each(|s| *s = loss.response(*s)),
            #[allow(unreachable_patterns)]
            _ => {}
        }
        scores
    }

    fn accumulate(
        &self,
        n_rows: usize,
        tree_value: impl Fn(&crate::tree::Tree, usize) -> f64 + Sync,
    ) -> Vec<f64> {
        let k = self.n_outputs;
        let mut out = vec![0.0; n_rows * k];
        out.par_chunks_mut(ROW_BLOCK * k)
            .enumerate()
            .for_each(|(block, out)| {
                let start = block * ROW_BLOCK;
                for row in out.chunks_mut(k) {
                    row.copy_from_slice(&self.bias);
                }
                for ((tree, &weight), &output) in
                    self.trees.iter().zip(&self.weights).zip(&self.tree_outputs)
                {
                    if weight == 0.0 {
                        continue;
                    }
                    for (i, row) in out.chunks_mut(k).enumerate() {
                        row[output as usize] += weight * tree_value(tree, start + i);
                    }
                }
            });
        out
    }

    fn check_frame(&self, frame: &Frame<'_>) -> Result<()> {
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
