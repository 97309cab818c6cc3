//! Multi-output regression (`multi_squared`): a target of K columns, one tree per output per
//! iteration. The loss is separable, so a K-output fit is K single-output squared-loss fits
//! wherever the method treats the outputs independently.

mod common;

use common::*;
use optboost::{Booster, Method, Model, Params, StopReason, TrainData};

/// Two targets on the Friedman features: the Friedman response and a second, different one.
fn two_targets(n: usize) -> (Data, Vec<f64>, Vec<f64>) {
    let data = friedman(n, 5, 7);
    let y1 = data.y.clone();
    let y2: Vec<f64> = (0..n)
        .map(|i| 3.0 * data.columns[0][i] - 2.0 * (data.columns[4][i] - 0.3).abs())
        .collect();
    (data, y1, y2)
}

fn interleave(columns: &[&[f64]]) -> Vec<f64> {
    let n = columns[0].len();
    (0..n)
        .flat_map(|i| columns.iter().map(move |c| c[i]))
        .collect()
}

fn fit(p: Params, data: &Data, y: &[f64]) -> Booster {
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: data.frame(),
            y,
            weights: None,
        },
        None,
    )
    .unwrap();
    let reason = booster.run(|_| true).unwrap();
    assert_eq!(reason, StopReason::Completed);
    booster
}

/// The largest |a − b| over two equally long vectors.
fn max_gap(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// The K-output fit's predictions and the K single-output fits' predictions interleaved.
fn joint_and_separate(settings: &[(&str, &str)]) -> (Vec<f64>, Vec<f64>, Booster) {
    let (data, y1, y2) = two_targets(400);
    let base = |loss: &str| {
        let mut p = params(settings);
        p.set("loss", loss).unwrap();
        p.n_iter = 20;
        p.tree.max_depth = 3;
        p
    };
    let joint = fit(base("multi_squared"), &data, &interleave(&[&y1, &y2]));
    let frame = data.frame();
    let separate: Vec<Vec<f64>> = [&y1, &y2]
        .iter()
        .map(|y| {
            (fit(base("squared"), &data, y).model())
                .predict(&frame)
                .unwrap()
        })
        .collect();
    let joint_pred = joint.model().predict(&frame).unwrap();
    (joint_pred, interleave(&[&separate[0], &separate[1]]), joint)
}

#[test]
fn gbm_on_two_outputs_is_two_squared_loss_fits() {
    for step in ["constant", "leaf_line_search"] {
        let (joint, separate, booster) = joint_and_separate(&[("method", "gbm"), ("step", step)]);
        assert!(max_gap(&joint, &separate) < 1e-12, "step {step}");
        let model = booster.model();
        assert_eq!(model.n_outputs, 2);
        assert_eq!(model.trees.len(), 40);
        // One tree per output per iteration, alternating.
        assert!((model.tree_outputs.iter().enumerate()).all(|(j, &o)| o as usize == j % 2));
    }
}

#[test]
fn methods_that_treat_outputs_independently_match_single_output_fits() {
    // Constant steps (the same ρ = 1/σ = 1 for every output) and per-output leaf searches keep
    // the outputs apart; the proximal map and the momentum sequences are per entry. Not here:
    // accelerated_gbm and accelerated_proximal, whose restarts follow the total loss.
    for method in [
        "gbm",
        "residual_gbm",
        "agbm",
        "agbmr",
        "vagbm",
        "proximal",
        "residual_proximal",
        "repeated_gbm",
        "rgbm",
    ] {
        let (joint, separate, _) = joint_and_separate(&[("method", method), ("step", "constant")]);
        assert!(
            max_gap(&joint, &separate) < 1e-12,
            "{method}: {}",
            max_gap(&joint, &separate)
        );
    }
}

#[test]
fn every_method_fits_two_outputs() {
    let (data, y1, y2) = two_targets(300);
    let y = interleave(&[&y1, &y2]);
    for method in Method::ALL {
        let mut p = params(&[("method", method.name()), ("loss", "multi_squared")]);
        p.n_iter = 15;
        p.tree.max_depth = 2;
        let booster = fit(p, &data, &y);
        let losses = train_losses(&booster);
        assert!(
            losses.last().unwrap() < &(0.8 * losses[0]),
            "{method:?}: {losses:?}"
        );
        let model = booster.model();
        let scores = model.predict(&data.frame()).unwrap();
        assert_eq!(scores.len(), 2 * data.n_rows());
        assert!(
            relative_difference(&scores, booster.train_predictions()) < 1e-9,
            "{method:?}"
        );
        // The response of a squared loss is the score itself.
        assert_eq!(model.response(scores.clone()).unwrap(), scores);
    }
}

#[test]
fn the_initial_constant_is_the_mean_of_each_column() {
    let (data, y1, y2) = two_targets(200);
    let mut p = params(&[("loss", "multi_squared")]);
    p.n_iter = 1;
    let booster = fit(p, &data, &interleave(&[&y1, &y2]));
    let mean = |y: &[f64]| y.iter().sum::<f64>() / y.len() as f64;
    let bias = &booster.model().bias;
    assert!((bias[0] - mean(&y1)).abs() < 1e-12 && (bias[1] - mean(&y2)).abs() < 1e-12);
}

#[test]
fn a_target_that_does_not_fill_whole_rows_is_refused_with_its_shape() {
    let (data, y1, _) = two_targets(50);
    let mut y = interleave(&[&y1, &y1]);
    y.pop();
    let result = Booster::new(
        params(&[("loss", "multi_squared")]),
        &TrainData {
            frame: data.frame(),
            y: &y,
            weights: None,
        },
        None,
    );
    let message = result.err().unwrap().to_string();
    assert!(message.contains("99 values for 50 rows"), "{message}");

    // A validation target with another number of columns than the training target.
    let y = interleave(&[&y1, &y1]);
    let valid_y = interleave(&[&y1, &y1, &y1]);
    let data_ref = TrainData {
        frame: data.frame(),
        y: &y,
        weights: None,
    };
    let valid = TrainData {
        frame: data.frame(),
        y: &valid_y,
        weights: None,
    };
    let message = Booster::new(
        params(&[("loss", "multi_squared")]),
        &data_ref,
        Some(&valid),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        message.contains("validation target has 150 values"),
        "{message}"
    );
    assert!(message.contains("50 × 2"), "{message}");

    let mut bad = y.clone();
    bad[7] = f64::NAN;
    let message = Booster::new(
        params(&[("loss", "multi_squared")]),
        &TrainData {
            frame: data.frame(),
            y: &bad,
            weights: None,
        },
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(message.contains("row 3, column 1"), "{message}");
}

#[test]
fn a_two_output_model_saves_loads_and_explains_per_output() {
    let (data, y1, y2) = two_targets(200);
    let mut p = params(&[("loss", "multi_squared"), ("metrics", "rmse")]);
    p.n_iter = 10;
    let booster = fit(p, &data, &interleave(&[&y1, &y2]));
    let model = booster.model();
    let frame = data.frame();
    let loaded = Model::from_json(&model.to_json()).unwrap();
    assert_eq!(
        loaded.predict(&frame).unwrap(),
        model.predict(&frame).unwrap()
    );
    assert_eq!(
        loaded.predict_iteration(&frame, 4).unwrap(),
        model.predict_iteration(&frame, 4).unwrap()
    );
    // Contributions per output add up to that output's score.
    let scores = model.predict(&frame).unwrap();
    let contrib = model.predict_contrib(&frame).unwrap();
    let width = 5 + 1;
    assert_eq!(contrib.len(), data.n_rows() * 2 * width);
    for (i, score) in scores.iter().enumerate() {
        let sum: f64 = contrib[i * width..(i + 1) * width].iter().sum();
        assert!((sum - score).abs() < 1e-9, "entry {i}: {sum} vs {score}");
    }
}
