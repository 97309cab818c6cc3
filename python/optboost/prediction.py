"""The checks and finishing steps of a model's predictions: which type a model gives, which
iterations it holds, how many threads, and scores to labels."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import polars as pl

from .errors import ParameterError
from .frames import TargetEncoding

PredictionType = Literal[
    "response", "link", "class", "contrib", "interaction", "interval", "set", "distribution",
    "quantile",
]


def is_margin(core: Any) -> bool:
    """Whether the core model's link is a margin (the core's loss vocabulary says)."""
    return core.link[0] == "margin"


def prediction_type(core: Any, task: str, type: str | None) -> str:
    """The prediction type to use (None: the model's natural one), checked."""
    margin = is_margin(core)
    if type is None:
        return "link" if margin else "response"
    if type == "response" and margin:
        raise ParameterError(
            f"the {core.loss!r} loss gives margins, not probabilities: use type='link' "
            "(the margin, the default for this loss) or type='class'; for probabilities "
            "fit a probabilistic loss ('logistic', 'softmax')"
        )
    if type not in ("response", "link", "class"):
        raise ParameterError(
            "type must be 'response', 'link', 'class', 'contrib' or 'interaction', "
            f"got {type!r}"
        )
    if type == "class" and task == "regression":
        raise ParameterError(
            f"type='class' needs a classification loss; this model's loss is {core.loss!r}"
        )
    return type


def checked_iteration(core: Any, n_iter: int, iteration: Any) -> int:
    """``iteration`` if the core model holds it (0..its iterations), else a ParameterError
    saying why not (``n_iter``: the iterations trained)."""
    if isinstance(iteration, bool) or not isinstance(iteration, (int, np.integer)):
        raise ParameterError(f"iteration must be an integer, got {iteration!r}")
    available = core.n_iterations
    if not 0 <= iteration <= available:
        if available == 0 and n_iter > 0:
            detail = "this model was saved without its per-iteration path"
        elif available < n_iter:
            detail = (
                f"the model keeps iteration {available} of {n_iter}; the trees of "
                "later iterations are not in it"
            )
        else:
            detail = f"the model has {available} iterations"
        raise ParameterError(f"iteration must be in 0..{available}, got {iteration} ({detail})")
    return int(iteration)


def prediction_threads(params: Mapping[str, str], n_threads: int | None) -> int:
    """The thread count to predict with: the one given, else the fit's (0 when the model's
    parameters do not say; the core caps any count at the machine's cores)."""
    if n_threads is not None:
        integral = isinstance(n_threads, numbers.Integral) and not isinstance(n_threads, bool)
        if not integral or n_threads < 0:
            raise ParameterError(f"n_threads must be a count >= 0, not {n_threads!r}")
        return n_threads
    # A count of at most 10 digits (a loaded file's was checked when it was read).
    text = str(params.get("n_threads", "0"))
    return int(text) if text.isdecimal() and text.isascii() and len(text) <= 10 else 0


def quantile_column(level: float) -> str:
    """The prediction column of a quantile level: ``q0.05``."""
    return f"q{level!r}"


def finished(
    scores: np.ndarray, type: str, encoding: TargetEncoding, levels: list[float] | None = None
) -> Any:
    """The (n, K) scores as predictions of ``type``: class labels, one column as a vector, or
    the levels of a ``Quantiles`` model as a frame of ``q<level>`` columns."""
    if type == "response" and levels is not None:
        # The core has sorted each row (the rearrangement): the columns never cross.
        return pl.DataFrame({quantile_column(level): scores[:, k] for k, level in enumerate(levels)})
    if type == "class":
        if scores.shape[1] == 1:
            index = (scores[:, 0] > 0).astype(np.int64)
        else:
            index = np.argmax(scores, axis=1)
        return np.asarray(encoding.decode(index))
    return scores[:, 0] if scores.shape[1] == 1 else scores
