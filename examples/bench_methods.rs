//! Per-iteration time of every method at 1M rows × 28 features, depth 6, and how much of it is
//! spent outside tree fitting (gradients, prox, line searches, weight updates).
//!
//! `cargo run --release --example bench_methods [rows] [iterations] [filter]` (`filter`: run only
//! the methods whose label contains it, and the fit references)
//!
//! Fit time is measured as the time of gbm with `step = "constant"` per tree (one tree fit plus
//! one gradient and one axpy: the cheapest possible iteration); the overhead of a method is its
//! iteration time minus (trees per iteration × that per-tree time).

mod common;

use optboost::{Booster, Feature, Frame, Params, TrainData};
use std::time::Instant;

/// (label, loss, parameter settings)
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().unwrap());
    let iterations: usize = args.next().map_or(5, |a| a.parse().unwrap());
    let filter = args.next().unwrap_or_default();
    let p = 28;
    let mut uniform = common::uniform_stream(42);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| (0..n).map(|_| uniform()).collect())
        .collect();
    let score: Vec<f64> = (0..n)
        .map(|i| {
            (6.0 * columns[0][i]).sin() + columns[1][i] * columns[2][i] - columns[3][i]
                + 0.5 * uniform()
        })
        .collect();
    let regression = score.clone();
    let binary: Vec<f64> = score
        .iter()
        .map(|&s| if s > 0.2 { 1.0 } else { 0.0 })
        .collect();
    let frame = Frame::new(
        columns
            .iter()
            .enumerate()
            .map(|(j, c)| Feature::numeric(format!("x{j}"), c))
            .collect(),
    )
    .unwrap();

    let cases: &[Case] = &[
        (
            "gbm constant (fit reference)",
            "squared",
            &[("method", "gbm"), ("step", "constant")],
        ),
        ("gbm newton", "squared", &[("method", "gbm")]),
        (
            "gbm leaf_line_search",
            "squared",
            &[("method", "gbm"), ("step", "leaf_line_search")],
        ),
        (
            "rgbm groups t=1",
            "squared",
            &[("method", "rgbm"), ("selection", "groups"), ("t", "1")],
        ),
        (
            "rgbm groups t=7",
            "squared",
            &[("method", "rgbm"), ("selection", "groups"), ("t", "7")],
        ),
        (
            "rgbm random t=10",
            "squared",
            &[("method", "rgbm"), ("selection", "random"), ("t", "10")],
        ),
        ("agbm", "squared", &[("method", "agbm")]),
        ("agbmr adaptive", "squared", &[("method", "agbmr")]),
        ("vagbm", "squared", &[("method", "vagbm")]),
        ("proximal", "squared", &[("method", "proximal")]),
        (
            "residual_proximal",
            "squared",
            &[("method", "residual_proximal")],
        ),
        (
            "accelerated_proximal",
            "squared",
            &[("method", "accelerated_proximal")],
        ),
        ("residual_gbm", "squared", &[("method", "residual_gbm")]),
        (
            "accelerated_gbm",
            "squared",
            &[("method", "accelerated_gbm")],
        ),
        (
            "repeated_gbm (max_inner 1)",
            "squared",
            &[("method", "repeated_gbm"), ("max_inner", "1")],
        ),
        (
            "gbm constant logistic (fit ref.)",
            "logistic",
            &[("method", "gbm"), ("step", "constant")],
        ),
        ("gbm newton logistic", "logistic", &[("method", "gbm")]),
        ("agbm logistic", "logistic", &[("method", "agbm")]),
        ("proximal logistic", "logistic", &[("method", "proximal")]),
        (
            "gbm constant hinge (fit ref.)",
            "hinge",
            &[("method", "gbm"), ("step", "constant")],
        ),
        (
            "accelerated_proximal hinge",
            "hinge",
            &[("method", "accelerated_proximal")],
        ),
    ];
    println!("{n} rows × {p} features, depth 6, {iterations} iterations per method");
    println!(
        "{:34} {:>9} {:>7} {:>10} {:>9}",
        "method", "s/iter", "trees", "s/tree", "overhead"
    );
    let mut reference = f64::NAN;
    for (label, loss, settings) in cases {
        if !(label.contains(&filter) || label.contains("fit ref")) {
            continue;
        }
        let mut params = Params {
            n_iter: iterations,
            ..Params::default()
        };
        params.tree.max_depth = 6;
        params.set("loss", loss).unwrap();
        for (name, value) in settings.iter() {
            params.set(name, value).unwrap();
        }
        let y = if *loss == "squared" {
            &regression
        } else {
            &binary
        };
        let mut booster = Booster::new(
            params,
            &TrainData {
                frame: frame.clone(),
                y,
                weights: None,
            },
            None,
        )
        .unwrap();
        booster.step().unwrap(); // warm-up: the first iteration allocates
        let trees_before = booster.model().n_trees();
        let started = Instant::now();
        booster.run(|_| true).unwrap();
        let seconds = started.elapsed().as_secs_f64();
        let done = booster.iteration() - 1;
        let trees = (booster.model().n_trees() - trees_before) as f64 / done as f64;
        let per_iter = seconds / done as f64;
        if label.contains("fit ref") {
            reference = per_iter;
        }
        let overhead = (per_iter - trees * reference) / per_iter;
        println!(
            "{label:34} {per_iter:>9.3} {trees:>7.1} {:>10.3} {:>8.1}%",
            per_iter / trees,
            100.0 * overhead
        );
    }
}
