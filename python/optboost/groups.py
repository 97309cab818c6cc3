"""Query groups of the ranking losses (``lambdarank``, ``pairwise``, ``rank_xendcg``): ``group=``
names a column (or gives one id per row) whose rows are ranked against each other. The rows of
a group need not be contiguous. The core takes a ranking target as two values per row,
row-major: the relevance label, then the group's code (0, 1, ... by sorted group id); it keeps
its own group -> rows index.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from . import _core
from .errors import DataError, ParameterError
from .frames import get_column


def is_ranking(loss: Any) -> bool:
    """Whether `loss` (a loss's text) is a ranking loss, as the core's loss table says (an
    unknown name is not: the parameters' check names it, with the closest names)."""
    if not isinstance(loss, str) or loss.split("(")[0].strip() not in _core.loss_names():
        return False
    return _core.loss_info(loss)["task"] == "ranking"


def check_group(loss: Any, group: Any) -> None:
    """A ranking loss needs ``group=``; any other loss refuses it."""
    if is_ranking(loss) and group is None:
        raise ParameterError(
            f"the {loss} loss ranks rows within query groups: pass group= with the column of "
            "query ids (or one id per row)"
        )
    if group is not None and not is_ranking(loss):
        ranking = [name for name in _core.loss_names() if is_ranking(name)]
        raise ParameterError(
            f"group= is for the ranking losses ({', '.join(ranking)}), not {loss!r}"
        )


def group_ids(group: Any, rows: pl.DataFrame | int, role: str = "data") -> pl.Series:
    """The group id of every row: the column `group` of the frame `rows`, or `group`'s values
    (one per row of `rows`, a frame or a number of rows)."""
    if isinstance(group, str):
        if not isinstance(rows, pl.DataFrame):
            raise ParameterError(f"group={group!r} names a column, but {role} is not a data frame")
        ids = get_column(rows, group, role="group column")
    else:
        n = rows.height if isinstance(rows, pl.DataFrame) else rows
        ids = pl.Series("group", list(np.asarray(group).ravel()) if np.ndim(group) else [group])
        if len(ids) != n:
            raise DataError(f"group= has {len(ids)} values for the {n} rows of {role}")
    name = repr(group) if isinstance(group, str) else "group="
    missing = ids.is_null()
    if ids.dtype.is_float():
        missing = missing | ids.is_nan()
    if missing.any():
        row = int(np.flatnonzero(missing.to_numpy())[0])
        raise DataError(
            f"{name} is missing (null or NaN) at row {row} of {role}: every row needs a query id"
        )
    return ids


def group_codes(group: Any, rows: pl.DataFrame | int, role: str = "data") -> np.ndarray:
    """The code 0, 1, ... of every row's group (groups by sorted id), as float64."""
    ids = group_ids(group, rows, role)
    if ids.dtype.is_numeric():
        values = ids.to_numpy()
    else:
        values = ids.cast(pl.String).to_numpy().astype(str)
    return np.unique(values, return_inverse=True)[1].astype(np.float64).ravel()


def ranking_target(y: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The core's ranking target: (relevance, group code) per row, row-major."""
    y = np.asarray(y, dtype=np.float64).ravel()
    return np.ascontiguousarray(np.column_stack([y, codes])).ravel()


def held_groups(codes: np.ndarray, rows: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Which of `rows` to hold out for validation: whole groups, round(fraction · groups) of
    them at random (seeded), so that no group is split between training and validation."""
    unique, inverse = np.unique(codes[rows], return_inverse=True)
    n_held = int(round(fraction * len(unique)))
    if n_held < 1 or n_held >= len(unique):
        raise DataError(
            f"validation_fraction={fraction} of {len(unique)} query groups leaves no group to "
            "train or to validate on (whole groups are held out)"
        )
    picked = np.zeros(len(unique), dtype=bool)
    picked[np.random.default_rng(seed).permutation(len(unique))[:n_held]] = True
    return picked[inverse.ravel()]
