//! Several quantiles in one model (`quantiles`): every method that takes `pinball` takes it, each
//! output under `gbm` is the pinball fit of its level, and no prediction ever crosses.

mod common;

use common::*;
use optboost::{Booster, Method, Model, Params, TrainData};

const LEVELS: &str = "quantiles(0.05, 0.5, 0.95)";

fn fit(p: Params, data: &Data) -> Booster {
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: data.frame(),
            y: &data.y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    booster
}

fn settings(method: &str, loss: &str) -> Params {
    let mut p = params(&[("method", method), ("loss", loss)]);
    p.n_iter = 15;
    p.tree.max_depth = 3;
    p
}

/// Rows whose K predictions are not increasing.
fn crossings(predictions: &[f64], k: usize) -> usize {
    (predictions.chunks(k))
        .filter(|row| row.windows(2).any(|pair| pair[0] > pair[1]))
        .count()
}

#[test]
fn every_method_that_takes_pinball_takes_quantiles_and_never_crosses() {
    let data = friedman(300, 5, 3);
    let unseen = friedman(200, 5, 4);
    let mut fitted = 0;
    for method in Method::ALL {
        let name = method.name();
        let mut pinball = params(&[("loss", "pinball(0.9)")]);
        if pinball.set("method", name).is_err() || pinball.validate().is_err() {
            continue;
        }
        let booster = fit(settings(name, LEVELS), &data);
        let model = booster.model();
        for rows in [&data, &unseen] {
            let response = model.predict_response(&rows.frame()).unwrap();
            assert_eq!(response.len(), rows.y.len() * 3, "{name}");
            assert_eq!(crossings(&response, 3), 0, "{name}");
            assert!(response.iter().all(|v| v.is_finite()), "{name}");
        }
        // The levels are where they belong on the training rows: below q0.05 few, below q0.95 most.
        let response = model.predict_response(&data.frame()).unwrap();
        let share = |level: usize| {
            let below = (data.y.iter().enumerate())
                .filter(|&(i, &y)| y <= response[i * 3 + level])
                .count();
            below as f64 / data.y.len() as f64
        };
        assert!(
            share(0) < 0.3 && share(2) > 0.7,
            "{name}: {} {}",
            share(0),
            share(2)
        );
        let loaded = Model::from_json(&model.to_json()).unwrap();
        assert_eq!(
            loaded.predict_response(&unseen.frame()).unwrap(),
            model.predict_response(&unseen.frame()).unwrap(),
            "{name}"
        );
        fitted += 1;
    }
    assert!(fitted >= 5, "{fitted} methods");
}

#[test]
fn under_gbm_each_output_is_the_pinball_fit_of_its_level() {
    let data = friedman(300, 5, 8);
    let frame = data.frame();
    let joint = fit(settings("gbm", LEVELS), &data)
        .model()
        .predict(&frame)
        .unwrap();
    for (k, tau) in ["0.05", "0.5", "0.95"].iter().enumerate() {
        let single = fit(settings("gbm", &format!("pinball({tau})")), &data)
            .model()
            .predict(&frame)
            .unwrap();
        for (i, &s) in single.iter().enumerate() {
            assert!(
                (joint[i * 3 + k] - s).abs() <= 1e-12,
                "level {tau}, row {i}"
            );
        }
    }
}
