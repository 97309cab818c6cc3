"""The term language's interpreter: the columns of parsed factors (:mod:`.terms`) on a frame.

Stateful transforms (``center``, ``scale``, ``poly``, ``bs``, ``ns``, the statistics ``mean``
and the like, ``cut``'s breaks) learn plain numbers from the training frame
(``Evaluation(learn=True)``) and read them back on new data; nothing here calls anything but
the fixed tables of :mod:`.terms` and the user's own functions given in ``context=``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from .errors import DataError, FormulaError
from .frames import categorical_codes, categorical_levels, feature_kind, numeric_values
from .terms import (
    BINARY,
    ELEMENTWISE,
    MAX_CUT_INTERVALS,
    MAX_POLY_DEGREE,
    MAX_SPLINE_COLUMNS,
    SUMMARIES,
    SURVIVAL,
    SURVIVAL_INTERVAL,
    Categorical,
    Column,
    Comparison,
    Cut,
    Factor,
    Function,
    Logical,
    Negation,
    Number,
    Operation,
    Stateful,
    Summary,
    UserFunction,
    finite_float,
    stateful_keys,
)


@dataclass
class Evaluation:
    """What evaluating factors needs: the frame, the user's functions, and the
    learnt state (filled while ``learn`` is set, read otherwise)."""

    frame: pl.DataFrame
    context: Mapping[str, Any]
    state: dict[str, dict[str, Any]] = field(default_factory=dict)
    learn: bool = False
    # The columns of the factors met so far that neither learn state nor call a user's
    # function, by text and levels: the terms of one design share it, as ``.^2`` meets
    # each column in many terms.
    known: dict[tuple[str, tuple[str, ...] | None], list[tuple[str, np.ndarray]]] = field(
        default_factory=dict
    )


def factor_columns(
    factor: Factor, evaluation: Evaluation, levels: Sequence[str] | None = None
) -> list[tuple[str, np.ndarray]]:
    """The factor's numeric columns as (suffix, values): one column with an empty
    suffix for a numeric expression, ``[1]..[k]`` for poly/bs, ``[level]`` per level
    for a categorical factor (1/0, NaN when the value is missing)."""
    if factor.functions or stateful_keys(factor):  # a user's function or learnt state
        return _factor_columns(factor, evaluation, levels)
    key = (factor.text, None if levels is None else tuple(levels))
    columns = evaluation.known.get(key)
    if columns is None:
        columns = evaluation.known[key] = _factor_columns(factor, evaluation, levels)
    return columns


def _factor_columns(
    factor: Factor, evaluation: Evaluation, levels: Sequence[str] | None
) -> list[tuple[str, np.ndarray]]:
    tree = factor.tree
    frame = evaluation.frame
    if isinstance(tree, Cut):
        if levels is None:
            raise FormulaError(f"no levels known for {factor.text!r}")
        codes = _cut_codes(tree, evaluation, len(levels))
    elif isinstance(tree, Categorical) or (
        isinstance(tree, Column) and feature_kind(frame.get_column(tree.name)) == "categorical"
    ):
        series = frame.get_column(tree.column if isinstance(tree, Categorical) else tree.name)
        if levels is None:
            raise FormulaError(f"no levels known for categorical factor {factor.text!r}")
        codes = categorical_codes(series, levels)
    else:
        codes = None
    if codes is not None:
        missing = codes < 0
        columns = []
        for index, level in enumerate(levels):
            values = (codes == index).astype(np.float64)
            values[missing] = np.nan
            columns.append((f"[{level}]", values))
        return columns
    with np.errstate(all="ignore"):
        if isinstance(tree, Stateful) and tree.name in MULTI_COLUMN:
            matrix = _multi_column(tree, evaluation)
            return [(f"[{j + 1}]", np.ascontiguousarray(matrix[:, j])) for j in range(matrix.shape[1])]
        values = _evaluate(tree, evaluation)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 0:
        values = np.full(frame.height, float(values))
    return [("", np.ascontiguousarray(values))]


def factor_levels(factor: Factor, frame: pl.DataFrame) -> tuple[str, ...] | None:
    """The level map a categorical factor learns from training data (None for numeric)."""
    tree = factor.tree
    if isinstance(tree, Categorical):
        levels = tree.levels or tuple(categorical_levels(frame.get_column(tree.column)))
        if tree.reference is None:
            return levels
        if tree.reference not in levels:
            raise FormulaError(
                f"{factor.text}: ref {tree.reference!r} is not a level of {tree.column!r} "
                f"(levels: {list(levels[:20])})"
            )
        return (tree.reference, *(level for level in levels if level != tree.reference))
    if isinstance(tree, Cut):
        return cut_labels(tree, _cut_breaks(tree, Evaluation(frame, {}), learn=True))
    if isinstance(tree, Column) and feature_kind(frame.get_column(tree.name)) == "categorical":
        return tuple(categorical_levels(frame.get_column(tree.name)))
    return None


def factor_width(factor: Factor, levels: Sequence[str] | None) -> int:
    """How many columns ``factor_columns`` gives for ``factor``, from its text and levels
    alone: size arguments (poly's degree, bs's df, knots and degree) are checked here,
    before anything is computed."""
    if levels is not None:
        return len(levels)
    tree = factor.tree
    if isinstance(tree, Stateful) and tree.name == "poly":
        return _poly_degree(tree, _options(tree, _POLY_OPTIONS))
    if isinstance(tree, Stateful) and tree.name == "bs":
        return _bs_shape(tree, _options(tree, _BS_OPTIONS))[1]
    if isinstance(tree, Stateful) and tree.name == "ns":
        return _ns_shape(tree, _options(tree, _NS_OPTIONS))[1]
    return 1


def term_width(factors: Sequence[Factor], levels: Sequence[Sequence[str] | None]) -> int:
    """How many columns ``interaction_columns`` gives: the product of the factors' widths."""
    return math.prod(factor_width(f, lv) for f, lv in zip(factors, levels))


def interaction_columns(
    factors: Sequence[Factor],
    names: Sequence[str],
    evaluation: Evaluation,
    levels: Sequence[Sequence[str] | None],
) -> list[tuple[str, np.ndarray]]:
    """The columns of a term: every combination of its factors' columns (the first
    factor's columns vary slowest), multiplied; names joined with ':'."""
    parts = [
        [(name + suffix, values) for suffix, values in factor_columns(f, evaluation, lv)]
        for f, name, lv in zip(factors, names, levels)
    ]
    columns = []
    for combination in itertools.product(*parts):
        name = ":".join(piece for piece, _ in combination)
        values = combination[0][1]
        for _, more in combination[1:]:
            values = values * more
        columns.append((name, np.ascontiguousarray(values, dtype=np.float64)))
    return columns


def _evaluate(tree: Any, evaluation: Evaluation) -> np.ndarray | float:
    if isinstance(tree, Number):
        return tree.value
    if isinstance(tree, Column):
        series = evaluation.frame.get_column(tree.name)
        if feature_kind(series) == "categorical":
            raise FormulaError(
                f"column {tree.name!r} is categorical and cannot enter arithmetic"
            )
        return numeric_values(series)
    if isinstance(tree, Operation):
        return tree.operator(_evaluate(tree.left, evaluation), _evaluate(tree.right, evaluation))
    if isinstance(tree, Negation):
        return np.negative(_evaluate(tree.operand, evaluation))
    if isinstance(tree, Function):
        arguments = [_evaluate(a, evaluation) for a in tree.arguments]
        if tree.name == "I":
            return arguments[0]
        if tree.name in ELEMENTWISE:
            return ELEMENTWISE[tree.name](arguments[0])
        if tree.name == SURVIVAL:  # Surv(start, stop, event): survival.py adds the start
            return signed_time(*arguments[-2:])
        if tree.name == SURVIVAL_INTERVAL:  # the lower bounds; survival.py adds the upper
            return arguments[0]
        return BINARY[tree.name](*arguments)
    if isinstance(tree, Comparison):
        left = np.asarray(_evaluate(tree.left, evaluation), dtype=np.float64)
        right = np.asarray(_evaluate(tree.right, evaluation), dtype=np.float64)
        return _missing_where(tree.operator(left, right), np.isnan(left) | np.isnan(right))
    if isinstance(tree, Logical):
        return _logical(tree, evaluation)
    if isinstance(tree, Summary):
        return _summary(tree, evaluation)
    if isinstance(tree, UserFunction):
        return _call_user_function(tree, evaluation)
    if isinstance(tree, Stateful):
        if tree.name in MULTI_COLUMN:
            raise FormulaError(f"{tree.key} gives several columns: use it as a whole term")
        return _centred(tree, evaluation)
    raise FormulaError(f"cannot evaluate {tree!r}")  # parse_factor never builds it


def _missing_where(truth: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """1.0 where ``truth``, 0.0 where not, NaN where ``missing`` (R's NA)."""
    return np.where(missing, np.nan, np.asarray(truth, dtype=np.float64))


def _logical(tree: Logical, evaluation: Evaluation) -> np.ndarray:
    """R's three-valued logic: FALSE & NA is FALSE, TRUE | NA is TRUE, else NA propagates;
    any number other than 0 is true."""
    values = np.broadcast_arrays(
        *(np.asarray(_evaluate(o, evaluation), dtype=np.float64) for o in tree.operands)
    )
    missing = [np.isnan(v) for v in values]
    truth = [(v != 0) & ~m for v, m in zip(values, missing)]
    if tree.operator == "not":
        return _missing_where(~truth[0], missing[0])
    any_missing = np.logical_or.reduce(missing)
    if tree.operator == "and":
        falsity = np.logical_or.reduce([~t & ~m for t, m in zip(truth, missing)])
        return _missing_where(~falsity, any_missing & ~falsity)
    verity = np.logical_or.reduce(truth)
    return _missing_where(verity, any_missing & ~verity)


def _summary(tree: Summary, evaluation: Evaluation) -> float:
    def learn() -> dict[str, Any]:
        x = np.asarray(_evaluate(tree.argument, evaluation), dtype=np.float64)
        value = SUMMARIES[tree.name](_finite_values(tree, np.atleast_1d(x)))
        if not math.isfinite(value):
            raise FormulaError(f"{tree.key}: needs at least two finite training values")
        return {"value": value}

    return _number(_state(tree, evaluation, learn), "value", tree)


def _cut_breaks(tree: Cut, evaluation: Evaluation, learn: bool = False) -> list[float]:
    """The boundaries of ``cut``: given, or R's k equal intervals over the training range,
    widened by a thousandth of it at each end."""

    def boundaries() -> dict[str, Any]:
        if isinstance(tree.breaks, tuple):
            return {"breaks": list(tree.breaks)}
        x = np.asarray(_evaluate(tree.argument, evaluation), dtype=np.float64)
        observed = _finite_values(tree, np.atleast_1d(x))
        low, high = float(observed.min()), float(observed.max())
        width = high - low
        if width == 0:
            width = abs(low) if low != 0 else 1.0
            low, high = low - width / 1000, high + width / 1000
            return {"breaks": [float(b) for b in np.linspace(low, high, tree.breaks + 1)]}
        breaks = [float(b) for b in np.linspace(low, high, tree.breaks + 1)]
        breaks[0], breaks[-1] = low - width / 1000, high + width / 1000
        return {"breaks": breaks}

    if learn:
        return boundaries()["breaks"]
    state = _state(tree, evaluation, boundaries)
    breaks = _numbers(state, "breaks", tree, limit=MAX_CUT_INTERVALS + 1)
    if len(breaks) < 2 or breaks != sorted(set(breaks)):
        raise FormulaError(f"{tree.key}: stored 'breaks' must be increasing numbers")
    return breaks


def check_stored_state(
    factor: Factor, levels: Sequence[str] | None, state: Mapping[str, Any]
) -> None:
    """What a model file stores for ``factor`` agrees with its levels (a cut's breaks), checked
    at load; the other transforms check theirs when they run."""
    tree = factor.tree
    if isinstance(tree, Cut):
        breaks = _numbers(state.get(tree.key, {}), "breaks", tree, limit=MAX_CUT_INTERVALS + 1)
        if levels is None or len(breaks) != len(levels) + 1 or breaks != sorted(set(breaks)):
            raise FormulaError(
                f"{tree.key}: stored 'breaks' must be {0 if levels is None else len(levels) + 1} "
                "increasing numbers, one more than its levels"
            )


def cut_labels(tree: Cut, breaks: Sequence[float]) -> tuple[str, ...]:
    """R's interval labels, "(a,b]" (right=FALSE: "[a,b)"), with 3 significant digits or as
    many more as make them distinct."""
    for digits in range(3, 18):
        shown = [f"{b:.{digits}g}" for b in breaks]
        if len(set(shown)) == len(shown):
            break
    left, right = ("(", "]") if tree.right else ("[", ")")
    labels = [f"{left}{a},{b}{right}" for a, b in zip(shown, shown[1:])]
    if tree.include_lowest:
        if tree.right:
            labels[0] = "[" + labels[0][1:]
        else:
            labels[-1] = labels[-1][:-1] + "]"
    return tuple(labels)


def _cut_codes(tree: Cut, evaluation: Evaluation, n_levels: int) -> np.ndarray:
    """Each row's interval index, -1 outside the breaks or missing."""
    breaks = _cut_breaks(tree, evaluation)
    if len(breaks) - 1 != n_levels:
        raise FormulaError(f"{tree.key}: {len(breaks)} breaks for {n_levels} levels")
    x = np.asarray(_evaluate(tree.argument, evaluation), dtype=np.float64)
    x = np.broadcast_to(x, (evaluation.frame.height,))
    edges = np.asarray(breaks)
    codes = np.searchsorted(edges, x, side="left" if tree.right else "right") - 1
    if tree.include_lowest:
        codes[x == (edges[0] if tree.right else edges[-1])] = 0 if tree.right else n_levels - 1
    codes[(codes < 0) | (codes >= n_levels) | np.isnan(x)] = -1
    return codes


def signed_time(time: Any, event: Any) -> np.ndarray:
    """``Surv(time, event)`` as the cox loss's label (XGBoost's convention):
    the time for an event (event 1 or True), minus the time for a row censored
    then (event 0 or False). Times must be finite and > 0."""
    time, event = np.broadcast_arrays(
        np.asarray(time, dtype=np.float64), np.asarray(event, dtype=np.float64)
    )
    time, event = np.atleast_1d(time), np.atleast_1d(event)
    bad = np.flatnonzero((event != 0.0) & (event != 1.0))
    if len(bad):
        raise DataError(
            f"Surv(time, event): row {bad[0]} has event {event[bad[0]]}; the event must be "
            "1 (or True) for an event, 0 (or False) for a censored row"
        )
    bad = np.flatnonzero(~(np.isfinite(time) & (time > 0.0)))
    if len(bad):
        raise DataError(
            f"Surv(time, event): row {bad[0]} has time {time[bad[0]]}; times must be "
            "finite and > 0"
        )
    return np.where(event == 1.0, time, -time)


def _call_user_function(tree: UserFunction, evaluation: Evaluation) -> np.ndarray:
    function = evaluation.context.get(tree.name)
    if function is None or not callable(function):
        raise FormulaError(
            f"the formula calls {tree.name!r}, which is neither a supported function nor "
            "given in context= (pass context={" + repr(tree.name) + ": your_function})"
        )
    arguments = [_evaluate(a, evaluation) for a in tree.arguments]
    try:
        result = function(*arguments)
    except Exception as error:
        raise FormulaError(f"{tree.name}(...) raised {type(error).__name__}: {error}") from error
    try:
        values = np.asarray(result, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise FormulaError(f"{tree.name}(...) must return numbers: {error}") from error
    n = evaluation.frame.height
    if values.shape not in ((n,), ()):
        raise FormulaError(f"{tree.name}(...) returned shape {values.shape} for {n} rows")
    return values


def _options(tree: Stateful, allowed: Mapping[str, Any]) -> dict[str, Any]:
    options = dict(allowed)
    for name, value in tree.options:
        if name not in allowed:
            raise FormulaError(
                f"{tree.key}: unknown argument {name!r} (valid: {', '.join(allowed)})"
            )
        options[name] = value
    return options


def _state(tree: Stateful, evaluation: Evaluation, learn: Callable[[], dict[str, Any]]):
    if evaluation.learn:
        evaluation.state[tree.key] = learn()
    state = evaluation.state.get(tree.key)
    if state is None:
        raise FormulaError(f"no learnt state for {tree.key}")
    return state


def _finite_values(tree: Stateful, x: np.ndarray) -> np.ndarray:
    observed = x[np.isfinite(x)]
    if observed.size == 0:
        raise FormulaError(f"{tree.key}: no finite values to learn from")
    return observed


def _centred(tree: Stateful, evaluation: Evaluation) -> np.ndarray:
    x = np.asarray(_evaluate(tree.argument, evaluation), dtype=np.float64)
    _options(tree, {})
    if tree.name == "center":
        state = _state(tree, evaluation, lambda: {"mean": float(_finite_values(tree, x).mean())})
        return x - _number(state, "mean", tree)

    def learn() -> dict[str, Any]:
        observed = _finite_values(tree, x)
        std = float(observed.std(ddof=1)) if observed.size > 1 else 0.0
        return {"mean": float(observed.mean()), "std": std if std > 0 else 1.0}

    state = _state(tree, evaluation, learn)
    return (x - _number(state, "mean", tree)) / _number(state, "std", tree, positive=True)


def _multi_column(tree: Stateful, evaluation: Evaluation) -> np.ndarray:
    x = np.asarray(_evaluate(tree.argument, evaluation), dtype=np.float64)
    if x.ndim == 0:
        x = np.full(evaluation.frame.height, float(x))
    return MULTI_COLUMN[tree.name](tree, x, evaluation)


_POLY_OPTIONS = {"degree": 1, "raw": False}
_NS_OPTIONS = {
    "df": None,
    "knots": None,
    "include_intercept": False,
    "lower_bound": None,
    "upper_bound": None,
}
_BS_OPTIONS = {
    "df": None,
    "knots": None,
    "degree": 3,
    "include_intercept": False,
    "lower_bound": None,
    "upper_bound": None,
}


def _poly_degree(tree: Stateful, options: Mapping[str, Any]) -> int:
    degree = options["degree"]
    if not isinstance(degree, int) or isinstance(degree, bool) or not 1 <= degree <= MAX_POLY_DEGREE:
        raise FormulaError(f"{tree.key}: degree must be an integer in 1..{MAX_POLY_DEGREE}")
    return degree


def _bs_shape(tree: Stateful, options: Mapping[str, Any]) -> tuple[int, int]:
    """bs's number of inner knots and of columns, from its arguments alone (R's df is the
    number of columns), refused beyond ``MAX_SPLINE_COLUMNS`` before anything is computed."""
    degree = options["degree"]
    if not isinstance(degree, int) or isinstance(degree, bool) or not 0 <= degree <= 10:
        raise FormulaError(f"{tree.key}: degree must be an integer in 0..10")
    intercept = int(bool(options["include_intercept"]))
    for bound in ("lower_bound", "upper_bound"):
        if options[bound] is not None and finite_float(options[bound]) is None:
            raise FormulaError(f"{tree.key}: {bound} must be a finite number")
    knots, df = options["knots"], options["df"]
    if knots is not None:
        if not isinstance(knots, tuple):
            raise FormulaError(f"{tree.key}: knots must be a list of numbers")
        inner = len(knots)
    else:
        if df is None:
            df = degree + intercept
        if not isinstance(df, int) or isinstance(df, bool):
            raise FormulaError(f"{tree.key}: df must be an integer")
        inner = df - degree - intercept
        if inner < 0:
            raise FormulaError(f"{tree.key}: df must be at least {degree + intercept}")
    # the basis has inner + degree + 1 columns; the first is dropped without the intercept
    if inner + degree + 1 > MAX_SPLINE_COLUMNS:
        raise FormulaError(
            f"{tree.key}: gives {inner + degree + intercept:,} spline columns, at most "
            f"{MAX_SPLINE_COLUMNS - 1 + intercept} (df, knots and degree set how many)"
        )
    return inner, inner + degree + intercept


def _poly(tree: Stateful, x: np.ndarray, evaluation: Evaluation) -> np.ndarray:
    options = _options(tree, _POLY_OPTIONS)
    degree = _poly_degree(tree, options)
    if options["raw"]:
        return np.column_stack([x**k for k in range(1, degree + 1)])

    def learn() -> dict[str, Any]:
        # R's poly(): the three-term recurrence of polynomials orthogonal on the
        # training points, P_{k+1} = (x - alpha_k) P_k - (norm2_k / norm2_{k-1}) P_{k-1}.
        observed = _finite_values(tree, x)
        alpha, norm2 = [], [1.0]
        previous, current = np.zeros_like(observed), np.ones_like(observed)
        norm2.append(float(observed.size))
        for k in range(degree):
            a = float(np.dot(observed, current**2) / norm2[-1])
            alpha.append(a)
            following = (observed - a) * current - (norm2[-1] / norm2[-2]) * previous
            previous, current = current, following
            norm2.append(float(np.dot(current, current)))
        return {"alpha": alpha, "norm2": norm2}

    state = _state(tree, evaluation, learn)
    alpha = _numbers(state, "alpha", tree, degree)
    norm2 = _numbers(state, "norm2", tree, degree + 2)
    if any(v <= 0 for v in norm2[:-1]):
        raise FormulaError(f"{tree.key}: the training values do not support degree {degree}")
    previous, current = np.zeros_like(x), np.ones_like(x)
    columns = []
    for k in range(degree):
        following = (x - alpha[k]) * current - (norm2[k + 1] / norm2[k]) * previous
        previous, current = current, following
        scale = np.sqrt(norm2[k + 2]) if norm2[k + 2] > 0 else 1.0
        columns.append(current / scale)
    return np.column_stack(columns)


def _bs(tree: Stateful, x: np.ndarray, evaluation: Evaluation) -> np.ndarray:
    options = _options(tree, _BS_OPTIONS)
    count, _ = _bs_shape(tree, options)
    degree = options["degree"]
    intercept = bool(options["include_intercept"])

    def learn() -> dict[str, Any]:
        observed = _finite_values(tree, x)
        lower = options["lower_bound"]
        upper = options["upper_bound"]
        lower = float(observed.min()) if lower is None else float(lower)
        upper = float(observed.max()) if upper is None else float(upper)
        if options["knots"] is not None:
            inner = [float(k) for k in options["knots"]]
        else:
            inside = observed[(observed >= lower) & (observed <= upper)]
            if count and inside.size == 0:
                raise FormulaError(
                    f"{tree.key}: no training values within [{lower:g}, {upper:g}] to place knots"
                )
            quantiles = np.linspace(0, 1, count + 2)[1:-1]
            inner = [float(q) for q in np.quantile(inside, quantiles)] if count else []
        return {"lower": lower, "upper": upper, "knots": inner}

    state = _state(tree, evaluation, learn)
    lower = _number(state, "lower", tree)
    upper = _number(state, "upper", tree)
    inner = _numbers(state, "knots", tree)
    if not lower < upper or any(not lower <= k <= upper for k in inner) or inner != sorted(inner):
        raise FormulaError(f"{tree.key}: knots must be sorted within [lower, upper], lower < upper")
    if len(inner) != count:  # a model file's state must give the columns its text says
        raise FormulaError(f"{tree.key}: stored 'knots' must hold {count} numbers")
    basis = _bspline_basis(x, lower, upper, inner, degree)
    return basis if intercept else basis[:, 1:]


def _ns_shape(tree: Stateful, options: Mapping[str, Any]) -> tuple[int, int]:
    """ns's number of inner knots and of columns (R's df: inner knots + 1 + intercept)."""
    intercept = int(bool(options["include_intercept"]))
    for bound in ("lower_bound", "upper_bound"):
        if options[bound] is not None and finite_float(options[bound]) is None:
            raise FormulaError(f"{tree.key}: {bound} must be a finite number")
    knots, df = options["knots"], options["df"]
    if knots is not None:
        if not isinstance(knots, tuple):
            raise FormulaError(f"{tree.key}: knots must be a list of numbers")
        inner = len(knots)
    else:
        df = 1 + intercept if df is None else df
        if not isinstance(df, int) or isinstance(df, bool) or df < 1 + intercept:
            raise FormulaError(f"{tree.key}: df must be an integer >= {1 + intercept}")
        inner = df - 1 - intercept
    if inner + 1 + intercept > MAX_SPLINE_COLUMNS:
        raise FormulaError(
            f"{tree.key}: gives {inner + 1 + intercept:,} spline columns, at most "
            f"{MAX_SPLINE_COLUMNS} (df and knots set how many)"
        )
    return inner, inner + 1 + intercept


def _ns(tree: Stateful, x: np.ndarray, evaluation: Evaluation) -> np.ndarray:
    """Natural cubic splines (R's splines::ns): cubic between the knots, linear beyond the
    boundary knots; the truncated-power basis of Hastie, Tibshirani & Friedman, "The Elements
    of Statistical Learning", eq. (5.4)-(5.5), which spans the space of R's basis."""
    options = _options(tree, _NS_OPTIONS)
    count, _ = _ns_shape(tree, options)

    def learn() -> dict[str, Any]:
        observed = _finite_values(tree, x)
        lower = options["lower_bound"]
        upper = options["upper_bound"]
        lower = float(observed.min()) if lower is None else float(lower)
        upper = float(observed.max()) if upper is None else float(upper)
        if options["knots"] is not None:
            inner = [float(k) for k in options["knots"]]
        else:
            inside = observed[(observed >= lower) & (observed <= upper)]
            quantiles = np.linspace(0, 1, count + 2)[1:-1]
            inner = [float(q) for q in np.quantile(inside, quantiles)] if count else []
        return {"lower": lower, "upper": upper, "knots": inner}

    state = _state(tree, evaluation, learn)
    lower = _number(state, "lower", tree)
    upper = _number(state, "upper", tree)
    inner = _numbers(state, "knots", tree)
    inside = all(lower < k < upper for k in inner) and inner == sorted(set(inner))
    if not (lower < upper and inside):
        raise FormulaError(
            f"{tree.key}: knots must be distinct, sorted and inside (lower, upper), lower < upper"
        )
    if len(inner) != count:
        raise FormulaError(f"{tree.key}: stored 'knots' must hold {count} numbers")
    # on [0, 1] between the boundary knots, so that the cubes stay of the size of x
    span = upper - lower
    t = (x - lower) / span
    knots = [(k - lower) / span for k in (lower, *inner, upper)]
    last = knots[-1]

    def d(k: float) -> np.ndarray:
        return (np.maximum(t - k, 0.0) ** 3 - np.maximum(t - last, 0.0) ** 3) / (last - k)

    columns = [t] + [d(k) - d(knots[-2]) for k in knots[:-2]]
    if options["include_intercept"]:
        columns.insert(0, np.where(np.isnan(t), np.nan, 1.0))
    return np.column_stack(columns)


def _bspline_basis(
    x: np.ndarray, lower: float, upper: float, inner: Sequence[float], degree: int
) -> np.ndarray:
    """Cox-de Boor recursion on the knots with both boundaries repeated degree+1
    times; values beyond the training range are evaluated at the nearest boundary
    (a tree only needs them ordered), NaN stays NaN."""
    knots = np.array([lower] * (degree + 1) + list(inner) + [upper] * (degree + 1))
    t = np.clip(x, lower, upper)
    n_basis = len(knots) - degree - 1
    # degree 0: the indicator of [knots[i], knots[i+1]), the last interval closed
    basis = np.zeros((len(t), len(knots) - 1))
    for i in range(len(knots) - 1):
        if knots[i] < knots[i + 1]:
            basis[:, i] = (t >= knots[i]) & (t < knots[i + 1])
    last = int(np.flatnonzero(knots[:-1] < knots[1:])[-1])
    basis[t == upper, last] = 1.0
    for d in range(1, degree + 1):
        following = np.zeros((len(t), len(knots) - 1 - d))
        for i in range(len(knots) - 1 - d):
            left_span = knots[i + d] - knots[i]
            right_span = knots[i + d + 1] - knots[i + 1]
            if left_span > 0:
                following[:, i] += (t - knots[i]) / left_span * basis[:, i]
            if right_span > 0:
                following[:, i] += (knots[i + d + 1] - t) / right_span * basis[:, i + 1]
        basis = following
    basis[np.isnan(t)] = np.nan
    return basis[:, :n_basis]


def _number(state: Mapping[str, Any], key: str, tree: Any, positive: bool = False) -> float:
    value = finite_float(state.get(key) if isinstance(state, Mapping) else None)
    if value is None:
        raise FormulaError(f"{tree.key}: stored {key!r} must be a finite number")
    if positive and value <= 0:
        raise FormulaError(f"{tree.key}: stored {key!r} must be positive")
    return value


def _numbers(
    state: Mapping[str, Any],
    key: str,
    tree: Any,
    length: int | None = None,
    limit: int = MAX_SPLINE_COLUMNS + 2,
) -> list[float]:
    values = state.get(key) if isinstance(state, Mapping) else None
    if not isinstance(values, (list, tuple)) or (length is not None and len(values) != length):
        raise FormulaError(f"{tree.key}: stored {key!r} must be a list of {length or 'some'} numbers")
    if len(values) > limit:
        raise FormulaError(f"{tree.key}: stored {key!r} is too long")
    out = []
    for value in values:
        number = finite_float(value)
        if number is None:
            raise FormulaError(f"{tree.key}: stored {key!r} must hold finite numbers")
        out.append(number)
    return out


# The transforms that give several columns, each a function (tree, x, evaluation) -> (n, k).
MULTI_COLUMN: dict[str, Callable[[Stateful, np.ndarray, Evaluation], np.ndarray]] = {
    "poly": _poly,
    "bs": _bs,
    "ns": _ns,
}
