#!/usr/bin/env python3
"""optboost.dask on a LocalCluster: time per tree against a single-process fit of the same
rows, bytes the core exchanges per tree, and lightgbm.dask / xgboost.dask on the same cluster
and data when they are installed (the `bench` extra).

Data: benches/compare.py's HIGGS-like rows (28 features, a 0/1 label), generated ON the
workers (dask.dataframe.from_map, one seeded piece per partition, two partitions per worker);
the client never holds them. The single-process reference generates the same pieces in this
process afterwards. Settings: the logistic loss, depth-6 trees, learning rate 0.1, one thread
per worker (and per process for the reference, plus one with every core).

Columns: "s/tree" is the training wall time per tree (optboost: from the history's seconds,
binning excluded; the peers: their whole fit / trees, binning included), "fit s" the whole
call, "sent/tree" the bytes rank 0 (the root) sent per tree, "msgs/tree" its messages
(Booster.traffic()).

    python benches/dask_scaling.py                          # 1M rows, 2 workers, 20 trees
    python benches/dask_scaling.py --rows 10000000 --workers 2,4 --trees 50

One run on this 2-core machine shared with other work (load ≈ 2.8), 1M rows, 20 trees: s/tree
optboost.dask 0.120 (fit 3.9 s, rank 0 sent 4.4 MB and 69 messages per tree), lightgbm.dask
0.348 and xgboost.dask 0.334 (their whole fits, 7.0 and 6.7 s), one process 0.077 (1 thread).
At 200k rows, 4 workers (oversubscribed: 2 cores) sent 14.3 MB and 209 messages per tree from
the root, 2 workers 4.5 MB and 70: the root's traffic grows as (workers − 1) × histograms
(docs/algorithms.md §12 on 100 workers).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # compare.py; spawned workers inherit it

from compare import DEPTH, LEAVES, LR, lightgbm_params, make_data  # noqa: E402

FEATURES = 28
PARTS_PER_WORKER = 2


def make_piece(seed: int, rows: int):
    """One partition's rows, generated where the task runs (a worker)."""
    import pandas as pd

    x, y, _, _ = make_data(rows, 0, FEATURES, seed)
    frame = pd.DataFrame(x, columns=[f"f{j}" for j in range(FEATURES)])
    frame["y"] = y
    return frame


def pieces(rows: int, n_parts: int) -> list[tuple[int, int]]:
    base, extra = divmod(rows, n_parts)
    return [(1000 + i, base + (i < extra)) for i in range(n_parts)]


def per_tree(model) -> float:
    seconds = model.history["seconds"].to_list()
    return (seconds[-1] - seconds[0]) / max(len(seconds) - 1, 1)


def run_optboost(client, ddf, trees: int) -> dict:
    import optboost.dask

    start = time.perf_counter()
    model = optboost.dask.boost(
        "y ~ .", ddf, client=client, loss="logistic", n_iter=trees, learning_rate=LR,
        max_depth=DEPTH, n_threads=1, validation_fraction=None,
    )
    fit = time.perf_counter() - start
    traffic = (getattr(model, "traffic", None) or [None])[0]
    return {
        "s/tree": per_tree(model),
        "fit s": fit,
        "sent/tree": traffic["bytes_sent"] / trees if traffic else None,
        "msgs/tree": traffic["messages"] / trees if traffic else None,
    }


def run_lightgbm(client, ddf, trees: int) -> dict | None:
    try:
        import lightgbm
    except ImportError:
        return None
    params = lightgbm_params("logistic", 1)
    params.pop("objective")
    params.pop("num_threads")
    model = lightgbm.DaskLGBMClassifier(n_estimators=trees, n_jobs=1, client=client, **params)
    start = time.perf_counter()
    model.fit(ddf.drop(columns="y"), ddf["y"])
    fit = time.perf_counter() - start
    return {"s/tree": fit / trees, "fit s": fit}


def run_xgboost(client, ddf, trees: int) -> dict | None:
    try:
        import xgboost
        import xgboost.dask  # noqa: F401 - a submodule, not imported by xgboost itself
    except ImportError:
        return None
    start = time.perf_counter()
    matrix = xgboost.dask.DaskQuantileDMatrix(client, ddf.drop(columns="y"), ddf["y"])
    params = {
        "objective": "binary:logistic", "tree_method": "hist", "max_depth": DEPTH,
        "max_leaves": LEAVES, "grow_policy": "lossguide", "eta": LR, "nthread": 1,
    }
    xgboost.dask.train(client, params, matrix, num_boost_round=trees)
    fit = time.perf_counter() - start
    return {"s/tree": fit / trees, "fit s": fit}


def run_single(rows: int, n_parts: int, trees: int, threads: int) -> dict:
    import pandas as pd

    import optboost

    data = pd.concat([make_piece(*p) for p in pieces(rows, n_parts)], ignore_index=True)
    start = time.perf_counter()
    model = optboost.boost(
        "y ~ .", data, loss="logistic", n_iter=trees, learning_rate=LR, max_depth=DEPTH,
        n_threads=threads, validation_fraction=None,
    )
    return {"s/tree": per_tree(model), "fit s": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", default="2", help="comma-separated worker counts")
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--libs", default="optboost,lightgbm,xgboost")
    args = parser.parse_args()
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    libs = args.libs.split(",")
    runners = {"optboost": run_optboost, "lightgbm": run_lightgbm, "xgboost": run_xgboost}
    table: list[tuple[str, dict]] = []
    for workers in [int(w) for w in args.workers.split(",")]:
        n_parts = workers * PARTS_PER_WORKER
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            specs = pieces(args.rows, n_parts)
            meta = make_piece(0, 1).iloc[:0]
            ddf = dd.from_map(make_piece, *zip(*specs), meta=meta).persist()
            wait(ddf)
            for lib in libs:
                result = runners[lib](client, ddf, args.trees)
                if result is not None:
                    table.append((f"{lib}.dask, {workers} workers", result))
                    print_row(*table[-1], flush=True)
    for threads in sorted({1, os.cpu_count() or 1}):
        table.append(
            (f"optboost, 1 process, {threads} thread(s)",
             run_single(args.rows, PARTS_PER_WORKER * 2, args.trees, threads))
        )
        print_row(*table[-1], flush=True)
    print(f"\n{args.rows:,} rows × {FEATURES} features, {args.trees} trees, logistic loss")
    print(f"{'':40} {'s/tree':>8} {'fit s':>8} {'sent/tree':>11} {'msgs/tree':>10}")
    for name, row in table:
        print_row(name, row)


def print_row(name: str, row: dict, flush: bool = False) -> None:
    def cell(key: str, width: int, spec: str) -> str:
        value = row.get(key)
        return f"{value:>{width}{spec}}" if value is not None else f"{'-':>{width}}"

    print(
        f"{name:40} {cell('s/tree', 8, '.4f')} {cell('fit s', 8, '.2f')} "
        f"{cell('sent/tree', 11, ',.0f')} {cell('msgs/tree', 10, '.1f')}",
        flush=flush,
    )


if __name__ == "__main__":
    main()
