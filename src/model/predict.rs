//! Prediction: rows in fixed blocks, processed in parallel; inside a block, tree after tree, so
//! that one tree's nodes stay in cache while it visits the block's rows. Trees are first turned
//! into their compact prediction form (`tree/flat.rs`).

use super::{validate, value_buffer, Model};
use crate::data::{BinMapper, BinnedMatrix, Feature, Frame};
use crate::error::{Error, Result};
use crate::tree::{Predictor, RawColumns, Tree, BLOCK_ROWS};
use rayon::prelude::*;
use std::collections::HashMap;

impl Model {
    /// Link-scale scores, row-major n × `n_outputs`.
    pub fn predict(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        self.predict_with(frame, &self.weights, Predictor::new)
    }

    /// `predict` with every tree walked, oblivious ones too (instead of indexing their leaf
    /// table: tree/flat.rs). The same scores; for measuring the table's speed.
    #[doc(hidden)]
    pub fn predict_walking(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        self.predict_with(frame, &self.weights, Predictor::walking)
    }

    /// Link-scale scores of the model after `iteration` iterations (0: the initial constant):
    /// the same trees and weights, summed in the same order, as the model of a fresh fit with
    /// `n_iter = iteration` (bit for bit).
    pub fn predict_iteration(&self, frame: &Frame<'_>, iteration: usize) -> Result<Vec<f64>> {
        let weights = self.weights_at(iteration)?;
        self.predict_with(frame, &weights, Predictor::new)
    }

    /// `predict_iteration` at each of `iterations`, evaluating every tree once per row block:
    /// row-major n × `n_outputs` scores per iteration, each bit for bit `predict_iteration`'s.
    pub fn predict_staged(&self, frame: &Frame<'_>, iterations: &[usize]) -> Result<Vec<Vec<f64>>> {
        let recoded = self.by_level_names(frame)?;
        let frame = &recoded.frame(frame)?;
        let derived = self.target_stats(frame)?;
        let frame = &self.aligned(&derived.frame(frame)?)?;
        let sets = iterations
            .iter()
            .map(|&k| self.weights_at(k))
            .collect::<Result<Vec<_>>>()?;
        let k = self.n_outputs;
        let n_rows = frame.n_rows();
        let columns = RawColumns::new(frame);
        let numeric = self.numeric_features();
        let used: Vec<usize> = (0..self.n_trees())
            .filter(|&t| sets.iter().any(|w| w[t] != 0.0))
            .collect();
        let predictors: Vec<Predictor<'_>> = used
            .iter()
            .map(|&t| Predictor::new(&self.trees[t], &numeric))
            .collect();
        let mut outs = (sets.iter())
            .map(|_| value_buffer(n_rows, k, "scores"))
            .collect::<Result<Vec<_>>>()?;
        // Block b's rows of every iteration's scores, filled side by side.
        let mut blocks: Vec<Vec<&mut [f64]>> = (0..n_rows.div_ceil(BLOCK_ROWS))
            .map(|_| Vec::with_capacity(sets.len()))
            .collect();
        for out in &mut outs {
            for (b, chunk) in out.chunks_mut(BLOCK_ROWS * k).enumerate() {
                blocks[b].push(chunk);
            }
        }
        blocks
            .into_par_iter()
            .enumerate()
            .for_each(|(b, mut outs)| {
                let start = b * BLOCK_ROWS;
                let rows = BLOCK_ROWS.min(n_rows - start);
                let block = columns.block(start, rows);
                // tree(x) exactly: −0 + v = v for every v, −0 included.
                let values: Vec<Vec<f64>> = predictors
                    .iter()
                    .map(|p| {
                        let mut v = vec![-0.0; rows];
                        p.add_raw(frame, &block, start, 1.0, &mut v);
                        v
                    })
                    .collect();
                for (weights, out) in sets.iter().zip(&mut outs) {
                    // `accumulate`'s sums: from the bias, tree after tree, w · tree(x).
                    let mut scores: Vec<f64> = self
                        .bias
                        .iter()
                        .flat_map(|&b| std::iter::repeat_n(b, rows))
                        .collect();
                    for (u, &t) in used.iter().enumerate() {
                        let w = weights[t];
                        if w == 0.0 {
                            continue;
                        }
                        let o = self.tree_outputs[t] as usize;
                        for (s, &v) in scores[o * rows..(o + 1) * rows].iter_mut().zip(&values[u]) {
                            *s += w * v;
                        }
                    }
                    for (i, row) in out.chunks_mut(k).enumerate() {
                        for (j, o) in row.iter_mut().enumerate() {
                            *o = scores[j * rows + i];
                        }
                    }
                }
            });
        Ok(outs)
    }

    fn numeric_features(&self) -> Vec<bool> {
        self.features
            .iter()
            .map(|f| matches!(f.mapper, BinMapper::Numeric { .. }))
            .collect()
    }

    fn predict_with<'m>(
        &'m self,
        frame: &Frame<'_>,
        weights: &[f64],
        predictor: fn(&'m Tree, &[bool]) -> Predictor<'m>,
    ) -> Result<Vec<f64>> {
        let recoded = self.by_level_names(frame)?;
        let frame = &recoded.frame(frame)?;
        let derived = self.target_stats(frame)?;
        let frame = &self.aligned(&derived.frame(frame)?)?;
        let columns = RawColumns::new(frame);
        let mut out = value_buffer(frame.n_rows(), self.n_outputs, "scores")?;
        self.accumulate(
            &mut out,
            weights,
            predictor,
            |start, rows| columns.block(start, rows),
            |tree, block, start, weight, out| tree.add_raw(frame, block, start, weight, out),
        );
        Ok(out)
    }

    /// Response-scale predictions: probabilities for classification losses (for binary losses
    /// the probability of the positive class), the score otherwise.
    pub fn predict_response(&self, frame: &Frame<'_>) -> Result<Vec<f64>> {
        let scores = self.predict(frame)?;
        self.response(scores)
    }

    /// Scores of data binned with this model's mappers (validation data during training).
    pub fn predict_binned(&self, matrix: &BinnedMatrix) -> Vec<f64> {
        let mut out = vec![0.0; matrix.n_rows() * self.n_outputs];
        self.accumulate(
            &mut out,
            &self.weights,
            Predictor::new,
            |_, _| (),
            |tree, (), start, weight, out| tree.add_binned(matrix, start, weight, out),
        );
        out
    }

    /// Scores (row-major n × `n_outputs`) on the response scale. Fails, rather than returning
    /// the scores unchanged, for a loss that does not build (a parameter out of range, or a
    /// multiclass loss with fewer than 2 outputs): loaded models were checked for that already.
    ///
    /// Under a log link the response e^score overflows for scores beyond ln(f64::MAX) ≈ 709.78;
    /// such a mean is given as the largest finite float instead of ∞. A model's scores are
    /// bounded (`MAX_ABS_TERM`) but the bound is far above 709.78, and a load-time bound on the
    /// largest possible score (the bias plus each tree's largest leaf) would refuse long,
    /// legitimate models whose real scores never come near it.
    pub fn response(&self, mut scores: Vec<f64>) -> Result<Vec<f64>> {
        let loss = self.loss()?;
        let log_link = validate::has_log_link(&self.loss);
        // In place, a block of rows at a time: the block's scores are copied out first.
        scores
            .par_chunks_mut(BLOCK_ROWS * loss.n_outputs())
            .for_each(|out| {
                let scores = out.to_vec();
                loss.response_into(&scores, out);
                if log_link {
                    for mean in out.iter_mut() {
                        *mean = mean.min(f64::MAX);
                    }
                }
            });
        Ok(scores)
    }

    /// Scores into `out` (n rows × `n_outputs`) with tree weights `weights`, in blocks of
    /// `BLOCK_ROWS`: `block(start, rows)` prepares what the trees read from rows
    /// `start..start + rows`, and `add(tree, block, start, weight, out)` adds `weight · tree`
    /// for those rows to `out`.
    fn accumulate<'m, B>(
        &'m self,
        out: &mut [f64],
        weights: &[f64],
        predictor: fn(&'m Tree, &[bool]) -> Predictor<'m>,
        block: impl Fn(usize, usize) -> B + Sync,
        add: impl Fn(&Predictor<'_>, &B, usize, f64, &mut [f64]) + Sync,
    ) {
        let k = self.n_outputs;
        let numeric = self.numeric_features();
        let trees: Vec<(Predictor<'_>, f64, usize)> = self
            .trees
            .iter()
            .zip(weights)
            .zip(&self.tree_outputs)
            .filter(|((_, &weight), _)| weight != 0.0)
            .map(|((tree, &weight), &output)| (predictor(tree, &numeric), weight, output as usize))
            .collect();
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
    }

    /// The frame's columns in the model's feature order, selected by name (extra columns are
    /// ignored, as the Python front end does), each checked against its feature's kind and
    /// levels: columns given in another order or under other names never predict silently.
    pub(super) fn aligned<'f>(&self, frame: &Frame<'f>) -> Result<Frame<'f>> {
        let given = frame.features();
        let same_order = given.len() == self.features.len()
            && given
                .iter()
                .zip(&self.features)
                .all(|(g, f)| g.name == f.name);
        let columns = if same_order {
            given.to_vec()
        } else {
            let by_name: HashMap<&str, &Feature<'f>> =
                given.iter().map(|g| (g.name.as_str(), g)).collect();
            self.features
                .iter()
                .map(|f| {
                    by_name
                        .get(f.name.as_str())
                        .map(|g| (*g).clone())
                        .ok_or_else(|| {
                            let available: Vec<&str> =
                                given.iter().map(|g| g.name.as_str()).collect();
                            Error::data(format!(
                                "the model's feature `{}` is not among the frame's columns {:?}",
                                f.name,
                                &available[..available.len().min(30)]
                            ))
                        })
                })
                .collect::<Result<Vec<_>>>()?
        };
        for (spec, feature) in self.features.iter().zip(&columns) {
            spec.mapper.check_compatible(&spec.name, &feature.values)?;
        }
        Frame::new(columns)
    }
}
