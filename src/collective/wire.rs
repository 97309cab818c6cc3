//! The bytes on the wire of the TCP collective (layout in the module doc of [`super`]): the
//! handshake, the frame header, and reads bounded by a deadline.
//!
//! Everything read here comes from the network and is treated as untrusted data: decoding never
//! panics, and no length read from a peer is used before the caller has checked it.

use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// First bytes of every handshake message, so that a stray client (or a server that is not an
/// optboost root) is recognised at once.
pub const MAGIC: [u8; 8] = *b"OPTBCOLL";
/// Bumped whenever the layout of a handshake or frame changes.
pub const PROTOCOL_VERSION: u32 = 2;
/// Random bytes each side adds to a handshake, and bytes of an HMAC-SHA256 tag.
pub const NONCE_LEN: usize = 32;
pub const TAG_LEN: usize = 32;
/// The root's challenge: magic, version (u32), the root's nonce.
pub const CHALLENGE_LEN: usize = 8 + 4 + NONCE_LEN;
/// The part of every handshake message before its body: magic and version.
pub const PREFIX_LEN: usize = 8 + 4;
/// A worker's hello: magic, version (u32), rank, world (u64 each), the worker's nonce, its tag.
pub const HELLO_LEN: usize = PREFIX_LEN + 8 + 8 + NONCE_LEN + TAG_LEN;
/// The root's answer: magic, version (u32), verdict (u8), the root's tag (zeros on refusals
/// of hellos that did not prove the secret).
pub const REPLY_LEN: usize = PREFIX_LEN + 1 + TAG_LEN;
/// A frame header: kind (u8), call sequence number (u64), payload length (u64).
pub const HEADER_LEN: usize = 1 + 8 + 8;

/// The magic and version every handshake message starts with.
fn prefix() -> [u8; PREFIX_LEN] {
    let mut out = [0u8; PREFIX_LEN];
    out[..8].copy_from_slice(&MAGIC);
    out[8..].copy_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    out
}

/// The version after the magic; `None` when the bytes lack the magic (not optboost).
pub fn version_of(bytes: &[u8]) -> Option<u32> {
    (bytes.len() >= PREFIX_LEN && bytes[..8] == MAGIC).then(|| u32_at(bytes, 8))
}

/// The root's first words to every newcomer: a fresh nonce the hello must be bound to.
pub fn encode_challenge(nonce: &[u8; NONCE_LEN]) -> [u8; CHALLENGE_LEN] {
    let mut out = [0u8; CHALLENGE_LEN];
    out[..PREFIX_LEN].copy_from_slice(&prefix());
    out[PREFIX_LEN..].copy_from_slice(nonce);
    out
}

/// The root's nonce from a challenge of this version (the caller has checked the prefix).
pub fn challenge_nonce(bytes: &[u8; CHALLENGE_LEN]) -> [u8; NONCE_LEN] {
    array_at(bytes, PREFIX_LEN)
}

/// What a worker says about itself when it joins, and its proof of the job secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub rank: u64,
    pub world: u64,
    pub nonce: [u8; NONCE_LEN],
    pub tag: [u8; TAG_LEN],
}

impl Hello {
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut out = [0u8; HELLO_LEN];
        out[..PREFIX_LEN].copy_from_slice(&prefix());
        out[12..20].copy_from_slice(&self.rank.to_le_bytes());
        out[20..28].copy_from_slice(&self.world.to_le_bytes());
        out[28..28 + NONCE_LEN].copy_from_slice(&self.nonce);
        out[28 + NONCE_LEN..].copy_from_slice(&self.tag);
        out
    }

    /// The hello in `bytes`, whose prefix the caller has checked.
    pub fn decode(bytes: &[u8; HELLO_LEN]) -> Hello {
        Hello {
            rank: u64_at(bytes, 12),
            world: u64_at(bytes, 20),
            nonce: array_at(bytes, 28),
            tag: array_at(bytes, 28 + NONCE_LEN),
        }
    }
}

/// The root's verdict on a hello. Refusals tell the worker why, so that its error names the
/// cause (another job on the same port, a wrong world, ...) instead of a bare closed connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every rank has joined: the job starts.
    Start,
    VersionMismatch,
    /// The hello's tag is not that of the job secret over this handshake: another job's
    /// worker, or a hello replayed from another handshake.
    BadProof,
    WorldMismatch,
    RankOutOfRange,
    /// A second proven claim of a rank already taken: the join fails.
    DuplicateRank,
    /// The root gave up the join: a rank never joined in time, or one was claimed twice.
    JoinAbandoned,
    /// The rank's slot is taken: wait for `Start`.
    Joined,
    /// A verdict this version does not know.
    Unknown(u8),
}

impl Verdict {
    pub fn code(self) -> u8 {
        match self {
            Verdict::Start => 0,
            Verdict::VersionMismatch => 1,
            Verdict::BadProof => 2,
            Verdict::WorldMismatch => 3,
            Verdict::RankOutOfRange => 4,
            Verdict::DuplicateRank => 5,
            Verdict::JoinAbandoned => 6,
            Verdict::Joined => 7,
            Verdict::Unknown(code) => code,
        }
    }

    pub fn from_code(code: u8) -> Verdict {
        match code {
            0 => Verdict::Start,
            1 => Verdict::VersionMismatch,
            2 => Verdict::BadProof,
            3 => Verdict::WorldMismatch,
            4 => Verdict::RankOutOfRange,
            5 => Verdict::DuplicateRank,
            6 => Verdict::JoinAbandoned,
            7 => Verdict::Joined,
            other => Verdict::Unknown(other),
        }
    }
}

/// The root's answer to a hello: the verdict and, once the hello proved the secret, the root's
/// own proof over the same handshake (zeros before that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub verdict: Verdict,
    pub tag: [u8; TAG_LEN],
}

impl Reply {
    pub fn encode(&self) -> [u8; REPLY_LEN] {
        let mut out = [0u8; REPLY_LEN];
        out[..PREFIX_LEN].copy_from_slice(&prefix());
        out[PREFIX_LEN] = self.verdict.code();
        out[PREFIX_LEN + 1..].copy_from_slice(&self.tag);
        out
    }

    /// The reply in `bytes`, whose prefix the caller has checked.
    pub fn decode(bytes: &[u8; REPLY_LEN]) -> Reply {
        Reply {
            verdict: Verdict::from_code(bytes[PREFIX_LEN]),
            tag: array_at(bytes, PREFIX_LEN + 1),
        }
    }
}

/// What a frame carries. A worker sends the kind of the call it is in; the root answers with the
/// same kind, or with `Abort` (payload: UTF-8 reason) when the job has failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sum,
    Max,
    Gather,
    Abort,
    Unknown(u8),
}

impl Kind {
    pub fn code(self) -> u8 {
        match self {
            Kind::Sum => 1,
            Kind::Max => 2,
            Kind::Gather => 3,
            Kind::Abort => 4,
            Kind::Unknown(code) => code,
        }
    }

    pub fn from_code(code: u8) -> Kind {
        match code {
            1 => Kind::Sum,
            2 => Kind::Max,
            3 => Kind::Gather,
            4 => Kind::Abort,
            other => Kind::Unknown(other),
        }
    }

    /// The call's name as users write it, for error messages.
    pub fn call_name(self) -> String {
        match self {
            Kind::Sum => "sum".into(),
            Kind::Max => "max".into(),
            Kind::Gather => "all_gather".into(),
            Kind::Abort => "abort".into(),
            Kind::Unknown(code) => format!("unknown kind {code}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub seq: u64,
    pub len: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0] = self.kind.code();
        out[1..9].copy_from_slice(&self.seq.to_le_bytes());
        out[9..17].copy_from_slice(&self.len.to_le_bytes());
        out
    }

    pub fn decode(bytes: &[u8; HEADER_LEN]) -> Header {
        Header {
            kind: Kind::from_code(bytes[0]),
            seq: u64_at(bytes, 1),
            len: u64_at(bytes, 9),
        }
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

fn array_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Why a read from a peer did not complete.
#[derive(Debug)]
pub enum ReadFailure {
    /// The deadline passed; `received` bytes of the buffer had arrived.
    TimedOut {
        received: usize,
    },
    /// The peer closed the connection after `received` bytes.
    Closed {
        received: usize,
    },
    Io(io::Error),
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFailure::TimedOut { .. } => write!(f, "timed out"),
            ReadFailure::Closed { .. } => write!(f, "connection closed"),
            ReadFailure::Io(err) => write!(f, "{err}"),
        }
    }
}

/// Fills `buf` from `stream` by `deadline`. The socket timeout is reset before every read so that
/// the whole buffer, not each piece of it, is bounded by the deadline.
pub fn read_by(
    stream: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
) -> Result<(), ReadFailure> {
    let mut received = 0;
    while received < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadFailure::TimedOut { received });
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(ReadFailure::Io)?;
        match stream.read(&mut buf[received..]) {
            Ok(0) => return Err(ReadFailure::Closed { received }),
            Ok(n) => received += n,
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            // Unix reports an expired socket timeout as WouldBlock, Windows as TimedOut.
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(ReadFailure::TimedOut { received })
            }
            Err(err) => return Err(ReadFailure::Io(err)),
        }
    }
    Ok(())
}

/// Writes one frame (header then payload). The stream's write timeout bounds each write.
pub fn write_frame(stream: &mut TcpStream, header: Header, payload: &[u8]) -> io::Result<()> {
    stream.write_all(&header.encode())?;
    stream.write_all(payload)?;
    stream.flush()
}

/// `duration` in seconds for messages: "600 s", "1.5 s", "0.25 s".
pub fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        let text = format!("{:.3}", duration.as_secs_f64());
        format!("{} s", text.trim_end_matches('0'))
    }
}

/// Decodes little-endian f64 bits; `bytes.len()` is a multiple of 8 (checked by the caller).
pub fn f64s_from(bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
    bytes.chunks_exact(8).map(|chunk| {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        f64::from_le_bytes(word)
    })
}

/// Encodes `values` as little-endian f64 bits into `out` (cleared first).
pub fn f64s_into(values: &[f64], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(values.len() * 8);
    for value in values {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_messages_round_trip_and_bytes_without_magic_are_not_optboost() {
        let hello = Hello {
            rank: 3,
            world: 4096,
            nonce: [7; NONCE_LEN],
            tag: [9; TAG_LEN],
        };
        let bytes = hello.encode();
        assert_eq!(version_of(&bytes), Some(PROTOCOL_VERSION));
        assert_eq!(Hello::decode(&bytes), hello);
        let mut garbage = bytes;
        garbage[0] = b'G';
        assert_eq!(version_of(&garbage), None);
        assert_eq!(version_of(b"OPTBCOL"), None);
        let challenge = encode_challenge(&[5; NONCE_LEN]);
        assert_eq!(version_of(&challenge), Some(PROTOCOL_VERSION));
        assert_eq!(challenge_nonce(&challenge), [5; NONCE_LEN]);
        let reply = Reply {
            verdict: Verdict::DuplicateRank,
            tag: [1; TAG_LEN],
        };
        assert_eq!(Reply::decode(&reply.encode()), reply);
    }

    #[test]
    fn verdicts_and_kinds_round_trip_including_unknown_codes() {
        for code in 0..=u8::MAX {
            assert_eq!(Verdict::from_code(code).code(), code);
            assert_eq!(Kind::from_code(code).code(), code);
        }
    }

    #[test]
    fn header_layout_is_kind_then_little_endian_sequence_and_length() {
        let header = Header {
            kind: Kind::Gather,
            seq: 0x0102,
            len: 1 << 60,
        };
        let bytes = header.encode();
        assert_eq!(bytes[0], 3);
        assert_eq!(&bytes[1..9], &0x0102u64.to_le_bytes());
        assert_eq!(&bytes[9..17], &(1u64 << 60).to_le_bytes());
        assert_eq!(Header::decode(&bytes), header);
        assert_eq!(Header::decode(&[9u8; HEADER_LEN]).kind, Kind::Unknown(9));
    }

    #[test]
    fn f64_bits_survive_encoding() {
        let values = [1e16, -0.0, f64::MIN_POSITIVE, 1.0 / 3.0, f64::INFINITY];
        let mut bytes = Vec::new();
        f64s_into(&values, &mut bytes);
        assert_eq!(bytes.len(), 40);
        let back: Vec<f64> = f64s_from(&bytes).collect();
        for (a, b) in values.iter().zip(&back) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn seconds_are_written_without_trailing_zeros() {
        assert_eq!(seconds(Duration::from_secs(600)), "600 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25 s");
    }
}
