//! The join of the TCP collective under attack, over loopback: forged and replayed hellos, roots
//! without the secret, a rank claimed twice, garbage, floods of idle and slow connections opened
//! before the workers, handshakes cut off, and a seeded fuzz mixing them all. Whatever strangers
//! send, a job either completes with the sums of its real ranks, bit for bit, or fails naming
//! why; never a forged result, a panic or a hang (every thread is joined under a watchdog).

mod common;
mod join_support;

use common::TestRng;
use join_support::{
    connect_retrying, raw_join, read_challenge, read_reply, relay, tag, BAD_PROOF, DUPLICATE_RANK,
    JOINED, JOIN_ABANDONED, VERSION_MISMATCH,
};
use optboost::collective::{Collective, Tcp};
use optboost::Error;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

const SECRET: &[u8] = b"join fuzz: the real job's secret";
const OTHER_SECRET: &[u8] = b"join fuzz: another job's secret!";
const SHORT: Duration = Duration::from_secs(5);
const WATCHDOG: Duration = Duration::from_secs(40);

fn free_root() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("127.0.0.1:{}", listener.local_addr().unwrap().port())
}

/// Rank `rank`'s contribution: magnitudes chosen so that the order of addition changes the bits.
fn contribution(rank: usize) -> Vec<f64> {
    [1e16, -1e16, 0.1, 3.0]
        .iter()
        .map(|value| value * (1.0 + rank as f64 / 7.0))
        .collect()
}

/// What every rank of an untroubled job gets: the contributions added in rank order.
fn expected_bits(world: usize) -> Vec<u64> {
    let mut total = contribution(0);
    for rank in 1..world {
        for (sum, value) in total.iter_mut().zip(contribution(rank)) {
            *sum += value;
        }
    }
    total.iter().map(|value| value.to_bits()).collect()
}

/// One rank on its own thread: joins `root` (perhaps through a relay at `via`), sums its
/// contribution, returns the bits or the error text.
fn rank_thread(
    rank: usize,
    world: usize,
    via: &str,
    secret: &'static [u8],
    timeout: Duration,
) -> JoinHandle<Result<Vec<u64>, String>> {
    let via = via.to_string();
    thread::spawn(move || {
        let tcp = Tcp::connect(rank, world, &via, secret, timeout).map_err(|e| e.to_string())?;
        let mut values = contribution(rank);
        tcp.sum(&mut values);
        match tcp.failure() {
            Some(error) => Err(error.to_string()),
            None => Ok(values.iter().map(|value| value.to_bits()).collect()),
        }
    })
}

fn join_all<T>(handles: Vec<JoinHandle<T>>) -> Vec<T> {
    let deadline = Instant::now() + WATCHDOG;
    while !handles.iter().all(JoinHandle::is_finished) {
        assert!(
            Instant::now() < deadline,
            "not finished within {WATCHDOG:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
    handles
        .into_iter()
        .map(|handle| {
            handle
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
        .collect()
}

/// Starts the root (rank 0 of `world`), waits until it listens, then returns its thread.
fn start_root(root: &str, world: usize, timeout: Duration) -> JoinHandle<Result<Vec<u64>, String>> {
    let handle = rank_thread(0, world, root, SECRET, timeout);
    // The probe is one more idle connection, dropped at once.
    drop(connect_retrying(root, SHORT));
    handle
}

fn completes_with_the_real_sums(
    root: JoinHandle<Result<Vec<u64>, String>>,
    world: usize,
    via: &str,
) {
    let mut ranks = vec![root];
    ranks.extend((1..world).map(|rank| rank_thread(rank, world, via, SECRET, SHORT)));
    for outcome in join_all(ranks) {
        assert_eq!(outcome, Ok(expected_bits(world)));
    }
}

/// Writes one byte of a hello to every stream each `pause` until stopped: slow-loris clients
/// (the magic and version first, so the root cannot drop them as garbage).
struct Drip {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Drip {
    fn start(mut streams: Vec<TcpStream>, pause: Duration) -> Drip {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let hello = join_support::hello(1, 3, &[6; 32], &[6; 32]);
        let handle = thread::spawn(move || {
            for byte in hello.iter().cycle() {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                for stream in &mut streams {
                    let _ = stream.write_all(&[*byte]);
                }
                thread::sleep(pause);
            }
        });
        Drip { stop, handle }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap();
    }
}

fn connections(root: &str, n: usize) -> Vec<TcpStream> {
    (0..n).map(|_| connect_retrying(root, SHORT)).collect()
}

#[test]
fn hellos_without_the_secret_are_refused_and_the_job_completes() {
    let root = free_root();
    let root_rank = start_root(&root, 3, SHORT);
    let forged = raw_join(&root, OTHER_SECRET, 1, 3, 1);
    assert_eq!(forged.verdict, Some(BAD_PROOF));
    // The right layout, rank and world, and a tag of noise.
    let mut stream = connect_retrying(&root, SHORT);
    read_challenge(&mut stream).unwrap();
    stream
        .write_all(&join_support::hello(1, 3, &[5; 32], &[0xa5; 32]))
        .unwrap();
    assert_eq!(read_reply(&mut stream).map(|r| r.0), Some(BAD_PROOF));
    // An old worker's unprompted 36-byte hello (protocol version 1).
    let mut old = connect_retrying(&root, SHORT);
    let mut hello = b"OPTBCOLL".to_vec();
    hello.extend_from_slice(&1u32.to_le_bytes());
    hello.extend_from_slice(&[0u8; 24]);
    old.write_all(&hello).unwrap();
    read_challenge(&mut old).unwrap();
    assert_eq!(read_reply(&mut old).map(|r| r.0), Some(VERSION_MISMATCH));
    completes_with_the_real_sums(root_rank, 3, &root);
}

#[test]
fn a_hello_replayed_from_another_handshake_or_job_is_refused() {
    // A first job, its worker's bytes captured on the way (an eavesdropper on the network).
    let first = free_root();
    let first_root = start_root(&first, 2, SHORT);
    let tap = relay(first.clone(), 0);
    completes_with_the_real_sums(first_root, 2, &tap.addr);
    tap.handle.join().unwrap();
    let captured = tap.sent_by_worker.lock().unwrap().clone();
    let hello = captured[..join_support::HELLO_LEN].to_vec();
    assert_eq!(
        &hello[12..20],
        &1u64.to_le_bytes(),
        "the captured hello of rank 1"
    );

    // A later job with the same secret, and one with another: the hello proves nothing in either.
    for secret in [SECRET, OTHER_SECRET] {
        let root = free_root();
        let root_rank = rank_thread(0, 2, &root, secret, SHORT);
        let mut replay = connect_retrying(&root, SHORT);
        read_challenge(&mut replay).unwrap();
        replay.write_all(&hello).unwrap();
        assert_eq!(read_reply(&mut replay).map(|r| r.0), Some(BAD_PROOF));
        // Two handshakes under way at once: a proof made for one is worth nothing in the other.
        let mut one = connect_retrying(&root, SHORT);
        let mut other = connect_retrying(&root, SHORT);
        let nonce = read_challenge(&mut one).unwrap();
        read_challenge(&mut other).unwrap();
        let proof = tag(secret, None, &nonce, &[8; 32], 1, 2);
        other
            .write_all(&join_support::hello(1, 2, &[8; 32], &proof))
            .unwrap();
        assert_eq!(read_reply(&mut other).map(|r| r.0), Some(BAD_PROOF));
        let worker = rank_thread(1, 2, &root, secret, SHORT);
        for outcome in join_all(vec![root_rank, worker]) {
            assert_eq!(outcome, Ok(expected_bits(2)));
        }
    }
}

/// The tag an impostor puts on its "joined", from the root's and the worker's nonces.
type ImpostorProof = fn(&[u8; 32], &[u8; 32]) -> [u8; 32];

/// An impostor on the root's port: sends a challenge, reads the hello, and answers "joined"
/// with `proof(root_nonce, worker_nonce)` as its tag.
fn impostor(proof: ImpostorProof) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let root = listener.local_addr().unwrap().to_string();
    let handle = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(SHORT)).unwrap();
        let root_nonce = [4u8; 32];
        stream
            .write_all(&join_support::challenge(&root_nonce))
            .unwrap();
        let mut hello = [0u8; join_support::HELLO_LEN];
        stream.read_exact(&mut hello).unwrap();
        let worker_nonce: [u8; 32] = hello[28..60].try_into().unwrap();
        let reply = join_support::reply(JOINED, &proof(&root_nonce, &worker_nonce));
        stream.write_all(&reply).unwrap();
        let _ = stream.read(&mut [0u8; 1]);
    });
    (root, handle)
}

#[test]
fn a_worker_trusts_no_root_that_cannot_prove_the_secret() {
    let proofs: [ImpostorProof; 3] = [
        |_, _| [0; 32],
        |root, worker| tag(OTHER_SECRET, Some(JOINED), root, worker, 1, 2),
        // A reply of the real root replayed from another handshake (another worker nonce).
        |root, _| tag(SECRET, Some(JOINED), root, &[9; 32], 1, 2),
    ];
    for proof in proofs {
        let (root, fake) = impostor(proof);
        let outcome = join_all(vec![rank_thread(1, 2, &root, SECRET, SHORT)]).remove(0);
        join_all(vec![fake]);
        let error = outcome.unwrap_err();
        assert!(
            error.contains("did not prove it holds this job's secret"),
            "{error}"
        );
    }
}

#[test]
fn a_rank_claimed_twice_fails_the_job_naming_it_however_the_claims_arrive() {
    for real_first in [false, true] {
        let root = free_root();
        let root_rank = start_root(&root, 3, SHORT);
        let (mut claimant, real) = if real_first {
            let real = rank_thread(2, 3, &root, SECRET, SHORT);
            // The real rank 2 has most likely taken its slot by then (rank 1 never comes); the
            // job must fail whichever claim came first.
            thread::sleep(Duration::from_millis(300));
            (raw_join(&root, SECRET, 2, 3, 7), real)
        } else {
            let claimant = raw_join(&root, SECRET, 2, 3, 7);
            assert_eq!(claimant.verdict, Some(JOINED));
            (claimant, rank_thread(2, 3, &root, SECRET, SHORT))
        };
        let outcomes = join_all(vec![root_rank, real]);
        let root_error = outcomes[0].clone().unwrap_err();
        assert!(
            root_error.contains("rank 2 was claimed twice"),
            "{root_error}"
        );
        let real_error = outcomes[1].clone().unwrap_err();
        assert!(
            real_error.contains("as rank 2") || real_error.contains("gave up the join"),
            "{real_error}"
        );
        // The claimant is refused, or (when the real rank was late) taken and then told the
        // job will not start.
        let told = match claimant.verdict {
            Some(JOINED) => read_reply(&mut claimant.stream).map(|r| r.0),
            other => other,
        };
        let expected = if claimant.verdict == Some(JOINED) {
            JOIN_ABANDONED
        } else {
            DUPLICATE_RANK
        };
        assert_eq!(told, Some(expected));
    }
}

#[test]
fn idle_and_slow_connections_opened_before_the_workers_do_not_keep_them_out() {
    let root = free_root();
    let root_rank = start_root(&root, 3, SHORT);
    let idle = connections(&root, 300);
    let drip = Drip::start(connections(&root, 70), Duration::from_millis(500));
    completes_with_the_real_sums(root_rank, 3, &root);
    drip.stop();
    drop(idle);
}

#[test]
fn a_worker_whose_handshakes_are_cut_off_tries_again_until_it_joins() {
    let root = free_root();
    let root_rank = start_root(&root, 2, SHORT);
    let cutter = relay(root.clone(), 3);
    completes_with_the_real_sums(root_rank, 2, &cutter.addr);
    cutter.handle.join().unwrap();
}

#[test]
fn the_root_counts_the_connections_it_refused_and_why() {
    let root = free_root();
    // Long enough past the handshakes' 3 s for every stranger to be judged before the root
    // gives up, even on a loaded machine.
    let root_rank = rank_thread(0, 2, &root, SECRET, Duration::from_secs(6));
    let first_idle = connections(&root, 70);
    let later_idle = connections(&root, 5);
    let drip = Drip::start(connections(&root, 2), Duration::from_millis(100));
    let mut garbage = connect_retrying(&root, SHORT);
    garbage.write_all(&[0x16; 200]).unwrap();
    let forged = raw_join(&root, OTHER_SECRET, 1, 2, 1);
    assert_eq!(forged.verdict, Some(BAD_PROOF));
    let error = join_all(vec![root_rank]).remove(0).unwrap_err();
    drip.stop();
    drop((first_idle, later_idle));
    for part in [
        "rank 1 never joined",
        // The probe of rank_thread's caller is not there: 70 + 5 + 2 + 1 + 1.
        "refused 79 connection(s)",
        "1 did not prove the job secret",
        "1 sent bytes that are not an optboost hello",
        "sent nothing within 3 s",
        "2 had not sent a whole hello within 3 s",
        "were cut off unfinished to make room for newer connections (66 handshakes at most",
    ] {
        assert!(error.contains(part), "{part:?} not in: {error}");
    }
}

/// What a stranger does in a fuzz case.
#[derive(Debug, Clone, Copy)]
enum Stranger {
    Garbage,
    Idle,
    Slow,
    WrongSecret,
    /// A hello with the real secret's tag over another handshake's nonce, as if captured there.
    Replay,
    RandomHello,
    Truncated,
}

fn play(stranger: Stranger, root: &str, rng: &mut TestRng) -> Option<TcpStream> {
    let mut stream = TcpStream::connect(root).ok()?;
    stream.set_read_timeout(Some(SHORT)).ok()?;
    let rank = rng.below(4) as u64;
    let world = 2 + rng.below(3) as u64;
    match stranger {
        Stranger::Garbage => {
            let bytes: Vec<u8> = (0..rng.below(300)).map(|_| rng.next_u64() as u8).collect();
            let _ = stream.write_all(&bytes);
        }
        Stranger::Idle | Stranger::Slow => {}
        Stranger::WrongSecret | Stranger::Replay | Stranger::RandomHello => {
            let nonce = read_challenge(&mut stream)?;
            let other_nonce = [rng.next_u64() as u8; 32];
            let proof = match stranger {
                Stranger::WrongSecret => tag(OTHER_SECRET, None, &nonce, &[1; 32], rank, world),
                Stranger::Replay => tag(SECRET, None, &other_nonce, &[1; 32], rank, world),
                _ => [rng.next_u64() as u8; 32],
            };
            let _ = stream.write_all(&join_support::hello(rank, world, &[1; 32], &proof));
            let verdict = read_reply(&mut stream).map(|reply| reply.0);
            assert!(
                matches!(verdict, Some(BAD_PROOF) | None),
                "{stranger:?}: {verdict:?}"
            );
        }
        Stranger::Truncated => {
            let hello = join_support::hello(rank, world, &[1; 32], &[2; 32]);
            let _ = stream.write_all(&hello[..rng.below(hello.len())]);
            return None;
        }
    }
    Some(stream)
}

#[test]
fn seeded_join_fuzz_never_forges_never_hangs() {
    const KINDS: [Stranger; 7] = [
        Stranger::Garbage,
        Stranger::Idle,
        Stranger::Slow,
        Stranger::WrongSecret,
        Stranger::Replay,
        Stranger::RandomHello,
        Stranger::Truncated,
    ];
    let (mut completed, mut stopped) = (0, 0);
    for seed in 0..24u64 {
        let mut rng = TestRng::new(seed);
        let world = 3;
        let root = free_root();
        let root_rank = start_root(&root, world, SHORT);
        let strangers: Vec<Stranger> = (0..1 + rng.below(100))
            .map(|_| KINDS[rng.below(KINDS.len())])
            .collect();
        let duplicate = rng.chance(0.25).then(|| 1 + rng.below(world - 1));
        let mut held = Vec::new();
        let mut slow = Vec::new();
        for &stranger in &strangers {
            if let Some(stream) = play(stranger, &root, &mut rng) {
                match stranger {
                    Stranger::Slow => slow.push(stream),
                    _ => held.push(stream),
                }
            }
        }
        let drip = Drip::start(slow, Duration::from_millis(50));
        let case = format!("seed {seed}: {strangers:?}, duplicate {duplicate:?}");
        match duplicate {
            None => {
                let mut ranks = vec![root_rank];
                ranks.extend((1..world).map(|rank| rank_thread(rank, world, &root, SECRET, SHORT)));
                for outcome in join_all(ranks) {
                    assert_eq!(outcome, Ok(expected_bits(world)), "{case}");
                }
                completed += 1;
            }
            Some(rank) => {
                let claim = raw_join(&root, SECRET, rank as u64, world as u64, seed as u8);
                assert_eq!(claim.verdict, Some(JOINED), "{case}");
                let real = rank_thread(rank, world, &root, SECRET, SHORT);
                let outcomes = join_all(vec![root_rank, real]);
                let named = format!("rank {rank} was claimed twice");
                assert!(
                    matches!(&outcomes[0], Err(error) if error.contains(&named)),
                    "{case}: {outcomes:?}"
                );
                assert!(outcomes[1].is_err(), "{case}: {outcomes:?}");
                stopped += 1;
            }
        }
        drip.stop();
    }
    assert!(
        completed > 0 && stopped > 0,
        "{completed} completed, {stopped} stopped"
    );
}

#[test]
fn errors_never_show_the_secret() {
    let root = free_root();
    let error = match Tcp::connect(1, 2, &root, SECRET, Duration::from_millis(200)) {
        Err(Error::Training(message)) => message,
        other => panic!("expected a join failure, got {other:?}"),
    };
    let text = String::from_utf8_lossy(SECRET);
    assert!(!error.contains(&*text) && !format!("{error:?}").contains(&*text));
    let param = Tcp::connect(1, 2, &root, &SECRET[..8], SHORT).unwrap_err();
    assert!(!format!("{param} {param:?}").contains(&*String::from_utf8_lossy(&SECRET[..8])));
}
