//! Reductions across the worker processes of data-parallel training.
//!
//! Data-parallel training runs as SPMD, like XGBoost's and LightGBM's: every worker process runs
//! the same booster on its own rows, and at every reduction point (histogram sums, loss sums,
//! line-search slopes, bin sketches) all ranks make the same [`Collective`] call, in the same
//! order, and get identical results. [`Local`] is the one-process case (every reduction is the
//! identity); [`Tcp`] joins the processes of a job over TCP.
//!
//! # Topology: a star, summed in rank order
//!
//! Rank 0, the *root*, listens on an address every rank knows; ranks `1..world` (the *workers*)
//! connect to it. In each call every worker sends its payload to the root; the root reads the
//! payloads (workers may send in any order; the root reads them in rank order), combines them,
//! and sends the result back to every worker. A sum is added in rank order,
//! `((v0 + v1) + v2) + ...`, by the root alone, so every rank receives the same bits whatever the
//! timing: floating-point addition is not associative, and a reduction that added in arrival
//! order could give different models from one run to the next. All ranks then take the same
//! decisions (splits, step sizes, stopping) and stay in step without further coordination.
//!
//! Cost per call: 2 messages for each worker (its payload, the result), `2 · (world − 1)` for
//! the root, one round trip of latency. The root's bandwidth grows as `world × payload`: fine for
//! tens of workers and histogram-sized payloads; beyond roughly 64 workers a tree or ring
//! reduction (root bandwidth independent of `world`, keeping a fixed summation order) would be
//! the next step.
//!
//! # Protocol (version [`PROTOCOL_VERSION`]; integers little-endian)
//!
//! * Handshake. Every rank is given the job's *secret* (random bytes, at least
//!   [`MIN_SECRET_LEN`]); it never crosses the network. The root opens each connection with a
//!   challenge of 44 bytes: the magic `b"OPTBCOLL"`, the protocol version (u32) and a fresh
//!   random nonce (32 bytes). The worker answers a hello of 92 bytes: magic, version, its rank
//!   and the world size (u64 each), its own nonce (32 bytes) and an HMAC-SHA256 tag under the
//!   secret over both nonces, the rank and the world. The root answers 45 bytes: magic, version,
//!   a verdict (u8) and its own tag over the same handshake and the verdict (zeros when the hello
//!   proved nothing). Verdicts: 7 joined (the rank is taken; wait), 0 start (every rank has
//!   joined), 1 version mismatch, 2 no proof of the secret, 3 world mismatch, 4 rank not in
//!   `1..world`, 5 rank claimed twice, 6 the root gave up the join. A worker trusts only a root
//!   whose tags prove the secret over its own nonce; the root takes a rank only from a hello
//!   whose tag proves it over the root's nonce, so a hello seen once is worth nothing in another
//!   handshake or job. Each handshake has 3 s, however long the join may take; a
//!   newcomer beyond `world + 64` unfinished handshakes cuts off the oldest, and a worker whose
//!   handshake was cut off tries again until the join's deadline, so idle or slow connections
//!   cannot keep the right workers out. Refusals are answered at once and the root keeps waiting
//!   (a stray or stale process cannot break a job), except a second proven claim of a taken
//!   rank, which fails the join naming the rank: either claimant could be a forger. The start is
//!   sent once *every* rank has joined, so all ranks leave [`Tcp::connect`] together and the
//!   first call's timeout does not include waiting for late ranks. Bytes without the magic are
//!   dropped unanswered. Frames are read only from connections that proved the secret.
//! * Frames. Each message is a 17-byte header, kind (u8: 1 sum, 2 max, 3 all_gather, 4 abort),
//!   the call's sequence number (u64, 1 for the first call) and the payload length (u64), then
//!   the payload. Sums and maxima carry f64 bits, exactly 8 bytes per value in both directions.
//!   An all_gather payload is a rank's bytes on the way in, and on the way out the `world`
//!   lengths (u64 each) followed by the ranks' bytes concatenated in rank order. All payloads of
//!   one all_gather together may hold at most [`MAX_GATHER_BYTES`]; every length is checked
//!   before anything is allocated. An abort frame (root to workers) carries the UTF-8 reason the
//!   job failed, at most [`MAX_ABORT_BYTES`].
//! * Checks. A frame of another kind than the call, a sequence number out of step, or a length
//!   other than the expected one is a failure of the job (the ranks' calls are out of step, or
//!   the peer is not a worker of this job), never a panic or a huge allocation.
//!
//! # Failures and timeouts
//!
//! Every read and write is bounded: the root waits at most `timeout` for the workers' payloads of
//! a call (a worker that sends nothing by then is named in the failure); a worker waits at most
//! twice `timeout` for the root's answer, since the root itself may have waited `timeout` for the
//! slowest worker before answering. The first failure is latched ([`Collective::failure`]): the
//! root sends the reason to every worker (so each rank reports the real cause, not just "the root
//! went away") and shuts their sockets, a worker shuts its socket, so the other ranks see it at
//! once instead of waiting for a timeout. After a failure every call returns immediately without
//! communicating, so the caller finishes its iteration quickly and then reports the failure.
//! Failures are [`Error::Training`](crate::Error::Training) with a message naming the peer and
//! the call, e.g. "worker rank 2 (10.0.0.7:51234) sent no message within 600 s during a sum
//! (call 41)"; bad arguments to [`Tcp::connect`] are [`Error::Param`](crate::Error::Param).
//!
//! Calls are serialised by a mutex (the booster's driver makes them one at a time); `failure`
//! and `traffic` can be read from any thread, even while a call waits on the network.

mod accept;
mod join;
mod local;
mod peer;
mod proof;
mod select;
mod tcp;
mod wire;

pub use local::Local;
pub use select::{kth_smallest, Kth};
pub use tcp::Tcp;
pub use wire::PROTOCOL_VERSION;

use std::time::Duration;

/// The timeout callers use unless configured otherwise: long enough for the slowest rank's
/// histogram pass on a large shard, short enough that a hung job fails within minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest timeout [`Tcp::connect`] accepts (a week): far beyond any reduction's wait, and
/// small enough that deadlines computed from it (twice it, for a worker) cannot overflow.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The largest world a [`Tcp`] job accepts; the star's root would be the bottleneck long before.
pub const MAX_WORLD: usize = 4096;
/// The shortest job secret [`Tcp::connect`] accepts: 128 bits, beyond guessing.
pub const MIN_SECRET_LEN: usize = 16;
/// The longest job secret [`Tcp::connect`] accepts.
pub const MAX_SECRET_LEN: usize = 1024;
/// The most bytes one all_gather may move: all ranks' payloads together.
pub const MAX_GATHER_BYTES: u64 = 1 << 30;
/// The longest failure reason the root sends to the workers (longer ones are cut).
pub const MAX_ABORT_BYTES: usize = 4096;

/// The reductions data-parallel training needs. Every rank makes the same calls in the same order.
pub trait Collective: Send + Sync + std::fmt::Debug {
    /// This process's rank, 0-based.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn world(&self) -> usize;
    /// Element-wise sum over ranks, added in rank order ((v0 + v1) + v2 ...), so that every rank
    /// gets the same bits whatever the timing. All ranks pass slices of the same length.
    fn sum(&self, values: &mut [f64]);
    /// Element-wise maximum over ranks (NaN-free inputs).
    fn max(&self, values: &mut [f64]);
    /// Every rank's bytes, indexed by rank (rank r's own bytes at index r).
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// The first communication failure, if any. After a failure every call returns at once
    /// without communicating: sum and max leave `values` as they were; all_gather returns a Vec
    /// of length `world` with this rank's bytes at its index and empty vectors elsewhere. The
    /// caller thus finishes its iteration quickly and then reports the failure.
    fn failure(&self) -> Option<crate::error::Error>;
    /// Bytes sent and received so far (for benchmarks).
    fn traffic(&self) -> Traffic;
}

/// Traffic of one rank since it joined: frames of collective calls, headers included (the
/// handshake is not counted). `messages` counts frames sent plus frames received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes written to peers.
    pub bytes_sent: u64,
    /// Bytes read from peers.
    pub bytes_received: u64,
    /// Frames sent plus frames received.
    pub messages: u64,
}
