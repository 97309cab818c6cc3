"""The expressions a formula term may hold, evaluated without Python's ``eval``.

A term such as ``np.log(a)``, ``I(a^2)``, ``bs(b, df=4)`` or ``C(g):x`` is a
product of factors; each factor is an expression over column names. Model
files store those expressions as text, so the text is untrusted: it is parsed
with :mod:`ast` (which only parses) into a small closed language, which the
interpreter of :mod:`.term_values` evaluates. What the language holds:

* column names (backticks for names that are not identifiers) and numbers;
* ``+ - * / ** % //`` and unary minus; ``^`` is a power, as in R;
* comparisons (``< <= > >= == !=``) and R's ``&``, ``|``, ``!`` (or ``and``, ``or``,
  ``not``), giving 1, 0, or NaN where an operand is missing (R's NA);
* elementwise functions from a fixed table (``np.log``, ``log``, ``np.sqrt``,
  ``np.abs``, ``np.maximum``, ... see ``ELEMENTWISE`` and ``BINARY``) and ``I()``;
* stateful transforms whose learnt state is plain numbers: ``center``,
  ``scale``, ``poly`` (orthogonal unless ``raw=True``), ``bs`` (B-splines), ``ns``
  (natural cubic splines), with R's positional arguments (``poly(x, 2)``), and
  ``mean``, ``median``, ``sd``, ``min``, ``max`` of the training rows (a number);
* ``cut(x, breaks=k or c(...))`` (R's intervals, as dummy columns);
* ``C(column)`` / ``factor(column)`` (a categorical factor; contrasts and other
  arguments besides ``levels=`` are accepted and ignored: trees need none) and
  ``relevel(f, ref=)``;
* ``offset(expression)``, added to the link, not fitted;
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
MAX_CUT_INTERVALS = 1_000
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
# Surv(lower, upper, type="interval"): the bounds of an interval holding each time (the aft
# loss's interval-censored target).
SURVIVAL_INTERVAL = "Surv_interval"
NAMESPACES = ("np", "numpy")
STATEFUL = ("center", "scale", "standardize", "poly", "bs", "ns")
# Statistics of the training rows inside an expression (R's I(x - mean(x))): one number each.
SUMMARIES: dict[str, Callable[[np.ndarray], float]] = {
    "mean": lambda x: float(np.mean(x)),
    "median": lambda x: float(np.median(x)),
    "sd": lambda x: float(np.std(x, ddof=1)) if x.size > 1 else math.nan,
    "min": lambda x: float(np.min(x)),
    "max": lambda x: float(np.max(x)),
}
CATEGORICAL = ("C", "factor")
# R's positional arguments after the first (poly(x, 2): degree 2; R's poly passes a single
# number in its ... as the degree) and R's names of options (bs's intercept=).
POSITIONAL = {
    "poly": ("degree",),
    "bs": ("df", "knots", "degree", "include_intercept"),
    "ns": ("df", "knots", "include_intercept"),
}
R_OPTION_NAMES = {"intercept": "include_intercept"}
COMPARISONS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
}
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
BINARY["pmin"], BINARY["pmax"] = np.minimum, np.maximum  # R's elementwise min and max
RESERVED = frozenset(ELEMENTWISE) | frozenset(BINARY) | {"I", SURVIVAL, *STATEFUL, *CATEGORICAL}

_BACKTICKED = re.compile(r"`([^`]*)`")
# Strings and backticked names, which R's spellings below leave as they are.
_QUOTED = re.compile(r"\"[^\"\\]*(?:\\.[^\"\\]*)*\"|'[^'\\]*(?:\\.[^'\\]*)*'|`[^`]*`")
# What any of the spellings below needs to see.
_R_MARKS = re.compile(r"[&|!]|TRUE|FALSE|NULL|\.[A-Za-z][A-Za-z0-9_]*\s*=(?!=)")
_R_SPELLINGS = (
    (re.compile(r"&&?"), " and "),
    (re.compile(r"\|\|?"), " or "),
    (re.compile(r"!(?!=)"), " not "),
    (re.compile(r"\bTRUE\b"), "True"),
    (re.compile(r"\bFALSE\b"), "False"),
    (re.compile(r"\bNULL\b"), "None"),
    # keyword names with a dot (na.rm=, include.lowest=, Boundary.knots=)
    (re.compile(r"\b([A-Za-z][A-Za-z0-9]*)\.([A-Za-z][A-Za-z0-9_]*)(\s*=(?!=))"), r"\1_\2\3"),
)
_AS_FACTOR = re.compile(r"\bas\.factor\s*\(")
_PLACEHOLDER = "_backticked_column_"
_REFUSED = {
    "strata": "strata(g) must be a term of its own on the right of '~' (+ strata(g)), with "
    "column names as its arguments",
}


def r_spelling(text: str, inside_parentheses: bool = False) -> str:
    """``text`` with R's operators and literals in Python's spelling, outside strings and
    backticks: ``&``/``&&`` as ``and``, ``|``/``||`` as ``or``, ``!`` as ``not``,
    ``TRUE``/``FALSE``, and a dot in a keyword's name as an underscore (``na.rm=``).
    inside_parentheses: only within parentheses (a whole formula, whose own ``|`` is not R's
    or)."""
    if _R_MARKS.search(text) is None:  # most terms: nothing to respell, at the cost of one search
        return text
    pieces = []
    depth = 0
    position = 0
    for match in [*_QUOTED.finditer(text), None]:
        end = len(text) if match is None else match.start()
        for part in re.split(r"([()])", text[position:end]):
            if part in ("(", ")"):
                depth += 1 if part == "(" else -1
            elif depth > 0 or not inside_parentheses:
                for pattern, replacement in _R_SPELLINGS:
                    part = pattern.sub(replacement, part)
            pieces.append(part)
        if match is not None:
            pieces.append(match.group(0))
            position = match.end()
    return "".join(pieces)


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
class Comparison:
    operator: Callable[[np.ndarray, np.ndarray], np.ndarray]
    left: Any
    right: Any


@dataclass(frozen=True)
class Logical:
    """``and``, ``or`` (R's ``&``, ``|``) of its operands, or ``not`` (R's ``!``) of one."""

    operator: str
    operands: tuple[Any, ...]


@dataclass(frozen=True)
class Summary:
    """A statistic (``SUMMARIES``) of an expression over the training rows, learnt as one
    number; ``key`` (its text) names it."""

    name: str
    argument: Any
    key: str


@dataclass(frozen=True)
class Categorical:
    column: str
    levels: tuple[str, ...] | None
    # relevel(f, ref=): the level put first
    reference: str | None = None


@dataclass(frozen=True)
class Cut:
    """R's ``cut(x, breaks)``: the interval of each value, a categorical factor. ``breaks``: a
    count of equal intervals over the training range, or the sorted boundaries."""

    argument: Any
    breaks: int | tuple[float, ...]
    right: bool
    include_lowest: bool
    key: str


@dataclass(frozen=True)
class Offset:
    """R's ``offset(expression)``: added to the link, not fitted. ``text``: the column's name
    for ``offset(column)``, else the expression's text."""

    text: str


@dataclass
class Factor:
    """One factor of a term, parsed: its text, its tree, what it reads."""

    text: str
    tree: Any
    columns: tuple[str, ...]
    functions: tuple[str, ...]

    @property
    def is_categorical(self) -> bool:
        """Whether the factor has levels (one dummy column each in a computed term)."""
        return isinstance(self.tree, (Categorical, Cut))


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

    source = r_spelling(_AS_FACTOR.sub("factor(", _BACKTICKED.sub(placeholder, text))).strip()
    try:
        node = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise FormulaError(f"formula term {_shorten(text)!r} is not an expression: {error}")
    parser = _Parser(text, quoted, source)
    tree = parser.factor(node)
    return Factor(text, tree, tuple(parser.columns), tuple(parser.functions))


class _Parser:
    def __init__(self, text: str, quoted: Sequence[str], source: str):
        self.text = text
        self.quoted = quoted
        self.source = source
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
            name = node.func.id
            if name in CATEGORICAL:
                return self.categorical(node)
            if name == "relevel":
                return self.relevel(node)
            if name == "cut":
                return self.cut(node)
            if name == "offset":
                return self.offset(node)
        return self.expression(node, depth=0)

    def offset(self, node: ast.Call) -> Offset:
        if len(node.args) != 1 or node.keywords:
            raise self.refuse(node, "offset() takes one expression")
        argument = node.args[0]
        if isinstance(argument, ast.Name):
            column = self.column_name(argument)
            self.columns.append(column)
            return Offset(column)
        self.stateless(node, self.expression(argument, depth=1), "offset()")
        text = ast.get_source_segment(self.source, argument) or ast.unparse(argument)
        return Offset(self.restored(text))

    def stateless(self, node: ast.AST, tree: Any, what: str) -> None:
        """Refuse learnt state and user functions in ``tree`` (read with nothing learnt)."""
        if self.functions or _has_state(tree):
            raise self.refuse(
                node, f"{what} may hold columns, numbers, operators and elementwise functions only"
            )

    def restored(self, source: str) -> str:
        """A piece of the parsed source with its backticked names written back."""
        return re.sub(
            rf"{_PLACEHOLDER}(\d+)",
            lambda m: "`" + self.quoted[int(m.group(1))] + "`",
            source,
        )

    def relevel(self, node: ast.Call) -> Categorical:
        """R's relevel(f, ref=): a categorical factor whose level ``ref`` comes first."""
        keywords = {k.arg: k.value for k in node.keywords}
        if len(node.args) == 2 and not keywords:
            keywords["ref"] = node.args[1]
        if len(node.args) not in (1, 2) or set(keywords) != {"ref"}:
            raise self.refuse(node, "relevel() takes a factor and ref= (a level)")
        inner = node.args[0]
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and (
            inner.func.id in CATEGORICAL
        ):
            categorical = self.categorical(inner)
        else:
            column = self.column_name(inner)
            self.columns.append(column)
            categorical = Categorical(column, None)
        reference = self.literal(keywords["ref"], "relevel(ref=...)")
        if isinstance(reference, (list, tuple, bool)) or reference is None:
            raise self.refuse(keywords["ref"], "ref= must be one level")
        return Categorical(categorical.column, categorical.levels, str(reference))

    def cut(self, node: ast.Call) -> Cut:
        """R's cut(x, breaks, right=TRUE, include.lowest=FALSE)."""
        if not 1 <= len(node.args) <= 2:
            raise self.refuse(node, "cut() takes an expression and breaks=")
        argument = self.expression(node.args[0], depth=1)
        self.stateless(node, argument, "cut()'s first argument")
        options: dict[str, Any] = {"right": True, "include_lowest": False}
        given = dict(zip(("breaks",), node.args[1:]))
        for keyword in node.keywords:
            if keyword.arg not in ("breaks", "right", "include_lowest") or keyword.arg in given:
                raise self.refuse(
                    node, "cut() takes breaks= (a count or c(...)), right= and include.lowest="
                )
            given[keyword.arg] = keyword.value
        if "breaks" not in given:
            raise self.refuse(node, "cut() needs breaks= (a count, or the boundaries c(...))")
        for name, value in given.items():
            options[name] = self.literal(value, f"cut({name}=...)")
        breaks = options["breaks"]
        if isinstance(breaks, tuple) and all(
            isinstance(b, (int, float)) and not isinstance(b, bool) for b in breaks
        ):
            breaks = tuple(float(b) for b in breaks)
        elif isinstance(breaks, bool) or not isinstance(breaks, (int, float)):
            raise self.refuse(node, "breaks= must be a count or a list of boundaries")
        if isinstance(breaks, tuple):
            if (
                not 2 <= len(breaks) <= MAX_CUT_INTERVALS + 1
                or not all(map(math.isfinite, breaks))
                or any(b >= c for b, c in zip(breaks, breaks[1:]))
            ):
                raise self.refuse(
                    node,
                    f"breaks= must be 2 to {MAX_CUT_INTERVALS + 1} finite, increasing boundaries",
                )
        elif not 2 <= breaks <= MAX_CUT_INTERVALS or breaks != int(breaks):
            raise self.refuse(
                node, f"breaks= must be a count of intervals in 2..{MAX_CUT_INTERVALS}"
            )
        else:
            breaks = int(breaks)
        for flag in ("right", "include_lowest"):
            if not isinstance(options[flag], bool):
                raise self.refuse(node, f"cut({flag}=...) must be TRUE or FALSE")
        return Cut(argument, breaks, options["right"], options["include_lowest"], ast.unparse(node))

    def literal(self, node: ast.AST, what: str) -> Any:
        """A literal option: a number, text, boolean, or a tuple of them (``[...]`` or R's
        ``c(...)``)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "c":
            if node.keywords:
                raise self.refuse(node, f"{what}: c() of literals only")
            node = ast.List(elts=node.args, ctx=ast.Load())
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise self.refuse(
                node, f"{what} must be a literal (a number, text, TRUE/FALSE, c(...))"
            )
        return tuple(value) if isinstance(value, (list, tuple)) else value

    def categorical(self, node: ast.Call) -> Categorical:
        if len(node.args) < 1:
            raise self.refuse(node, f"{node.func.id}() needs a column")
        column = self.column_name(node.args[0])
        self.columns.append(column)
        levels = None
        for keyword in node.keywords:
            if keyword.arg == "levels":
                value = self.literal(keyword.value, "levels=")
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
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return Logical("not", (self.expression(node.operand, depth + 1),))
        if isinstance(node, ast.BoolOp):
            operator = "and" if isinstance(node.op, ast.And) else "or"
            return Logical(operator, tuple(self.expression(v, depth + 1) for v in node.values))
        if isinstance(node, ast.Compare):
            # a < b < c is a < b and b < c, as in Python (R has no chains)
            operands = [node.left, *node.comparators]
            parts = []
            for op, left, right in zip(node.ops, operands, operands[1:]):
                operator = COMPARISONS.get(type(op))
                if operator is None:
                    raise self.refuse(node, "comparisons are < <= > >= == !=")
                parts.append(
                    Comparison(
                        operator,
                        self.expression(left, depth + 1),
                        self.expression(right, depth + 1),
                    )
                )
            return parts[0] if len(parts) == 1 else Logical("and", tuple(parts))
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise self.refuse(node, "not allowed in a formula term")

    def call(self, node: ast.Call, depth: int) -> Any:
        name = self.function_name(node.func)
        if name in (*CATEGORICAL, "relevel", "cut"):
            raise self.refuse(node, f"{name}() must be a whole factor, not part of an expression")
        if name in STATEFUL:
            return self.stateful(name, node, depth)
        if name in SUMMARIES:
            return self.summary(name, node, depth)
        if name == "offset":
            raise self.refuse(node, "offset(...) must be a term of its own")
        if name in _REFUSED:
            raise self.refuse(node, _REFUSED[name])
        if name == SURVIVAL and node.keywords:
            kind = [k for k in node.keywords if k.arg == "type"]
            if (
                len(node.keywords) != 1
                or len(kind) != 1
                or not isinstance(kind[0].value, ast.Constant)
                or kind[0].value.value not in ("interval", "interval2")
                or len(node.args) != 2
            ):
                raise self.refuse(
                    node, 'Surv() takes (time, event), (start, stop, event) or (lower, upper, '
                    'type="interval")'
                )
            arguments = tuple(self.expression(a, depth + 1) for a in node.args)
            return Function(SURVIVAL_INTERVAL, arguments)
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
        if name == SURVIVAL and len(arguments) == 3:  # Surv(start, stop, event)
            expected = 3
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
        positional = POSITIONAL.get(name, ())
        if not 1 <= len(node.args) <= 1 + len(positional):
            more = f", then at most {', '.join(positional)} in order" if positional else ""
            raise self.refuse(node, f"{name}() takes one column expression{more}")
        argument = self.expression(node.args[0], depth + 1)
        given = list(zip(positional, node.args[1:]))
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.refuse(node, "**arguments are not allowed")
            given.append((R_OPTION_NAMES.get(keyword.arg, keyword.arg), keyword.value))
        options: dict[str, Any] = {}
        for option, value in given:
            value = _plain_option(self.literal(value, f"{name}({option}=...)"), name, option)
            if option == "Boundary_knots":  # R's Boundary.knots = c(lower, upper)
                if not (isinstance(value, tuple) and len(value) == 2):
                    raise FormulaError(f"{name}(Boundary.knots=...) must be c(lower, upper)")
                pairs = [("lower_bound", value[0]), ("upper_bound", value[1])]
            else:
                pairs = [(option, value)]
            for option, value in pairs:
                if option in options:
                    raise self.refuse(node, f"{name}() is given {option} twice")
                options[option] = value
        return Stateful(name, argument, tuple(options.items()), self.key(node))

    def summary(self, name: str, node: ast.Call, depth: int) -> Summary:
        if len(node.args) != 1:
            elementwise = {"min": " (pmin(a, b): the elementwise minimum)", "max": " (pmax(a, b))"}
            raise self.refuse(
                node,
                f"{name}() of the training rows takes one expression{elementwise.get(name, '')}",
            )
        for keyword in node.keywords:
            # missing values are left out of every statistic: na.rm is accepted, either way
            if keyword.arg != "na_rm" or not isinstance(self.literal(keyword.value, "na.rm"), bool):
                raise self.refuse(node, f"{name}() takes na.rm=TRUE or FALSE only")
        return Summary(name, self.expression(node.args[0], depth + 1), self.key(node))

    def key(self, node: ast.Call) -> str:
        """The call's canonical text, which names its learnt state."""
        try:
            return ast.unparse(node)
        except Exception:
            raise self.refuse(node, "cannot be written back as text")


def _has_state(tree: Any) -> bool:
    return bool(_state_keys(tree))


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
    return isinstance(factor.tree, Function) and factor.tree.name in (SURVIVAL, SURVIVAL_INTERVAL)


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
    return _state_keys(factor.tree)


def _state_keys(tree: Any) -> list[str]:
    keys: list[str] = []

    def visit(tree: Any) -> None:
        if isinstance(tree, Stateful):
            if not (tree.name == "poly" and dict(tree.options).get("raw")):
                keys.append(tree.key)
            visit(tree.argument)
        elif isinstance(tree, (Summary, Cut)):
            keys.append(tree.key)
            visit(tree.argument)
        elif isinstance(tree, (Operation, Comparison)):
            visit(tree.left)
            visit(tree.right)
        elif isinstance(tree, Negation):
            visit(tree.operand)
        elif isinstance(tree, (Function, UserFunction)):
            for argument in tree.arguments:
                visit(argument)
        elif isinstance(tree, Logical):
            for operand in tree.operands:
                visit(operand)

    visit(tree)
    return keys
