//! The trained model: trees with one weight each, a bias per output, and the feature mappers
//! that tell how to read new data. Prediction runs on raw columns, in parallel over rows.

mod flat;
mod io;
mod predict;

pub(crate) use flat::{leaf_nodes_binned, FlatTree};
pub use io::FORMAT_VERSION;

use crate::data::{BinMapper, FeatureKind};
use crate::loss::LossSpec;
use crate::params::Method;
use crate::tree::Tree;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureSpec {
    pub name: String,
    pub mapper: BinMapper,
}

impl FeatureSpec {
    pub fn kind(&self) -> FeatureKind {
        self.mapper.kind()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub method: Method,
    pub loss: LossSpec,
    /// 1, or the number of classes K of a multiclass loss.
    pub n_outputs: usize,
    /// The initial constant of every output.
    pub bias: Vec<f64>,
    pub trees: Vec<Tree>,
    /// The model is `bias[k] + Σ_{j: output_j = k} weights[j] · trees[j](x)`.
    pub weights: Vec<f64>,
    pub tree_outputs: Vec<u32>,
    pub features: Vec<FeatureSpec>,
    /// Set when training kept an earlier iterate than the last (early stopping, divergence).
    pub best_iteration: Option<usize>,
}

impl Model {
    pub fn n_trees(&self) -> usize {
        self.trees.len()
    }

    pub fn push_tree(&mut self, tree: Tree, weight: f64, output: usize) {
        self.trees.push(tree);
        self.weights.push(weight);
        self.tree_outputs.push(output as u32);
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
