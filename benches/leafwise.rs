//! Leaf-wise against depth-wise growth for the same number of leaves (issue 23, goal 5): one
//! tree on synthetic rows × 28 features, 2 threads. For each depth, the depth-wise tree of that
//! depth is grown first; the leaf-wise tree (max_depth 64) then gets as many leaves as it has.
//! The two growths alternate, `REPEATS` times each; the minimum wall and process CPU time per tree
//! and the peak resident memory above the data are printed (the machine may be shared: the
//! minimum is the least disturbed run).
//!
//!     cargo bench --bench leafwise
//!     ROWS=200000 DEPTHS=6,10 MIN_LEAF=20 L2=1 REPEATS=3 WEIGHTS=unit cargo bench --bench leafwise
//!     ONLY=leafwise ...   # for a profile: the other growth runs once

mod synthetic;

use optboost::learner::{grow, BinnedData, Candidates, FitStats};
use optboost::{BinningParams, Growth, TreeParams};
use std::time::Instant;
use synthetic::{lcg, regression_data};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text} is not a valid value")),
        Err(_) => default,
    }
}

/// User + system CPU seconds of this process so far (/proc/self/stat, 100 ticks a second).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    ticks(11).unwrap_or(0.0) / 100.0 + ticks(12).unwrap_or(0.0) / 100.0
}

/// A `kB` field of /proc/self/status, in MiB.
fn status_mib(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    /// glibc: returns the free memory of the heap to the system.
    fn malloc_trim(pad: usize) -> i32;
}

/// Restarts the peak resident memory (VmHWM) at the current resident size, once the allocator
/// has returned what earlier runs freed (else a run reuses it unseen).
fn reset_peak() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        malloc_trim(0);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Run {
    wall: f64,
    cpu: f64,
    peak_mib: f64,
    leaves: usize,
}

fn timed(grow_one: impl FnOnce() -> usize) -> Run {
    reset_peak();
    let base = status_mib("VmRSS");
    let (t, c) = (Instant::now(), cpu_seconds());
    let leaves = grow_one();
    Run {
        wall: t.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - c,
        peak_mib: status_mib("VmHWM") - base,
        leaves,
    }
}

fn main() {
    let n: usize = env_or("ROWS", 1_000_000);
    let repeats: usize = env_or("REPEATS", 3);
    let weighted = match env_or("WEIGHTS", "hessian".to_string()).as_str() {
        "unit" => false,
        "hessian" => true,
        other => panic!("WEIGHTS must be unit or hessian, not {other}"),
    };
    let depths: Vec<usize> = env_or("DEPTHS", "6,10,15".to_string())
        .split(',')
        .map(|d| d.trim().parse().expect("DEPTHS: comma-separated depths"))
        .collect();
    let min_samples_leaf: usize = env_or("MIN_LEAF", 20);
    let only = match env_or("ONLY", "both".to_string()).as_str() {
        "both" => None,
        "depthwise" => Some(Growth::Depthwise),
        "leafwise" => Some(Growth::Leafwise),
        other => panic!("ONLY must be both, depthwise or leafwise, not {other}"),
    };
    let l2_leaf: f64 = env_or("L2", 1.0);
    let p = 28;
    // Centred, as gradients are after the first trees: with the L2 leaf penalty, splits of a
    // target far from zero stop paying long before the leaves are small.
    let (columns, mut y, mut s) = regression_data(n, p, 7);
    let mean = y.iter().sum::<f64>() / n as f64;
    y.iter_mut().for_each(|t| *t -= mean);
    let v: Vec<f64> = if weighted {
        (0..n).map(|_| 0.1 + 0.15 * lcg(&mut s)).collect()
    } else {
        Vec::new()
    };
    let vt: Vec<f64> = (0..n)
        .map(|i| v.get(i).copied().unwrap_or(1.0) * y[i])
        .collect();
    let frame = synthetic::numeric_frame(&columns);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("thread pool");
    println!(
        "{n} rows x {p} features, {} weights, min_samples_leaf {min_samples_leaf}, l2 {l2_leaf}, 2 threads, \
         min of {repeats} alternating runs",
        if weighted { "hessian" } else { "unit" }
    );
    println!(
        "depth    leaves | depth-wise wall  cpu  peak MiB | leaf-wise wall  cpu  peak MiB | wall ratio"
    );
    pool.install(|| {
        let mut data = BinnedData::learn(&frame, &BinningParams::default()).expect("binning");
        // As training keeps it by default (`memory = "fast"`): partitions read a column.
        data.keep_columns();
        let stats = FitStats { vt: &vt, v: &v };
        for &depth in &depths {
            let depthwise = TreeParams {
                max_depth: depth,
                max_leaves: 1 << depth,
                min_samples_leaf: Some(min_samples_leaf),
                l2_leaf,
                growth: Growth::Depthwise,
                ..TreeParams::default()
            };
            let mut leafwise = TreeParams {
                max_depth: 64,
                growth: Growth::Leafwise,
                ..depthwise
            };
            let grow_timed = |params: &TreeParams| {
                timed(|| grow(&data, stats, params, &Candidates::All).tree.n_leaves())
            };
            let mut runs = [Vec::new(), Vec::new()];
            for repeat in 0..repeats {
                // A profile of one growth: the other grows once, untimed (for the leaf count).
                if only != Some(Growth::Leafwise) || repeat == 0 {
                    let run = grow_timed(&depthwise);
                    leafwise.max_leaves = run.leaves;
                    runs[0].push(run);
                }
                if only != Some(Growth::Depthwise) || repeat == 0 {
                    runs[1].push(grow_timed(&leafwise));
                }
            }
            let best = |runs: &[Run]| {
                let min = |f: fn(&Run) -> f64| runs.iter().map(f).fold(f64::INFINITY, f64::min);
                (min(|r| r.wall), min(|r| r.cpu), min(|r| r.peak_mib))
            };
            let (dw, lw) = (best(&runs[0]), best(&runs[1]));
            println!(
                "{depth:5} {:5}/{:<5} | {:13.3} s {:5.2} {:9.0} | {:12.3} s {:5.2} {:9.0} | {:6.2}",
                runs[0][0].leaves,
                runs[1][0].leaves,
                dw.0,
                dw.1,
                dw.2,
                lw.0,
                lw.1,
                lw.2,
                lw.0 / dw.0
            );
        }
    });
}
