//! Undoing an iteration that a loss interrupted (`Loss::interrupted`: a Python loss's callables
//! stopped by Ctrl-C). Such a loss keeps answering, with meaningless values, until the iteration
//! ends; the booster then goes back to the state before it, so that the model keeps every
//! finished iteration and training can go on, as after a Ctrl-C between iterations.

use super::{Booster, MethodState};
use crate::rng::Rng;

/// What one iteration changes before its record is written.
pub(super) struct Undo {
    state: MethodState,
    valid_pred: Option<Vec<f64>>,
    rng: Rng,
    n_trees: usize,
    weights: Vec<f64>,
}

impl Booster {
    /// The state to go back to, kept only for a loss that can be interrupted (a copy of the
    /// method's vectors each iteration).
    pub(super) fn undo_point(&self) -> Option<Undo> {
        self.loss.can_be_interrupted().then(|| Undo {
            state: self.state.clone(),
            valid_pred: self.valid_pred.clone(),
            rng: self.rng.clone(),
            n_trees: self.model.n_trees(),
            weights: self.model.weights.clone(),
        })
    }

    /// Goes back to `undo`: the iteration in progress leaves no trace.
    pub(super) fn undo(&mut self, undo: Undo) {
        self.state = undo.state;
        self.valid_pred = undo.valid_pred;
        self.rng = undo.rng;
        self.model.keep_trees(undo.n_trees, undo.weights);
        self.derivs.invalidate();
    }
}

/// Whether a loss rose; a NaN loss counts as a rise, so that it is undone.
pub(super) fn rose(new: f64, old: f64) -> bool {
    matches!(
        new.partial_cmp(&old),
        Some(std::cmp::Ordering::Greater) | None
    )
}
