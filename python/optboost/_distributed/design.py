"""The formula's spec for data spread over workers, built once on the client.

The single-process front end learns three things from the data: which columns are
categorical, their level maps (sorted, or an Enum's order) and the target's classes. Here the
levels and classes are collected on the workers, unioned, and put in a small *prototype*
frame (a few sample rows, every level of every categorical column, every class); the front end
run on that frame gives the spec a single-process fit of all the rows would have. Transforms
that learn numbers from the data (center, scale, poly, bs) would learn them from the prototype
only: they are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ..errors import FormulaError, ParameterError
from ..formula import DesignSpec, _parse, build_design
from ..terms import stateful_keys

# What each partition gives for the spec: the distinct values of each categorical column, and the
# value counts of each target column of a classification (worker.levels' result).
Levels = tuple[dict[str, pl.Series], dict[str, pl.DataFrame]]


# The sample rows of at most this many partitions make the prototype's numeric columns (the
# categorical ones hold every level of every partition whatever this number).
SAMPLE_PARTITIONS = 64


@dataclass
class DistributedDesign:
    """The spec, and the class counts (partitions × classes) of a classification."""

    spec: DesignSpec
    class_counts: np.ndarray | None


def distributed_design(
    formula: str,
    samples: Sequence[pl.DataFrame],
    columns: Sequence[str],
    collect_levels: Callable[[list[str], list[str]], list[Levels]],
    *,
    task: str,
    weights: str | None,
    offset: str | None,
    context: Mapping[str, Any] | None,
    engine: str = "optboost.dask",
) -> DistributedDesign:
    """The spec of ``formula`` over every partition, and the class counts per partition.

    samples: the first rows of each partition; columns: the data's columns;
    collect_levels(level_columns, target_columns): ``worker.levels`` of every partition, in
    partition order, computed where the partitions are; engine: the caller's name in messages.
    """
    samples = [s for s in samples if s.height > 0][:SAMPLE_PARTITIONS]
    sample = _concat(samples, list(columns))
    if offset is not None and offset in sample.columns:
        sample = sample.drop(offset)  # as optboost.boost leaves it out of '.'
    left_out = [offset] if offset is not None else []  # '- offset' is then a no-op
    target_columns = _target_columns(formula, sample, weights, task, left_out, engine)
    # The spec depends on the target's and the weights' values only through the classes: they
    # are 1.0 here (bad values are found on the workers, which name the partition). A first
    # spec from the sample tells which columns are categorical.
    plain = [*target_columns, *([weights] if weights in sample.columns else [])]
    numeric_targets = sample.with_columns(pl.lit(1.0).alias(c) for c in plain)
    sketch = build_design(
        formula,
        numeric_targets,
        task="regression",
        weights=weights,
        context=context,
        left_out=left_out,
    ).spec
    _refuse_learnt_state(formula, sketch, engine)
    level_columns = sorted(
        {f.source_columns[0] for f in sketch.features if f.kind == "categorical"}
        | {
            column
            for term in sketch.terms
            for factor, levels in zip(term.parsed, term.levels)
            if levels is not None
            for column in factor.columns
        }
    )
    classes = list(target_columns) if task != "regression" else []
    collected = collect_levels(level_columns, classes)
    unions = {name: _union([c[0][name] for c in collected]) for name in level_columns}
    target_counts = None
    if classes:
        name = classes[0]
        target_counts = [c[1][name] for c in collected]
        unions[name] = _union([counts.get_column(name) for counts in target_counts]).drop_nulls()
    prototype = _prototype(numeric_targets, unions)
    spec = build_design(
        formula, prototype, task=task, weights=weights, context=context, left_out=left_out
    ).spec
    class_counts = None
    if target_counts is not None:
        k = spec.target_encoding.n_classes
        class_counts = np.zeros((len(target_counts), k))
        for i, counts in enumerate(target_counts):
            codes = spec.target_encoding.encode(counts.get_column(classes[0])).astype(np.intp)
            class_counts[i] = np.bincount(
                codes, weights=counts.get_column("count").to_numpy(), minlength=k
            )
    return DistributedDesign(spec, class_counts)


def _target_columns(
    formula: str,
    sample: pl.DataFrame,
    weights: str | None,
    task: str,
    left_out: list[str],
    engine: str,
) -> tuple[str, ...]:
    target, target_factor, _ = _parse(formula, sample, weights, left_out)
    if isinstance(target, tuple):
        return target
    if target_factor is None:
        return (target,)
    if task != "regression":
        raise FormulaError(
            f"formula {formula!r}: {engine} takes the classes of a classification from a "
            f"column, not from an expression ({target!r}); add the column to the data first"
        )
    return tuple(target_factor.columns)


def _refuse_learnt_state(formula: str, spec: DesignSpec, engine: str) -> None:
    learning = [
        factor.text
        for term in spec.terms
        for factor in term.parsed
        if stateful_keys(factor)
    ]
    if learning:
        raise ParameterError(
            f"formula {formula!r}: {learning} learn(s) numbers from the data (center, scale, "
            f"poly, bs), which {engine} cannot learn across partitions exactly; compute "
            "the column before the fit (with the engine's own operations) or use poly(..., "
            "raw=True)"
        )


def _union(parts: Sequence[pl.Series]) -> pl.Series:
    """The distinct values of several partitions' series, first seen first. Partitions whose
    categoricals differ (a pandas categorical's categories per partition) are unioned as text,
    as pandas' concat of them would give; a column of nulls only brings no dtype."""
    typed = [s for s in parts if s.dtype != pl.Null]
    if not typed:
        return parts[0]
    if len({s.dtype for s in typed}) > 1:
        typed = [s.cast(pl.String) for s in typed]
    return pl.concat(typed).unique(maintain_order=True)


def _concat(frames: Sequence[pl.DataFrame], columns: Sequence[str]) -> pl.DataFrame:
    """The sample rows of every partition in one frame, with ``_union``'s dtypes."""
    frames = [frame.select(columns) for frame in frames]
    for name in columns:
        dtypes = {frame.schema[name] for frame in frames if frame.schema[name] != pl.Null}
        if len(dtypes) > 1:
            frames = [frame.with_columns(pl.col(name).cast(pl.String)) for frame in frames]
    return pl.concat(frames, how="vertical_relaxed")


def _prototype(sample: pl.DataFrame, unions: Mapping[str, pl.Series]) -> pl.DataFrame:
    """The sample's columns, each categorical one holding every level seen on any worker,
    every column repeated to one height."""
    columns = {
        name: unions[name].alias(name) if name in unions else sample.get_column(name)
        for name in sample.columns
    }
    height = max(len(series) for series in columns.values())
    return pl.DataFrame([_repeated(series, height) for series in columns.values()])


def _repeated(series: pl.Series, height: int) -> pl.Series:
    if len(series) == 0:
        return pl.Series(series.name, [None] * height, dtype=series.dtype)
    return series.gather(np.arange(height) % len(series))
