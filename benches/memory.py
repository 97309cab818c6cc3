#!/usr/bin/env python3
"""Peak memory above the raw data through each entry point (issue 23, goal 4: at most 0.8× of
LightGBM's at 1M and 10M rows).

Data: n rows × 28 float64 columns (2% missing in four of them), a regression target; 20 trees of
depth 6 (≤ 63 leaves), 255 bins, learning rate 0.1, no validation split, 2 threads. Cases:

    sklearn-c       BoostRegressor().fit(X, y), X a C-order (row-major) numpy matrix
    sklearn-f       the same with a Fortran-order matrix
    sklearn-holdout BoostRegressor(validation_fraction=0.1) on the C-order matrix: a tenth of
                    the rows held out (as the momentum methods do by default)
    boost-polars    optboost.boost("y ~ .", frame) on a polars frame
    boost-pandas    the same on a pandas frame
    lightgbm        lightgbm.Dataset(X, y) + lightgbm.train on the C-order matrix
    rust-rows       the Rust API (examples/bench_fit) on a row-major matrix, Frame::from_row_major
    rust-cols       the same on columns (Frame::new of Feature::numeric slices)

Each case runs in a fresh process: it imports its library, builds the data, then resets the
kernel's peak-RSS mark (`/proc/self/clear_refs`, 5) so that the peak counts from the data as
the user holds them; "above the data" is the peak (VmHWM) minus the resident size at that moment
(VmRSS). Cases alternate optboost / LightGBM within a size, so that load from other processes
spreads over both.

    python benches/memory.py                              # 1M and 3M rows
    python benches/memory.py --rows 1000000 --cases sklearn-c,lightgbm
    python benches/memory.py --cases rust-rows,rust-cols,lightgbm   # builds examples/bench_fit
    python benches/memory.py --memory low     # optboost storing the bins once (memory="low")
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_COLUMNS, N_TREES, DEPTH, LEAVES, LR, THREADS = 28, 20, 6, 63, 0.1, 2
CASES = ["sklearn-c", "lightgbm", "boost-polars", "sklearn-f", "boost-pandas", "rust-rows",
         "rust-cols", "sklearn-holdout"]
ROOT = Path(__file__).resolve().parent.parent


def status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def matrix(n_rows: int, order: str):
    """The features, filled column by column (no temporary as large as the matrix), and y."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = np.empty((n_rows, N_COLUMNS), order=order)
    for j in range(N_COLUMNS):
        column = rng.standard_normal(n_rows)
        if j % 7 == 3:
            column[rng.random(n_rows) < 0.02] = np.nan
        X[:, j] = column
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + np.nan_to_num(X[:, 3])
    y += 0.1 * rng.standard_normal(n_rows)
    return X, y


def run_rust(case: str, n_rows: int, memory: str) -> dict:
    """The Rust API through examples/bench_fit, on the data written to raw f64 files; the
    example resets the peak after reading them, as run_case does."""
    import numpy as np

    X, y = matrix(n_rows, "C")
    with tempfile.TemporaryDirectory(prefix="optboost-memory-") as folder:
        if case == "rust-rows":
            X.tofile(f"{folder}/x_train.rows.f64")
        else:
            np.asfortranarray(X).T.tofile(f"{folder}/x_train.cols.f64")  # features × rows
        y.tofile(f"{folder}/y_train.f64")
        np.asfortranarray(X[:1000]).T.tofile(f"{folder}/x_test.cols.f64")
        del X, y
        settings = {
            "n_iter": N_TREES, "max_depth": DEPTH, "max_leaves": LEAVES, "learning_rate": LR,
            "n_threads": THREADS, "growth": "depthwise", "min_samples_leaf": 10,
            "layout": "rows" if case == "rust-rows" else "cols", "memory": memory,
        }
        command = [str(ROOT / "target" / "release" / "examples" / "bench_fit"), "--dir", folder]
        for name, value in settings.items():
            command += [f"--{name}", str(value)]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "case": case, "rows": n_rows, "above_mb": r["peak_above_raw_mb"],
        "data_mb": n_rows * N_COLUMNS * 8 / 1e6, "seconds": r["binning_s"] + r["train_s"],
    }


def run_case(case: str, n_rows: int, memory: str) -> dict:
    import numpy as np

    if case.startswith("rust-"):
        return run_rust(case, n_rows, memory)

    names = [f"x{j}" for j in range(N_COLUMNS)]
    if case == "lightgbm":
        import lightgbm as lgb

        X, y = matrix(n_rows, "C")
    else:
        import optboost
        import optboost.sklearn

        X, y = matrix(n_rows, "F" if case == "sklearn-f" else "C")
        if case.startswith("boost-"):
            import polars as pl

            frame = pl.DataFrame({n: X[:, j] for j, n in enumerate(names)}).with_columns(
                pl.Series("y", y)
            )
            del X
            if case == "boost-pandas":
                pandas_frame = frame.to_pandas()
                del frame
                frame = pandas_frame
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    baseline = status_bytes("VmRSS")
    started = time.perf_counter()
    if case == "lightgbm":
        params = {
            "objective": "regression", "learning_rate": LR, "max_depth": DEPTH,
            "num_leaves": LEAVES, "max_bin": 255, "num_threads": THREADS, "verbose": -1,
        }
        booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=N_TREES)
        check = float(booster.predict(X[:1000]).sum())
    elif case.startswith("sklearn-"):
        model = optboost.sklearn.BoostRegressor(
            n_iter=N_TREES, learning_rate=LR, max_depth=DEPTH, n_threads=THREADS,
            validation_fraction=0.1 if case == "sklearn-holdout" else None,
            params={"memory": memory},
        ).fit(X, y)
        check = float(model.predict(X[:1000]).sum())
    else:
        model = optboost.boost(
            "y ~ .", frame, n_iter=N_TREES, learning_rate=LR, max_depth=DEPTH,
            n_threads=THREADS, validation_fraction=None, memory=memory,
        )
        check = float(np.sum(model.predict(frame.head(1000) if hasattr(frame, "head") else frame)))
    seconds = time.perf_counter() - started
    peak = status_bytes("VmHWM")
    return {
        "case": case, "rows": n_rows, "above_mb": (peak - baseline) / 1e6,
        "data_mb": baseline / 1e6, "seconds": seconds, "check": check,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="1000000,3000000", help="comma-separated row counts")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--memory", default="fast", choices=["fast", "low"],
                    help="optboost's `memory` parameter (how training stores the bins)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a single case, in this process
    args = ap.parse_args()
    if any(case.startswith("rust-") for case in args.cases.split(",")) and not args.one:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "bench_fit"],
                       cwd=ROOT, check=True)
    if args.one:
        print(json.dumps(run_case(args.one, int(args.rows), args.memory)))
        return
    cases = args.cases.split(",")
    results = []
    for rows in (int(r) for r in args.rows.split(",")):
        for case in cases:
            out = subprocess.run(
                [sys.executable, __file__, "--one", case, "--rows", str(rows),
                 "--memory", args.memory],
                capture_output=True, text=True, check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"{rows:>11,} × {N_COLUMNS}  {case:<13} {r['above_mb']:7.0f} MB above the data "
                  f"({r['data_mb']:6.0f} MB data or resident before)  {r['seconds']:6.2f} s  load {load}",
                  flush=True)
            results.append(r)
        by_case = {r["case"]: r["above_mb"] for r in results if r["rows"] == rows}
        if "lightgbm" in by_case:
            ratios = ", ".join(f"{c} {m / by_case['lightgbm']:.2f}"
                               for c, m in by_case.items() if c != "lightgbm")
            print(f"{rows:>11,} rows, × LightGBM: {ratios}", flush=True)


if __name__ == "__main__":
    main()
