"""Predictions of distributional models (docs/uncertainty.md): a loss whose outputs are the
parameters of a distribution of the target (``_core.loss_info(loss)["parameters"]``), fitted by
natural-gradient boosting (Duan et al. 2020, NGBoost).

The core gives each row's parameters by the names scipy.stats uses (R's for the normal and
lognormal: ``mean``, ``sd``; ``meanlog``, ``sdlog``); this module turns them into the frame of
``predict(type="distribution")``, the mean (``type="response"``), quantiles
(``type="quantile"``) and central intervals (``type="interval"`` without conformal
calibration). The normal and lognormal quantiles are closed forms of the standard normal's
(``scipy.special.ndtri``); the others are scipy.stats' quantile functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from . import _core
from .errors import ParameterError


def parameter_names(loss: str) -> list[str] | None:
    """The distribution's parameters by name, or None for a loss that is not distributional."""
    return _core.loss_info(loss)["parameters"]


def _degrees_of_freedom(loss: str) -> float | None:
    parameter = _core.loss_info(loss)["parameter"]
    return parameter[1] if parameter is not None and parameter[0] == "df" else None


def frame(loss: str, params: np.ndarray) -> pl.DataFrame:
    """The (n, 2) parameters as a polars frame by name (with ``df`` first for the t)."""
    names = parameter_names(loss) or []
    columns: dict[str, Any] = {}
    df = _degrees_of_freedom(loss)
    if df is not None:
        columns["df"] = np.full(len(params), df)
    columns.update({name: params[:, k] for k, name in enumerate(names)})
    return pl.DataFrame(columns)


def mean(loss: str, params: np.ndarray) -> np.ndarray:
    """Each row's mean (the t's location, its mean for df > 1)."""
    first, second = params[:, 0], params[:, 1]
    kind = (parameter_names(loss) or [""])[0]
    if kind == "meanlog":
        return np.exp(first + 0.5 * second**2)
    if kind == "a":
        return first * second
    if kind == "n":
        return first * (1.0 - second) / second
    return first.copy()  # mean (normal), loc (t)


def spread(loss: str, params: np.ndarray) -> np.ndarray:
    """Each row's standard deviation (the t's scale, which it is proportional to when it
    exists): the σ of the conformal score |y − μ|/σ."""
    first, second = params[:, 0], params[:, 1]
    kind = (parameter_names(loss) or [""])[0]
    if kind == "meanlog":
        return np.sqrt(np.expm1(second**2)) * np.exp(first + 0.5 * second**2)
    if kind == "a":
        return np.sqrt(first) * second
    if kind == "n":
        return np.sqrt(first * (1.0 - second)) / second
    return second.copy()  # sd (normal), scale (t)


def quantile(loss: str, params: np.ndarray, level: float) -> np.ndarray:
    """Each row's quantile at ``level`` in (0, 1)."""
    from scipy import special, stats

    first, second = params[:, 0], params[:, 1]
    kind = (parameter_names(loss) or [""])[0]
    if kind == "mean":
        return first + second * special.ndtri(level)
    if kind == "meanlog":
        return np.exp(first + second * special.ndtri(level))
    if kind == "a":
        return stats.gamma.ppf(level, first, scale=second)
    if kind == "n":
        return stats.nbinom.ppf(level, first, second)
    return first + second * stats.t.ppf(level, _degrees_of_freedom(loss))


def _levels(values: Any, what: str) -> list[float]:
    items = [values] if isinstance(values, (int, float)) else values
    try:
        levels = [float(v) for v in items]
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be numbers in (0, 1), got {values!r}") from None
    if not levels or any(isinstance(v, bool) or not 0 < v < 1 for v in items):
        raise ParameterError(f"{what} must be numbers in (0, 1), got {values!r}")
    return levels


def finished(loss: str, params: np.ndarray, type: str, quantiles: Any, level: Any) -> Any:
    """The predictions of ``type`` from each row's parameters (the core's response)."""
    if type == "distribution":
        return frame(loss, params)
    if type == "response":
        return mean(loss, params)
    if type == "quantile":
        if quantiles is None:
            raise ParameterError("type='quantile' needs quantiles=[...], e.g. [0.05, 0.5, 0.95]")
        return pl.DataFrame(
            {f"q{q!r}": quantile(loss, params, q) for q in _levels(quantiles, "quantiles")}
        )
    if type == "interval":
        if level is None:
            raise ParameterError("type='interval' needs level=, e.g. level=0.9")
        (coverage,) = _levels(level, "level")
        tail = 0.5 * (1.0 - coverage)
        return pl.DataFrame(
            {"lower": quantile(loss, params, tail), "upper": quantile(loss, params, 1.0 - tail)}
        )
    raise ParameterError(
        "a distributional model predicts type='response' (the mean), 'distribution', "
        f"'quantile', 'interval', 'link', 'contrib' or 'interaction', got {type!r}"
    )
