"""The validation part a fit holds out of its training rows (``validation_fraction``).

The momentum methods reach gbm's training loss in well under half the trees (their purpose),
so at a fixed number of iterations they go on to fit noise, and their training loss, which
keeps falling, cannot say when. With ``validation_fraction="auto"`` (the default) a momentum
method given no validation data holds out a tenth of the rows and keeps the iterate of lowest
loss on them (docs/algorithms.md, "Which iterate a momentum method keeps").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from .errors import DataError, ParameterError

# What each row of a fit's features is for, as the core's ``row_roles`` reads it: both sides
# read the features in place at their rows, and the core takes y, weights and offsets (given
# for every row) row by row, so that holding rows out copies nothing in Python.
TRAINS, VALIDATES, LEFT_OUT = _core.ROW_ROLES

AUTO_FRACTION = 0.1
# Below this many held-out rows the selected iteration is mostly noise: "auto" then trains on
# every row (and keeps the best iterate by training loss, as with validation_fraction=None).
MIN_AUTO_HELD = 10


def resolve_fraction(
    fraction: Any, method: str, n_rows: int, preset: str | None = None
) -> float | None:
    """The fraction to hold out, or None for none; checks the value. "auto" holds out none under
    ``preset="paper"``: the papers train on every row."""
    if fraction is None:
        return None
    if isinstance(fraction, str):
        if fraction != "auto":
            raise ParameterError(
                f'validation_fraction must be "auto", None or a number in (0, 1), got {fraction!r}'
            )
        if preset == "paper":
            return None
        if not _has_momentum(method) or round(AUTO_FRACTION * n_rows) < MIN_AUTO_HELD:
            return None
        return AUTO_FRACTION
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise ParameterError(
            f'validation_fraction must be "auto", None or a number in (0, 1), got {fraction!r}'
        )
    return float(fraction)


def _has_momentum(method: str) -> bool:
    """Whether the core says `method` has momentum; False for a name it does not know, which
    the parameter checks then report."""
    return method in _core.method_names() and _core.method_info(method)["momentum"]


def held_roles(held: np.ndarray) -> np.ndarray:
    """The row roles of a held-out mask: the held rows validate, the others train."""
    return np.where(held, VALIDATES, TRAINS).astype(np.uint8)


def held_rows(y: np.ndarray, fraction: float, seed: int, stratify: bool) -> np.ndarray:
    """A boolean mask of the rows to hold out: `fraction` of them at random (seeded), of every
    class when `stratify` (y holds class codes), so that each class trains and validates."""
    held = np.zeros(len(y), dtype=bool)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else [np.arange(len(y))]
    for rows, picked in zip(groups, picked_rows([len(rows) for rows in groups], fraction, seed)):
        held[rows[picked]] = True
    check_held(int(held.sum()), len(y), fraction)
    return held


def check_held(n_held: int, n_rows: int, fraction: float) -> None:
    if n_held in (0, n_rows):
        raise DataError(
            f"validation_fraction={fraction} of {n_rows} rows leaves no rows to "
            "train or to validate on"
        )


def picked_rows(sizes: Sequence[int], fraction: float, seed: int) -> list[np.ndarray]:
    """For each group of rows (a class, or all the rows), of `sizes[g]` rows in row order, which
    of them are held out: round(fraction · size) at random, the groups drawn one after the other
    from one generator seeded by `seed` (a group of no rows draws nothing)."""
    rng = np.random.default_rng(seed)
    picks = []
    for size in sizes:
        picked = np.zeros(int(size), dtype=bool)
        if size > 0:
            picked[rng.permutation(int(size))[: int(round(fraction * size))]] = True
        picks.append(picked)
    return picks


class GlobalHoldout:
    """``held_rows`` of several partitions' rows one after the other, each partition's part
    taken apart: a distributed fit holds out the very rows one process holds out of the
    concatenated partitions (same seed). ``counts[p, g]``: the rows of group g (class code g when
    stratified, else the one group of all rows) in partition p, partitions in data order. Holds
    one flag per row of the data (drawn where it is used: on each worker)."""

    def __init__(self, counts: Any, fraction: float, seed: int, stratify: bool):
        self.counts = np.asarray(counts, dtype=np.int64).reshape(len(counts), -1)
        self.stratify = stratify
        self.picks = picked_rows(self.counts.sum(axis=0), fraction, seed)
        self.starts = np.cumsum(self.counts, axis=0) - self.counts

    def held(self, partition: int, y: np.ndarray, label: str) -> np.ndarray:
        """The held-out mask of one partition's rows (`y`: its targets, class codes when
        stratified)."""
        p = partition
        if not self.stratify:
            groups = [np.arange(len(y))]
        else:
            groups = [np.flatnonzero(y == c) for c in range(self.counts.shape[1])]
        sizes = [len(rows) for rows in groups]
        if sizes != list(self.counts[p]):
            raise DataError(
                f"{label} holds {sizes} rows per class now, {list(self.counts[p])} when counted"
            )
        held = np.zeros(len(y), dtype=bool)
        for g, rows in enumerate(groups):
            start = self.starts[p, g]
            held[rows] = self.picks[g][start : start + len(rows)]
        return held

    def n_held(self, partition: int) -> int:
        p = partition
        return int(
            sum(
                self.picks[g][self.starts[p, g] : self.starts[p, g] + self.counts[p, g]].sum()
                for g in range(self.counts.shape[1])
            )
        )
