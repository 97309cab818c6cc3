//! Random strength (noise on split scores) and the Bayesian bootstrap: seeded, the same model on
//! any thread count, off by default, and doing something when on.

mod common;

use common::*;
use optboost::{Booster, Model, TrainData};

fn fit(settings: &[(&str, &str)], data: &Data) -> Model {
    train(params(settings), data).0.into_model()
}

fn predictions(model: &Model, data: &Data) -> Vec<u64> {
    (model.predict(&data.frame()).unwrap().iter())
        .map(|p| p.to_bits())
        .collect()
}

fn with_threads(settings: &[(&str, &str)], threads: &'static str) -> Vec<(String, String)> {
    (settings.iter())
        .map(|&(k, v)| (k.to_string(), v.to_string()))
        .chain([("n_threads".to_string(), threads.to_string())])
        .collect()
}

fn fit_owned(settings: &[(String, String)], data: &Data) -> Model {
    let borrowed: Vec<(&str, &str)> = settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    fit(&borrowed, data)
}

const CASES: &[&[(&str, &str)]] = &[
    &[("random_strength", "1")],
    &[("bootstrap", "bayesian")],
    &[
        ("random_strength", "2"),
        ("bootstrap", "bayesian"),
        ("bagging_temperature", "0.5"),
        ("growth", "leafwise"),
        ("max_leaves", "15"),
    ],
    &[
        ("loss", "logistic"),
        ("random_strength", "1"),
        ("bootstrap", "bayesian"),
        ("subsample", "0.7"),
    ],
    &[
        ("method", "agbm"),
        ("random_strength", "1"),
        ("bootstrap", "bayesian"),
    ],
    &[
        ("method", "residual_proximal"),
        ("random_strength", "1"),
        ("bootstrap", "bayesian"),
        ("sample_strategy", "goss"),
    ],
];

fn data_for(settings: &[(&str, &str)]) -> Data {
    let data = friedman(3_000, 6, 11);
    if settings.contains(&("loss", "logistic")) {
        let y = data
            .y
            .iter()
            .map(|&y| if y > 14.0 { 1.0 } else { -1.0 })
            .collect();
        return Data { y, ..data };
    }
    data
}

#[test]
fn the_same_model_on_one_and_two_threads() {
    for settings in CASES {
        let settings: Vec<(&str, &str)> =
            settings.iter().copied().chain([("n_iter", "25")]).collect();
        let data = data_for(&settings);
        let one = fit_owned(&with_threads(&settings, "1"), &data);
        let two = fit_owned(&with_threads(&settings, "2"), &data);
        assert_eq!(one, two, "{settings:?}");
        assert_eq!(predictions(&one, &data), predictions(&two, &data));
    }
}

#[test]
fn each_option_changes_the_model_and_the_seed_changes_the_draw() {
    let data = friedman(3_000, 6, 11);
    let plain = fit(&[("n_iter", "20")], &data);
    for option in [("random_strength", "1"), ("bootstrap", "bayesian")] {
        let settings = [("n_iter", "20"), option];
        let model = fit(&settings, &data);
        assert_ne!(
            predictions(&model, &data),
            predictions(&plain, &data),
            "{option:?}"
        );
        let again = fit(&settings, &data);
        assert_eq!(model, again, "seeded: {option:?}");
        let reseeded = fit(&[("n_iter", "20"), option, ("seed", "5")], &data);
        assert_ne!(
            predictions(&model, &data),
            predictions(&reseeded, &data),
            "{option:?}"
        );
    }
}

#[test]
fn zero_strength_and_zero_temperature_are_the_default_model_bit_for_bit() {
    let data = friedman(2_000, 5, 3);
    for base in [
        vec![("n_iter", "20")],
        vec![("n_iter", "20"), ("loss", "huber"), ("subsample", "0.8")],
        vec![("n_iter", "10"), ("method", "accelerated_gbm")],
    ] {
        let plain = fit(&base, &data);
        let mut off = base.clone();
        off.extend([
            ("random_strength", "0"),
            ("bootstrap", "bayesian"),
            ("bagging_temperature", "0"),
        ]);
        assert_eq!(fit(&off, &data), plain, "{base:?}");
    }
}

#[test]
fn noise_chooses_splits_but_reports_their_gains() {
    // The first tree's root without noise makes the split of the largest gain; with noise it
    // makes another one at times, and reports that split's own (smaller) gain, which is what
    // gain importance sums, not its noisy score.
    let data = friedman(2_000, 5, 3);
    let root_gain = |settings: &[(&str, &str)]| fit(settings, &data).trees[0].nodes[0].gain;
    let best = root_gain(&[("n_iter", "1")]);
    let mut smaller = 0;
    for seed in ["0", "1", "2", "3", "4", "5", "6", "7"] {
        let gain = root_gain(&[("n_iter", "1"), ("random_strength", "50"), ("seed", seed)]);
        assert!(gain > 0.0 && gain <= best, "{gain} against {best}");
        smaller += usize::from(gain < best);
    }
    assert!(smaller > 0, "noise never changed the root's split");
    // Still a fit: the training loss falls.
    let (booster, _) = train(
        params(&[("n_iter", "30"), ("random_strength", "50")]),
        &data,
    );
    let losses = train_losses(&booster);
    assert!(losses.last().unwrap() < &losses[0], "{losses:?}");
}

#[test]
fn refusals_name_the_parameter() {
    for (name, value, expected) in [
        ("random_strength", "-1", "random_strength"),
        ("random_strength", "inf", "random_strength"),
        ("bagging_temperature", "-0.5", "bagging_temperature"),
        ("bagging_temperature", "11", "bagging_temperature"),
        ("bootstrap", "bernoulli", "bootstrap"),
    ] {
        let mut params = params(&[]);
        let error = match params.set(name, value) {
            Err(e) => e,
            Ok(p) => p.validate().unwrap_err(),
        };
        assert!(error.to_string().contains(expected), "{error}");
    }
    let mut cox = params(&[("loss", "cox"), ("bootstrap", "bayesian")]);
    let error = cox.validate().unwrap_err().to_string();
    assert!(
        error.contains("bootstrap") && error.contains("cox"),
        "{error}"
    );
    cox.set("bootstrap", "no").unwrap();
    cox.validate().unwrap();
    let data = friedman(100, 2, 1);
    let train = TrainData {
        frame: data.frame(),
        y: &data.y,
        weights: None,
    };
    assert!(Booster::new(params(&[("random_strength", "nan")]), &train, None).is_err());
}
