"""Formula parsing: a formula's text to its target and right-hand-side terms.

formulaic parses the formula's structure (``+``, ``-``, ``.``, ``:``, ``*``, ``^``) within
the budgets of :mod:`.expansion`; it never evaluates anything here. A formula of bare names
(``y ~ a + b``, ``y ~ . - c``) has its own linear parse. Each factor of any other term is
parsed by :mod:`.terms` into the closed term language.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Union

import polars as pl

from .errors import FormulaError
from .expansion import bounded_parser
from .frames import MissingColumnError, missing_column_message
from .terms import Factor, column_factor, parse_factor, r_spelling, stateful_keys

# Characters of a formula with more than bare column names: formulaic's parse of one costs
# about 25 µs a character (a formula of bare names has its own parse, linear and fast).
MAX_FORMULA_LENGTH = 20_000

# A right-hand-side term: a bare column's name, or the parsed factors of any other term.
Term = Union[str, list[Factor]]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NON_IDENTIFIER_PREFIX = "_optboost_column_"


def parse_formula(
    formula: str,
    frame: pl.DataFrame,
    weights_column: str | None,
    left_out: Collection[str] = (),
) -> tuple[str, Factor | None, list[Term]]:
    """The target's name, its parsed expression when it transforms a column
    (else None), and the right-hand side's terms: a bare column's name, or a
    term's parsed factors. ``left_out``: as in ``build_design``."""
    if not isinstance(formula, str):
        raise FormulaError(
            f"formula must be a string like 'y ~ a + b', got {type(formula).__name__}"
        )
    if len(formula) > 1_000_000:
        raise FormulaError(f"formula of {len(formula)} characters is too long")
    simple = _parse_simple(formula, frame, weights_column, left_out)
    if simple is not None:
        return simple
    if len(formula) > MAX_FORMULA_LENGTH:
        raise FormulaError(
            f"formula of {len(formula):,} characters is too long: one beyond bare column names "
            f"(y ~ a + b - c) may have {MAX_FORMULA_LENGTH:,}; '.' stands for every other column"
        )
    # Column names formulaic would read as numbers (a column called `1`) get an
    # identifier alias, so that `.` and backticks keep them as columns.
    aliases = {
        f"{_NON_IDENTIFIER_PREFIX}{i}": name
        for i, name in enumerate(frame.columns)
        if _looks_literal(name)
    }
    reverse = {name: alias for alias, name in aliases.items()}
    text = r_spelling(re.sub(r"\bas\.factor\s*\(", "factor(", formula), inside_parentheses=True)
    several = _CBIND.match(text)
    if several is not None:  # R's cbind(y1, y2) ~ ...: y1 + y2 ~ ...
        targets = re.split(r"\s*,\s*", several.group(1).strip())
        text = " + ".join(targets) + " ~" + text[several.end() :]
    if reverse:
        text = re.sub(
            r"`([^`]*)`", lambda m: reverse.get(m.group(1), m.group(0)), text
        )
    available = [reverse.get(c, c) for c in frame.columns if c != weights_column]
    from formulaic import Formula  # its import is slow: only a fit needs it
    from formulaic.parser.types import Factor as FormulaicFactor

    try:
        parsed = Formula(
            text,
            _context={"__formulaic_variables_available__": available},
            _parser=bounded_parser(),
        )
    except FormulaError as error:  # an expansion beyond the bounds
        raise FormulaError(f"formula {formula!r}: {error}") from None
    except Exception as error:  # formulaic raises many types for bad syntax
        message = _ANSI.sub("", str(error)).replace("⧛", "").replace("⧚", "")
        raise FormulaError(f"cannot parse formula {formula!r}: {message}") from None
    if not hasattr(parsed, "lhs") or not hasattr(parsed, "rhs") or not hasattr(parsed.rhs, "__iter__"):
        raise FormulaError(
            f"formula {formula!r} has no target or uses '|' parts, which optboost does not "
            "support: write it as 'y ~ a + b'"
        )
    try:
        lhs_terms = [t for t in parsed.lhs if t.factors]
        rhs_terms = list(parsed.rhs)
        for term in rhs_terms:
            term.factors  # noqa: B018 - '|' parts give formulas here, not terms
    except Exception:
        raise FormulaError(
            f"formula {formula!r}: write it as 'y ~ a + b' (one target, then the features)"
        ) from None

    def restore(expr: str) -> str:
        for alias, name in aliases.items():
            expr = re.sub(rf"\b{alias}\b", "`" + name.replace("`", "") + "`", expr)
        return expr

    seen: dict[tuple[Any, str], Factor] = {}  # an expansion meets each factor in many terms

    def parsed(factor: Any) -> Factor:
        key = (factor.eval_method, factor.expr)
        if key not in seen:
            if factor.eval_method == FormulaicFactor.EvalMethod.LOOKUP:
                seen[key] = column_factor(aliases.get(factor.expr, factor.expr))
            else:
                seen[key] = _parse_factor(formula, restore(factor.expr))
        return seen[key]

    several = len(lhs_terms) > 1 and all(
        len(t.factors) == 1 and t.factors[0].eval_method == FormulaicFactor.EvalMethod.LOOKUP
        for t in lhs_terms
    )
    if not several and (len(lhs_terms) != 1 or len(lhs_terms[0].factors) != 1):
        raise FormulaError(
            f"formula {formula!r}: the left-hand side must be one column, or several columns "
            "joined by + (y1 + y2 ~ ... or cbind(y1, y2) ~ ..., one output each)"
        )
    lhs = lhs_terms[0].factors[0]
    target_factor = None
    target: str | tuple[str, ...]
    target_columns: tuple[str, ...]
    if several:  # y1 + y2 ~ ...: one output per column
        target = target_columns = tuple(
            aliases.get(t.factors[0].expr, t.factors[0].expr) for t in lhs_terms
        )
    elif lhs.eval_method == FormulaicFactor.EvalMethod.LOOKUP:
        target = aliases.get(lhs.expr, lhs.expr)
        target_columns = (target,)
    else:
        target_factor = parsed(lhs)
        if target_factor.is_categorical or stateful_keys(target_factor):
            raise FormulaError(
                f"formula {formula!r}: the left-hand side may be a column or a stateless "
                f"transform of columns (np.log(y), I(y / 1000)), not {lhs.expr!r}"
            )
        target, target_columns = target_factor.text, target_factor.columns
    for column in target_columns:
        if column not in frame.columns:
            raise MissingColumnError(
                f"formula {formula!r}: "
                + missing_column_message(column, frame.columns, role="target column")
            )
    _check_removed_names(formula, text, aliases, frame, left_out)
    factor_lists: list[Term] = []
    for term in rhs_terms:
        factors = [
            f for f in term.factors if f.eval_method != FormulaicFactor.EvalMethod.LITERAL
        ]
        if not factors:
            continue  # the intercept: trees need none
        if len(factors) == 1 and factors[0].eval_method == FormulaicFactor.EvalMethod.LOOKUP:
            factor_lists.append(aliases.get(factors[0].expr, factors[0].expr))
        else:
            factor_lists.append([parsed(f) for f in factors])
    return target, target_factor, factor_lists


_NAME = r"(?:[A-Za-z_][A-Za-z0-9_.]*|`[^`]*`)"
_SIMPLE_TERM = re.compile(rf"\s*([+-])\s*({_NAME}|\.|[01])\s*")
_SIMPLE_TARGET = re.compile(rf"\s*({_NAME})\s*~(.*)", re.S)
_CBIND = re.compile(rf"\s*cbind\s*\(\s*({_NAME}(?:\s*,\s*{_NAME})+)\s*\)\s*~")


def _parse_simple(
    formula: str,
    frame: pl.DataFrame,
    weights_column: str | None,
    left_out: Collection[str] = (),
) -> tuple[str, None, list[Term]] | None:
    """The common formulas of bare names only (``y ~ a + b``, ``y ~ . - c``),
    parsed without formulaic, whose parse costs seconds on thousands of columns;
    None for anything else. Same terms, in the same order, as formulaic gives:
    names in order of first appearance, ``.`` as every other column in frame
    order, intercept terms dropped."""
    head = _SIMPLE_TARGET.fullmatch(formula)
    if head is None:
        return None
    target = head.group(1).strip("`")
    rest = head.group(2)
    rest = rest if rest.lstrip().startswith(("+", "-")) else "+" + rest
    added: list[str] = []
    removed: list[str] = []
    position = 0
    while position < len(rest):
        match = _SIMPLE_TERM.match(rest, position)
        if match is None or match.end() == position:
            return None
        sign, term = match.groups()
        position = match.end()
        if term in ("0", "1"):
            continue
        if term == "." and (sign == "-" or added):
            return None  # '.' first only: the order of 'a + .' is formulaic's business
        (added if sign == "+" else removed).append(term.strip("`") if term != "." else term)
    if added[:1] == ["."] and len(added) > 1:
        return None
    columns = frame.columns  # built anew at each call: once here
    if added == ["."]:
        names = [c for c in columns if c not in (target, weights_column)]
    else:
        names = list(dict.fromkeys(added))
    present = set(columns)
    for name in [target, *(name for name in removed if name not in left_out)]:
        if name not in present:
            raise MissingColumnError(
                f"formula {formula!r}: " + missing_column_message(name, frame.columns)
            )
    gone = set(removed)
    return target, None, [n for n in names if n not in gone]


def _looks_literal(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def _check_removed_names(
    formula: str,
    text: str,
    aliases: Mapping[str, str],
    frame: pl.DataFrame,
    left_out: Collection[str],
) -> None:
    """A name after '-' must be a column (or one of ``left_out``): formulaic would
    silently ignore a typo."""
    from formulaic.parser import DefaultFormulaParser
    from formulaic.parser.types import Token

    try:
        tree = DefaultFormulaParser().get_ast(text)
    except Exception:
        return  # Formula() parsed it; nothing more to learn here
    columns = set(frame.columns)
    for token in _tokens(tree):
        if token.kind == Token.Kind.NAME:
            name = aliases.get(str(token), str(token))
            if name not in columns and name not in left_out:
                raise MissingColumnError(
                    f"formula {formula!r}: " + missing_column_message(name, frame.columns)
                )


def _tokens(node: Any):
    from formulaic.parser.types import Token

    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Token):
            yield item
        stack.extend(getattr(item, "args", ()))


def _parse_factor(formula: str, text: str) -> Factor:
    try:
        return parse_factor(text)
    except FormulaError as error:
        raise FormulaError(f"formula {formula!r}: {error}") from None
