//! Categorical features as ordered target statistics (`cat_encoding = "target_stats"`):
//! prediction from the all-row statistics the model stores, files read back bit for bit, the
//! same model for every thread count, and a clear refusal in data-parallel fits.

use optboost::collective::Local;
use optboost::{Booster, Feature, Frame, Model, Offsets, Params, TrainData};
use std::sync::Arc;

const N: usize = 600;

/// A numeric column and a 12-level column whose level shifts the class rate.
fn data() -> (Vec<f64>, Vec<i32>, Vec<f64>) {
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..N).map(|_| next()).collect();
    let codes: Vec<i32> = (0..N)
        .map(|i| {
            if i % 17 == 0 {
                -1
            } else {
                (next() * 12.0) as i32
            }
        })
        .collect();
    let y = (0..N)
        .map(|i| {
            let level = if codes[i] < 0 {
                0.0
            } else {
                f64::from(codes[i]) / 12.0
            };
            f64::from(u8::from(next() < 0.2 + 0.5 * level + 0.2 * x[i]))
        })
        .collect();
    (x, codes, y)
}

fn fit(threads: &str, extra: &[(&str, &str)]) -> Model {
    let (x, codes, y) = data();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::categorical("c", &codes, 12),
    ])
    .unwrap();
    let mut params = Params::default();
    for (k, v) in [
        ("loss", "logistic"),
        ("n_iter", "20"),
        ("cat_encoding", "target_stats"),
        ("seed", "3"),
        ("n_threads", threads),
    ]
    .iter()
    .chain(extra)
    {
        params.set(k, v).unwrap();
    }
    let train = TrainData {
        frame,
        y: &y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, None).unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

#[test]
fn prediction_reads_the_all_row_statistics_of_each_level() {
    let model = fit("1", &[]);
    let stat = model.features[1]
        .target_stats
        .as_ref()
        .expect("c is a target statistic");
    assert_eq!(
        (model.features[1].name.as_str(), stat.source.as_str()),
        ("c", "c")
    );
    assert_eq!(model.input_names(), ["x", "c"]);
    let (_, codes, y) = data();
    let p = y.iter().sum::<f64>() / N as f64;
    assert_eq!(stat.prior, p);
    for level in 0..12 {
        let rows: Vec<usize> = (0..N).filter(|&i| codes[i] == level).collect();
        let sum: f64 = rows.iter().map(|&i| y[i]).sum();
        let expected = (sum + p) / (rows.len() as f64 + 1.0);
        assert!(
            (stat.levels[level as usize] - expected).abs() < 1e-12,
            "level {level}"
        );
    }
    // The model on a level's codes equals the model on its statistic as a numeric column.
    let x = [0.3, 0.3, 0.3, 0.3];
    let given = [2, 9, -1, 11];
    let as_codes = model
        .predict(
            &Frame::new(vec![
                Feature::numeric("x", &x),
                Feature::categorical("c", &given, 12),
            ])
            .unwrap(),
        )
        .unwrap();
    let mut plain = model.clone();
    plain.features[1].target_stats = None;
    let numbers: Vec<f64> = given.iter().map(|&c| stat.value(c)).collect();
    let as_numbers = plain
        .predict(
            &Frame::new(vec![
                Feature::numeric("x", &x),
                Feature::numeric("c", &numbers),
            ])
            .unwrap(),
        )
        .unwrap();
    assert_eq!(as_codes, as_numbers);
    assert_eq!(numbers[2], p, "missing → the prior");
}

#[test]
fn files_keep_the_statistics_bit_for_bit_and_bad_ones_are_refused() {
    let model = fit("1", &[]);
    let text = model.to_json();
    let back = Model::from_json(&text).unwrap();
    assert_eq!(back, model);
    let (a, b) = (
        &model.features[1].target_stats,
        &back.features[1].target_stats,
    );
    let bits = |s: &Option<optboost::TargetStat>| -> Vec<u64> {
        s.as_ref()
            .unwrap()
            .levels
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    assert_eq!(bits(a), bits(b));
    assert_eq!(back.to_json(), text);
    let levels = serde_json::to_string(&a.as_ref().unwrap().levels).unwrap();
    let short = text.replacen(&levels, "[]", 1);
    let e = Model::from_json(&short).unwrap_err().to_string();
    assert!(e.contains("target statistics of 0 levels"), "{e}");
    let nan = text.replacen("\"prior_weight\":1.0", "\"prior_weight\":-1.0", 1);
    let e = Model::from_json(&nan).unwrap_err().to_string();
    assert!(e.contains("prior weight -1"), "{e}");
}

#[test]
fn the_model_is_the_same_for_every_thread_count_and_differs_by_seed() {
    let one = fit("1", &[]).to_json();
    assert_eq!(fit("2", &[]).to_json(), one);
    assert_eq!(fit("3", &[]).to_json(), one);
    assert_ne!(fit("1", &[("seed", "4")]).to_json(), one);
}

#[test]
fn multiclass_gives_a_statistic_per_class_read_from_one_column() {
    let (x, codes, _) = data();
    let y: Vec<f64> = codes.iter().map(|&c| f64::from(c.max(0) % 3)).collect();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::categorical("c", &codes, 12),
    ])
    .unwrap();
    let mut params = Params::default();
    params
        .set("loss", "softmax")
        .unwrap()
        .set("n_iter", "5")
        .unwrap();
    params.set("cat_encoding", "c:target_stats").unwrap();
    let train = TrainData {
        frame: frame.clone(),
        y: &y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, None).unwrap();
    booster.run(|_| true).unwrap();
    let model = booster.into_model();
    let names: Vec<&str> = model.features.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["x", "c[0]", "c[1]", "c[2]"]);
    assert_eq!(model.feature_sources(), ["x", "c", "c", "c"]);
    assert_eq!(model.input_names(), ["x", "c"]);
    let p = model.predict_response(&frame).unwrap();
    let right = (0..N).filter(|&i| {
        let row = &p[i * 3..i * 3 + 3];
        let best = (0..3).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
        best as f64 == y[i]
    });
    assert!(right.count() > N * 9 / 10, "the level decides the class");
    // SHAP: one column per feature (and the bias); rows sum to the scores.
    let contrib = model.predict_contrib(&frame).unwrap();
    let scores = model.predict(&frame).unwrap();
    for (row, s) in contrib.chunks(5).zip(&scores) {
        assert!((row.iter().sum::<f64>() - s).abs() < 1e-9);
    }
}

#[test]
fn data_parallel_fits_refuse_target_statistics_by_name() {
    let (x, codes, y) = data();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::categorical("c", &codes, 12),
    ])
    .unwrap();
    let mut params = Params::default();
    params.set("cat_encoding", "target_stats").unwrap();
    let train = TrainData {
        frame,
        y: &y,
        weights: None,
    };
    let e = Booster::distributed(params, &train, None, Offsets::default(), Arc::new(Local))
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("cat_encoding") && e.contains("target_stats"),
        "{e}"
    );
}

#[test]
fn naming_a_column_that_is_not_categorical_is_an_error() {
    let (x, codes, y) = data();
    let frame = Frame::new(vec![
        Feature::numeric("x", &x),
        Feature::categorical("c", &codes, 12),
    ])
    .unwrap();
    let mut params = Params::default();
    params.set("cat_encoding", "x:target_stats").unwrap();
    let train = TrainData {
        frame,
        y: &y,
        weights: None,
    };
    let e = Booster::new(params, &train, None)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("cat_encoding") && e.contains("\"x\""), "{e}");
}

/// Two 6-level columns whose levels decide the class only together (the parity of a + b), and
/// a 6-level column of noise.
fn pair_data() -> (Vec<i32>, Vec<i32>, Vec<i32>, Vec<f64>) {
    let mut state = 99u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut draw = || (next() * 6.0) as i32;
    let (a, b, noise): (Vec<i32>, Vec<i32>, Vec<i32>) =
        (0..N).map(|_| (draw(), draw(), draw())).fold(
            (vec![], vec![], vec![]),
            |(mut a, mut b, mut c), (x, y, z)| {
                a.push(x);
                b.push(y);
                c.push(z);
                (a, b, c)
            },
        );
    let mut a = a;
    a[5] = -1; // a missing level reads the prior
    let y = (0..N)
        .map(|i| {
            let rate = if (a[i] + b[i]) % 2 == 0 { 0.85 } else { 0.15 };
            f64::from(u8::from(next() < rate))
        })
        .collect();
    (a, b, noise, y)
}

fn fit_pairs(extra: &[(&str, &str)]) -> Model {
    let (a, b, noise, y) = pair_data();
    let frame = Frame::new(vec![
        Feature::categorical("a", &a, 6),
        Feature::categorical("b", &b, 6),
        Feature::categorical("noise", &noise, 6),
    ])
    .unwrap();
    let mut params = Params::default();
    for (k, v) in [
        ("loss", "logistic"),
        ("n_iter", "20"),
        ("cat_encoding", "target_stats"),
        ("seed", "5"),
    ]
    .iter()
    .chain(extra)
    {
        params.set(k, v).unwrap();
    }
    let train = TrainData {
        frame,
        y: &y,
        weights: None,
    };
    let mut booster = Booster::new(params, &train, None).unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

#[test]
fn several_permutations_change_the_training_values_only_and_one_is_as_before() {
    let one = fit("1", &[]);
    assert_eq!(
        fit("1", &[("cat_permutations", "1")]).to_json(),
        one.to_json()
    );
    let four = fit("1", &[("cat_permutations", "4")]);
    assert_ne!(four.to_json(), one.to_json(), "the trees see other values");
    // The model's statistics are over all rows whatever the permutations.
    assert_eq!(four.features[1].target_stats, one.features[1].target_stats);
    assert_eq!(
        fit("3", &[("cat_permutations", "4")]).to_json(),
        four.to_json()
    );
    assert_eq!(Model::from_json(&four.to_json()).unwrap(), four);
    // A real-valued target, whose sums depend on the order they are added in: the model's
    // statistics are still those of one permutation.
    let (x, codes, _) = data();
    let y: Vec<f64> = (0..N)
        .map(|i| x[i] / 3.0 + f64::from(codes[i].max(0)) / 7.0)
        .collect();
    let stats = |permutations: &str| {
        let frame = Frame::new(vec![Feature::categorical("c", &codes, 12)]).unwrap();
        let mut params = Params::default();
        for (k, v) in [
            ("n_iter", "2"),
            ("cat_encoding", "target_stats"),
            ("cat_permutations", permutations),
        ] {
            params.set(k, v).unwrap();
        }
        let train = TrainData {
            frame,
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(params, &train, None).unwrap();
        booster.run(|_| true).unwrap();
        booster.into_model().features[0]
            .target_stats
            .clone()
            .unwrap()
    };
    let (one, seven) = (stats("1"), stats("7"));
    let bits = |s: &optboost::TargetStat| s.levels.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one), bits(&seven));
}

#[test]
fn a_combination_that_carries_the_signal_is_chosen_and_predicts_from_both_columns() {
    let model = fit_pairs(&[("cat_combinations", "3")]);
    let names: Vec<&str> = model.features.iter().map(|f| f.name.as_str()).collect();
    // The pair of noise with anything predicts worse than its better column: not chosen.
    assert_eq!(names, ["a", "a*b", "b", "noise"]);
    assert_eq!(model.feature_sources(), ["a", "a", "b", "noise"]);
    assert_eq!(model.input_names(), ["a", "b", "noise"]);
    let stat = model.features[1].target_stats.clone().unwrap();
    let with = stat.with.clone().expect("a combination");
    assert_eq!(
        (stat.source.as_str(), with.source.as_str(), with.n_levels),
        ("a", "b", 6)
    );
    assert_eq!((stat.levels.len(), stat.source_levels()), (36, 6));
    // Each pair of levels: its rows' mean target shrunk to the prior (all rows).
    let (a, b, _, y) = pair_data();
    let p = y.iter().sum::<f64>() / N as f64;
    for (la, lb) in [(0, 0), (2, 5), (5, 3)] {
        let rows: Vec<usize> = (0..N).filter(|&i| a[i] == la && b[i] == lb).collect();
        let sum: f64 = rows.iter().map(|&i| y[i]).sum();
        let expected = (sum + p) / (rows.len() as f64 + 1.0);
        assert!(
            (stat.value_of(la, lb) - expected).abs() < 1e-12,
            "({la}, {lb})"
        );
    }
    assert_eq!((stat.value_of(-1, 2), stat.value_of(2, -1)), (p, p));
    // Prediction on codes = the plain model on the statistics as numbers.
    let (ga, gb, gn) = ([0, 1, 4, -1], [0, 0, 3, 2], [1, 2, 3, 4]);
    let codes = Frame::new(vec![
        Feature::categorical("a", &ga, 6),
        Feature::categorical("b", &gb, 6),
        Feature::categorical("noise", &gn, 6),
    ])
    .unwrap();
    let mut plain = model.clone();
    let numbers: Vec<Vec<f64>> = (plain.features.iter_mut())
        .map(|f| {
            let s = f.target_stats.take().unwrap();
            (0..4)
                .map(|i| match s.source.as_str() {
                    "a" => s.value_of(ga[i], gb[i]),
                    "b" => s.value(gb[i]),
                    _ => s.value(gn[i]),
                })
                .collect()
        })
        .collect();
    let as_numbers = Frame::new(
        (names.iter().zip(&numbers))
            .map(|(n, v)| Feature::numeric(*n, v))
            .collect(),
    )
    .unwrap();
    let predicted = model.predict(&codes).unwrap();
    assert_eq!(predicted, plain.predict(&as_numbers).unwrap());
    // The interaction is learnt: even sums get the higher scores.
    assert!(predicted[0] > 0.0 && predicted[1] < 0.0, "{predicted:?}");
    // SHAP rows sum to the scores.
    let contrib = model.predict_contrib(&codes).unwrap();
    for (row, s) in contrib.chunks(5).zip(&predicted) {
        assert!((row.iter().sum::<f64>() - s).abs() < 1e-9);
    }
    // Files keep it bit for bit; threads do not change it.
    let text = model.to_json();
    assert_eq!(Model::from_json(&text).unwrap().to_json(), text);
    assert_eq!(
        fit_pairs(&[("cat_combinations", "3"), ("n_threads", "3")]).to_json(),
        text
    );
}

#[test]
fn without_combinations_the_model_is_as_before_and_bad_ones_are_refused() {
    let none = fit_pairs(&[]);
    assert_eq!(
        fit_pairs(&[("cat_combinations", "0")]).to_json(),
        none.to_json()
    );
    assert!(!none.to_json().contains("\"with\""), "older files' layout");
    let text = fit_pairs(&[("cat_combinations", "1")]).to_json();
    for (from, to, says) in [
        (
            "\"n_levels\":6",
            "\"n_levels\":0",
            "a combination of 36 levels",
        ),
        ("\"n_levels\":6", "\"n_levels\":7", "a multiple of it"),
        (
            "\"source\":\"b\",\"n_levels\"",
            "\"source\":\"a\",\"n_levels\"",
            "another named",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let e = Model::from_json(&text.replacen(from, to, 1))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{to}: {e}");
    }
    let mut params = Params::default();
    for (name, value) in [("cat_permutations", "0"), ("cat_combinations", "33")] {
        let mut p = params.clone();
        p.set(name, value).unwrap();
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
    }
    params.set("cat_permutations", "64").unwrap();
    params.validate().unwrap();
}
