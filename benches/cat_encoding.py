#!/usr/bin/env python3
"""cat_encoding="partition" (the default) against "target_stats" (ordered target statistics,
Prokhorenkova et al. 2018) on the shared sets with categorical columns.

Protocol: for each of 5 seeds, a seeded shuffle split into 60% train, 20% validation, 20% test
(stratified by class for classification); gbm with defaults, learning_rate 0.1, up to 2,000
iterations, early stopping after 50 without improvement of the validation loss, 1 thread; the
test loss of the kept iterate (log-loss; squared error for regression). Per set: the mean ± one
standard error of each encoding, the paired difference (target_stats − partition, negative =
target_stats better) with its standard error, the seeds it wins, trees, and seconds per fit.

Rule for the default: target_stats becomes the default only if its paired mean difference is
negative by more than two standard errors on every set (a consistent win); otherwise the
default stays "partition".

    nice -n 10 python benches/cat_encoding.py                  # adult, german_credit, penguins
    nice -n 10 python benches/cat_encoding.py --sets german_credit --seeds 3
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import optboost
import polars as pl

SETS = {"adult": "logistic", "german_credit": "logistic", "penguins": "softmax", "crabs": "squared"}

# The data sets live beside the repository, never inside it.
SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def split(n: int, y: np.ndarray, seed: int, stratify: bool) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    parts: list[list[np.ndarray]] = [[], [], []]
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else [np.arange(n)]
    for rows in groups:
        rows = rng.permutation(rows)
        a, b = int(0.6 * len(rows)), int(0.8 * len(rows))
        for part, chunk in zip(parts, (rows[:a], rows[a:b], rows[b:])):
            part.append(chunk)
    return tuple(np.sort(np.concatenate(p)) for p in parts)


def test_loss(model: optboost.Model, test: pl.DataFrame, loss: str) -> float:
    y = test["y"].to_numpy()
    p = np.asarray(model.predict(test))
    if loss == "squared":
        return float(np.mean((y - p) ** 2))
    if loss == "logistic":
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return float(-np.mean(np.where(y == 1, np.log(p), np.log(1 - p))))
    p = np.clip(p, 1e-15, 1)
    classes = [int(c) for c in model.classes]
    return float(-np.mean(np.log(p[np.arange(len(y)), [classes.index(int(c)) for c in y]])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--data", default=os.environ.get("OPTBOOST_DATASETS", str(SHARED_DATASETS)))
    args = parser.parse_args()
    print(f"optboost {optboost.__file__}")
    for name in args.sets.split(","):
        loss = SETS[name]
        data = pl.read_parquet(f"{args.data}/{name}.parquet")
        n_cat = sum(dtype == pl.Utf8 for dtype in data.schema.values())
        results: dict[str, list[tuple[float, int, float]]] = {"partition": [], "target_stats": []}
        for seed in range(args.seeds):
            y = data["y"].to_numpy()
            train, valid, test = (data[rows] for rows in split(len(data), y, seed, loss != "squared"))
            for encoding in results:
                started = time.perf_counter()
                model = optboost.boost(
                    "y ~ .", train, valid=valid, loss=loss, n_iter=2000, learning_rate=0.1,
                    early_stopping_rounds=50, seed=seed, n_threads=1, progress=False,
                    cat_encoding=encoding,
                )
                seconds = time.perf_counter() - started
                results[encoding].append((test_loss(model, test, loss), model.n_trees, seconds))
        metric = "mse" if loss == "squared" else "log-loss"
        print(f"\n{name}: {len(data)} rows, {n_cat} categorical columns, test {metric}")
        for encoding, runs in results.items():
            values = np.array([r[0] for r in runs])
            print(
                f"  {encoding:13s} {values.mean():.4f} ± {values.std(ddof=1) / np.sqrt(len(values)):.4f}"
                f"   trees {np.mean([r[1] for r in runs]):6.0f}   {np.mean([r[2] for r in runs]):.2f} s/fit"
                f"   per seed {' '.join(f'{v:.4f}' for v in values)}"
            )
        diff = np.array([t[0] - p[0] for t, p in zip(results["target_stats"], results["partition"])])
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        print(
            f"  target_stats − partition: {diff.mean():+.4f} ± {se:.4f} "
            f"({diff.mean() / max(se, 1e-300):+.1f} se); target_stats better on "
            f"{int((diff < 0).sum())}/{len(diff)} seeds"
        )


if __name__ == "__main__":
    main()
