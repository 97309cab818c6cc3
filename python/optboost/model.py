"""The trained model: prediction by column name, history, importance, plots,
one-file persistence and pickling, and continued training."""

from __future__ import annotations

import itertools
import json
import math
import numbers
import os
import stat
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import polars as pl

from . import _core
from .errors import (
    FormulaError,
    ModelFileError,
    ModelFileNotFoundError,
    NotTrainableError,
    OptboostError,
    ParameterError,
)
from .formula import DesignSpec
from .offsets import offset_values
from .training import Callback, Progress, train

FILE_FORMAT = "optboost-python-model"
FILE_VERSION = 1
# Far above any real model (a 3,000-tree depth-6 model is about 17 MB); bounds what a file can ask.
MAX_FILE_BYTES = 2 * 1024**3

# The history's columns and types come from the binding, which produces them.
_DTYPES = {"int64": pl.Int64, "float64": pl.Float64, "bool": pl.Boolean}
HISTORY_SCHEMA = {name: _DTYPES[kind] for name, kind in _core.HISTORY_SCHEMA}
# The columns of `Model.history` ("restarted" is shown through warnings and the plot instead).
HISTORY_COLUMNS = tuple(name for name in HISTORY_SCHEMA if name != "restarted")


def is_margin(core: Any) -> bool:
    """Whether the core model's link is a margin (the core's loss vocabulary says)."""
    return core.link[0] == "margin"


def metric_columns(params: Mapping[str, str]) -> list[str]:
    """The history columns of the ``metrics`` parameter: train_<name> and
    valid_<name> for each metric, in order."""
    names = [name.strip() for name in str(params.get("metrics", "")).split(",") if name.strip()]
    return [f"{side}_{name}" for name in names for side in ("train", "valid")]
_UNCHANGED = object()  # update(): early_stopping_rounds not given

PredictionType = Literal["response", "link", "class", "contrib", "interaction"]


class Model:
    """A boosted model fitted by :func:`optboost.boost`.

    ``predict(newdata)`` selects the model's input columns by name; ``history``
    has one row per iteration; ``save``/``optboost.load`` and pickling keep
    everything needed to predict; ``update(n_iter)`` trains more while the
    model still holds its training state, or ``update(n_iter, data=frame)``
    on its training data given again (after loading too).
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

    def _kept_text(self) -> str:
        kept = self.kept_iteration
        if kept == self.n_iter:
            return f"keeps the last iteration ({kept})"
        if kept == 0:
            return "keeps the initial constant (iteration 0, no trees)"
        stop = self._stop[0] if self._stop else None
        why = {
            "early_stopping": "best validation loss",
            "diverged": "best before divergence",
            "worker_lost": "the last iteration before a worker was lost",
        }.get(stop)
        if why is None:
            valid = [v for v in self._history["valid_loss"] if v is not None]
            why = "best validation loss" if valid else "best training loss"
        return f"keeps iteration {kept} of {self.n_iter} ({why})"

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
        columns = {name: self._history[name] for name in HISTORY_COLUMNS}
        n = len(columns["iteration"])
        restarted = list(self._history.get("restarted") or [])
        columns["restarted"] = restarted if len(restarted) == n else [False] * n
        kept = self.kept_iteration
        columns["kept"] = [i == kept for i in columns["iteration"]]
        metrics = metric_columns(self.params)
        if self._callable_metrics is not None:
            metrics += self._callable_metrics.names()
        for name in metrics:
            values = list(self._history.get(name) or [])
            columns[name] = values if len(values) == n else [None] * n
        schema = {**HISTORY_SCHEMA, "kept": pl.Boolean, **{name: pl.Float64 for name in metrics}}
        return pl.DataFrame(columns, schema=schema)

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
    ) -> Any:
        """Predictions for the rows of ``newdata`` (polars or pandas frame),
        whose columns are found by name.

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
        threads = self._prediction_threads(n_threads)
        if type in ("contrib", "interaction"):
            from .explain import predict_explained

            k = None if iteration is None else self._check_iteration(iteration)
            return predict_explained(self, newdata, type, by, k)
        type = self._check_type(type)
        columns = self.spec.columns(newdata)
        k = None if iteration is None else self._check_iteration(iteration)
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
        return self._finish(scores, type)

    def _prediction_threads(self, n_threads: int | None) -> int:
        """The thread count to predict with: the one given, else the fit's (0 when the model's
        parameters do not say; the core caps any count at the machine's cores)."""
        if n_threads is not None:
            integral = isinstance(n_threads, numbers.Integral) and not isinstance(n_threads, bool)
            if not integral or n_threads < 0:
                raise ParameterError(f"n_threads must be a count >= 0, not {n_threads!r}")
            return n_threads
        # A count of at most 10 digits (a loaded file's was checked by `_params`).
        text = str(self.params.get("n_threads", "0"))
        return int(text) if text.isdecimal() and text.isascii() and len(text) <= 10 else 0

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
        threads = self._prediction_threads(n_threads)
        type = self._check_type(type)
        if iterations is None:
            ks = list(range(1, self.kept_iteration + 1))
        else:
            ks = [self._check_iteration(k) for k in iterations]
        columns = self.spec.columns(newdata)
        stages = self._core.predict_staged(columns, ks, type == "response", threads)
        return [self._finish(scores, type) for scores in stages]

    @property
    def is_margin_loss(self) -> bool:
        """Scores are margins with no probability behind them (hinge losses), or of a custom
        loss whose response is not known: predictions stay on the link scale."""
        return is_margin(self._core)

    def _check_type(self, type: str | None) -> str:
        """The prediction type to use (None: the model's natural one), checked."""
        if type is None:
            return "link" if self.is_margin_loss else "response"
        if type == "response" and self.is_margin_loss:
            raise ParameterError(
                f"the {self.loss!r} loss gives margins, not probabilities: use type='link' "
                "(the margin, the default for this loss) or type='class'; for probabilities "
                "fit a probabilistic loss ('logistic', 'softmax')"
            )
        if type not in ("response", "link", "class"):
            raise ParameterError(
                "type must be 'response', 'link', 'class', 'contrib' or 'interaction', "
                f"got {type!r}"
            )
        if type == "class" and self.task == "regression":
            raise ParameterError(
                f"type='class' needs a classification loss; this model's loss is {self.loss!r}"
            )
        return type

    def _check_iteration(self, iteration: Any) -> int:
        if isinstance(iteration, bool) or not isinstance(iteration, (int, np.integer)):
            raise ParameterError(f"iteration must be an integer, got {iteration!r}")
        available = self._core.n_iterations
        if not 0 <= iteration <= available:
            if available == 0 and self.n_iter > 0:
                detail = "this model was saved without its per-iteration path"
            elif available < self.n_iter:
                detail = (
                    f"the model keeps iteration {available} of {self.n_iter}; the trees of "
                    "later iterations are not in it"
                )
            else:
                detail = f"the model has {available} iterations"
            raise ParameterError(f"iteration must be in 0..{available}, got {iteration} ({detail})")
        return int(iteration)

    def _finish(self, scores: np.ndarray, type: str) -> np.ndarray:
        if type == "class":
            if scores.shape[1] == 1:
                index = (scores[:, 0] > 0).astype(np.int64)
            else:
                index = np.argmax(scores, axis=1)
            return np.asarray(self.spec.target_encoding.decode(index))
        return scores[:, 0] if scores.shape[1] == 1 else scores

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
        """Total split gain and number of splits, largest gain first.

        by="column": per original data column; a feature built from several
        columns (an interaction, say) shares its gain equally among them and
        counts its splits for each. by="feature": per model feature.

        kind="split", "cover", "shap" (needs data=) or "permutation" (needs
        data= with the target) give a frame of importance and share instead
        (optboost.explain.importance)."""
        if kind != "gain":
            from .explain import importance

            return importance(self, kind, by, data, n_repeats, seed, metric)
        names, gain, splits = self._core.feature_importance()
        if by == "feature":
            table = pl.DataFrame(
                {"feature": names, "gain": gain, "splits": splits},
                schema={"feature": pl.String, "gain": pl.Float64, "splits": pl.Int64},
            )
        elif by == "column":
            sources = self.spec.source_columns
            totals: dict[str, list] = {c: [0.0, 0] for c in self.spec.input_columns}
            for name, g, s in zip(names, gain, splits):
                columns = sources.get(name) or (name,)
                for column in columns:
                    entry = totals.setdefault(column, [0.0, 0])
                    entry[0] += g / len(columns)
                    entry[1] += s
            table = pl.DataFrame(
                {
                    "column": list(totals),
                    "gain": [v[0] for v in totals.values()],
                    "splits": [v[1] for v in totals.values()],
                },
                schema={"column": pl.String, "gain": pl.Float64, "splits": pl.Int64},
            )
        else:
            raise ParameterError(f"by must be 'column' or 'feature', got {by!r}")
        total = table["gain"].sum()
        share = table["gain"] / total if total > 0 else table["gain"] * 0.0
        return table.with_columns(gain_share=share).sort(
            "gain", descending=True, maintain_order=True
        )

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
        # The losses of the model returned, not of the last iteration trained.
        losses = f"train loss {self._at_kept('train_loss')}"
        valid = self._at_kept("valid_loss")
        if valid != "-":
            losses += f", valid loss {valid}"
        return (
            f"<optboost.Model {self.method}/{self.loss} {self.formula!r}: "
            f"{self.n_iter} iterations, {self._kept_text()}, {self.n_trees} trees, {losses}>"
        )

    def _at_kept(self, column: str) -> str:
        kept = self.kept_iteration
        values = self._history[column]
        if kept == 0 and self.n_iter:
            return "of the initial constant (not recorded)"
        if kept == self.n_iter or not 0 < kept <= len(values) or values[kept - 1] is None:
            return self._last(column)
        return f"{values[kept - 1]:.5g}"

    def _last(self, column: str) -> str:
        values = [v for v in self._history[column] if v is not None]
        return f"{values[-1]:.5g}" if values else "-"

    def summary(self) -> str:
        """A readable description: formula, method, target, stopping, losses,
        features and the most important columns."""
        spec = self.spec
        lines = [f"optboost model  {self.formula}"]
        target = f"target {spec.target!r} ({self.task}"
        if self.task == "binary":
            target += f"; positive class {self.positive_class!r}"
        elif self.task == "multiclass":
            target += f"; {len(self.classes)} classes"
        lines.append(f"  method {self.method}, loss {self.loss}, {target})")
        lines.append(f"  {self.n_iter} iterations, {self.n_trees} trees; {self.stop_reason}")
        lines.append(f"  the model {self._kept_text()}")
        if self.n_iter:
            first = self._history["train_loss"][0]
            kept = self.kept_iteration
            if 0 < kept < self.n_iter:
                lines.append(
                    f"  train loss {self._at_kept('train_loss')} at the kept iteration {kept} "
                    f"(after iteration 1: {first:.5g}; after the last, {self.n_iter}: "
                    f"{self._last('train_loss')})"
                )
            else:
                lines.append(
                    f"  train loss {self._last('train_loss')} (after iteration 1: {first:.5g})"
                )
            restarts = sum(bool(r) for r in self._history.get("restarted") or [])
            if restarts:
                lines.append(
                    f"  safeguard: {restarts} iterations undone (training or validation loss rose), "
                    "momentum restarted"
                )
            if self._last("valid_loss") != "-":
                valid = [v for v in self._history["valid_loss"] if v is not None]
                best = int(np.argmin(valid)) + 1
                lines.append(
                    f"  valid loss {self._last('valid_loss')} (best {min(valid):.5g} "
                    f"at iteration {best})"
                )
        lines.append(f"  {len(self.feature_names)} features from {len(spec.input_columns)} columns")
        importance = self.feature_importance().head(5)
        if self.n_trees and importance["gain"].sum() > 0:
            top = ", ".join(
                f"{c} {s:.0%}" for c, s in zip(importance["column"], importance["gain_share"])
            )
            lines.append(f"  top columns by gain: {top}")
        shown = {k: v for k, v in self.params.items() if k not in ("method", "loss")}
        lines.append("  parameters: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
        return "\n".join(lines)

    # ------------------------------------------------------------------ plots

    def plot(self, path: str | os.PathLike | None = None, **kwargs: Any):
        """Learning curves: train/valid loss and cosine vs trees (matplotlib).
        Returns the figure; with ``path`` also saves it."""
        from .plot import plot_history

        return plot_history({self.method: self}, path=path, **kwargs)

    # ------------------------------------------------------------------ persistence

    def _envelope(self) -> dict[str, Any]:
        """Every entry of the file but the core model."""
        return {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "optboost_version": _core.__version__,
            "formula": self.formula,
            "params": self.params,
            "design": self.spec.to_dict(),
            "history": {
                name: [_finite_or_none(v) for v in values] for name, values in self._history.items()
            },
            "stop": None if self._stop is None else list(self._stop),
            "interrupted": self.interrupted,
        }

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

        def core() -> Any:
            model_json = data["model"]
            if isinstance(model_json, str):
                return _core.CoreModel.from_json(model_json)
            if not isinstance(model_json, Mapping):
                raise ModelFileError("the file's 'model' entry is not an object")
            return _core.CoreModel.from_json(json.dumps(model_json, allow_nan=False))

        return cls._from_file_data(data, core, context)

    @classmethod
    def _from_file_data(
        cls, data: Mapping[str, Any], core_of: Any, context: Mapping[str, Any] | None
    ) -> Model:
        """The checks of every entry of a file, ``core_of()`` giving the core model (built
        from the "model" entry, or by ``load`` already)."""
        if not isinstance(data, Mapping) or data.get("format") != FILE_FORMAT:
            raise ModelFileError(f'not an optboost model file (no "format": "{FILE_FORMAT}" entry)')
        if data.get("version") != FILE_VERSION:
            raise ModelFileError(
                f"model file version {_number_text(data.get('version'))}; this optboost reads "
                f"version {FILE_VERSION}"
            )
        try:
            core = core_of()
            _check_level_counts(core, data["design"])
            spec = DesignSpec.from_dict(data["design"], context=context)
            _check_agreement(core, spec)
            params = _params(data.get("params"))
            model = cls(
                core,
                spec,
                params,
                _history(data.get("history"), metric_columns(params)),
                _stop(data.get("stop")),
                interrupted=data.get("interrupted", False) is True,
            )
        except ModelFileError:
            raise
        except FormulaError as error:
            raise ModelFileError(f"model file: {error}") from None
        except OptboostError as error:
            raise ModelFileError(str(error)) from None
        except (Exception, RecursionError) as error:  # noqa: BLE001 - a file can hold anything
            raise ModelFileError(
                f"malformed optboost model file ({type(error).__name__}: {_short(error)})"
            ) from None
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


def _finite_or_none(value: Any) -> Any:
    # strict JSON has no NaN or infinity; they read back as nulls
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load(path: str | os.PathLike, *, context: Mapping[str, Any] | None = None) -> Model:
    """Read a model written by ``Model.save``. A model whose formula calls your
    own functions needs them again in ``context`` (a file cannot carry code)."""
    raw = _read_file(path)
    # The fast path: the core parses the whole file once, builds and validates its model, and
    # hands back the other entries (formula, design, history: small) as JSON text.
    try:
        core, entries = _core.CoreModel.from_file_json(raw)
        data = {name: json.loads(text) for name, text in entries}
    except (OptboostError, ValueError, RecursionError):
        # Whatever the core refuses is read as before, so that the error says why in the same
        # words (and what Python's json reads and the core's does not, such as repeated keys
        # or NaN in the history, still loads, and is checked the same way).
        pass
    else:
        return Model._from_file_data(data, lambda: core, context)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise ModelFileError(
            f"{os.fspath(path)} is not an optboost model file: {_short(error)}"
        ) from None
    return Model.from_dict(data, context=context)


def _read_file(path: str | os.PathLike) -> bytes:
    """The bytes of the model file at ``path``: a regular file of at most MAX_FILE_BYTES,
    checked on the opened file before anything is read (a device such as /dev/zero never
    ends; a FIFO would block until some writer came, so it is opened without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ModelFileNotFoundError(f"no model file at {os.fspath(path)!r}") from None
    except (OSError, TypeError, ValueError) as error:
        raise ModelFileError(f"cannot read model file {path!r}: {error}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ModelFileError(
                f"{os.fspath(path)} is not a regular file (a directory, device, FIFO or socket "
                "is not a model file)"
            )
        if status.st_size > MAX_FILE_BYTES:
            raise ModelFileError(
                f"{os.fspath(path)} is {status.st_size} bytes; model files are at most "
                f"{MAX_FILE_BYTES}"
            )
        with open(fd, "rb", closefd=False) as file:
            # At most one byte more than allowed: the file may have grown since fstat.
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ModelFileError(f"cannot read model file {os.fspath(path)!r}: {error}") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        raise ModelFileError(f"{os.fspath(path)} is larger than {MAX_FILE_BYTES} bytes")
    return raw


def _short(error: BaseException, limit: int = 300) -> str:
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."


# Far above any machine's cores (the core caps a count at the cores it has): bounds the
# integer a file's n_threads may hold before it reaches the core's unsigned count.
MAX_FILE_THREADS = 2**31 - 1


def _params(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ModelFileError("the file's 'params' must map names to text values")
    # The one count predict reads from the file (the fit's thread count).
    threads = value.get("n_threads", "0")
    if not (threads.isdecimal() and threads.isascii() and len(threads) <= 10) or (
        int(threads) > MAX_FILE_THREADS
    ):
        raise ModelFileError(
            f"the file's n_threads is {_short_text(threads)!r}; allowed a count from 0 to "
            f"{MAX_FILE_THREADS}"
        )
    return dict(value)


def _number_text(value: Any) -> str:
    """``repr`` of a value read from a file, with an integer of more than 16 digits written
    as the float it is closest to (1e+308, not 309 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**16:
        try:
            return repr(float(value))
        except OverflowError:
            return f"an integer of {len(str(abs(value)))} digits"
    return _short_text(repr(value))


def _short_text(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _history(value: Any, metric_names: list[str]) -> dict[str, list]:
    if not isinstance(value, Mapping):
        raise ModelFileError("the file's 'history' must be an object of columns")
    columns = {}
    for name in (*HISTORY_COLUMNS, *metric_names):
        column = value.get(name, [])
        if not isinstance(column, list) or not all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in column
        ):
            raise ModelFileError(f"history column {name!r} must be a list of numbers")
        columns[name] = column
    if len({len(c) for c in columns.values()}) > 1:
        raise ModelFileError("the history columns differ in length")
    restarted = value.get("restarted", [])
    if not isinstance(restarted, list) or not all(isinstance(v, bool) for v in restarted):
        raise ModelFileError("history column 'restarted' must be a list of booleans")
    columns["restarted"] = restarted
    return columns


def _stop(value: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise ModelFileError("the file's 'stop' must be null or two strings")
    return value[0], value[1]


def _check_agreement(core: Any, spec: DesignSpec) -> None:
    """The core model and the formula's design must describe the same model."""
    # The columns the core reads: a categorical column's target statistics (one feature per
    # class for a multiclass loss) read that one column.
    read = _columns_read(core)
    if [name for name, _ in read] != spec.feature_names:
        raise ModelFileError("the model's features and its formula's features differ")
    # The design codes a categorical column by its levels and the core maps those codes: the
    # two must agree on every feature's kind and level count, or predict would fail on data.
    for feature, (_, core_levels) in zip(spec.features, read):
        design_levels = feature.n_levels if feature.kind == "categorical" else None
        if design_levels != core_levels:
            raise ModelFileError(
                f"feature {feature.name!r} is {_kind_text(design_levels)} in the formula's "
                f"design but {_kind_text(core_levels)} in the model"
            )
    task = _core.loss_task(core.loss)
    encoding = spec.target_encoding
    if encoding.task != task:
        raise ModelFileError(f"the loss {core.loss!r} is for {task}, the target for {encoding.task}")
    if spec.targets:
        if core.n_outputs != len(spec.targets) or core.loss != "multi_squared":
            raise ModelFileError(
                f"the model has {core.n_outputs} outputs of the {core.loss!r} loss for the "
                f"{len(spec.targets)} targets {list(spec.targets)}"
            )
        return
    expected_outputs = encoding.n_classes if task == "multiclass" else 1
    if core.n_outputs != expected_outputs:
        raise ModelFileError(
            f"the model has {core.n_outputs} outputs for a {task} target with "
            f"{encoding.n_classes} classes"
        )


def _check_level_counts(core: Any, design: Any) -> None:
    """The design's level lists against the core's mappers, by length only, before the
    design's checks read each level: a list far longer than the model maps (10^6 levels in
    15 MB) is refused at once. ``_check_agreement`` checks kinds and counts in full."""
    features = design.get("features") if isinstance(design, Mapping) else None
    if not isinstance(features, list):
        return  # the design's own checks say what is wrong
    for feature, (_, core_levels) in zip(features, _columns_read(core)):
        levels = feature.get("levels") if isinstance(feature, Mapping) else None
        if isinstance(levels, list) and len(levels) != core_levels:
            raise ModelFileError(
                f"feature {_short_text(repr(feature.get('name')))} is "
                f"{_kind_text(len(levels))} in the formula's design but "
                f"{_kind_text(core_levels)} in the model"
            )


def _columns_read(core: Any) -> list[tuple[str, int | None]]:
    """The columns the core reads, in order, each with the level count of its mapper or of its
    target statistics (the same for every feature read from that column), None for a numeric
    one."""
    by_column = itertools.groupby(
        zip(core.feature_sources, core.feature_levels), key=lambda pair: pair[0]
    )
    return [next(features) for _, features in by_column]


def _kind_text(levels: int | None) -> str:
    return "numeric" if levels is None else f"categorical with {levels} levels"
