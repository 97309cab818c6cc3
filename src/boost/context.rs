//! The borrowed view of a booster that a method's step works with: the data, the loss, the
//! model being built and this iteration's sample, step rule and shrinkage.

use super::buffers::Buffers;
use super::method::method;
use super::outputs::Derivatives;
use super::sampling::Sample;
use super::step_rule_in_force;
use super::tracked::{StoredTree, Tracked};
use super::training_data::Validation;
use super::vectors::add_column;
use super::weights::Weights;
use crate::collective::Collective;
use crate::data::BinnedData;
use crate::loss::Loss;
use crate::model::Model;
use crate::params::{Params, Schedule, StepRule};
use crate::tree::{Constraints, GrownTree, Predictor, Tree, ROW_CHUNK};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Borrowed view of a booster that a method's `step` works with.
pub struct Context<'a> {
    pub params: &'a Params,
    pub data: &'a BinnedData,
    pub y: &'a [f64],
    pub w: &'a Weights,
    pub loss: &'a dyn Loss,
    /// σ for the default constant step (`Loss::sigma_from` at the initial model).
    pub sigma: Option<f64>,
    pub model: &'a mut Model,
    /// 1-based number of the iteration being performed.
    pub iteration: usize,
    /// Training loss of the current output, before this iteration.
    pub train_loss: f64,
    pub(super) valid: Option<&'a Validation>,
    pub(super) valid_pred: Option<&'a mut Vec<f64>>,
    /// Derivatives at the method's output; see `derivatives_at_output`.
    pub derivs: &'a mut Derivatives,
    pub buffers: &'a Buffers,
    pub(super) tree_fit_nanos: &'a AtomicU64,
    /// This iteration's rows and features (stochastic gradient boosting).
    pub sample: &'a Sample,
    /// Monotone and interaction constraints of every tree.
    pub constraints: &'a Constraints,
    /// The ranks of a data-parallel fit (`Local`: this process holds every row).
    pub collective: &'a dyn Collective,
}

impl Context<'_> {
    /// The step rule in force: the user's, or the method's default.
    pub fn step_rule(&self) -> StepRule {
        step_rule_in_force(self.params, self.loss)
    }

    /// ρ of the `constant` step rule: the user's, or the method's default.
    pub fn rho(&self) -> f64 {
        self.params.rho.unwrap_or_else(|| {
            method(self.params.method).default_rho(self.sigma(), self.params.lambda)
        })
    }

    /// The shrinkage of this iteration: ν, or ν/√t with `schedule = "inv_sqrt"`.
    pub fn nu(&self) -> f64 {
        match self.params.schedule {
            Schedule::Constant => self.params.learning_rate,
            Schedule::InvSqrt => self.params.learning_rate / (self.iteration as f64).sqrt(),
        }
    }

    /// The sample weights the line searches use: 0 on the rows this iteration did not draw.
    pub fn line_search_weights(&self) -> &Weights {
        self.sample.line_search_weights(self.w)
    }

    /// Counts `elapsed` as time spent growing trees.
    pub fn add_tree_fit_time(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.tree_fit_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// A tree's values on the validation rows, if there are any.
    fn valid_values(&self, tree: &Tree) -> Option<Vec<f64>> {
        let valid = self.valid?;
        let numeric: Vec<bool> = (0..self.data.n_features())
            .map(|f| !self.data.is_categorical(f))
            .collect();
        // The branch-free walk of prediction: the plain walk took 2–3% of a momentum method's
        // fit with a tenth of the rows held out.
        let predictor = Predictor::new(tree, &numeric);
        let mut values = vec![0.0; valid.matrix.n_rows()];
        (values.par_chunks_mut(ROW_CHUNK).enumerate())
            .for_each(|(k, out)| predictor.add_binned(&valid.matrix, k * ROW_CHUNK, 1.0, out));
        Some(values)
    }

    /// Puts a fitted tree into the model's store with weight 0, for a method that sets the
    /// weights itself through `publish`; the fit has already added its training values where they
    /// are needed (`fit::add_grown_tree` and its kin).
    pub fn store_grown(&mut self, grown: GrownTree, output: usize) -> StoredTree {
        let valid = self.valid_values(&grown.tree);
        let index = self.model.n_trees();
        let (tree, rows) = grown.into_parts();
        self.model.push_tree(tree, 0.0, output);
        self.buffers.grow().recycle(rows);
        StoredTree {
            index,
            output,
            valid,
        }
    }

    /// Makes `output` the model: its weights become the model's, its validation values the
    /// validation predictions.
    pub fn publish(&mut self, output: &Tracked) {
        self.model.weights = output.weights_for(self.model.n_trees());
        if let (Some(pred), Some(values)) = (self.valid_pred.as_deref_mut(), output.valid.as_ref())
        {
            pred.copy_from_slice(values);
        }
    }

    /// Adds `weight · tree` to output `output` of the model and of the validation predictions.
    pub fn add_tree(&mut self, tree: Tree, weight: f64, output: usize) {
        if let Some(values) = self.valid_values(&tree) {
            let pred = self
                .valid_pred
                .as_deref_mut()
                .expect("validation predictions exist with validation data");
            add_column(pred, weight, &values, output);
        }
        self.model.push_tree(tree, weight, output);
    }
}
