//! A row-major matrix read in place (`Frame::from_row_major`, numpy C order) trains and predicts
//! exactly as its columns do: same cut points from the same sampled rows, same bins, same model.
//! Storing the bins once (`memory = "low"`) gives the same model as with their column copy.

mod common;

use common::TestRng;
use optboost::{Booster, Frame, Model, TrainData};

/// Rows × columns with missing values; more rows than the 200 000 that binning samples, so the
/// sampled rows of both layouts must coincide for the models to agree.
fn columns(n_rows: usize, n_columns: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut rng = TestRng::new(7);
    let columns: Vec<Vec<f64>> = (0..n_columns)
        .map(|j| {
            (0..n_rows)
                .map(|_| {
                    if rng.chance(0.05) {
                        f64::NAN
                    } else {
                        (rng.normal() * (j + 1) as f64 * 100.0).round() / 100.0
                    }
                })
                .collect()
        })
        .collect();
    let y = (0..n_rows)
        .map(|i| {
            let x = |j: usize| {
                let v: f64 = columns[j][i];
                if v.is_nan() {
                    0.5
                } else {
                    v
                }
            };
            x(0).sin() + 0.3 * x(1) - 0.1 * x(2) * x(0) + 0.1 * rng.normal()
        })
        .collect();
    (columns, y)
}

fn row_major(columns: &[Vec<f64>]) -> Vec<f64> {
    let n_rows = columns[0].len();
    (0..n_rows)
        .flat_map(|i| columns.iter().map(move |c| c[i]))
        .collect()
}

fn fit(frame: Frame<'_>, y: &[f64]) -> Model {
    fit_with(frame, y, &[])
}

fn fit_with(frame: Frame<'_>, y: &[f64], settings: &[(&str, &str)]) -> Model {
    let mut params = optboost::Params {
        n_threads: 2,
        ..optboost::Params::default()
    };
    for &(name, value) in [("n_iter", "4"), ("max_depth", "4"), ("subsample", "0.8")]
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

#[test]
fn row_major_matrix_trains_and_predicts_as_its_columns() {
    let (columns, y) = columns(410_000, 3);
    let names: Vec<String> = (0..3).map(|j| format!("x{j}")).collect();
    let matrix = row_major(&columns);
    let by_columns = || common::numeric_frame(&columns);
    let by_rows = || Frame::from_row_major(names.clone(), &matrix).unwrap();
    let model = fit(by_columns(), &y);
    assert_eq!(fit(by_rows(), &y).to_json(), model.to_json());

    let predictions = model.predict(&by_columns()).unwrap();
    assert_eq!(model.predict(&by_rows()).unwrap(), predictions);
    let few = 2_000;
    let head: Vec<Vec<f64>> = columns.iter().map(|c| c[..few].to_vec()).collect();
    let head_rows = Frame::from_row_major(names.clone(), &matrix[..few * 3]).unwrap();
    assert_eq!(
        model.predict_contrib(&head_rows).unwrap(),
        model
            .predict_contrib(&common::numeric_frame(&head))
            .unwrap()
    );
}

#[test]
fn row_major_matrix_of_the_wrong_length_is_an_error() {
    let names = vec!["a".to_string(), "b".to_string()];
    let error = Frame::from_row_major(names.clone(), &[1.0, 2.0, 3.0]).unwrap_err();
    assert!(error.to_string().contains("not a multiple"), "{error}");
    assert!(Frame::from_row_major(names, &[]).is_err());
    assert!(Frame::from_row_major(Vec::new(), &[1.0]).is_err());
}

#[test]
fn bins_stored_once_give_the_model_of_bins_with_their_column_copy() {
    let (columns, y) = columns(30_000, 4);
    let names: Vec<String> = (0..4).map(|j| format!("x{j}")).collect();
    let matrix = row_major(&columns);
    let by_rows = || Frame::from_row_major(names.clone(), &matrix).unwrap();
    for growth in ["depthwise", "leafwise"] {
        let fast = fit_with(by_rows(), &y, &[("growth", growth), ("memory", "fast")]);
        let low = fit_with(by_rows(), &y, &[("growth", growth), ("memory", "low")]);
        assert_eq!(low.to_json(), fast.to_json(), "{growth}");
    }
    let mut params = optboost::Params::default();
    let error = params.set("memory", "small").unwrap_err().to_string();
    assert!(
        error.contains("memory") && error.contains("\"low\""),
        "{error}"
    );
}
