//! Joining a TCP job: checking [`Tcp::connect`](super::Tcp::connect)'s arguments, and a
//! worker's connect-and-hello (the root's side is in `accept`).

use super::peer::Peer;
use super::wire::{read_by, seconds, Hello, ReadFailure, Verdict, PROTOCOL_VERSION, REPLY_LEN};
use super::{MAX_TIMEOUT, MAX_WORLD};
use crate::error::{Error, Result};
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

/// Pause between a worker's connection attempts while the root is not listening yet.
const RETRY_PAUSE: Duration = Duration::from_millis(25);

/// Rejects arguments no job could run with, before any socket is opened.
pub(super) fn check_arguments(
    rank: usize,
    world: usize,
    root: &str,
    timeout: Duration,
) -> Result<()> {
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

/// A worker's side: connects to the root (retrying until the deadline while it is not listening
/// yet), says hello, and returns once the root accepts, i.e. once every rank has joined.
pub(super) fn join_root(
    rank: usize,
    world: usize,
    root: &str,
    job: u64,
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
    let mut stream = connect_by(&addresses, deadline).map_err(|err| {
        Error::Training(format!(
            "rank {rank} could not connect to the root at {root} within {}: {err}",
            seconds(timeout)
        ))
    })?;
    let failed = |what: String| {
        Error::Training(format!(
            "rank {rank} could not join the job at {root}: {what}"
        ))
    };
    stream
        .set_nodelay(true)
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .and_then(|()| {
            let hello = Hello {
                version: PROTOCOL_VERSION,
                job,
                rank: rank as u64,
                world: world as u64,
            };
            stream.write_all(&hello.encode())
        })
        .map_err(|err| failed(format!("sending the hello failed: {err}")))?;
    let mut reply = [0u8; REPLY_LEN];
    read_by(&mut stream, &mut reply, deadline).map_err(|err| {
        failed(match err {
            ReadFailure::TimedOut { .. } => format!(
                "not accepted within {} (the root is still waiting for other ranks, or is not an optboost root)",
                seconds(timeout)
            ),
            ReadFailure::Closed { .. } => "the root closed the connection before accepting this rank".into(),
            ReadFailure::Io(err) => format!("reading the root's answer failed: {err}"),
        })
    })?;
    let (root_version, verdict) = Verdict::decode(&reply).ok_or_else(|| {
        failed(
            "the process there is not an optboost root (its answer lacks the handshake magic)"
                .into(),
        )
    })?;
    let refusal = match verdict {
        Verdict::Accepted => None,
        Verdict::VersionMismatch => Some(format!(
            "the root speaks protocol version {root_version}, this rank {PROTOCOL_VERSION}"
        )),
        Verdict::JobMismatch => Some("the root belongs to another job (job token mismatch)".into()),
        Verdict::WorldMismatch => Some(format!(
            "the root runs a job of another world size than {world}"
        )),
        Verdict::RankOutOfRange => {
            Some(format!("the root refused rank {rank} (not in 1..{world})"))
        }
        Verdict::DuplicateRank => Some(format!(
            "the root already has a rank {rank}: two processes were started with the same rank"
        )),
        Verdict::JoinTimedOut => {
            Some("the root gave up waiting for the other ranks to join".into())
        }
        Verdict::Unknown(code) => Some(format!(
            "the root refused this rank with unknown verdict {code}"
        )),
    };
    if let Some(refusal) = refusal {
        return Err(failed(refusal));
    }
    let addr = stream
        .peer_addr()
        .map_err(|err| failed(format!("the connection broke: {err}")))?;
    Ok(Peer {
        rank: 0,
        addr,
        stream,
    })
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
        let refused =
            |rank, world, root: &str, timeout| match check_arguments(rank, world, root, timeout) {
                Err(Error::Param { name, .. }) => name,
                other => panic!("expected a parameter error, got {other:?}"),
            };
        assert_eq!(refused(0, 0, "127.0.0.1:4000", second), "world");
        assert_eq!(refused(0, MAX_WORLD + 1, "127.0.0.1:4000", second), "world");
        assert_eq!(refused(3, 3, "127.0.0.1:4000", second), "rank");
        assert_eq!(refused(0, 2, "127.0.0.1:4000", Duration::ZERO), "timeout");
        assert_eq!(refused(0, 2, "127.0.0.1:4000", Duration::MAX), "timeout");
        assert!(check_arguments(0, 2, "127.0.0.1:4000", MAX_TIMEOUT).is_ok());
        assert_eq!(refused(0, 2, "127.0.0.1:0", second), "root");
        assert_eq!(refused(0, 2, "127.0.0.1", second), "root");
        assert_eq!(refused(0, 2, ":4000", second), "root");
        assert_eq!(refused(0, 2, "127.0.0.1:70000", second), "root");
        assert!(check_arguments(2, 3, "localhost:4000", second).is_ok());
        assert!(check_arguments(0, MAX_WORLD, "[::1]:4000", second).is_ok());
    }
}
