"""Test loss of random_strength and the Bayesian bootstrap against the defaults (gbm).

Each set is cut 5 times (seeded shuffles) into 70% training and 30% test rows; 20% of the
training rows are the validation part for early stopping (patience 50, at most 1,000
iterations, learning rate 0.1, 1 thread). Test loss: log-loss (binary) or mean squared error
(regression), mean ± standard error over the 5 cuts, and the mean ratio to the defaults'.

    python benches/reproduce/randomness.py
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl
from common import SEED, load, mean_se, shuffled, take

import optboost

SETS = [
    ("pima_diabetes", "logistic"),
    ("german_credit", "logistic"),
    ("sonar", "logistic"),
    ("concrete", "squared"),
    ("redwine", "squared"),
]
CONFIGS = [
    ("defaults", {}),
    ("random_strength=1", {"random_strength": 1.0}),
    ("bootstrap=bayesian", {"bootstrap": "bayesian"}),
    ("both", {"random_strength": 1.0, "bootstrap": "bayesian"}),
]
CUTS = 5


def test_loss(loss: str, y: np.ndarray, p: np.ndarray) -> float:
    if loss == "logistic":
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return float(np.mean((y - p) ** 2))


def main() -> None:
    rows = []
    for name, loss in SETS:
        df = load(name)
        n = df.height
        results: dict[str, list[float]] = {label: [] for label, _ in CONFIGS}
        seconds: dict[str, float] = {label: 0.0 for label, _ in CONFIGS}
        for cut in range(CUTS):
            perm = shuffled(n, SEED + cut)
            n_test = int(0.3 * n)
            test, rest = take(df, perm[:n_test]), perm[n_test:]
            n_valid = int(0.2 * len(rest))
            valid, train = take(df, rest[:n_valid]), take(df, rest[n_valid:])
            for label, extra in CONFIGS:
                started = time.perf_counter()
                model = optboost.boost(
                    "y ~ .",
                    train,
                    loss=loss,
                    n_iter=1000,
                    valid=valid,
                    early_stopping_rounds=50,
                    n_threads=1,
                    seed=cut,
                    progress=False,
                    **extra,
                )
                seconds[label] += time.perf_counter() - started
                p = np.asarray(model.predict(test, type="response"), dtype=float)
                results[label].append(test_loss(loss, test["y"].to_numpy().astype(float), p))
        base = np.asarray(results["defaults"])
        for label, _ in CONFIGS:
            m, se = mean_se(results[label])
            ratio = float(np.mean(np.asarray(results[label]) / base))
            rows.append((name, loss, label, m, se, ratio, seconds[label] / CUTS))
            print(f"{name:14s} {label:20s} {m:.4f} ± {se:.4f}  ratio {ratio:.3f}  "
                  f"{seconds[label] / CUTS:.2f} s/fit", flush=True)
    print(pl.DataFrame(rows, schema=["set", "loss", "config", "mean", "se", "ratio", "s/fit"],
                       orient="row"))


if __name__ == "__main__":
    main()
