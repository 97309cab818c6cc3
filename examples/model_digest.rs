//! Prints one line per (method, loss, step rule, weights, validation) case: the trained model and
//! its history (wall times left out) as JSON, hashed. Run it before and after a change that must
//! not alter results and diff the output: any line that differs names the case that changed.
//!
//! `cargo run --release --example model_digest [rows] [iterations] [--full]` (`--full` prints the
//! JSON itself instead of its hash).

mod common;

use optboost::{Booster, Feature, Frame, Params, TrainData};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--full");
    let mut numbers = args.iter().filter(|a| !a.starts_with("--"));
    let n: usize = numbers.next().map_or(20_000, |a| a.parse().unwrap());
    let iterations = numbers.next().map_or("12", String::as_str);
    let p = 6;
    let mut uniform = common::uniform_stream(7);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| (0..n).map(|_| uniform()).collect())
        .collect();
    let noise: Vec<f64> = (0..n).map(|_| uniform()).collect();
    let weights: Vec<f64> = (0..n).map(|_| 0.5 + uniform()).collect();
    let score: Vec<f64> = (0..n)
        .map(|i| (6.0 * columns[0][i]).sin() + columns[1][i] * columns[2][i] - columns[3][i])
        .collect();
    let regression: Vec<f64> = (0..n).map(|i| score[i] + 0.5 * noise[i]).collect();
    let binary: Vec<f64> = (0..n)
        .map(|i| f64::from(score[i] + 0.8 * noise[i] > 0.2))
        .collect();
    let classes: Vec<f64> = (0..n)
        .map(|i| ((score[i] + noise[i] + 1.0).clamp(0.0, 2.9)).floor())
        .collect();
    let split = n * 4 / 5;
    let frame = |range: std::ops::Range<usize>| {
        Frame::new(
            columns
                .iter()
                .enumerate()
                .map(|(j, c)| Feature::numeric(format!("x{j}"), &c[range.clone()]))
                .collect(),
        )
        .unwrap()
    };
    let methods = [
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
    let losses = [
        "squared",
        "logistic",
        "logistic(0.01)",
        "exponential",
        "hinge",
        "huber",
        "absolute",
        "softmax",
        "multiclass_hinge",
    ];
    let steps = ["", "constant", "line_search", "leaf_line_search", "newton"];
    for method in methods {
        for loss in losses {
            for step in steps {
                for weighted in [false, true] {
                    for validated in [false, true] {
                        let mut params = Params::default();
                        let mut settings = vec![
                            ("method", method),
                            ("loss", loss),
                            ("n_iter", iterations),
                            ("max_depth", "3"),
                            ("n_threads", "2"),
                            ("selection", "groups"),
                            ("t", "2"),
                            ("max_inner", "3"),
                        ];
                        if !step.is_empty() {
                            settings.push(("step", step));
                        }
                        if validated {
                            settings.push(("early_stopping_rounds", "3"));
                        }
                        if settings
                            .iter()
                            .any(|(k, v)| params.set(k, v).map(|_| ()).is_err())
                            || params.validate().is_err()
                        {
                            continue;
                        }
                        let y = match loss {
                            "squared" | "huber" | "absolute" => &regression,
                            "softmax" | "multiclass_hinge" => &classes,
                            _ => &binary,
                        };
                        let train = TrainData {
                            frame: frame(0..split),
                            y: &y[..split],
                            weights: weighted.then(|| &weights[..split]),
                        };
                        let valid = TrainData {
                            frame: frame(split..n),
                            y: &y[split..],
                            weights: weighted.then(|| &weights[split..]),
                        };
                        let label = format!(
                            "{method} {loss} step={step} weighted={weighted} valid={validated}"
                        );
                        let mut booster =
                            match Booster::new(params, &train, validated.then_some(&valid)) {
                                Ok(b) => b,
                                Err(e) => {
                                    println!("{label}: error {e}");
                                    continue;
                                }
                            };
                        let reason = booster.run(|_| true).map(|r| r.to_string());
                        let mut history = serde_json::to_value(booster.history()).unwrap();
                        for record in history["records"].as_array_mut().unwrap() {
                            record["seconds"] = serde_json::Value::Null;
                        }
                        // The iteration path (`iteration_trees`, `iteration_weights`), added
                        // later, is left out so that hashes compare with earlier versions' (it
                        // is tested by tests/iterations.rs).
                        let mut model = booster.model().clone();
                        model.iteration_trees.clear();
                        model.iteration_weights.clear();
                        let model = serde_json::to_string(&model).unwrap();
                        let text = format!("{reason:?} {history} {model}");
                        if full {
                            println!("{label}: {text}");
                        } else {
                            let mut hasher = DefaultHasher::new();
                            text.hash(&mut hasher);
                            println!("{label}: {:016x}", hasher.finish());
                        }
                    }
                }
            }
        }
    }
}
