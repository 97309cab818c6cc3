//! Sample weights of the training rows. Unweighted data (the common case) keep no vector: the
//! loss pass, the least-squares and Newton fits and the tree kernel have unit-weight paths that
//! compute the same numbers as weights of 1 would (1·x = x exactly), and the vector of ones that
//! the loss solvers take as a slice is built only if one of them runs.

use super::ranks::sum_one;
use super::vectors::par_sum;
use crate::collective::Collective;
use std::sync::OnceLock;

#[derive(Debug)]
pub struct Weights {
    given: Option<Vec<f64>>,
    ones: OnceLock<Vec<f64>>,
    n: usize,
    /// Σ w, summed as `par_sum` sums (exactly n without weights).
    total: f64,
}

impl Weights {
    pub fn new(given: Option<Vec<f64>>, n: usize) -> Weights {
        let total = match &given {
            Some(w) => par_sum(n, |i| w[i]),
            None => n as f64,
        };
        Weights {
            given,
            ones: OnceLock::new(),
            n,
            total,
        }
    }

    /// Makes the total that of the rows of every rank of a data-parallel fit.
    pub fn add_totals_over(&mut self, collective: &dyn Collective) {
        self.total = sum_one(collective, self.total);
    }

    /// The weights, unless they are all 1.
    pub fn given(&self) -> Option<&[f64]> {
        self.given.as_deref()
    }

    /// Every row's weight as a slice; for unweighted data the ones are built on first use.
    pub fn slice(&self) -> &[f64] {
        match &self.given {
            Some(w) => w,
            None => self.ones.get_or_init(|| vec![1.0; self.n]),
        }
    }

    /// The number of rows.
    pub fn n_rows(&self) -> usize {
        self.n
    }

    /// Σ w.
    pub fn total(&self) -> f64 {
        self.total
    }
}
