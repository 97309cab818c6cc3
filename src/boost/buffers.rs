//! Per-row buffers reused from one tree to the next: the row lists of a fit, the vectors of
//! fitted values b(X) and the leaves' terms of a leaf line search. Allocating them afresh for
//! every tree (8 MB per vector at 1M rows) makes the allocator keep freed blocks around, which
//! costs more memory than the buffers themselves.
//! Not part of a checkpoint: the contents never outlive an iteration. The mutexes let the fits,
//! which see the booster through a shared `Context`, borrow them; there is never contention.

use crate::loss::LeafScratch;
use crate::tree::GrowBuffers;
use std::sync::{Mutex, MutexGuard, PoisonError};

#[derive(Debug, Default)]
pub struct Buffers {
    grow: Mutex<GrowBuffers>,
    values: Mutex<Vec<Vec<f64>>>,
    leaf: Mutex<LeafScratch>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Buffers {
    pub fn grow(&self) -> MutexGuard<'_, GrowBuffers> {
        lock(&self.grow)
    }

    pub fn leaf_scratch(&self) -> MutexGuard<'_, LeafScratch> {
        lock(&self.leaf)
    }

    /// A vector of `n` values, with arbitrary contents, for the caller to overwrite.
    pub fn values(&self, n: usize) -> Vec<f64> {
        let mut v = lock(&self.values).pop().unwrap_or_default();
        v.resize(n, 0.0);
        v
    }

    /// Gives back a tree's row list and its vector of values.
    pub fn recycle(&self, rows: Vec<u32>, values: Vec<f64>) {
        self.grow().recycle(rows);
        self.recycle_values(values);
    }

    /// Gives back a vector of values (an unallocated one is dropped).
    pub fn recycle_values(&self, values: Vec<f64>) {
        if values.capacity() > 0 {
            lock(&self.values).push(values);
        }
    }
}
