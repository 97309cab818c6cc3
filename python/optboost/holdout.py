"""The validation part a fit holds out of its training rows (``validation_fraction``).

The momentum methods reach gbm's training loss in well under half the trees (their purpose),
so at a fixed number of iterations they go on to fit noise, and their training loss, which
keeps falling, cannot say when. With ``validation_fraction="auto"`` (the default) a momentum
method given no validation data holds out a tenth of the rows and keeps the iterate of lowest
loss on them (docs/algorithms.md, "Which iterate a momentum method keeps").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from .errors import DataError, ParameterError

# What each row of a fit's features is for, as the core's ``row_roles`` reads it: both sides
# read the features in place at their rows, and the core takes y, weights and offsets (given
# for every row) row by row, so that holding rows out copies nothing in Python.
TRAINS, VALIDATES, LEFT_OUT = 0, 1, 2

AUTO_FRACTION = 0.1
# Below this many held-out rows the selected iteration is mostly noise: "auto" then trains on
# every row (and keeps the best iterate by training loss, as with validation_fraction=None).
MIN_AUTO_HELD = 10


def resolve_fraction(fraction: Any, method: str, n_rows: int) -> float | None:
    """The fraction to hold out, or None for none; checks the value."""
    if fraction is None:
        return None
    if isinstance(fraction, str):
        if fraction != "auto":
            raise ParameterError(
                f'validation_fraction must be "auto", None or a number in (0, 1), got {fraction!r}'
            )
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
    held = held_mask(y, fraction, np.random.default_rng(seed), stratify)
    if held.all() or not held.any():
        raise DataError(
            f"validation_fraction={fraction} of {len(y)} rows leaves no rows to "
            "train or to validate on"
        )
    return held


def held_mask(
    y: np.ndarray, fraction: float, rng: np.random.Generator, stratify: bool
) -> np.ndarray:
    """``held_rows``'s mask drawn from ``rng``, without its check that some rows train and some
    validate (a Dask partition may hold few rows: the check is then over all of them)."""
    held = np.zeros(len(y), dtype=bool)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else [np.arange(len(y))]
    for rows in groups:
        count = int(round(fraction * len(rows)))
        held[rng.permutation(rows)[:count]] = True
    return held
