//! The trained model: trees with one weight each, a bias per output, and the feature mappers
//! that tell how to read new data. Prediction runs on raw columns, in parallel over rows.

mod contrib;
mod io;
mod levels;
mod predict;
mod validate;

pub use io::{FORMAT_VERSION, MAX_FILE_BYTES};
pub use levels::MAX_LEVEL_NAME_BYTES;
pub use validate::{MAX_ABS_TERM, MAX_NODES, MAX_OUTPUTS, MAX_TREES};

use crate::data::target_stats::{self, Derived};
use crate::data::{BinMapper, FeatureKind, Frame, TargetStat};
use crate::error::Result;
use crate::loss::{Loss, LossSpec};
use crate::params::Method;
use crate::tree::Tree;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// A model's feature: the column it reads at predict and how its values become bins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureSpec {
    /// The feature's name (the data column's, or a target statistic's derived name).
    pub name: String,
    /// The binning learnt at fit; the trees' rules are in its bins.
    pub mapper: BinMapper,
    /// A feature computed from a categorical column by its target statistics (`cat_encoding`):
    /// the column read at predict and the statistic of each of its levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_stats: Option<TargetStat>,
    /// The level names of the categorical column the feature reads (its own, or its target
    /// statistic's source), by code: a column at predict is recoded to them by name. Only in
    /// files of format version 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<String>>,
}

impl FeatureSpec {
    /// Numeric or categorical, as at fit.
    pub fn kind(&self) -> FeatureKind {
        self.mapper.kind()
    }
}

/// A trained model. Its fields are public and are how to read the trees: `trees[j].nodes[0]` is
/// tree j's root, a node with `left == 0` is a leaf, and the rule of any other node sends a row
/// to `left` or `right` as `Tree::leaf_of_raw` says (`x ≤ threshold`, a categorical code set,
/// `default_left` for missing values); `count` is the node's training rows (its cover). The
/// JSON form (`to_json`) holds the same data (docs/model_schema.json); its serde forms are in
/// io.rs, where a tree's thresholds are read from the features' cuts when the file leaves them
/// out.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The method that trained the model.
    pub method: Method,
    /// The loss it was trained for, which gives the response scale.
    pub loss: LossSpec,
    /// 1, or the number of classes K of a multiclass loss.
    pub n_outputs: usize,
    /// The initial constant of every output.
    pub bias: Vec<f64>,
    /// The trees, in training order.
    pub trees: Vec<Tree>,
    /// The model is `bias[k] + Σ_{j: output_j = k} weights[j] · trees[j](x)`.
    pub weights: Vec<f64>,
    /// The output each tree adds to.
    pub tree_outputs: Vec<u32>,
    /// The features the trees split on, in the order their `feature` indices count.
    pub features: Vec<FeatureSpec>,
    /// Set when training kept an earlier iterate than the last (early stopping, divergence, or
    /// a momentum method's best loss).
    pub best_iteration: Option<usize>,
    /// Trees in the model after each iteration 1, 2, … that it holds (for `predict_iteration`).
    /// Empty in models written before it existed.
    pub iteration_trees: Vec<usize>,
    /// Momentum methods only: the tree weights after each iteration. Momentum rewrites old
    /// weights, so iteration k's model is not the first trees of the final one; for the other
    /// methods it is, and this stays empty.
    pub iteration_weights: Vec<Vec<f64>>,
    /// The loss built from `loss` and `n_outputs`, for `response`.
    pub(crate) built_loss: BuiltLoss,
}

/// A model's loss, built from its spec and output count on first use and kept (with the error,
/// for a loss that does not build), keyed by the two: if a caller changes those public fields,
/// the loss is built anew. Models compare and print without it, as it follows from them.
#[derive(Clone, Default)]
pub(crate) struct BuiltLoss(OnceLock<Built>);

/// The spec and output count a loss was built from, and the loss or the error.
type Built = (LossSpec, usize, Result<Arc<dyn Loss>>);

impl PartialEq for BuiltLoss {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for BuiltLoss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuiltLoss")
    }
}

impl Model {
    /// The model's loss, built with K = `n_outputs` classes for a multiclass loss (which needs
    /// K ≥ 2); built once, then read from `built_loss`.
    pub(crate) fn loss(&self) -> Result<Arc<dyn Loss>> {
        let build = || {
            (self.loss.build(self.n_outputs))
                .map_err(|e| validate::model_error(format!("loss {}: {e}", self.loss)))
        };
        let (spec, n_outputs, built) =
            (self.built_loss.0).get_or_init(|| (self.loss.clone(), self.n_outputs, build()));
        if *spec == self.loss && *n_outputs == self.n_outputs {
            built.clone()
        } else {
            build()
        }
    }

    /// Trees in the model.
    pub fn n_trees(&self) -> usize {
        self.trees.len()
    }

    /// Appends a tree adding `weight` times its value to `output`.
    pub fn push_tree(&mut self, tree: Tree, weight: f64, output: usize) {
        self.trees.push(tree);
        self.weights.push(weight);
        self.tree_outputs.push(output as u32);
    }

    /// Keeps the first `n_trees` trees with `weights` as their weights: an earlier iterate.
    pub(crate) fn keep_trees(&mut self, n_trees: usize, weights: Vec<f64>) {
        self.trees.truncate(n_trees);
        self.tree_outputs.truncate(n_trees);
        self.weights = weights;
    }

    /// Appends the model as it is now to the iteration path (`weights_at`); `with_weights` for
    /// methods whose old tree weights change (momentum).
    pub(crate) fn record_iteration(&mut self, with_weights: bool) {
        self.iteration_trees.push(self.n_trees());
        if with_weights {
            self.iteration_weights.push(self.weights.clone());
        }
    }

    /// Goes back to the model after `iteration` iterations (`n_trees` trees with `weights`) and
    /// marks it as the iterate training kept.
    pub(crate) fn keep_iteration(&mut self, iteration: usize, n_trees: usize, weights: Vec<f64>) {
        self.keep_trees(n_trees, weights);
        self.iteration_trees.truncate(iteration);
        self.iteration_weights.truncate(iteration);
        self.best_iteration = Some(iteration);
    }

    /// Iterations whose model this one can reproduce (`predict_iteration`).
    pub fn n_iterations(&self) -> usize {
        self.iteration_trees.len()
    }

    /// The tree weights of the model after `iteration` iterations (0: the constant), over all
    /// of this model's trees (later trees get weight 0).
    pub fn weights_at(&self, iteration: usize) -> crate::Result<Vec<f64>> {
        let n = self.n_iterations();
        if iteration > n {
            return Err(crate::Error::param(
                "iteration",
                iteration,
                format!("an iteration in 0..={n} (the iterations this model holds)"),
            ));
        }
        let mut weights = vec![0.0; self.n_trees()];
        if iteration == 0 {
            return Ok(weights);
        }
        let trees = self.iteration_trees[iteration - 1];
        let source = match self.iteration_weights.get(iteration - 1) {
            Some(w) => &w[..],
            None => &self.weights[..],
        };
        let trees = trees.min(source.len());
        weights[..trees].copy_from_slice(&source[..trees]);
        Ok(weights)
    }

    /// The columns of `frame` that the model's target statistics read, as their statistics
    /// (nothing when the model has none).
    pub(crate) fn target_stats(&self, frame: &Frame<'_>) -> Result<Derived> {
        let stats: Vec<(&str, &TargetStat)> = (self.features.iter())
            .filter_map(|f| Some((f.name.as_str(), f.target_stats.as_ref()?)))
            .collect();
        target_stats::apply(frame, &stats)
    }

    /// The data column each feature reads: its own name, or the categorical column of its
    /// target statistic.
    pub fn feature_sources(&self) -> Vec<&str> {
        (self.features.iter())
            .map(|f| {
                f.target_stats
                    .as_ref()
                    .map_or(&f.name, |s| &s.source)
                    .as_str()
            })
            .collect()
    }

    /// The data columns prediction reads, in the model's order (`feature_sources` once each).
    pub fn input_names(&self) -> Vec<&str> {
        let mut names = self.feature_sources();
        names.dedup();
        names
    }

    /// Total split gain and split count per feature.
    pub fn feature_importance(&self) -> (Vec<f64>, Vec<usize>) {
        let mut gain = vec![0.0; self.features.len()];
        let mut splits = vec![0; self.features.len()];
        for tree in &self.trees {
            for node in tree.nodes.iter().filter(|n| !n.is_leaf()) {
                gain[node.feature as usize] += node.gain;
                splits[node.feature as usize] += 1;
            }
        }
        (gain, splits)
    }
}

/// A zeroed buffer of `n_rows` × `row_width` values (`what`: what a row holds), or an error
/// naming the sizes when that many values overflow `usize` or cannot be allocated. A model file
/// chooses the row width (its outputs, its features), and a failed allocation would otherwise
/// abort the process.
pub(crate) fn value_buffer(n_rows: usize, row_width: usize, what: &str) -> Result<Vec<f64>> {
    let mut values = Vec::new();
    match n_rows.checked_mul(row_width) {
        Some(len) if values.try_reserve_exact(len).is_ok() => {
            values.resize(len, 0.0);
            Ok(values)
        }
        _ => Err(crate::Error::data(format!(
            "{n_rows} rows × {row_width} {what} per row do not fit in memory ({} GB); predict \
             fewer rows at a time",
            crate::Number(n_rows as f64 * row_width as f64 * 8e-9)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Method;

    fn model(loss: LossSpec, n_outputs: usize) -> Model {
        Model {
            method: Method::Gbm,
            loss,
            n_outputs,
            bias: vec![0.0; n_outputs],
            trees: Vec::new(),
            weights: Vec::new(),
            tree_outputs: Vec::new(),
            features: Vec::new(),
            best_iteration: None,
            iteration_trees: Vec::new(),
            iteration_weights: Vec::new(),
            built_loss: BuiltLoss::default(),
        }
    }

    #[test]
    fn the_built_loss_is_kept_follows_the_spec_and_keeps_its_error() {
        let mut m = model(LossSpec::Logistic { ridge: 0.0 }, 1);
        let first = m.loss().unwrap();
        assert!(Arc::ptr_eq(&first, &m.loss().unwrap()), "built once");
        assert!(
            Arc::ptr_eq(&first, &m.clone().loss().unwrap()),
            "kept by copies"
        );
        assert_eq!(m.response(vec![0.0]).unwrap(), vec![0.5]);
        // The spec is a public field: a changed one is built anew, not answered by the old loss.
        m.loss = LossSpec::Squared;
        assert_eq!(m.response(vec![0.0, 2.0]).unwrap(), vec![0.0, 2.0]);
        // A loss that does not build fails every call with its own error.
        let mut bad = model(LossSpec::Pinball { tau: 2.0 }, 1);
        for _ in 0..2 {
            let error = bad.response(vec![0.0]).unwrap_err().to_string();
            assert!(
                error.contains("loss pinball(2)") && error.contains("tau"),
                "{error}"
            );
        }
        bad.n_outputs = 3;
        bad.loss = LossSpec::Softmax;
        let p = bad.response(vec![0.0, 0.0, 0.0]).unwrap();
        assert!(p.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-15), "{p:?}");
    }
}
