//! A prediction sequence kept three ways at once: its values on the training rows, its values on
//! the validation rows, and its weights over the model's tree store.
//!
//! Momentum methods (AGBM, VAGBM, the accelerated methods of the proximal family) combine whole
//! sequences, `x ← a·x + b·y`, which changes the weights of old trees (docs/algorithms.md §4.3–4.4,
//! Property 8 of the proximal paper). Applying every update to all three forms keeps them equal by
//! construction: `bias + Σ_j weights[j]·tree_j(X) = train` — the model predicts with the output
//! sequence's weights, and the validation loss follows the output sequence. Every combination the
//! methods use is affine (a + b = 1), so the bias keeps weight 1 in every sequence.
//!
//! Vectors are row-major `n × K` (K = 1, or the number of classes).

use serde::{Deserialize, Serialize};

use super::vectors::{add_column, par_fill, CHUNK};
use rayon::prelude::*;

/// A sequence of the method's recursion, kept as its predictions so no tree is re-evaluated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tracked {
    /// Values on the training rows (n × K).
    pub train: Vec<f64>,
    /// Values on the validation rows, when there are any.
    pub valid: Option<Vec<f64>>,
    /// One weight per tree of the store; trees past the end have weight 0.
    pub weights: Vec<f64>,
}

/// A tree pushed to the model's store, with its (unscaled) values on the validation rows and the
/// output (class) it predicts. Its training values are added by the pass that fitted it.
pub struct StoredTree {
    pub index: usize,
    pub output: usize,
    pub valid: Option<Vec<f64>>,
}

impl Tracked {
    /// The constant sequence `bias` on `n` training and `n_valid` validation rows.
    pub fn constant(bias: &[f64], n: usize, n_valid: Option<usize>) -> Tracked {
        Tracked {
            train: bias.repeat(n),
            valid: n_valid.map(|m| bias.repeat(m)),
            weights: Vec::new(),
        }
    }

    /// self ← self + coef · tree for a tree whose training values coef·tree(X) are already in
    /// `train` (added by the pass that fitted it): the validation values and the weight.
    pub fn add_tree_off_train(&mut self, tree: &StoredTree, coef: f64) {
        if coef == 0.0 {
            return;
        }
        let k = tree.output;
        if let (Some(valid), Some(values)) = (self.valid.as_mut(), tree.valid.as_ref()) {
            add_column(valid, coef, values, k);
        }
        if self.weights.len() <= tree.index {
            self.weights.resize(tree.index + 1, 0.0);
        }
        self.weights[tree.index] += coef;
    }

    /// a·x + b·y
    pub fn affine(a: f64, x: &Tracked, b: f64, y: &Tracked) -> Tracked {
        let mut out = x.clone();
        out.affine_assign(a, b, y);
        out
    }

    /// self ← a·self + b·y
    pub fn affine_assign(&mut self, a: f64, b: f64, y: &Tracked) {
        combine(&mut self.train, a, b, &y.train);
        self.affine_assign_off_train(a, b, y);
    }

    /// `affine_assign` for a caller that combines the training values itself (in a pass of its
    /// own): the validation values and the weights.
    pub fn affine_assign_off_train(&mut self, a: f64, b: f64, y: &Tracked) {
        if let (Some(valid), Some(other)) = (self.valid.as_mut(), y.valid.as_ref()) {
            combine(valid, a, b, other);
        }
        if self.weights.len() < y.weights.len() {
            self.weights.resize(y.weights.len(), 0.0);
        }
        for (j, w) in self.weights.iter_mut().enumerate() {
            *w = a * *w + b * y.weights.get(j).copied().unwrap_or(0.0);
        }
    }

    /// self ← a·x + b·self: the numbers of `Tracked::affine(a, x, b, self)` (same expressions,
    /// same order), in self's buffers instead of a copy of x.
    pub fn affine_from(&mut self, a: f64, x: &Tracked, b: f64) {
        combine_from(&mut self.train, a, &x.train, b);
        if let (Some(valid), Some(other)) = (self.valid.as_mut(), x.valid.as_ref()) {
            combine_from(valid, a, other, b);
        }
        if self.weights.len() < x.weights.len() {
            self.weights.resize(x.weights.len(), 0.0);
        }
        for (j, w) in self.weights.iter_mut().enumerate() {
            *w = a * x.weights.get(j).copied().unwrap_or(0.0) + b * *w;
        }
    }

    /// A copy made by all threads: the momentum methods copy their output sequence at every
    /// iteration (`Iterate::restart_point`).
    pub fn par_clone(&self) -> Tracked {
        let copy = |v: &[f64]| {
            let mut out = vec![0.0; v.len()];
            par_fill(&mut out, |i| v[i]);
            out
        };
        Tracked {
            train: copy(&self.train),
            valid: self.valid.as_deref().map(copy),
            weights: self.weights.clone(),
        }
    }

    /// The weights over a store of `n_trees` trees.
    pub fn weights_for(&self, n_trees: usize) -> Vec<f64> {
        let mut weights = self.weights.clone();
        weights.resize(n_trees, 0.0);
        weights
    }
}

/// x ← a·x + b·y
fn combine(x: &mut [f64], a: f64, b: f64, y: &[f64]) {
    x.par_iter_mut()
        .with_min_len(CHUNK)
        .zip(y.par_iter())
        .for_each(|(x, &y)| *x = a * *x + b * y);
}

/// y ← a·x + b·y
fn combine_from(y: &mut [f64], a: f64, x: &[f64], b: f64) {
    y.par_iter_mut()
        .with_min_len(CHUNK)
        .zip(x.par_iter())
        .for_each(|(y, &x)| *y = a * x + b * *y);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_combinations_keep_values_and_weights_consistent() {
        // A tree's training values, added as the pass that fits it adds them.
        let add = |x: &mut Tracked, index, values: [f64; 3], coef: f64| {
            (x.train.iter_mut().zip(values)).for_each(|(x, v)| *x += coef * v);
            let tree = StoredTree {
                index,
                output: 0,
                valid: None,
            };
            x.add_tree_off_train(&tree, coef);
            values
        };
        let mut x = Tracked::constant(&[1.0], 3, None);
        let mut y = x.clone();
        let t0 = add(&mut x, 0, [1.0, 2.0, 3.0], 0.5);
        let t1 = add(&mut y, 1, [-1.0, 0.0, 4.0], 2.0);
        let z = Tracked::affine(0.25, &x, 0.75, &y);
        assert_eq!(z.weights, vec![0.125, 1.5]);
        // The in-place form gives the same numbers, whichever sequence has more weights.
        let mut in_place = y.clone();
        in_place.affine_from(0.25, &x, 0.75);
        assert_eq!(in_place, z);
        let mut reversed = x.clone();
        reversed.affine_from(0.75, &y, 0.25);
        assert_eq!(reversed, Tracked::affine(0.75, &y, 0.25, &x));
        for i in 0..3 {
            let expected = 1.0 + 0.125 * t0[i] + 1.5 * t1[i];
            assert!((z.train[i] - expected).abs() < 1e-12);
        }
    }
}
