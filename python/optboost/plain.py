"""Checks of the plain values a model file holds (texts, lists, flags, learnt numbers): each
wrong one is a FormulaError naming what it should be."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import FormulaError
from .terms import finite_float


def expect(value: Any, kind: type, what: str) -> None:
    if not isinstance(value, kind):
        raise FormulaError(f"{what} must be a {kind.__name__}, got {type(value).__name__}")


def text(value: Any, what: str) -> str:
    expect(value, str, what)
    return value


def optional_text(value: Any, what: str) -> str | None:
    return None if value is None else text(value, what)


def listed(value: Any, what: str) -> list:
    expect(value, list, what)
    return value


def texts(values: Any, what: str) -> list[str]:
    return [text(v, what) for v in listed(values, what)]


def distinct(values: Sequence[str], what: str) -> None:
    if len(set(values)) != len(values):
        raise FormulaError(f"{what} repeat a level")


def flag(value: Any, what: str) -> bool:
    expect(value, bool, what)
    return value


def plain_state(value: Any) -> dict[str, Any]:
    """Learnt numbers: a dict of numbers and lists of numbers, nothing else."""
    expect(value, Mapping, "transform state")
    for key, entry in value.items():
        items = entry if isinstance(entry, list) else [entry]
        if not isinstance(key, str) or not all(finite_float(v) is not None for v in items):
            raise FormulaError(f"transform state {key!r} must hold finite numbers only")
    return dict(value)
