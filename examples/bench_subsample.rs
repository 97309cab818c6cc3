//! Time per tree of stochastic gradient boosting against full-data trees: gbm (Newton step) with
//! the logistic loss, depth 6, 1M rows × 28 features, for each of the given `subsample` fractions;
//! the other settings are benches/subsample.py's (≤ 63 leaves grown leaf-wise, 2 threads).
//!
//! `cargo run --release --example bench_subsample [rows] [iterations] [fractions, default 1.0,0.5]`
//!
//! Columns: milliseconds per iteration (one tree), of them growing the tree
//! (`Booster::tree_fit_seconds`: the draw of rows is outside, the placing of the undrawn rows
//! into the leaves inside), and the training loss reached.

mod common;

use optboost::{Booster, Params, TrainData};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().unwrap());
    let iterations: usize = args.next().map_or(20, |a| a.parse().unwrap());
    let fractions: Vec<String> = args.next().map_or(vec!["1.0".into(), "0.5".into()], |a| {
        a.split(',').map(String::from).collect()
    });
    let p = 28;
    let mut uniform = common::uniform_stream(42);
    let columns: Vec<Vec<f64>> = (0..p)
        .map(|_| (0..n).map(|_| uniform()).collect())
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let s = (6.0 * columns[0][i]).sin() + columns[1][i] * columns[2][i] - columns[3][i]
                + 0.5 * uniform();
            f64::from(s > 0.2)
        })
        .collect();
    let frame = common::numeric_frame(&columns);
    println!("{n} rows, {p} features, depth 6, logistic loss, gbm newton, {iterations} trees");
    println!("subsample  ms/tree  fit ms/tree  train loss");
    for fraction in fractions.iter().map(String::as_str) {
        let mut params = Params::default();
        params
            .set("loss", "logistic")
            .unwrap()
            .set("max_depth", "6")
            .unwrap()
            .set("n_iter", &iterations.to_string())
            .unwrap()
            .set("subsample", fraction)
            .unwrap();
        // The settings of benches/subsample.py (issue 22's benchmark).
        for (name, value) in [
            ("growth", "leafwise"),
            ("max_leaves", "63"),
            ("min_samples_leaf", "20"),
            ("max_bins", "255"),
            ("l2_leaf", "0"),
            ("learning_rate", "0.1"),
            ("n_threads", "2"),
        ] {
            params.set(name, value).unwrap();
        }
        let data = TrainData {
            frame: frame.clone(),
            y: &y,
            weights: None,
        };
        let mut booster = Booster::new(params, &data, None).unwrap();
        let started = Instant::now();
        booster.run(|_| true).unwrap();
        let total = started.elapsed().as_secs_f64();
        let per_tree = 1e3 / iterations as f64;
        println!(
            "{fraction:>9}  {:>7.1}  {:>11.1}  {:.5}",
            total * per_tree,
            booster.tree_fit_seconds() * per_tree,
            booster.history().last().unwrap().train_loss
        );
    }
}
