//! The join handshake of the TCP collective spoken from raw sockets, as the protocol documents it
//! (`optboost::collective`'s module doc) and written independently of the crate's encoder: honest
//! and dishonest workers and roots for the join tests.
#![allow(dead_code)]

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

pub const VERSION: u32 = 2;
pub const CHALLENGE_LEN: usize = 44;
pub const HELLO_LEN: usize = 92;
pub const REPLY_LEN: usize = 45;
pub const START: u8 = 0;
pub const VERSION_MISMATCH: u8 = 1;
pub const BAD_PROOF: u8 = 2;
pub const WORLD_MISMATCH: u8 = 3;
pub const RANK_OUT_OF_RANGE: u8 = 4;
pub const DUPLICATE_RANK: u8 = 5;
pub const JOIN_ABANDONED: u8 = 6;
pub const JOINED: u8 = 7;

const HELLO_LABEL: &[u8] = b"optboost join v2: worker hello";
const REPLY_LABEL: &[u8] = b"optboost join v2: root reply";

/// HMAC-SHA256 under `secret` over the label (length-prefixed), both nonces, rank and world, and
/// the verdict for the root's replies.
pub fn tag(
    secret: &[u8],
    reply_verdict: Option<u8>,
    root_nonce: &[u8; 32],
    worker_nonce: &[u8; 32],
    rank: u64,
    world: u64,
) -> [u8; 32] {
    let label = if reply_verdict.is_some() {
        REPLY_LABEL
    } else {
        HELLO_LABEL
    };
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).unwrap();
    mac.update(&(label.len() as u64).to_le_bytes());
    mac.update(label);
    mac.update(root_nonce);
    mac.update(worker_nonce);
    mac.update(&rank.to_le_bytes());
    mac.update(&world.to_le_bytes());
    if let Some(verdict) = reply_verdict {
        mac.update(&[verdict]);
    }
    mac.finalize().into_bytes().into()
}

pub fn prefix() -> Vec<u8> {
    let mut bytes = b"OPTBCOLL".to_vec();
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes
}

pub fn challenge(root_nonce: &[u8; 32]) -> Vec<u8> {
    [prefix(), root_nonce.to_vec()].concat()
}

pub fn hello(rank: u64, world: u64, worker_nonce: &[u8; 32], tag: &[u8; 32]) -> Vec<u8> {
    [
        prefix(),
        rank.to_le_bytes().to_vec(),
        world.to_le_bytes().to_vec(),
        worker_nonce.to_vec(),
        tag.to_vec(),
    ]
    .concat()
}

pub fn reply(verdict: u8, tag: &[u8; 32]) -> Vec<u8> {
    [prefix(), vec![verdict], tag.to_vec()].concat()
}

/// Connects, retrying while the root is not listening yet.
pub fn connect_retrying(root: &str, patience: Duration) -> TcpStream {
    let deadline = Instant::now() + patience;
    loop {
        match TcpStream::connect(root) {
            Ok(stream) => {
                stream.set_read_timeout(Some(patience)).unwrap();
                return stream;
            }
            Err(err) if Instant::now() > deadline => {
                panic!("cannot reach the root at {root}: {err}")
            }
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// The root's nonce from its challenge (`None`: no challenge came).
pub fn read_challenge(stream: &mut TcpStream) -> Option<[u8; 32]> {
    let mut bytes = [0u8; CHALLENGE_LEN];
    stream.read_exact(&mut bytes).ok()?;
    assert_eq!(
        &bytes[..12],
        &prefix()[..],
        "a challenge of protocol version 2"
    );
    Some(bytes[12..].try_into().unwrap())
}

/// The root's verdict and tag, or `None` if it closed the connection without one.
pub fn read_reply(stream: &mut TcpStream) -> Option<(u8, [u8; 32])> {
    let mut bytes = [0u8; REPLY_LEN];
    stream.read_exact(&mut bytes).ok()?;
    assert_eq!(&bytes[..12], &prefix()[..]);
    Some((bytes[12], bytes[13..].try_into().unwrap()))
}

/// One handshake of a worker that holds `secret`: what it sent (to be replayed), the root's
/// first verdict and the connection.
pub struct RawJoin {
    pub stream: TcpStream,
    pub hello: Vec<u8>,
    pub root_nonce: [u8; 32],
    pub worker_nonce: [u8; 32],
    pub verdict: Option<u8>,
}

pub fn raw_join(root: &str, secret: &[u8], rank: u64, world: u64, nonce_seed: u8) -> RawJoin {
    let mut stream = connect_retrying(root, Duration::from_secs(5));
    let root_nonce = read_challenge(&mut stream).expect("the root sends a challenge");
    let worker_nonce = [nonce_seed; 32];
    let tag = tag(secret, None, &root_nonce, &worker_nonce, rank, world);
    let hello = hello(rank, world, &worker_nonce, &tag);
    stream.write_all(&hello).unwrap();
    let verdict = read_reply(&mut stream).map(|(verdict, reply_tag)| {
        if verdict == JOINED {
            let expected = self::tag(
                secret,
                Some(JOINED),
                &root_nonce,
                &worker_nonce,
                rank,
                world,
            );
            assert_eq!(reply_tag, expected, "the root proves the secret");
        }
        verdict
    });
    RawJoin {
        stream,
        hello,
        root_nonce,
        worker_nonce,
        verdict,
    }
}

/// A TCP relay in front of the root: closes the first `drop_first` connections at once (a
/// handshake cut off, as by a flooded root), relays the next one and records what the worker
/// sent through it.
pub struct Relay {
    pub addr: String,
    pub sent_by_worker: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    pub handle: thread::JoinHandle<()>,
}

pub fn relay(target: String, drop_first: usize) -> Relay {
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let sent_by_worker = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&sent_by_worker);
    let handle = thread::spawn(move || {
        for _ in 0..drop_first {
            drop(listener.accept().unwrap());
        }
        let (worker, _) = listener.accept().unwrap();
        let root = TcpStream::connect(&target).unwrap();
        let (mut from_worker, mut to_root) =
            (worker.try_clone().unwrap(), root.try_clone().unwrap());
        let upstream = thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = from_worker.read(&mut buffer) {
                if n == 0 || to_root.write_all(&buffer[..n]).is_err() {
                    break;
                }
                record.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
            let _ = to_root.shutdown(std::net::Shutdown::Write);
        });
        let (mut from_root, mut to_worker) = (root, worker);
        let _ = std::io::copy(&mut from_root, &mut to_worker);
        let _ = to_worker.shutdown(std::net::Shutdown::Write);
        upstream.join().unwrap();
    });
    Relay {
        addr,
        sent_by_worker,
        handle,
    }
}
