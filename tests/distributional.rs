//! Distributional boosting (`normal`, `lognormal`, `gamma_dist`, `negative_binomial`,
//! `student_t`): the natural step is the default, a heteroscedastic fit recovers the noise's
//! scale, every method that validates trains every family, models save and load bit for bit,
//! and the metrics `nll` and `crps` follow the validation rows.

mod common;

use common::*;
use optboost::{Booster, Method, Model, Params, StepRule, TrainData};

const LOSSES: [&str; 5] = ["normal", "lognormal", "gamma_dist", "negative_binomial", "student_t(5)"];

/// x0, x1 uniform; the location sin(2πx0), the scale 0.1 + x1, drawn for `loss`'s support.
fn heteroscedastic(n: usize, loss: &str, seed: u64) -> (Data, Vec<f64>) {
    let mut rng = TestRng::new(seed);
    let (mut x0, mut x1, mut y, mut scale) = (vec![], vec![], vec![], vec![]);
    for _ in 0..n {
        let (a, b) = (rng.uniform(), rng.uniform());
        let (location, sd) = ((2.0 * std::f64::consts::PI * a).sin(), 0.1 + b);
        let e = rng.normal();
        y.push(match loss {
            "lognormal" | "gamma_dist" => (location + sd * e).exp(),
            "negative_binomial" => {
                // Poisson(λ) with a gamma-distributed λ of mean e^{1 + location}, by inversion.
                let lambda = (1.0 + location).exp() * (1.0 + sd * e).max(0.05);
                let (mut k, mut p) = (0.0, (-lambda).exp());
                let (mut cdf, u) = (p, rng.uniform());
                while u > cdf {
                    k += 1.0;
                    p *= lambda / k;
                    cdf += p;
                }
                k
            }
            _ => location + sd * e,
        });
        x0.push(a);
        x1.push(b);
        scale.push(sd);
    }
    (Data { columns: vec![x0, x1], y }, scale)
}

fn settings(method: &str, loss: &str, n_iter: usize) -> Params {
    let mut p = params(&[("method", method), ("loss", loss)]);
    p.n_iter = n_iter;
    p.tree.max_depth = 3;
    p
}

fn fit(p: Params, train: &Data, valid: Option<&Data>) -> Booster {
    let valid_frame = valid.map(|v| v.frame());
    let valid = valid.zip(valid_frame.as_ref()).map(|(v, frame)| TrainData {
        frame: frame.clone(),
        y: &v.y,
        weights: None,
    });
    let mut booster = Booster::new(
        p,
        &TrainData {
            frame: train.frame(),
            y: &train.y,
            weights: None,
        },
        valid.as_ref(),
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    booster
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn the_natural_step_is_the_default_and_recovers_the_scale() {
    for method in ["gbm", "rgbm"] {
        let p = settings(method, "normal", 1);
        assert_eq!(p.step_in_force().unwrap().0, StepRule::Natural, "{method}");
    }
    // A method without the natural step keeps its own default.
    assert_ne!(settings("agbm", "normal", 1).step_in_force().unwrap().0, StepRule::Natural);
    let (train, _) = heteroscedastic(2000, "normal", 1);
    let (test, true_sd) = heteroscedastic(1000, "normal", 2);
    let booster = fit(settings("gbm", "normal", 200), &train, None);
    let model = booster.model();
    let response = model.predict_response(&test.frame()).unwrap();
    let sd: Vec<f64> = response.chunks(2).map(|row| row[1]).collect();
    assert!(correlation(&sd, &true_sd) > 0.8, "{}", correlation(&sd, &true_sd));
    // Test NLL below that of the same means with one constant scale fitted to them.
    let n = test.y.len() as f64;
    let nll: f64 = (response.chunks(2).zip(&test.y))
        .map(|(row, y)| 0.5 * (2.0 * std::f64::consts::PI).ln() + row[1].ln() + 0.5 * ((y - row[0]) / row[1]).powi(2))
        .sum::<f64>()
        / n;
    let pooled = (response.chunks(2).zip(&test.y)).map(|(row, y)| (y - row[0]).powi(2)).sum::<f64>() / n;
    let constant = 0.5 * (2.0 * std::f64::consts::PI).ln() + 0.5 * pooled.ln() + 0.5;
    assert!(nll < constant - 0.03, "{nll} vs {constant}");
}

/// Every method on `normal`, and `gbm`, `rgbm` and `proximal` (the per-row prox) on the other
/// families (the other methods reach the loss through the same forms).
#[test]
fn every_method_that_validates_fits_every_family_and_saves_bit_for_bit() {
    for loss in LOSSES {
        let (train, _) = heteroscedastic(150, loss, 3);
        let (unseen, _) = heteroscedastic(50, loss, 4);
        let mut fitted = 0;
        for method in Method::ALL {
            let p = settings(method.name(), loss, 8);
            let sampled = ["gbm", "rgbm", "proximal"].contains(&method.name());
            if p.validate().is_err() || (loss != "normal" && !sampled) {
                continue;
            }
            let booster = fit(p, &train, None);
            let losses = train_losses(&booster);
            assert!(losses.iter().all(|l| l.is_finite()), "{loss} {}: {losses:?}", method.name());
            assert!(losses.last() < losses.first(), "{loss} {}: {losses:?}", method.name());
            let model = booster.model();
            let response = model.predict_response(&unseen.frame()).unwrap();
            assert_eq!(response.len(), 2 * unseen.y.len());
            assert!(response.iter().all(|v| v.is_finite()), "{loss} {}", method.name());
            let loaded = Model::from_json(&model.to_json()).unwrap();
            assert_eq!(loaded.predict(&unseen.frame()).unwrap(), model.predict(&unseen.frame()).unwrap());
            fitted += 1;
        }
        assert!(fitted >= 3, "{loss}: {fitted} methods");
        if loss == "normal" {
            assert!(fitted >= 10, "{fitted} methods");
        }
    }
}

#[test]
fn every_step_rule_of_gbm_trains_a_distribution() {
    let (train, _) = heteroscedastic(400, "gamma_dist", 5);
    for step in ["natural", "newton", "line_search", "leaf_line_search", "constant"] {
        let mut p = settings("gbm", "gamma_dist", 30);
        p.set("step", step).unwrap();
        let losses = train_losses(&fit(p, &train, None));
        assert!(losses.last().unwrap() < &(losses[0] - 0.05), "{step}: {losses:?}");
    }
}

#[test]
fn nll_and_crps_follow_the_validation_rows_and_stop_early() {
    let (train, _) = heteroscedastic(800, "normal", 6);
    let (valid, _) = heteroscedastic(300, "normal", 7);
    let mut p = settings("gbm", "normal", 400);
    p.set("metrics", "crps, nll, rmse").unwrap();
    p.set("early_stopping_rounds", "10").unwrap();
    p.set("learning_rate", "0.3").unwrap();
    let booster = fit(p, &train, Some(&valid));
    let records = &booster.history().records;
    assert!(records.len() < 400, "early stopping");
    let last = records.last().unwrap();
    // nll on the validation rows is the validation loss (the loss is the NLL).
    assert!((last.valid_metrics[1] - last.valid_loss.unwrap()).abs() < 1e-9 * last.valid_loss.unwrap().abs().max(1.0));
    assert!(last.valid_metrics[0] < records[0].valid_metrics[0]);
    // crps is refused where it has no closed form, the natural step for a loss without a
    // distribution.
    let mut p = settings("gbm", "gamma_dist", 1);
    let err = p.set("metrics", "crps").and_then(|p| p.validate()).unwrap_err().to_string();
    assert!(err.contains("closed form"), "{err}");
    let mut p = settings("gbm", "squared", 1);
    let err = p.set("step", "natural").and_then(|p| p.validate()).unwrap_err().to_string();
    assert!(err.contains("Fisher"), "{err}");
}

#[test]
fn targets_outside_the_support_are_refused_by_row() {
    let (mut train, _) = heteroscedastic(50, "negative_binomial", 8);
    train.y[7] = 2.5;
    let err = Booster::new(
        settings("gbm", "negative_binomial", 5),
        &TrainData { frame: train.frame(), y: &train.y, weights: None },
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("row 7") && err.contains("counts"), "{err}");
}
