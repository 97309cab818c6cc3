"""What runs where the rows are (Dask workers, Spark executors): reading and checking
partitions, collecting their levels, building one rank's core inputs from its partitions, and
training the rank.

Every function here runs as a task (module-level, so that workers import it by name) and sees
only the partitions of its own rank. Exceptions are optboost errors that name the partition
or file, so that the client can re-raise them as they are.
"""

from __future__ import annotations

import secrets
import socket
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ..fitting import flat_targets
from ..class_weights import class_weight_values
from ..errors import DataError, OptboostError
from ..formula import DesignSpec, FeatureColumn, per_column
from ..frames import to_polars
from ..holdout import GlobalHoldout, held_roles
from ..model import Model
from ..offsets import offset_values

# Rows of each partition sent to the client to build the formula's spec from (with every
# level of every categorical column, collected separately).
SAMPLE_ROWS = 8


def read_parquet(path: str) -> pl.DataFrame:
    """One Parquet file, read on the worker that will train on it."""
    try:
        return pl.read_parquet(path)
    except Exception as error:  # polars raises its own types for unreadable files
        raise DataError(
            f"cannot read Parquet file {path!r}: {type(error).__name__}: {str(error)[:300]}"
        ) from None


def checked_partition(part: Any, label: str, declared: Mapping[str, str]) -> pl.DataFrame:
    """A pandas partition of a dask DataFrame as a polars frame, after checking that it has the
    columns and dtypes the dask frame declares (``ddf.dtypes``; a partition built by a
    function of the user's may not)."""
    columns = [str(name) for name in getattr(part, "columns", [])]
    if not hasattr(part, "dtypes"):
        raise DataError(f"{label} is a {type(part).__name__}, not a pandas DataFrame")
    missing = [name for name in declared if name not in columns]
    if missing:
        raise DataError(
            f"{label} has no column {missing[0]!r}"
            + (f" (nor {missing[1:10]})" if len(missing) > 1 else "")
            + f"; its columns: {columns[:30]}"
        )
    extra = [name for name in columns if name not in declared]
    if extra:
        raise DataError(f"{label} has column(s) {extra[:10]} that the dask frame does not declare")
    for name, dtype in part.dtypes.items():
        # A categorical's dtype reads "category" whatever its categories, which may differ
        # between partitions (dask's "unknown" categories): the level union takes care of them.
        actual, expected = str(dtype), declared[str(name)]
        if actual != expected:
            raise DataError(
                f"{label}: column {str(name)!r} has dtype {actual}; the dask frame declares "
                f"{expected}"
            )
    return to_polars(part)


def survey(frame: pl.DataFrame) -> tuple[int, list[tuple[str, str]], pl.DataFrame]:
    """A partition's row count, schema (name, dtype text) and first rows."""
    schema = [(name, str(dtype)) for name, dtype in frame.schema.items()]
    return frame.height, schema, frame.head(SAMPLE_ROWS)


def levels(
    frame: pl.DataFrame, level_columns: Sequence[str], target_columns: Sequence[str]
) -> tuple[dict[str, pl.Series], dict[str, pl.DataFrame]]:
    """The distinct values of each categorical column, and the value counts of each target
    column of a classification (its classes)."""
    distinct = {}
    for name in level_columns:
        series = frame.get_column(name)
        if isinstance(series.dtype, pl.Categorical):
            series = series.cast(pl.String)
        distinct[name] = series.unique(maintain_order=True)
    counts = {
        name: frame.get_column(name).value_counts(name="count", sort=False)
        for name in target_columns
    }
    return distinct, counts


@dataclass
class RankInputs:
    """One worker's rows in the core's terms (the arguments of ``_core.Booster``), kept on the
    worker between the preparation of every rank and the start of training."""

    features: list
    y: np.ndarray
    weights: np.ndarray | None
    valid: tuple[Any, Any, Any]
    offsets: tuple[Any, Any]
    row_roles: np.ndarray | None
    rows: list[tuple[int, int]]  # (global start, count) of each partition's training rows
    warnings: list[str]


@dataclass(frozen=True)
class RankPlan:
    """What every rank needs to turn its partitions into core inputs (sent to each worker)."""

    spec: dict[str, Any]  # DesignSpec.to_dict(): plain values
    context: Mapping[str, Any] | None
    weights_column: str | None
    offset_column: str | None
    n_outputs: int  # offset columns per row
    class_weight: Mapping[Any, float] | None  # by class label (balanced: from global counts)
    fraction: float | None  # held out of all the training rows
    seed: int
    stratify: bool
    # Rows per partition (partitions × 1), or per partition and class code when stratified.
    group_counts: list[list[int]]
    # The global index, among the training rows of all partitions, of each partition's first.
    train_starts: list[int]

    def holdout(self) -> GlobalHoldout | None:
        if self.fraction is None:
            return None
        return GlobalHoldout(self.group_counts, self.fraction, self.seed, self.stratify)

    def design(self) -> DesignSpec:
        return DesignSpec.from_dict(self.spec, self.context)


def prepare_rank(
    plan: RankPlan,
    indices: Sequence[int],
    labels: Sequence[str],
    frames: Sequence[pl.DataFrame],
    valid_frames: Sequence[pl.DataFrame],
    valid_labels: Sequence[str],
) -> RankInputs:
    """The core inputs of one worker's partitions (``indices``: their positions in the data,
    which place their rows among all the rows; ``labels``: their names in messages), in
    partition order."""
    spec = plan.design()
    holdout = plan.holdout()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parts = [
            _partition_inputs(plan, spec, frame, index, label, holdout)
            for index, label, frame in zip(indices, labels, frames)
            if frame.height > 0
        ]
        valid_parts = [
            _partition_inputs(plan, spec, frame, None, label, None)
            for label, frame in zip(valid_labels, valid_frames)
            if frame.height > 0
        ]
    features, y, weights, offset, held = _joined(parts)
    valid: tuple[Any, Any, Any] = (None, None, None)
    offsets: tuple[Any, Any] = (offset, None)
    if valid_parts:
        valid_features, valid_y, valid_weights, valid_offset, _ = _joined(valid_parts)
        valid = (valid_features, valid_y, valid_weights)
        offsets = (offset, valid_offset)
    roles = None if held is None else held_roles(held)
    # Where this rank's training rows are among all of them: the core draws the binning sample
    # by global row index, as one process does on the concatenated partitions.
    rows = [
        (plan.train_starts[index], len(part[1]) - (0 if part[4] is None else int(part[4].sum())))
        for index, part in zip([i for i, f in zip(indices, frames) if f.height > 0], parts)
    ]
    y, valid = flat_targets(spec, y, valid)
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    return RankInputs(features, y, weights, valid, offsets, roles, rows, messages)


def _partition_inputs(
    plan: RankPlan,
    spec: DesignSpec,
    frame: pl.DataFrame,
    index: int | None,
    label: str,
    holdout: GlobalHoldout | None,
) -> tuple[list[FeatureColumn], np.ndarray, Any, Any, Any]:
    try:
        features = per_column(spec.columns(frame))
        y = spec.target_values(frame)
        weights = spec.weight_values(frame) if plan.weights_column is not None else None
        offset = (
            offset_values(plan.offset_column, frame, frame.height, plan.n_outputs)
            if plan.offset_column is not None
            else None
        )
    except OptboostError as error:
        raise type(error)(f"{label}: {error}") from None
    if plan.class_weight is not None and index is not None:
        by_class = class_weight_values(plan.class_weight, y, spec.target_encoding.labels)
        weights = by_class if weights is None else weights * by_class
    held = None
    if holdout is not None and index is not None:
        # Drawn over all the rows in data order: the rows one process holds out of the
        # concatenated partitions, whichever worker holds this one.
        held = holdout.held(index, y, label)
    return features, y, weights, offset, held


def _joined(parts: list) -> tuple[list[FeatureColumn], np.ndarray, Any, Any, Any]:
    """The partitions' inputs one after the other (one copy of the feature values)."""
    if not parts:
        raise DataError("a worker given partitions with no rows was asked to train")
    first = parts[0][0]
    features = [
        FeatureColumn(
            column.name,
            np.concatenate([part[0][j].values for part in parts]),
            column.kind,
            column.n_levels,
        )
        for j, column in enumerate(first)
    ]

    def joined(position: int) -> np.ndarray | None:
        values = [part[position] for part in parts]
        return None if values[0] is None else np.concatenate(values)

    return features, joined(1), joined(2), joined(3), joined(4)


class JobSecret:
    """The random bytes every rank of one fit proves it holds when it joins the core's TCP star
    (the bytes never cross the network; docs/algorithms.md §12). They travel to the workers only
    inside the training tasks' arguments: never in a task key, and never in this object's text,
    which Dask writes into its logs when a task fails."""

    __slots__ = ("_value",)
    SIZE = 32

    def __init__(self, value: bytes):
        self._value = bytes(value)

    @classmethod
    def generate(cls) -> JobSecret:
        return cls(secrets.token_bytes(cls.SIZE))

    def reveal(self) -> bytes:
        return self._value

    def __repr__(self) -> str:
        return "JobSecret(<hidden>)"

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (JobSecret, (self._value,))


def train_rank(
    inputs: RankInputs,
    plan: RankPlan,
    pairs: list,
    n_iter: int,
    distributed: tuple[int, int, str, JobSecret, float],
) -> dict[str, Any]:
    """Train this worker's rank of one fit: the same booster on every rank, its reductions over
    the core's TCP star (``distributed``: rank, world, the root's address, the job's secret,
    timeout). Returns the model's pickled form, how training ended and the warnings to
    show; a failed collective (a worker lost) gives the model of the last finished iteration
    with the core's message."""
    from ..plan import new_booster

    spec = plan.design()
    rank, world, root, secret, timeout = distributed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        booster = new_booster(
            pairs,
            inputs.features,
            inputs.y,
            inputs.weights,
            valid=inputs.valid,
            offsets=inputs.offsets,
            row_roles=inputs.row_roles,
            distributed=(rank, world, root, secret.reveal(), timeout, inputs.rows),
        )
        model = Model._from_booster(booster, spec, dict(pairs))
        error = None
        try:
            model._train(int(n_iter), False, None)
        except OptboostError as failure:  # the model holds the last finished iteration
            error = str(failure)
    return {
        "model": model.__getstate__(),
        "error": error,
        "iteration": booster.iteration,
        "traffic": dict(booster.traffic()),  # this rank's bytes and messages over the star
        "warnings": inputs.warnings + list(dict.fromkeys(str(w.message) for w in caught)),
    }


def free_port() -> int:
    """A TCP port free on this worker now, for the root of the fit's star to bind."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]
