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
        # The core's switches read "true" / "false"; any other parameter rejects them by name.
        return "true" if value else "false"
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
    """``(name, text)`` pairs for the core (see ``resolve``)."""
    return resolve(params)[0]


def resolve(params: Mapping[str, Any]) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """``(name, text)`` pairs for the core, None values left out (the core's
    default then applies), and what training will use as the core resolves it
    in one call: the normalised ``method`` and ``loss``, the ``task`` the loss
    needs ("regression", "binary" or "multiclass"), and the ``step`` rule and
    ``rho`` in force. Unknown names raise ParameterError listing the valid
    ones; values are validated by the core."""
    valid = _core.param_names()
    loss = params.get("loss")
    loss = loss if isinstance(loss, str) else None
    pairs = []
    for name, value in params.items():
        if name not in valid and name.endswith("_") and name[:-1] in valid:
            name = name[:-1]  # lambda_ for lambda, a Python keyword
        if name not in valid:
            raise ParameterError(
                f"unknown parameter {name!r}{_hint(name, valid, loss)}; valid parameters: "
                f"{', '.join(valid)}"
            )
        if value is not None:
            pairs.append((name, render(name, value)))
    _check_names_of_choices(dict(pairs))
    return pairs, _core.resolve_params(pairs)


# Other libraries' names for optboost's parameters, for the users who arrive with them (R's
# gbm and mboost names are accepted as they are: plan.R_NAMES).
OTHER_NAMES = {
    "bagging_fraction": "subsample",
    "feature_fraction": "colsample_bytree",
    "feature_fraction_bynode": "colsample_bynode",
    "data_sample_strategy": "sample_strategy",
    "eta": "learning_rate",
    "num_boost_round": "n_iter",
    "n_estimators": "n_iter",
    "num_leaves": "max_leaves",
    "min_child_samples": "min_samples_leaf",
    "min_data_in_leaf": "min_samples_leaf",
    "reg_lambda": "l2_leaf",
}

# Names of a loss's parameter, which optboost takes inside the loss.
LOSS_PARAMETERS = ("alpha", "tau", "quantile", "delta", "beta", "power", "p")


def _hint(name: str, valid: list[str], loss: str | None = None) -> str:
    if name in OTHER_NAMES:
        return f" (optboost calls it {OTHER_NAMES[name]})"
    if name in LOSS_PARAMETERS and loss is not None:
        example = "'quantile(0.9)' or optboost.Pinball(0.9)"
        if loss.split("(")[0].strip() not in ("pinball", "quantile"):
            example = "'quantile(0.9)', 'huber(1.0)' or 'tweedie(1.5)'"
        return (
            f" (a loss's parameter goes in the loss: loss={example}, or R's "
            "distribution={'name': 'quantile', 'alpha': 0.9})"
        )
    close = difflib.get_close_matches(name, valid, n=3) if len(name) <= 200 else []
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _check_names_of_choices(params: Mapping[str, str]) -> None:
    """A misspelt method or loss gets the closest names (the core lists all)."""
    method = params.get("method")
    methods = list(_core.method_names())
    if method is not None and method not in methods:
        raise ParameterError(
            f"unknown method {method!r}{_hint(method, methods)}; methods: {', '.join(methods)}"
        )
    loss = params.get("loss")
    if loss is not None:
        name = loss.split("(")[0].strip()
        if name not in LOSS_NAMES:
            raise ParameterError(
                f"unknown loss {loss!r}{_hint(name, list(LOSS_NAMES))}; "
                f"losses: {', '.join(LOSS_NAMES)}"
            )


LOSS_NAMES = (*_core.loss_names(), "custom")
