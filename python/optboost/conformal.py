"""Conformal prediction: intervals and sets with finite-sample marginal coverage.

``model.conformalize(calibration)`` scores the model on rows it was not trained on and keeps
the scores (plain numbers, saved in the model file); ``predict(new, type="interval",
level=0.9)`` and ``predict(new, type="set", level=0.9)`` then read the level's quantile of the
scores at predict time. Split conformal prediction (Vovk, Gammerman & Shafer 2005; Lei, G'Sell,
Rinaldo, Tibshirani & Wasserman 2018): with n calibration rows exchangeable with a new row and
q̂ the ⌈(n + 1)·level⌉-th smallest score (infinite beyond n), the new row's score is at most q̂
with probability at least ``level`` (and below level + 1/(n + 1) when scores do not tie).

Scores by the model's loss (docs/uncertainty.md):

* ``absolute`` (a point prediction ŷ, regression losses): |y − ŷ|; interval ŷ ± q̂.
* ``cqr`` (``Quantiles`` models: conformalized quantile regression, Romano, Patterson & Candès
  2019, on the outer pair of levels lo < hi): max(q_lo − y, y − q_hi); interval
  [q_lo − q̂, q_hi + q̂].
* ``normalized`` (distributional losses: normalised residuals, Lei et al. 2018 §5.2): |y − μ|/σ
  with μ the predicted mean and σ the predicted standard deviation (the t's scale); interval
  μ ± q̂σ, as wide as the model says the row is uncertain.
* ``lac`` (classification, the default: Sadinle, Lei & Wasserman 2019): 1 − p̂_y; the set
  {k : 1 − p̂_k ≤ q̂}.
* ``aps`` (classification: adaptive prediction sets, Romano, Sesia & Candès 2020, without the
  randomisation): the probability mass of the classes at least as likely as y, y included; the
  set of classes whose own such mass is at most q̂.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from . import distributions
from .errors import ModelFileError, ParameterError

SCORES = ("absolute", "cqr", "normalized", "lac", "aps")
# A model file holds at most this many calibration scores (8 bytes of text each, and more).
MAX_SCORES = 10_000_000


class Calibration:
    """The calibration scores of one conformalized model: their kind and their values,
    sorted increasingly."""

    def __init__(self, score: str, values: np.ndarray):
        self.score = score
        self.values = np.sort(np.asarray(values, dtype=np.float64))

    @property
    def n(self) -> int:
        return len(self.values)

    def threshold(self, level: Any) -> float:
        """q̂: the ⌈(n + 1)·level⌉-th smallest score, infinite when that is past n."""
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
            raise ParameterError(f"level must be a number in (0, 1), got {level!r}")
        rank = math.ceil((self.n + 1) * level - 1e-12)  # (n+1)·level exact in reals
        return math.inf if rank > self.n else float(self.values[rank - 1])

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "values": [float(v) for v in self.values]}

    @classmethod
    def from_dict(cls, data: Any) -> Calibration:
        """A file's calibration, checked: a known score, 1 to MAX_SCORES finite numbers (in
        [0, 1] for the class scores, >= 0 for absolute residuals)."""
        if not isinstance(data, dict) or set(data) != {"score", "values"}:
            raise ModelFileError("the file's 'conformal' entry must be {'score', 'values'}")
        score, values = data["score"], data["values"]
        if score not in SCORES:
            raise ModelFileError(f"conformal score {str(score)[:40]!r} is not one of {SCORES}")
        if not isinstance(values, list) or not 1 <= len(values) <= MAX_SCORES:
            raise ModelFileError(f"conformal values must be a list of 1 to {MAX_SCORES} numbers")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise ModelFileError("conformal values must be numbers")
        array = np.asarray(values, dtype=np.float64)
        low = {"absolute": 0.0, "cqr": -np.inf, "normalized": 0.0, "lac": 0.0, "aps": 0.0}[score]
        high = 1.0 if score in ("lac", "aps") else np.inf
        bad = ~np.isfinite(array) | (array < low) | (array > high)
        if bad.any():
            raise ModelFileError(
                f"conformal value {array[bad][0]!r} is outside what a {score} score can be"
            )
        return cls(score, array)


def default_score(model: Any) -> str:
    if model.task in ("binary", "multiclass"):
        return "lac"
    if distributions.parameter_names(model.loss) is not None:
        return "normalized"
    return "cqr" if model.quantile_levels is not None else "absolute"


def allowed_scores(model: Any) -> tuple[str, ...]:
    return ("lac", "aps") if model.task in ("binary", "multiclass") else (default_score(model),)


def calibrate(model: Any, calibration: Any, score: str | None) -> Calibration:
    """The scores of ``model`` on the ``calibration`` rows (with their target)."""
    kind = default_score(model) if score is None else score
    check_calibratable(model, kind)
    return Calibration(kind, scores(model, calibration, kind))


def check_calibratable(model: Any, kind: str) -> None:
    allowed = allowed_scores(model)
    if kind not in allowed:
        raise ParameterError(
            f"score {kind!r} does not fit the {model.loss!r} loss: use one of {allowed}"
        )
    if model.is_margin_loss or model.loss == "custom":
        raise ParameterError(
            f"the {model.loss!r} loss gives no response to calibrate: fit a probabilistic or "
            "regression loss"
        )
    if model.task == "survival" or model.spec.targets:
        raise ParameterError("conformal prediction takes one real or class target per row")


def scores(model: Any, frame: Any, kind: str) -> np.ndarray:
    """The ``kind`` scores of ``model`` on the rows of ``frame`` (with their target), in row
    order."""
    y = np.asarray(model.spec.target_values(frame), dtype=np.float64)
    if len(y) == 0:
        raise ParameterError("the calibration frame has no rows")
    if kind == "absolute":
        values = np.abs(y - model.predict(frame, type="response"))
    elif kind == "cqr":
        q = model.predict(frame).to_numpy()
        values = np.maximum(q[:, 0] - y, y - q[:, -1])
    elif kind == "normalized":
        center, spread = _center_and_spread(model, frame)
        values = np.abs(y - center) / spread
    else:
        p = class_probabilities(model, frame)
        rows = np.arange(len(y))
        label = y.astype(np.int64)
        values = 1.0 - p[rows, label] if kind == "lac" else _aps_mass(p)[rows, label]
    if not np.all(np.isfinite(values)):
        raise ParameterError("the model's predictions on the calibration rows are not finite")
    return values


def _center_and_spread(model: Any, newdata: Any) -> tuple[np.ndarray, np.ndarray]:
    """A distributional model's predicted means and standard deviations."""
    params = model.predict(newdata, type="distribution")
    values = params.select(distributions.parameter_names(model.loss)).to_numpy()
    return distributions.mean(model.loss, values), distributions.spread(model.loss, values)


def class_probabilities(model: Any, newdata: Any) -> np.ndarray:
    """(n, K) probabilities in the order of ``model.classes``."""
    p = np.asarray(model.predict(newdata, type="response"), dtype=np.float64)
    return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p


def _aps_mass(p: np.ndarray) -> np.ndarray:
    """For every class, the total probability of the classes at least as likely, itself
    included (ties count together, so the score does not depend on the classes' order)."""
    return np.sum(np.where(p[:, None, :] >= p[:, :, None], p[:, None, :], 0.0), axis=2)


def predict(model: Any, newdata: Any, type: str, level: Any) -> pl.DataFrame:
    calibration = model.conformal
    if calibration is None:
        raise ParameterError(
            f"type={type!r} needs a conformalized model: model.conformalize(calibration_frame)"
        )
    q = calibration.threshold(level)
    if type == "interval":
        if calibration.score == "absolute":
            center = np.asarray(model.predict(newdata, type="response"), dtype=np.float64)
            lower, upper = center - q, center + q
        elif calibration.score == "cqr":
            quantiles = model.predict(newdata).to_numpy()
            lower, upper = quantiles[:, 0] - q, quantiles[:, -1] + q
        elif calibration.score == "normalized":
            center, spread = _center_and_spread(model, newdata)
            lower, upper = center - q * spread, center + q * spread
        else:
            raise ParameterError("type='interval' is for regression; use type='set' for classes")
        return pl.DataFrame({"lower": lower, "upper": upper})
    if calibration.score not in ("lac", "aps"):
        raise ParameterError("type='set' is for classification; use type='interval'")
    p = class_probabilities(model, newdata)
    score = 1.0 - p if calibration.score == "lac" else _aps_mass(p)
    member = score <= q
    labels = model.classes
    sets = [[labels[k] for k in np.flatnonzero(row)] for row in member]
    return pl.DataFrame({"set": sets})


# Rows of new data per block when CV+ compares every new row with every calibration row.
_CV_PLUS_BLOCK_CELLS = 4_000_000


class CVPlus:
    """CV+ intervals (Barber, Candès, Ramdas & Tibshirani 2021, "Predictive inference with the
    jackknife+", §3): every row of the data is scored by the fold model that did not train on
    it, and a new row's interval is made of every fold model's prediction for it, widened by
    the scores of that model's own held-out rows.

    With n rows in K folds, α = 1 − level, R_i row i's score and μ̂₋ₖ₍ᵢ₎ the model of the fold
    that held i out, the interval of x is

        [ the ⌊α(n + 1)⌋-th smallest of μ̂₋ₖ₍ᵢ₎(x) − R_i,  the ⌈(1 − α)(n + 1)⌉-th smallest of
          μ̂₋ₖ₍ᵢ₎(x) + R_i ]

    (−∞ or +∞ where the rank falls outside 1..n). For ``Quantiles`` models the scores are CQR's
    and the lower (upper) end uses the fold model's lowest (highest) level; for distributional
    losses they are normalised, |y − μ|/σ, and R_i is scaled by the fold model's σ̂(x). Its coverage is at
    least 1 − 2α − min(2(1 − 1/K)/(n/K + 1), (1 − K/n)/(K + 1)) on exchangeable data (the
    paper's Theorem 4), and about ``level`` in practice.
    """

    def __init__(self, models: list[Any], fold_of: np.ndarray, scores: np.ndarray, score: str):
        self.models = models
        self.fold_of = np.asarray(fold_of, dtype=np.int64)
        self.scores = np.asarray(scores, dtype=np.float64)
        self.score = score

    @property
    def n(self) -> int:
        return len(self.scores)

    def predict(self, newdata: Any, type: str = "interval", level: Any = 0.9) -> pl.DataFrame:
        """A polars frame ``lower``, ``upper`` for the rows of ``newdata``."""
        if type != "interval":
            raise ParameterError(f"CV+ gives type='interval' only, not {type!r}")
        Calibration("absolute", [0.0]).threshold(level)  # the same check of ``level``
        alpha = 1.0 - float(level)
        lower_rank = math.floor(alpha * (self.n + 1) + 1e-12)
        upper_rank = math.ceil((1.0 - alpha) * (self.n + 1) - 1e-12)
        low, high, spread = [], [], []
        for model in self.models:
            unit = None
            if self.score == "cqr":
                q = model.predict(newdata).to_numpy()
                lo, hi = q[:, 0], q[:, -1]
            elif self.score == "normalized":
                lo, unit = _center_and_spread(model, newdata)
                hi = lo
            else:
                lo = hi = np.asarray(model.predict(newdata, type="response"), dtype=np.float64)
            low.append(lo)
            high.append(hi)
            spread.append(np.ones_like(lo) if unit is None else unit)
        # Column i of these: the prediction of the model that held row i out.
        low_by_row = np.column_stack(low)[:, self.fold_of]
        high_by_row = np.column_stack(high)[:, self.fold_of]
        spread_by_row = np.column_stack(spread)[:, self.fold_of]
        m = low_by_row.shape[0]
        lower, upper = np.full(m, -np.inf), np.full(m, np.inf)
        block = max(1, _CV_PLUS_BLOCK_CELLS // max(self.n, 1))
        for start in range(0, m, block):
            rows = slice(start, start + block)
            widths = spread_by_row[rows] * self.scores
            if lower_rank >= 1:
                values = low_by_row[rows] - widths
                lower[rows] = np.partition(values, lower_rank - 1, axis=1)[:, lower_rank - 1]
            if upper_rank <= self.n:
                values = high_by_row[rows] + widths
                upper[rows] = np.partition(values, upper_rank - 1, axis=1)[:, upper_rank - 1]
        return pl.DataFrame({"lower": lower, "upper": upper})


def cv_plus_scores(model: Any, held_out: Any) -> tuple[str, np.ndarray]:
    """A fold model's scores on its held-out rows, for CV+ (regression, quantile and
    distributional losses)."""
    if model.task in ("binary", "multiclass"):
        raise ParameterError(
            "cv(conformal=True) gives intervals for regression and Quantiles losses; for "
            "classes, conformalize a model on calibration rows: model.conformalize(frame)"
        )
    kind = default_score(model)
    check_calibratable(model, kind)
    return kind, scores(model, held_out, kind)
