"""``optboost demo``: several boosting methods on one synthetic data set,
compared in a table (and a learning-curve plot when matplotlib is there).

The data are generated here with a fixed seed (nothing is downloaded): a
Friedman-style regression with two categorical columns, missing values and
heavy-tailed noise, where the absolute loss (fitted by proximal boosting) is
robust to the outliers that pull the squared loss around.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import polars as pl

from .api import boost
from .errors import ParameterError
from .model import Model

SEED = 20240601
FORMULA = "y ~ x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + region + segment"


def make_demo_data(
    n_train: int = 20_000, n_test: int = 5_000, seed: int = SEED
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Train and test frames: y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4
    + 5 x5 + region and segment effects + Student-t(2) noise; x6..x8 are noise
    features; 3% of x1 and x6 are missing. Column ``signal`` holds the
    noise-free truth (not a feature)."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    x = rng.uniform(size=(n, 8))
    regions = np.array(["north", "south", "east", "west", "centre"])
    region = rng.integers(0, len(regions), size=n)
    segments = np.array(["retail", "business", "public"])
    segment = rng.integers(0, len(segments), size=n)
    signal = (
        10 * np.sin(np.pi * x[:, 0] * x[:, 1])
        + 20 * (x[:, 2] - 0.5) ** 2
        + 10 * x[:, 3]
        + 5 * x[:, 4]
        + np.array([0.0, 2.0, -1.0, 1.0, 3.0])[region]
        + np.array([0.0, 1.5, -1.5])[segment] * x[:, 3]
    )
    y = signal + 1.5 * rng.standard_t(df=2, size=n)
    for column in (0, 5):
        x[rng.uniform(size=n) < 0.03, column] = np.nan
    frame = pl.DataFrame(
        {f"x{j + 1}": x[:, j] for j in range(8)}
        | {"region": regions[region], "segment": segments[segment], "y": y, "signal": signal}
    ).with_columns(pl.col("x1", "x6").fill_nan(None))
    return frame.head(n_train), frame.tail(n_test)


@dataclass
class Contestant:
    label: str
    method: str
    loss: str
    n_iter: int
    params: dict[str, Any] = field(default_factory=dict)


# Budgets of 300 trees (AGBM fits two per iteration), shrinkage 0.1, depth 3,
# and early stopping on a validation split (the kept best iterate is what a user
# would use). agbmr runs its fixed restart schedule (Lu et al., Alg. 3, option 1):
# its adaptive rule restarts the momentum when the loss rises, the very event on
# which agbm's default safeguard restarts it, so the two would coincide.
CONTESTANTS = (
    Contestant("gbm", "gbm", "squared", 300),
    Contestant("rgbm", "rgbm", "squared", 300, {"selection": "groups", "t": 3}),
    Contestant("agbm", "agbm", "squared", 150, {"gamma": 0.5}),
    Contestant("agbmr (fixed)", "agbmr", "squared", 150, {"gamma": 0.5, "restart": "fixed"}),
    Contestant("gbm (absolute)", "gbm", "absolute", 300),
    Contestant("proximal", "proximal", "absolute", 300, {"lambda": 1.0}),
    Contestant("residual_proximal", "residual_proximal", "absolute", 300, {"lambda": 1.0}),
    Contestant("accelerated_proximal", "accelerated_proximal", "absolute", 300, {"lambda": 1.0}),
)
LEARNING_RATE = 0.1
MAX_DEPTH = 3
EARLY_STOPPING_ROUNDS = 30


@dataclass
class Result:
    contestant: Contestant
    model: Model
    seconds: float
    mae: float
    signal_rmse: float


def run_demo(
    out: TextIO,
    *,
    output_dir: str | os.PathLike = ".",
    plot: bool = True,
    n_train: int = 20_000,
    n_test: int = 5_000,
    n_threads: int = 0,
) -> list[Result]:
    """Fit every contestant, print the comparison, save the plot; returns the results."""
    train, test = make_demo_data(n_train, n_test)
    n_fit = train.height * 4 // 5
    fit, valid = train.head(n_fit), train.tail(train.height - n_fit)
    print(
        f"optboost demo: synthetic regression with heavy-tailed noise (seed {SEED}): "
        f"{fit.height} training, {valid.height} validation (early stopping after "
        f"{EARLY_STOPPING_ROUNDS} rounds) and {test.height} test rows\n"
        f"formula: {FORMULA}\n"
        f"learning rate {LEARNING_RATE}, depth {MAX_DEPTH}, up to 300 trees\n",
        file=out,
    )
    results, skipped = [], []
    y_test, signal_test = test["y"].to_numpy(), test["signal"].to_numpy()
    for contestant in CONTESTANTS:
        started = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # divergence shows in the table
                model = boost(
                    FORMULA,
                    fit,
                    method=contestant.method,
                    loss=contestant.loss,
                    n_iter=contestant.n_iter,
                    learning_rate=LEARNING_RATE,
                    max_depth=MAX_DEPTH,
                    valid=valid,
                    early_stopping_rounds=EARLY_STOPPING_ROUNDS,
                    n_threads=n_threads,
                    progress=False,
                    **contestant.params,
                )
        except ParameterError as error:
            skipped.append((contestant, str(error)))
            continue
        seconds = time.perf_counter() - started
        predictions = model.predict(test)
        results.append(
            Result(
                contestant,
                model,
                seconds,
                mae=float(np.mean(np.abs(predictions - y_test))),
                signal_rmse=float(np.sqrt(np.mean((predictions - signal_test) ** 2))),
            )
        )
    print(format_table(results), file=out)
    for contestant, reason in skipped:
        print(
            f"skipped {contestant.label} ({contestant.method}, {contestant.loss}): {reason}",
            file=out,
        )
    print(
        "\ntrees: in the kept model. train/valid loss: each model's own loss at the kept "
        "iteration (comparable only between rows with the same loss). test MAE: against the "
        "noisy test targets; RMSE vs truth: against the noise-free signal (lower is better; "
        "outliers pull squared-loss fits away from it).",
        file=out,
    )
    if plot and results:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        save_plot(results, Path(output_dir) / "optboost-demo.png", out)
    return results


def _kept_row(model: Model) -> dict[str, Any] | None:
    """The history record of the iteration the model kept (None: the initial constant)."""
    history = model.history
    if history.height == 0:
        return None
    kept = model.best_iteration if model.best_iteration is not None else history.height
    return history.row(kept - 1, named=True) if kept >= 1 else None


def _stop_note(model: Model) -> str:
    reason = model.stop_reason
    if reason.startswith("early stopping"):
        return f"early stop ({model.n_iter} it.)"
    if reason.startswith("diverged"):
        return f"diverged at {model.n_iter}"
    if reason.startswith("completed"):
        return "completed"
    return reason


def format_table(results: list[Result]) -> str:
    header = (
        "method",
        "loss",
        "trees",
        "train loss",
        "valid loss",
        "test MAE",
        "RMSE vs truth",
        "stopped",
        "seconds",
    )
    rows = []
    for r in results:
        kept = _kept_row(r.model)
        rows.append(
            (
                r.contestant.label,
                r.contestant.loss,
                str(r.model.n_trees),
                "-" if kept is None else f"{kept['train_loss']:.4f}",
                "-" if kept is None else f"{kept['valid_loss']:.4f}",
                f"{r.mae:.4f}",
                f"{r.signal_rmse:.4f}",
                _stop_note(r.model),
                f"{r.seconds:.2f}",
            )
        )
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = enumerate(zip(row, widths))
        return "  ".join(c.ljust(w) if i in (0, 1, 7) else c.rjust(w) for i, (c, w) in cells)

    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *map(line, rows)])


def save_plot(results: list[Result], path: Path, out: TextIO) -> None:
    from .plot import plot_history, pyplot

    try:
        plt = pyplot()
    except ImportError:
        print(
            f"no picture of the learning curves ({path.name}): it needs matplotlib, "
            'pip install "optboost[plot]"',
            file=out,
        )
        return
    figure = plot_history(
        {r.contestant.label: r.model for r in results},
        path=path,
        title="optboost demo: learning curves (dashed: validation; dot: the iteration a model keeps)",
    )
    plt.close(figure)
    print(f"learning curves saved to {path}", file=out)
