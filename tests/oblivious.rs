//! Oblivious trees (`tree="oblivious"`) through the public API: every method and loss fits
//! them, their splits of a level share one rule, prediction by the leaf table equals the walk,
//! and the models save, load, explain and constrain as ordinary ones.

mod common;

use common::*;
use optboost::{Booster, Frame, Model, Params, TrainData, Tree};

/// Numeric columns (the second with missing values) and a categorical column of 8 levels (some
/// missing), with a target that depends on all of them.
struct Mixed {
    columns: Vec<Vec<f64>>,
    codes: Vec<i32>,
    y: Vec<f64>,
}

impl Mixed {
    fn new(n: usize, seed: u64) -> Mixed {
        let mut rng = TestRng::new(seed);
        let mut columns = vec![Vec::with_capacity(n); 3];
        let (mut codes, mut y) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let x: Vec<f64> = (0..3).map(|_| rng.uniform()).collect();
            let code = rng.below(9) as i32 - 1;
            let effect = [0.0, 1.0, -1.0, 0.5, 2.0, -0.5, 0.0, 1.5][code.max(0) as usize];
            y.push(2.0 * x[0] - x[1] * x[2] + effect + 0.3 * rng.normal());
            for (j, v) in x.into_iter().enumerate() {
                columns[j].push(if j == 1 && rng.chance(0.1) {
                    f64::NAN
                } else {
                    v
                });
            }
            codes.push(code);
        }
        Mixed { columns, codes, y }
    }

    fn frame(&self) -> Frame<'_> {
        mixed_frame(&self.columns, &self.codes, 8)
    }

    fn labels(&self) -> Vec<f64> {
        self.y.iter().map(|&y| f64::from(y > 1.0)).collect()
    }

    fn classes(&self) -> Vec<f64> {
        self.y
            .iter()
            .map(|&y| (y.clamp(-0.5, 2.49) + 0.5).floor())
            .collect()
    }
}

fn fit(settings: &[(&str, &str)], frame: Frame<'_>, y: &[f64]) -> Model {
    let mut params: Params = params(settings);
    params.set("tree", "oblivious").unwrap();
    let mut booster = Booster::new(
        params,
        &TrainData {
            frame,
            y,
            weights: None,
        },
        None,
    )
    .unwrap();
    booster.run(|_| true).unwrap();
    booster.into_model()
}

/// Whether every split of each level of `tree` has the same rule.
fn is_oblivious(tree: &Tree) -> bool {
    let mut level = vec![0usize];
    while !level.is_empty() {
        let splits: Vec<&optboost::Node> = (level.iter())
            .map(|&i| &tree.nodes[i])
            .filter(|n| !n.is_leaf())
            .collect();
        let rule = |n: &optboost::Node| {
            let set = n.category.map(|c| tree.categories[c as usize].clone());
            (n.feature, n.bin, n.threshold.to_bits(), n.default_left, set)
        };
        if splits.iter().any(|n| rule(n) != rule(splits[0])) {
            return false;
        }
        level = splits
            .iter()
            .flat_map(|n| [n.left as usize, n.right as usize])
            .collect();
    }
    true
}

#[test]
fn every_method_and_loss_fits_oblivious_trees_and_the_leaf_table_predicts_as_the_walk() {
    let data = Mixed::new(1_500, 3);
    let (labels, classes) = (data.labels(), data.classes());
    let cases: &[(&str, &str, &[f64])] = &[
        ("gbm", "squared", &data.y),
        ("gbm", "absolute", &data.y),
        ("gbm", "pinball(0.9)", &data.y),
        ("gbm", "huber(0.5)", &data.y),
        ("gbm", "logistic", &labels),
        ("gbm", "softmax", &classes),
        ("rgbm", "squared", &data.y),
        ("agbm", "squared", &data.y),
        ("agbmr", "logistic", &labels),
        ("vagbm", "squared", &data.y),
        ("proximal", "logistic", &labels),
        ("residual_proximal", "huber(0.5)", &data.y),
        ("accelerated_proximal", "hinge", &labels),
        ("residual_gbm", "squared", &data.y),
        ("accelerated_gbm", "squared", &data.y),
        ("repeated_gbm", "squared", &data.y),
    ];
    for &(method, loss, y) in cases {
        let case = format!("{method} {loss}");
        let model = fit(
            &[
                ("method", method),
                ("loss", loss),
                ("n_iter", "12"),
                ("max_depth", "4"),
            ],
            data.frame(),
            y,
        );
        assert!(model.trees.iter().all(is_oblivious), "{case}");
        assert!(
            model.trees.iter().any(|t| t.depth() >= 3),
            "{case}: deep trees"
        );
        let frame = data.frame();
        let by_table = model.predict(&frame).unwrap();
        let by_walk = model.predict_walking(&frame).unwrap();
        assert!(by_table.iter().all(|p| p.is_finite()), "{case}");
        let bits = |p: &[f64]| p.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&by_table), bits(&by_walk), "{case}");
        // Saved and loaded bit for bit.
        let loaded = Model::from_json(&model.to_json()).unwrap();
        assert_eq!(loaded, model, "{case}");
        assert_eq!(
            bits(&loaded.predict(&frame).unwrap()),
            bits(&by_table),
            "{case}"
        );
    }
}

#[test]
fn oblivious_models_are_the_same_with_one_and_two_threads_and_explain_their_scores() {
    let data = Mixed::new(3_000, 5);
    let settings = [
        ("n_iter", "20"),
        ("max_depth", "6"),
        ("subsample", "0.8"),
        ("colsample_bynode", "0.75"),
    ];
    let models: Vec<Model> = [1, 2]
        .iter()
        .map(|&threads| {
            let threads = threads.to_string();
            let mut settings = settings.to_vec();
            settings.push(("n_threads", &threads));
            fit(&settings, data.frame(), &data.y)
        })
        .collect();
    assert_eq!(models[0].to_json(), models[1].to_json());
    let model = &models[0];
    let frame = data.frame();
    let scores = model.predict(&frame).unwrap();
    let contributions = model.predict_contrib(&frame).unwrap();
    let width = model.features.len() + 1;
    for (row, block) in contributions.chunks(width).enumerate() {
        let sum: f64 = block.iter().sum();
        assert!(
            (sum - scores[row]).abs() < 1e-9 * (1.0 + scores[row].abs()),
            "row {row}"
        );
    }
}

#[test]
fn oblivious_trees_respect_monotone_and_interaction_constraints() {
    let data = Mixed::new(2_000, 8);
    let model = fit(
        &[
            ("n_iter", "20"),
            ("max_depth", "4"),
            ("monotone", "x0:1,x1:-1"),
            ("interactions", "[[\"x0\", \"x1\"], [\"x2\", \"c\"]]"),
        ],
        data.frame(),
        &data.y,
    );
    assert!(model.trees.iter().all(is_oblivious));
    assert!(model.trees.iter().any(|t| t.depth() >= 2));
    let sets = [[0u32, 1], [2, 3]];
    for tree in &model.trees {
        let used: Vec<u32> = (tree.nodes.iter())
            .filter(|n| !n.is_leaf())
            .map(|n| n.feature)
            .collect();
        assert!(
            sets.iter().any(|s| used.iter().all(|f| s.contains(f))),
            "{used:?}"
        );
    }
    // Scores along a grid of x0 (increasing) and of x1 (decreasing), the other columns fixed.
    let grid: Vec<f64> = (0..=200).map(|k| k as f64 / 200.0).collect();
    for row in (0..2_000).step_by(97) {
        for (feature, direction) in [(0, 1.0), (1, -1.0)] {
            let columns: Vec<Vec<f64>> = (0..3)
                .map(|j| {
                    if j == feature {
                        grid.clone()
                    } else {
                        vec![data.columns[j][row]; grid.len()]
                    }
                })
                .collect();
            let codes = vec![data.codes[row]; grid.len()];
            let scores = model.predict(&mixed_frame(&columns, &codes, 8)).unwrap();
            assert!(
                scores.windows(2).all(|p| direction * (p[1] - p[0]) >= 0.0),
                "row {row}, feature {feature}"
            );
        }
    }
}

#[test]
fn the_tree_parameter_is_checked() {
    let mut params = Params::default();
    let error = params.set("tree", "symmetric").unwrap_err().to_string();
    assert!(error.contains("oblivious"), "{error}");
    params.set("tree", "oblivious").unwrap();
    params.set("max_depth", "17").unwrap();
    assert!(params
        .validate()
        .unwrap_err()
        .to_string()
        .contains("max_depth"));
    params.set("max_depth", "16").unwrap();
    params.validate().unwrap();
    params.set("growth", "leafwise").unwrap();
    assert!(params
        .validate()
        .unwrap_err()
        .to_string()
        .contains("growth"));
}
