"""Learning curves with matplotlib (an optional extra: ``pip install "optboost[plot]"``).

Documentation: https://optboost.github.io/optboost/api/#plots-and-demo-data
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ._extras import require


COSINE_WINDOW = 10


def pyplot():
    """matplotlib.pyplot, or a MissingDependencyError that says how to get it."""
    return require("matplotlib.pyplot", "plotting")


def plot_history(
    models: Mapping[str, Any],
    path: str | os.PathLike | None = None,
    *,
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
):
    """Loss (train solid, validation dashed) and mean cosine between target and
    fitted tree (a rolling mean over ``COSINE_WINDOW`` iterations) against the
    number of trees, for one or more models; a dot marks the iteration a model
    keeps when it is not the last.

    Models with different losses get one loss panel per loss (their values are
    not comparable). Returns the matplotlib figure; saves it when ``path`` is
    given (format from the suffix, e.g. .png)."""
    plt = pyplot()
    from matplotlib import ticker

    losses = list(dict.fromkeys(model.loss for model in models.values()))
    n_panels = len(losses) + 1
    fig, axes = plt.subplots(1, n_panels, figsize=figsize or (4.6 * n_panels, 3.8), squeeze=False)
    loss_axes = dict(zip(losses, axes[0][:-1]))
    cos_axis = axes[0][-1]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (label, model) in enumerate(models.items()):
        color = colors[index % len(colors)]
        history = model.history
        trees = history["trees"].to_numpy()
        axis = loss_axes[model.loss]
        axis.plot(trees, history["train_loss"].to_numpy(), color=color, label=f"{label} train")
        if history["valid_loss"].null_count() < history.height:
            valid = history["valid_loss"].to_numpy()
            axis.plot(trees, valid, color=color, linestyle="--", label=f"{label} valid")
        cosine = history["cos_mean"].rolling_mean(COSINE_WINDOW, min_samples=1).to_numpy()
        cos_axis.plot(trees, cosine, color=color, label=label, lw=1.0)
        # Mark the iteration the model keeps when it is not the last one.
        kept = model.kept_iteration
        if 0 < kept < history.height:
            row = history.row(kept - 1, named=True)
            loss = row["valid_loss"] if row["valid_loss"] is not None else row["train_loss"]
            axis.axvline(row["trees"], color=color, linestyle=":", lw=0.8)
            # a leading "_" keeps the marker out of the legend
            axis.plot([row["trees"]], [loss], marker="o", color=color, label=f"_{label} kept")
    for loss, axis in loss_axes.items():
        axis.set_title(f"{loss} loss")
        axis.set_xlabel("trees")
        axis.set_ylabel("loss")
        histories = [m.history for m in models.values() if m.loss == loss]
        values = [v for h in histories for v in h["train_loss"]]
        if values and min(values) > 0:
            axis.set_yscale("log")
            # plain numbers (20, 30) rather than 2×10^1 on a range of less than a decade
            axis.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
            axis.yaxis.set_minor_formatter(ticker.FormatStrFormatter("%g"))
        # A curve that rises far above where every model started (a diverging run) leaves
        # the panel instead of squashing the others.
        starts = [
            v
            for h in histories
            for v in (h["train_loss"][0], h["valid_loss"][0])
            if h.height and v is not None and v == v
        ]
        if starts:
            axis.set_ylim(top=1.2 * max(starts))
        axis.legend(fontsize="small")
        axis.grid(alpha=0.3)
    cos_axis.set_title(f"cos(target, tree), mean of {COSINE_WINDOW} iterations")
    cos_axis.set_xlabel("trees")
    cos_axis.set_ylabel("mean cosine of the iteration's trees")
    cos_axis.legend(fontsize="small")
    cos_axis.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
