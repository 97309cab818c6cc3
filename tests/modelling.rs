//! The modelling options power users reach for: row and column subsampling (stochastic gradient
//! boosting), with every method.

mod common;

use common::{friedman, params, Data, TestRng};
use optboost::learner::{
    grow_with_options, BinnedData, Candidates, FitStats, GrowBuffers, GrowOptions,
};
use optboost::{BinningParams, Booster, Growth, Model, TrainData, TreeParams};

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

// ------------------------------------------------------------ monotone and interaction constraints

/// y rises with x0 overall but wiggles (sin), falls with x1 but wiggles, and depends freely on x2:
/// unconstrained trees are not monotone in x0 or x1, so the constraints bind.
fn wiggly(n: usize, seed: u64) -> Data {
    let mut rng = TestRng::new(seed);
    let columns: Vec<Vec<f64>> = (0..4)
        .map(|_| (0..n).map(|_| rng.uniform()).collect())
        .collect();
    let y = (0..n)
        .map(|i| {
            let x = |j: usize| columns[j][i];
            2.0 * x(0) + 0.6 * (12.0 * x(0)).sin() - 1.5 * x(1)
                + 0.5 * (9.0 * x(1)).cos()
                + (6.0 * x(2)).sin() * x(3)
                + 0.3 * rng.normal()
        })
        .collect();
    Data { columns, y }
}

/// Link predictions (n × K) of `model` for `rows` of `data` with column `feature` set to each
/// point of a fine grid: `result[row][point]` holds the K scores.
fn along_grid(model: &Model, data: &Data, feature: usize, rows: &[usize]) -> Vec<Vec<Vec<f64>>> {
    let grid: Vec<f64> = (0..=400).map(|k| -0.05 + 1.1 * k as f64 / 400.0).collect();
    let k = model.n_outputs;
    rows.iter()
        .map(|&row| {
            let columns: Vec<Vec<f64>> = (0..data.columns.len())
                .map(|j| {
                    if j == feature {
                        grid.clone()
                    } else {
                        vec![data.columns[j][row]; grid.len()]
                    }
                })
                .collect();
            let probe = Data {
                columns,
                y: vec![0.0; grid.len()],
            };
            let scores = model.predict(&probe.frame()).unwrap();
            scores.chunks(k).map(<[f64]>::to_vec).collect()
        })
        .collect()
}

/// Whether every score is monotone in the direction `direction` along the grid, for every row.
fn monotone_along(curves: &[Vec<Vec<f64>>], direction: f64) -> bool {
    curves.iter().all(|curve| {
        curve
            .windows(2)
            .all(|pair| (0..pair[0].len()).all(|c| direction * (pair[1][c] - pair[0][c]) >= 0.0))
    })
}

#[test]
fn monotone_constraints_hold_exactly_for_every_method_loss_and_step_rule() {
    let data = wiggly(4_000, 21);
    let labels = binary(&data);
    let classes = Data {
        columns: data.columns.clone(),
        y: data
            .y
            .iter()
            .map(|&y| (y.clamp(-0.49, 2.49) + 0.5).floor())
            .collect(),
    };
    let rows: Vec<usize> = (0..40).map(|i| i * 97).collect();
    let cases: &[(&str, &str, &str, &Data)] = &[
        ("gbm", "squared", "newton", &data),
        ("gbm", "squared", "line_search", &data),
        ("gbm", "absolute", "leaf_line_search", &data),
        ("gbm", "huber(0.5)", "leaf_line_search", &data),
        ("gbm", "logistic", "newton", &labels),
        ("gbm", "logistic", "leaf_line_search", &labels),
        ("gbm", "softmax", "leaf_line_search", &classes),
        ("rgbm", "squared", "constant", &data),
        ("agbm", "squared", "constant", &data),
        ("agbmr", "logistic", "constant", &labels),
        ("vagbm", "squared", "constant", &data),
        ("proximal", "absolute", "leaf_line_search", &data),
        ("proximal", "logistic", "line_search", &labels),
        ("residual_proximal", "huber(0.5)", "leaf_line_search", &data),
        ("accelerated_proximal", "hinge", "leaf_line_search", &labels),
        ("residual_gbm", "squared", "leaf_line_search", &data),
        ("accelerated_gbm", "pinball(0.7)", "leaf_line_search", &data),
        ("repeated_gbm", "squared", "line_search", &data),
    ];
    for &(method, loss, step, data) in cases {
        let settings = [
            ("method", method),
            ("loss", loss),
            ("step", step),
            ("n_iter", "25"),
            ("max_depth", "4"),
            ("learning_rate", "0.3"),
            ("selection", "groups"),
            ("t", "2"),
            ("gamma", "0.3"),
            // With subsampling, an exact leaf line search on a leaf whose drawn rows are all of
            // one class goes to the logistic loss's cap: leaves of 20 rows, as LightGBM's
            // default, keep that rare.
            ("min_samples_leaf", "20"),
        ];
        let constrained = [
            settings.as_slice(),
            &[("monotone", "x0:1,x1:-1"), ("subsample", "0.8")],
        ]
        .concat();
        let model = fit(&constrained, data, 2);
        let case = format!("{method} {loss} {step}");
        assert!(
            model.trees.len() >= 20,
            "{case}: trained {} trees",
            model.trees.len()
        );
        assert!(
            model.weights.iter().all(|&w| w >= 0.0),
            "{case}: a negative tree weight would turn a tree around"
        );
        assert!(
            monotone_along(&along_grid(&model, data, 0, &rows), 1.0),
            "{case}: x0 ↑"
        );
        assert!(
            monotone_along(&along_grid(&model, data, 1, &rows), -1.0),
            "{case}: x1 ↓"
        );
        // The free feature stays free.
        assert!(
            !monotone_along(&along_grid(&model, data, 2, &rows), 1.0)
                || !monotone_along(&along_grid(&model, data, 2, &rows), -1.0),
            "{case}: x2"
        );
        if method == "gbm" && step == "newton" {
            // Not vacuous: without the constraint the model wiggles.
            let free = fit(&settings, data, 2);
            assert!(
                !monotone_along(&along_grid(&free, data, 0, &rows), 1.0),
                "{case}"
            );
        }
    }
}

#[test]
fn monotone_constraints_cost_little_where_the_truth_is_monotone() {
    // y = 3·x0 − 2·x1 + noise: the constrained model fits as well as the free one.
    let mut rng = TestRng::new(3);
    let n = 3_000;
    let columns: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..n).map(|_| rng.uniform()).collect())
        .collect();
    let y = (0..n)
        .map(|i| 3.0 * columns[0][i] - 2.0 * columns[1][i] + 0.2 * rng.normal())
        .collect();
    let data = Data { columns, y };
    let base = [("n_iter", "60"), ("learning_rate", "0.2")];
    let loss = |settings: &[(&str, &str)]| {
        let model = fit(settings, &data, 1);
        let p = model.predict(&data.frame()).unwrap();
        p.iter()
            .zip(&data.y)
            .map(|(p, y)| (p - y).powi(2))
            .sum::<f64>()
            / n as f64
    };
    let free = loss(&base);
    let constrained = loss(&[base.as_slice(), &[("monotone", "{\"x0\": 1, \"x1\": -1}")]].concat());
    assert!(constrained < 1.1 * free + 0.005, "{constrained} vs {free}");
}

#[test]
fn interaction_constraints_keep_each_path_inside_one_set() {
    let data = wiggly(3_000, 4);
    for growth in ["depthwise", "leafwise"] {
        let model = fit(
            &[
                ("interactions", "[[\"x0\", \"x1\"], [\"x2\", \"x3\"]]"),
                ("max_depth", "5"),
                ("n_iter", "15"),
                ("growth", growth),
                ("colsample_bynode", "0.75"),
            ],
            &data,
            2,
        );
        let sets = [[0u32, 1], [2, 3]];
        let mut crossing_would_help = false;
        for tree in &model.trees {
            // Every root-to-leaf path's features lie in one set.
            let mut stack = vec![(0usize, Vec::<u32>::new())];
            while let Some((node, mut path)) = stack.pop() {
                let n = &tree.nodes[node];
                if n.is_leaf() {
                    assert!(
                        sets.iter().any(|s| path.iter().all(|f| s.contains(f))),
                        "{growth}: path {path:?}"
                    );
                    continue;
                }
                path.push(n.feature);
                stack.push((n.left as usize, path.clone()));
                stack.push((n.right as usize, path));
            }
            crossing_would_help |= tree.nodes.iter().filter(|n| !n.is_leaf()).count() > 1;
        }
        assert!(crossing_would_help, "trees have several splits");
    }
    // A feature in no set is used alone.
    let model = fit(
        &[
            ("interactions", "x0,x1"),
            ("max_depth", "3"),
            ("n_iter", "10"),
        ],
        &data,
        1,
    );
    for tree in &model.trees {
        let features: Vec<u32> = (tree.nodes.iter())
            .filter(|n| !n.is_leaf())
            .map(|n| n.feature)
            .collect();
        let alone = features.iter().all(|&f| f == features[0]);
        assert!(alone || features.iter().all(|&f| f <= 1), "{features:?}");
    }
}

#[test]
fn constraints_name_features_that_exist_and_can_be_ordered() {
    let data = wiggly(500, 5);
    let codes: Vec<i32> = (0..500).map(|i| i % 3).collect();
    let frame = optboost::Frame::new(vec![
        optboost::Feature::numeric("x0", &data.columns[0]),
        optboost::Feature::categorical("region", &codes, 3),
    ])
    .unwrap();
    let attempt = |name: &str, value: &str| {
        let mut p = params(&[]);
        p.set(name, value).unwrap();
        let train = TrainData {
            frame: frame.clone(),
            y: &data.y,
            weights: None,
        };
        Booster::new(p, &train, None).err().map(|e| e.to_string())
    };
    let unknown = attempt("monotone", "age:1").unwrap();
    assert!(
        unknown.contains("age") && unknown.contains("x0"),
        "{unknown}"
    );
    let categorical = attempt("monotone", "region:-1").unwrap();
    assert!(categorical.contains("categorical"), "{categorical}");
    assert!(attempt("interactions", "x0;nope").unwrap().contains("nope"));
    assert!(attempt("monotone", "x0:1").is_none());
    for bad in ["x0:2", "x0", "{\"x0\": 0.5}", ":1"] {
        assert!(params(&[]).set("monotone", bad).is_err(), "{bad}");
    }
}

// ------------------------------------------------------------ offsets

/// Trains with `offsets` (the training rows' link values, n × K).
fn fit_with_offset(settings: &[(&str, &str)], data: &Data, offset: &[f64]) -> Model {
    let frame = data.frame();
    let train = TrainData {
        frame,
        y: &data.y,
        weights: None,
    };
    let offsets = optboost::Offsets {
        train: Some(offset),
        valid: None,
    };
    let mut booster = Booster::with_offsets(params(settings), &train, None, offsets).unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

#[test]
fn an_offset_equal_to_a_models_link_continues_that_model() {
    // In this sense: gbm with a constant step started from init = "zero" plus the offset
    // F_T(x) of a model trained T iterations fits, tree for tree, the iterations T+1, T+2, ...
    // of the same run trained longer (the same trees, bit for bit: each is fitted to the same
    // −∂ℓ at the same F), so offset + its predictions = the longer model's predictions.
    let data = friedman(5_000, 5, 12);
    let labels = binary(&data);
    for (loss, data) in [("squared", &data), ("logistic", &labels)] {
        let base = [("loss", loss), ("step", "constant"), ("max_depth", "3")];
        let first = fit(&[base.as_slice(), &[("n_iter", "8")]].concat(), data, 2);
        let long = fit(&[base.as_slice(), &[("n_iter", "15")]].concat(), data, 2);
        let link = first.predict(&data.frame()).unwrap();
        let rest = fit_with_offset(
            &[base.as_slice(), &[("n_iter", "7"), ("init", "zero")]].concat(),
            data,
            &link,
        );
        assert_eq!(rest.bias, vec![0.0]);
        assert_eq!(rest.trees, long.trees[8..], "{loss}");
        let continued: Vec<f64> = (rest.predict(&data.frame()).unwrap().iter())
            .zip(&link)
            .map(|(p, o)| p + o)
            .collect();
        let longer = long.predict(&data.frame()).unwrap();
        for (c, l) in continued.iter().zip(&longer) {
            assert!(
                (c - l).abs() <= 1e-12 * (1.0 + l.abs()),
                "{loss}: {c} vs {l}"
            );
        }
    }
}

#[test]
fn the_optimal_constant_is_fitted_on_top_of_the_offset() {
    // Squared loss: argmin_c Σ (y − o − c)² = mean(y − o).
    let data = friedman(2_000, 3, 13);
    let offset: Vec<f64> = data.columns[0].iter().map(|x| 5.0 * x).collect();
    let model = fit_with_offset(&[("n_iter", "1")], &data, &offset);
    let mean = data.y.iter().zip(&offset).map(|(y, o)| y - o).sum::<f64>() / 2_000.0;
    assert!(
        (model.bias[0] - mean).abs() < 1e-9,
        "{} vs {mean}",
        model.bias[0]
    );
    // Offsets must have one finite value per row and output.
    let frame = data.frame();
    let train = TrainData {
        frame,
        y: &data.y,
        weights: None,
    };
    for bad in [&offset[1..], &[f64::NAN; 2_000][..]] {
        let offsets = optboost::Offsets {
            train: Some(bad),
            valid: None,
        };
        assert!(Booster::with_offsets(params(&[]), &train, None, offsets).is_err());
    }
}

#[test]
fn the_default_leaf_minimum_follows_the_losses_curvature() {
    // Row 0 stands apart (x = 0, target far from the rest): a stump can isolate it only where
    // a leaf may hold one row.
    let n = 30;
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let outlier = |y_rest: f64, y_first: f64| Data {
        columns: vec![x.clone()],
        y: (0..n)
            .map(|i| if i == 0 { y_first } else { y_rest })
            .collect(),
    };
    let isolated = |settings: &[(&str, &str)], data: &Data| {
        let (booster, _) = common::train(params(settings), data);
        let prediction = booster.model().predict(&data.frame()).unwrap();
        (
            booster.params().tree.min_samples_leaf,
            prediction[0] != prediction[1],
        )
    };
    let stump = [("n_iter", "1"), ("max_depth", "1")];
    let squared = outlier(0.0, 50.0);
    // Least squares: L2 alone shrinks a one-row leaf (to half its residual at λ = 1).
    assert_eq!(isolated(&stump, &squared), (Some(1), true));
    let logistic = outlier(1.0, 0.0);
    let stump_logistic = [stump[0], stump[1], ("loss", "logistic")];
    assert_eq!(isolated(&stump_logistic, &logistic), (Some(10), false));
    // A value the user sets is kept, whatever the loss.
    let mut set = stump.to_vec();
    set.push(("min_samples_leaf", "10"));
    assert_eq!(isolated(&set, &squared), (Some(10), false));
    set.push(("loss", "logistic"));
    set[2] = ("min_samples_leaf", "1");
    assert_eq!(isolated(&set, &logistic), (Some(1), true));
}
