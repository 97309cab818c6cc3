"""Test loss of leaf and categorical settings, for choosing their defaults.
Writes docs/results/leaf_defaults.md.

Every configuration is a set of optboost parameters applied on top of the defaults; each is
trained with 100 trees (K per iteration for multiclass sets, two per iteration for agbm) on
70% of a seeded shuffle and scored (mean log-loss) on the other 30%, for 3 shuffles; the table
shows the mean over shuffles. Sets larger than --rows are subsampled (seeded) first.

    python benches/reproduce/leaf_defaults.py [--rows N] [--study leaf|size|cat]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl
from common import DEFAULTS, SEED, how_produced, load, log_loss, md_table, ob_fit, shuffled, take, write_md

BINARY = ["a1a", "german_credit", "pima_diabetes", "sonar", "adult"]
MULTICLASS = ["penguins", "satimage"]
N_SPLITS = 3
TREES = 100

# Each study: (methods, configurations) where a configuration is (label, params).
STUDIES = {
    # Leaf rule of the leaf line search (the proximal family's default step rule).
    "leaf": (
        ["proximal", "accelerated_gbm", "accelerated_proximal", "residual_gbm"],
        [
            ("exact search", {"leaf_newton_steps": 0}),
            ("exact, bound 4", {"leaf_newton_steps": 0, "max_leaf_value": 4.0}),
            ("1 Newton step", {"leaf_newton_steps": 1}),
            ("1 Newton step, bound 4", {"leaf_newton_steps": 1, "max_leaf_value": 4.0}),
            ("2 Newton steps", {"leaf_newton_steps": 2}),
        ],
    ),
    # The bound on a leaf's step, with one Newton step (gbm: its Newton trees' leaves).
    "bound": (
        ["gbm", "proximal", "residual_gbm"],
        [(f"max_leaf_value {b:g}", {"max_leaf_value": b}) for b in (0.0, 2.0, 4.0, 8.0)],
    ),
    # Leaf size and L2 for every method's trees.
    "size": (
        ["gbm", "agbm", "accelerated_gbm"],
        [
            ("min_samples_leaf 1, l2 0", {"min_samples_leaf": 1, "l2_leaf": 0.0}),
            ("min_samples_leaf 5, l2 0", {"min_samples_leaf": 5, "l2_leaf": 0.0}),
            ("min_samples_leaf 10, l2 0", {"min_samples_leaf": 10, "l2_leaf": 0.0}),
            ("min_samples_leaf 20, l2 0", {"min_samples_leaf": 20, "l2_leaf": 0.0}),
            ("min_samples_leaf 1, l2 1", {"min_samples_leaf": 1, "l2_leaf": 1.0}),
            ("min_samples_leaf 10, l2 1", {"min_samples_leaf": 10, "l2_leaf": 1.0}),
        ],
    ),
    # Categorical splits (adult: native_country has 41 levels; adult+state adds a 51-level
    # column of noise, drawn with unequal level sizes as US states have).
    "cat": (
        ["gbm", "agbm"],
        [
            ("unguarded (before)", {"cat_smooth": 0, "min_data_per_group": 1, "max_cat_threshold": 256}),
            ("smooth 10", {"cat_smooth": 10, "min_data_per_group": 1, "max_cat_threshold": 256}),
            ("smooth 10, min 10, max 32", {"cat_smooth": 10, "min_data_per_group": 10, "max_cat_threshold": 32}),
            ("smooth 10, min 100, max 32", {"cat_smooth": 10, "min_data_per_group": 100, "max_cat_threshold": 32}),
            ("smooth 10, min 10, max 8", {"cat_smooth": 10, "min_data_per_group": 10, "max_cat_threshold": 8}),
            ("smooth 1, min 10, max 32", {"cat_smooth": 1, "min_data_per_group": 10, "max_cat_threshold": 32}),
            ("smooth 50, min 10, max 32", {"cat_smooth": 50, "min_data_per_group": 10, "max_cat_threshold": 32}),
        ],
        ["adult", "german_credit", "adult+state"],
    ),
}


def with_state(df: pl.DataFrame) -> pl.DataFrame:
    """df with a 51-level categorical column unrelated to y (level sizes ∝ 1/rank)."""
    rng = np.random.default_rng(SEED)
    weights = 1.0 / np.arange(1, 52)
    levels = rng.choice(51, size=df.height, p=weights / weights.sum())
    return df.with_columns(pl.Series("state", [f"s{v:02d}" for v in levels]))


def dataset(name: str) -> pl.DataFrame:
    return with_state(load("adult")) if name == "adult+state" else load(name)


def sample(df: pl.DataFrame, rows: int) -> pl.DataFrame:
    return df if df.height <= rows else take(df, shuffled(df.height, SEED)[:rows])


def test_log_loss(model, test: pl.DataFrame) -> float:
    proba = np.asarray(model.predict(test, type="response"), dtype=float)
    k = int(model.n_classes) if hasattr(model, "n_classes") else 0
    if proba.ndim == 1 and k > 2:
        proba = proba.reshape(test.height, -1)
    return log_loss(test["y"].to_numpy(), proba)


def run(study: str, rows: int, sets: list[str]) -> tuple[list[str], list[list[str]]]:
    methods, configs = STUDIES[study][:2]
    header = ["method", "configuration"] + sets + ["mean rank"]
    results: dict[tuple[str, str], list[float]] = {}
    for name in sets:
        df = sample(dataset(name), rows)
        loss = "softmax" if name in MULTICLASS else "logistic"
        k = int(df["y"].max()) + 1 if loss == "softmax" else 1
        for method in methods:
            n_iter = max(1, TREES // (k * (2 if method in ("agbm", "agbmr") else 1)))
            for label, params in configs:
                scores = []
                for s in range(N_SPLITS):
                    perm = shuffled(df.height, SEED + s)
                    cut = int(0.7 * df.height)
                    train, test = take(df, perm[:cut]), take(df, perm[cut:])
                    try:
                        model = ob_fit(train, method=method, loss=loss, n_iter=n_iter, **params)
                    except Exception:  # a method without this loss (yet): an empty cell
                        scores.append(float("nan"))
                        continue
                    scores.append(test_log_loss(model, test))
                results.setdefault((method, label), []).append(float(np.mean(scores)))
                print(name, method, label, f"{np.mean(scores):.4f}", flush=True)
    out = []
    for method in methods:
        table = np.array([results[(method, label)] for label, _ in configs])
        done = ~np.isnan(table).any(axis=0)
        ranks = table[:, done].argsort(axis=0).argsort(axis=0) + 1
        for i, (label, _) in enumerate(configs):
            cells = ["—" if np.isnan(v) else f"{v:.4f}" for v in table[i]]
            out.append([method, label, *cells, f"{ranks[i].mean():.2f}"])
    return header, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--study", choices=sorted(STUDIES), action="append")
    args = parser.parse_args()
    started = time.perf_counter()
    studies = args.study or sorted(STUDIES)
    text = ["# Leaf defaults: test log-loss by configuration\n"]
    for study in studies:
        sets = STUDIES[study][2] if len(STUDIES[study]) > 2 else BINARY + MULTICLASS
        header, rows = run(study, args.rows, sets)
        text += [f"\n## Study `{study}`\n\n", md_table(header, rows)]
    text.append(
        how_produced(
            "leaf_defaults.py " + " ".join(f"--study {s}" for s in studies),
            SEED,
            f"{N_SPLITS} shuffles, 70% train / 30% test; mean test log-loss over the shuffles",
            f"{TREES} trees, learning_rate 0.1, depth 3, other parameters at their defaults",
            started,
            [f"rows subsampled (seeded) to at most {args.rows} per data set"], preset=DEFAULTS)
    )
    write_md("leaf_defaults.md", "".join(text))


if __name__ == "__main__":
    main()
