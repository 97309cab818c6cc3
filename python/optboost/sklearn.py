"""scikit-learn estimators: :class:`BoostRegressor` and :class:`BoostClassifier`.

They take numpy arrays, pandas and polars frames, through the formula front
end's column pipeline (``optboost.formula.feature_columns``): a frame is read as
``boost("y ~ .", frame)`` reads it, by column name, string, Categorical and Enum
columns as native categorical features (level maps learnt in ``fit``), numeric
columns without a copy; a matrix is validated by scikit-learn as float64 (NaN =
missing) and its columns x0, x1, ... reach the core in place, in C or Fortran
order. A scipy.sparse matrix (CSR, CSC; other formats converted to CSC) is binned
from its stored values, never densified: rows not stored are 0.0, a stored NaN
is missing, and the model is the one the dense matrix gives, bit for bit.

Documentation: https://optboost.github.io/optboost/explain/#scikit-learn
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from ._extras import missing

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
except ImportError as error:
    raise missing("sklearn", "optboost.sklearn") from error

from . import _core, distributions
from .class_weights import class_weight_values
from .constraints import constraint_params
from .errors import DataError, ParameterError
from .formula import (
    DesignSpec,
    Feature,
    FeatureBlock,
    FeatureColumn,
    feature_columns,
    frame_features,
    matrix_block,
    matrix_features,
)
from .features import is_sparse, sparse_block
from .holdout import LEFT_OUT, TRAINS, VALIDATES
from .frames import TargetEncoding, to_polars
from .groups import group_codes, is_ranking, ranking_target
from .losses import CustomLoss, loss_text
from .model import HISTORY_SCHEMA, Model, is_margin
from .params import param_pairs
from .plan import DEFAULTS, FIT_ARGUMENTS, R_NAMES, FitPlan
from .training import train


# scipy.sparse formats taken as they are; scikit-learn converts the others (COO, LIL, ...) to
# the first, CSC, the layout the core reads.
_SPARSE_FORMATS = ("csc", "csr")


def _is_frame(X: Any) -> bool:
    module = type(X).__module__.split(".")[0]
    return module in ("pandas", "polars") and hasattr(X, "columns")


class _BoostEstimator(BaseEstimator):
    """Shared parameters, column handling, training and pickling."""

    def __init__(
        self,
        method: str | None = None,
        loss: Any = None,
        n_iter: int | None = None,
        learning_rate: float | None = None,
        max_depth: int | None = None,
        params: dict | None = None,
        random_state: int | None = 0,
        n_threads: int | None = None,
        progress: bool | None = None,
        early_stopping_rounds: int | None = None,
        validation_fraction: float | str | None = "auto",
        subsample: float | None = None,
        colsample_bytree: float | None = None,
        colsample_bynode: float | None = None,
        monotone: dict | None = None,
        interactions: list | None = None,
        n_estimators: int | None = None,
        warm_start: bool = False,
    ):
        self.method = method
        self.loss = loss
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.params = params
        self.random_state = random_state
        self.n_threads = n_threads
        self.progress = progress
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.colsample_bynode = colsample_bynode
        self.monotone = monotone
        self.interactions = interactions
        self.n_estimators = n_estimators
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.sparse = True
        if isinstance(self, RegressorMixin):
            tags.target_tags.multi_output = True
        return tags

    # ---------------------------------------------------------------- columns

    def _fit_columns(self, X: Any, y: Any) -> tuple[list[FeatureColumn | FeatureBlock], np.ndarray]:
        """Feature columns of the training data and y as an array; learns the features
        (names, kinds, levels) through the formula front end's column pipeline, as
        ``boost("y ~ .", frame)`` does: a frame's columns by name (categorical ones with their
        level maps), a matrix's as numeric x0, x1, ... read in place."""
        if _is_frame(X):
            # Names and column count only (skip_check_array): the columns go to the core as
            # they are, with no float copy of the frame.
            validate_data(self, X, skip_check_array=True)
            frame = to_polars(X)
            self._features_ = frame_features(frame)
            self._fitted_on_frame_ = True
            y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
            if y.ndim == 2 and y.shape[1] == 1:
                y = y[:, 0]
            # A regressor takes a 2-D y (n, K): one output per column.
            dims = (1, 2) if isinstance(self, RegressorMixin) else (1,)
            if y.ndim not in dims or len(y) != frame.height:
                raise DataError(
                    f"y must have one value per row of X ({frame.height}); got shape {y.shape}"
                )
            if frame.height == 0:
                raise DataError(f"X has no rows (columns: {frame.columns[:30]})")
            return feature_columns(frame, self._features_), y
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=_SPARSE_FORMATS,
            dtype=np.float64,
            order=None,  # C or F order, as given: the core reads either in place
            ensure_all_finite=False,  # checked by _check_no_infinity, in blocks
            y_numeric=isinstance(self, RegressorMixin),
            multi_output=isinstance(self, RegressorMixin),
        )
        if not is_sparse(X):
            _check_no_infinity(X)
        self._features_ = matrix_features([f"x{j}" for j in range(X.shape[1])])
        self._fitted_on_frame_ = False
        return self._matrix_columns(X), y

    def _predict_columns(self, X: Any) -> list[FeatureColumn | FeatureBlock]:
        check_is_fitted(self)
        if self._fitted_on_frame_ and _is_frame(X):
            validate_data(self, X, skip_check_array=True, reset=False)
            return feature_columns(to_polars(X), self._features_)
        if any(f.kind == "categorical" for f in self._features_):
            raise DataError(
                f"{type(self).__name__} was fitted on a frame with categorical columns; "
                "predict needs a pandas or polars frame with the same column names"
            )
        # A matrix, or a frame given to a model fitted on a matrix, is taken by position.
        X = validate_data(
            self,
            X,
            reset=False,
            accept_sparse=_SPARSE_FORMATS,
            dtype=np.float64,
            order=None,
            ensure_all_finite=False,
        )
        if not is_sparse(X):
            _check_no_infinity(X)
        return self._matrix_columns(X)

    def _matrix_columns(self, X: Any) -> list[FeatureBlock]:
        """A matrix's columns in one block: a dense one read in place, a scipy.sparse one
        binned from its stored values (never densified)."""
        names = [f.name for f in self._features_]
        return [sparse_block(names, X) if is_sparse(X) else matrix_block(names, X)]

    # ---------------------------------------------------------------- training

    def _constraint_settings(self) -> dict[str, Any]:
        """monotone and interactions by column name (or index) -> the core's
        JSON by feature name."""
        names = [f.name for f in self._features_]
        # A frame's column names, also when its columns reach the core as x0, x1, ...
        given_names = [str(n) for n in getattr(self, "feature_names_in_", names)]

        def name_of(key: Any) -> str:
            if isinstance(key, str) and key in given_names:
                key = given_names.index(key)
            if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
                if not 0 <= key < len(names):
                    raise ParameterError(f"column index {key} out of range (X has {len(names)})")
                return names[key]
            return str(key)

        given = {}
        if self.monotone is not None:
            monotone = self.monotone
            if isinstance(monotone, Mapping):
                monotone = {name_of(k): v for k, v in monotone.items()}
            given["monotone"] = monotone
        if self.interactions is not None:
            groups = self.interactions
            if not isinstance(groups, str):
                groups = [[name_of(k) for k in group] for group in groups]
            given["interactions"] = groups
        return constraint_params(given, self._features_)

    def _plan(self, loss: Any, group: Any = None) -> FitPlan:
        """The fit's plan: the estimator's parameters, those in ``params``, the loss and the
        query groups of a ranking loss."""
        return FitPlan.make({**self._arguments(loss), "group": group}, callable_metrics=False)

    def _arguments(self, loss: Any) -> dict[str, Any]:
        """The fit's arguments as ``optboost.boost`` takes them (constraints aside): the
        estimator's parameters, those in ``params`` and the loss."""
        settings = dict(self.params or {})
        own = {
            "subsample": self.subsample,
            "colsample_bytree": self.colsample_bytree,
            "colsample_bynode": self.colsample_bynode,
        }
        clash = {"method", "loss", "n_iter", "learning_rate", "max_depth", "seed", "n_threads"}
        clash |= {name for name, value in own.items() if value is not None}
        clash |= {"monotone", "interactions", *FIT_ARGUMENTS}
        given = clash & {R_NAMES.get(name, name) for name in settings}
        if given:
            raise ParameterError(
                f"set {sorted(given)} through the estimator's own parameters, not params="
            )
        settings.update(
            method=self.method,
            loss=loss,
            n_iter=self._n_iter(),
            learning_rate=self.learning_rate,
            max_depth=self.max_depth,
            seed=0 if self.random_state is None else self.random_state,
            n_threads=self.n_threads,
            validation_fraction=self.validation_fraction,
            early_stopping_rounds=self.early_stopping_rounds,
            progress=self.progress,
        )
        settings.update({name: value for name, value in own.items() if value is not None})
        return settings

    def _n_iter(self) -> int | None:
        """n_iter, or scikit-learn's name for it, n_estimators."""
        if self.n_estimators is not None and self.n_iter is not None:
            raise ParameterError(
                "n_estimators is scikit-learn's name for n_iter: pass one of them"
            )
        return self.n_iter if self.n_estimators is None else self.n_estimators

    def _train(self, columns, y, sample_weight, loss: Any, valid=None, groups=None) -> None:
        """valid: None, or (columns, y) of validation data, y already encoded; groups: the
        query group codes of a ranking loss (its target then goes to the core with them)."""
        plan = self._plan(loss, groups)
        target = y if groups is None else ranking_target(y, groups)
        if self._warm_continued(plan, target):
            return
        constraints = self._constraint_settings()
        pairs = plan.pairs + (param_pairs(constraints) if constraints else [])
        y = np.ascontiguousarray(y, dtype=np.float64)
        weights = None
        roles = None  # what each row is for (holdout.TRAINS, ...); None: every row trains
        if sample_weight is not None:
            weights = np.ascontiguousarray(_check_sample_weight(sample_weight, y), dtype=np.float64)
            if (weights == 0).any():
                # Rows of weight 0 would still shape the bin thresholds; scikit-learn
                # expects them to act as if absent.
                roles = np.where(weights > 0, TRAINS, LEFT_OUT).astype(np.uint8)
        if valid is None:
            stratify = isinstance(self, ClassifierMixin)
            roles = plan.row_roles(y, stratify=stratify, roles=roles, groups=groups)
        plan.check_validation(
            valid is not None or (roles is not None and (roles == VALIDATES).any()),
            "pass fit(..., eval_set=(X_valid, y_valid)) or set validation_fraction",
        )
        # A 2-D target (n, K) goes to the core row-major, n × K values.
        y = np.ascontiguousarray(target).ravel()
        valid_args = (None, None, None)
        if valid is not None:
            valid_y = np.ascontiguousarray(valid[1], dtype=np.float64).ravel()
            valid_args = (valid[0], valid_y, None)
        booster = plan.booster(
            pairs, columns, y, weights=weights, valid=valid_args, row_roles=roles
        )
        self._params_ = dict(pairs)
        self._booster_ = booster
        self._fit_y_ = y
        train(booster, plan.n_iter, progress=self.progress)
        self._take_booster()
        if not self.warm_start:
            del self._booster_, self._fit_y_  # its training state (the bins, the per-row vectors)

    def _warm_continued(self, plan: FitPlan, y: Any) -> bool:
        """With warm_start and a kept booster: trains it on to plan.n_iter iterations, as
        scikit-learn's warm start adds estimators, and returns True. The booster holds the
        first fit's data (binned), so the data must be the same."""
        booster = getattr(self, "_booster_", None)
        if not self.warm_start or booster is None:
            return False
        kept_y = self._fit_y_
        if kept_y.shape != np.ravel(y).shape or not np.array_equal(kept_y, np.ravel(y)):
            raise DataError(
                "warm_start continues training on the data of the first fit (the booster holds "
                "it binned); this y differs. Fit with warm_start=False to train anew"
            )
        done = booster.iteration
        if plan.n_iter < done:
            raise ParameterError(
                f"warm_start: n_iter={plan.n_iter} is below the {done} iterations already "
                "trained; set n_iter (or n_estimators) to at least that"
            )
        if plan.n_iter > int(self._params_["n_iter"]):
            booster.extend(plan.n_iter - int(self._params_["n_iter"]))
            self._params_["n_iter"] = str(plan.n_iter)
        train(booster, plan.n_iter - done, progress=self.progress)
        self._take_booster()
        return True

    def _take_booster(self) -> None:
        """The fitted attributes from the booster."""
        booster = self._booster_
        self.core_model_ = booster.model()
        self._stop_ = booster.finished
        history = dict(booster.history())
        metrics = [name for name in history if name not in HISTORY_SCHEMA]
        self.history_ = pl.DataFrame(
            history, schema={**HISTORY_SCHEMA, **{name: pl.Float64 for name in metrics}}
        )
        self.n_iter_ = booster.iteration

    @property
    def model_(self) -> Model:
        """The fitted model as an ``optboost.Model`` (``explain``, ``partial_dependence``,
        ``to_onnx``, ``save``, ``summary``): it reads frames with the columns of X (x0, x1,
        ... for a matrix); the target is named y."""
        check_is_fitted(self)
        fitted = self.__dict__.get("_model_")  # optboost.dask's estimators keep theirs
        if fitted is not None:
            return fitted
        names = [f.name for f in self._features_]
        n_targets = getattr(self, "n_targets_", 1)
        targets = tuple(f"y{k}" for k in range(n_targets)) if n_targets > 1 else ()
        if isinstance(self, ClassifierMixin):
            task = _core.loss_task(self.core_model_.loss)
            labels = tuple(label.item() if hasattr(label, "item") else label
                           for label in self.classes_)
            encoding = TargetEncoding(task, labels)
        else:
            encoding = TargetEncoding("regression")
        spec = DesignSpec(
            formula=f"{' + '.join(targets) or 'y'} ~ {' + '.join(names)}",
            target="y",
            target_encoding=encoding,
            features=tuple(self._features_),
            targets=targets,
        )
        params = getattr(self, "_params_", None) or {
            "method": self.core_model_.method, "loss": self.core_model_.loss
        }
        history = self.history_.to_dict(as_series=False)
        return Model(self.core_model_, spec, params, history, getattr(self, "_stop_", None))

    def staged_predict(self, X: Any):
        """The predictions after each iteration 1, 2, ... up to the one the model keeps
        (n_iter_ unless early stopping or a momentum method kept an earlier one): a generator,
        as scikit-learn's gradient boosting gives, every tree evaluated once."""
        check_is_fitted(self)
        columns = self._predict_columns(X)
        model = self.core_model_
        iterations = list(range(1, model.n_iterations + 1))
        response = self._staged_response()
        stages = model.predict_staged(columns, iterations, response, self._threads())
        for scores in stages:
            yield self._finish_scores(np.asarray(scores))

    def _threads(self) -> int:
        return 0 if self.n_threads is None else self.n_threads

    def _scores(self, X: Any, response: bool) -> np.ndarray:
        columns = self._predict_columns(X)
        model = self.core_model_
        predict = model.predict_response if response else model.predict
        return predict(columns, None, self._threads())

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total split gain per input feature, normalised to sum to 1."""
        check_is_fitted(self)
        gain = np.asarray(self.core_model_.feature_importance()[1], dtype=np.float64)
        total = gain.sum()
        return gain / total if total > 0 else gain

    # ---------------------------------------------------------------- pickling

    def __getstate__(self):
        state = super().__getstate__()
        if "core_model_" in state or "_booster_" in state:
            state = dict(state)
            # The training state of a warm start is not kept: an unpickled estimator fits anew.
            state.pop("_booster_", None)
            state.pop("_fit_y_", None)
            if "core_model_" in state:
                state["core_model_"] = state["core_model_"].to_json()
        return state

    def __setstate__(self, state):
        if isinstance(state.get("core_model_"), str):
            state = dict(state)
            state["core_model_"] = _core.CoreModel.from_json(state["core_model_"])
        if "_layout_" in state:
            state = _from_layout(dict(state))
        super().__setstate__(state)


class BoostRegressor(RegressorMixin, _BoostEstimator):
    """Boosted regression trees with any optboost method.

    loss: None (squared), "absolute", "huber(1.0)", optboost.Pinball(0.9), ...
    subsample, colsample_bytree, colsample_bynode: fractions of the rows per
        tree, of the features per tree and of the tree's features per node
        (stochastic gradient boosting; None: all).
    monotone: {column: 1 or -1} (column names of a frame, or indices),
        predictions increasing / decreasing in that column.
    interactions: [[columns], ...], the columns that may share a
        root-to-leaf path (a column in no group is used alone).
    validation_fraction: without eval_set, the fraction of the rows held out
        as validation data; "auto" holds out 0.1 for the momentum methods
        only (as ``optboost.boost`` does), None none.
    params: any other training parameter by name, e.g. ``{"gamma": 0.3}``.
    """

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, eval_set: Any = None
    ) -> BoostRegressor:
        """eval_set: (X_valid, y_valid) for the history and early stopping."""
        loss = loss_text(self.loss if self.loss is not None else DEFAULTS["loss"])
        if _core.loss_task(loss) != "regression":
            raise ParameterError(f"BoostRegressor needs a regression loss; got {loss!r}")
        columns, y = self._fit_columns(X, y)
        y = _finite_target(y)
        loss = _loss_for_target(loss, y)
        self.n_targets_ = 1 if y.ndim == 1 else y.shape[1]
        valid = None
        if eval_set is not None:
            X_valid, y_valid = _pair(eval_set)
            y_valid = _finite_target(y_valid)
            if (1 if y_valid.ndim == 1 else y_valid.shape[1]) != self.n_targets_:
                raise DataError(
                    f"eval_set's y has shape {y_valid.shape}, the training y {y.shape}: "
                    "they need the same number of columns"
                )
            valid = (self._predict_columns(X_valid), y_valid)
        custom = self.loss if isinstance(self.loss, CustomLoss) else None
        self._train(columns, y, sample_weight, custom or loss, valid)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted values; for a distributional loss ("normal", ...) the mean."""
        check_is_fitted(self)
        scores = self._scores(X, response=self._staged_response())
        if distributions.parameter_names(self.core_model_.loss) is not None:
            return distributions.mean(self.core_model_.loss, scores)
        return self._finish_scores(scores)

    def predict_dist(self, X: Any) -> pl.DataFrame:
        """A distributional loss's predicted distribution of each row: a polars frame of its
        parameters by name (``mean``, ``sd`` for "normal"; optboost.distributions)."""
        check_is_fitted(self)
        loss = self.core_model_.loss
        if distributions.parameter_names(loss) is None:
            raise ParameterError(
                f"predict_dist needs a distributional loss (e.g. loss='normal'), not {loss!r}"
            )
        return distributions.frame(loss, self._scores(X, response=True))

    def _staged_response(self) -> bool:
        # A custom loss has no response function: its predictions are the link.
        return self.core_model_.loss != "custom"

    def _finish_scores(self, scores: np.ndarray) -> np.ndarray:
        # (n, K) for a 2-D y at fit or a Quantiles loss (its levels, sorted per row); a model
        # pickled before multi-output has one target.
        several = getattr(self, "n_targets_", 1) > 1 or scores.shape[1] > 1
        return scores if several else scores[:, 0]


class BoostClassifier(ClassifierMixin, _BoostEstimator):
    """Boosted classification trees with any optboost method.

    loss: None (logistic for two classes, softmax for more), "exponential",
    "hinge", optboost.Logistic(ridge=1e-4), ...
    subsample, colsample_bytree, colsample_bynode, monotone, interactions:
        as for BoostRegressor.
    class_weight: None, "balanced" or {class: weight}, multiplying the
        sample weights.
    params: any other training parameter by name.
    """

    def __init__(
        self,
        method: str | None = None,
        loss: Any = None,
        n_iter: int | None = None,
        learning_rate: float | None = None,
        max_depth: int | None = None,
        params: dict | None = None,
        random_state: int | None = 0,
        n_threads: int | None = None,
        progress: bool | None = None,
        early_stopping_rounds: int | None = None,
        validation_fraction: float | str | None = "auto",
        subsample: float | None = None,
        colsample_bytree: float | None = None,
        colsample_bynode: float | None = None,
        monotone: dict | None = None,
        interactions: list | None = None,
        n_estimators: int | None = None,
        warm_start: bool = False,
        class_weight: Any = None,
    ):
        super().__init__(
            method=method,
            loss=loss,
            n_iter=n_iter,
            learning_rate=learning_rate,
            max_depth=max_depth,
            params=params,
            random_state=random_state,
            n_threads=n_threads,
            progress=progress,
            early_stopping_rounds=early_stopping_rounds,
            validation_fraction=validation_fraction,
            subsample=subsample,
            colsample_bytree=colsample_bytree,
            colsample_bynode=colsample_bynode,
            monotone=monotone,
            interactions=interactions,
            n_estimators=n_estimators,
            warm_start=warm_start,
        )
        self.class_weight = class_weight

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, eval_set: Any = None
    ) -> BoostClassifier:
        """eval_set: (X_valid, y_valid) for the history and early stopping."""
        columns, y = self._fit_columns(X, y)
        check_classification_targets(y)
        self.classes_, indices = np.unique(y, return_inverse=True)
        weights = None if sample_weight is None else _check_sample_weight(sample_weight, indices)
        if self.class_weight is not None:
            by_class = class_weight_values(self.class_weight, indices, list(self.classes_))
            weights = by_class if weights is None else weights * by_class
        present = self.classes_ if weights is None else np.unique(y[weights > 0])
        if len(present) < 2:
            raise DataError(
                f"{type(self).__name__} needs at least 2 classes with positive weight; "
                f"got 1 class: {present.tolist()}"
            )
        loss = self._loss_for(len(self.classes_))
        valid = None
        if eval_set is not None:
            X_valid, y_valid = _pair(eval_set)
            y_valid = np.asarray(y_valid.to_numpy() if hasattr(y_valid, "to_numpy") else y_valid)
            unknown = np.setdiff1d(np.unique(y_valid), self.classes_)
            if unknown.size:
                raise DataError(
                    f"eval_set has classes not in y: {unknown[:10].tolist()}"
                )
            valid = (self._predict_columns(X_valid), np.searchsorted(self.classes_, y_valid))
        self._train(columns, indices.astype(np.float64), weights, loss, valid)
        return self

    def _loss_for(self, n_classes: int) -> str:
        if isinstance(self.loss, CustomLoss):
            raise ParameterError(
                "BoostClassifier takes the built-in classification losses: a CustomLoss has no "
                "link to turn scores into classes or probabilities; fit BoostRegressor with it "
                "on the encoded labels instead"
            )
        if self.loss is not None:
            loss = loss_text(self.loss)
        else:
            loss = "logistic" if n_classes == 2 else "softmax"
        task = _core.loss_task(loss)
        if task == "regression":
            raise ParameterError(f"BoostClassifier needs a classification loss; got {loss!r}")
        if task == "binary" and n_classes != 2:
            raise DataError(
                f"the {loss!r} loss is binary but y has {n_classes} classes; "
                "use a multiclass loss such as 'softmax'"
            )
        return loss

    def decision_function(self, X: Any) -> np.ndarray:
        scores = self._scores(X, response=False)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        if is_margin(self.core_model_):
            raise ParameterError(
                f"the {self.core_model_.loss!r} loss gives no probabilities; use decision_function"
            )
        probabilities = self._scores(X, response=True)
        if probabilities.shape[1] == 1:
            return np.column_stack([1.0 - probabilities[:, 0], probabilities[:, 0]])
        return probabilities

    def predict(self, X: Any) -> np.ndarray:
        return self._finish_scores(self._scores(X, response=False))

    def _staged_response(self) -> bool:
        return False

    def _finish_scores(self, scores: np.ndarray) -> np.ndarray:
        """The classes of link scores."""
        index = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else scores.argmax(1)
        return self.classes_[index]


def _from_layout(state: dict) -> dict:
    """The state of an estimator pickled before the formula front end's pipeline: its
    `_layout_` was None for a matrix or a frame of numeric columns (fed to the core as x0,
    x1, ... by position), else (name, kind, levels) per column of a frame read by name."""
    layout = state.pop("_layout_")
    if layout is None:
        state["_features_"] = matrix_features(list(state["core_model_"].feature_names))
        state["_fitted_on_frame_"] = False
    else:
        state["_features_"] = tuple(
            Feature(name, kind, name, (name,), levels) for name, kind, levels in layout
        )
        state["_fitted_on_frame_"] = True
    return state


# Values checked at a time by _check_no_infinity (a boolean temporary of 1 MB).
_CHECK_BLOCK_VALUES = 1 << 20


def _check_no_infinity(X: np.ndarray) -> None:
    """Refuses ±inf (NaN is missing), as scikit-learn's ``ensure_all_finite="allow-nan"``
    does, but a block of rows at a time: scikit-learn's check makes a boolean temporary of the
    whole matrix (28 MB at 1M × 28), which was a quarter of the memory a fit takes above the
    data."""
    rows = max(1, _CHECK_BLOCK_VALUES // max(X.shape[1], 1))
    for start in range(0, X.shape[0], rows):
        infinite = np.isinf(X[start : start + rows])
        if infinite.any():
            row, column = np.argwhere(infinite)[0]
            raise DataError(
                f"Input X contains infinity (row {start + row}, column {column}); "
                "missing values are NaN"
            )


class BoostRanker(_BoostEstimator):
    """Boosted trees that rank rows within query groups (learning to rank).

    loss: None ("lambdarank": LambdaMART at NDCG@30, as LightGBM's default),
        "lambdarank(k)" for NDCG@k, "pairwise" (RankNet) or "rank_xendcg".
    validation_fraction: without eval_set, the fraction of the query groups
        held out (whole groups) as validation data; as BoostRegressor's
        otherwise.
    params: any other training parameter by name, e.g. ``{"metrics": "ndcg@10"}``.
    """

    def fit(
        self,
        X: Any,
        y: Any,
        group: Any,
        sample_weight: Any = None,
        eval_set: Any = None,
        eval_group: Any = None,
    ) -> BoostRanker:
        """y: relevance labels; group: one query id per row (the rows of a query need not be
        contiguous); eval_set: (X_valid, y_valid) with its ids in eval_group."""
        loss = loss_text(self.loss if self.loss is not None else "lambdarank")
        if not is_ranking(loss):
            raise ParameterError(f"BoostRanker needs a ranking loss; got {loss!r}")
        columns, y = self._fit_columns(X, y)
        y = _finite_target(y)
        if y.ndim != 1:
            raise DataError(f"BoostRanker takes one relevance label per row; y has shape {y.shape}")
        codes = group_codes(group, len(y), "X")
        valid = None
        if eval_set is not None:
            if eval_group is None:
                raise ParameterError("eval_set needs eval_group=, the query id of each row")
            X_valid, y_valid = _pair(eval_set)
            y_valid = _finite_target(y_valid)
            valid_codes = group_codes(eval_group, len(y_valid), "eval_set")
            valid = (self._predict_columns(X_valid), ranking_target(y_valid, valid_codes))
        self._train(columns, y, sample_weight, loss, valid, groups=codes)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The ranking scores: higher ranks first within a query."""
        check_is_fitted(self)
        return self._scores(X, response=False)[:, 0]

    def _staged_response(self) -> bool:
        return False

    def _finish_scores(self, scores: np.ndarray) -> np.ndarray:
        return scores[:, 0]


def _pair(eval_set: Any) -> tuple[Any, Any]:
    # LightGBM and XGBoost take a list of pairs; one pair is what optboost can use.
    if isinstance(eval_set, list) and len(eval_set) == 1:
        eval_set = eval_set[0]
    if not (isinstance(eval_set, tuple) and len(eval_set) == 2):
        raise ParameterError("eval_set must be a pair (X_valid, y_valid) or a list of one pair")
    return eval_set


def _loss_for_target(loss: str, y: np.ndarray) -> str:
    """The loss to train a target of this shape with: a 2-D y (n, K) takes the squared loss
    over K outputs (multi_squared), the only loss with K target columns."""
    if y.ndim == 1 or loss == "multi_squared":
        return loss
    if loss == "squared":
        return "multi_squared"
    raise ParameterError(
        f"a 2-D y of shape {y.shape} needs the squared loss (loss=None, 'squared' or "
        f"'multi_squared'); got {loss!r}"
    )


def _finite_target(y: Any) -> np.ndarray:
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y, dtype=np.float64)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if not np.isfinite(y).all():
        raise DataError(f"y has {int((~np.isfinite(y)).sum())} missing or infinite values")
    return y
