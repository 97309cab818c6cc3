//! The TCP star ([`Tcp`]): the root combines the workers' payloads in rank order and sends the
//! result back; the protocol and its failure handling are described in the module doc of
//! [`super`].

use super::accept::accept_workers;
use super::join::{check_arguments, join_root};
use super::peer::{lock, Call, Peer};
use super::wire::{f64s_from, f64s_into, write_frame, Header, Kind};
use super::{Collective, Traffic, MAX_ABORT_BYTES, MAX_GATHER_BYTES};
use crate::error::{Error, Result};
use std::fmt;
use std::net::Shutdown;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The TCP star: one process of a data-parallel job, joined to the others through rank 0.
///
/// ```no_run
/// use optboost::collective::{Collective, Tcp, DEFAULT_TIMEOUT};
///
/// // Every process of the job runs this with its own rank; `secret` is random bytes they all
/// // share (drawn once per job, passed to each process privately, never logged).
/// let (rank, world, secret) = (1, 4, b"32 random bytes, drawn per job!!");
/// let collective = Tcp::connect(rank, world, "10.0.0.1:45123", secret, DEFAULT_TIMEOUT)?;
/// let mut gradient_sums = vec![0.5, -1.25];
/// collective.sum(&mut gradient_sums);
/// if let Some(err) = collective.failure() {
///     return Err(err);
/// }
/// # Ok::<(), optboost::Error>(())
/// ```
pub struct Tcp {
    rank: usize,
    world: usize,
    timeout: Duration,
    calls: Mutex<Calls>,
    /// Apart from `calls` so that it can be read while a call is blocked on the network.
    failure: Mutex<Option<Error>>,
    traffic: Mutex<Traffic>,
}

struct Calls {
    link: Link,
    /// The current call's sequence number (the first call is 1).
    seq: u64,
    /// Reused encoding buffer: histogram-sized payloads are sent at every reduction point.
    scratch: Vec<u8>,
}

enum Link {
    /// A job of world 1: nothing to talk to.
    Alone,
    /// The root's connections to ranks 1..world, in rank order.
    Root(Vec<Peer>),
    Worker(Peer),
}

impl Tcp {
    /// Joins the job: rank 0 binds `root` ("host:port", e.g. "127.0.0.1:45123"; port 0 is NOT
    /// allowed since others must know it) and accepts world-1 peers; other ranks connect to it,
    /// retrying until `timeout`. `secret` is random bytes every rank of one job shares
    /// ([`MIN_SECRET_LEN`](super::MIN_SECRET_LEN) at least); each side proves it holds it without
    /// sending it, so a connection that cannot (a stray or stale job, a forged or replayed hello)
    /// is refused and the root keeps waiting for the right peers, and a worker never trusts a
    /// root that cannot. Returns when all world ranks are connected: the root starts the job only
    /// once every rank has joined, so all ranks return together. Otherwise an Error names what
    /// failed (which ranks never joined and the connections refused; a rank claimed twice; a bad
    /// address; the root's reason for refusing this rank).
    ///
    /// `timeout` also bounds every later call (see the module doc). A job of `world` 1 opens no
    /// socket (the address is still checked) and behaves like [`Local`](super::Local).
    pub fn connect(
        rank: usize,
        world: usize,
        root: &str,
        secret: &[u8],
        timeout: Duration,
    ) -> Result<Tcp> {
        check_arguments(rank, world, root, secret, timeout)?;
        let link = if world == 1 {
            Link::Alone
        } else if rank == 0 {
            Link::Root(accept_workers(world, root, secret, timeout)?)
        } else {
            Link::Worker(join_root(rank, world, root, secret, timeout)?)
        };
        Ok(Tcp {
            rank,
            world,
            timeout,
            calls: Mutex::new(Calls {
                link,
                seq: 0,
                scratch: Vec::new(),
            }),
            failure: Mutex::new(None),
            traffic: Mutex::new(Traffic::default()),
        })
    }

    /// The timeout this rank was joined with.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The root waits `timeout` for the workers' payloads of a call.
    fn root_call(&self, kind: Kind, seq: u64) -> Call {
        self.call(kind, seq, self.timeout)
    }

    /// A worker waits twice as long for the answer: the root may itself have waited `timeout`
    /// for the slowest worker, and it then names that worker to everyone.
    fn worker_call(&self, kind: Kind, seq: u64) -> Call {
        self.call(kind, seq, self.timeout * 2)
    }

    fn call(&self, kind: Kind, seq: u64, waited: Duration) -> Call {
        Call {
            kind,
            seq,
            deadline: Instant::now() + waited,
            waited,
            write_timeout: self.timeout,
        }
    }

    fn reduce(&self, kind: Kind, values: &mut [f64]) {
        let mut calls = lock(&self.calls);
        if lock(&self.failure).is_some() {
            return;
        }
        let Calls { link, seq, scratch } = &mut *calls;
        *seq += 1;
        let outcome = match link {
            Link::Alone => return,
            Link::Root(peers) => self.root_reduce(peers, kind, *seq, values, scratch),
            Link::Worker(root) => self.worker_reduce(root, kind, *seq, values, scratch),
        };
        match outcome {
            Ok(result) => values.copy_from_slice(&result),
            Err(message) => self.fail(link, *seq, message),
        }
    }

    fn root_reduce(
        &self,
        peers: &mut [Peer],
        kind: Kind,
        seq: u64,
        values: &[f64],
        scratch: &mut Vec<u8>,
    ) -> std::result::Result<Vec<f64>, String> {
        let call = self.root_call(kind, seq);
        let expected = values.len() as u64 * 8;
        let mut combined = values.to_vec();
        for peer in peers.iter_mut() {
            let header = peer.receive_header(&call, &self.traffic)?;
            if header.len != expected {
                return Err(format!(
                    "{} sent {} bytes for a {} of {} values (call {seq}), not {expected}: \
                     the ranks passed slices of different lengths",
                    peer.describe(),
                    header.len,
                    kind.call_name(),
                    values.len()
                ));
            }
            scratch.resize(values.len() * 8, 0);
            peer.receive_payload(scratch, &call, &self.traffic)?;
            // In rank order, whatever order the payloads arrived in: the same bits on every run.
            for (total, value) in combined.iter_mut().zip(f64s_from(scratch)) {
                *total = match kind {
                    Kind::Max => total.max(value),
                    _ => *total + value,
                };
            }
        }
        f64s_into(&combined, scratch);
        for peer in peers.iter_mut() {
            peer.send(&call, scratch, &self.traffic)?;
        }
        Ok(combined)
    }

    fn worker_reduce(
        &self,
        root: &mut Peer,
        kind: Kind,
        seq: u64,
        values: &[f64],
        scratch: &mut Vec<u8>,
    ) -> std::result::Result<Vec<f64>, String> {
        f64s_into(values, scratch);
        let call = self.worker_call(kind, seq);
        root.send(&call, scratch, &self.traffic)?;
        let header = root.receive_header(&call, &self.traffic)?;
        let expected = values.len() as u64 * 8;
        if header.len != expected {
            return Err(format!(
                "{} sent {} bytes as the result of a {} of {} values (call {seq}), not {expected}",
                root.describe(),
                header.len,
                kind.call_name(),
                values.len()
            ));
        }
        root.receive_payload(scratch, &call, &self.traffic)?;
        Ok(f64s_from(scratch).collect())
    }

    fn gather(&self, bytes: &[u8]) -> std::result::Result<Vec<Vec<u8>>, String> {
        let mut calls = lock(&self.calls);
        if lock(&self.failure).is_some() {
            return Err(String::new());
        }
        let Calls { link, seq, scratch } = &mut *calls;
        *seq += 1;
        let outcome = if bytes.len() as u64 > MAX_GATHER_BYTES {
            Err(format!(
                "this rank's all_gather payload of {} bytes (call {seq}) exceeds the limit of \
                 {MAX_GATHER_BYTES} bytes for all ranks together",
                bytes.len()
            ))
        } else {
            match link {
                Link::Alone => Ok(vec![bytes.to_vec()]),
                Link::Root(peers) => self.root_gather(peers, *seq, bytes, scratch),
                Link::Worker(root) => self.worker_gather(root, *seq, bytes),
            }
        };
        if let Err(message) = &outcome {
            self.fail(link, *seq, message.clone());
        }
        outcome
    }

    fn root_gather(
        &self,
        peers: &mut [Peer],
        seq: u64,
        bytes: &[u8],
        scratch: &mut Vec<u8>,
    ) -> std::result::Result<Vec<Vec<u8>>, String> {
        let call = self.root_call(Kind::Gather, seq);
        let mut parts = vec![bytes.to_vec()];
        let mut total = bytes.len() as u64;
        for peer in peers.iter_mut() {
            let header = peer.receive_header(&call, &self.traffic)?;
            if header.len > MAX_GATHER_BYTES - total {
                return Err(format!(
                    "{} announced an all_gather payload of {} bytes (call {seq}): with the {total} \
                     bytes of the ranks before it, more than the limit of {MAX_GATHER_BYTES}",
                    peer.describe(),
                    header.len
                ));
            }
            let mut part = vec![0u8; header.len as usize];
            peer.receive_payload(&mut part, &call, &self.traffic)?;
            total += header.len;
            parts.push(part);
        }
        scratch.clear();
        for part in &parts {
            scratch.extend_from_slice(&(part.len() as u64).to_le_bytes());
        }
        for part in &parts {
            scratch.extend_from_slice(part);
        }
        for peer in peers.iter_mut() {
            peer.send(&call, scratch, &self.traffic)?;
        }
        Ok(parts)
    }

    fn worker_gather(
        &self,
        root: &mut Peer,
        seq: u64,
        bytes: &[u8],
    ) -> std::result::Result<Vec<Vec<u8>>, String> {
        let call = self.worker_call(Kind::Gather, seq);
        root.send(&call, bytes, &self.traffic)?;
        let header = root.receive_header(&call, &self.traffic)?;
        let index_len = self.world as u64 * 8;
        if header.len < index_len || header.len - index_len > MAX_GATHER_BYTES {
            return Err(format!(
                "{} announced an all_gather result of {} bytes (call {seq}): a world of {} needs \
                 {index_len} bytes of lengths plus at most {MAX_GATHER_BYTES} bytes of payloads",
                root.describe(),
                header.len,
                self.world
            ));
        }
        let mut result = vec![0u8; header.len as usize];
        root.receive_payload(&mut result, &call, &self.traffic)?;
        let (index, mut rest) = result.split_at(index_len as usize);
        let mut parts = Vec::with_capacity(self.world);
        for len in index
            .chunks_exact(8)
            .map(|word| u64::from_le_bytes(word.try_into().unwrap_or_default()))
        {
            if len > rest.len() as u64 {
                return Err(format!(
                    "{} sent an all_gather result (call {seq}) whose lengths exceed its size",
                    root.describe()
                ));
            }
            let (part, after) = rest.split_at(len as usize);
            parts.push(part.to_vec());
            rest = after;
        }
        if !rest.is_empty() || parts[self.rank] != bytes {
            return Err(format!(
                "{} sent an all_gather result (call {seq}) that does not hold this rank's bytes \
                 at index {} or has bytes beyond its lengths",
                root.describe(),
                self.rank
            ));
        }
        Ok(parts)
    }

    /// Latches the first failure and cuts the connections, so that every other rank learns of it
    /// at once: the root tells each worker why before shutting its socket.
    fn fail(&self, link: &mut Link, seq: u64, message: String) {
        let mut failure = lock(&self.failure);
        if failure.is_none() {
            *failure = Some(Error::Training(message.clone()));
        }
        drop(failure);
        match link {
            Link::Alone => {}
            Link::Root(peers) => {
                let reason = truncated(&message, MAX_ABORT_BYTES);
                let header = Header {
                    kind: Kind::Abort,
                    seq,
                    len: reason.len() as u64,
                };
                for peer in peers.iter_mut() {
                    // Best effort and brief: a worker that is gone must not delay the others.
                    let _ = peer
                        .stream
                        .set_write_timeout(Some(self.timeout.min(Duration::from_secs(1))));
                    let _ = write_frame(&mut peer.stream, header, reason.as_bytes());
                    let _ = peer.stream.shutdown(Shutdown::Both);
                }
            }
            Link::Worker(root) => {
                let _ = root.stream.shutdown(Shutdown::Both);
            }
        }
    }
}

impl Collective for Tcp {
    fn rank(&self) -> usize {
        self.rank
    }

    fn world(&self) -> usize {
        self.world
    }

    fn sum(&self, values: &mut [f64]) {
        self.reduce(Kind::Sum, values);
    }

    fn max(&self, values: &mut [f64]) {
        self.reduce(Kind::Max, values);
    }

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.gather(bytes).unwrap_or_else(|_| {
            let mut parts = vec![Vec::new(); self.world];
            parts[self.rank] = bytes.to_vec();
            parts
        })
    }

    fn failure(&self) -> Option<Error> {
        lock(&self.failure).clone()
    }

    fn traffic(&self) -> Traffic {
        *lock(&self.traffic)
    }
}

impl fmt::Debug for Tcp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tcp")
            .field("rank", &self.rank)
            .field("world", &self.world)
            .field("timeout", &self.timeout)
            .field("failure", &self.failure())
            .finish_non_exhaustive()
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn truncated(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_cut_on_character_boundaries() {
        assert_eq!(truncated("abc", 10), "abc");
        assert_eq!(truncated("abc", 2), "ab");
        assert_eq!(truncated("aé", 2), "a");
        assert_eq!(truncated("", 0), "");
    }

    #[test]
    fn a_job_of_one_talks_to_nobody() {
        let alone = Tcp::connect(0, 1, "127.0.0.1:9", &[1; 16], Duration::from_secs(1)).unwrap();
        let mut values = [1.5, -2.0];
        alone.sum(&mut values);
        alone.max(&mut values);
        assert_eq!(values, [1.5, -2.0]);
        assert_eq!(alone.all_gather(b"xy"), vec![b"xy".to_vec()]);
        assert_eq!(alone.failure(), None);
        assert_eq!(alone.traffic(), Traffic::default());
        assert!(Tcp::connect(0, 1, "127.0.0.1:0", &[1; 16], Duration::from_secs(1)).is_err());
    }
}
