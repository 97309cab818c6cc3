//! Per-iteration record of SPEC §4: the convergence diagnostics the papers' theory runs on.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Trees in the model after this iteration.
    pub n_trees: usize,
    pub train_loss: f64,
    pub valid_loss: Option<f64>,
    /// cos(target, fit) of every tree fitted in this iteration.
    pub cos: Vec<f64>,
    /// The step size applied to this iteration's direction (ν times the step rule's factor).
    pub step: f64,
    /// Seconds since training started.
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    pub records: Vec<Record>,
}

impl History {
    pub fn last(&self) -> Option<&Record> {
        self.records.last()
    }
    pub fn len(&self) -> usize {
        self.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// cos(t, b) = ⟨t, b⟩ / (‖t‖ ‖b‖); 0 when either vector is zero.
pub fn cosine(t: &[f64], b: &[f64]) -> f64 {
    cosine_by(|i| t[i], b)
}

/// cos(t, b) with t_i = `t(i)` computed on the fly (no vector for t).
pub fn cosine_by(t: impl Fn(usize) -> f64, b: &[f64]) -> f64 {
    let (mut tb, mut tt, mut bb) = (0.0, 0.0, 0.0);
    for (i, &y) in b.iter().enumerate() {
        let x = t(i);
        tb += x * y;
        tt += x * x;
        bb += y * y;
    }
    let denominator = (tt * bb).sqrt();
    if denominator > 0.0 {
        tb / denominator
    } else {
        0.0
    }
}
