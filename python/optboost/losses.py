"""Loss objects for losses with a parameter. Each renders to the core's
spelling (``str(Pinball(0.9)) == "pinball(0.9)"``); plain strings such as
``"squared"`` or ``"pinball(0.9)"`` are accepted wherever a loss is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .errors import ParameterTypeError


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


LossLike = Union[str, Pinball, Huber, Logistic, Exponential]


def loss_text(loss: LossLike) -> str:
    """The core's spelling of a loss given as a string or a loss object."""
    if isinstance(loss, str):
        return loss.strip()
    if isinstance(loss, (Pinball, Huber, Logistic, Exponential)):
        return str(loss)
    raise ParameterTypeError(
        "loss must be a name such as 'squared' or 'pinball(0.9)', or a loss object such as "
        f"optboost.Pinball(tau=0.9); got {type(loss).__name__}"
    )
