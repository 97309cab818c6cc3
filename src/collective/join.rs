//! Joining a TCP job: checking [`Tcp::connect`](super::Tcp::connect)'s arguments, and a
//! worker's connect-and-hello (the root's side is in `accept`).

use super::accept::HANDSHAKE_TIMEOUT;
use super::peer::Peer;
use super::proof::{nonce, Transcript};
use super::wire::{
    challenge_nonce, read_by, seconds, version_of, Hello, ReadFailure, Reply, Verdict,
    CHALLENGE_LEN, PROTOCOL_VERSION, REPLY_LEN,
};
use super::{MAX_SECRET_LEN, MAX_TIMEOUT, MAX_WORLD, MIN_SECRET_LEN};
use crate::error::{Error, Result};
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

/// Pause between a worker's connection attempts while the root is not listening yet.
const RETRY_PAUSE: Duration = Duration::from_millis(25);
/// How long a worker waits for each answer of the handshake before trying again: the root's own
/// handshake timeout, and a second for the trip.
const HANDSHAKE_WAIT: Duration = HANDSHAKE_TIMEOUT.saturating_add(Duration::from_secs(1));

/// Rejects arguments no job could run with, before any socket is opened.
pub(super) fn check_arguments(
    rank: usize,
    world: usize,
    root: &str,
    secret: &[u8],
    timeout: Duration,
) -> Result<()> {
    if !(MIN_SECRET_LEN..=MAX_SECRET_LEN).contains(&secret.len()) {
        // Its length only: the secret itself is never written anywhere.
        return Err(Error::param(
            "secret",
            format!("{} bytes", secret.len()),
            format!(
                "{MIN_SECRET_LEN}..={MAX_SECRET_LEN} random bytes shared by every rank of the job"
            ),
        ));
    }
    if world == 0 || world > MAX_WORLD {
        return Err(Error::param(
            "world",
            world,
            format!("1..={MAX_WORLD} processes"),
        ));
    }
    if rank >= world {
        return Err(Error::param(
            "rank",
            rank,
            format!("0..={} (the ranks of a job of world {world})", world - 1),
        ));
    }
    if timeout.is_zero() || timeout > MAX_TIMEOUT {
        return Err(Error::param(
            "timeout",
            format!("{timeout:?}"),
            format!("a positive duration of at most {}", seconds(MAX_TIMEOUT)),
        ));
    }
    let allowed =
        "host:port with a fixed, non-zero port that every rank knows, e.g. 127.0.0.1:45123";
    match root.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => match port.parse::<u16>() {
            Ok(0) => Err(Error::param(
                "root",
                root,
                format!("{allowed} (port 0 would pick a port the other ranks cannot know)"),
            )),
            Ok(_) => Ok(()),
            Err(_) => Err(Error::param("root", root, allowed)),
        },
        _ => Err(Error::param("root", root, allowed)),
    }
}

/// A worker's side: connects to the root (retrying while it is not listening yet), proves the
/// job secret, checks the root's proof, and returns once the root starts the job, i.e. once every
/// rank has joined. A handshake the root dropped or reset (a flood filled its handshakes, or it
/// was still busy) is tried again until the deadline; a refusal or a root without the job's proof
/// ends the join at once.
pub(super) fn join_root(
    rank: usize,
    world: usize,
    root: &str,
    secret: &[u8],
    timeout: Duration,
) -> Result<Peer> {
    let deadline = Instant::now() + timeout;
    let addresses: Vec<SocketAddr> = root
        .to_socket_addrs()
        .map_err(|err| Error::param("root", root, format!("a resolvable host:port ({err})")))?
        .collect();
    if addresses.is_empty() {
        return Err(Error::param(
            "root",
            root,
            "a resolvable host:port (it resolved to no address)",
        ));
    }
    let failed = |what: String| {
        Error::Training(format!(
            "rank {rank} could not join the job at {root}: {what}"
        ))
    };
    let joining = Joining {
        rank: rank as u64,
        world: world as u64,
        secret,
        deadline,
    };
    let mut attempts = 0;
    loop {
        let stream = connect_by(&addresses, deadline).map_err(|err| {
            let tried = if attempts == 0 {
                String::new()
            } else {
                format!(" (after {attempts} handshake(s) the root dropped)")
            };
            Error::Training(format!(
                "rank {rank} could not connect to the root at {root} within {}{tried}: {err}",
                seconds(timeout)
            ))
        })?;
        attempts += 1;
        match joining.handshake(stream) {
            Ok(peer) => return Ok(peer),
            Err(Attempt::Failed(what)) => return Err(failed(what)),
            Err(Attempt::Dropped(what)) if Instant::now() >= deadline => {
                return Err(failed(format!(
                    "not accepted within {} ({attempts} handshake(s); the last: {what})",
                    seconds(timeout)
                )))
            }
            Err(Attempt::Dropped(_)) => thread::sleep(RETRY_PAUSE),
        }
    }
}

/// How one handshake ended, if not with the job started.
enum Attempt {
    /// Cut off before the root took this rank: worth another try.
    Dropped(String),
    /// Refused, or the root proved nothing: the join fails.
    Failed(String),
}

struct Joining<'a> {
    rank: u64,
    world: u64,
    secret: &'a [u8],
    deadline: Instant,
}

impl Joining<'_> {
    fn handshake(&self, mut stream: TcpStream) -> std::result::Result<Peer, Attempt> {
        let dropped = |what: &str, failure: ReadFailure| {
            Attempt::Dropped(match failure {
                ReadFailure::TimedOut { .. } => {
                    format!("no {what} within {}", seconds(HANDSHAKE_WAIT))
                }
                ReadFailure::Closed { .. } => {
                    format!("the root closed the connection before its {what}")
                }
                ReadFailure::Io(err) => format!("reading the root's {what} failed: {err}"),
            })
        };
        // The root answers within its own handshake timeout; a little more covers the trip.
        let step = || self.deadline.min(Instant::now() + HANDSHAKE_WAIT);
        let mut challenge = [0u8; CHALLENGE_LEN];
        read_by(&mut stream, &mut challenge, step()).map_err(|f| dropped("challenge", f))?;
        check_prefix(&challenge)?;
        let worker_nonce = nonce().map_err(Attempt::Failed)?;
        let transcript = Transcript {
            root_nonce: challenge_nonce(&challenge),
            worker_nonce,
            rank: self.rank,
            world: self.world,
        };
        let hello = Hello {
            rank: self.rank,
            world: self.world,
            nonce: worker_nonce,
            tag: transcript.hello_tag(self.secret),
        };
        stream
            .set_nodelay(true)
            .and_then(|()| stream.set_write_timeout(Some(HANDSHAKE_WAIT)))
            .and_then(|()| stream.write_all(&hello.encode()))
            .map_err(|err| Attempt::Dropped(format!("sending the hello failed: {err}")))?;
        let verdict = self
            .read_verdict(&mut stream, &transcript, step(), false)
            .map_err(|failure| match failure {
                Ok(failure) => dropped("answer to the hello", failure),
                Err(attempt) => attempt,
            })?;
        if verdict != Verdict::Joined {
            return Err(Attempt::Failed(self.refusal(verdict)));
        }
        // The rank is taken: from here on, no retry (a second claim would fail the job).
        let start = self
            .read_verdict(&mut stream, &transcript, self.deadline, true)
            .map_err(|failure| match failure {
                Ok(ReadFailure::TimedOut { .. }) => Attempt::Failed(
                    "the root had not started the job by the deadline (it is still waiting for                      other ranks)"
                        .into(),
                ),
                Ok(ReadFailure::Closed { .. }) => Attempt::Failed(
                    "the root closed the connection after taking this rank, before the job started"
                        .into(),
                ),
                Ok(ReadFailure::Io(err)) => {
                    Attempt::Failed(format!("reading the root's start failed: {err}"))
                }
                Err(attempt) => attempt,
            })?;
        if start != Verdict::Start {
            return Err(Attempt::Failed(self.refusal(start)));
        }
        let addr = stream
            .peer_addr()
            .map_err(|err| Attempt::Failed(format!("the connection broke: {err}")))?;
        Ok(Peer {
            rank: 0,
            addr,
            stream,
        })
    }

    /// The root's next verdict. Once the root has taken this rank (`proven`), every verdict must
    /// carry its proof; before, only `Joined` must (a refusal ends the join either way).
    fn read_verdict(
        &self,
        stream: &mut TcpStream,
        transcript: &Transcript,
        by: Instant,
        proven: bool,
    ) -> std::result::Result<Verdict, std::result::Result<ReadFailure, Attempt>> {
        let mut bytes = [0u8; REPLY_LEN];
        read_by(stream, &mut bytes, by).map_err(Ok)?;
        check_prefix(&bytes).map_err(Err)?;
        let reply = Reply::decode(&bytes);
        let must_prove = proven || reply.verdict == Verdict::Joined;
        if must_prove && !transcript.reply_proves(self.secret, reply.verdict.code(), &reply.tag) {
            return Err(Err(Attempt::Failed(
                "the process there did not prove it holds this job's secret: it is not this                  job's root (another job's, or an impostor on its port)"
                    .into(),
            )));
        }
        Ok(reply.verdict)
    }

    fn refusal(&self, verdict: Verdict) -> String {
        let (rank, world) = (self.rank, self.world);
        match verdict {
            Verdict::VersionMismatch => {
                format!("the root speaks another protocol version than {PROTOCOL_VERSION}")
            }
            Verdict::BadProof => "the root refused this rank's proof of the job secret (the                                   root belongs to another job)"
                .into(),
            Verdict::WorldMismatch => {
                format!("the root runs a job of another world size than {world}")
            }
            Verdict::RankOutOfRange => format!("the root refused rank {rank} (not in 1..{world})"),
            Verdict::DuplicateRank => format!(
                "another process proving the job secret already joined as rank {rank}: the root                  stopped the job (two processes started with the same rank, or the secret leaked)"
            ),
            Verdict::JoinAbandoned => "the root gave up the join without starting the job (a                                        rank never joined in time, or one was claimed twice; the                                        root's error says which)"
                .into(),
            Verdict::Start | Verdict::Joined => {
                format!("the root answered out of order (verdict {})", verdict.code())
            }
            Verdict::Unknown(code) => format!("the root answered with unknown verdict {code}"),
        }
    }
}

/// The handshake magic and this version, or why the process there is not a root to join.
fn check_prefix(bytes: &[u8]) -> std::result::Result<(), Attempt> {
    match version_of(bytes) {
        None => Err(Attempt::Failed(
            "the process there is not an optboost root (its answer lacks the handshake magic)"
                .into(),
        )),
        Some(version) if version != PROTOCOL_VERSION => Err(Attempt::Failed(format!(
            "the root speaks protocol version {version}, this rank {PROTOCOL_VERSION}"
        ))),
        Some(_) => Ok(()),
    }
}

fn connect_by(addresses: &[SocketAddr], deadline: Instant) -> std::io::Result<TcpStream> {
    loop {
        let mut last_error = None;
        for address in addresses {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match TcpStream::connect_timeout(address, left.min(Duration::from_secs(1))) {
                Ok(stream) => return Ok(stream),
                Err(err) => last_error = Some(err),
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(last_error.unwrap_or_else(|| ErrorKind::TimedOut.into()));
        }
        thread::sleep(RETRY_PAUSE.min(left));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_no_job_could_run_with_are_refused_by_name() {
        let second = Duration::from_secs(1);
        let secret = [7u8; MIN_SECRET_LEN];
        let refused = |rank, world, root: &str, timeout| match check_arguments(
            rank, world, root, &secret, timeout,
        ) {
            Err(Error::Param { name, .. }) => name,
            other => panic!("expected a parameter error, got {other:?}"),
        };
        assert_eq!(refused(0, 0, "127.0.0.1:4000", second), "world");
        assert_eq!(refused(0, MAX_WORLD + 1, "127.0.0.1:4000", second), "world");
        assert_eq!(refused(3, 3, "127.0.0.1:4000", second), "rank");
        assert_eq!(refused(0, 2, "127.0.0.1:4000", Duration::ZERO), "timeout");
        assert_eq!(refused(0, 2, "127.0.0.1:4000", Duration::MAX), "timeout");
        assert!(check_arguments(0, 2, "127.0.0.1:4000", &secret, MAX_TIMEOUT).is_ok());
        assert_eq!(refused(0, 2, "127.0.0.1:0", second), "root");
        assert_eq!(refused(0, 2, "127.0.0.1", second), "root");
        assert_eq!(refused(0, 2, ":4000", second), "root");
        assert_eq!(refused(0, 2, "127.0.0.1:70000", second), "root");
        assert!(check_arguments(2, 3, "localhost:4000", &secret, second).is_ok());
        assert!(check_arguments(0, MAX_WORLD, "[::1]:4000", &secret, second).is_ok());
        for length in [0, MIN_SECRET_LEN - 1, MAX_SECRET_LEN + 1] {
            match check_arguments(1, 2, "127.0.0.1:4000", &vec![1; length], second) {
                Err(Error::Param { name, value, .. }) => {
                    assert_eq!(
                        (name.as_str(), value),
                        ("secret", format!("{length} bytes"))
                    )
                }
                other => panic!("expected a parameter error, got {other:?}"),
            }
        }
    }
}
