"""The expressions a formula term may hold, evaluated without Python's ``eval``.

A term such as ``np.log(a)``, ``I(a^2)``, ``bs(b, df=4)`` or ``C(g):x`` is a
product of factors; each factor is an expression over column names. Model
files store those expressions as text, so the text is untrusted: it is parsed
with :mod:`ast` (which only parses) into a small closed language, which the
interpreter of :mod:`.term_values` evaluates. What the language holds:

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
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import FormulaError

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


def is_survival(factor: Factor) -> bool:
    """Whether ``factor`` is ``Surv(time, event)``."""
    return isinstance(factor.tree, Function) and factor.tree.name == SURVIVAL


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
