//! The modelling options power users reach for: row and column subsampling (stochastic gradient
//! boosting), with every method.

mod common;

use common::{friedman, params, Data, TestRng};
use optboost::data::{BinnedData, BinningParams};
use optboost::tree::{
    grow_with_options, Candidates, FitStats, GrowBuffers, GrowOptions, Growth, TreeParams,
};
use optboost::{Booster, Model, TrainData};

fn fit(settings: &[(&str, &str)], data: &Data, threads: usize) -> Model {
    let mut params = params(settings);
    params.n_threads = threads;
    let frame = data.frame();
    let mut booster = Booster::new(
        params,
        &TrainData {
            frame,
            y: &data.y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

fn binary(data: &Data) -> Data {
    let median = {
        let mut y = data.y.clone();
        y.sort_by(f64::total_cmp);
        y[y.len() / 2]
    };
    Data {
        columns: data.columns.clone(),
        y: data.y.iter().map(|&y| f64::from(y > median)).collect(),
    }
}

const SAMPLED: [(&str, &str); 3] = [
    ("subsample", "0.6"),
    ("colsample_bytree", "0.7"),
    ("colsample_bynode", "0.5"),
];

#[test]
fn subsampled_models_are_the_same_with_one_and_two_threads() {
    // More rows than a histogram block and a row chunk: the parallel paths run.
    let data = friedman(40_000, 8, 3);
    let labels = binary(&data);
    for (method, loss, data) in [
        ("gbm", "squared", &data),
        ("gbm", "absolute", &data),
        ("rgbm", "squared", &data),
        ("agbm", "logistic", &labels),
        ("proximal", "logistic", &labels),
        ("repeated_gbm", "squared", &data),
    ] {
        for growth in ["depthwise", "leafwise"] {
            let settings = [
                SAMPLED.as_slice(),
                &[
                    ("method", method),
                    ("loss", loss),
                    ("n_iter", "4"),
                    ("max_depth", "4"),
                    ("growth", growth),
                    ("seed", "11"),
                    ("selection", "groups"),
                    ("t", "4"),
                ],
            ]
            .concat();
            let one = fit(&settings, data, 1).to_json();
            let two = fit(&settings, data, 2).to_json();
            assert!(
                one == two,
                "{method} {loss} {growth}: 1 and 2 threads differ"
            );
        }
    }
}

#[test]
fn fractions_of_one_are_no_sampling() {
    let data = friedman(3_000, 5, 4);
    for method in ["gbm", "agbmr", "residual_proximal"] {
        let plain = fit(&[("method", method), ("n_iter", "5")], &data, 1);
        let ones = fit(
            &[
                ("method", method),
                ("n_iter", "5"),
                ("subsample", "1"),
                ("colsample_bytree", "1.0"),
                ("colsample_bynode", "1"),
            ],
            &data,
            1,
        );
        assert_eq!(plain.to_json(), ones.to_json(), "{method}");
    }
}

#[test]
fn a_subsampled_tree_sees_its_share_of_the_rows_and_splits_on_drawn_features() {
    let data = friedman(10_001, 6, 5);
    let model = fit(
        &[
            ("subsample", "0.5"),
            ("colsample_bytree", "0.5"),
            ("n_iter", "6"),
            ("max_depth", "3"),
        ],
        &data,
        2,
    );
    let other_seed = fit(
        &[
            ("subsample", "0.5"),
            ("colsample_bytree", "0.5"),
            ("n_iter", "6"),
            ("max_depth", "3"),
            ("seed", "1"),
        ],
        &data,
        2,
    );
    assert_ne!(model.to_json(), other_seed.to_json());
    let mut features_used = std::collections::BTreeSet::new();
    for tree in &model.trees {
        // round(0.5 · 10 001) = 5 001 rows (ties away from zero).
        assert_eq!(tree.nodes[0].count, 5_001);
        // 3 of the 6 features per tree.
        let features: std::collections::BTreeSet<u32> = (tree.nodes.iter())
            .filter(|n| !n.is_leaf())
            .map(|n| n.feature)
            .collect();
        assert!(features.len() <= 3, "{features:?}");
        features_used.extend(features);
    }
    assert!(
        features_used.len() > 3,
        "different trees draw different features"
    );
}

#[test]
fn a_tree_grown_on_drawn_rows_is_the_tree_of_those_rows_with_weight_one_and_the_others_zero() {
    // Histograms, gains and leaf values from the drawn rows only; every row still in a leaf.
    let data = friedman(30_000, 4, 6);
    let frame = data.frame();
    let binned = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
    let n = data.n_rows();
    let mut rng = TestRng::new(9);
    let drawn: Vec<u32> = (0..n as u32).filter(|_| rng.uniform() < 0.4).collect();
    let mut mask = vec![0.0; n];
    drawn.iter().for_each(|&r| mask[r as usize] = 1.0);
    let t: Vec<f64> = data.y.clone();
    let vt: Vec<f64> = t.iter().zip(&mask).map(|(t, m)| t * m).collect();
    for growth in [Growth::Depthwise, Growth::Leafwise] {
        let params = TreeParams {
            max_depth: 6,
            max_leaves: 30,
            growth,
            ..TreeParams::default()
        };
        for candidates in [
            Candidates::All,
            Candidates::Features(vec![false, true, false, false]),
        ] {
            let sampled = grow_with_options(
                &binned,
                FitStats { vt: &t, v: &[] },
                &params,
                &candidates,
                &mut GrowBuffers::default(),
                &GrowOptions {
                    rows: Some(&drawn),
                    ..GrowOptions::default()
                },
            );
            let weighted = grow_with_options(
                &binned,
                FitStats { vt: &vt, v: &mask },
                &params,
                &candidates,
                &mut GrowBuffers::default(),
                &GrowOptions::default(),
            );
            assert_eq!(sampled.tree.nodes[0].count as usize, drawn.len());
            assert_eq!(sampled.tree.nodes.len(), weighted.tree.nodes.len());
            for (a, b) in sampled.tree.nodes.iter().zip(&weighted.tree.nodes) {
                assert_eq!((a.feature, a.bin, a.left), (b.feature, b.bin, b.left));
                assert!((a.value - b.value).abs() <= 1e-9 * (1.0 + b.value.abs()));
            }
            // Every row is in the leaf the tree's rules send it to, ascending within each leaf.
            assert_eq!(sampled.rows().len(), n);
            let fitted = sampled.fitted_values(&binned);
            for (i, &value) in fitted.iter().enumerate() {
                assert_eq!(value, sampled.tree.predict_bins(binned.matrix().row(i)));
            }
            for leaf in sampled.leaves() {
                let rows = sampled.leaf_rows(leaf);
                assert!(rows.windows(2).all(|w| w[0] < w[1]));
                for &r in rows {
                    assert_eq!(
                        sampled.tree.leaf_of_bins(binned.matrix().row(r as usize)),
                        leaf.node
                    );
                }
            }
        }
    }
}

#[test]
fn subsampling_is_stochastic_gradient_boosting_that_still_learns() {
    let train = friedman(8_000, 6, 7);
    let test = friedman(4_000, 6, 8);
    for (method, step) in [
        ("gbm", "newton"),
        ("gbm", "line_search"),
        ("gbm", "leaf_line_search"),
        ("agbmr", "constant"),
        ("accelerated_proximal", "leaf_line_search"),
    ] {
        let settings = [
            ("method", method),
            ("step", step),
            ("n_iter", "60"),
            ("subsample", "0.5"),
            ("colsample_bynode", "0.7"),
        ];
        let model = fit(&settings, &train, 2);
        let predictions = model.predict(&test.frame()).unwrap();
        let mse = predictions
            .iter()
            .zip(&test.y)
            .map(|(p, y)| (p - y).powi(2))
            .sum::<f64>()
            / test.n_rows() as f64;
        // The target's variance is about 24; the noise's 1.
        assert!(mse < 8.0, "{method} {step}: test MSE {mse}");
    }
}

#[test]
fn fractions_out_of_range_are_rejected() {
    for name in ["subsample", "colsample_bytree", "colsample_bynode"] {
        for bad in ["0", "1.5", "-0.1", "nan"] {
            let mut p = params(&[]);
            p.set(name, bad).unwrap();
            let message = p.validate().unwrap_err().to_string();
            assert!(message.contains(name), "{message}");
        }
    }
}
