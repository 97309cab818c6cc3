//! Worker threads of training. A requested thread count is capped at the machine's parallelism
//! (more threads than cores only adds contention, and an unchecked count such as 10⁶ would ask the
//! system for a million threads), and boosters with the same count share one rayon pool instead
//! of each keeping its own: a program holding 100 trained models (which keep their boosters for
//! further training) holds one pool, not 100.
//!
//! Sharing a pool does not change results: training is deterministic whatever the thread count
//! and whatever else runs in the pool.

use crate::error::{Error, Result};
use rayon::{ThreadPool, Yield};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

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

/// How long a worker kept awake by `with_awake_workers` looks for work before it gives up and
/// lets rayon put it to sleep.
const MAX_IDLE: Duration = Duration::from_micros(500);

thread_local! {
    /// Set on a thread while it runs `with_awake_workers`' work or keeps awake for it, and while
    /// it grows one of several trees side by side: no second team is started there.
    static IN_TEAM: Cell<bool> = const { Cell::new(false) };
    /// Set on the threads of a `with_awake_workers` team.
    static AWAKE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on this thread with the pool's other workers looking for work the whole time,
/// instead of sleeping between parallel passes: a tree on a few thousand rows forks and joins
/// every few microseconds, about what waking a sleeping worker costs, so without this its
/// parallel passes are slower than serial ones. The workers take jobs of any kind (rayon's
/// `yield_now`), and each stops after `MAX_IDLE` without one, so that work below it on its own
/// stack never waits for long. Where this thread already is in a team (or marked by
/// `as_team_member`), `f` runs as is.
pub fn with_awake_workers<R>(f: impl FnOnce() -> R) -> R {
    let n_threads = rayon::current_num_threads();
    if n_threads < 2 || IN_TEAM.get() {
        return f();
    }
    let done = AtomicBool::new(false);
    rayon::in_place_scope(|scope| {
        for _ in 1..n_threads {
            scope.spawn(|_| awake_member(|| keep_looking_for_work(&done)));
        }
        let result = awake_member(f);
        done.store(true, Ordering::Release);
        result
    })
}

/// Whether this thread's pool has its workers kept awake (`with_awake_workers`): then work of
/// a few microseconds is worth sharing.
pub fn workers_awake() -> bool {
    AWAKE.get()
}

/// Runs `f` with this thread marked as a team member (see `with_awake_workers`).
pub fn as_team_member<R>(f: impl FnOnce() -> R) -> R {
    with_flag(&IN_TEAM, f)
}

fn awake_member<R>(f: impl FnOnce() -> R) -> R {
    with_flag(&AWAKE, || as_team_member(f))
}

fn with_flag<R>(flag: &'static std::thread::LocalKey<Cell<bool>>, f: impl FnOnce() -> R) -> R {
    struct Restore(&'static std::thread::LocalKey<Cell<bool>>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.set(self.1);
        }
    }
    let _restore = Restore(flag, flag.replace(true));
    f()
}

fn keep_looking_for_work(done: &AtomicBool) {
    let mut idle_since: Option<Instant> = None;
    while !done.load(Ordering::Acquire) {
        match rayon::yield_now() {
            Some(Yield::Executed) => idle_since = None,
            Some(Yield::Idle) => {
                let now = Instant::now();
                if now - *idle_since.get_or_insert(now) > MAX_IDLE {
                    return;
                }
                // Any other thread ready to run on this core (another program's, on a busy
                // machine) goes first.
                std::thread::yield_now();
            }
            None => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

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
    fn a_team_wakes_its_workers_once_and_returns_its_result() {
        let pool = own_pool(2).unwrap();
        let (inside, nested, after) = pool.install(|| {
            let (inside, nested) = with_awake_workers(|| {
                // A second team inside the first runs its work as is.
                let nested = with_awake_workers(|| (workers_awake(), IN_TEAM.get()));
                (workers_awake(), nested)
            });
            (inside, nested, workers_awake())
        });
        assert_eq!((inside, nested, after), (true, (true, true), false));
        // Work inside the team may fork and join like any other.
        let sum: u64 = pool.install(|| {
            with_awake_workers(|| (0..100_000u64).into_par_iter().map(|i| i % 7).sum::<u64>())
        });
        assert_eq!(sum, (0..100_000u64).map(|i| i % 7).sum::<u64>());
        // Trees grown side by side start no team.
        let side_by_side = pool.install(|| as_team_member(|| with_awake_workers(workers_awake)));
        assert!(!side_by_side);
    }

    #[test]
    fn boosters_of_one_thread_count_share_a_pool() {
        let a = shared_pool(1).unwrap();
        let b = shared_pool(1).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
