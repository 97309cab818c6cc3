#!/usr/bin/env python3
"""Peak memory and time of fitting a scipy.sparse CSR matrix: optboost's BoostRegressor against
LightGBM on the same CSR (issue 43: "a CSR matrix of 1M × 10,000 with 0.1% non-zeros fits in
memory proportional to its non-zeros").

Data: n rows × p columns, `density` of the cells stored (uniform at random, values standard
normal), a target from ten of the columns plus noise; 20 trees of depth 6 (≤ 63 leaves), 255
bins, learning rate 0.1, no validation split, 2 threads.

Each case runs in a fresh process: it imports its library and builds the CSR, then resets the
kernel's peak-RSS mark (`/proc/self/clear_refs`, 5), so that "above the data" is the peak
(VmHWM) during the fit minus the resident size before it (VmRSS); the process's whole peak
(`resource.getrusage` ru_maxrss) is printed too. Cases alternate within a size.

    python benches/sparse_memory.py --rows 100000,200000 --columns 10000
    python benches/sparse_memory.py --rows 1000000 --columns 10000 --cases lightgbm
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

N_TREES, DEPTH, LEAVES, LR, THREADS = 20, 6, 63, 0.1, 2


def status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def csr(n_rows: int, n_columns: int, density: float):
    """The CSR matrix, built from its stored cells (never dense), and y."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    nnz = int(n_rows * n_columns * density)
    rows = rng.integers(0, n_rows, nnz, dtype=np.int32)
    columns = rng.integers(0, n_columns, nnz, dtype=np.int32)
    values = rng.standard_normal(nnz)
    X = sp.coo_matrix((values, (rows, columns)), shape=(n_rows, n_columns)).tocsr()
    X.sum_duplicates()
    del rows, columns, values
    weights = np.zeros(n_columns)
    weights[:10] = np.linspace(1.0, 2.0, 10)
    y = X @ weights + 0.1 * rng.standard_normal(n_rows)
    return X, y


def run_case(case: str, n_rows: int, n_columns: int, density: float, memory: str) -> dict:
    if case == "lightgbm":
        import lightgbm as lgb
    else:
        import optboost.sklearn
    X, y = csr(n_rows, n_columns, density)
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
    else:
        model = optboost.sklearn.BoostRegressor(
            n_iter=N_TREES, learning_rate=LR, max_depth=DEPTH, n_threads=THREADS,
            validation_fraction=None, params={"memory": memory},
        ).fit(X, y)
        check = float(model.predict(X[:1000]).sum())
    seconds = time.perf_counter() - started
    peak = status_bytes("VmHWM")
    return {
        "case": case, "rows": n_rows, "columns": n_columns, "nnz": int(X.nnz),
        "above_mb": (peak - baseline) / 1e6, "data_mb": baseline / 1e6,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
        "seconds": seconds, "check": check,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="100000,200000", help="comma-separated row counts")
    ap.add_argument("--columns", type=int, default=10_000)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--cases", default="optboost,lightgbm")
    ap.add_argument("--memory", default="fast", choices=["fast", "low"],
                    help="optboost's `memory` parameter (how training stores the bins)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a single case, in this process
    args = ap.parse_args()
    if args.one:
        result = run_case(args.one, int(args.rows), args.columns, args.density, args.memory)
        print(json.dumps(result))
        return
    for rows in (int(r) for r in args.rows.split(",")):
        for case in args.cases.split(","):
            out = subprocess.run(
                [sys.executable, __file__, "--one", case, "--rows", str(rows),
                 "--columns", str(args.columns), "--density", str(args.density),
                 "--memory", args.memory],
                capture_output=True, text=True, check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"{rows:>10,} × {args.columns:,} ({r['nnz']:,} stored)  {case:<9} "
                  f"{r['above_mb']:7.0f} MB above the data ({r['data_mb']:5.0f} MB before), "
                  f"max RSS {r['maxrss_mb']:6.0f} MB  {r['seconds']:7.2f} s  load {load}",
                  flush=True)


if __name__ == "__main__":
    main()
