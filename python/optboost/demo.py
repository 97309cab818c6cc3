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


# Equal budgets of about 300 trees: AGBM fits two trees per iteration.
CONTESTANTS = (
    Contestant("gbm", "gbm", "squared", 300),
    Contestant("rgbm", "rgbm", "squared", 300, {"selection": "groups", "t": 3}),
    Contestant("agbm", "agbm", "squared", 150, {"gamma": 0.5}),
    Contestant("gbm (absolute)", "gbm", "absolute", 300),
    Contestant("proximal", "proximal", "absolute", 300, {"lambda": 1.0}),
    Contestant("accelerated_proximal", "accelerated_proximal", "absolute", 300, {"lambda": 1.0}),
    Contestant("residual_proximal", "residual_proximal", "absolute", 300, {"lambda": 1.0}),
)


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
    print(
        f"optboost demo: synthetic regression, {train.height} training and {test.height} test "
        f"rows, heavy-tailed noise (seed {SEED})\nformula: {FORMULA}\n",
        file=out,
    )
    results, skipped = [], []
    y_test, signal_test = test["y"].to_numpy(), test["signal"].to_numpy()
    for contestant in CONTESTANTS:
        started = time.perf_counter()
        try:
            model = boost(
                FORMULA,
                train,
                method=contestant.method,
                loss=contestant.loss,
                n_iter=contestant.n_iter,
                learning_rate=0.1,
                valid=test,
                max_depth=3,
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
        "\ntrain/test loss: each model's own loss (not comparable across losses). "
        "test MAE: against the noisy test targets; RMSE vs truth: against the noise-free "
        "signal (lower is better; outliers pull squared-loss fits away from it).",
        file=out,
    )
    if plot and results:
        save_plot(results, Path(output_dir) / "optboost-demo.png", out)
    return results


def format_table(results: list[Result]) -> str:
    header = (
        "method",
        "loss",
        "trees",
        "train loss",
        "test loss",
        "test MAE",
        "RMSE vs truth",
        "seconds",
    )
    rows = [
        (
            r.contestant.label,
            r.contestant.loss,
            str(r.model.n_trees),
            f"{r.model.history['train_loss'][-1]:.4f}",
            f"{r.model.history['valid_loss'][-1]:.4f}",
            f"{r.mae:.4f}",
            f"{r.signal_rmse:.4f}",
            f"{r.seconds:.2f}",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = zip(row, widths)
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(cells))

    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *map(line, rows)])


def save_plot(results: list[Result], path: Path, out: TextIO) -> None:
    try:
        from .plot import plot_history, pyplot
    except ImportError:  # pragma: no cover - plot.py itself has no hard imports
        return
    try:
        plt = pyplot()
    except ImportError as error:
        print(f"no plot: {error}", file=out)
        return
    figure = plot_history(
        {r.contestant.label: r.model for r in results},
        path=path,
        title="optboost demo: learning curves (dashed: test)",
    )
    plt.close(figure)
    print(f"learning curves saved to {path}", file=out)
