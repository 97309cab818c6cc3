//! Shared helpers of the Rust tests: the one seeded generator (`TestRng`), seeded data sets, the
//! frame builder (`Data::frame`), CSV fixtures, training loops.
#![allow(dead_code)]

use optboost::Record;
use optboost::{Booster, Feature, Frame, Params, StopReason, TrainData};

/// SplitMix64 with Box–Muller normals: deterministic test data without dependencies.
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> Self {
        TestRng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Uniform in [a, b).
    pub fn uniform_in(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability p.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform_in(0.0, 1.0) < p
    }
    /// −1 or +1 with equal probability.
    pub fn sign(&mut self) -> f64 {
        if self.chance(0.5) {
            1.0
        } else {
            -1.0
        }
    }
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    /// A random permutation of 0..n.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        p
    }
}

/// Feature columns plus a target.
#[derive(Clone)]
pub struct Data {
    pub columns: Vec<Vec<f64>>,
    pub y: Vec<f64>,
}

/// Numeric features x0, x1, … borrowing `columns`: the one frame builder of the tests.
pub fn numeric_features(columns: &[Vec<f64>]) -> Vec<Feature<'_>> {
    (columns.iter().enumerate())
        .map(|(j, c)| Feature::numeric(format!("x{j}"), c))
        .collect()
}

/// The frame of `numeric_features`.
pub fn numeric_frame(columns: &[Vec<f64>]) -> Frame<'_> {
    Frame::new(numeric_features(columns)).unwrap()
}

/// `numeric_features` and then a categorical column `c` of `levels` levels (negative codes are
/// missing values).
pub fn mixed_frame<'a>(numeric: &'a [Vec<f64>], codes: &'a [i32], levels: u32) -> Frame<'a> {
    let mut features = numeric_features(numeric);
    features.push(Feature::categorical("c", codes, levels));
    Frame::new(features).unwrap()
}

impl Data {
    pub fn frame(&self) -> Frame<'_> {
        numeric_frame(&self.columns)
    }
    pub fn n_rows(&self) -> usize {
        self.y.len()
    }
    /// The rows in `order` (for shuffling and splitting).
    pub fn rows(&self, order: &[usize]) -> Data {
        Data {
            columns: self
                .columns
                .iter()
                .map(|c| order.iter().map(|&i| c[i]).collect())
                .collect(),
            y: order.iter().map(|&i| self.y[i]).collect(),
        }
    }
    /// The data shuffled with `seed`.
    pub fn shuffled(&self, seed: u64) -> Data {
        self.rows(&TestRng::new(seed).permutation(self.n_rows()))
    }
}

/// A CSV fixture under tests/data with the target `y` in the first column.
pub fn csv(name: &str) -> Data {
    let path = format!("{}/tests/data/{name}.csv", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let n_columns = lines.next().unwrap().split(',').count();
    let mut columns = vec![Vec::new(); n_columns];
    for line in lines.filter(|l| !l.is_empty()) {
        for (j, value) in line.split(',').enumerate() {
            columns[j].push(value.parse::<f64>().unwrap());
        }
    }
    let y = columns.remove(0);
    Data { columns, y }
}

pub fn params(settings: &[(&str, &str)]) -> Params {
    let mut params = Params {
        n_threads: 1,
        ..Params::default()
    };
    for (name, value) in settings {
        params.set(name, value).unwrap();
    }
    params
}

pub fn booster(params: Params, data: &Data) -> Booster {
    let frame = data.frame();
    Booster::new(
        params,
        &TrainData {
            frame,
            y: &data.y,
            weights: None,
        },
        None,
    )
    .unwrap()
}

/// Trains to the end; returns the booster and why it stopped.
pub fn train(params: Params, data: &Data) -> (Booster, StopReason) {
    let mut booster = booster(params, data);
    let reason = booster.run(|_| true).unwrap();
    (booster, reason)
}

pub fn train_losses(booster: &Booster) -> Vec<f64> {
    booster
        .history()
        .records
        .iter()
        .map(|r: &Record| r.train_loss)
        .collect()
}

/// The training loss once the model holds exactly `n_trees` trees.
pub fn loss_at_trees(booster: &Booster, n_trees: usize) -> f64 {
    booster
        .history()
        .records
        .iter()
        .find(|r| r.n_trees == n_trees)
        .unwrap_or_else(|| panic!("no iteration ends with {n_trees} trees"))
        .train_loss
}

/// max |a − b| / max(max |b|, 1e-300)
pub fn relative_difference(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// y = sin(2πx) + ε, x uniform on [0, 1] (the proximal paper's Fig. 1 example).
pub fn sine(n: usize, noise: f64, seed: u64) -> Data {
    let mut rng = TestRng::new(seed);
    let x: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let y = x
        .iter()
        .map(|&x| (2.0 * std::f64::consts::PI * x).sin() + noise * rng.normal())
        .collect();
    Data {
        columns: vec![x],
        y,
    }
}

/// The proximal paper's §5.1 classification model: n rows, d = 50 Gaussian covariates with
/// covariance 2^−|i−j| (an AR(1) chain with coefficient 1/2), and
/// Y = 2·1{X1 + X4³ + X9 + sin(X12·X18) + Z > 0.38} − 1 with Z ~ N(0, 0.1) (1-based indices).
pub fn proximal_classification(n: usize, seed: u64) -> Data {
    let d = 50;
    let mut rng = TestRng::new(seed);
    let mut columns = vec![vec![0.0; n]; d];
    let mut y = vec![0.0; n];
    for i in 0..n {
        let mut previous = rng.normal();
        columns[0][i] = previous;
        for j in 1..d {
            previous = 0.5 * previous + 0.75f64.sqrt() * rng.normal();
            columns[j][i] = previous;
        }
        let x = |j: usize| columns[j - 1][i];
        let score =
            x(1) + x(4).powi(3) + x(9) + (x(12) * x(18)).sin() + 0.1f64.sqrt() * rng.normal();
        y[i] = if score > 0.38 { 1.0 } else { -1.0 };
    }
    Data { columns, y }
}

/// A smooth regression problem with a few informative features.
pub fn friedman(n: usize, p: usize, seed: u64) -> Data {
    let mut rng = TestRng::new(seed);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| (0..n).map(|_| rng.uniform()).collect())
        .collect();
    let y = (0..n)
        .map(|i| {
            let x = |j: usize| columns[j % p][i];
            10.0 * (std::f64::consts::PI * x(0) * x(1)).sin()
                + 20.0 * (x(2) - 0.5).powi(2)
                + 10.0 * x(3)
                + 5.0 * x(4)
                + rng.normal()
        })
        .collect();
    Data { columns, y }
}

/// Three Gaussian blobs in 4 dimensions, labels 0, 1, 2.
pub fn blobs(n: usize, seed: u64) -> Data {
    let mut rng = TestRng::new(seed);
    let centres = [
        [0.0, 0.0, 1.0, 0.0],
        [1.5, 0.5, 0.0, 0.0],
        [0.0, 1.5, 0.0, 1.0],
    ];
    let mut columns = vec![vec![0.0; n]; 4];
    let mut y = vec![0.0; n];
    for i in 0..n {
        let class = i % 3;
        y[i] = class as f64;
        for j in 0..4 {
            columns[j][i] = centres[class][j] + rng.normal();
        }
    }
    Data { columns, y }
}
