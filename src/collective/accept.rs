//! The root's side of joining a TCP job: the accept loop, each newcomer's handshake, and the
//! verdict on each proven hello.
//!
//! A connection holds no rank until it has proved the job secret ([`super::proof`]). Each
//! handshake runs on its own short-lived thread with a deadline of a few seconds
//! ([`HANDSHAKE_TIMEOUT`]) whatever the join's timeout, and at most `world +`
//! [`EXTRA_HANDSHAKES`] run at once: a newcomer beyond that cuts off the oldest unfinished one.
//! Connections opened before a worker's (idle or slow clients, a flood) are thus dropped to make
//! room for it, and a worker whose handshake was cut off anyway tries again until the join's
//! deadline. The accept loop keeps a clone of every unfinished handshake's socket and shuts them
//! all when it returns, so no handshake thread outlives the join by more than a moment.

use super::peer::Peer;
use super::proof::{nonce, Transcript};
use super::wire::{
    encode_challenge, read_by, seconds, version_of, Hello, ReadFailure, Reply, Verdict, HELLO_LEN,
    PREFIX_LEN, PROTOCOL_VERSION, TAG_LEN,
};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::io::{ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

/// The longest a newcomer may take to send its hello once the root has sent the challenge: a
/// worker needs one round trip; an idle or slow client is dropped at this deadline at the latest.
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);
/// Handshakes that may be under way at once beyond one per rank (each has a thread).
pub(super) const EXTRA_HANDSHAKES: usize = 64;
/// How often the root checks for finished handshakes and new connections while it waits.
const POLL: Duration = Duration::from_millis(5);
/// Refused connections described by address in the root's error (all are counted by reason).
const NOTES_KEPT: usize = 5;
/// Missing ranks listed by number in a join-timeout message (the count is always given).
const MISSING_LISTED: usize = 20;

/// The root's side: listens on `root` and returns the workers, in rank order, once all
/// `world - 1` have joined; or fails at the deadline naming the ranks that never joined and the
/// connections it refused, or at once when a rank is claimed twice.
pub(super) fn accept_workers(
    world: usize,
    root: &str,
    secret: &[u8],
    timeout: Duration,
) -> Result<Vec<Peer>> {
    let deadline = Instant::now() + timeout;
    let window = HANDSHAKE_TIMEOUT.min(timeout);
    let listener = TcpListener::bind(root)
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|err| Error::Training(format!("rank 0 cannot listen on {root}: {err}")))?;
    let secret: Arc<[u8]> = secret.into();
    let (arrivals_in, arrivals) = mpsc::channel::<Arrival>();
    // By id, so the oldest unfinished handshake comes first.
    let mut unfinished: BTreeMap<u64, (SocketAddr, TcpStream)> = BTreeMap::new();
    let mut slots: Vec<Option<Held>> = (0..world).map(|_| None).collect();
    let mut refusals = Refusals::new(window, world + EXTRA_HANDSHAKES);
    let mut next_id = 0u64;
    let mut joined = 0;
    while joined < world - 1 && Instant::now() < deadline {
        loop {
            match listener.accept() {
                Ok((stream, addr)) => {
                    if unfinished.len() >= world + EXTRA_HANDSHAKES {
                        if let Some((_, (old_addr, old))) = unfinished.pop_first() {
                            let _ = old.shutdown(Shutdown::Both);
                            refusals.note(Reason::Evicted, old_addr, "cut off unfinished".into());
                        }
                    }
                    let id = next_id;
                    next_id += 1;
                    let started = start_handshake(
                        Newcomer { id, addr, stream },
                        Arc::clone(&secret),
                        deadline.min(Instant::now() + window),
                        arrivals_in.clone(),
                    );
                    match started {
                        Ok(clone) => {
                            unfinished.insert(id, (addr, clone));
                        }
                        Err(problem) => refusals.note(Reason::Failed, addr, problem),
                    }
                }
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                // A connection reset before it was accepted, or a momentary lack of descriptors:
                // the job can still complete, so count it and keep waiting.
                Err(err) => {
                    refusals.note(Reason::Failed, None, format!("accepting failed: {err}"));
                    break;
                }
            }
        }
        let Ok(arrival) = arrivals.recv_timeout(POLL) else {
            continue;
        };
        // A handshake cut off meanwhile was counted then; its worker, if it was one, retries.
        if unfinished.remove(&arrival.id).is_none() {
            continue;
        }
        let Arrival {
            addr,
            mut stream,
            outcome,
            ..
        } = arrival;
        let claim = match outcome {
            Ok(claim) => claim,
            Err((reason, detail)) => {
                refusals.note(reason, addr, detail);
                continue;
            }
        };
        let rank = claim.rank as usize;
        let refusal = if claim.world != world as u64 {
            Some((
                Verdict::WorldMismatch,
                Reason::World,
                format!("world {}", claim.world),
            ))
        } else if rank == 0 || rank >= world {
            Some((
                Verdict::RankOutOfRange,
                Reason::Rank,
                format!("rank {}", claim.rank),
            ))
        } else {
            None
        };
        if let Some((verdict, reason, detail)) = refusal {
            send_reply(&mut stream, &secret, Some(&claim), verdict, window);
            let _ = stream.shutdown(Shutdown::Both);
            refusals.note(reason, addr, detail);
            continue;
        }
        if let Some(first) = &slots[rank] {
            // Both proved the secret: two processes run this rank, or the secret got out. Either
            // could be the forger, so the job trusts neither.
            let message = format!(
                "rank {rank} was claimed twice, by {} and then by {addr}, both proving the job \
                 secret: two processes were started with the same rank, or the secret leaked; \
                 the job is stopped rather than trusting either{}",
                first.peer.addr,
                refusals.summary()
            );
            send_reply(
                &mut stream,
                &secret,
                Some(&claim),
                Verdict::DuplicateRank,
                window,
            );
            let _ = stream.shutdown(Shutdown::Both);
            let mut held: Vec<Held> = slots.into_iter().flatten().collect();
            abandon(&mut held, &secret, window, &unfinished);
            return Err(Error::Training(message));
        }
        if !send_reply(&mut stream, &secret, Some(&claim), Verdict::Joined, window) {
            refusals.note(
                Reason::Closed,
                addr,
                "left before its rank was confirmed".into(),
            );
            continue;
        }
        slots[rank] = Some(Held {
            peer: Peer { rank, addr, stream },
            claim,
        });
        joined += 1;
    }
    let mut held: Vec<Held> = slots.into_iter().flatten().collect();
    if joined < world - 1 {
        abandon(&mut held, &secret, window, &unfinished);
        return Err(Error::Training(join_timeout_message(
            world, root, timeout, &held, &refusals,
        )));
    }
    close_all(&unfinished);
    for index in 0..held.len() {
        let Held { peer, claim } = &mut held[index];
        let _ = peer.stream.set_write_timeout(Some(timeout));
        let tag = claim.transcript.reply_tag(&secret, Verdict::Start.code());
        let reply = Reply {
            verdict: Verdict::Start,
            tag,
        };
        if let Err(err) = peer.stream.write_all(&reply.encode()) {
            let message = format!("{} left before the job started: {err}", peer.describe());
            for other in &mut held {
                let _ = other.peer.stream.shutdown(Shutdown::Both);
            }
            return Err(Error::Training(message));
        }
    }
    Ok(held.into_iter().map(|held| held.peer).collect())
}

/// A worker whose rank slot is taken, waiting for the job to start.
struct Held {
    peer: Peer,
    claim: Claim,
}

/// A hello that proved the job secret, and the handshake it proved it in.
struct Claim {
    rank: u64,
    world: u64,
    transcript: Transcript,
}

struct Newcomer {
    id: u64,
    addr: SocketAddr,
    stream: TcpStream,
}

/// A handshake read on its own thread, sent back to the accept loop.
struct Arrival {
    id: u64,
    addr: SocketAddr,
    stream: TcpStream,
    outcome: std::result::Result<Claim, (Reason, String)>,
}

/// Runs the newcomer's handshake on a thread of its own; returns a clone of the socket so that
/// the accept loop can cut the handshake short.
fn start_handshake(
    newcomer: Newcomer,
    secret: Arc<[u8]>,
    deadline: Instant,
    arrivals: mpsc::Sender<Arrival>,
) -> std::result::Result<TcpStream, String> {
    let Newcomer {
        id,
        addr,
        mut stream,
    } = newcomer;
    let configure = |err: std::io::Error| format!("cannot configure the connection: {err}");
    stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_nodelay(true))
        .map_err(configure)?;
    let clone = stream.try_clone().map_err(configure)?;
    thread::Builder::new()
        .name("optboost-collective-join".into())
        .spawn(move || {
            let outcome = handshake(&mut stream, &secret, deadline);
            // The accept loop may have returned already; the socket then just closes.
            let _ = arrivals.send(Arrival {
                id,
                addr,
                stream,
                outcome,
            });
        })
        .map_err(|err| format!("cannot start a thread for its handshake: {err}"))?;
    Ok(clone)
}

/// Challenge, hello, proof: a claim to a rank, or why the newcomer is refused.
fn handshake(
    stream: &mut TcpStream,
    secret: &[u8],
    deadline: Instant,
) -> std::result::Result<Claim, (Reason, String)> {
    let root_nonce = nonce().map_err(|problem| (Reason::Failed, problem))?;
    let window = deadline.saturating_duration_since(Instant::now());
    stream
        .set_write_timeout(Some(window.max(Duration::from_millis(1))))
        .and_then(|()| stream.write_all(&encode_challenge(&root_nonce)))
        .map_err(|err| {
            (
                Reason::Closed,
                format!("the challenge could not be sent: {err}"),
            )
        })?;
    let mut bytes = [0u8; HELLO_LEN];
    let (prefix, body) = bytes.split_at_mut(PREFIX_LEN);
    read_by(stream, prefix, deadline).map_err(|failure| unfinished_hello(failure, 0))?;
    match version_of(prefix) {
        None => {
            return Err((Reason::Garbage, "bytes without the handshake magic".into()));
        }
        Some(version) if version != PROTOCOL_VERSION => {
            send_reply(stream, secret, None, Verdict::VersionMismatch, window);
            return Err((Reason::Version, format!("protocol version {version}")));
        }
        Some(_) => {}
    }
    read_by(stream, body, deadline).map_err(|failure| unfinished_hello(failure, PREFIX_LEN))?;
    let hello = Hello::decode(&bytes);
    let transcript = Transcript {
        root_nonce,
        worker_nonce: hello.nonce,
        rank: hello.rank,
        world: hello.world,
    };
    if !transcript.hello_proves(secret, &hello.tag) {
        send_reply(stream, secret, None, Verdict::BadProof, window);
        return Err((Reason::BadProof, format!("claimed rank {}", hello.rank)));
    }
    Ok(Claim {
        rank: hello.rank,
        world: hello.world,
        transcript,
    })
}

fn unfinished_hello(failure: ReadFailure, before: usize) -> (Reason, String) {
    match failure {
        ReadFailure::TimedOut { received } if before + received == 0 => {
            (Reason::Idle, "sent nothing".into())
        }
        ReadFailure::TimedOut { received } => (
            Reason::Slow,
            format!(
                "sent {} of the {HELLO_LEN} bytes of a hello",
                before + received
            ),
        ),
        ReadFailure::Closed { received } => (
            Reason::Closed,
            format!("closed after {} bytes of a hello", before + received),
        ),
        ReadFailure::Io(err) => (Reason::Closed, format!("failed during its hello: {err}")),
    }
}

/// Best effort and brief: the peer learns the verdict, tagged by the root's proof once its hello
/// proved the secret; returns whether the whole reply was written.
fn send_reply(
    stream: &mut TcpStream,
    secret: &[u8],
    claim: Option<&Claim>,
    verdict: Verdict,
    window: Duration,
) -> bool {
    let tag = claim.map_or([0u8; TAG_LEN], |claim| {
        claim.transcript.reply_tag(secret, verdict.code())
    });
    let reply = Reply { verdict, tag };
    stream
        .set_write_timeout(Some(window.max(Duration::from_millis(1))))
        .and_then(|()| stream.write_all(&reply.encode()))
        .is_ok()
}

/// Tells every held worker the join is over without a job, and cuts every connection.
fn abandon(
    held: &mut [Held],
    secret: &[u8],
    window: Duration,
    unfinished: &BTreeMap<u64, (SocketAddr, TcpStream)>,
) {
    for Held { peer, claim } in held.iter_mut() {
        send_reply(
            &mut peer.stream,
            secret,
            Some(claim),
            Verdict::JoinAbandoned,
            window,
        );
        let _ = peer.stream.shutdown(Shutdown::Both);
    }
    close_all(unfinished);
}

fn close_all(unfinished: &BTreeMap<u64, (SocketAddr, TcpStream)>) {
    for (_, stream) in unfinished.values() {
        let _ = stream.shutdown(Shutdown::Both);
    }
}

/// Why the root refused a connection; the root's error counts each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reason {
    BadProof,
    World,
    Rank,
    Version,
    Garbage,
    Idle,
    Slow,
    Closed,
    Evicted,
    Failed,
}

struct Refusals {
    window: Duration,
    at_once: usize,
    counts: BTreeMap<Reason, usize>,
    notes: Vec<String>,
}

impl Refusals {
    fn new(window: Duration, at_once: usize) -> Refusals {
        Refusals {
            window,
            at_once,
            counts: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    fn note(&mut self, reason: Reason, addr: impl Into<Option<SocketAddr>>, detail: String) {
        *self.counts.entry(reason).or_default() += 1;
        if self.notes.len() < NOTES_KEPT {
            self.notes.push(match addr.into() {
                Some(addr) => format!("{addr}: {detail}"),
                None => detail,
            });
        }
    }

    fn describe(&self, reason: Reason) -> String {
        let window = seconds(self.window);
        match reason {
            Reason::BadProof => {
                "did not prove the job secret (another job's worker, or a forged or replayed hello)"
                    .into()
            }
            Reason::World => "claimed another world size".into(),
            Reason::Rank => "claimed a rank outside the job's".into(),
            Reason::Version => "spoke another protocol version".into(),
            Reason::Garbage => "sent bytes that are not an optboost hello".into(),
            Reason::Idle => format!("sent nothing within {window}"),
            Reason::Slow => format!("had not sent a whole hello within {window}"),
            Reason::Closed => "closed the connection mid-handshake".into(),
            Reason::Evicted => format!(
                "were cut off unfinished to make room for newer connections ({} handshakes at \
                 most at once)",
                self.at_once
            ),
            Reason::Failed => {
                "could not be handled (accepting, configuring or a thread failed)".into()
            }
        }
    }

    /// "; refused 3 connections: 2 sent nothing within 3 s, 1 ... (e.g. 10.0.0.9:4711: ...)",
    /// or nothing when none was refused.
    fn summary(&self) -> String {
        let total: usize = self.counts.values().sum();
        if total == 0 {
            return String::new();
        }
        let by_reason: Vec<String> = self
            .counts
            .iter()
            .map(|(&reason, count)| format!("{count} {}", self.describe(reason)))
            .collect();
        format!(
            "; refused {total} connection(s): {} (e.g. {})",
            by_reason.join(", "),
            self.notes.join("; ")
        )
    }
}

fn join_timeout_message(
    world: usize,
    root: &str,
    timeout: Duration,
    held: &[Held],
    refusals: &Refusals,
) -> String {
    let mut present = vec![false; world];
    for held in held {
        present[held.peer.rank] = true;
    }
    let missing: Vec<usize> = (1..world).filter(|&rank| !present[rank]).collect();
    let mut listed: Vec<String> = missing
        .iter()
        .take(MISSING_LISTED)
        .map(usize::to_string)
        .collect();
    if missing.len() > MISSING_LISTED {
        listed.push(format!("... ({} ranks in all)", missing.len()));
    }
    let ranks = if missing.len() == 1 { "rank" } else { "ranks" };
    format!(
        "rank 0 waited {} at {root} for the workers: {ranks} {} never joined{}",
        seconds(timeout),
        listed.join(", "),
        refusals.summary()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_reason_and_a_few_are_named() {
        let mut refusals = Refusals::new(Duration::from_secs(3), 66);
        assert_eq!(refusals.summary(), "");
        let addr: SocketAddr = "127.0.0.1:4711".parse().unwrap();
        for _ in 0..7 {
            refusals.note(Reason::Idle, addr, "sent nothing".into());
        }
        refusals.note(Reason::BadProof, addr, "claimed rank 1".into());
        let summary = refusals.summary();
        assert!(
            summary.starts_with(
                "; refused 8 connection(s): 1 did not prove the job secret (another job's \
                 worker, or a forged or replayed hello), 7 sent nothing within 3 s (e.g. \
                 127.0.0.1:4711: sent nothing;"
            ),
            "{summary}"
        );
        assert_eq!(refusals.notes.len(), NOTES_KEPT);
    }
}
