#!/usr/bin/env python3
"""Prediction speed: 200,000 rows through 100 depth-6 trees (issue 23, goal 4: at most 1.0× of
XGBoost's `inplace_predict` and within 2× of CatBoost's), against LightGBM, XGBoost and CatBoost
in the same process, on the same rows and threads.

Every library trains 100 trees of depth ≤ 6 on benches/compare.py's HIGGS-like rows (logistic
loss, learning rate 0.1): optboost, LightGBM and XGBoost grow ≤ 63 leaves leaf-wise, CatBoost
its own symmetric (oblivious) trees of depth 6, which is what its predictor is built for. Timed:
raw scores (margins) of the test rows from a numpy matrix, through each library's Python API —
optboost `BoostClassifier.decision_function`, LightGBM `Booster.predict(raw_score=True)`,
XGBoost `Booster.inplace_predict(predict_type="margin")`, CatBoost
`predict(prediction_type="RawFormulaVal")`. The libraries alternate within a round and the
order rotates between rounds, so that load from other processes spreads over all of them; the
median over the rounds is reported with the ratios to XGBoost and CatBoost.

    python benches/predict.py                       # 1 and 2 threads, 7 rounds
    python benches/predict.py --threads 1 --rounds 11 --libs optboost,xgboost
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# Before LightGBM and XGBoost load OpenMP: spinning idle threads of one library would take the
# cores from the next one in the alternation.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from compare import (
    DEPTH, LEAVES, LR, N_TREES, lightgbm_params, load_average, make_data, optboost_estimator,
)

LIBS = ["optboost", "xgboost", "catboost", "lightgbm"]


def train(lib: str, x, y, threads: int):
    """A model of N_TREES trees and a function giving the raw scores of a matrix."""
    if lib == "optboost":
        return optboost_estimator("logistic", N_TREES, threads).fit(x, y).decision_function
    if lib == "lightgbm":
        import lightgbm as lgb

        params = lightgbm_params("logistic", threads)
        model = lgb.train(params, lgb.Dataset(x, y), num_boost_round=N_TREES)
        return lambda xs: model.predict(xs, raw_score=True, num_threads=threads)
    if lib == "xgboost":
        import xgboost as xgb

        params = {
            "objective": "binary:logistic", "tree_method": "hist", "grow_policy": "lossguide",
            "max_depth": DEPTH, "max_leaves": LEAVES, "eta": LR, "nthread": threads,
        }
        model = xgb.train(params, xgb.QuantileDMatrix(x, y, nthread=threads), N_TREES)
        return lambda xs: model.inplace_predict(xs, predict_type="margin")
    if lib == "catboost":
        from catboost import CatBoostClassifier

        model = CatBoostClassifier(
            iterations=N_TREES, depth=DEPTH, learning_rate=LR, thread_count=threads,
            verbose=False, allow_writing_files=False,
        ).fit(x, y)
        return lambda xs: model.predict(xs, prediction_type="RawFormulaVal", thread_count=threads)
    raise ValueError(lib)


def run(libs: list[str], threads: int, rows: int, test_rows: int, rounds: int) -> None:
    import numpy as np

    x, y, xte, _ = make_data(rows, test_rows, 28, seed=11)
    xte = np.ascontiguousarray(xte)
    predictors = {lib: train(lib, x, y, threads) for lib in libs}
    for predict in predictors.values():
        predict(xte)  # first call: thread pools, lazily built predictors
    times: dict[str, list[float]] = {lib: [] for lib in libs}
    print(f"# {test_rows:,} rows × 28, {N_TREES} trees depth {DEPTH}, {threads} thread(s), "
          f"load before {load_average()}", flush=True)
    for r in range(rounds):
        order = libs[r % len(libs):] + libs[: r % len(libs)]
        for lib in order:
            t0 = time.perf_counter()
            scores = predictors[lib](xte)
            times[lib].append(time.perf_counter() - t0)
            assert np.isfinite(np.asarray(scores, dtype=float)).all(), lib
    median = {lib: statistics.median(t) for lib, t in times.items()}
    header = f"  {'library':<10}{'median ms':>10}"
    for peer in ("xgboost", "catboost"):
        if peer in median:
            header += f"{'× ' + peer:>12}"
    print(header + "   (ms of each round)")
    for lib in libs:
        line = f"  {lib:<10}{1e3 * median[lib]:>10.1f}"
        for peer in ("xgboost", "catboost"):
            if peer in median:
                line += f"{median[lib] / median[peer]:>12.2f}"
        print(line + "   " + " ".join(f"{1e3 * t:.0f}" for t in times[lib]))
    print(f"# load after {load_average()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rows", type=int, default=200_000, help="training rows")
    ap.add_argument("--test-rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    print(f"# predict, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC")
    for threads in map(int, args.threads.split(",")):
        run(args.libs.split(","), threads, args.rows, args.test_rows, args.rounds)


if __name__ == "__main__":
    main()
