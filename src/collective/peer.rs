//! One connection of the star and its framed I/O: sending a frame, receiving one and checking
//! that it belongs to the current call, and failure messages that name the peer.

use super::wire::{read_by, seconds, write_frame, Header, Kind, ReadFailure, HEADER_LEN};
use super::{Traffic, MAX_ABORT_BYTES};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The other end of a connection: the root for a worker, a worker for the root.
#[derive(Debug)]
pub(super) struct Peer {
    pub rank: usize,
    pub addr: SocketAddr,
    pub stream: TcpStream,
}

/// The call a frame is exchanged for, and how long this rank waits in it.
pub(super) struct Call {
    pub kind: Kind,
    pub seq: u64,
    /// Reads of this call must be complete by then.
    pub deadline: Instant,
    /// The wait the deadline stands for, to name it in messages.
    pub waited: Duration,
    /// The sockets' write timeout, to name it in messages.
    pub write_timeout: Duration,
}

impl Call {
    fn during(&self) -> String {
        format!("during a {} (call {})", self.kind.call_name(), self.seq)
    }
}

/// Failure messages are plain text until they are latched as the collective's error.
type Outcome<T> = Result<T, String>;

impl Peer {
    /// How failure messages name this peer.
    pub fn describe(&self) -> String {
        if self.rank == 0 {
            format!("the root (rank 0, {})", self.addr)
        } else {
            format!("worker rank {} ({})", self.rank, self.addr)
        }
    }

    pub fn send(&mut self, call: &Call, payload: &[u8], traffic: &Mutex<Traffic>) -> Outcome<()> {
        let header = Header {
            kind: call.kind,
            seq: call.seq,
            len: payload.len() as u64,
        };
        write_frame(&mut self.stream, header, payload).map_err(|err| {
            if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
                format!(
                    "{} took in nothing for {} {}",
                    self.describe(),
                    seconds(call.write_timeout),
                    call.during()
                )
            } else {
                format!(
                    "lost the connection to {} {}: {err}",
                    self.describe(),
                    call.during()
                )
            }
        })?;
        let mut traffic = lock(traffic);
        traffic.bytes_sent += (HEADER_LEN + payload.len()) as u64;
        traffic.messages += 1;
        Ok(())
    }

    /// Reads a frame header and checks that it belongs to `call`; the caller checks the length
    /// before reading the payload. A worker given an abort frame by the root returns the root's
    /// reason.
    pub fn receive_header(&mut self, call: &Call, traffic: &Mutex<Traffic>) -> Outcome<Header> {
        let mut bytes = [0u8; HEADER_LEN];
        read_by(&mut self.stream, &mut bytes, call.deadline)
            .map_err(|failure| self.read_failure(failure, call))?;
        let header = Header::decode(&bytes);
        count_received(traffic, HEADER_LEN, 1);
        if header.kind == Kind::Abort && self.rank == 0 {
            let mut reason = vec![0u8; header.len.min(MAX_ABORT_BYTES as u64) as usize];
            read_by(&mut self.stream, &mut reason, call.deadline)
                .map_err(|failure| self.read_failure(failure, call))?;
            return Err(format!(
                "the root ended the job {}: {}",
                call.during(),
                String::from_utf8_lossy(&reason)
            ));
        }
        if header.kind != call.kind {
            return Err(format!(
                "{} sent {} {}: the ranks' calls are out of step",
                self.describe(),
                frame_name(header.kind),
                call.during()
            ));
        }
        if header.seq != call.seq {
            return Err(format!(
                "{} sent call {} during call {} (a {}): the ranks' calls are out of step",
                self.describe(),
                header.seq,
                call.seq,
                call.kind.call_name()
            ));
        }
        Ok(header)
    }

    /// Fills `payload`, whose length the caller has checked against the header.
    pub fn receive_payload(
        &mut self,
        payload: &mut [u8],
        call: &Call,
        traffic: &Mutex<Traffic>,
    ) -> Outcome<()> {
        read_by(&mut self.stream, payload, call.deadline)
            .map_err(|failure| self.read_failure(failure, call))?;
        count_received(traffic, payload.len(), 0);
        Ok(())
    }

    fn read_failure(&self, failure: ReadFailure, call: &Call) -> String {
        let (peer, during, waited) = (self.describe(), call.during(), seconds(call.waited));
        match failure {
            ReadFailure::TimedOut { received: 0 } => {
                format!("{peer} sent no message within {waited} {during}")
            }
            ReadFailure::TimedOut { .. } => {
                format!("{peer} stopped mid-message for {waited} {during}")
            }
            ReadFailure::Closed { .. } => {
                format!("lost the connection to {peer} {during}: connection closed")
            }
            ReadFailure::Io(err) => format!("lost the connection to {peer} {during}: {err}"),
        }
    }
}

fn count_received(traffic: &Mutex<Traffic>, bytes: usize, messages: u64) {
    let mut traffic = lock(traffic);
    traffic.bytes_received += bytes as u64;
    traffic.messages += messages;
}

/// A frame as failure messages name it: "a max frame", "a frame of unknown kind 77".
fn frame_name(kind: Kind) -> String {
    match kind {
        Kind::Unknown(code) => format!("a frame of unknown kind {code}"),
        Kind::Gather => "an all_gather frame".into(),
        Kind::Abort => "an abort frame".into(),
        known => format!("a {} frame", known.call_name()),
    }
}

/// A panic elsewhere while a lock was held leaves data that is still consistent here (counters,
/// an optional error, sockets), so a poisoned lock is used as is rather than spreading the panic.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
