"""Survival targets beyond ``Surv(time, event)``: counting-process data
``Surv(start, stop, event)`` and ``strata(g)`` terms (R survival's spelling).
The cox loss then takes a target of three columns per row, the signed stop
time (XGBoost's convention: < 0 censored), the start time and the stratum, and
its risk set at t holds the rows of the event's stratum with start < t ≤ stop.
Right-censored rows start at 0 (every time is > 0).

``Surv(lower, upper, type="interval")`` gives the aft loss the bounds of an
interval holding each time, two columns: lower = upper an observed time, lower
0 left-censored, upper infinite or missing right-censored (stored as -1, which
the core reads as no upper bound)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from .errors import DataError, FormulaError
from .frames import get_column
from .term_values import Evaluation, _evaluate, signed_time
from .terms import SURVIVAL, SURVIVAL_INTERVAL, parse_factor

# `+ strata(a)` or `+ strata(a, b)` on the right of '~': column names only.
_STRATA = re.compile(r"\+\s*strata\s*\(([^()]*)\)")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def split_strata(formula: str) -> tuple[str, tuple[str, ...]]:
    """``formula`` without its ``strata(...)`` terms, and their columns. The
    columns are left out of ``.``, as they group rows rather than predict."""
    if not isinstance(formula, str) or "strata" not in formula or "~" not in formula:
        return formula, ()
    left, right = formula.split("~", 1)
    columns: list[str] = []
    for match in _STRATA.finditer(right):
        names = [name.strip().strip("`") for name in match.group(1).split(",")]
        bad = [name for name in names if not _NAME.match(name)]
        if bad or not names:
            raise FormulaError(
                f"formula {formula!r}: strata() takes column names, as strata(g) or "
                f"strata(g, h), got strata({match.group(1)})"
            )
        columns.extend(name for name in names if name not in columns)
    if not columns:
        return formula, ()
    right = _STRATA.sub("", right)
    if re.search(r"(^|[^\w.])\.($|[^\w.])", right):
        right += "".join(f" - {name}" for name in columns)
    return f"{left}~{right}", tuple(columns)


def is_counting(expression: str | None) -> bool:
    """Whether a target expression is ``Surv(start, stop, event)``."""
    if expression is None:
        return False
    tree = parse_factor(expression).tree
    return getattr(tree, "name", None) == SURVIVAL and len(tree.arguments) == 3


def survival_target(
    expression: str | None,
    frame: pl.DataFrame,
    context: Mapping[str, Any] | None,
    strata: Sequence[str],
) -> np.ndarray | None:
    """The (n, 3) cox target (signed stop, start, stratum) of a counting-process
    or stratified formula, the (n, 2) bounds of ``Surv(lower, upper,
    type="interval")``; None for a plain ``Surv(time, event)`` target."""
    if expression is not None and not strata:
        tree = parse_factor(expression).tree
        if getattr(tree, "name", None) == SURVIVAL_INTERVAL:
            return interval_target(tree, frame, context)
    if not strata and not is_counting(expression):
        return None
    if expression is None or getattr(parse_factor(expression).tree, "name", None) != SURVIVAL:
        raise FormulaError(
            f"strata({', '.join(strata)}) needs a Surv(time, event) or Surv(start, stop, "
            "event) target and the cox loss"
        )
    factor = parse_factor(expression)
    evaluation = Evaluation(frame, dict(context or {}))
    with np.errstate(all="ignore"):
        arguments = [
            np.broadcast_to(np.asarray(_evaluate(a, evaluation), dtype=np.float64), (frame.height,))
            for a in factor.tree.arguments
        ]
    if len(arguments) == 3:
        start, stop, event = arguments
        bad = np.flatnonzero(~(np.isfinite(start) & (start >= 0.0) & (start < stop)))
        if len(bad):
            row = bad[0]
            raise DataError(
                f"Surv(start, stop, event): row {row} starts at {start[row]} and stops at "
                f"{stop[row]}; start times must be finite, >= 0 and before the stop time"
            )
    else:
        stop, event = arguments
        start = np.zeros(frame.height)
    signed = signed_time(stop, event)
    return np.column_stack([signed, start, stratum_codes(frame, strata)])


def stratum_codes(frame: pl.DataFrame, strata: Sequence[str]) -> np.ndarray:
    """Each row's stratum: the index of its combination of the strata columns'
    values (0 for every row without strata). Missing values are refused."""
    if not strata:
        return np.zeros(frame.height)
    columns = []
    for name in strata:
        series = get_column(frame, name, role="strata column")
        if series.null_count():
            row = int(np.flatnonzero(series.is_null().to_numpy())[0])
            raise DataError(f"strata column {name!r} is missing at row {row}")
        columns.append(series.cast(pl.String).to_numpy())
    keys = np.array(["\x1f".join(map(str, values)) for values in zip(*columns)])
    return np.unique(keys, return_inverse=True)[1].astype(np.float64)


def interval_target(tree: Any, frame: pl.DataFrame, context: Mapping[str, Any] | None) -> np.ndarray:
    """(lower, upper) per row, upper -1 where it is infinite or missing."""
    evaluation = Evaluation(frame, dict(context or {}))
    with np.errstate(all="ignore"):
        lower, upper = (
            np.broadcast_to(np.asarray(_evaluate(a, evaluation), dtype=np.float64), (frame.height,))
            for a in tree.arguments
        )
    unbounded = np.isnan(upper) | np.isposinf(upper)
    bad = np.flatnonzero(
        ~(np.isfinite(lower) & (lower >= 0.0))
        | ~unbounded & ~(np.isfinite(upper) & (upper >= lower) & (upper > 0.0))
    )
    if len(bad):
        row = bad[0]
        raise DataError(
            f'Surv(lower, upper, type="interval"): row {row} has bounds [{lower[row]}, '
            f"{upper[row]}]; they must satisfy 0 <= lower <= upper, upper > 0 (upper infinite or "
            "missing: right-censored, lower 0: left-censored)"
        )
    return np.column_stack([lower, np.where(unbounded, -1.0, upper)])
