"""The accelerated methods with their default parameters: do they beat plain boosting, and do
they ever diverge? Writes docs/results/accelerated_defaults.md.

Table 1: training loss at 50 and 100 trees on the binary sets (logistic loss, default
parameters: learning_rate 0.1, depth 3), for gbm (its default Newton step, and the constant step
the AGBM family uses), the AGBM family, accelerated_gbm and accelerated_proximal, and AGBM
exactly as the paper prints it (corrected_residual="paper", safeguard="none").

Table 2: every shared data set (squared / logistic / softmax loss by task), learning rate 0.1,
depth 3 and 6, up to 1000 trees: the largest rise of the training loss above its running
minimum (as a share of the starting loss), whether training diverged, the last loss over the
starting one, and how many iterations the safeguard undid.

    python benches/reproduce/accelerated_defaults.py [--rows N]

Rows are subsampled (seeded) to at most N (default 3000) per data set to keep the run
affordable on two shared cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl
from common import (
    DEFAULTS,
    SEED,
    how_produced,
    load,
    md_table,
    ob_fit,
    require_optboost,
    shuffled,
    take,
    write_md,
)

BINARY = ["a1a", "german_credit", "pima_diabetes", "sonar", "adult"]
ALL = [
    "a1a", "adult", "boston_housing", "concrete", "connect_4", "crabs", "diamonds", "engel",
    "german_credit", "letter", "mcycle", "pendigits", "penguins", "pima_diabetes", "redwine",
    "satimage", "sklearn_diabetes", "sonar",
]  # fmt: skip
MULTICLASS = {"connect_4", "letter", "pendigits", "penguins", "satimage"}
BINARY_SETS = {"a1a", "adult", "german_credit", "pima_diabetes", "sonar"}
TREES_PER_ITERATION = {"agbm": 2, "agbmr": 2}
ACCELERATED = ["agbm", "agbmr", "vagbm", "accelerated_gbm", "accelerated_proximal"]
PAPER = {"corrected_residual": "paper", "safeguard": "none"}


def sample(df: pl.DataFrame, rows: int) -> pl.DataFrame:
    if df.height <= rows:
        return df
    return take(df, shuffled(df.height, SEED)[:rows])


def loss_of(name: str) -> str:
    if name in MULTICLASS:
        return "softmax"
    return "logistic" if name in BINARY_SETS else "squared"


def loss_at_trees(history: pl.DataFrame, trees: int, start: float) -> float:
    """Training loss of the model with at most `trees` trees (the last such iteration)."""
    rows = history.filter(pl.col("trees") <= trees)
    return start if rows.height == 0 else rows["train_loss"][-1]


def fit(df, method, loss, trees, depth, **extra):
    n_classes = int(df["y"].max()) + 1 if loss == "softmax" else 1
    per_iteration = TREES_PER_ITERATION.get(method, 1) * n_classes
    n_iter = max(1, trees // per_iteration)
    started = time.perf_counter()
    # Optimisation speed and safety: every row trains (no held-out part, validation_fraction).
    extra.setdefault("validation_fraction", None)
    model = ob_fit(df, method=method, loss=loss, n_iter=n_iter, max_depth=depth, **extra)
    return model, time.perf_counter() - started


def starting_loss(df, loss) -> float:
    """Mean training loss of the initial constant (iteration 0 of any model)."""
    model = ob_fit(df, method="gbm", loss=loss, n_iter=1)
    link = np.asarray(model.predict(df, type="link", iteration=0), dtype=float)
    y = df["y"].to_numpy()
    if loss == "squared":
        return float(np.mean(0.5 * (y - link) ** 2))
    if loss == "logistic":
        s = 2.0 * y - 1.0
        return float(np.mean(np.logaddexp(0.0, -s * link)))
    link = link.reshape(len(y), -1)
    z = link - link.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-np.mean(logp[np.arange(len(y)), y.astype(int)]))


def trees_to_reach(history: pl.DataFrame, target: float) -> str:
    """The fewest trees at which the training loss is at or below `target` ("—": never)."""
    rows = history.filter(pl.col("train_loss") <= target)
    return "—" if rows.height == 0 else str(rows["trees"][0])


def table1(rows: int, notes: list[str]) -> str:
    configs = [
        ("gbm (default: newton)", "gbm", {}),
        ("gbm (constant step)", "gbm", {"step": "constant"}),
        *[(m, m, {}) for m in ACCELERATED],
        ("agbm, rho=1 (the former default step)", "agbm", {"rho": 1.0}),
        ("agbm as printed (paper sign, no safeguard)", "agbm", PAPER),
        (
            "agbm, corrected_residual=reference_code",
            "agbm",
            {"corrected_residual": "reference_code"},
        ),
    ]
    header = ["method"] + [f"{d} @{t}" for d in BINARY for t in (50, 100, "gbm100")]
    frames = {name: sample(load(name), rows) for name in BINARY}
    starts = {name: starting_loss(frames[name], "logistic") for name in BINARY}
    gbm100 = {}
    for name in BINARY:
        model, _ = fit(frames[name], "gbm", "logistic", 100, 3)
        gbm100[name] = loss_at_trees(model.history, 100, starts[name])
    out = []
    for label, method, extra in configs:
        cells = [label]
        for name in BINARY:
            model, _ = fit(frames[name], method, "logistic", 200, 3, **extra)
            h = model.history
            cells += [f"{loss_at_trees(h, t, starts[name]):.4f}" for t in (50, 100)]
            cells.append(trees_to_reach(h, gbm100[name]))
        out.append(cells)
        print(" | ".join(cells), flush=True)
    return md_table(header, out)


def table2(rows: int, notes: list[str]) -> str:
    header = [
        "data",
        "loss",
        "depth",
        "method",
        "trees",
        "max rise (% of start)",
        "stop",
        "kept iteration",
        "last / start",
        "undone iterations",
        "seconds",
    ]
    out = []
    for name in ALL:
        df = sample(load(name), rows)
        loss = loss_of(name)
        start = starting_loss(df, loss)
        for depth in (3, 6):
            methods = [(m, m, {}) for m in ACCELERATED]
            if depth == 3:
                methods.append(("agbm (paper, unguarded)", "agbm", PAPER))
            for label, method, extra in methods:
                model, seconds = fit(df, method, loss, 1000, depth, **extra)
                h = model.history
                losses = np.concatenate([[start], h["train_loss"].to_numpy()])
                running_min = np.minimum.accumulate(losses)
                rise = float(np.max(losses[1:] - running_min[:-1]))
                rise = max(rise, 0.0) / start
                stop = model.stop_reason.split(" (")[0]
                out.append(
                    [
                        name,
                        loss,
                        str(depth),
                        label,
                        str(h["trees"][-1]),
                        f"{100 * rise:.3g}",
                        stop,
                        str(model.kept_iteration),
                        f"{losses[-1] / start:.3g}",
                        str(int(h["restarted"].sum())),
                        f"{seconds:.1f}",
                    ]
                )
                print(" | ".join(out[-1]), flush=True)
    return md_table(header, out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--only", choices=["1", "2"], default=None)
    args = parser.parse_args()
    require_optboost()
    started = time.perf_counter()
    notes = [f"rows subsampled (seeded) to at most {args.rows} per data set (adult: 3000 of its 30162)"]
    text = "# Accelerated methods with default parameters\n\n"
    if args.only in (None, "1"):
        text += (
            "## Training loss at 50 and 100 trees, binary sets (logistic loss, defaults)\n\n"
            "Mean logistic training loss of the model with at most that many trees (AGBM and "
            "AGBMR fit two trees per iteration). *@gbm100*: the fewest trees with which the "
            "method's training loss is at or below gbm's (default) at 100 trees (runs of 200 "
            "trees; — = not within 200).\n\n"
        )
        text += table1(args.rows, notes) + "\n"
    if args.only in (None, "2"):
        text += (
            "## Divergence check: up to 1000 trees on every shared data set\n\n"
            "Learning rate 0.1 (default), depth 3 and 6. *max rise*: largest increase of the "
            "training loss over its lowest earlier value, in % of the starting constant's loss "
            "(0 = the loss never rose). Multiclass sets (softmax): 1000 trees are 1000/K "
            "iterations (1000/2K for AGBM and AGBMR).\n\n"
        )
        text += table2(args.rows, notes) + "\n"
    text += how_produced(
        "accelerated_defaults.py",
        SEED,
        f"training rows only (no split); subsample of at most {args.rows} rows",
        "defaults (learning_rate 0.1, rho 1/σ, gamma 0.5, corrected_residual paper, "
        "safeguard restart, min_samples_leaf 10 (1 for least squares), l2_leaf 1) unless the "
        "row says otherwise; "
        "validation_fraction=None (every row trains: these tables measure optimisation; "
        "accelerated_test_loss.py measures the held-out default)",
        started,
        notes, preset=DEFAULTS)
    write_md("accelerated_defaults.md", text)


if __name__ == "__main__":
    main()
