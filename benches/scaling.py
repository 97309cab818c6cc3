#!/usr/bin/env python3
"""Fit time against rows (issue 23, goal 4: time linear in rows from 100k to 10M, with no step
where the working set leaves the caches by surprise), against LightGBM in the same run.

Data: benches/compare.py's HIGGS-like rows (28 features, logistic loss) at each size; its trees
(depth ≤ 6, ≤ 63 leaves, 255 bins, at least 20 rows a leaf, learning rate 0.1), 20 of them, 2
threads. Timed: the whole fit from a row-major numpy matrix — optboost's `BoostClassifier.fit`
(binning + training), LightGBM's `Dataset` construction + `train`. The two alternate within a
round, so that load from other processes spreads over both; medians over the rounds. Reported:
seconds per million rows (linear time keeps it flat), that figure over its value at 1M rows, and
optboost's time over LightGBM's.

    python benches/scaling.py                                   # 100k to 10M rows, 3 rounds
    python benches/scaling.py --rows 100000,1000000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# Before LightGBM loads OpenMP: its spinning idle threads would take the cores from optboost.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from compare import lightgbm_params, load_average, make_data, optboost_estimator

FEATURES, TREES, THREADS = 28, 20, 2


def fit_seconds(lib: str, x, y) -> float:
    started = time.perf_counter()
    if lib == "optboost":
        optboost_estimator("logistic", TREES, THREADS).fit(x, y)
    else:
        import lightgbm as lgb

        lgb.train(lightgbm_params("logistic", THREADS), lgb.Dataset(x, y), num_boost_round=TREES)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="100000,300000,1000000,3000000,10000000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    libs = ["optboost", "lightgbm"]
    per_million = {}
    print(f"{FEATURES} features, {TREES} trees, {THREADS} threads, median of {args.rounds} rounds")
    # Imports and thread pools are made by a first fit, which no size should pay.
    x, y, _, _ = make_data(2_000, 0, FEATURES, seed=0)
    for lib in libs:
        fit_seconds(lib, x, y)
    for rows in (int(r) for r in args.rows.split(",")):
        x, y, _, _ = make_data(rows, 0, FEATURES, seed=rows)
        times = {lib: [] for lib in libs}
        for round_ in range(args.rounds):
            for lib in libs[round_ % 2:] + libs[:round_ % 2]:
                times[lib].append(fit_seconds(lib, x, y))
        del x, y
        median = {lib: statistics.median(t) for lib, t in times.items()}
        per_million[rows] = {lib: s / rows * 1e6 for lib, s in median.items()}
        print(f"{rows:>11,} rows  optboost {median['optboost']:7.2f} s "
              f"({per_million[rows]['optboost']:5.2f} s/M)  LightGBM {median['lightgbm']:7.2f} s "
              f"({per_million[rows]['lightgbm']:5.2f} s/M)  "
              f"x LightGBM {median['optboost'] / median['lightgbm']:.2f}  load {load_average()}",
              flush=True)
    if 1_000_000 in per_million:
        reference = per_million[1_000_000]
        print("seconds per million rows over their value at 1M rows:")
        for rows, figures in per_million.items():
            print(f"{rows:>11,} rows  optboost {figures['optboost'] / reference['optboost']:.2f}  "
                  f"LightGBM {figures['lightgbm'] / reference['lightgbm']:.2f}")


if __name__ == "__main__":
    main()
