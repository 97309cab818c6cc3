//! Benchmark driver for `benches/compare.py`: trains optboost on raw little-endian f64 files and
//! prints one JSON line of timings and peak memory. The Python bindings are not needed.
//!
//! Files in `--dir`: `x_train.cols.f64` (column-major, features × rows, so each column is one
//! borrowed slice; with `--layout rows`, `x_train.rows.f64`, row-major, read in place by
//! `Frame::from_row_major`), `y_train.f64`, `x_test.cols.f64`. Predictions (response scale) go to
//! `--out`. Peak memory is VmHWM after training and prediction minus VmRSS once the raw data are
//! loaded (the peak is reset there through /proc/self/clear_refs).

use optboost::{Booster, Feature, Frame, Params, TrainData};
use std::collections::HashMap;
use std::time::Instant;

// As in the Python extension (which installs it itself): freed large blocks go back to the
// kernel.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: optboost::LargeBlocks = optboost::LargeBlocks;

fn read_f64(path: &str) -> Vec<f64> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// A `kB` field of /proc/self/status, in bytes.
fn status_bytes(key: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| {
            rest.trim_start_matches(':')
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

/// User + system CPU seconds of this process so far (from /proc/self/stat, 100 ticks a second).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn columns(data: &[f64], n_features: usize) -> Vec<Feature<'_>> {
    let n_rows = data.len() / n_features;
    data.chunks_exact(n_rows)
        .enumerate()
        .map(|(j, col)| Feature::numeric(format!("x{j}"), col))
        .collect()
}

fn main() -> optboost::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts: HashMap<&str, &str> = args
        .chunks(2)
        .map(|kv| {
            (
                kv[0].trim_start_matches("--"),
                kv.get(1).map_or("", String::as_str),
            )
        })
        .collect();
    let get = |k: &str, default: &str| opts.get(k).copied().unwrap_or(default).to_string();
    let dir = get("dir", "/tmp/optboost-bench");
    let n_features: usize = get("features", "28").parse().expect("--features");

    let row_major = match get("layout", "cols").as_str() {
        "cols" => false,
        "rows" => true,
        other => panic!("--layout must be cols or rows, not {other}"),
    };
    let layout = if row_major { "rows" } else { "cols" };
    let x_train = read_f64(&format!("{dir}/x_train.{layout}.f64"));
    let y_train = read_f64(&format!("{dir}/y_train.f64"));
    let x_test = read_f64(&format!("{dir}/x_test.cols.f64"));
    let baseline = status_bytes("VmRSS");
    let _ = std::fs::write("/proc/self/clear_refs", "5");

    let mut params = Params::default();
    for (name, default) in [
        ("loss", "squared"),
        ("n_iter", "100"),
        ("max_depth", "6"),
        ("max_leaves", "63"),
        ("learning_rate", "0.1"),
        ("max_bins", "255"),
        ("n_threads", "2"),
        ("min_samples_leaf", "20"),
        ("min_weight_leaf", "1e-3"),
        ("l2_leaf", "0"),
        ("growth", "leafwise"),
        ("step", "newton"),
        ("memory", "fast"),
        ("quantized_gradients", "false"),
        ("sample_strategy", "uniform"),
        ("subsample", "1"),
    ] {
        params.set(name, &get(name, default))?;
    }

    let frame = if row_major {
        Frame::from_row_major((0..n_features).map(|j| format!("x{j}")).collect(), &x_train)?
    } else {
        Frame::new(columns(&x_train, n_features))?
    };
    let started = Instant::now();
    let mut booster = Booster::new(
        params,
        &TrainData {
            frame,
            y: &y_train,
            weights: None,
        },
        None,
    )?;
    let binning_s = started.elapsed().as_secs_f64();
    let after_binning = status_bytes("VmHWM").saturating_sub(baseline);
    let started = Instant::now();
    let cpu_before = cpu_seconds();
    booster.run(|_| true)?;
    let train_s = started.elapsed().as_secs_f64();
    let train_cpu_s = cpu_seconds() - cpu_before;
    let after_training = status_bytes("VmHWM").saturating_sub(baseline);
    let model = booster.into_model();

    let test = Frame::new(columns(&x_test, n_features))?;
    // Prediction uses the same number of threads as training.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(get("n_threads", "2").parse().unwrap())
        .build()
        .unwrap();
    let started = Instant::now();
    let pred = pool.install(|| model.predict_response(&test))?;
    let predict_s = started.elapsed().as_secs_f64();
    let peak = status_bytes("VmHWM").saturating_sub(baseline);

    if let Some(out) = opts.get("out") {
        let bytes: Vec<u8> = pred.iter().flat_map(|p| p.to_le_bytes()).collect();
        std::fs::write(out, bytes).expect("cannot write predictions");
    }
    let leaves: usize = model.trees.iter().map(|t| t.n_leaves()).sum();
    println!(
        "{}",
        serde_json::json!({
            "binning_s": binning_s,
            "train_s": train_s,
            "train_cpu_s": train_cpu_s,
            "predict_s": predict_s,
            "peak_above_raw_mb": peak as f64 / 1e6,
            "peak_binning_mb": after_binning as f64 / 1e6,
            "peak_training_mb": after_training as f64 / 1e6,
            "n_trees": model.n_trees(),
            "mean_leaves": leaves as f64 / model.n_trees().max(1) as f64,
        })
    );
    Ok(())
}
