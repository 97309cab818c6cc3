#!/usr/bin/env python3
"""Cost of a tree for the non-smooth and accelerated methods (issue 23, goal 3): at 1M rows,
`proximal` and `residual_proximal` with the absolute, pinball(0.9) and Huber losses against
LightGBM's own `l1`, `quantile` (alpha 0.9) and `huber` objectives and against optboost's `gbm`
with the same loss; `agbm` (two trees per iteration) against `gbm` per iteration.

Data: benches/compare.py's HIGGS-like rows (seeded), with a continuous target for the
regression losses: the same nonlinear signal plus Student-t noise (3 degrees of freedom), the
heavy tails these losses are for. Trees as in benches/compare.py: depth 6, ≤ 63 leaves grown
leaf-wise, ≥ 20 rows a leaf, 255 bins, learning rate 0.1, no L2 penalty. Huber's δ is 1 in
both libraries (LightGBM's `alpha`).

Time per tree: CPU time of the process (all threads; other processes' load disturbs it far less
than wall time on a shared machine) for a fit of `--trees` iterations minus that of a fit of 1,
divided by the difference; LightGBM's after `Dataset.construct`, optboost's including the
binning in both fits, so that it cancels. The cases alternate within a repeat and the order
rotates between repeats; medians over the repeats.

    python benches/nonsmooth.py                          # 1M × 28, 2 threads, 3 repeats
    python benches/nonsmooth.py --rows 100000 --repeats 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# Before LightGBM loads OpenMP: spinning threads (the default wait policy) inflate CPU time.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from compare import (
    DEPTH, LEAVES, lightgbm_params, load_average, make_data, optboost_estimator,
)

# (label, optboost loss, LightGBM objective and its parameters)
LOSSES = [
    ("absolute", "absolute", {"objective": "l1"}),
    ("pinball(0.9)", "pinball(0.9)", {"objective": "quantile", "alpha": 0.9}),
    ("huber", "huber(1.0)", {"objective": "huber", "alpha": 1.0}),
]
OPTBOOST_METHODS = ["gbm", "proximal", "residual_proximal"]


def regression_target(x, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    signal = (
        np.sin(2 * x[:, 0]) * x[:, 1]
        + 0.5 * (x[:, 2] - 1.0) ** 2
        - 0.8 * x[:, 3] * x[:, 4]
        + np.tanh(x[:, 5] + x[:, 6])
    )
    return signal + 0.5 * rng.standard_t(3, size=len(signal))


def optboost_cpu(x, y, method: str, loss: str, threads: int, n_iter: int) -> float:
    model = optboost_estimator(loss, n_iter, threads, method=method)
    started = time.process_time()
    model.fit(x, y)
    return time.process_time() - started


def lightgbm_cpu(x, y, objective: dict, threads: int, n_iter: int) -> float:
    import lightgbm as lgb

    params = {**lightgbm_params("squared", threads), **objective}
    ds = lgb.Dataset(x, y, params=params)
    ds.construct()
    started = time.process_time()
    lgb.train(params, ds, num_boost_round=n_iter)
    return time.process_time() - started


def per_tree(fit, trees: int) -> float:
    """CPU seconds per iteration: a fit of `trees` iterations minus a fit of one."""
    return (fit(trees) - fit(1)) / (trees - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    x, y_binary, _, _ = make_data(args.rows, 0, args.features, seed=2024)
    y = regression_target(x, seed=2025)
    print(f"# nonsmooth, {time.strftime('%Y-%m-%d %H:%M')}, {args.rows} × {args.features}, "
          f"{args.trees} trees depth {DEPTH} ≤ {LEAVES} leaves, {args.threads} threads, "
          f"load before {load_average()}")
    cases = {}
    for label, loss, objective in LOSSES:
        for method in OPTBOOST_METHODS:
            cases[label, f"optboost {method}"] = (
                lambda n, m=method, l=loss: optboost_cpu(x, y, m, l, args.threads, n))
        cases[label, "lightgbm"] = (
            lambda n, o=objective: lightgbm_cpu(x, y, o, args.threads, n))
    for loss, target in (("logistic", y_binary), ("squared", y)):
        for method in ("gbm", "agbm"):
            cases[loss, f"optboost {method}"] = (
                lambda n, m=method, l=loss, t=target: optboost_cpu(x, t, m, l, args.threads, n))
    keys = list(cases)
    times: dict = {key: [] for key in keys}
    for repeat in range(args.repeats):
        shift = (repeat * len(keys)) // args.repeats
        for key in keys[shift:] + keys[:shift]:
            times[key].append(per_tree(cases[key], args.trees))
    print(f"# load after {load_average()}; CPU ms per iteration, median (each repeat)")
    median = {key: statistics.median(v) for key, v in times.items()}
    for label, _, _ in LOSSES:
        lgb, gbm = median[label, "lightgbm"], median[label, "optboost gbm"]
        for lib in ["lightgbm"] + [f"optboost {m}" for m in OPTBOOST_METHODS]:
            t = median[label, lib]
            runs = " ".join(f"{1000 * v:.0f}" for v in times[label, lib])
            print(f"{label:<13} {lib:<27} {1000 * t:7.1f}  / lightgbm {t / lgb:5.2f}"
                  f"  / gbm {t / gbm:5.2f}  ({runs})")
    for loss in ("logistic", "squared"):
        gbm, agbm = median[loss, "optboost gbm"], median[loss, "optboost agbm"]
        print(f"{loss:<13} agbm / gbm per iteration {agbm / gbm:5.2f}  "
              f"({1000 * agbm:.1f} / {1000 * gbm:.1f} ms)")


if __name__ == "__main__":
    main()
