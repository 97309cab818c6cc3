#!/usr/bin/env python3
"""Ordinary (depth-wise) trees against oblivious trees (tree="oblivious", one rule per level as
in CatBoost: Prokhorenkova et al. 2018; Dorogush et al. 2018) as gbm's weak learner, on the
shared sets.

Protocol (as benches/cat_encoding.py): for each of 5 seeds, a seeded shuffle split into 60%
train, 20% validation, 20% test (stratified by class for classification); gbm with the
library's defaults otherwise, learning_rate 0.1, up to 2,000 iterations, early stopping after
50 without improvement of the validation loss, 1 thread; the test loss of the kept iterate
(log-loss for classification, squared error for regression). Learners: ordinary trees at the
default depth, oblivious trees at depth 6 (CatBoost's default) and at the default depth, and
ordinary trees at depth 6. Per set: mean ± one standard error, the paired difference of each
learner against the first (negative = better) with its standard error, trees and seconds per
fit.

    nice -n 10 python benches/oblivious.py
    nice -n 10 python benches/oblivious.py --sets pima_diabetes,concrete --seeds 3
    nice -n 10 python benches/oblivious.py --learners "ordinary d6,oblivious d6"
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import optboost
import polars as pl

SETS = {
    "boston_housing": "squared",
    "concrete": "squared",
    "crabs": "squared",
    "redwine": "squared",
    "sklearn_diabetes": "squared",
    "german_credit": "logistic",
    "pima_diabetes": "logistic",
    "sonar": "logistic",
    "adult": "logistic",
    "penguins": "softmax",
    "satimage": "softmax",
}
LEARNERS = {
    "ordinary": {},
    "oblivious d6": {"tree": "oblivious", "max_depth": 6},
    "oblivious": {"tree": "oblivious"},
    "ordinary d6": {"max_depth": 6},
}

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
    parser.add_argument("--learners", default=",".join(LEARNERS), help="the first is the baseline")
    parser.add_argument("--data", default=os.environ.get("OPTBOOST_DATASETS", str(SHARED_DATASETS)))
    args = parser.parse_args()
    print(f"optboost {optboost.__file__}")
    for name in args.sets.split(","):
        loss = SETS[name]
        data = pl.read_parquet(f"{args.data}/{name}.parquet")
        learners = {name: LEARNERS[name] for name in args.learners.split(",")}
        results: dict[str, list[tuple[float, int, float]]] = {learner: [] for learner in learners}
        for seed in range(args.seeds):
            y = data["y"].to_numpy()
            train, valid, test = (data[rows] for rows in split(len(data), y, seed, loss != "squared"))
            for learner, settings in learners.items():
                started = time.perf_counter()
                model = optboost.boost(
                    "y ~ .", train, valid=valid, loss=loss, n_iter=2000, learning_rate=0.1,
                    early_stopping_rounds=50, seed=seed, n_threads=1, progress=False, **settings,
                )
                seconds = time.perf_counter() - started
                results[learner].append((test_loss(model, test, loss), model.n_trees, seconds))
        metric = "mse" if loss == "squared" else "log-loss"
        print(f"\n{name}: {len(data)} rows, {data.width - 1} columns, test {metric}")
        for learner, runs in results.items():
            values = np.array([r[0] for r in runs])
            print(
                f"  {learner:13s} {values.mean():.4f} ± {values.std(ddof=1) / np.sqrt(len(values)):.4f}"
                f"   trees {np.mean([r[1] for r in runs]):6.0f}   {np.mean([r[2] for r in runs]):.3f} s/fit"
                f"   per seed {' '.join(f'{v:.4f}' for v in values)}"
            )
        baseline = next(iter(learners))
        for learner in list(learners)[1:]:
            diff = np.array([o[0] - d[0] for o, d in zip(results[learner], results[baseline])])
            se = diff.std(ddof=1) / np.sqrt(len(diff))
            relative = diff.mean() / np.mean([d[0] for d in results[baseline]])
            print(
                f"  {learner} − {baseline}: {diff.mean():+.4f} ± {se:.4f} ({relative:+.1%}, "
                f"{diff.mean() / max(se, 1e-300):+.1f} se); better on {int((diff < 0).sum())}/{len(diff)} seeds"
            )


if __name__ == "__main__":
    main()
