#!/usr/bin/env python3
"""SHAP contributions: optboost's TreeSHAP (predict type="contrib") against LightGBM
(predict(pred_contrib=True)) and XGBoost (predict(pred_contribs=True)), on models of the
same size fitted to the same data: 100 trees, leaf-wise growth, depth <= 6, <= 63 leaves,
logistic loss, 255 bins, >= 20 rows per leaf, 2 threads (the settings of compare.py).
All three run the same exact path-dependent algorithm; the timed call is the
contributions of every row of a 100,000 x 28 frame, in one process, each library once
after a warm-up on 1,000 rows; the calls rotate over the libraries --repeats times
(default 2) and the fastest of each counts, by wall time and by CPU time (all threads of
the process; steadier than wall time on a shared machine). The 1-minute load average is
printed with the table.

    python benches/contrib.py                  # 100,000 rows x 28 features, 2 threads
    python benches/contrib.py --rows 10000     # a quick check
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import BINS, DEPTH, LEAVES, LR, MIN_LEAF, N_TREES, make_data


def timed(call):
    """The result, the wall time and the CPU time of the process (all threads) of a call:
    on a shared machine the CPU time is the steadier of the two."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    x, y, _, _ = make_data(args.rows, 0, args.features, seed=1)
    names = [f"x{j}" for j in range(args.features)]
    frame = pl.DataFrame(x, schema=names).with_columns(y=pl.Series(y))
    fitted = {}

    import optboost

    model = optboost.boost(
        "y ~ .",
        frame,
        loss="logistic",
        n_iter=N_TREES,
        learning_rate=LR,
        max_depth=DEPTH,
        max_leaves=LEAVES,
        min_samples_leaf=MIN_LEAF,
        min_weight_leaf=1e-3,
        growth="leafwise",
        step="newton",
        max_bins=BINS,
        n_threads=args.threads,
        progress=False,
    )
    fitted["optboost"] = (
        model.trees()["is_leaf"].sum() / model.n_trees,
        lambda rows: model.predict(frame.head(rows), type="contrib").to_numpy(),
        lambda: model.predict(frame, type="link"),
    )

    import lightgbm as lgb

    params = {
        "objective": "binary",
        "num_leaves": LEAVES,
        "max_depth": DEPTH,
        "learning_rate": LR,
        "max_bin": BINS,
        "num_threads": args.threads,
        "min_data_in_leaf": MIN_LEAF,
        "min_sum_hessian_in_leaf": 1e-3,
        "lambda_l2": 0.0,
        "verbose": -1,
    }
    lgb_model = lgb.train(params, lgb.Dataset(x, y, params=params), num_boost_round=N_TREES)
    trees = lgb_model.dump_model()["tree_info"]
    fitted["lightgbm"] = (
        sum(t["num_leaves"] for t in trees) / len(trees),
        lambda rows: lgb_model.predict(x[:rows], pred_contrib=True, num_threads=args.threads),
        lambda: lgb_model.predict(x, raw_score=True, num_threads=args.threads),
    )

    import xgboost as xgb

    params = {
        "objective": "binary:logistic",
        "tree_method": "hist",
        "grow_policy": "lossguide",
        "max_depth": DEPTH,
        "max_leaves": LEAVES,
        "eta": LR,
        "max_bin": BINS,
        "nthread": args.threads,
        "min_child_weight": 1e-3,
        "lambda": 0.0,
    }
    xgb_model = xgb.train(params, xgb.DMatrix(x, y, nthread=args.threads), num_boost_round=N_TREES)
    matrices = {}

    def xgb_contrib(rows):
        # the DMatrix is made once per row count, outside the timed call after the warm-up
        if rows not in matrices:
            matrices[rows] = xgb.DMatrix(x[:rows], nthread=args.threads)
        return xgb_model.predict(matrices[rows], pred_contribs=True)

    dump = xgb_model.trees_to_dataframe()
    fitted["xgboost"] = (
        (dump["Feature"] == "Leaf").sum() / N_TREES,
        xgb_contrib,
        lambda: xgb_model.predict(xgb.DMatrix(x), output_margin=True),
    )

    # Each library once on 1,000 rows (warm-up), then the timed runs in rotation, so that
    # load from other processes on the machine spreads over all of them; the fastest counts.
    for _, contrib, _ in fitted.values():
        contrib(1000)
    times = {lib: [] for lib in fitted}
    cpu = {lib: [] for lib in fitted}
    errors = {}
    load_before = os.getloadavg()[0]
    for _ in range(args.repeats):
        for lib, (_, contrib, link) in fitted.items():
            values, seconds, cpu_seconds = timed(lambda call=contrib: call(args.rows))
            times[lib].append(seconds)
            cpu[lib].append(cpu_seconds)
            errors[lib] = float(np.max(np.abs(values.sum(axis=1) - link())))
    load_after = os.getloadavg()[0]
    results = {lib: (min(times[lib]), min(cpu[lib]), fitted[lib][0], errors[lib]) for lib in fitted}

    base, base_cpu = results["optboost"][:2]
    print(
        f"{args.rows} rows x {args.features} features, {N_TREES} trees, {args.threads} threads, "
        f"best of {args.repeats}; 1-minute load average {load_before:.2f} before the timed "
        f"calls, {load_after:.2f} after"
    )
    print(
        f"{'library':<10} {'seconds':>8} {'vs optboost':>12} {'cpu s':>8} {'vs optboost':>12} "
        f"{'leaves/tree':>12} {'max |sum - link|':>17}"
    )
    for lib, (seconds, cpu_seconds, leaves, error) in results.items():
        print(
            f"{lib:<10} {seconds:8.2f} {seconds / base:12.2f} {cpu_seconds:8.2f} "
            f"{cpu_seconds / base_cpu:12.2f} {leaves:12.1f} {error:17.2e}"
        )


if __name__ == "__main__":
    main()
