//! Kernel timings of the tree engine on 1M × 28 synthetic rows, 2 threads: histogram passes,
//! and one tree, on every row, on a random half as `subsample` = 0.5 grows it, and on a copy of
//! that half alone (the floor of a sampled tree). Minimum of
//! several repeats (robust to load from other processes).
//!
//!     cargo bench --bench engine            # ROWS=200000 cargo bench --bench engine

mod synthetic;

use optboost::learner::{
    grow, grow_with_options, BinnedData, Candidates, FitStats, GrowBuffers, GrowOptions, Histogram,
};
use optboost::{BinningParams, Growth, TreeParams};
use std::hint::black_box;
use std::time::Instant;
use synthetic::{lcg, regression_data};

fn best_of(repeats: usize, mut f: impl FnMut()) -> f64 {
    (0..repeats)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The binned data of the rows `drawn` alone, with their target and weights.
fn drawn_only(
    columns: &[Vec<f64>],
    drawn: &[u32],
    (vt, v): (&[f64], &[f64]),
) -> (BinnedData, Vec<f64>, Vec<f64>) {
    let take = |x: &[f64]| -> Vec<f64> { drawn.iter().map(|&r| x[r as usize]).collect() };
    let drawn_columns: Vec<Vec<f64>> = columns.iter().map(|c| take(c)).collect();
    let mut data = BinnedData::learn(
        &synthetic::numeric_frame(&drawn_columns),
        &BinningParams::default(),
    )
    .unwrap();
    data.keep_columns();
    (data, take(vt), take(v))
}

fn main() {
    let n: usize = std::env::var("ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let p = 28;
    let (columns, y, mut s) = regression_data(n, p, 7);
    let ones = vec![1.0; n];
    let hess: Vec<f64> = (0..n).map(|_| 0.1 + 0.15 * lcg(&mut s)).collect();
    let frame = synthetic::numeric_frame(&columns);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        let t = Instant::now();
        let mut data = BinnedData::learn(&frame, &BinningParams::default()).unwrap();
        // As training keeps it by default (`memory = "fast"`): partitions read a column.
        data.keep_columns();
        println!(
            "binning                     {:8.1} ms",
            1e3 * t.elapsed().as_secs_f64()
        );
        let all: Vec<u32> = (0..n as u32).collect();
        let half: Vec<u32> = (0..n as u32).filter(|_| lcg(&mut s) < 0.5).collect();
        let tenth: Vec<u32> = (0..n as u32).filter(|_| lcg(&mut s) < 0.1).collect();
        let hundredth: Vec<u32> = (0..n as u32).filter(|_| lcg(&mut s) < 0.01).collect();
        for (name, v) in [("unit weights", &ones), ("hessian weights", &hess)] {
            let vt: Vec<f64> = (0..n).map(|i| v[i] * y[i]).collect();
            for (rows_name, rows) in [
                ("all rows", &all),
                ("random half", &half),
                ("random tenth", &tenth),
                ("random 1%", &hundredth),
            ] {
                let t = best_of(9, || {
                    black_box(Histogram::build(&data, rows, &vt, v));
                });
                println!("histogram {rows_name:<12} {name:<16} {:8.2} ms", 1e3 * t);
            }
            let params = TreeParams {
                max_depth: 6,
                max_leaves: 63,
                min_samples_leaf: Some(20),
                growth: Growth::Leafwise,
                ..TreeParams::default()
            };
            let mut leaves = 0;
            let t = best_of(7, || {
                let g = grow(&data, FitStats { vt: &vt, v }, &params, &Candidates::All);
                leaves = g.tree.n_leaves();
            });
            println!(
                "grow one tree ({leaves} leaves)  {name:<16} {:8.1} ms",
                1e3 * t
            );
            // A stochastic gradient boosting tree (`subsample` = 0.5): grown on the random half,
            // then every other row placed in its leaf, as the booster needs for its update.
            let sampled = GrowOptions {
                rows: Some(&half),
                ..GrowOptions::default()
            };
            let mut buffers = GrowBuffers::default();
            let t_half = best_of(7, || {
                let g = grow_with_options(
                    &data,
                    FitStats { vt: &vt, v },
                    &params,
                    &Candidates::All,
                    &mut buffers,
                    &sampled,
                );
                leaves = g.tree.n_leaves();
                buffers.recycle(g.into_parts().1);
            });
            println!(
                "grow on a random half ({leaves} leaves) {name:<16} {:8.1} ms  ({:.2}x one tree)",
                1e3 * t_half,
                t_half / t
            );
            // The floor of a sampled tree: a full tree on a data set of the drawn half alone (as
            // if the drawn rows were copied out, for free), which never places the other half.
            let (half_data, half_vt, half_v) = drawn_only(&columns, &half, (&vt, v));
            let t_floor = best_of(7, || {
                let stats = FitStats {
                    vt: &half_vt,
                    v: &half_v,
                };
                let g = grow_with_options(
                    &half_data,
                    stats,
                    &params,
                    &Candidates::All,
                    &mut buffers,
                    &GrowOptions::default(),
                );
                buffers.recycle(g.into_parts().1);
            });
            println!(
                "grow on a copy of the half alone {name:<16} {:8.1} ms  ({:.2}x one tree)",
                1e3 * t_floor,
                t_floor / t
            );
        }
    });
}
