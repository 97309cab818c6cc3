"""Evaluation metrics given as Python callables ``metric(y, prediction) -> float``.

Built-in metrics (auc, rmse, ...) run in the core after every iteration; a
callable runs here, after every iteration, on the target as the model encodes
it (0/1 for a binary loss, the class index for a multiclass one) and the
response-scale predictions of the training and the validation rows (n values,
or n × K class probabilities). Its values are history columns train_<name> and
valid_<name>; they are recorded only: early stopping follows the first metric,
which must then be a built-in one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _core
from .errors import ParameterError

Metric = Callable[[np.ndarray, np.ndarray], float]

BUILT_IN = tuple(_core.metric_names())
"""The core's metrics (it computes them, in training and for ``Model.metric``); ``ndcg@k`` and
``map@k`` stand for every cut-off (``ndcg@5``)."""


def is_built_in(name: str) -> bool:
    """Whether `name` (lower case) is a core metric: one of ``BUILT_IN``, or a cut-off metric
    with its k (``ndcg@5``; the history column is named as written, so the k is required)."""
    family, _, k = name.partition("@")
    return name in BUILT_IN or (f"{family}@k" in BUILT_IN and k.isdigit())


def split_metrics(metrics: Any) -> tuple[list[str], dict[str, Callable[..., Any]]]:
    """The built-in names (lower case, in order) and the callables by their
    history name: the function's ``__name__``, or ``metric_<position>`` for a
    lambda or a name that is taken."""
    if isinstance(metrics, str):
        # "auc,logloss": the spelling of the CLI's -p metrics=auc,logloss
        metrics = [name for name in metrics.split(",") if name.strip()]
    elif callable(metrics):
        metrics = [metrics]
    if not isinstance(metrics, Sequence):
        raise ParameterError(
            f"metrics must be a list of names and callables, got {type(metrics).__name__}"
        )
    names: list[str] = []
    functions: dict[str, Callable[..., Any]] = {}
    for position, metric in enumerate(metrics):
        if isinstance(metric, str):
            name = metric.strip().lower()
            if not is_built_in(name):
                raise ParameterError(
                    f"unknown metric {metric!r}; built-in metrics: {', '.join(BUILT_IN)} "
                    "(or pass a callable metric(y, prediction) -> float)"
                )
            names.append(name)
        elif callable(metric):
            name = getattr(metric, "__name__", "")
            if not name.isidentifier() or name in BUILT_IN or name in functions:
                name = f"metric_{position}"
            functions[name] = metric
        else:
            raise ParameterError(
                f"metrics: {metric!r} is neither a metric name nor a callable"
            )
    return names, functions


class CallableMetrics:
    """Evaluates the callables after each iteration and keeps their columns."""

    def __init__(
        self,
        functions: dict[str, Callable[..., Any]],
        y_train: np.ndarray,
        y_valid: np.ndarray | None,
    ):
        self.functions = functions
        self.y_train = np.asarray(y_train)
        self.y_valid = None if y_valid is None else np.asarray(y_valid)
        self.columns: dict[str, list[float | None]] = {}
        for name in functions:
            self.columns[f"train_{name}"] = []
            self.columns[f"valid_{name}"] = []

    def names(self) -> list[str]:
        return list(self.columns)

    def record(self, booster: Any) -> None:
        train, valid = booster.response_outputs()
        train_p = _shaped(train, len(self.y_train))
        valid_p = None if valid is None else _shaped(valid, len(self.y_valid))
        for name, function in self.functions.items():
            self.columns[f"train_{name}"].append(_value(name, function, self.y_train, train_p))
            self.columns[f"valid_{name}"].append(
                None if valid_p is None else _value(name, function, self.y_valid, valid_p)
            )


def _shaped(values: list[float], n: int) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    k = len(array) // max(n, 1)
    return array if k <= 1 else array.reshape(n, k)


def _value(name: str, function: Callable[..., Any], y: np.ndarray, p: np.ndarray) -> float:
    value = function(y.copy(), p.copy())
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParameterError(
            f"metric {name!r} returned {type(value).__name__} {value!r}, not a number"
        ) from None
    if math.isnan(number):
        raise ParameterError(f"metric {name!r} returned NaN")
    return number


def _log_loss(y: np.ndarray, p: np.ndarray) -> float:
    eps = 1e-15
    if p.ndim == 1:
        p = np.clip(p, eps, 1 - eps)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    chosen = np.clip(p[np.arange(len(y)), y.astype(np.int64)], eps, 1.0)
    return float(-np.mean(np.log(chosen)))


def _error_rate(y: np.ndarray, p: np.ndarray) -> float:
    predicted = (p > 0.5).astype(np.int64) if p.ndim == 1 else np.argmax(p, axis=1)
    return float(np.mean(predicted != y.astype(np.int64)))


def _poisson_deviance(y: np.ndarray, mu: np.ndarray) -> float:
    # 2 Σ (y ln(y/μ) − (y − μ)) / n, with y ln y = 0 at y = 0 (scikit-learn's
    # mean_poisson_deviance).
    y, mu = np.asarray(y, float), np.asarray(mu, float)
    ratio = np.where(y > 0, y / np.where(y > 0, mu, 1.0), 1.0)
    return float(2.0 * np.mean(y * np.log(ratio) - (y - mu)))


def _gamma_deviance(y: np.ndarray, mu: np.ndarray) -> float:
    # 2 Σ (ln(μ/y) + y/μ − 1) / n (scikit-learn's mean_gamma_deviance).
    y, mu = np.asarray(y, float), np.asarray(mu, float)
    return float(2.0 * np.mean(np.log(mu / y) + y / mu - 1.0))


def tweedie_deviance(p: float) -> Metric:
    """The mean Tweedie deviance of power ``p`` in (1, 2), as scikit-learn's
    ``mean_tweedie_deviance(power=p)``."""

    def deviance(y: np.ndarray, mu: np.ndarray) -> float:
        y, mu = np.asarray(y, float), np.asarray(mu, float)
        terms = (
            np.maximum(y, 0.0) ** (2 - p) / ((1 - p) * (2 - p))
            - y * mu ** (1 - p) / (1 - p)
            + mu ** (2 - p) / (2 - p)
        )
        return float(2.0 * np.mean(terms))

    return deviance


# The loss-like metrics by the name a loss's row in the core's vocabulary gives
# (``default_metric``), as f(encoded target, response-scale predictions) over many
# predictions of one model (permutation importance); the parametric ones are
# ``loss_metric``'s.
LOSS_METRICS: dict[str, Metric] = {
    "mse": lambda y, p: float(np.mean((y - p) ** 2)),
    "mae": lambda y, p: float(np.mean(np.abs(y - p))),
    "logloss": _log_loss,
    "error": _error_rate,
    "poisson_deviance": _poisson_deviance,
    "gamma_deviance": _gamma_deviance,
}


def loss_metric(loss: str) -> Metric:
    """The loss-like metric of `loss` (its row of the core's loss vocabulary names it; the
    parametric ones take the loss's parameter): f(encoded target, response prediction)."""
    info = _core.loss_info(loss)
    name = info["default_metric"]
    if name == "tweedie_deviance":
        return tweedie_deviance(info["parameter"][1])
    if name == "pinball":
        tau = info["parameter"][1]

        def pinball(y: np.ndarray, p: np.ndarray) -> float:
            r = y - p
            return float(np.mean(np.maximum(tau * r, (tau - 1) * r)))

        return pinball
    if name == "quantiles":
        levels = np.asarray(info["levels"])

        def quantiles(y: np.ndarray, p: Any) -> float:
            r = np.asarray(y)[:, None] - np.asarray(p)
            return float(np.mean(np.sum(np.maximum(levels * r, (levels - 1) * r), axis=1)))

        return quantiles
    return LOSS_METRICS[name]
