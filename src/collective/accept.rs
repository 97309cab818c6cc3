//! The root's side of joining a TCP job: the accept loop and the verdict on each hello.
//!
//! The root reads each newcomer's hello on its own short-lived thread, so a stray connection
//! that never speaks cannot hold up the right workers; the accept loop keeps a clone of every
//! unfinished handshake's socket and shuts them all when it returns, so no such thread outlives
//! the join by more than a moment.

use super::peer::Peer;
use super::wire::{read_by, seconds, Hello, ReadFailure, Verdict, HELLO_LEN, PROTOCOL_VERSION};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::{ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How often the root checks for finished handshakes and new connections while it waits.
const POLL: Duration = Duration::from_millis(5);
/// Handshakes that may be under way at once beyond one per rank (each has a thread).
const EXTRA_HANDSHAKES: usize = 64;
/// Rejected connections described in a join-timeout message (the count is always given).
const NOTES_KEPT: usize = 5;
/// Missing ranks listed by number in a join-timeout message (the count is always given).
const MISSING_LISTED: usize = 20;

/// The root's side: listens on `root` and returns the workers, in rank order, once all
/// `world - 1` have joined; or fails at the deadline naming the ranks that never joined.
pub(super) fn accept_workers(
    world: usize,
    root: &str,
    job: u64,
    timeout: Duration,
) -> Result<Vec<Peer>> {
    let deadline = Instant::now() + timeout;
    let listener = TcpListener::bind(root)
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|err| Error::Training(format!("rank 0 cannot listen on {root}: {err}")))?;
    let (arrivals_in, arrivals) = mpsc::channel::<Arrival>();
    let mut unfinished: HashMap<u64, TcpStream> = HashMap::new();
    let mut slots: Vec<Option<Peer>> = (0..world).map(|_| None).collect();
    let mut rejections = Rejections::default();
    let mut next_id = 0u64;
    let mut joined = 0;
    while joined < world - 1 && Instant::now() < deadline {
        loop {
            match listener.accept() {
                Ok((stream, addr)) if unfinished.len() >= world + EXTRA_HANDSHAKES => {
                    // A flood of connections must not become a flood of threads.
                    drop(stream);
                    rejections.note(format!("{addr}: dropped, too many handshakes under way"));
                }
                Ok((stream, addr)) => {
                    let id = next_id;
                    next_id += 1;
                    match start_handshake(id, stream, addr, deadline, arrivals_in.clone()) {
                        Ok(clone) => {
                            unfinished.insert(id, clone);
                        }
                        Err(problem) => rejections.note(format!("{addr}: {problem}")),
                    }
                }
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                // A connection reset before it was accepted, or a momentary lack of descriptors:
                // the job can still complete, so note it and keep waiting.
                Err(err) => {
                    rejections.note(format!("accepting a connection failed: {err}"));
                    break;
                }
            }
        }
        let Ok(arrival) = arrivals.recv_timeout(POLL) else {
            continue;
        };
        unfinished.remove(&arrival.id);
        let Arrival {
            addr,
            mut stream,
            hello,
            ..
        } = arrival;
        let hello = match hello {
            Ok(hello) => hello,
            Err(problem) => {
                rejections.note(format!("{addr}: {problem}"));
                continue;
            }
        };
        match judge(&hello, job, world, &slots) {
            Verdict::Accepted => {
                slots[hello.rank as usize] = Some(Peer {
                    rank: hello.rank as usize,
                    addr,
                    stream,
                });
                joined += 1;
            }
            verdict => {
                rejections.note(format!(
                    "{addr}: {}",
                    rejection_note(&hello, verdict, world)
                ));
                send_verdict(&mut stream, verdict, timeout);
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }
    for stream in unfinished.values() {
        let _ = stream.shutdown(Shutdown::Both);
    }
    let mut peers: Vec<Peer> = slots.into_iter().flatten().collect();
    if joined < world - 1 {
        for peer in &mut peers {
            send_verdict(&mut peer.stream, Verdict::JoinTimedOut, timeout);
            let _ = peer.stream.shutdown(Shutdown::Both);
        }
        return Err(Error::Training(join_timeout_message(
            world,
            root,
            timeout,
            &peers,
            &rejections,
        )));
    }
    for index in 0..peers.len() {
        let started = peers[index]
            .stream
            .set_write_timeout(Some(timeout))
            .and_then(|()| peers[index].stream.write_all(&Verdict::Accepted.encode()));
        if let Err(err) = started {
            let message = format!(
                "{} left before the job started: {err}",
                peers[index].describe()
            );
            for peer in &mut peers {
                let _ = peer.stream.shutdown(Shutdown::Both);
            }
            return Err(Error::Training(message));
        }
    }
    Ok(peers)
}

/// A handshake read on its own thread, sent back to the accept loop.
struct Arrival {
    id: u64,
    addr: SocketAddr,
    stream: TcpStream,
    hello: std::result::Result<Hello, String>,
}

/// Reads the newcomer's hello on a thread of its own; returns a clone of the socket so the
/// accept loop can cut the handshake short.
fn start_handshake(
    id: u64,
    mut stream: TcpStream,
    addr: SocketAddr,
    deadline: Instant,
    arrivals: mpsc::Sender<Arrival>,
) -> std::result::Result<TcpStream, String> {
    stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_nodelay(true))
        .map_err(|err| format!("cannot configure the connection: {err}"))?;
    let clone = stream
        .try_clone()
        .map_err(|err| format!("cannot configure the connection: {err}"))?;
    thread::Builder::new()
        .name("optboost-collective-join".into())
        .spawn(move || {
            let hello = read_hello(&mut stream, deadline);
            // The accept loop may have returned already; the socket then just closes.
            let _ = arrivals.send(Arrival {
                id,
                addr,
                stream,
                hello,
            });
        })
        .map_err(|err| format!("cannot start a thread for its handshake: {err}"))?;
    Ok(clone)
}

fn read_hello(stream: &mut TcpStream, deadline: Instant) -> std::result::Result<Hello, String> {
    let mut bytes = [0u8; HELLO_LEN];
    match read_by(stream, &mut bytes, deadline) {
        Ok(()) => Hello::decode(&bytes)
            .ok_or_else(|| "sent bytes that are not an optboost hello".to_string()),
        Err(ReadFailure::TimedOut { received }) => Err(format!(
            "sent {received} of the {HELLO_LEN} bytes of a hello before the deadline"
        )),
        Err(ReadFailure::Closed { received }) => Err(format!(
            "closed the connection after {received} of the {HELLO_LEN} bytes of a hello"
        )),
        Err(ReadFailure::Io(err)) => Err(format!("failed during its hello: {err}")),
    }
}

fn judge(hello: &Hello, job: u64, world: usize, slots: &[Option<Peer>]) -> Verdict {
    if hello.version != PROTOCOL_VERSION {
        Verdict::VersionMismatch
    } else if hello.job != job {
        Verdict::JobMismatch
    } else if hello.world != world as u64 {
        Verdict::WorldMismatch
    } else if hello.rank == 0 || hello.rank >= world as u64 {
        Verdict::RankOutOfRange
    } else if slots[hello.rank as usize].is_some() {
        Verdict::DuplicateRank
    } else {
        Verdict::Accepted
    }
}

fn rejection_note(hello: &Hello, verdict: Verdict, world: usize) -> String {
    match verdict {
        Verdict::VersionMismatch => format!(
            "protocol version {} instead of {PROTOCOL_VERSION}",
            hello.version
        ),
        Verdict::JobMismatch => "job token mismatch (a stray or stale job)".into(),
        Verdict::WorldMismatch => format!("world {} instead of {world}", hello.world),
        Verdict::RankOutOfRange => format!("rank {} is not in 1..{world}", hello.rank),
        Verdict::DuplicateRank => format!("rank {} had already joined", hello.rank),
        other => format!("refused with verdict {}", other.code()),
    }
}

/// Best effort: the rejected peer learns why; if it is not listening, nothing is lost.
fn send_verdict(stream: &mut TcpStream, verdict: Verdict, timeout: Duration) {
    let _ = stream.set_write_timeout(Some(timeout.min(Duration::from_secs(1))));
    let _ = stream.write_all(&verdict.encode());
}

#[derive(Default)]
struct Rejections {
    count: usize,
    notes: Vec<String>,
}

impl Rejections {
    fn note(&mut self, note: String) {
        self.count += 1;
        if self.notes.len() < NOTES_KEPT {
            self.notes.push(note);
        }
    }
}

fn join_timeout_message(
    world: usize,
    root: &str,
    timeout: Duration,
    peers: &[Peer],
    rejections: &Rejections,
) -> String {
    let mut present = vec![false; world];
    for peer in peers {
        present[peer.rank] = true;
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
    let mut message = format!(
        "rank 0 waited {} at {root} for the workers: {ranks} {} never joined",
        seconds(timeout),
        listed.join(", ")
    );
    if rejections.count > 0 {
        message.push_str(&format!(
            "; rejected {} connection(s): {}",
            rejections.count,
            rejections.notes.join("; ")
        ));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_judges_hellos_in_order_of_seriousness() {
        let slots: Vec<Option<Peer>> = (0..3).map(|_| None).collect();
        let hello = Hello {
            version: PROTOCOL_VERSION,
            job: 7,
            rank: 1,
            world: 3,
        };
        assert_eq!(judge(&hello, 7, 3, &slots), Verdict::Accepted);
        assert_eq!(
            judge(
                &Hello {
                    version: 99,
                    job: 8,
                    ..hello
                },
                7,
                3,
                &slots
            ),
            Verdict::VersionMismatch
        );
        assert_eq!(
            judge(
                &Hello {
                    job: 8,
                    world: 5,
                    ..hello
                },
                7,
                3,
                &slots
            ),
            Verdict::JobMismatch
        );
        assert_eq!(
            judge(&Hello { world: 5, ..hello }, 7, 3, &slots),
            Verdict::WorldMismatch
        );
        assert_eq!(
            judge(&Hello { rank: 0, ..hello }, 7, 3, &slots),
            Verdict::RankOutOfRange
        );
        assert_eq!(
            judge(&Hello { rank: 3, ..hello }, 7, 3, &slots),
            Verdict::RankOutOfRange
        );
    }
}
