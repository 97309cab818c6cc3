"""Loss objects for losses with a parameter. Each renders to the core's
spelling (``str(Pinball(0.9)) == "pinball(0.9)"``); plain strings such as
``"squared"`` or ``"pinball(0.9)"`` are accepted wherever a loss is.

Documentation: https://optboost.github.io/optboost/method_guide/
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

from . import _core
from .errors import ParameterError, ParameterTypeError


@dataclass(frozen=True)
class Pinball:
    """Quantile (pinball) loss at level ``tau`` in (0, 1)."""

    tau: float = 0.5

    def __str__(self) -> str:
        return f"pinball({float(self.tau)!r})"


@dataclass(frozen=True)
class Huber:
    """Huber loss: squared within ``delta`` of the target, absolute beyond."""

    delta: float = 1.0

    def __str__(self) -> str:
        return f"huber({float(self.delta)!r})"


@dataclass(frozen=True)
class Logistic:
    """Binary logistic loss, with an optional ridge term ``ridge * f**2 / 2``
    (RGBM's regularised logistic loss)."""

    ridge: float = 0.0

    def __str__(self) -> str:
        return "logistic" if self.ridge == 0 else f"logistic({float(self.ridge)!r})"


@dataclass(frozen=True)
class Exponential:
    """Binary exponential (AdaBoost) loss ``exp(-beta * y * f)``."""

    beta: float = 1.0

    def __str__(self) -> str:
        return f"exponential({float(self.beta)!r})"


@dataclass(frozen=True)
class Tweedie:
    """Tweedie deviance with log link and variance power ``p`` in (1, 2)
    (``poisson`` is p = 1, ``gamma`` is p = 2): non-negative targets with
    exact zeros, such as insurance claim amounts."""

    p: float = 1.5

    def __str__(self) -> str:
        return f"tweedie({float(self.p)!r})"


@dataclass(frozen=True)
class Quantiles:
    """Several quantiles of one target in one model: one output per level
    (``levels`` strictly increasing in (0, 1)), each fitted by the pinball loss
    of its level. ``predict`` gives a polars frame with one column per level
    (``q0.05``, ``q0.5``, ``q0.95``), each row sorted across the levels so
    that quantiles never cross (a rearrangement that never increases the
    pinball loss: docs/algorithms.md §6)."""

    levels: Any = (0.05, 0.5, 0.95)

    def __post_init__(self) -> None:
        if isinstance(self.levels, (str, bytes)) or not hasattr(self.levels, "__iter__"):
            raise ParameterTypeError(
                f"Quantiles levels must be a list of numbers, got {type(self.levels).__name__}"
            )
        levels = []
        for level in self.levels:
            if isinstance(level, bool) or not isinstance(level, (int, float)):
                raise ParameterTypeError(
                    f"Quantiles levels must be numbers, got {level!r} ({type(level).__name__})"
                )
            levels.append(float(level))
        if not levels:
            raise ParameterError("Quantiles needs 1 to 99 levels, got none")
        object.__setattr__(self, "levels", tuple(levels))
        _core.loss_info(str(self))  # the core checks the levels, with its message

    def __str__(self) -> str:
        return f"quantiles({', '.join(repr(level) for level in self.levels)})"


@dataclass(frozen=True)
class CustomLoss:
    """A regression loss from vectorised callables of ``(y, f)`` (numpy arrays,
    one entry per row): ``value`` the loss, ``gradient`` its derivative in f,
    ``hessian`` its second derivative (None: central differences of the
    gradient). Each must return an array of the rows' length, finite. The
    methods' prox and line searches are safeguarded 1-D Newton solves with one
    call per iteration over all rows. A saved model keeps its trees and
    predicts the link; the loss itself is not saved."""

    value: Callable[[Any, Any], Any]
    gradient: Callable[[Any, Any], Any]
    hessian: Callable[[Any, Any], Any] | None = None

    def __post_init__(self) -> None:
        for name in ("value", "gradient", "hessian"):
            function = getattr(self, name)  # safe: name from the fixed tuple above
            if not (callable(function) or (name == "hessian" and function is None)):
                raise ParameterTypeError(
                    f"CustomLoss {name} must be a callable (y, f) -> array"
                    + (" or None" if name == "hessian" else "")
                    + f", got {type(function).__name__}"
                )

    def __str__(self) -> str:
        return "custom"


LossLike = Union[str, Pinball, Huber, Logistic, Exponential, Tweedie, Quantiles, CustomLoss]


# R's gbm distributions and the optboost loss each one is, as the core's loss vocabulary says.
R_DISTRIBUTIONS = {
    info["r_gbm"]: name
    for name in _core.loss_names()
    if (info := _core.loss_info(name))["r_gbm"] is not None
}
# R's gbm distributions optboost does not have, with what to use instead.
R_MISSING = {
    "huberized": "R's huberized hinge loss is not available; 'hinge' is the plain hinge",
    "tdist": "the t-distribution loss is not available; 'huber' is a robust alternative",
}


def loss_text(loss: LossLike) -> str:
    """The core's spelling of a loss given as a string or a loss object; R's
    distribution names (``bernoulli``, ``gaussian``, ...) map to optboost's."""
    if isinstance(loss, str):
        text = loss.strip()
        name, parenthesis, rest = text.partition("(")
        name = name.strip().lower()
        if name in R_MISSING:
            raise ParameterError(f"loss {loss!r}: {R_MISSING[name]}")
        return R_DISTRIBUTIONS.get(name, name) + parenthesis + rest if name else text
    if isinstance(loss, (Pinball, Huber, Logistic, Exponential, Tweedie, Quantiles, CustomLoss)):
        return str(loss)
    raise ParameterTypeError(
        "loss must be a name such as 'squared' or 'pinball(0.9)', or a loss object such as "
        f"optboost.Pinball(tau=0.9); got {type(loss).__name__}"
    )
