"""A model described for people: its one-line ``repr``, its ``summary`` and the gain importance
table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from . import _core
from .design_spec import DesignSpec
from .fitted import FittedModel


def kept_text(
    kept: int, n_iter: int, stop: tuple[str, str] | None, history: Mapping[str, list]
) -> str:
    """Which iteration the model keeps, and why."""
    if kept == n_iter:
        return f"keeps the last iteration ({kept})"
    if kept == 0:
        return "keeps the initial constant (iteration 0, no trees)"
    why = {
        "early_stopping": "best validation loss",
        "diverged": "best before divergence",
        "worker_lost": "the last iteration before a worker was lost",
    }.get(stop[0] if stop else None)
    if why is None:
        valid = [v for v in history["valid_loss"] if v is not None]
        why = "best validation loss" if valid else "best training loss"
    return f"keeps iteration {kept} of {n_iter} ({why})"


def _kept_text(model: FittedModel) -> str:
    return kept_text(model.kept_iteration, model.n_iter, model._stop, model._history)


def _at_kept(model: FittedModel, column: str) -> str:
    kept = model.kept_iteration
    values = model._history[column]
    if kept == 0 and model.n_iter:
        return "of the initial constant (not recorded)"
    if kept == model.n_iter or not 0 < kept <= len(values) or values[kept - 1] is None:
        return _last(model, column)
    return f"{values[kept - 1]:.5g}"


def _last(model: FittedModel, column: str) -> str:
    values = [v for v in model._history[column] if v is not None]
    return f"{values[-1]:.5g}" if values else "-"


def model_repr(model: FittedModel) -> str:
    # The losses of the model returned, not of the last iteration trained.
    losses = f"train loss {_at_kept(model, 'train_loss')}"
    valid = _at_kept(model, "valid_loss")
    if valid != "-":
        losses += f", valid loss {valid}"
    return (
        f"<optboost.Model {model.method}/{model.loss} {model.formula!r}: "
        f"{model.n_iter} iterations, {_kept_text(model)}, {model.n_trees} trees, {losses}>"
    )


def model_summary(model: FittedModel) -> str:
    """A readable description: formula, method, target, stopping, losses, features and the most
    important columns."""
    spec = model.spec
    lines = [f"optboost model  {model.formula}"]
    target = f"target {spec.target!r} ({model.task}"
    if model.task == "binary":
        target += f"; positive class {model.positive_class!r}"
    elif model.task == "multiclass":
        target += f"; {len(model.classes)} classes"
    lines.append(f"  method {model.method}, loss {model.loss}, {target})")
    if getattr(model, "loss_note", None):
        lines.append(f"  loss chosen from the target (no loss given): {model.loss_note}")
    if getattr(model, "cv", None) is not None:
        lines.append(
            f"  iterations chosen by {len(model.cv.folds)}-fold cross-validation "
            f"(cv.folds): {model.cv.best_iteration}"
        )
    lines.append(f"  {model.n_iter} iterations, {model.n_trees} trees; {model.stop_reason}")
    lines.append(f"  the model {_kept_text(model)}")
    if model.n_iter:
        first = model._history["train_loss"][0]
        kept = model.kept_iteration
        if 0 < kept < model.n_iter:
            lines.append(
                f"  train loss {_at_kept(model, 'train_loss')} at the kept iteration {kept} "
                f"(after iteration 1: {first:.5g}; after the last, {model.n_iter}: "
                f"{_last(model, 'train_loss')})"
            )
        else:
            lines.append(
                f"  train loss {_last(model, 'train_loss')} (after iteration 1: {first:.5g})"
            )
        restarts = sum(bool(r) for r in model._history.get("restarted") or [])
        if restarts:
            lines.append(
                f"  safeguard: {restarts} iterations undone (training or validation loss rose), "
                "momentum restarted"
            )
        if _last(model, "valid_loss") != "-":
            valid = [v for v in model._history["valid_loss"] if v is not None]
            best = int(np.argmin(valid)) + 1
            lines.append(
                f"  valid loss {_last(model, 'valid_loss')} (best {min(valid):.5g} "
                f"at iteration {best})"
            )
    lines.append(f"  {len(model.feature_names)} features from {len(spec.input_columns)} columns")
    importance = model.feature_importance().head(5)
    if model.n_trees and importance["importance"].sum() > 0:
        top = ", ".join(
            f"{c} {s:.0%}" for c, s in zip(importance["column"], importance["share"])
        )
        lines.append(f"  top columns by gain: {top}")
    preset = model.params.get("preset", "none")
    if preset != "none":
        made = _core.resolve_params(list(model.params.items()))["preset_settings"]
        lines.append(
            f"  preset {preset} set: " + (", ".join(f"{k}={v}" for k, v in made) or "nothing")
        )
    shown = {k: v for k, v in model.params.items() if k not in ("method", "loss")}
    lines.append("  parameters: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
    return "\n".join(lines)


def gain_importance(
    names: Sequence[str],
    gain: Sequence[float],
    splits: Sequence[int],
    spec: DesignSpec,
    by: str,
) -> pl.DataFrame:
    """Total split gain per feature (by="feature") or per data column (by="column": a feature
    built from several columns shares its gain equally among them), as the other kinds of
    importance name it: ``column`` (or ``feature``), ``importance``, ``share``, then the number
    of ``splits`` (a feature's count for each of its columns); largest first."""
    if by == "feature":
        labels, values, counts = list(names), list(gain), list(splits)
    else:
        sources = spec.source_columns
        totals: dict[str, list] = {c: [0.0, 0] for c in spec.input_columns}
        for name, g, s in zip(names, gain, splits):
            columns = sources.get(name) or (name,)
            for column in columns:
                entry = totals.setdefault(column, [0.0, 0])
                entry[0] += g / len(columns)
                entry[1] += s
        labels = list(totals)
        values = [v[0] for v in totals.values()]
        counts = [v[1] for v in totals.values()]
    table = pl.DataFrame(
        {by: labels, "importance": values, "splits": counts},
        schema={by: pl.String, "importance": pl.Float64, "splits": pl.Int64},
    )
    total = table["importance"].sum()
    share = table["importance"] / total if total > 0 else table["importance"] * 0.0
    return table.select(by, "importance", share.alias("share"), "splits").sort(
        "importance", descending=True, maintain_order=True
    )
