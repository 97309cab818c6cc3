//! The TCP collective between threads on 127.0.0.1: results (bit-identical, summed in rank
//! order), joining (late, stray, duplicate and missing ranks), failures (a peer that dies or goes
//! silent, malformed frames) and argument errors. Every test uses short timeouts, and every
//! thread it starts is joined under a watchdog, so a bug shows as a failure, not a hang.

mod join_support;

use join_support::{raw_join, read_challenge, read_reply, tag};
use optboost::collective::{Collective, Local, Tcp, Traffic, MAX_GATHER_BYTES};
use optboost::Error;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

const SECRET: &[u8] = b"the collective tests' job secret";
const SHORT: Duration = Duration::from_secs(5);
/// Longest any test's threads may run before the test is declared hung.
const WATCHDOG: Duration = Duration::from_secs(60);

/// A port that was free a moment ago. The listener is dropped before the root binds the port,
/// so another process could take it in between; that race is tiny on a test machine and would
/// show as the root's clear "cannot listen" error, not as a wrong result.
fn free_root() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    format!("127.0.0.1:{port}")
}

/// Starts one rank on its own thread: waits `delay`, joins, then runs `body`.
fn spawn_rank<T: Send + 'static>(
    rank: usize,
    world: usize,
    root: &str,
    timeout: Duration,
    delay: Duration,
    body: impl FnOnce(Tcp) -> T + Send + 'static,
) -> JoinHandle<T> {
    let root = root.to_string();
    thread::spawn(move || {
        thread::sleep(delay);
        let tcp = Tcp::connect(rank, world, &root, SECRET, timeout)
            .unwrap_or_else(|err| panic!("rank {rank} could not join: {err}"));
        body(tcp)
    })
}

/// Joins `handles`, failing the test if they have not all finished within the watchdog.
fn join_all<T>(handles: Vec<JoinHandle<T>>) -> Vec<T> {
    let deadline = Instant::now() + WATCHDOG;
    while !handles.iter().all(JoinHandle::is_finished) {
        assert!(
            Instant::now() < deadline,
            "the ranks did not finish within {WATCHDOG:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
    handles
        .into_iter()
        .map(|handle| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect()
}

/// Runs `body` on every rank of a fresh job of `world` ranks; results in rank order.
fn run_job<T: Send + 'static>(
    world: usize,
    timeout: Duration,
    body: impl Fn(Tcp) -> T + Send + Sync + Clone + 'static,
) -> Vec<T> {
    let root = free_root();
    let handles = (0..world)
        .map(|rank| spawn_rank(rank, world, &root, timeout, Duration::ZERO, body.clone()))
        .collect();
    join_all(handles)
}

fn failure_text(collective: &dyn Collective) -> String {
    match collective.failure() {
        Some(Error::Training(message)) => message,
        other => panic!("expected a training failure, got {other:?}"),
    }
}

/// Rank `rank`'s contribution: magnitudes chosen so that the order of addition changes the bits.
fn contribution(rank: usize) -> Vec<f64> {
    let pattern = [1e16, -1e16, 1.0, 0.5, 3.0];
    (0..8)
        .map(|element| pattern[(rank + element) % pattern.len()] * (1.0 + element as f64 / 10.0))
        .chain([0.1 * (rank + 1) as f64, -0.0])
        .collect()
}

fn in_rank_order(world: usize, combine: fn(f64, f64) -> f64) -> Vec<f64> {
    let mut total = contribution(0);
    for rank in 1..world {
        for (acc, value) in total.iter_mut().zip(contribution(rank)) {
            *acc = combine(*acc, value);
        }
    }
    total
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|value| value.to_bits()).collect()
}

#[test]
fn sums_are_bit_identical_on_every_rank_and_added_in_rank_order() {
    for world in 1..=4 {
        let results = run_job(world, SHORT, |tcp| {
            let mut values = contribution(tcp.rank());
            tcp.sum(&mut values);
            assert_eq!(tcp.failure(), None);
            values
        });
        let expected = in_rank_order(world, |a, b| a + b);
        for (rank, result) in results.iter().enumerate() {
            assert_eq!(bits(result), bits(&expected), "world {world}, rank {rank}");
        }
    }
    // The data must make the order visible, or the test above would prove nothing about it.
    let mut reversed = contribution(2);
    for rank in [1, 0] {
        for (acc, value) in reversed.iter_mut().zip(contribution(rank)) {
            *acc += value;
        }
    }
    assert_ne!(bits(&reversed), bits(&in_rank_order(3, |a, b| a + b)));
}

#[test]
fn maxima_are_element_wise_over_all_ranks() {
    for world in 1..=4 {
        let results = run_job(world, SHORT, |tcp| {
            let mut values = contribution(tcp.rank());
            tcp.max(&mut values);
            values
        });
        let expected = in_rank_order(world, f64::max);
        for result in &results {
            assert_eq!(bits(result), bits(&expected), "world {world}");
        }
    }
}

#[test]
fn all_gather_returns_every_ranks_bytes_by_rank_including_empty_ones() {
    for world in 1..=4 {
        let payload = |rank: usize| vec![rank as u8 + 7; rank * 3];
        let results = run_job(world, SHORT, move |tcp| {
            let uneven = tcp.all_gather(&payload(tcp.rank()));
            let empty = tcp.all_gather(&[]);
            (uneven, empty)
        });
        let expected: Vec<Vec<u8>> = (0..world).map(payload).collect();
        for (uneven, empty) in results {
            assert_eq!(uneven, expected, "world {world}");
            assert_eq!(empty, vec![Vec::<u8>::new(); world]);
        }
    }
}

#[test]
fn a_thousand_calls_in_a_row_stay_in_step_and_are_counted() {
    let world = 3;
    let calls = 1000u64;
    let results = run_job(world, SHORT, move |tcp| {
        for call in 0..calls {
            let mut values = [tcp.rank() as f64 + call as f64];
            tcp.sum(&mut values);
            assert_eq!(values[0], 3.0 + 3.0 * call as f64, "call {call}");
        }
        assert_eq!(tcp.failure(), None);
        tcp.traffic()
    });
    let frame = 17 + 8;
    assert_eq!(
        results[0],
        Traffic {
            bytes_sent: calls * frame * 2,
            bytes_received: calls * frame * 2,
            messages: calls * 4
        }
    );
    for worker in &results[1..] {
        let expected = Traffic {
            bytes_sent: calls * frame,
            bytes_received: calls * frame,
            messages: calls * 2,
        };
        assert_eq!(*worker, expected);
    }
}

#[test]
fn payloads_larger_than_the_socket_buffers_go_through() {
    // 8 MB per rank and call: the writers block until the root reads, in rank order.
    let len = 1 << 20;
    let results = run_job(3, SHORT, move |tcp| {
        let rank = tcp.rank() as f64;
        let mut values: Vec<f64> = (0..len).map(|i| i as f64 * (rank + 1.0)).collect();
        tcp.sum(&mut values);
        let gathered = tcp.all_gather(&vec![tcp.rank() as u8; 3 << 20]);
        assert_eq!(tcp.failure(), None);
        (values, gathered)
    });
    let expected: Vec<f64> = (0..len).map(|i| i as f64 * 6.0).collect();
    for (values, gathered) in results {
        assert!(values == expected);
        assert!((0..3).all(|rank| gathered[rank] == vec![rank as u8; 3 << 20]));
    }
}

#[test]
fn local_is_the_one_rank_job() {
    let mut values = contribution(0);
    Local.sum(&mut values);
    assert_eq!(bits(&values), bits(&contribution(0)));
    assert_eq!(Local.all_gather(b"only"), vec![b"only".to_vec()]);
}

#[test]
fn a_rank_that_joins_late_is_waited_for() {
    let root = free_root();
    let handles = (0..3)
        .map(|rank| {
            let delay = Duration::from_millis(if rank == 2 { 200 } else { 0 });
            spawn_rank(rank, 3, &root, SHORT, delay, |tcp| {
                let mut values = [1.0];
                tcp.sum(&mut values);
                values[0]
            })
        })
        .collect();
    assert_eq!(join_all(handles), vec![3.0; 3]);
}

// ---- Failures during calls ----

#[test]
fn a_worker_that_dies_fails_the_next_call_promptly_on_every_other_rank() {
    let root = free_root();
    let survivor = |tcp: Tcp| {
        let mut values = [1.0, 2.0];
        tcp.sum(&mut values);
        assert_eq!(values, [3.0, 6.0]);
        let started = Instant::now();
        tcp.sum(&mut values);
        let waited = started.elapsed();
        assert_eq!(
            values,
            [3.0, 6.0],
            "a failed sum leaves the values as they were"
        );
        let gathered = tcp.all_gather(b"mine");
        let mut alone = vec![Vec::new(); 3];
        alone[tcp.rank()] = b"mine".to_vec();
        assert_eq!(gathered, alone);
        (waited, failure_text(&tcp))
    };
    let dying = |tcp: Tcp| {
        let mut values = [1.0, 2.0];
        tcp.sum(&mut values);
        drop(tcp);
        (Duration::ZERO, String::new())
    };
    let handles = vec![
        spawn_rank(0, 3, &root, SHORT, Duration::ZERO, survivor),
        spawn_rank(1, 3, &root, SHORT, Duration::ZERO, dying),
        spawn_rank(2, 3, &root, SHORT, Duration::ZERO, survivor),
    ];
    let results = join_all(handles);
    for rank in [0, 2] {
        let (waited, message) = &results[rank];
        assert!(
            *waited < Duration::from_secs(2),
            "rank {rank} waited {waited:?}"
        );
        assert!(
            message.contains("during a sum (call 2)"),
            "rank {rank}: {message}"
        );
    }
    assert!(
        results[0]
            .1
            .contains("lost the connection to worker rank 1 (127.0.0.1:"),
        "{}",
        results[0].1
    );
    // Rank 2 reads the root's reason when it arrives before the root closes the socket; when
    // rank 2 is still writing its part then, it sees only the closed connection (documented in
    // src/collective/mod.rs). Either way it fails promptly, naming whom it lost.
    let relayed = results[2].1.starts_with("the root ended the job")
        && results[2].1.contains("worker rank 1");
    let closed = results[2]
        .1
        .contains("lost the connection to the root (rank 0");
    assert!(relayed || closed, "{}", results[2].1);
}

#[test]
fn a_root_that_dies_fails_the_workers_next_call_promptly() {
    let root = free_root();
    let worker = |tcp: Tcp| {
        let mut values = [1.0];
        tcp.sum(&mut values);
        let started = Instant::now();
        tcp.sum(&mut values);
        (started.elapsed(), failure_text(&tcp))
    };
    let handles = vec![
        spawn_rank(0, 3, &root, SHORT, Duration::ZERO, |tcp: Tcp| {
            tcp.sum(&mut [1.0]);
            (Duration::ZERO, String::new())
        }),
        spawn_rank(1, 3, &root, SHORT, Duration::ZERO, worker),
        spawn_rank(2, 3, &root, SHORT, Duration::ZERO, worker),
    ];
    for (waited, message) in join_all(handles).into_iter().skip(1) {
        assert!(waited < Duration::from_secs(2), "waited {waited:?}");
        assert!(
            message.contains("lost the connection to the root (rank 0, 127.0.0.1:"),
            "{message}"
        );
    }
}

#[test]
fn a_silent_worker_is_named_once_the_timeout_passes() {
    let timeout = Duration::from_secs(1);
    let root = free_root();
    let caller = |tcp: Tcp| {
        let started = Instant::now();
        tcp.sum(&mut [1.0]);
        (started.elapsed(), failure_text(&tcp))
    };
    let silent = |tcp: Tcp| {
        thread::sleep(Duration::from_secs(4));
        drop(tcp);
        (Duration::ZERO, String::new())
    };
    let handles = vec![
        spawn_rank(0, 3, &root, timeout, Duration::ZERO, caller),
        spawn_rank(1, 3, &root, timeout, Duration::ZERO, silent),
        spawn_rank(2, 3, &root, timeout, Duration::ZERO, caller),
    ];
    let results = join_all(handles);
    let (waited, message) = &results[0];
    assert!(
        *waited >= timeout && *waited < Duration::from_secs(3),
        "root waited {waited:?}"
    );
    assert!(message.contains("worker rank 1 (127.0.0.1:"), "{message}");
    assert!(
        message.contains("sent no message within 1 s during a sum (call 1)"),
        "{message}"
    );
    let (waited, message) = &results[2];
    assert!(*waited < Duration::from_secs(3), "rank 2 waited {waited:?}");
    assert!(
        message.contains("the root ended the job") && message.contains("worker rank 1"),
        "{message}"
    );
}

#[test]
fn ranks_out_of_step_fail_instead_of_mixing_calls() {
    let slices = run_job(2, SHORT, |tcp| {
        let mut values = vec![1.0; 2 + tcp.rank()];
        tcp.sum(&mut values);
        failure_text(&tcp)
    });
    assert!(
        slices[0].contains("worker rank 1") && slices[0].contains("different lengths"),
        "{}",
        slices[0]
    );
    assert!(slices[1].contains("different lengths"), "{}", slices[1]);
    let calls = run_job(2, SHORT, |tcp| {
        if tcp.rank() == 0 {
            tcp.sum(&mut [1.0]);
        } else {
            tcp.max(&mut [1.0]);
        }
        failure_text(&tcp)
    });
    assert!(
        calls[0].contains("worker rank 1") && calls[0].contains("sent a max frame during a sum"),
        "{}",
        calls[0]
    );
}

// ---- Joining ----

fn raw_header(kind: u8, seq: u64, len: u64) -> Vec<u8> {
    let mut header = vec![kind];
    header.extend_from_slice(&seq.to_le_bytes());
    header.extend_from_slice(&len.to_le_bytes());
    header
}

fn connect_retrying(root: &str) -> TcpStream {
    join_support::connect_retrying(root, SHORT)
}

fn join_error(rank: usize, world: usize, root: &str, secret: &[u8]) -> String {
    match Tcp::connect(rank, world, root, secret, SHORT) {
        Err(Error::Training(message)) => message,
        other => panic!("expected a join failure, got {other:?}"),
    }
}

#[test]
fn strays_are_refused_while_the_right_workers_still_join() {
    let root = free_root();
    let sum_of_ranks = |tcp: Tcp| {
        let mut values = [tcp.rank() as f64];
        tcp.sum(&mut values);
        values[0]
    };
    let root_rank = spawn_rank(0, 3, &root, SHORT, Duration::ZERO, sum_of_ranks);
    let mut silent = connect_retrying(&root);
    let mut garbage = connect_retrying(&root);
    garbage
        .write_all(b"GET / HTTP/1.1\r\nHost: optboost\r\n\r\n and more bytes, up to 92.......")
        .unwrap();
    assert!(read_challenge(&mut garbage).is_some());
    assert_eq!(
        garbage.read(&mut [0u8; 16]).unwrap_or(0),
        0,
        "garbage is dropped unanswered"
    );
    let refusal = join_error(1, 3, &root, b"another job's secret, 32 bytes.");
    assert!(
        refusal.contains("refused this rank's proof of the job secret"),
        "{refusal}"
    );
    let refusal = join_error(1, 4, &root, SECRET);
    assert!(refusal.contains("another world size than 4"), "{refusal}");
    let stranger = raw_join(&root, SECRET, 9, 3, 1);
    assert_eq!(stranger.verdict, Some(join_support::RANK_OUT_OF_RANGE));
    let workers =
        [1, 2].map(|rank| spawn_rank(rank, 3, &root, SHORT, Duration::ZERO, sum_of_ranks));
    let mut all = vec![root_rank];
    all.extend(workers);
    assert_eq!(join_all(all), vec![3.0; 3]);
    assert!(
        read_challenge(&mut silent).is_some(),
        "the silent stray got the challenge"
    );
    assert_eq!(
        silent.read(&mut [0u8; 16]).unwrap_or(0),
        0,
        "the silent stray is cut off"
    );
}

#[test]
fn a_rank_claimed_twice_fails_the_join_naming_it() {
    let root = free_root();
    let root_side = {
        let root = root.clone();
        thread::spawn(move || Tcp::connect(0, 3, &root, SECRET, SHORT).map(|_| ()))
    };
    // A forger holding the secret (it read it somewhere) joins as rank 1 before the real worker.
    let mut forger = raw_join(&root, SECRET, 1, 3, 1);
    assert_eq!(forger.verdict, Some(join_support::JOINED));
    let real = join_error(1, 3, &root, SECRET);
    assert!(
        real.contains("already joined as rank 1") && real.contains("stopped the job"),
        "{real}"
    );
    let root_error = join_all(vec![root_side]).remove(0).unwrap_err().to_string();
    assert!(
        root_error.contains("rank 1 was claimed twice") && root_error.contains("127.0.0.1:"),
        "{root_error}"
    );
    let (verdict, _) = read_reply(&mut forger.stream).expect("the forger is told");
    assert_eq!(
        verdict,
        join_support::JOIN_ABANDONED,
        "no job starts for the forger"
    );
    assert_eq!(forger.stream.read(&mut [0u8; 16]).unwrap_or(0), 0);
}

#[test]
fn a_job_that_never_completes_names_the_missing_ranks_on_every_side() {
    let timeout = Duration::from_millis(800);
    let root = free_root();
    let root_side = {
        let root = root.clone();
        thread::spawn(move || Tcp::connect(0, 4, &root, SECRET, timeout).map(|_| ()))
    };
    let worker_side = {
        let root = root.clone();
        thread::spawn(move || Tcp::connect(2, 4, &root, SECRET, Duration::from_secs(5)).map(|_| ()))
    };
    let stray = raw_join(&root, b"another job's secret, 32 bytes.", 1, 4, 1);
    assert_eq!(
        stray.verdict,
        Some(join_support::BAD_PROOF),
        "another job's secret"
    );
    let results = join_all(vec![root_side, worker_side]);
    let root_error = results[0].clone().unwrap_err().to_string();
    assert!(root_error.contains("waited 0.8 s"), "{root_error}");
    assert!(
        root_error.contains("ranks 1, 3 never joined"),
        "{root_error}"
    );
    assert!(
        root_error.contains("refused 1 connection(s): 1 did not prove the job secret"),
        "{root_error}"
    );
    let worker_error = results[1].clone().unwrap_err().to_string();
    assert!(
        worker_error.contains("gave up the join without starting the job"),
        "{worker_error}"
    );
}

#[test]
fn a_worker_without_a_root_gives_up_at_its_timeout() {
    let started = Instant::now();
    let error = Tcp::connect(1, 2, &free_root(), SECRET, Duration::from_millis(300)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        error
            .to_string()
            .contains("rank 1 could not connect to the root at 127.0.0.1:"),
        "{error}"
    );
}

#[test]
fn arguments_no_job_could_run_with_are_refused_before_any_socket() {
    let param = |result: optboost::Result<Tcp>| match result {
        Err(Error::Param { name, .. }) => name,
        other => panic!("expected a parameter error, got {other:?}"),
    };
    assert_eq!(
        param(Tcp::connect(2, 2, "127.0.0.1:4000", SECRET, SHORT)),
        "rank"
    );
    assert_eq!(
        param(Tcp::connect(0, 5000, "127.0.0.1:4000", SECRET, SHORT)),
        "world"
    );
    assert_eq!(
        param(Tcp::connect(0, 2, "127.0.0.1:0", SECRET, SHORT)),
        "root"
    );
    assert_eq!(param(Tcp::connect(1, 2, "no port", SECRET, SHORT)), "root");
    assert_eq!(
        param(Tcp::connect(1, 2, "127.0.0.1:4000", b"too short", SHORT)),
        "secret"
    );
}

// ---- Malformed frames ----

/// Joins a real root (world 2) as rank 1 from a raw socket that speaks the documented protocol.
fn raw_worker(root: &str) -> TcpStream {
    let mut join = raw_join(root, SECRET, 1, 2, 1);
    assert_eq!(
        join.verdict,
        Some(join_support::JOINED),
        "the raw worker is taken"
    );
    let (start, _) = read_reply(&mut join.stream).expect("the job starts");
    assert_eq!(start, join_support::START);
    join.stream
}

#[test]
fn a_malformed_frame_from_a_worker_is_a_failure_not_a_panic_or_a_huge_allocation() {
    let huge = 1u64 << 60;
    let cases: [(bool, Vec<u8>, &str); 6] = [
        (
            false,
            raw_header(1, 1, huge),
            "sent 1152921504606846976 bytes for a sum of 4 values (call 1), not 32",
        ),
        (
            true,
            raw_header(3, 1, huge),
            "announced an all_gather payload of 1152921504606846976 bytes",
        ),
        (
            true,
            raw_header(3, 1, MAX_GATHER_BYTES + 1),
            "more than the limit of 1073741824",
        ),
        (
            false,
            raw_header(2, 1, 32),
            "sent a max frame during a sum (call 1)",
        ),
        (
            false,
            raw_header(77, 1, 32),
            "sent a frame of unknown kind 77 during a sum",
        ),
        (
            false,
            raw_header(1, 7, 32),
            "sent call 7 during call 1 (a sum)",
        ),
    ];
    for (gather, frame, expected) in cases {
        let root = free_root();
        let root_rank = spawn_rank(0, 2, &root, SHORT, Duration::ZERO, move |tcp: Tcp| {
            let started = Instant::now();
            let mut values = [0.25; 4];
            if gather {
                assert_eq!(tcp.all_gather(b"root"), vec![b"root".to_vec(), Vec::new()]);
            } else {
                tcp.sum(&mut values);
            }
            assert_eq!(values, [0.25; 4]);
            (started.elapsed(), failure_text(&tcp))
        });
        let mut worker = raw_worker(&root);
        worker.write_all(&frame).unwrap();
        let (waited, message) = join_all(vec![root_rank]).remove(0);
        assert!(
            waited < Duration::from_secs(2),
            "{expected}: waited {waited:?}"
        );
        assert!(
            message.contains("worker rank 1 (127.0.0.1:") && message.contains(expected),
            "{message}"
        );
        // The root tells the worker why before cutting the connection.
        let mut abort = Vec::new();
        worker.read_to_end(&mut abort).unwrap();
        assert_eq!(abort[0], 4, "an abort frame");
        assert!(String::from_utf8_lossy(&abort[17..]).contains(expected));
    }
}

/// A fake root on a raw socket that holds the secret: takes rank 1 of a world of 2 (checking
/// its hello's proof), checks the worker's first frame byte for byte, then answers it with
/// `answer`.
fn fake_root(expected_frame: Vec<u8>, answer: Vec<u8>) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let root = listener.local_addr().unwrap().to_string();
    let handle = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(SHORT)).unwrap();
        let root_nonce = [3u8; 32];
        stream
            .write_all(&join_support::challenge(&root_nonce))
            .unwrap();
        let mut hello = [0u8; join_support::HELLO_LEN];
        stream.read_exact(&mut hello).unwrap();
        let worker_nonce: [u8; 32] = hello[28..60].try_into().unwrap();
        let proof = tag(SECRET, None, &root_nonce, &worker_nonce, 1, 2);
        assert_eq!(
            hello.to_vec(),
            join_support::hello(1, 2, &worker_nonce, &proof)
        );
        for verdict in [join_support::JOINED, join_support::START] {
            let proof = tag(SECRET, Some(verdict), &root_nonce, &worker_nonce, 1, 2);
            stream
                .write_all(&join_support::reply(verdict, &proof))
                .unwrap();
        }
        let mut frame = vec![0u8; expected_frame.len()];
        stream.read_exact(&mut frame).unwrap();
        assert_eq!(frame, expected_frame);
        stream.write_all(&answer).unwrap();
        // Hold the connection until the worker has judged the answer and closed its side.
        let _ = stream.read(&mut [0u8; 1]);
    });
    (root, handle)
}

#[test]
fn a_malformed_answer_from_the_root_is_a_failure_of_the_worker() {
    let mut sum_frame = raw_header(1, 1, 16);
    for value in [1.5f64, -2.0] {
        sum_frame.extend_from_slice(&value.to_le_bytes());
    }
    let mut abort = raw_header(4, 1, 19);
    abort.extend_from_slice(b"disk full on rank 0");
    let mut gather_frame = raw_header(3, 1, 2);
    gather_frame.extend_from_slice(b"hi");
    let cases = [
        (
            sum_frame.clone(),
            raw_header(1, 1, 1 << 60),
            "sent 1152921504606846976 bytes as the result of a sum of 2 values",
        ),
        (
            sum_frame,
            abort,
            "the root ended the job during a sum (call 1): disk full on rank 0",
        ),
        (
            gather_frame.clone(),
            raw_header(3, 1, 1 << 60),
            "announced an all_gather result of 1152921504606846976 bytes",
        ),
        // Lengths (16 bytes for a world of 2) claiming more bytes than the frame holds.
        (
            gather_frame,
            [
                raw_header(3, 1, 16),
                9u64.to_le_bytes().to_vec(),
                9u64.to_le_bytes().to_vec(),
            ]
            .concat(),
            "whose lengths exceed its size",
        ),
    ];
    for (expected_frame, answer, expected) in cases {
        let gather = expected_frame[0] == 3;
        let (root, fake) = fake_root(expected_frame, answer);
        let worker = spawn_rank(1, 2, &root, SHORT, Duration::ZERO, move |tcp: Tcp| {
            let mut values = [1.5, -2.0];
            if gather {
                assert_eq!(tcp.all_gather(b"hi"), vec![Vec::new(), b"hi".to_vec()]);
            } else {
                tcp.sum(&mut values);
                assert_eq!(values, [1.5, -2.0]);
            }
            failure_text(&tcp)
        });
        let message = join_all(vec![worker]).remove(0);
        join_all(vec![fake]);
        assert!(message.contains(expected), "{message}");
        if !expected.starts_with("the root ended") {
            assert!(
                message.contains("the root (rank 0, 127.0.0.1:"),
                "{message}"
            );
        }
    }
}
