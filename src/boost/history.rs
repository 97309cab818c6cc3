//! Per-iteration record (docs/algorithms.md §5): the convergence diagnostics the papers' theory
//! runs on.

use serde::{Deserialize, Serialize};

/// The diagnostics of one iteration (docs/algorithms.md §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Trees in the model after this iteration.
    pub n_trees: usize,
    /// The training loss after this iteration (the monitored value on the training rows).
    pub train_loss: f64,
    /// The validation loss after this iteration, when there are validation rows.
    pub valid_loss: Option<f64>,
    /// cos(target, fit) of every tree fitted in this iteration.
    pub cos: Vec<f64>,
    /// The step size applied to this iteration's direction (ν times the step rule's factor).
    pub step: f64,
    /// Seconds since training started.
    pub seconds: f64,
    /// The safeguard rejected this iteration (it raised the training loss): its trees were
    /// removed, the model is the previous iteration's, and the momentum was restarted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub restarted: bool,
    /// The `metrics` on the training rows, in their order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub train_metrics: Vec<f64>,
    /// The `metrics` on the validation rows (empty without validation data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub valid_metrics: Vec<f64>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One [`Record`] per iteration, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// In iteration order; `records[k]` is iteration k + 1.
    pub records: Vec<Record>,
}

impl History {
    /// The latest iteration's record, `None` before the first.
    pub fn last(&self) -> Option<&Record> {
        self.records.last()
    }
    /// Iterations recorded.
    pub fn len(&self) -> usize {
        self.records.len()
    }
    /// True before the first iteration.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// cos(t, b) from ⟨t, b⟩, ‖t‖² and ‖b‖²; 0 when either vector is zero.
pub fn cosine_from_sums(tb: f64, tt: f64, bb: f64) -> f64 {
    let denominator = (tt * bb).sqrt();
    if denominator > 0.0 {
        tb / denominator
    } else {
        0.0
    }
}
