"""scikit-learn estimators: :class:`BoostRegressor` and :class:`BoostClassifier`.

They take numpy arrays, pandas and polars frames, through the formula front
end's column pipeline (``optboost.formula.feature_columns``): a frame is read as
``boost("y ~ .", frame)`` reads it, by column name, string, Categorical and Enum
columns as native categorical features (level maps learnt in ``fit``), numeric
columns without a copy; a matrix is validated by scikit-learn as float64 (NaN =
missing) and its columns x0, x1, ... reach the core in place, in C or Fortran
order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _core
from .class_weights import class_weight_values
from .constraints import constraint_params
from .errors import DataError, ParameterError
from .formula import (
    Feature,
    FeatureBlock,
    FeatureColumn,
    feature_columns,
    frame_features,
    matrix_block,
    matrix_features,
)
from .holdout import LEFT_OUT, TRAINS, VALIDATES, held_roles, held_rows, resolve_fraction
from .frames import to_polars
from .losses import CustomLoss, loss_text
from .metrics import split_metrics
from .model import HISTORY_SCHEMA, is_margin
from .params import param_pairs
from .training import train


def _is_frame(X: Any) -> bool:
    module = type(X).__module__.split(".")[0]
    return module in ("pandas", "polars") and hasattr(X, "columns")


class _BoostEstimator(BaseEstimator):
    """Shared parameters, column handling, training and pickling."""

    def __init__(
        self,
        method: str = "gbm",
        loss: Any = None,
        n_iter: int = 100,
        learning_rate: float = 0.1,
        max_depth: int | None = None,
        params: dict | None = None,
        random_state: int | None = 0,
        n_threads: int = 0,
        progress: bool | None = None,
        early_stopping_rounds: int | None = None,
        validation_fraction: float | str | None = "auto",
        subsample: float | None = None,
        colsample_bytree: float | None = None,
        colsample_bynode: float | None = None,
        monotone: dict | None = None,
        interactions: list | None = None,
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
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
            dtype=np.float64,
            order=None,  # C or F order, as given: the core reads either in place
            ensure_all_finite=False,  # checked by _check_no_infinity, in blocks
            y_numeric=isinstance(self, RegressorMixin),
            multi_output=isinstance(self, RegressorMixin),
        )
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
            self, X, reset=False, dtype=np.float64, order=None, ensure_all_finite=False
        )
        _check_no_infinity(X)
        return self._matrix_columns(X)

    def _matrix_columns(self, X: np.ndarray) -> list[FeatureBlock]:
        return [matrix_block([f.name for f in self._features_], X)]

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

    def _settings(self, loss: str) -> dict[str, Any]:
        settings = dict(self.params or {})
        own = {
            "subsample": self.subsample,
            "colsample_bytree": self.colsample_bytree,
            "colsample_bynode": self.colsample_bynode,
        }
        clash = {"method", "loss", "n_iter", "learning_rate", "max_depth", "seed", "n_threads"}
        clash |= {name for name, value in own.items() if value is not None}
        clash |= {"monotone", "interactions"}
        given = clash & set(settings)
        if given:
            raise ParameterError(
                f"set {sorted(given)} through the estimator's own parameters, not params="
            )
        settings.update(
            method=self.method,
            loss=loss,
            n_iter=self.n_iter,
            learning_rate=self.learning_rate,
            max_depth=self.max_depth,
            seed=0 if self.random_state is None else self.random_state,
            n_threads=self.n_threads,
        )
        settings.update({name: value for name, value in own.items() if value is not None})
        if settings.get("metrics") is not None:
            names, functions = split_metrics(settings["metrics"])
            if functions:
                raise ParameterError(
                    "the estimators take built-in metric names in params['metrics']; "
                    "callable metrics need optboost.boost"
                )
            settings["metrics"] = ",".join(names) or None
        return settings

    def _train(self, columns, y, sample_weight, loss: str, valid=None) -> None:
        """valid: None, or (columns, y) of validation data, y already encoded."""
        settings = self._settings(loss)
        settings.update(self._constraint_settings())
        y = np.ascontiguousarray(y, dtype=np.float64)
        weights = None
        roles = None  # what each row is for (holdout.TRAINS, ...); None: every row trains
        if sample_weight is not None:
            weights = np.ascontiguousarray(_check_sample_weight(sample_weight, y), dtype=np.float64)
            if (weights == 0).any():
                # Rows of weight 0 would still shape the bin thresholds; scikit-learn
                # expects them to act as if absent.
                roles = np.where(weights > 0, TRAINS, LEFT_OUT).astype(np.uint8)
        if valid is None and self.validation_fraction is not None:
            roles = self._hold_out(y, roles)
        if self.early_stopping_rounds is not None:
            if valid is None and (roles is None or not (roles == VALIDATES).any()):
                raise ParameterError(
                    "early_stopping_rounds needs validation data: pass "
                    "fit(..., eval_set=(X_valid, y_valid)) or set validation_fraction"
                )
            settings["early_stopping_rounds"] = self.early_stopping_rounds
        pairs = param_pairs(settings)
        # A 2-D target (n, K) goes to the core row-major, n × K values.
        y = np.ascontiguousarray(y).ravel()
        valid_args = (None, None, None)
        if valid is not None:
            valid_y = np.ascontiguousarray(valid[1], dtype=np.float64).ravel()
            valid_args = (valid[0], valid_y, None)
        custom_loss = self.loss if isinstance(self.loss, CustomLoss) else None
        booster = _core.Booster(
            pairs, columns, y, weights, *valid_args, custom_loss=custom_loss, row_roles=roles
        )
        outcome = train(booster, int(self.n_iter), progress=self.progress)
        self.core_model_ = booster.model()
        history = dict(booster.history())
        del booster  # its training state (the bins, the per-row vectors), before the history frame
        metrics = [name for name in history if name not in HISTORY_SCHEMA]
        self.history_ = pl.DataFrame(
            history, schema={**HISTORY_SCHEMA, **{name: pl.Float64 for name in metrics}}
        )
        self.n_iter_ = outcome.iterations

    def _hold_out(self, y: np.ndarray, roles: np.ndarray | None) -> np.ndarray | None:
        """Hold out validation_fraction of the training rows (those `roles` says train; all
        without roles) at random, seeded by random_state and stratified by class for
        classifiers; "auto" as in ``optboost.boost``. Returns the rows' roles."""
        training = None if roles is None else np.flatnonzero(roles == TRAINS)
        kept_y = y if training is None else y[training]
        preset = (self.params or {}).get("preset")
        fraction = resolve_fraction(self.validation_fraction, self.method, len(kept_y), preset)
        if fraction is None:
            return roles
        seed = 0 if self.random_state is None else self.random_state
        held = held_rows(kept_y, fraction, seed, stratify=isinstance(self, ClassifierMixin))
        if training is None:
            return held_roles(held)
        roles = roles.copy()
        roles[training[held]] = VALIDATES
        return roles

    def _scores(self, X: Any, response: bool) -> np.ndarray:
        columns = self._predict_columns(X)
        model = self.core_model_
        predict = model.predict_response if response else model.predict
        return predict(columns, None, self.n_threads)

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
        if "core_model_" in state:
            state = dict(state)
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
        loss = loss_text(self.loss if self.loss is not None else "squared")
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
        self._train(columns, y, sample_weight, loss, valid)
        return self

    def predict(self, X: Any) -> np.ndarray:
        # A custom loss has no response function: its predictions are the link.
        check_is_fitted(self)
        scores = self._scores(X, response=self.core_model_.loss != "custom")
        # (n, K) for a 2-D y at fit; a model pickled before multi-output has one target.
        return scores if getattr(self, "n_targets_", 1) > 1 else scores[:, 0]


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
        method: str = "gbm",
        loss: Any = None,
        n_iter: int = 100,
        learning_rate: float = 0.1,
        max_depth: int | None = None,
        params: dict | None = None,
        random_state: int | None = 0,
        n_threads: int = 0,
        progress: bool | None = None,
        early_stopping_rounds: int | None = None,
        validation_fraction: float | str | None = "auto",
        subsample: float | None = None,
        colsample_bytree: float | None = None,
        colsample_bynode: float | None = None,
        monotone: dict | None = None,
        interactions: list | None = None,
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
        scores = self._scores(X, response=False)
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
