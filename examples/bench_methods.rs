//! Per-iteration time of every method at 1M rows × 28 features, depth 6, and how much of it is
//! spent outside tree fitting (gradients, prox, line searches, weight updates).
//!
//! `cargo run --release --example bench_methods [rows] [iterations] [filter]` (`filter`: run only
//! the methods whose label contains it, and the fit references)
//!
//! Columns: milliseconds per iteration; trees per iteration; milliseconds per iteration spent
//! growing trees (`Booster::tree_fit_seconds`, measured around every tree fit); `overhead` =
//! 1 − fit/total, the share of the iteration spent outside tree fitting (gradients, prox, line
//! searches, fitted values, weight updates, the loss pass; negative where an iteration's trees
//! grow side by side, AGBM's two and a multiclass loss's K, whose own times add up to more than
//! the wall time); `×ref`: time per iteration relative to
//! the loss's fit reference, gbm with `step = "constant"` (so AGBM's row is its cost in GBM
//! iterations); `ref overhead`: the former indirect estimate, 1 − trees × (reference's time per
//! iteration)/(time per iteration), which is noisy and biased when the method's trees differ in
//! shape from the reference's.

mod common;

use optboost::{Booster, Params, TrainData};
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
    let frame = common::numeric_frame(&columns);

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
        (
            "gbm constant huber (fit ref.)",
            "huber",
            &[("method", "gbm"), ("step", "constant")],
        ),
        ("proximal huber", "huber", &[("method", "proximal")]),
    ];
    println!("{n} rows × {p} features, depth 6, {iterations} iterations per method");
    println!(
        "{:34} {:>7} {:>6} {:>8} {:>9} {:>6} {:>13}",
        "method", "ms/iter", "trees", "fit ms/it", "overhead", "×ref", "ref overhead"
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
        let y = if matches!(*loss, "logistic" | "hinge") {
            &binary
        } else {
            &regression
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
        let fit_before = booster.tree_fit_seconds();
        let started = Instant::now();
        booster.run(|_| true).unwrap();
        let seconds = started.elapsed().as_secs_f64();
        let done = (booster.iteration() - 1) as f64;
        let trees = (booster.model().n_trees() - trees_before) as f64 / done;
        let per_iter = seconds / done;
        let fit_per_iter = (booster.tree_fit_seconds() - fit_before) / done;
        if label.contains("fit ref") {
            reference = per_iter;
        }
        let overhead = 1.0 - fit_per_iter / per_iter;
        let ref_overhead = 1.0 - trees * reference / per_iter;
        println!(
            "{label:34} {:>7.2} {trees:>6.1} {:>8.2} {:>8.1}% {:>6.2} {:>12.1}%",
            1e3 * per_iter,
            1e3 * fit_per_iter,
            100.0 * overhead,
            per_iter / reference,
            100.0 * ref_overhead
        );
    }
}
