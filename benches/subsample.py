#!/usr/bin/env python3
"""What subsampling saves: training time of `subsample` = 1.0, 0.8 and 0.5 (issue 22: a tree at
0.5 should cost at most 0.6× a full one at 1M rows), with LightGBM's bagging (bagging_fraction
0.5, bagging_freq 1) against none in the same run for reference.

Data: benches/compare.py's synthetic HIGGS-like rows (seeded). Settings: 100 depth-6 trees,
≤ 63 leaves, learning rate 0.1, 255 bins, ≥ 20 rows per leaf, no L2 penalty, 2 threads; the
logistic and the squared loss. Timed: training only, as wall time and as the process's CPU time
(all threads), which other processes' load disturbs far less on a shared machine. optboost: wall
time from the history's seconds (binning excluded), CPU time as that of a fit of 100 trees minus
that of a fit of 1 (the binning and one tree; × 100/99); LightGBM: `lgb.train` after
`Dataset.construct`. The cases alternate within a repeat and the order rotates between
repeats, so that load from other processes spreads over them; each case's median over the
repeats is reported, with the ratio to its library's full fit.

    python benches/subsample.py                            # 1M × 28, 3 repeats
    python benches/subsample.py --rows 100000 --repeats 1 --libs optboost
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# Before LightGBM loads OpenMP: on a loaded machine its spinning threads (the default wait
# policy) took 20 s for a fit of 20,000 rows that takes under one.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from compare import (
    DEPTH, N_TREES, lightgbm_params, load_average, make_data, optboost_estimator,
)

CASES = [
    ("optboost", 1.0),
    ("optboost", 0.8),
    ("optboost", 0.5),
    ("lightgbm", 1.0),
    ("lightgbm", 0.5),
]


def train_optboost(x, y, loss: str, fraction: float, threads: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of training."""
    one_tree_cpu = fit_optboost(x, y, loss, fraction, threads, 1)[1]
    wall, cpu = fit_optboost(x, y, loss, fraction, threads, N_TREES)
    return wall, (cpu - one_tree_cpu) * N_TREES / (N_TREES - 1)


def fit_optboost(x, y, loss, fraction, threads, n_iter) -> tuple[float, float]:
    """(training wall seconds from the history, CPU seconds of the whole fit)."""
    model = optboost_estimator(loss, n_iter, threads, subsample=fraction, random_state=1)
    cpu = time.process_time()
    model.fit(x, y)
    return float(model.history_["seconds"][-1]), time.process_time() - cpu


def train_lightgbm(x, y, loss: str, fraction: float, threads: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of training."""
    import lightgbm as lgb

    params = {**lightgbm_params(loss, threads), "seed": 1}
    if fraction < 1.0:
        params.update(bagging_fraction=fraction, bagging_freq=1)
    ds = lgb.Dataset(x, y, params=params)
    ds.construct()
    started, cpu = time.perf_counter(), time.process_time()
    lgb.train(params, ds, num_boost_round=N_TREES)
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--losses", default="logistic,squared")
    parser.add_argument("--libs", default="optboost,lightgbm")
    args = parser.parse_args()
    cases = [case for case in CASES if case[0] in args.libs.split(",")]

    x, y, _, _ = make_data(args.rows, 0, args.features, seed=2024)
    print(f"# subsample, {time.strftime('%Y-%m-%d %H:%M')}, {args.rows} × {args.features}, "
          f"{N_TREES} trees depth {DEPTH}, {args.threads} threads, load before {load_average()}")
    train = {"optboost": train_optboost, "lightgbm": train_lightgbm}
    for loss in args.losses.split(","):
        times: dict[tuple[str, float], list[tuple[float, float]]] = {case: [] for case in cases}
        for repeat in range(args.repeats):
            shift = repeat % len(cases)
            for lib, fraction in cases[shift:] + cases[:shift]:
                times[lib, fraction].append(train[lib](x, y, loss, fraction, args.threads))
        print(f"{loss} (load after {load_average()})")
        print("  library   fraction  wall s  ratio   CPU s  ratio  (wall, CPU of each repeat)")
        for lib, fraction in cases:
            wall, cpu = (statistics.median(t[i] for t in times[lib, fraction]) for i in (0, 1))
            full_wall, full_cpu = (statistics.median(t[i] for t in times[lib, 1.0]) for i in (0, 1))
            runs = " ".join(f"{w:.1f},{c:.1f}" for w, c in times[lib, fraction])
            print(f"  {lib:<9} {fraction:>8}  {wall:>6.2f}  {wall / full_wall:>5.2f}  "
                  f"{cpu:>6.2f}  {cpu / full_cpu:>5.2f}  {runs}")


if __name__ == "__main__":
    main()
