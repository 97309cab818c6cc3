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
    pairs = []
    for name, value in params.items():
        if name not in valid and name.endswith("_") and name[:-1] in valid:
            name = name[:-1]  # lambda_ for lambda, a Python keyword
        if name not in valid:
            raise ParameterError(
                f"unknown parameter {name!r}{_hint(name, valid)}; valid parameters: "
                f"{', '.join(valid)}"
            )
        if value is not None:
            pairs.append((name, render(name, value)))
    _check_names_of_choices(dict(pairs))
    return pairs, _core.resolve_params(pairs)


# R's gbm() argument names, for the users who arrive with them.
R_NAMES = {
    "n.trees": "n_iter",
    "interaction.depth": "max_depth",
    "shrinkage": "learning_rate",
    "n.minobsinnode": "min_samples_leaf",
    "distribution": "loss",
    "bag.fraction": "subsample",
    "bagging_fraction": "subsample",
    "feature_fraction": "colsample_bytree",
    "feature_fraction_bynode": "colsample_bynode",
    "data_sample_strategy": "sample_strategy",
    "cv.folds": "(cross-validation is not supported yet)",
    "train.fraction": "valid= (a validation frame)",
    "eta": "learning_rate",
    "num_boost_round": "n_iter",
    "n_estimators": "n_iter",
    "num_leaves": "max_leaves",
    "min_child_samples": "min_samples_leaf",
    "min_data_in_leaf": "min_samples_leaf",
    "reg_lambda": "l2_leaf",
}


def _hint(name: str, valid: list[str]) -> str:
    if name in R_NAMES:
        return f" (optboost calls it {R_NAMES[name]})"
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
