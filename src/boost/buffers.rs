//! Per-row buffers reused from one tree to the next: the row lists of a fit, the vectors of
//! fitted values b(X) and the leaves' terms of a leaf line search. Allocating them afresh for
//! every tree (8 MB per vector at 1M rows) makes the allocator keep freed blocks around, which
//! costs more memory than the buffers themselves.
//! Not part of a checkpoint: the contents never outlive an iteration. The mutexes let the fits,
//! which see the booster through a shared `Context`, borrow them. The trees of the classes of one
//! iteration may grow side by side (`fit::for_each_output`): each takes its own row lists from a
//! pool of them.

use crate::loss::LeafScratch;
use crate::tree::GrowBuffers;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, PoisonError};

#[derive(Debug, Default)]
pub struct Buffers {
    grow: Mutex<Vec<GrowBuffers>>,
    values: Mutex<Vec<Vec<f64>>>,
    leaf: Mutex<LeafScratch>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Buffers {
    /// Row lists for one tree, back in the pool when dropped.
    pub fn grow(&self) -> PooledGrowBuffers<'_> {
        let buffers = lock(&self.grow).pop().unwrap_or_default();
        PooledGrowBuffers {
            pool: &self.grow,
            buffers: Some(buffers),
        }
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

/// `GrowBuffers` taken from the pool of a `Buffers`, which gets them back when this is dropped.
pub struct PooledGrowBuffers<'a> {
    pool: &'a Mutex<Vec<GrowBuffers>>,
    buffers: Option<GrowBuffers>,
}

impl Deref for PooledGrowBuffers<'_> {
    type Target = GrowBuffers;
    fn deref(&self) -> &GrowBuffers {
        self.buffers.as_ref().expect("held until dropped")
    }
}

impl DerefMut for PooledGrowBuffers<'_> {
    fn deref_mut(&mut self) -> &mut GrowBuffers {
        self.buffers.as_mut().expect("held until dropped")
    }
}

impl Drop for PooledGrowBuffers<'_> {
    fn drop(&mut self) {
        if let Some(buffers) = self.buffers.take() {
            lock(self.pool).push(buffers);
        }
    }
}
