//! A compressed sparse column matrix (`Frame::from_csc`, scipy's CSC) trains and predicts as the
//! same matrix dense: rows not stored are 0.0, a stored NaN is missing, explicit zeros and
//! all-zero columns included; same cut points, same bins, the same model bit for bit.

mod common;

use common::TestRng;
use optboost::{Booster, Frame, Model, RowSplit, TrainData};

/// A random CSC matrix and its dense columns: `density` of the cells stored, some of them 0.0,
/// −0.0 or NaN; column 1 stores nothing (all zero), column 2 only zeros.
struct Sparse {
    n_rows: usize,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    dense: Vec<Vec<f64>>,
}

fn sparse(seed: u64, n_rows: usize, n_columns: usize, density: f64) -> Sparse {
    let mut rng = TestRng::new(seed);
    let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
    let mut dense = vec![vec![0.0; n_rows]; n_columns];
    for (j, column) in dense.iter_mut().enumerate() {
        for (row, cell) in column.iter_mut().enumerate() {
            if j == 1 || !rng.chance(density) {
                continue;
            }
            let value = match rng.below(20) {
                _ if j == 2 => 0.0,
                0 => f64::NAN,
                1 => 0.0,
                2 => -0.0,
                3 => 1.0,
                _ => (rng.normal() * (j + 1) as f64 * 10.0).round() / 10.0,
            };
            indices.push(row as u32);
            values.push(value);
            *cell = value;
        }
        indptr.push(indices.len());
    }
    Sparse {
        n_rows,
        indptr,
        indices,
        values,
        dense,
    }
}

impl Sparse {
    fn names(&self) -> Vec<String> {
        (0..self.dense.len()).map(|j| format!("x{j}")).collect()
    }
    fn frame(&self) -> Frame<'_> {
        let (indptr, indices) = (&self.indptr, &self.indices);
        Frame::from_csc(self.names(), self.n_rows, indptr, indices, &self.values).unwrap()
    }
    fn target(&self, seed: u64) -> Vec<f64> {
        let mut rng = TestRng::new(seed);
        let x = |j: usize, i: usize| {
            let v: f64 = self.dense[j % self.dense.len()][i];
            if v.is_nan() {
                -1.0
            } else {
                v
            }
        };
        (0..self.n_rows)
            .map(|i| x(0, i) + 0.5 * x(3, i) - 0.2 * x(4, i) * x(0, i) + 0.1 * rng.normal())
            .collect()
    }
}

fn fit(frame: Frame<'_>, y: &[f64], settings: &[(&str, &str)]) -> Model {
    let mut params = optboost::Params {
        n_threads: 2,
        ..optboost::Params::default()
    };
    for &(name, value) in [("n_iter", "5"), ("max_depth", "4"), ("subsample", "0.8")]
        .iter()
        .chain(settings)
    {
        params.set(name, value).unwrap();
    }
    let train = TrainData {
        frame,
        y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, None).unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn sparse_matrices_fit_and_predict_as_their_dense_matrices() {
    // (seed, rows, columns, density, settings)
    type Case = (
        u64,
        usize,
        usize,
        f64,
        &'static [(&'static str, &'static str)],
    );
    let cases: [Case; 4] = [
        (1, 3_000, 8, 0.05, &[]),
        (2, 2_000, 40, 0.3, &[("growth", "leafwise")]),
        (3, 5_000, 12, 0.01, &[("method", "agbm"), ("memory", "low")]),
        (4, 1_500, 6, 0.6, &[("loss", "absolute")]),
    ];
    for (seed, n_rows, n_columns, density, settings) in cases {
        let data = sparse(seed, n_rows, n_columns, density);
        let y = data.target(seed);
        let model = fit(common::numeric_frame(&data.dense), &y, settings);
        let from_sparse = fit(data.frame(), &y, settings);
        assert_eq!(from_sparse.to_json(), model.to_json(), "case {seed}");
        let dense_predictions = model.predict(&common::numeric_frame(&data.dense)).unwrap();
        let sparse_predictions = model.predict(&data.frame()).unwrap();
        assert_eq!(
            bits(&sparse_predictions),
            bits(&dense_predictions),
            "case {seed}"
        );
        assert!(model.n_trees() > 0);
    }
}

#[test]
fn a_sparse_matrix_over_the_binning_sample_gets_the_dense_cut_points() {
    // More rows than binning samples (200 000): the sampled rows of both layouts coincide.
    let data = sparse(5, 210_000, 5, 0.02);
    let y = data.target(5);
    let settings = [("n_iter", "2")];
    let model = fit(common::numeric_frame(&data.dense), &y, &settings);
    assert_eq!(fit(data.frame(), &y, &settings).to_json(), model.to_json());
}

#[test]
fn sparse_rows_held_out_for_validation_are_the_dense_rows() {
    let data = sparse(6, 4_000, 7, 0.1);
    let y = data.target(6);
    let roles: Vec<u8> = (0..data.n_rows).map(|i| [0, 0, 1, 2][i % 4]).collect();
    let fit_split = |frame: Frame<'_>| {
        let train = TrainData {
            frame: frame.clone(),
            y: &y,
            weights: None,
        };
        let split = RowSplit::split(&roles, &train, None).unwrap();
        let (train, valid, _) = split.sides(&frame).unwrap();
        let mut params = optboost::Params::default();
        params.set("n_iter", "6").unwrap();
        let mut booster = Booster::new(params, &train, valid.as_ref()).unwrap();
        booster.run(|_| true).unwrap();
        booster.into_model().to_json()
    };
    assert_eq!(
        fit_split(data.frame()),
        fit_split(common::numeric_frame(&data.dense))
    );
}
