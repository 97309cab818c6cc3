"""Training parameters as the core's ``(name, text)`` pairs. Names and values
are checked by the core's ``Params::set``, so Python and Rust share one
vocabulary; Python only adds "did you mean" hints for unknown names."""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Mapping
from typing import Any

from . import _core
from .errors import ParameterError


def render(name: str, value: Any) -> str:
    """A parameter value in the core's textual form."""
    if isinstance(value, bool):
        raise ParameterError(f"parameter {name!r} takes a number or a name, not {value!r}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return value
    raise ParameterError(
        f"parameter {name!r} = {value!r}: expected a number or a name, got {type(value).__name__}"
    )


def param_pairs(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(name, text)`` pairs for the core, None values left out (the core's
    default then applies). Unknown names raise ParameterError listing the valid
    ones; values are validated by the core."""
    valid = _core.param_names()
    pairs = []
    for name, value in params.items():
        if name not in valid:
            close = difflib.get_close_matches(name, valid, n=3)
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            raise ParameterError(
                f"unknown parameter {name!r}{hint}; valid parameters: {', '.join(valid)}"
            )
        if value is not None:
            pairs.append((name, render(name, value)))
    _core.check_params(pairs)
    return pairs
