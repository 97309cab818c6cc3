"""The expressions a formula term may hold, evaluated without Python's ``eval``.

A term such as ``np.log(a)``, ``I(a^2)``, ``bs(b, df=4)`` or ``C(g):x`` is a
product of factors; each factor is an expression over column names. Model
files store those expressions as text, so the text is untrusted: it is parsed
with :mod:`ast` (which only parses) into a small closed language and evaluated
by the interpreter below. What the language holds:

* column names (backticks for names that are not identifiers) and numbers;
* ``+ - * / ** % //`` and unary minus; ``^`` is a power, as in R;
* elementwise functions from a fixed table (``np.log``, ``log``, ``np.sqrt``,
  ``np.abs``, ``np.maximum``, ... see ``ELEMENTWISE`` and ``BINARY``) and ``I()``;
* stateful transforms whose learnt state is plain numbers: ``center``,
  ``scale``, ``poly`` (orthogonal unless ``raw=True``) and ``bs`` (B-splines);
* ``C(column)`` / ``factor(column)`` (a categorical factor; contrasts and other
  arguments besides ``levels=`` are accepted and ignored: trees need none);
* functions the user passes in ``context=`` (called by name only through that
  mapping: a file can name such a function but never supply it).

Nothing else parses: attributes other than ``np.<table entry>``, subscripts,
lambdas, comprehensions, strings outside ``levels=``, keyword values that are
not literals, and names starting with an underscore are refused with a
:class:`FormulaError` naming the offending piece.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from .errors import DataError, FormulaError
from .frames import categorical_codes, categorical_levels, feature_kind, numeric_values

# A formula written by a person is short; a longer one in a file is hostile.
MAX_EXPRESSION_LENGTH = 10_000
MAX_NESTING = 50  # calls and operators inside one another
MAX_POLY_DEGREE = 20
MAX_SPLINE_COLUMNS = 100
# Columns the computed terms of one formula may give in all (a categorical factor gives one
# per level, poly and bs one per degree or spline): checked before any is computed.
MAX_COMPUTED_COLUMNS = 10_000

ELEMENTWISE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "log": np.log,
    "log1p": np.log1p,
    "log2": np.log2,
    "log10": np.log10,
    "exp": np.exp,
    "expm1": np.expm1,
    "sqrt": np.sqrt,
    "cbrt": np.cbrt,
    "square": np.square,
    "abs": np.abs,
    "absolute": np.abs,
    "sign": np.sign,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "rint": np.rint,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "reciprocal": np.reciprocal,
}
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "power": np.power,
    "arctan2": np.arctan2,
    "hypot": np.hypot,
}
# Surv(time, event) on a formula's left side: the signed time the cox loss reads (R's survival
# package spelling).
SURVIVAL = "Surv"
NAMESPACES = ("np", "numpy")
STATEFUL = ("center", "scale", "standardize", "poly", "bs")
CATEGORICAL = ("C", "factor")
OPERATORS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.Pow: np.power,
    ast.BitXor: np.power,  # R's x^2
    ast.Mod: np.mod,
    ast.FloorDiv: np.floor_divide,
}
RESERVED = frozenset(ELEMENTWISE) | frozenset(BINARY) | {"I", SURVIVAL, *STATEFUL, *CATEGORICAL}

_BACKTICKED = re.compile(r"`([^`]*)`")
_AS_FACTOR = re.compile(r"\bas\.factor\s*\(")
_PLACEHOLDER = "_backticked_column_"


# ------------------------------------------------------------------ the parsed language


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Operation:
    operator: Callable[[np.ndarray, np.ndarray], np.ndarray]
    left: Any
    right: Any


@dataclass(frozen=True)
class Negation:
    operand: Any


@dataclass(frozen=True)
class Function:
    """An elementwise function of the table, or ``I``."""

    name: str
    arguments: tuple[Any, ...]


@dataclass(frozen=True)
class UserFunction:
    name: str
    arguments: tuple[Any, ...]


@dataclass(frozen=True)
class Stateful:
    """A transform that learns plain numbers from the training data; ``key``
    (its canonical text) names its state."""

    name: str
    argument: Any
    options: tuple[tuple[str, Any], ...]
    key: str


@dataclass(frozen=True)
class Categorical:
    column: str
    levels: tuple[str, ...] | None


@dataclass(frozen=True)
class Offset:
    """R's ``offset(column)``: the column is added to the link, not fitted."""

    column: str


@dataclass
class Factor:
    """One factor of a term, parsed: its text, its tree, what it reads."""

    text: str
    tree: Any
    columns: tuple[str, ...]
    functions: tuple[str, ...]

    @property
    def is_categorical(self) -> bool:
        return isinstance(self.tree, Categorical)


def column_factor(name: str) -> Factor:
    """The factor of a bare column name (no parsing: wide formulas have thousands)."""
    text = name if name.isidentifier() else f"`{name}`"
    return Factor(text, Column(name), (name,), ())


def parse_factor(text: str) -> Factor:
    """Parse one factor's expression; FormulaError for anything outside the language."""
    if not isinstance(text, str):
        raise FormulaError(f"a formula term must be text, got {type(text).__name__}")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise FormulaError(
            f"formula term of {len(text)} characters (at most {MAX_EXPRESSION_LENGTH})"
        )
    if _PLACEHOLDER in text:
        raise FormulaError(f"formula term {_shorten(text)!r} uses a reserved name")
    quoted: list[str] = []

    def placeholder(match: re.Match) -> str:
        quoted.append(match.group(1))
        return f"{_PLACEHOLDER}{len(quoted) - 1}"

    source = _AS_FACTOR.sub("factor(", _BACKTICKED.sub(placeholder, text))
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise FormulaError(f"formula term {_shorten(text)!r} is not an expression: {error}")
    parser = _Parser(text, quoted)
    tree = parser.factor(node)
    return Factor(text, tree, tuple(parser.columns), tuple(parser.functions))


class _Parser:
    def __init__(self, text: str, quoted: Sequence[str]):
        self.text = text
        self.quoted = quoted
        self.columns: list[str] = []
        self.functions: list[str] = []

    def refuse(self, node: ast.AST, why: str) -> FormulaError:
        try:
            piece = ast.unparse(node)
        except Exception:  # unparse of a hostile tree may itself fail
            piece = type(node).__name__
        return FormulaError(
            f"formula term {_shorten(self.text)!r}: {why}: {_shorten(piece, 80)!r}"
        )

    def column_name(self, node: ast.AST) -> str:
        if not isinstance(node, ast.Name):
            raise self.refuse(node, "expected a column name")
        name = node.id
        if name.startswith(_PLACEHOLDER):
            return self.quoted[int(name[len(_PLACEHOLDER) :])]
        if name.startswith("_"):
            raise self.refuse(node, "names starting with '_' are not allowed")
        return name

    def factor(self, node: ast.AST) -> Any:
        """The top of a factor: categorical and multi-column transforms live only here."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in CATEGORICAL:
                return self.categorical(node)
            if node.func.id == "offset" and len(node.args) == 1 and not node.keywords:
                column = self.column_name(node.args[0])
                self.columns.append(column)
                return Offset(column)
        return self.expression(node, depth=0)

    def categorical(self, node: ast.Call) -> Categorical:
        if len(node.args) < 1:
            raise self.refuse(node, f"{node.func.id}() needs a column")
        column = self.column_name(node.args[0])
        self.columns.append(column)
        levels = None
        for keyword in node.keywords:
            if keyword.arg == "levels":
                try:
                    value = ast.literal_eval(keyword.value)
                except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                    raise self.refuse(keyword.value, "levels= must be a list of literals")
                if not isinstance(value, (list, tuple)):
                    raise self.refuse(keyword.value, "levels= must be a list")
                levels = tuple(str(level) for level in value)
                if len(set(levels)) != len(levels):
                    raise FormulaError(
                        f"{node.func.id}({column}, levels=...) lists a level twice: {list(levels)}"
                    )
        # Further arguments (contrasts such as contr.sum) do not change a tree's
        # splits; they are read as text only and never evaluated.
        return Categorical(column, levels)

    def expression(self, node: ast.AST, depth: int) -> Any:
        if depth > MAX_NESTING:
            raise self.refuse(node, f"nested more than {MAX_NESTING} levels")
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise self.refuse(node, "only numbers may appear as constants")
            try:
                return Number(float(node.value))
            except OverflowError:
                raise self.refuse(node, "a number too large for a float") from None
        if isinstance(node, ast.Name):
            if node.id in RESERVED or node.id in NAMESPACES:
                raise self.refuse(node, "a function name used as a column")
            name = self.column_name(node)
            self.columns.append(name)
            return Column(name)
        if isinstance(node, ast.BinOp):
            operator = OPERATORS.get(type(node.op))
            if operator is None:
                raise self.refuse(node, "unsupported operator")
            return Operation(
                operator,
                self.expression(node.left, depth + 1),
                self.expression(node.right, depth + 1),
            )
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.expression(node.operand, depth + 1)
            return Negation(operand) if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise self.refuse(node, "not allowed in a formula term")

    def call(self, node: ast.Call, depth: int) -> Any:
        name = self.function_name(node.func)
        if name in CATEGORICAL:
            raise self.refuse(node, f"{name}() must be a whole factor, not part of an expression")
        if name in STATEFUL:
            return self.stateful(name, node, depth)
        if name == "offset":
            raise self.refuse(node, "offset(column) must be a term of its own")
        if node.keywords:
            raise self.refuse(node, f"{name}() takes no keyword arguments")
        arguments = tuple(self.expression(a, depth + 1) for a in node.args)
        expected = (
            1
            if name in ELEMENTWISE or name == "I"
            else 2
            if name in BINARY or name == SURVIVAL
            else None
        )
        if expected is None:
            self.functions.append(name)
            return UserFunction(name, arguments)
        if len(arguments) != expected:
            raise self.refuse(node, f"{name}() takes {expected} argument(s)")
        return Function(name, arguments)

    def function_name(self, func: ast.AST) -> str:
        if isinstance(func, ast.Attribute):
            if not (isinstance(func.value, ast.Name) and func.value.id in NAMESPACES):
                raise self.refuse(func, "only numpy functions may be called by attribute")
            if func.attr not in ELEMENTWISE and func.attr not in BINARY:
                raise self.refuse(func, "this numpy function is not supported in formulas")
            return func.attr
        if isinstance(func, ast.Name):
            if func.id.startswith("_"):
                raise self.refuse(func, "names starting with '_' are not allowed")
            return func.id
        raise self.refuse(func, "not a function name")

    def stateful(self, name: str, node: ast.Call, depth: int) -> Stateful:
        if len(node.args) != 1:
            raise self.refuse(node, f"{name}() takes one column expression")
        argument = self.expression(node.args[0], depth + 1)
        options = []
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.refuse(node, "**arguments are not allowed")
            try:
                value = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise self.refuse(keyword.value, f"{name}({keyword.arg}=...) must be a literal")
            options.append((keyword.arg, _plain_option(value, name, keyword.arg)))
        try:
            key = ast.unparse(node)
        except Exception:
            raise self.refuse(node, "cannot be written back as text")
        return Stateful(name, argument, tuple(options), key)


def _plain_option(value: Any, function: str, option: str) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        return tuple(float(v) for v in value)
    raise FormulaError(f"{function}({option}={value!r}): expected a number, boolean or list")


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# ------------------------------------------------------------------ evaluation


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
    if isinstance(tree, Categorical) or (
        isinstance(tree, Column) and feature_kind(frame.get_column(tree.name)) == "categorical"
    ):
        series = frame.get_column(tree.column if isinstance(tree, Categorical) else tree.name)
        if levels is None:
            raise FormulaError(f"no levels known for categorical factor {factor.text!r}")
        codes = categorical_codes(series, levels)
        missing = codes < 0
        columns = []
        for index, level in enumerate(levels):
            values = (codes == index).astype(np.float64)
            values[missing] = np.nan
            columns.append((f"[{level}]", values))
        return columns
    with np.errstate(all="ignore"):
        if isinstance(tree, Stateful) and tree.name in ("poly", "bs"):
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
        if tree.levels is not None:
            return tree.levels
        return tuple(categorical_levels(frame.get_column(tree.column)))
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
        if tree.name == SURVIVAL:
            return signed_time(*arguments)
        return BINARY[tree.name](*arguments)
    if isinstance(tree, UserFunction):
        return _call_user_function(tree, evaluation)
    if isinstance(tree, Stateful):
        if tree.name in ("poly", "bs"):
            raise FormulaError(f"{tree.key} gives several columns: use it as a whole term")
        return _centred(tree, evaluation)
    raise FormulaError(f"cannot evaluate {tree!r}")  # parse_factor never builds it


def is_survival(factor: Factor) -> bool:
    """Whether ``factor`` is ``Surv(time, event)``."""
    return isinstance(factor.tree, Function) and factor.tree.name == SURVIVAL


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
    if tree.name == "poly":
        return _poly(tree, x, evaluation)
    return _bs(tree, x, evaluation)


_POLY_OPTIONS = {"degree": 1, "raw": False}
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


def finite_float(value: Any) -> float | None:
    """``value`` as a finite float, or None (for non-numbers, and for integers too
    large for a float, which a file may hold)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _number(state: Mapping[str, Any], key: str, tree: Stateful, positive: bool = False) -> float:
    value = finite_float(state.get(key) if isinstance(state, Mapping) else None)
    if value is None:
        raise FormulaError(f"{tree.key}: stored {key!r} must be a finite number")
    if positive and value <= 0:
        raise FormulaError(f"{tree.key}: stored {key!r} must be positive")
    return value


def _numbers(
    state: Mapping[str, Any], key: str, tree: Stateful, length: int | None = None
) -> list[float]:
    values = state.get(key) if isinstance(state, Mapping) else None
    if not isinstance(values, (list, tuple)) or (length is not None and len(values) != length):
        raise FormulaError(f"{tree.key}: stored {key!r} must be a list of {length or 'some'} numbers")
    if len(values) > MAX_SPLINE_COLUMNS + 2:
        raise FormulaError(f"{tree.key}: stored {key!r} is too long")
    out = []
    for value in values:
        number = finite_float(value)
        if number is None:
            raise FormulaError(f"{tree.key}: stored {key!r} must hold finite numbers")
        out.append(number)
    return out


def stateful_keys(factor: Factor) -> list[str]:
    """The state keys a factor's transforms need (to check a loaded file holds them)."""
    keys: list[str] = []

    def visit(tree: Any) -> None:
        if isinstance(tree, Stateful):
            if not (tree.name == "poly" and dict(tree.options).get("raw")):
                keys.append(tree.key)
            visit(tree.argument)
        elif isinstance(tree, Operation):
            visit(tree.left)
            visit(tree.right)
        elif isinstance(tree, Negation):
            visit(tree.operand)
        elif isinstance(tree, (Function, UserFunction)):
            for argument in tree.arguments:
                visit(argument)

    visit(factor.tree)
    return keys
