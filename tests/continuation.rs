//! Training a saved model further (`Booster::continue_model`): for the methods whose state is
//! the model's output, the model of one longer fit, bit for bit; the others refused by name.

mod common;

use common::*;
use optboost::{Booster, Model, TrainData};

fn train_data(data: &Data) -> TrainData<'_> {
    TrainData {
        frame: data.frame(),
        y: &data.y,
        weights: None,
    }
}

fn with_n_iter<'a>(settings: &[(&'a str, &'a str)], n_iter: &'a str) -> Vec<(&'a str, &'a str)> {
    settings
        .iter()
        .copied()
        .chain([("n_iter", n_iter)])
        .collect()
}

/// The model of `first` iterations, through its JSON file, trained `more` iterations further.
fn continued(settings: &[(&str, &str)], data: &Data, first: &str, more: &str) -> Model {
    let (booster, _) = train(params(&with_n_iter(settings, first)), data);
    let saved = booster.into_model().to_json();
    let loaded = Model::from_json(&saved).unwrap();
    let params = params(&with_n_iter(settings, more));
    let mut booster = Booster::continue_model(params, loaded, &train_data(data), None).unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

fn labels(data: &Data) -> Data {
    let y = data
        .y
        .iter()
        .map(|&y| if y > 14.0 { 1.0 } else { -1.0 })
        .collect();
    Data { y, ..data.clone() }
}

#[test]
fn a_continued_model_is_the_longer_fit_bit_for_bit() {
    let data = friedman(1_500, 5, 7);
    let binary = labels(&data);
    let cases: Vec<(Vec<(&str, &str)>, &Data)> = vec![
        (vec![], &data),
        (vec![("loss", "logistic")], &binary),
        (vec![("step", "line_search"), ("loss", "huber")], &data),
        (vec![("loss", "absolute")], &data),
        (
            vec![
                ("subsample", "0.7"),
                ("colsample_bytree", "0.8"),
                ("colsample_bynode", "0.7"),
                ("random_strength", "1"),
                ("bootstrap", "bayesian"),
            ],
            &data,
        ),
        (
            vec![("method", "rgbm"), ("selection", "random"), ("t", "3")],
            &data,
        ),
        (vec![("method", "proximal"), ("loss", "logistic")], &binary),
    ];
    for (settings, data) in cases {
        let (longer, _) = train(params(&with_n_iter(&settings, "14")), data);
        let longer = longer.into_model();
        let continued = continued(&settings, data, "9", "5");
        assert_eq!(continued, longer, "{settings:?}");
        let bits = |m: &Model| -> Vec<u64> {
            m.predict(&data.frame())
                .unwrap()
                .iter()
                .map(|p| p.to_bits())
                .collect()
        };
        assert_eq!(bits(&continued), bits(&longer), "{settings:?}");
    }
}

#[test]
fn methods_with_state_beyond_the_output_are_refused_by_name() {
    let data = friedman(300, 3, 2);
    for method in [
        "agbm",
        "vagbm",
        "accelerated_gbm",
        "residual_proximal",
        "repeated_gbm",
    ] {
        let settings = [("method", method), ("n_iter", "3")];
        let (booster, _) = train(params(&settings), &data);
        let model = booster.into_model();
        let error = Booster::continue_model(params(&settings), model, &train_data(&data), None)
            .err()
            .unwrap_or_else(|| panic!("{method} continued"))
            .to_string();
        assert!(
            error.contains(method) && error.contains("gbm, rgbm, proximal"),
            "{error}"
        );
    }
    // Another method or loss than the model's.
    let (booster, _) = train(params(&[("n_iter", "3")]), &data);
    let model = booster.into_model();
    let other = params(&[("loss", "huber")]);
    let error = Booster::continue_model(other, model.clone(), &train_data(&data), None);
    assert!(error
        .err()
        .unwrap()
        .to_string()
        .contains("the model's loss"));
    // Data of another width.
    let narrow = friedman(300, 2, 2);
    let error = Booster::continue_model(params(&[]), model, &train_data(&narrow), None);
    assert!(error.is_err());
}
