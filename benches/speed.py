#!/usr/bin/env python3
"""Whole-fit time through the Python API on small, medium and sparse data: optboost against
LightGBM and XGBoost (issue 23, goal 1), and peak memory above the raw data (goal 4).

Cases (all binary logistic, 200 trees, learning rate 0.1, depth ≤ 6, ≤ 63 leaves grown
leaf-wise, ≥ 20 rows per leaf, 255 bins, no L2 penalty, no early stopping):

    small    5,000 × 50 dense (mixed marginals)
    medium   20,000 × 10 dense
    sparse   50,000 × 120 binary: eight one-hot encoded categorical variables of 15 levels
             (mutually exclusive columns, as in LIBSVM's a9a)
    letter   the shared letter set, 20,000 × 16, 26 classes (softmax; 100 rounds of 26 trees):
             not in the default cases

optboost is timed as `BoostClassifier(...).fit(X, y)` on the numpy matrix (binning + training),
LightGBM as `Dataset(X, y).construct()` + `train`, XGBoost as `QuantileDMatrix` + `train`.
Every measurement runs in a fresh process (its own thread pools and memory accounting); within a
repeat the libraries alternate and the order rotates between repeats, so that load from other
processes spreads over all of them. Each process fits `--inner` times and reports the median
(the first fit includes what a user's first fit pays, e.g. thread-pool start). The ratios
(optboost over LightGBM, over the faster peer) are what to read: on a shared machine absolute
times move with the load, printed with every line.

    python benches/speed.py                                   # all cases, 1 and 2 threads
    python benches/speed.py --cases sparse --threads 1 --repeats 5
    python benches/speed.py --memory --rows 1000000           # peak memory above the data
    python benches/speed.py --cases letter --repeats 3        # multiclass: 26 trees a round
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

LIBS = ["optboost", "lightgbm", "xgboost"]
CASES = {"small": (5_000, 50), "medium": (20_000, 10), "sparse": (50_000, 120),
         "letter": (20_000, 16)}
DEFAULT_CASES = "small,medium,sparse"
ROUNDS = {"letter": 100}
DATA = Path(os.environ.get("OPTBOOST_DATA", Path(__file__).resolve().parents[2] / "shared"
                           / "datasets"))
N_TREES, DEPTH, LEAVES, LR, BINS, MIN_LEAF = 200, 6, 63, 0.1, 255, 20
QUANTIZED = False


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def make_data(case: str, rows: int, features: int, seed: int = 7):
    import numpy as np

    if case == "letter":
        import polars as pl

        frame = pl.read_parquet(DATA / "letter.parquet")
        return frame.drop("y").to_numpy().astype(np.float64), frame["y"].to_numpy()
    rng = np.random.default_rng(seed)
    if case == "sparse":
        groups, levels = 8, features // 8
        codes = rng.integers(0, levels, size=(rows, groups))
        # Skewed levels (as real categories are): level k drawn with weight 1/(k+1).
        p = 1.0 / np.arange(1, levels + 1)
        codes = rng.choice(levels, size=(rows, groups), p=p / p.sum())
        x = np.zeros((rows, groups * levels))
        for g in range(groups):
            x[np.arange(rows), g * levels + codes[:, g]] = 1.0
        effects = rng.standard_normal((groups, levels))
        z = sum(effects[g, codes[:, g]] for g in range(groups)) / 2
        z += 0.8 * (codes[:, 0] == 1) * (codes[:, 1] == 2)
    else:
        x = np.empty((rows, features))
        for j in range(features):
            kind = j % 4
            if kind == 0:
                x[:, j] = rng.standard_normal(rows)
            elif kind == 1:
                x[:, j] = rng.uniform(-2, 2, rows)
            elif kind == 2:
                x[:, j] = rng.lognormal(0.0, 0.7, rows)
            else:
                x[:, j] = np.round(rng.standard_normal(rows) * 3) / 3
        z = (
            np.sin(2 * x[:, 0]) * x[:, 1]
            + 0.5 * (x[:, 2] - 1.0) ** 2
            - 0.8 * x[:, 3] * x[:, 4]
            + np.tanh(x[:, 5] + x[:, 6])
            - 0.4 * np.log(x[:, min(6, features - 2)] ** 2 + 0.1)
            - 0.5
        )
    y = (rng.uniform(size=rows) < 1.0 / (1.0 + np.exp(-2.0 * z))).astype(np.float64)
    return np.ascontiguousarray(x), y


def fit_once(lib: str, x, y, threads: int):
    import numpy as np

    n_classes = len(np.unique(y))
    multiclass = n_classes > 2
    if lib == "optboost":
        from optboost.sklearn import BoostClassifier

        model = BoostClassifier(
            loss="softmax" if multiclass else "logistic",
            n_iter=N_TREES,
            learning_rate=LR,
            max_depth=DEPTH,
            n_threads=threads,
            progress=False,
            params={
                "max_leaves": LEAVES,
                "growth": "leafwise",
                "min_samples_leaf": MIN_LEAF,
                "max_bins": BINS,
                "l2_leaf": 0.0,
                "quantized_gradients": QUANTIZED,
            },
        )
        model.fit(x, y)
        return model
    if lib == "lightgbm":
        import lightgbm as lgb

        params = {
            "objective": "multiclass" if multiclass else "binary",
            "num_class": n_classes if multiclass else 1,
            "num_leaves": LEAVES,
            "max_depth": DEPTH,
            "learning_rate": LR,
            "max_bin": BINS,
            "num_threads": threads,
            "min_data_in_leaf": MIN_LEAF,
            "min_sum_hessian_in_leaf": 1e-3,
            "lambda_l2": 0.0,
            "verbose": -1,
        }
        ds = lgb.Dataset(x, y, params=params)
        ds.construct()
        return lgb.train(params, ds, num_boost_round=N_TREES)
    if lib == "xgboost":
        import xgboost as xgb

        params = {
            "objective": "multi:softprob" if multiclass else "binary:logistic",
            **({"num_class": n_classes} if multiclass else {}),
            "tree_method": "hist",
            "grow_policy": "lossguide",
            "max_depth": DEPTH,
            "max_leaves": LEAVES,
            "eta": LR,
            "max_bin": BINS,
            "nthread": threads,
            "min_child_weight": 1e-3,
            "lambda": 0.0,
        }
        dtrain = xgb.QuantileDMatrix(x, y, max_bin=BINS, nthread=threads)
        return xgb.train(params, dtrain, num_boost_round=N_TREES)
    raise ValueError(lib)


def status_bytes(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def worker(lib: str, case: str, rows: int, features: int, threads: int, inner: int,
           memory: bool) -> dict:
    """One fresh process: import, make the data, then fit `inner` times."""
    if lib == "optboost":
        import optboost.sklearn  # noqa: F401  (what a user imports before fitting)
    elif lib == "lightgbm":
        import lightgbm  # noqa: F401
    else:
        import xgboost  # noqa: F401
    x, y = make_data(case, rows, features)
    if memory:
        baseline = status_bytes("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")
        t0 = time.perf_counter()
        fit_once(lib, x, y, threads)
        seconds = time.perf_counter() - t0
        return {"seconds": [seconds], "peak_above_raw_mb": (status_bytes("VmHWM") - baseline) / 1e6}
    seconds = []
    for _ in range(inner):
        t0 = time.perf_counter()
        fit_once(lib, x, y, threads)
        seconds.append(time.perf_counter() - t0)
    return {"seconds": seconds}


def run_one(lib, case, rows, features, threads, inner, memory, quantized=False) -> dict:
    cmd = [sys.executable, __file__, "--worker", lib, "--cases", case, "--rows", str(rows),
           "--features", str(features), "--threads", str(threads), "--inner", str(inner)]
    if memory:
        cmd.append("--memory")
    if quantized:
        cmd.append("--quantized")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{lib}/{case} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--inner", type=int, default=3, help="fits per process (median taken)")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--memory", action="store_true",
                    help="one fit per process of --rows × 28 dense rows, 20 depth-6 trees; "
                         "report peak memory above the raw data")
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--features", type=int, default=0)
    ap.add_argument("--digest", action="store_true",
                    help="print a hash of optboost's model per case and thread count instead "
                         "of timing (models must not change with a change meant to be exact)")
    ap.add_argument("--quantized", action="store_true",
                    help="optboost with quantized_gradients=True (the peers stay exact)")
    ap.add_argument("--worker")
    args = ap.parse_args()

    if args.worker:
        global N_TREES, QUANTIZED
        QUANTIZED = args.quantized
        if args.memory:
            N_TREES = 20
        N_TREES = ROUNDS.get(args.cases, N_TREES)
        result = worker(args.worker, args.cases, args.rows, args.features, int(args.threads),
                        args.inner, args.memory)
        print(json.dumps(result))
        return

    libs = args.libs.split(",")
    if args.digest:
        import hashlib

        for case in args.cases.split(","):
            x, y = make_data(case, *CASES[case])
            for threads in [int(t) for t in args.threads.split(",")]:
                text = fit_once("optboost", x, y, threads).core_model_.to_json()
                print(f"{case} {threads} thr: {hashlib.sha256(text.encode()).hexdigest()[:16]}")
        return
    if args.memory:
        cases = [("dense", args.rows or 1_000_000, args.features or 28)]
    else:
        cases = [(c, args.rows or CASES[c][0], args.features or CASES[c][1])
                 for c in args.cases.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    print(f"load average before: {load_average()}", flush=True)
    results: dict = {}
    for rep in range(args.repeats):
        order = libs[rep % len(libs):] + libs[: rep % len(libs)]
        for case, rows, features in cases:
            for threads in thread_counts:
                for lib in order:
                    r = run_one(lib, case, rows, features, threads, args.inner, args.memory,
                                args.quantized)
                    r["median_s"] = statistics.median(r["seconds"])
                    results.setdefault((case, threads, lib), []).append(r)
                    extra = (f"  mem {r['peak_above_raw_mb']:7.0f} MB" if args.memory else "")
                    print(f"  rep {rep} {case:<7}{rows:>8} × {features:<4}{threads} thr  "
                          f"{lib:<9}{r['median_s']:7.3f} s{extra}  "
                          f"fits {' '.join(f'{s:.3f}' for s in r['seconds'])}  "
                          f"load {load_average()}", flush=True)
    print()
    key = "peak_above_raw_mb" if args.memory else "median_s"
    unit = "MB" if args.memory else "s"
    print(f"{'case':<8}{'thr':>4}" + "".join(f"{lib:>11}" for lib in libs)
          + f"{'×lightgbm':>11}{'×best peer':>11}   ratios per repeat (×lightgbm)")
    for case, _, _ in cases:
        for threads in thread_counts:
            runs = {lib: results.get((case, threads, lib), []) for lib in libs}
            med = {lib: statistics.median(r[key] for r in rs) for lib, rs in runs.items() if rs}
            line = f"{case:<8}{threads:>4}" + "".join(
                f"{med[lib]:>9.3f}{unit:>2}" if lib in med else f"{'':>11}" for lib in libs)
            if "optboost" in med and "lightgbm" in med:
                peers = [med[lib] for lib in med if lib != "optboost"]
                per_rep = [o[key] / lg[key] for o, lg in zip(runs["optboost"], runs["lightgbm"])]
                line += (f"{med['optboost'] / med['lightgbm']:>11.2f}"
                         f"{med['optboost'] / min(peers):>11.2f}   "
                         + " ".join(f"{r:.2f}" for r in per_rep))
            print(line)
    print(f"medians over {args.repeats} processes"
          + ("" if args.memory else f" of the median of {args.inner} fits each")
          + f"; load average after: {load_average()}")


if __name__ == "__main__":
    main()
