//! Prediction speed of the core, numeric against categorical rules (the Python bench
//! `benches/first_contact.py` measures the same through the front end):
//!
//!     cargo run --release --example bench_predict -- [--rows 200000] [--repeats 7] [--threads 1]
//!         [--oblivious]
//!
//! With `--oblivious` the trees are oblivious (`tree="oblivious"`), and raw prediction by their
//! leaf table is timed against the walk of the same trees (`Model::predict_walking`).
//!
//! Trains 100 depth-6 trees on 20,000 rows of 3 columns of codes 0..20, once as numbers and once
//! as categories, then prints the median seconds of `predict` (raw rows) and `predict_binned`
//! (binned rows, what validation scoring uses) of `--rows` rows for each, and a mixed model
//! (one numeric, two categorical columns); wall time and the process's CPU time (steadier when
//! other work shares the machine).

use optboost::learner::BinnedMatrix;
use optboost::BinMapper;
use optboost::{Booster, Feature, Frame, Model, Params, TrainData};
use std::time::Instant;

const LEVELS: u32 = 20;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a count"))
}

/// SplitMix64, so that runs see the same data.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `categorical[j]`: column j as codes, else as numbers.
fn frame<'a>(codes: &'a [Vec<i32>], numbers: &'a [Vec<f64>], categorical: &[bool]) -> Frame<'a> {
    let features = (0..3)
        .map(|j| {
            if categorical[j] {
                Feature::categorical(format!("c{j}"), &codes[j], LEVELS)
            } else {
                Feature::numeric(format!("c{j}"), &numbers[j])
            }
        })
        .collect();
    Frame::new(features).unwrap()
}

/// CPU seconds of this process so far, summed over its threads from /proc (nanoseconds, unlike
/// the 10 ms ticks of /proc/self/stat): on a loaded machine steadier than wall time.
fn cpu_seconds() -> f64 {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e9
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() -> optboost::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows = arg(&args, "--rows", 200_000);
    let repeats = arg(&args, "--repeats", 7);
    let threads = arg(&args, "--threads", 1);
    let oblivious = args.iter().any(|a| a == "--oblivious");
    let mut state = 2u64;
    let codes: Vec<Vec<i32>> = (0..3)
        .map(|_| {
            (0..rows)
                .map(|_| (next(&mut state) % LEVELS as u64) as i32)
                .collect()
        })
        .collect();
    let numbers: Vec<Vec<f64>> = codes
        .iter()
        .map(|c| c.iter().map(|&v| v as f64).collect())
        .collect();
    let y: Vec<f64> = (0..rows)
        .map(|i| {
            let noise = (next(&mut state) >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            (codes[0][i] + codes[1][i] + codes[2][i]) as f64 + noise
        })
        .collect();
    let train = 20_000.min(rows);
    let fit = |categorical: &[bool]| -> optboost::Result<Model> {
        let head_codes: Vec<Vec<i32>> = codes.iter().map(|c| c[..train].to_vec()).collect();
        let head_numbers: Vec<Vec<f64>> = numbers.iter().map(|c| c[..train].to_vec()).collect();
        let mut params = Params::default();
        for (name, value) in [("n_iter", "100"), ("max_depth", "6"), ("n_threads", "1")] {
            params.set(name, value)?;
        }
        if oblivious {
            params.set("tree", "oblivious")?;
        }
        let data = TrainData {
            frame: frame(&head_codes, &head_numbers, categorical),
            y: &y[..train],
            weights: None,
        };
        let mut booster = Booster::new(params, &data, None)?;
        booster.run(|_| true)?;
        Ok(booster.into_model())
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    println!(
        "# predict {rows} rows, 100 depth-6 trees, 3 columns, {threads} thread(s), median of \
         {repeats}"
    );
    for (name, categorical) in [
        ("numeric", [false; 3]),
        ("categorical", [true; 3]),
        ("mixed", [false, true, true]),
    ] {
        let model = fit(&categorical)?;
        let data = frame(&codes, &numbers, &categorical);
        let mappers: Vec<BinMapper> = model.features.iter().map(|f| f.mapper.clone()).collect();
        let binned = BinnedMatrix::from_frame(&data, &mappers)?;
        let (mut raw, mut bins, mut raw_cpu, mut bins_cpu) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut walked, mut walked_cpu) = (Vec::new(), Vec::new());
        let mut check = 0.0;
        for _ in 0..repeats {
            let (started, cpu) = (Instant::now(), cpu_seconds());
            let scores = pool.install(|| model.predict(&data))?;
            raw.push(started.elapsed().as_secs_f64());
            raw_cpu.push(cpu_seconds() - cpu);
            let (started, cpu) = (Instant::now(), cpu_seconds());
            let binned_scores = pool.install(|| model.predict_binned(&binned));
            bins.push(started.elapsed().as_secs_f64());
            bins_cpu.push(cpu_seconds() - cpu);
            check = scores.iter().sum::<f64>() + binned_scores.iter().sum::<f64>();
            if oblivious {
                let (started, cpu) = (Instant::now(), cpu_seconds());
                let walked_scores = pool.install(|| model.predict_walking(&data))?;
                walked.push(started.elapsed().as_secs_f64());
                walked_cpu.push(cpu_seconds() - cpu);
                assert_eq!(walked_scores, scores, "the table predicts as the walk");
            }
        }
        if oblivious {
            println!(
                "{name:>11}: raw by walking the same trees {:.4} s (cpu {:.4} s)",
                median(walked),
                median(walked_cpu)
            );
        }
        println!(
            "{name:>11}: raw {:.4} s (cpu {:.4} s), binned {:.4} s (cpu {:.4} s) (checksum \
             {check:.6e})",
            median(raw),
            median(raw_cpu),
            median(bins),
            median(bins_cpu)
        );
    }
    Ok(())
}
