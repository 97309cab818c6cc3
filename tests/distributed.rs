//! Data-parallel training (`Booster::distributed`): the rows split into shards, one booster per
//! shard on its own thread, the shards' reductions through an in-process collective. Every
//! shard must end with the same model, and that model must be the single-process model of all
//! the rows, to rounding: the sums are added in another order, nothing else differs.

mod common;

use common::*;
use optboost::collective::{Collective, Traffic};
use optboost::{Booster, Error, Model, Offsets, Params, TrainData};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The ranks of one process, on threads: each call deposits this rank's part, and after a
/// barrier every rank reads all the parts and reduces them in rank order.
#[derive(Debug)]
struct Threads {
    world: usize,
    parts: Mutex<Vec<Vec<u8>>>,
    barrier: TimedBarrier,
}

impl Threads {
    fn new(world: usize) -> Arc<Threads> {
        Arc::new(Threads {
            world,
            parts: Mutex::new(vec![Vec::new(); world]),
            barrier: TimedBarrier::new(world),
        })
    }
}

/// A barrier whose wait fails the test after a minute instead of hanging it (a rank that
/// panicked, or ranks whose calls went out of step, would leave the others waiting forever).
#[derive(Debug)]
struct TimedBarrier {
    world: usize,
    state: Mutex<(usize, u64)>,
    turn: Condvar,
}

impl TimedBarrier {
    fn new(world: usize) -> TimedBarrier {
        TimedBarrier {
            world,
            state: Mutex::new((0, 0)),
            turn: Condvar::new(),
        }
    }
    fn wait(&self) {
        let mut state = self.state.lock().unwrap();
        let generation = state.1;
        state.0 += 1;
        if state.0 == self.world {
            *state = (0, generation + 1);
            self.turn.notify_all();
            return;
        }
        let (state, timeout) = self
            .turn
            .wait_timeout_while(state, Duration::from_secs(60), |s| s.1 == generation)
            .unwrap();
        assert!(!timeout.timed_out(), "a rank never reached the barrier");
        drop(state);
    }
}

#[derive(Debug)]
struct Rank(Arc<Threads>, usize);

impl Rank {
    fn exchange(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let shared = &self.0;
        shared.parts.lock().unwrap()[self.1] = bytes.to_vec();
        shared.barrier.wait();
        let all = shared.parts.lock().unwrap().clone();
        shared.barrier.wait();
        all
    }
    fn reduce(&self, values: &mut [f64], combine: fn(f64, f64) -> f64) {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let parts = self.exchange(&bytes);
        for (i, value) in values.iter_mut().enumerate() {
            let at =
                |part: &Vec<u8>| f64::from_le_bytes(part[8 * i..8 * i + 8].try_into().unwrap());
            *value = parts[1..]
                .iter()
                .fold(at(&parts[0]), |acc, p| combine(acc, at(p)));
        }
    }
}

impl Collective for Rank {
    fn rank(&self) -> usize {
        self.1
    }
    fn world(&self) -> usize {
        self.0.world
    }
    fn sum(&self, values: &mut [f64]) {
        self.reduce(values, |a, b| a + b);
    }
    fn max(&self, values: &mut [f64]) {
        self.reduce(values, f64::max);
    }
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.exchange(bytes)
    }
    fn failure(&self) -> Option<Error> {
        None
    }
    fn traffic(&self) -> Traffic {
        Traffic::default()
    }
}

/// The row ranges of `sizes` shards, in order.
fn shards(sizes: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&n| {
            start += n;
            start - n..start
        })
        .collect()
}

/// The model of every shard of a data-parallel fit of `data` cut into `sizes` rows.
fn fit_shards(settings: &[(&str, &str)], data: &Data, sizes: &[usize]) -> Vec<Model> {
    fit_shards_with_validation(settings, data, sizes, None)
}

/// `fit_shards`, each rank also holding its part (`valid_sizes`) of the validation rows.
fn fit_shards_with_validation(
    settings: &[(&str, &str)],
    data: &Data,
    sizes: &[usize],
    valid: Option<(&Data, &[usize])>,
) -> Vec<Model> {
    let world = sizes.len();
    let valid_shards: Vec<Option<Data>> = match valid {
        // A rank with no validation rows passes none.
        Some((valid, valid_sizes)) => (shards(valid_sizes).into_iter())
            .map(|rows| (!rows.is_empty()).then(|| valid.rows(&rows.collect::<Vec<_>>())))
            .collect(),
        None => vec![None; world],
    };
    let threads = Threads::new(world);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (shards(sizes).into_iter().zip(valid_shards).enumerate())
            .map(|(rank, (rows, valid_shard))| {
                let shard = data.rows(&rows.collect::<Vec<_>>());
                let collective = Arc::new(Rank(Arc::clone(&threads), rank));
                scope.spawn(move || {
                    let train = TrainData {
                        frame: shard.frame(),
                        y: &shard.y,
                        weights: None,
                    };
                    let valid = valid_shard.as_ref().map(|v| TrainData {
                        frame: v.frame(),
                        y: &v.y,
                        weights: None,
                    });
                    let params = params(settings);
                    let offsets = Offsets::default();
                    let mut booster =
                        Booster::distributed(params, &train, valid.as_ref(), offsets, collective)
                            .unwrap();
                    booster.run(|_| true).unwrap();
                    booster.into_model()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn predictions(model: &Model, data: &Data) -> Vec<f64> {
    model.predict(&data.frame()).unwrap()
}

/// The shards agree bit for bit; their model predicts as the single-process one to `tol`.
fn assert_matches_one_process(settings: &[(&str, &str)], data: &Data, sizes: &[usize], tol: f64) {
    let models = fit_shards(settings, data, sizes);
    let first = predictions(&models[0], data);
    for model in &models[1..] {
        assert_eq!(
            predictions(model, data),
            first,
            "{settings:?}: shards differ"
        );
    }
    let (single, _) = train(params(settings), data);
    let expected = predictions(single.model(), data);
    assert_eq!(
        models[0].n_trees(),
        single.model().n_trees(),
        "{settings:?}"
    );
    let difference = relative_difference(&first, &expected);
    assert!(difference <= tol, "{settings:?}: {difference:e}");
}

#[test]
fn every_method_fits_the_model_of_all_rows() {
    let data = friedman(900, 5, 3);
    for method in [
        "gbm",
        "rgbm",
        "agbm",
        "vagbm",
        "proximal",
        "residual_gbm",
        "accelerated_gbm",
        "repeated_gbm",
    ] {
        let settings = [("method", method), ("n_iter", "15"), ("max_depth", "3")];
        assert_matches_one_process(&settings, &data, &[400, 300, 200], 1e-9);
    }
}

#[test]
fn oblivious_trees_fit_the_model_of_all_rows() {
    // A level's rule is chosen from histograms summed over the ranks: every rank takes it.
    let data = friedman(900, 5, 4);
    for method in ["gbm", "proximal"] {
        let settings = [
            ("method", method),
            ("tree", "oblivious"),
            ("n_iter", "15"),
            ("max_depth", "4"),
        ];
        assert_matches_one_process(&settings, &data, &[400, 300, 200], 1e-9);
    }
}

#[test]
fn piecewise_linear_leaves_are_the_exact_kinks() {
    let data = friedman(700, 4, 5);
    for (method, loss) in [
        ("gbm", "absolute"),
        ("proximal", "absolute"),
        ("gbm", "pinball(0.8)"),
        ("accelerated_proximal", "absolute"),
    ] {
        let settings = [("method", method), ("loss", loss), ("n_iter", "12")];
        assert_matches_one_process(&settings, &data, &[350, 349, 1], 1e-9);
    }
}

#[test]
fn classification_and_line_searches() {
    let binary = proximal_classification(600, 2);
    for settings in [
        vec![("loss", "logistic"), ("n_iter", "10")],
        vec![("loss", "hinge"), ("method", "proximal"), ("n_iter", "10")],
        // The logistic prox direction is not centred: its trees' mean is summed over ranks.
        vec![
            ("loss", "logistic"),
            ("method", "accelerated_proximal"),
            ("n_iter", "10"),
        ],
        vec![
            ("loss", "logistic"),
            ("step", "line_search"),
            ("n_iter", "8"),
        ],
        vec![
            ("loss", "exponential"),
            ("step", "leaf_line_search"),
            ("n_iter", "8"),
        ],
    ] {
        assert_matches_one_process(&settings, &binary, &[250, 350], 1e-9);
    }
    let classes = blobs(600, 4);
    for method in ["gbm", "agbm", "rgbm"] {
        let settings = [("loss", "softmax"), ("method", method), ("n_iter", "8")];
        assert_matches_one_process(&settings, &classes, &[200, 100, 300], 1e-9);
    }
}

#[test]
fn validation_metrics_and_early_stopping() {
    let data = friedman(800, 5, 11);
    let valid = friedman(300, 5, 12);
    let settings = [
        ("method", "agbm"),
        ("n_iter", "60"),
        ("learning_rate", "0.3"),
        ("metrics", "mae,rmse"),
        ("early_stopping_rounds", "3"),
    ];
    let models =
        fit_shards_with_validation(&settings, &data, &[500, 300], Some((&valid, &[100, 200])));
    let validated_on_one_rank =
        fit_shards_with_validation(&settings, &data, &[500, 300], Some((&valid, &[0, 300])));
    let train = TrainData {
        frame: data.frame(),
        y: &data.y,
        weights: None,
    };
    let valid_all = TrainData {
        frame: valid.frame(),
        y: &valid.y,
        weights: None,
    };
    let mut single = Booster::new(params(&settings), &train, Some(&valid_all)).unwrap();
    single.run(|_| true).unwrap();
    assert!(
        single.model().best_iteration.is_some(),
        "the fit should stop early"
    );
    assert_eq!(models[0].best_iteration, single.model().best_iteration);
    assert_eq!(models[0].n_trees(), single.model().n_trees());
    let difference = relative_difference(
        &predictions(&models[0], &data),
        &predictions(single.model(), &data),
    );
    assert!(difference <= 1e-9, "{difference:e}");
    let one_rank = &validated_on_one_rank[0];
    assert_eq!(one_rank.best_iteration, single.model().best_iteration);
    let difference = relative_difference(
        &predictions(one_rank, &data),
        &predictions(single.model(), &data),
    );
    assert!(difference <= 1e-9, "{difference:e}");
}

/// A validation part of n < 50 rows (over all ranks) asks an improvement to lower the best
/// validation loss by more than a share 1/n of it; every rank counts the rows of all, so a
/// fit whose 40 validation rows are spread over the ranks, or held by one, stops where one
/// process does.
#[test]
fn small_validation_margin_is_counted_over_all_ranks() {
    let data = friedman(300, 5, 21);
    let valid = friedman(40, 5, 22);
    let settings = [
        ("n_iter", "300"),
        ("learning_rate", "0.5"),
        ("early_stopping_rounds", "5"),
    ];
    let train = TrainData {
        frame: data.frame(),
        y: &data.y,
        weights: None,
    };
    let valid_all = TrainData {
        frame: valid.frame(),
        y: &valid.y,
        weights: None,
    };
    let mut single = Booster::new(params(&settings), &train, Some(&valid_all)).unwrap();
    single.run(|_| true).unwrap();
    let best = single
        .model()
        .best_iteration
        .expect("the fit should stop early");
    let records = &single.history().records;
    let constant = single.initial_valid_loss().unwrap();
    let kept = if best == 0 {
        constant
    } else {
        records[best - 1].valid_loss.unwrap()
    };
    assert_eq!(records.len(), best + 5, "stops after the patience");
    for r in &records[best..] {
        assert!(
            r.valid_loss.unwrap() >= kept * (1.0 - 1.0 / 40.0),
            "{r:?} beats {kept} by the margin"
        );
    }
    for sizes in [[20, 20], [40, 0]] {
        let models =
            fit_shards_with_validation(&settings, &data, &[150, 150], Some((&valid, &sizes)));
        for model in &models {
            assert_eq!(
                model.best_iteration,
                Some(best),
                "validation rows {sizes:?}"
            );
            assert_eq!(model.n_trees(), single.model().n_trees());
            let difference = relative_difference(
                &predictions(model, &data),
                &predictions(single.model(), &data),
            );
            assert!(difference <= 1e-9, "{difference:e}");
        }
    }
}

#[test]
fn refused_settings_are_named() {
    let mut data = friedman(50, 2, 1);
    data.y
        .iter_mut()
        .for_each(|y| *y = f64::from(u8::from(*y > 10.0)));
    let train = TrainData {
        frame: data.frame(),
        y: &data.y,
        weights: None,
    };
    let threads = Threads::new(1);
    let mut params = Params::default();
    params
        .set("loss", "logistic")
        .unwrap()
        .set("metrics", "auc")
        .unwrap();
    let collective = Arc::new(Rank(threads, 0));
    let error = Booster::distributed(params, &train, None, Offsets::default(), collective)
        .err()
        .expect("auc is refused");
    assert!(error.to_string().contains("auc"), "{error}");
}

/// Two ranks over TCP on loopback; rank 1 stops after `iterations_before_loss` iterations and
/// drops its booster (its connection closes, as when a worker process dies). Rank 0's next
/// iteration fails promptly, naming the lost rank and the iteration; its model keeps the
/// iterations finished before.
#[test]
fn a_lost_rank_ends_training_with_the_finished_iterations() {
    use optboost::collective::Tcp;
    use std::time::Instant;
    let root = {
        // Bind port 0 to find a free port, then free it for the root (a tiny race on a test
        // machine, which would show as the root's "cannot listen" error).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("127.0.0.1:{}", listener.local_addr().unwrap().port())
    };
    let data = friedman(600, 4, 9);
    let iterations_before_loss = 4;
    let started = Instant::now();
    let outcomes: Vec<(Result<usize, String>, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|rank| {
                let root = root.clone();
                let shard = data.rows(&(rank * 300..(rank + 1) * 300).collect::<Vec<_>>());
                scope.spawn(move || {
                    let collective = Tcp::connect(
                        rank,
                        2,
                        &root,
                        b"distributed tests secret",
                        Duration::from_secs(20),
                    )
                    .unwrap();
                    let train = TrainData {
                        frame: shard.frame(),
                        y: &shard.y,
                        weights: None,
                    };
                    let settings = [("n_iter", "50"), ("method", "agbm")];
                    let mut booster = Booster::distributed(
                        params(&settings),
                        &train,
                        None,
                        Offsets::default(),
                        Arc::new(collective),
                    )
                    .unwrap();
                    let mut outcome = Ok(0);
                    for iteration in 1..=50 {
                        if rank == 1 && iteration > iterations_before_loss {
                            break;
                        }
                        if let Err(error) = booster.step() {
                            outcome = Err(error.to_string());
                            break;
                        }
                        outcome = Ok(iteration);
                    }
                    (outcome, booster.model().n_trees())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(started.elapsed() < Duration::from_secs(15));
    let (outcome, n_trees) = &outcomes[0];
    let message = outcome.as_ref().expect_err("rank 0 must fail");
    assert!(message.contains("rank 1"), "{message}");
    let failed_in = iterations_before_loss + 1;
    assert!(
        message.contains(&format!("iteration {failed_in}")),
        "{message}"
    );
    // AGBM grows two trees per iteration; the model keeps those of the finished iterations.
    assert_eq!(*n_trees, 2 * iterations_before_loss);
}

/// The columns of `rows` of `columns` (the rows of a rank, in its order).
fn columns_of(columns: &[Vec<f64>], rows: &[std::ops::Range<usize>]) -> Vec<Vec<f64>> {
    (columns.iter())
        .map(|c| {
            rows.iter()
                .flat_map(|r| c[r.clone()].iter().copied())
                .collect()
        })
        .collect()
}

/// The mappers each rank learns from its rows at `placement` (its global row ranges, in order;
/// `None`: ranks in order, holding `sizes` rows each).
fn mappers_over_ranks(
    columns: &[Vec<f64>],
    placement: &[Vec<std::ops::Range<usize>>],
    given: bool,
) -> Vec<Vec<optboost::BinMapper>> {
    let world = placement.len();
    let threads = Threads::new(world);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (placement.iter().enumerate())
            .map(|(rank, rows)| {
                let mine = columns_of(columns, rows);
                let collective = Rank(Arc::clone(&threads), rank);
                scope.spawn(move || {
                    let binned = optboost::learner::BinnedData::learn_over_ranks(
                        &numeric_frame(&mine),
                        &optboost::BinningParams::default(),
                        &collective,
                        given.then_some(rows.as_slice()),
                    )
                    .unwrap();
                    binned.mappers().to_vec()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ranks_with_unequal_shares_learn_the_cut_points_of_one_process_bit_for_bit() {
    // More rows than the binning sample (every second row is sampled), continuous values (far
    // more distinct values than bins), a few distinct values, missing values, 0.0 and -0.0.
    let n = 330_001;
    let mut rng = TestRng::new(17);
    let continuous: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let few: Vec<f64> = (0..n).map(|i| [0.0, -0.0, 1.5, f64::NAN][i % 4]).collect();
    let skewed: Vec<f64> = (0..n)
        .map(|i| {
            if i % 7 == 0 {
                f64::NAN
            } else {
                (rng.normal() * 3.0).exp().round()
            }
        })
        .collect();
    let columns = vec![continuous, few, skewed];
    let one = optboost::learner::BinnedData::learn(
        &numeric_frame(&columns),
        &optboost::BinningParams::default(),
    )
    .unwrap();
    let bits = |mappers: &[optboost::BinMapper]| -> Vec<Vec<u64>> {
        (mappers.iter())
            .map(|m| match m {
                optboost::BinMapper::Numeric { cuts } => cuts.iter().map(|c| c.to_bits()).collect(),
                other => panic!("numeric mapper expected, got {other:?}"),
            })
            .collect()
    };
    let expected = bits(one.mappers());
    assert!(expected[0].len() == 254, "continuous: all the bins");
    // Ranks in order with unequal shares, and ranks holding scattered ranges (rank 0 the first
    // and the last rows), ranges starting off the sampling step.
    let in_order = vec![0..1_001, 1_001..200_000, 200_000..n];
    let scattered = vec![
        vec![0..50_001, 300_000..n],
        vec![50_001..260_000],
        vec![260_000..300_000],
    ];
    for (placement, given) in [
        (
            in_order.iter().map(|r| vec![r.clone()]).collect::<Vec<_>>(),
            false,
        ),
        (scattered.clone(), true),
    ] {
        for (rank, mappers) in mappers_over_ranks(&columns, &placement, given)
            .iter()
            .enumerate()
        {
            assert_eq!(bits(mappers), expected, "rank {rank} of {placement:?}");
        }
    }
}

#[test]
fn row_ranges_that_overlap_or_leave_a_gap_are_an_error() {
    for placement in [
        vec![vec![0..600], vec![500..1000]],
        vec![vec![0..400], vec![500..1100]],
    ] {
        let world = placement.len();
        let threads = Threads::new(world);
        let errors: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (placement.iter().enumerate())
                .map(|(rank, rows)| {
                    let mine: Vec<Vec<f64>> = vec![(0..rows[0].len()).map(|i| i as f64).collect()];
                    let collective = Rank(Arc::clone(&threads), rank);
                    scope.spawn(move || {
                        optboost::learner::BinnedData::learn_over_ranks(
                            &numeric_frame(&mine),
                            &optboost::BinningParams::default(),
                            &collective,
                            Some(rows.as_slice()),
                        )
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            errors.iter().all(|e| e.contains("row ranges")),
            "{errors:?}"
        );
    }
}

#[test]
fn random_strength_and_the_bayesian_bootstrap_draw_by_global_row_and_node() {
    // The bootstrap's weights follow the global row index and the noise the node: unequal
    // shards give the single-process model.
    let data = friedman(900, 5, 3);
    let settings = [
        ("n_iter", "15"),
        ("random_strength", "1"),
        ("bootstrap", "bayesian"),
        ("bagging_temperature", "0.7"),
    ];
    assert_matches_one_process(&settings, &data, &[400, 300, 200], 1e-9);
}

#[test]
fn subsampled_and_goss_rows_are_those_of_one_process_on_one_two_and_three_ranks() {
    // The rows are keyed by their global index and selected over the ranks: unequal shards
    // (one of a single row) draw the rows one process draws.
    let data = friedman(900, 5, 3);
    let binary = proximal_classification(600, 2);
    for (settings, data) in [
        (vec![("subsample", "0.6")], &data),
        (vec![("sample_strategy", "goss")], &data),
        (
            vec![
                ("sample_strategy", "goss"),
                ("top_rate", "0.3"),
                ("colsample_bytree", "0.6"),
            ],
            &data,
        ),
        (vec![("method", "agbm"), ("subsample", "0.5")], &data),
        // Every |gradient| ties at the first tree: the top rows are the first in global order.
        (
            vec![("loss", "logistic"), ("sample_strategy", "goss")],
            &binary,
        ),
    ] {
        let settings = [settings, vec![("n_iter", "12")]].concat();
        let n = data.n_rows();
        for sizes in [
            vec![n],
            vec![n / 3, n - n / 3],
            vec![n / 2, 1, n - n / 2 - 1],
        ] {
            assert_matches_one_process(&settings, data, &sizes, 1e-9);
        }
    }
}
