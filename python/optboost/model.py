"""A trained model: prediction, training more, and reporting.

Its file format and checks live in :mod:`.model_files`, the history's columns in
:mod:`.history`, prediction's checks in :mod:`.prediction`, its summary and importance tables in
:mod:`.report`. Explaining, tree tables and export (:mod:`.explain`, :mod:`.trees`,
:mod:`.export`) read a model and never import this module: imports run one way.

Documentation: https://optboost.github.io/optboost/getting_started/
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import polars as pl

from . import _core, distributions
from .design_spec import DesignSpec
from .errors import ModelFileError, NotTrainableError, ParameterError
from .history import HISTORY_COLUMNS, HISTORY_SCHEMA, history_frame, metric_columns
from .model_files import SavedModel, entry_core, file_envelope, read_model, saved_model
from .offsets import offset_values
from .prediction import (
    PredictionType,
    checked_iteration,
    finished,
    is_margin,
    prediction_threads,
    prediction_type,
)
from .report import gain_importance, model_repr, model_summary
from .training import Callback, Progress, train

__all__ = ["HISTORY_COLUMNS", "HISTORY_SCHEMA", "Model", "is_margin", "load", "metric_columns"]

_UNCHANGED = object()  # update(): early_stopping_rounds not given


class Model:
    """A boosted model fitted by :func:`optboost.boost`.

    ``predict(newdata)`` selects the model's input columns by name; ``history``
    has one row per iteration; ``save``/``optboost.load`` and pickling keep
    everything needed to predict; ``update(n_iter)`` trains more while the
    model still holds its training state, or ``update(n_iter, data=frame)``
    on its training data given again (after loading too).

    Documentation: https://optboost.github.io/optboost/api/#optboost.model.Model
    """

    def __init__(
        self,
        core: Any,
        spec: DesignSpec,
        params: Mapping[str, str],
        history: Mapping[str, list],
        stop: tuple[str, str] | None,
        booster: Any = None,
        interrupted: bool = False,
    ):
        self._core = core
        self.spec = spec
        self.params = dict(params)
        self._history = {
            name: list(history.get(name, []))
            for name in (*HISTORY_COLUMNS, "restarted", *metric_columns(self.params))
        }
        self._stop = stop
        self._booster = booster
        self.interrupted = interrupted
        # Callable metrics of a model in training (optboost.metrics); not saved.
        self._callable_metrics: Any = None
        # The calibration scores of a conformalized model (optboost.conformal), saved.
        self.conformal: Any = None
        # How the loss was chosen when the fit was given none (optboost.plan.infer_loss), and
        # the cross-validation of a fit with cv.folds (optboost.CVResult); not saved.
        self.loss_note: str | None = None
        self.cv: Any = None

    @classmethod
    def _from_booster(cls, booster: Any, spec: DesignSpec, params: Mapping[str, str]) -> Model:
        model = cls(None, spec, params, {}, None, booster=booster)
        model._sync()  # takes the booster's model
        return model

    def _sync(self) -> None:
        """Take the booster's current model and history (after the history of the
        iterations it continued, if any)."""
        self._core = self._booster.model()
        self._history = dict(self._booster.history())
        earlier = getattr(self, "_earlier_history", None)
        if earlier:
            done = len(earlier["iteration"])
            self._history["iteration"] = [done + i for i in self._history["iteration"]]
            for name, values in earlier.items():
                new = list(self._history.get(name) or [None] * len(self._history["iteration"]))
                self._history[name] = list(values) + new
        if self._callable_metrics is not None:
            self._history.update(self._callable_metrics.columns)
        self._stop = self._booster.finished

    def _train(self, n_iter: int, progress: Progress, callback: Callback | None) -> None:
        metrics = self._callable_metrics
        if metrics is not None:
            user_callback = callback

            def callback(record: dict[str, Any]) -> Any:
                metrics.record(self._booster)
                return None if user_callback is None else user_callback(record)

        try:
            outcome = train(self._booster, n_iter, progress=progress, callback=callback)
            self.interrupted = outcome.interrupted
        finally:
            self._sync()

    # ------------------------------------------------------------------ facts

    @property
    def formula(self) -> str:
        return self.spec.formula

    @property
    def method(self) -> str:
        return self._core.method

    @property
    def loss(self) -> str:
        return self._core.loss

    @property
    def target_names(self) -> list[str]:
        """The target columns, one per output: ``predict`` gives an (n, K) array in this
        order for a formula ``y1 + y2 ~ ...``."""
        return self.spec.target_names

    @property
    def task(self) -> str:
        """ "regression", "binary" or "multiclass"."""
        return self.spec.task

    @property
    def classes(self) -> list[Any] | None:
        """Class labels in index order (binary: the second is the positive class)."""
        labels = self.spec.target_encoding.labels
        return None if labels is None else list(labels)

    @property
    def positive_class(self) -> Any:
        """The class whose probability ``predict`` returns for a binary target."""
        return self.spec.target_encoding.positive_class

    @property
    def feature_names(self) -> list[str]:
        return list(self._core.feature_names)

    @property
    def n_trees(self) -> int:
        return self._core.n_trees

    @property
    def n_iter(self) -> int:
        """Iterations trained (the model may keep an earlier best one)."""
        return len(self._history["iteration"])

    @property
    def best_iteration(self) -> int | None:
        """The iteration kept when it is not the last: after early stopping,
        divergence, or a momentum method whose loss rose after its best
        iteration. None when the model is the last iteration's."""
        return self._core.best_iteration

    @property
    def kept_iteration(self) -> int:
        """The iteration whose model ``predict`` uses (0: the initial constant)."""
        best = self.best_iteration
        return self.n_iter if best is None else best

    @property
    def stop_reason(self) -> str:
        if self.interrupted:
            return f"interrupted after {self.n_iter} iterations"
        if self._stop is None:
            return f"stopped after {self.n_iter} iterations"
        return self._stop[1]

    @property
    def history(self) -> pl.DataFrame:
        """One row per iteration: iteration, trees (after it), train_loss,
        valid_loss (null without validation data), cos_mean and cos_min (the
        cosine between target and fit over the iteration's trees), step, and
        seconds since training started, restarted (the safeguard undid the
        iteration, whose loss rose, and restarted the momentum) and kept (the
        iteration ``predict`` uses); then train_<metric> and valid_<metric> for
        each of the ``metrics``."""
        metrics = metric_columns(self.params)
        if self._callable_metrics is not None:
            metrics += self._callable_metrics.names()
        return history_frame(self._history, metrics, self.kept_iteration)

    # ------------------------------------------------------------------ prediction

    def predict(
        self,
        newdata: Any,
        type: PredictionType | None = None,
        iteration: int | None = None,
        *,
        by: str = "column",
        offset: Any = None,
        n_threads: int | None = None,
        level: float | None = None,
        quantiles: Any = None,
    ) -> Any:
        """Predictions for the rows of ``newdata`` (polars or pandas frame),
        whose columns are found by name.

        For a distributional loss ("normal", "lognormal", "gamma_dist",
        "negative_binomial", "student_t"): type="response" (the default) is the
        mean; type="distribution" a polars frame of the parameters by name
        (``mean``, ``sd``; ``meanlog``, ``sdlog``; else scipy.stats' names);
        type="quantile" with ``quantiles=[...]`` a frame of ``q<level>``
        columns; type="interval" with ``level`` the central interval of the
        distribution (``lower``, ``upper``), or the conformal one once the
        model is conformalized (optboost.distributions).

        For a ``Quantiles`` loss, type="response" (the default) is a polars
        frame with a column per level (``q0.05``, …), never crossing.
        type="interval" (regression) and type="set" (classification), with
        ``level`` (e.g. 0.9): conformal intervals (a polars frame ``lower``,
        ``upper``) or prediction sets (a frame with a list column ``set``) of a
        model made by ``conformalize`` (optboost.conformal).

        type=None (default): "response", except for the margin losses (hinge,
        multiclass_hinge), which give no probabilities: "link" (the margin).
        type="response": regression value; probability of the positive class
        (binary); (n, K) class probabilities (multiclass); refused for margin
        losses. type="link": the raw score(s).
        type="class": the predicted class label (classification only).
        type="contrib": exact SHAP contributions to the link score as a polars
        frame, one column per data column (by="feature": per model feature)
        plus ``bias``, each row summing to the link score (optboost.explain).
        type="interaction": SHAP interaction values, a numpy array (n, m+1, m+1).

        iteration=k: the model after k iterations (0: the initial constant),
        bit for bit the model of a fresh fit with n_iter=k (before that fit's
        choice of a best iteration), for k up to ``kept_iteration``; with
        type="contrib" or "interaction", that model explained (rows sum to its
        link score).

        offset: for a model fitted with an offset, the offset of these rows (a
        column name or an array, as at fit), added to the link.

        n_threads: threads of the prediction (0: all cores); by default the fit's
        ``n_threads``. The predictions do not depend on it. (The SHAP types run
        on all cores.)
        """
        distributional = distributions.parameter_names(self.loss) is not None
        if type == "set" or (type == "interval" and not (distributional and self.conformal is None)):
            from .conformal import predict as conformal_predict

            return conformal_predict(self, newdata, type, level)
        threads = prediction_threads(self.params, n_threads)
        if type in ("contrib", "interaction"):
            from .explain import predict_explained

            k = None if iteration is None else checked_iteration(self._core, self.n_iter, iteration)
            return predict_explained(self, newdata, type, by, k)
        wanted = type
        # A distribution's predictions all come from its parameters, the core's response.
        type = "response" if distributional and type != "link" else type
        type = prediction_type(self._core, self.task, type)
        columns = self.spec.columns(newdata)
        k = None if iteration is None else checked_iteration(self._core, self.n_iter, iteration)
        if offset is None:
            offset = self.spec.offset_column  # R's offset(column) term: read from newdata
        if offset is not None:
            link = self._core.predict(columns, k, threads)
            link = link + offset_values(offset, newdata, *link.shape).reshape(link.shape)
            scores = self._core.response(link) if type == "response" else link
        elif type == "response":
            scores = self._core.predict_response(columns, k, threads)
        else:
            scores = self._core.predict(columns, k, threads)
        if distributional and type == "response":
            return distributions.finished(self.loss, scores, wanted or "response", quantiles, level)
        return finished(scores, type, self.spec.target_encoding, self.quantile_levels)

    def conformalize(self, calibration: Any, *, score: str | None = None) -> Model:
        """This model with split-conformal calibration on the rows of
        ``calibration`` (a frame with the target, rows not used in training):
        ``predict(new, type="interval", level=0.9)`` (regression) or
        ``type="set"`` (classification) then covers the truth with probability
        at least ``level`` on exchangeable data. ``score``: "absolute" (point
        losses, the default), "cqr" (``Quantiles``, the default), "lac"
        (classification, the default) or "aps" (optboost.conformal)."""
        from .conformal import calibrate

        calibrated = Model(self._core, self.spec, self.params, self._history, self._stop)
        calibrated.interrupted = self.interrupted
        calibrated.conformal = calibrate(self, calibration, score)
        return calibrated

    @property
    def quantile_levels(self) -> list[float] | None:
        """The levels of a ``Quantiles`` model (one output each), else None."""
        return _core.loss_info(self.loss)["levels"]

    def staged_predict(
        self,
        newdata: Any,
        iterations: Any = None,
        type: PredictionType | None = None,
        *,
        n_threads: int | None = None,
    ) -> list[np.ndarray]:
        """``[predict(newdata, type, iteration=k) for k in iterations]``
        (iterations=None: 1, 2, …, kept_iteration), computed without refitting
        and with every tree evaluated once; ``n_threads`` as for ``predict``."""
        threads = prediction_threads(self.params, n_threads)
        type = prediction_type(self._core, self.task, type)
        if iterations is None:
            ks = list(range(1, self.kept_iteration + 1))
        else:
            ks = [checked_iteration(self._core, self.n_iter, k) for k in iterations]
        columns = self.spec.columns(newdata)
        stages = self._core.predict_staged(columns, ks, type == "response", threads)
        return [finished(scores, type, self.spec.target_encoding) for scores in stages]

    @property
    def is_margin_loss(self) -> bool:
        """Scores are margins with no probability behind them (hinge losses), or of a custom
        loss whose response is not known: predictions stay on the link scale."""
        return is_margin(self._core)

    # ------------------------------------------------------------------ importance

    def feature_importance(
        self,
        by: Literal["column", "feature"] = "column",
        *,
        kind: str = "gain",
        data: Any = None,
        n_repeats: int = 5,
        seed: int = 0,
        metric: Any = None,
    ) -> pl.DataFrame:
        """A frame of ``column`` (by="feature": ``feature``), ``importance`` and ``share``
        (of the total), largest first, for every kind.

        kind="gain": total split gain, with the number of ``splits`` too; by="column": per
        original data column, a feature built from several columns (an interaction, say)
        sharing its gain equally among them and counting its splits for each; by="feature":
        per model feature. kind="split", "cover", "shap" (needs data=) or "permutation" (needs
        data= with the target): optboost.explain.importance."""
        if kind != "gain":
            from .explain import importance

            return importance(self, kind, by, data, n_repeats, seed, metric)
        if by not in ("column", "feature"):
            raise ParameterError(f"by must be 'column' or 'feature', got {by!r}")
        names, gain, splits = self._core.feature_importance()
        return gain_importance(names, gain, splits, self.spec, by)

    # ------------------------------------------------------------------ training more

    def update(
        self,
        n_iter: int,
        *,
        data: Any = None,
        early_stopping_rounds: int | None | object = _UNCHANGED,
        progress: Progress = None,
        callback: Callback | None = None,
    ) -> Model:
        """Train ``n_iter`` more iterations on the original data (in place);
        returns the model.

        ``data``: train further on this frame instead (a loaded or unpickled
        model needs it), through the model's own formula and bin mappers. For
        gbm, rgbm and proximal, ``load(path).update(n, data=train)`` is the
        model of one fit with ``n`` more iterations, bit for bit; other methods
        carry state a model file does not hold and are refused.

        After early stopping, pass ``early_stopping_rounds`` (a new patience, or
        None for none) to train on from the last iterate; the best iterate seen
        so far remains the one to beat."""
        if not isinstance(n_iter, (int, np.integer)) or isinstance(n_iter, bool) or n_iter < 1:
            raise ParameterError(f"n_iter must be an integer >= 1, got {n_iter!r}")
        if data is not None:
            return self._continue_on(data, int(n_iter), progress, callback)
        if self._booster is None:
            raise NotTrainableError(
                "this model was loaded from a file or unpickled and no longer holds its "
                "training state; pass the training data again to train more: "
                "update(n_iter, data=frame)"
            )
        finished = self._booster.finished
        if finished is not None and finished[0] == "early_stopping":
            if early_stopping_rounds is _UNCHANGED:
                warnings.warn(
                    f"training cannot continue: {finished[1]}; pass update(n, "
                    "early_stopping_rounds=...) with a new patience (None: none) to train on",
                    UserWarning,
                    stacklevel=2,
                )
                return self
            _check_rounds(early_stopping_rounds)
            self._booster.continue_after_early_stopping(early_stopping_rounds)
            self.params.pop("early_stopping_rounds", None)
            if early_stopping_rounds is not None:
                self.params["early_stopping_rounds"] = str(early_stopping_rounds)
        elif finished is not None and finished[0] != "completed":
            warnings.warn(f"training cannot continue: {finished[1]}", UserWarning, stacklevel=2)
            return self
        # The core trains up to its n_iter; after an interruption it may already
        # allow more than the iterations done.
        target = self._booster.iteration + int(n_iter)
        allowed = int(self.params["n_iter"])
        if target > allowed:
            self._booster.extend(target - allowed)
            self.params["n_iter"] = str(target)
        self._train(int(n_iter), progress, callback)
        return self

    def _continue_on(
        self, data: Any, n_iter: int, progress: Progress, callback: Callback | None
    ) -> Model:
        from .continuation import continued_booster

        params = {k: v for k, v in self.params.items() if k != "early_stopping_rounds"}
        params["n_iter"] = str(n_iter)
        booster = continued_booster(self, data, params)
        self._earlier_history = {name: list(values) for name, values in self._history.items()}
        self._booster, self._callable_metrics, self._stop = booster, None, None
        self.params = params
        self._train(n_iter, progress, callback)
        return self

    # ------------------------------------------------------------------ text

    def __repr__(self) -> str:
        return model_repr(self)

    def summary(self) -> str:
        """A readable description: formula, method, target, stopping, losses,
        features and the most important columns."""
        return model_summary(self)

    # ------------------------------------------------------------------ plots

    def plot(self, path: str | os.PathLike | None = None, **kwargs: Any):
        """Learning curves: train/valid loss and cosine vs trees (matplotlib).
        Returns the figure; with ``path`` also saves it."""
        from .plot import plot_history

        return plot_history({self.method: self}, path=path, **kwargs)

    # ------------------------------------------------------------------ persistence

    def _envelope(self) -> dict[str, Any]:
        """Every entry of the file but the core model."""
        return file_envelope(
            self.spec, self.params, self._history, self._stop, self.interrupted, self.conformal
        )

    def to_dict(self) -> dict[str, Any]:
        """The model as one JSON-serialisable dict (what ``save`` writes)."""
        return {**self._envelope(), "model": json.loads(self._core.to_json())}

    def _file_text(self) -> str:
        # The core's JSON spliced in as the last entry, not parsed into Python objects and
        # written again: that round trip was most of the time of saving and pickling.
        envelope = json.dumps(self._envelope(), allow_nan=False)
        return f'{envelope[:-1]}, "model": {self._core.to_json()}}}'

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> Model:
        """Rebuild a model from what ``to_dict`` wrote (its "model" entry may also be the
        core model's JSON text, as in pickles). The dict is untrusted data: every part is
        checked, nothing it names is imported or called (your own formula functions come from
        ``context`` only), and every problem is a ModelFileError."""
        return cls._from_saved(saved_model(data, lambda: entry_core(data), context))

    @classmethod
    def _from_saved(cls, saved: SavedModel) -> Model:
        model = cls(*saved[:5], interrupted=saved.interrupted)
        if saved.conformal is not None:
            from .conformal import allowed_scores

            if saved.conformal.score not in allowed_scores(model):
                raise ModelFileError(
                    f"conformal score {saved.conformal.score!r} does not fit the loss "
                    f"{model.loss!r}"
                )
            model.conformal = saved.conformal
        if model.loss == "custom":
            warnings.warn(
                "this model was trained with a CustomLoss, whose functions are not saved: the "
                "loss is not restorable; the model predicts the link (type='link')",
                UserWarning,
                stacklevel=3,
            )
        return model

    def save(self, path: str | os.PathLike) -> None:
        """Write the model to one JSON file (read it back with optboost.load)."""
        text = self._file_text()
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)

    def __getstate__(self) -> dict[str, Any]:
        # Pickles hold the saved form only: no training state, no native objects. The core
        # model stays JSON text (what from_dict also reads): one string, not a tree of objects.
        return {**self._envelope(), "model": self._core.to_json()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        loaded = Model.from_dict(state)
        self.__dict__.update(loaded.__dict__)

    # ------------------------------------------------------------------ explaining (explain.py)

    def explain(self, newdata: Any, by: Literal["column", "feature"] = "column") -> Any:
        """A ``shap.Explanation`` of the link scores of ``newdata`` (needs shap)."""
        from .explain import explain

        return explain(self, newdata, by)

    def partial_dependence(
        self,
        newdata: Any,
        columns: str | list[str],
        grid: Any = None,
        kind: Literal["average", "individual"] = "average",
        type: Literal["response", "link"] = "response",
        grid_size: int = 20,
    ) -> pl.DataFrame:
        """Partial dependence (kind="average") or ICE curves (kind="individual")
        on one or two columns as a polars frame (optboost.explain)."""
        from .explain import partial_dependence

        return partial_dependence(self, newdata, columns, grid, kind, type, grid_size)

    def trees(self) -> pl.DataFrame:
        """Every node of every tree, one row each (optboost.trees)."""
        from .trees import trees_frame

        return trees_frame(self)

    def dump_trees(self, precision: int = 6) -> str:
        """The trees as indented text."""
        from .trees import dump_trees

        return dump_trees(self, precision)

    def to_onnx(self, path: str | os.PathLike | None = None) -> Any:
        """The model as an ONNX TreeEnsembleRegressor graph (optboost.export)."""
        from .export import to_onnx

        return to_onnx(self, path)

    def to_treelite(self) -> Any:
        """The model as a ``treelite.Model``, for tl2cgen (optboost.export)."""
        from .export import to_treelite

        return to_treelite(self)


def _check_rounds(rounds: Any) -> None:
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1
    ):
        raise ParameterError(f"early_stopping_rounds must be an integer >= 1 or None, got {rounds!r}")


def load(path: str | os.PathLike, *, context: Mapping[str, Any] | None = None) -> Model:
    """Read a model written by ``Model.save``. A model whose formula calls your
    own functions needs them again in ``context`` (a file cannot carry code).

    Documentation: https://optboost.github.io/optboost/api/#optboost.model.load
    """
    return Model._from_saved(read_model(path, context))
