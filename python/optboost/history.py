"""A model's training history: its columns (the core's per-iteration record, then the
requested metrics) and the frame ``Model.history`` shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from . import _core

_DTYPES = {"int64": pl.Int64, "float64": pl.Float64, "bool": pl.Boolean}
HISTORY_SCHEMA = {name: _DTYPES[kind] for name, kind in _core.HISTORY_SCHEMA}
# The columns of `Model.history` ("restarted" is shown through warnings and the plot instead).
HISTORY_COLUMNS = tuple(name for name in HISTORY_SCHEMA if name != "restarted")


def metric_columns(params: Mapping[str, str]) -> list[str]:
    """The history columns of the ``metrics`` parameter: train_<name> and
    valid_<name> for each metric, in order."""
    names = [name.strip() for name in str(params.get("metrics", "")).split(",") if name.strip()]
    return [f"{side}_{name}" for name in names for side in ("train", "valid")]


def history_frame(
    history: Mapping[str, list], metrics: Sequence[str], kept: int
) -> pl.DataFrame:
    """One row per iteration: the core's columns, ``restarted``, ``kept`` (whether it is the
    iteration ``kept``), then each of the ``metrics`` columns (nulls where not recorded)."""
    columns = {name: history[name] for name in HISTORY_COLUMNS}
    n = len(columns["iteration"])
    restarted = list(history.get("restarted") or [])
    columns["restarted"] = restarted if len(restarted) == n else [False] * n
    columns["kept"] = [i == kept for i in columns["iteration"]]
    for name in metrics:
        values = list(history.get(name) or [])
        columns[name] = values if len(values) == n else [None] * n
    schema = {**HISTORY_SCHEMA, "kept": pl.Boolean, **{name: pl.Float64 for name in metrics}}
    return pl.DataFrame(columns, schema=schema)
