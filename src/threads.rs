//! Worker threads of training. A requested thread count is capped at the machine's parallelism
//! (more threads than cores only adds contention, and an unchecked count such as 10⁶ would ask the
//! system for a million threads), and boosters with the same count share one rayon pool instead
//! of each keeping its own: a program holding 100 trained models (which keep their boosters for
//! further training) holds one pool, not 100.
//!
//! Sharing a pool does not change results: training is deterministic whatever the thread count
//! and whatever else runs in the pool.

use crate::error::{Error, Result};
use rayon::ThreadPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The machine's parallelism (1 if the system cannot tell).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The thread count a booster asked for `requested` threads runs with: `requested` capped at
/// `available_threads()`; 0 stays 0 (rayon's default: all cores, or `RAYON_NUM_THREADS`).
pub fn threads_used(requested: usize) -> usize {
    requested.min(available_threads())
}

/// The pool of `threads_used(requested)` threads, shared with every other live booster of that
/// count. Pools are held weakly here: the last booster using a pool frees its threads.
pub fn shared_pool(requested: usize) -> Result<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Weak<ThreadPool>>>> = OnceLock::new();
    let n_threads = threads_used(requested);
    // A panic while the lock was held cannot leave the map inconsistent (every update is one
    // insert), so a poisoned lock is still usable.
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(pool) = pools.get(&n_threads).and_then(Weak::upgrade) {
        return Ok(pool);
    }
    let pool = Arc::new(own_pool(requested)?);
    // Entries of freed pools are dropped here, so the map stays as small as the set of counts
    // in use.
    pools.retain(|_, pool| pool.strong_count() > 0);
    pools.insert(n_threads, Arc::downgrade(&pool));
    Ok(pool)
}

/// A pool of `threads_used(requested)` threads for one booster alone: a rank of a data-parallel
/// fit waits inside its pool for the other ranks, which must not stall other boosters (or other
/// ranks in the same process).
pub fn own_pool(requested: usize) -> Result<ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads_used(requested))
        .build()
        .map_err(|e| {
            Error::param(
                "n_threads",
                requested,
                format!("a thread count the system allows ({e})"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_above_the_machine_are_capped() {
        assert_eq!(threads_used(0), 0);
        assert_eq!(threads_used(1), 1);
        assert_eq!(threads_used(1_000_000), available_threads());
        assert_eq!(
            shared_pool(1_000_000).unwrap().current_num_threads(),
            available_threads()
        );
    }

    #[test]
    fn boosters_of_one_thread_count_share_a_pool() {
        let a = shared_pool(1).unwrap();
        let b = shared_pool(1).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
