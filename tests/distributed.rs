//! Data-parallel training (`Booster::distributed`): the rows split into shards, one booster per
//! shard on its own thread, the shards' reductions through an in-process collective. Every
//! shard must end with the same model, and that model must be the single-process model of all
//! the rows, to rounding: the sums are added in another order, nothing else differs.

mod common;

use common::*;
use optboost::collective::{Collective, Traffic};
use optboost::{Booster, Error, Model, Offsets, Params, TrainData};
use std::sync::{Arc, Barrier, Mutex};

/// The ranks of one process, on threads: each call deposits this rank's part, and after a
/// barrier every rank reads all the parts and reduces them in rank order.
#[derive(Debug)]
struct Threads {
    world: usize,
    parts: Mutex<Vec<Vec<u8>>>,
    barrier: Barrier,
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
    let world = sizes.len();
    let threads = Arc::new(Threads {
        world,
        parts: Mutex::new(vec![Vec::new(); world]),
        barrier: Barrier::new(world),
    });
    std::thread::scope(|scope| {
        let handles: Vec<_> = (shards(sizes).into_iter().enumerate())
            .map(|(rank, rows)| {
                let shard = data.rows(&rows.collect::<Vec<_>>());
                let collective = Arc::new(Rank(Arc::clone(&threads), rank));
                scope.spawn(move || {
                    let train = TrainData {
                        frame: shard.frame(),
                        y: &shard.y,
                        weights: None,
                    };
                    let params = params(settings);
                    let mut booster =
                        Booster::distributed(params, &train, None, Offsets::default(), collective)
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
fn refused_settings_are_named() {
    let data = friedman(50, 2, 1);
    let train = TrainData {
        frame: data.frame(),
        y: &data.y,
        weights: None,
    };
    let threads = Arc::new(Threads {
        world: 1,
        parts: Mutex::new(vec![Vec::new()]),
        barrier: Barrier::new(1),
    });
    let mut params = Params::default();
    params.set("metrics", "rmse").unwrap();
    let collective = Arc::new(Rank(threads, 0));
    let error = Booster::distributed(params, &train, None, Offsets::default(), collective)
        .err()
        .expect("metrics are refused");
    assert!(error.to_string().contains("metrics"), "{error}");
}
