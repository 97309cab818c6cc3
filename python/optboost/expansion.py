"""formulaic's product operators (``*``, ``:``, ``**`` / ``^``) with bounded cost.

formulaic expands ``(a + b)**k`` as the product of k copies of the term set, |set|^k
products: ``y ~ (a+b)**40`` (13 characters) would run for days. Here a power is read
as R reads it: the interactions of at most k of the terms, so that an exponent beyond
the number of terms changes nothing (R's ``(a+b+c)^5`` is ``(a+b+c)^3``), and every
operator's result is counted before it is built: a formula's products may form at most
``MAX_TERMS`` terms in all, whatever their nesting.
"""

from __future__ import annotations

import ast
import itertools
import math
from typing import Any

from .errors import FormulaError

# Terms the product operators of one formula may form in all (intermediate results
# count too: ``a*b*c`` forms a*b's 3 terms, then 7). ``.^2`` on 99 columns forms 4,950;
# 4,095 terms parse and build in about a third of a second of CPU on a few rows.
MAX_TERMS = 5_000
# An exponent beyond the number of terms it multiplies is that number (R's semantics);
# one beyond this is a typo or an attack, refused outright.
MAX_EXPONENT = 1_000


def bounded_parser() -> Any:
    """A formulaic parser whose product operators count what they form against
    ``MAX_TERMS`` (one parser per formula: the count is the formula's)."""
    from formulaic.parser import DefaultFormulaParser, DefaultOperatorResolver

    budget = _Budget()

    class BoundedOperatorResolver(DefaultOperatorResolver):
        @property
        def operators(self) -> list[Any]:
            operators = super().operators
            for operator in operators:
                if operator.arity != 2:
                    continue
                if operator.symbol == "*":
                    operator._to_terms = budget.crossed
                elif operator.symbol == ":":
                    operator._to_terms = budget.interaction
                elif operator.symbol in ("**", "^"):
                    operator._to_terms = budget.power
            return operators

    return DefaultFormulaParser(operator_resolver=BoundedOperatorResolver())


class _Budget:
    """The terms formed so far by one formula's product operators."""

    def __init__(self) -> None:
        self.formed = 0

    def spend(self, count: int, what: str, at_least: bool = False) -> None:
        """Count ``count`` terms (a lower bound if ``at_least``) or refuse past the budget."""
        self.formed += count
        if self.formed > MAX_TERMS:
            raise FormulaError(
                f"{what} would form {'over ' if at_least else ''}{count:,} terms, more than the "
                f"{MAX_TERMS:,} a formula's interactions may form in all; name the interactions "
                "you need"
            )

    def interaction(self, left: Any, right: Any) -> Any:
        """``left:right``: every product of a term of each."""
        from formulaic.parser.types import OrderedSet

        self.spend(len(left) * len(right), "':'")
        return OrderedSet(x * y for x, y in itertools.product(left, right))

    def crossed(self, left: Any, right: Any) -> Any:
        """``left*right``: both sides' terms and every product of a term of each."""
        from formulaic.parser.types import OrderedSet

        self.spend(len(left) + len(right) + len(left) * len(right), "'*'")
        return OrderedSet(itertools.chain(left, right)) | OrderedSet(
            x * y for x, y in itertools.product(left, right)
        )

    def power(self, base: Any, exponent: Any) -> Any:
        """``base**k``: the products of at most k distinct terms of ``base``, in formulaic's
        order. formulaic multiplies k copies of ``base`` (|base|^k products, in lexicographic
        order) and keeps each product's first appearance, which is its first term repeated,
        then the others in ``base``'s order: products come by first term, then by how many
        terms they join, then by the others (test_formula_bounds.py checks it)."""
        from formulaic.parser.types import OrderedSet, Term

        k = _exponent(exponent)
        terms = list(base)
        n = len(terms)
        k = min(k, n)
        count = size = 0
        while size < k and count <= MAX_TERMS:  # comb(20000, 1000) alone takes long
            size += 1
            count += math.comb(n, size)
        self.spend(count, f"a power {k} of {n} terms", at_least=size < k)
        # A product of terms is the term of their factors in order, repeats dropped.
        return OrderedSet(
            Term([f for i in (first, *rest) for f in terms[i].factors])
            for first in range(n)
            for size in range(1, k + 1)
            for rest in itertools.combinations(range(first + 1, n), size - 1)
        )


def _exponent(exponent: Any) -> int:
    """The integer literal on the right of ``**`` / ``^``."""
    from formulaic.parser.types import Token

    term = next(iter(exponent), None)
    factor = term.factors[0] if term is not None and len(term.factors) == 1 else None
    value: Any = None
    if factor is not None and factor.token and factor.token.kind is Token.Kind.VALUE:
        try:
            value = ast.literal_eval(factor.expr)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = None
    if len(exponent) != 1 or not isinstance(value, int) or isinstance(value, bool):
        raise FormulaError(
            "the right-hand side of '**' / '^' must be a whole number, as in (a + b)^2"
        )
    if not 1 <= value <= MAX_EXPONENT:
        raise FormulaError(
            f"the exponent of '**' / '^' must be in 1..{MAX_EXPONENT} (one beyond the number "
            f"of terms it multiplies changes nothing), got {_shown(value)}"
        )
    return value


def _shown(value: int) -> str:
    """An integer as a person reads it: 1e+300 rather than its 301 digits."""
    if abs(value) < 10**15:
        return str(value)
    return f"{float(value):.3g}" if value.bit_length() < 1000 else "a number of over 300 digits"
