//! The golden-digest cases: every (method, loss, step rule, weights, validation) combination
//! the parameters accept, plus every method with row/column subsampling, with monotone and
//! interaction constraints, and with categorical and missing values. Each case trains one model
//! on seeded synthetic data and is reduced to a line `label: digest`, where the digest hashes
//! the model and its history (wall times left out) as JSON. A refactor that must not change
//! results must leave every line unchanged.
//!
//! Shared by `examples/model_digest.rs` (the command line) and `tests/model_digest.rs` (the
//! fast check against the committed small reference).

use optboost::{Booster, Feature, Frame, History, Model, Params, TrainData};

/// A reference file's header: the data size its digests were computed with.
pub fn header(rows: usize, iterations: usize) -> String {
    format!("# optboost model digests: rows={rows} iterations={iterations}")
}

/// Parses `header`'s line back into (rows, iterations).
pub fn parse_header(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("# optboost model digests: rows=")?;
    let (rows, iterations) = rest.split_once(" iterations=")?;
    Some((rows.trim().parse().ok()?, iterations.trim().parse().ok()?))
}

/// 64-bit FNV-1a: fixed by its definition, so digests stay comparable across Rust releases
/// (`DefaultHasher` promises no such thing).
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The digest lines, in a fixed order.
pub fn digest_lines(rows: usize, iterations: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for_each_case(rows, iterations, |label, text| {
        lines.push(format!("{label}: {:016x}", fnv1a(&text)))
    });
    lines
}

/// The lines of `reference` (header and blank lines excluded) that `actual` does not
/// reproduce, each with what was computed instead.
pub fn differences(reference: &[String], actual: &[String]) -> Vec<String> {
    let label = |line: &str| {
        line.rsplit_once(": ")
            .map_or(line.to_string(), |(l, _)| l.to_string())
    };
    let mut out = Vec::new();
    for expected in reference {
        match actual.iter().find(|a| label(a) == label(expected)) {
            Some(got) if got == expected => {}
            Some(got) => out.push(format!("changed: {expected}  ->  {got}")),
            None => out.push(format!("missing: {expected}")),
        }
    }
    for got in actual {
        if !reference.iter().any(|e| label(e) == label(got)) {
            out.push(format!("new case: {got}"));
        }
    }
    out
}

const METHODS: [&str; 11] = [
    "gbm",
    "rgbm",
    "agbm",
    "agbmr",
    "vagbm",
    "proximal",
    "residual_proximal",
    "accelerated_proximal",
    "residual_gbm",
    "accelerated_gbm",
    "repeated_gbm",
];
const LOSSES: [&str; 16] = [
    "squared",
    "logistic",
    "logistic(0.01)",
    "exponential",
    "hinge",
    "huber",
    "absolute",
    "softmax",
    "multiclass_hinge",
    "pinball(0.9)",
    "poisson",
    "gamma",
    "tweedie(1.5)",
    "cox",
    "multi_squared",
    "quantiles(0.1, 0.5, 0.9)",
];
const STEPS: [&str; 5] = ["", "constant", "line_search", "leaf_line_search", "newton"];

/// The variants beyond the main grid, each run for every method on three losses.
const VARIANTS: [(&str, &[(&str, &str)]); 4] = [
    (
        "subsample",
        &[
            ("subsample", "0.7"),
            ("colsample_bytree", "0.8"),
            ("colsample_bynode", "0.7"),
            ("seed", "11"),
        ],
    ),
    (
        "constraints",
        &[
            ("monotone", "x0:1,x3:-1"),
            ("interactions", "x0,x1;x2,x3,x4,x5"),
        ],
    ),
    ("categorical", &[("max_cat_threshold", "4")]),
    ("leafwise", &[("growth", "leafwise"), ("max_leaves", "6")]),
];

struct Data {
    columns: Vec<Vec<f64>>,
    /// The categorical variant's extra feature: 7 levels, code −1 (missing) on some rows.
    codes: Vec<i32>,
    /// x5 with NaN on some rows, used by the categorical variant.
    x5_missing: Vec<f64>,
    weights: Vec<f64>,
    regression: Vec<f64>,
    binary: Vec<f64>,
    classes: Vec<f64>,
    categorical_regression: Vec<f64>,
    categorical_binary: Vec<f64>,
    categorical_classes: Vec<f64>,
    /// A positive target with a log-linear mean, for the log-link losses.
    positive: Vec<f64>,
    /// Signed survival times (< 0: censored, every fourth row), shorter for a higher score, for
    /// the cox loss; made from the draws above, so the other targets are unchanged.
    survival: Vec<f64>,
    /// `regression` and `positive` as the two columns of a row-major n × 2 target.
    two_targets: Vec<f64>,
}

/// SplitMix64 uniforms in [0, 1).
fn uniform_stream(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn data(n: usize) -> Data {
    let p = 6;
    let mut uniform = uniform_stream(7);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| (0..n).map(|_| uniform()).collect())
        .collect();
    let noise: Vec<f64> = (0..n).map(|_| uniform()).collect();
    let weights: Vec<f64> = (0..n).map(|_| 0.5 + uniform()).collect();
    let score: Vec<f64> = (0..n)
        .map(|i| (6.0 * columns[0][i]).sin() + columns[1][i] * columns[2][i] - columns[3][i])
        .collect();
    let codes: Vec<i32> = (0..n)
        .map(|_| {
            let u = uniform();
            if u < 0.05 {
                -1
            } else {
                ((u - 0.05) / 0.95 * 7.0) as i32
            }
        })
        .collect();
    let x5_missing: Vec<f64> = (0..n)
        .map(|i| if i % 9 == 4 { f64::NAN } else { columns[5][i] })
        .collect();
    let level_effect = [0.8, -0.6, 0.0, 0.4, -1.0, 0.3, 0.6];
    let categorical_score: Vec<f64> = (0..n)
        .map(|i| {
            score[i]
                + if codes[i] < 0 {
                    0.2
                } else {
                    level_effect[codes[i] as usize]
                }
        })
        .collect();
    let regression = |s: &[f64]| (0..n).map(|i| s[i] + 0.5 * noise[i]).collect::<Vec<f64>>();
    let binary = |s: &[f64]| {
        (0..n)
            .map(|i| f64::from(s[i] + 0.8 * noise[i] > 0.2))
            .collect::<Vec<f64>>()
    };
    let classes = |s: &[f64]| {
        (0..n)
            .map(|i| ((s[i] + noise[i] + 1.0).clamp(0.0, 2.9)).floor())
            .collect::<Vec<f64>>()
    };
    let positive: Vec<f64> = (0..n)
        .map(|i| (0.5 * score[i] + 0.6 * noise[i]).exp())
        .collect();
    let regression_target = regression(&score);
    Data {
        survival: (0..n)
            .map(|i| {
                let t = (0.6 * noise[i] - 0.5 * score[i]).exp();
                if i % 4 == 1 {
                    -t
                } else {
                    t
                }
            })
            .collect(),
        two_targets: (0..n)
            .flat_map(|i| [regression_target[i], positive[i]])
            .collect(),
        positive,
        regression: regression_target,
        binary: binary(&score),
        classes: classes(&score),
        categorical_regression: regression(&categorical_score),
        categorical_binary: binary(&categorical_score),
        categorical_classes: classes(&categorical_score),
        columns,
        codes,
        x5_missing,
        weights,
    }
}

/// Calls `visit(label, text)` for every case in a fixed order; `text` is the stop reason, the
/// history and the model as JSON, or the error the booster returned.
pub fn for_each_case(n: usize, iterations: usize, mut visit: impl FnMut(String, String)) {
    let data = data(n);
    let iterations = iterations.to_string();
    for method in METHODS {
        for loss in LOSSES {
            for step in STEPS {
                for weighted in [false, true] {
                    for validated in [false, true] {
                        let label = format!(
                            "{method} {loss} step={step} weighted={weighted} valid={validated}"
                        );
                        let mut settings = vec![("step", step)];
                        if validated {
                            settings.push(("early_stopping_rounds", "3"));
                        }
                        let case = Case {
                            method,
                            loss,
                            weighted,
                            validated,
                            categorical: false,
                        };
                        if let Some(text) = case.run(&data, &iterations, &settings) {
                            visit(label, text);
                        }
                    }
                }
            }
        }
    }
    for (variant, settings) in VARIANTS {
        for method in METHODS {
            for loss in ["squared", "logistic", "softmax"] {
                let label = format!("{method} {loss} variant={variant}");
                let case = Case {
                    method,
                    loss,
                    weighted: true,
                    validated: false,
                    categorical: variant == "categorical",
                };
                if let Some(text) = case.run(&data, &iterations, settings) {
                    visit(label, text);
                }
            }
        }
    }
}

struct Case<'a> {
    method: &'a str,
    loss: &'a str,
    weighted: bool,
    validated: bool,
    categorical: bool,
}

impl Case<'_> {
    /// `None` when the parameters are rejected (a combination the methods do not support).
    fn run(&self, data: &Data, iterations: &str, extra: &[(&str, &str)]) -> Option<String> {
        let mut params = Params::default();
        let mut settings = vec![
            ("method", self.method),
            ("loss", self.loss),
            ("n_iter", iterations),
            ("max_depth", "3"),
            ("n_threads", "2"),
            ("selection", "groups"),
            ("t", "2"),
            ("max_inner", "3"),
        ];
        settings.extend(extra.iter().filter(|(_, v)| !v.is_empty()));
        if settings
            .iter()
            .any(|(k, v)| params.set(k, v).map(|_| ()).is_err())
            || params.validate().is_err()
        {
            return None;
        }
        let y = match (self.loss, self.categorical) {
            ("multi_squared", _) => &data.two_targets,
            ("poisson" | "gamma" | "tweedie(1.5)", _) => &data.positive,
            ("cox", _) => &data.survival,
            ("squared" | "huber" | "absolute" | "pinball(0.9)", false) => &data.regression,
            ("softmax" | "multiclass_hinge", false) => &data.classes,
            (_, false) => &data.binary,
            ("squared" | "huber" | "absolute" | "pinball(0.9)", true) => {
                &data.categorical_regression
            }
            ("softmax" | "multiclass_hinge", true) => &data.categorical_classes,
            (_, true) => &data.categorical_binary,
        };
        // Target values per row: two columns for the multi-output loss.
        let t = if self.loss == "multi_squared" { 2 } else { 1 };
        let n = y.len() / t;
        let split = n * 4 / 5;
        let frame = |range: std::ops::Range<usize>| {
            let mut features: Vec<Feature> = data
                .columns
                .iter()
                .enumerate()
                .map(|(j, c)| {
                    let values = if self.categorical && j == 5 {
                        &data.x5_missing
                    } else {
                        c
                    };
                    Feature::numeric(format!("x{j}"), &values[range.clone()])
                })
                .collect();
            if self.categorical {
                features.push(Feature::categorical("c", &data.codes[range.clone()], 7));
            }
            Frame::new(features).unwrap()
        };
        let weights = |range: std::ops::Range<usize>| self.weighted.then(|| &data.weights[range]);
        let train = TrainData {
            frame: frame(0..split),
            y: &y[..split * t],
            weights: weights(0..split),
        };
        let valid = TrainData {
            frame: frame(split..n),
            y: &y[split * t..],
            weights: weights(split..n),
        };
        let mut booster = match Booster::new(params, &train, self.validated.then_some(&valid)) {
            Ok(b) => b,
            Err(e) => return Some(format!("error {e}")),
        };
        let reason = booster.run(|_| true).map(|r| r.to_string());
        Some(format!(
            "{reason:?} {} {}",
            history_text(booster.history()),
            model_text(booster.model())
        ))
    }
}

/// The history's fields by name (wall times left out), so that a field added later does not
/// change earlier cases' digests.
fn history_text(history: &History) -> String {
    let records: Vec<String> = history
        .records
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {:?} {:?} {:?} {}",
                r.iteration, r.n_trees, r.train_loss, r.valid_loss, r.cos, r.step, r.restarted
            )
        })
        .collect();
    records.join("; ")
}

/// The model's content field by field (f64 in shortest round-trip form, so bit-exact), not its
/// file layout: a new file format leaves the digests unchanged unless the model changed.
fn model_text(model: &Model) -> String {
    let trees: Vec<String> = model
        .trees
        .iter()
        .map(|tree| {
            let nodes: Vec<String> = tree
                .nodes
                .iter()
                .map(|n| {
                    format!(
                        "{} {} {} {:?} {} {} {:?} {:?} {:?} {}",
                        n.feature,
                        n.left,
                        n.right,
                        n.threshold,
                        n.bin,
                        n.default_left,
                        n.category,
                        n.value,
                        n.gain,
                        n.count
                    )
                })
                .collect();
            let categories: Vec<String> = tree
                .categories
                .iter()
                .map(|c| format!("{:?} {:?}", c.left_bins, c.left_codes))
                .collect();
            format!("[{}] [{}]", nodes.join(", "), categories.join(", "))
        })
        .collect();
    let features: Vec<String> = model
        .features
        .iter()
        .map(|f| format!("{} {}", f.name, serde_json::to_string(&f.mapper).unwrap()))
        .collect();
    format!(
        "{} {} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} trees {}",
        model.method,
        model.loss,
        model.n_outputs,
        model.bias,
        model.weights,
        model.tree_outputs,
        model.best_iteration,
        model.iteration_trees,
        model.iteration_weights,
        features,
        trees.join(" | ")
    )
}
