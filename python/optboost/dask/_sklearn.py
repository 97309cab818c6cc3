"""scikit-learn style estimators on a Dask cluster: ``fit(X, y)`` with a dask DataFrame and a
dask Series of the same partitions, ``predict`` / ``predict_proba`` returning dask collections
(numpy arrays for in-memory X, as the in-memory estimators give)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ..errors import DataError, DataTypeError, ParameterError
from ..losses import loss_text
from ..plan import DEFAULTS
from ..sklearn import BoostClassifier, BoostRegressor
from ._fit import boost, resolve_client
from ._placement import is_dask_frame
from ._predict import map_predictions, type_name

# The columns the target and the sample weights take in the frame sent to optboost.dask.boost.
TARGET_COLUMN = "optboost_target_"
WEIGHT_COLUMN = "optboost_sample_weight_"


def _with_client(parent: type) -> Any:
    """``parent.__init__`` with one more keyword parameter, ``client`` (a
    ``distributed.Client``; None: the default client, or fit's ``client=``), in the signature
    scikit-learn reads the estimator's parameters from (``get_params``, ``clone``)."""

    def __init__(self, *, client: Any = None, **parameters: Any) -> None:
        parent.__init__(self, **parameters)
        self.client = client

    signature = inspect.signature(parent.__init__)
    client = inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None)
    own, *parameters = signature.parameters.values()  # self, then the estimator's parameters
    parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]
    __init__.__signature__ = signature.replace(parameters=[own, *parameters, client])
    return __init__


class _DaskFit:
    """The fit and predictions shared by the two estimators (mixed in before their in-memory
    parents, whose parameters, pickling and in-memory predictions they keep)."""

    def _dask_fit(
        self, X: Any, y: Any, sample_weight: Any, eval_set: Any, loss: str, client: Any,
        class_weight: Any = None,
    ) -> None:
        for name, value in (("X", X), ("y", y)):
            if not is_dask_frame(value):
                raise DataTypeError(
                    f"{type(self).__name__}.fit takes dask collections; {name} is "
                    f"{type_name(value)} (use optboost.{type(self).__name__[4:]} in memory)"
                )
        if eval_set is not None:
            raise ParameterError(
                f"{type(self).__name__} takes no eval_set; set validation_fraction (held out "
                "of every partition)"
            )
        columns = [str(c) for c in X.columns]
        clash = {TARGET_COLUMN, WEIGHT_COLUMN} & set(columns)
        if clash:
            raise DataError(f"X has a column named {min(clash)!r}, which fit uses itself")
        frame = X.assign(**{TARGET_COLUMN: y})
        weights = None
        if sample_weight is not None:
            frame = frame.assign(**{WEIGHT_COLUMN: sample_weight})
            weights = WEIGHT_COLUMN
        model = boost(
            f"{TARGET_COLUMN} ~ .",
            frame,
            client=self.client if client is None else client,
            weights=weights,
            class_weight=class_weight,
            monotone=self.monotone,
            interactions=self.interactions,
            **self._arguments(loss),
        )
        self._model_ = model
        self.core_model_ = model._core
        self._features_ = model.spec.features
        self._fitted_on_frame_ = True
        self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.n_features_in_ = len(columns)
        self.history_ = model.history
        self.n_iter_ = model.n_iter

    def _on_partitions(self, X: Any, method: Any, meta: np.ndarray) -> Any:
        return map_predictions(X, _call, meta, self, method, meta)


def _call(part: Any, estimator: Any, method: Any, meta: np.ndarray) -> np.ndarray:
    """``method``, the in-memory estimator's prediction, on a pandas partition (the core
    predicts no rows: an empty partition gets ``meta``, the zero-row output)."""
    if len(part) == 0:
        return meta
    return method(estimator, part)


class DaskBoostRegressor(_DaskFit, BoostRegressor):
    """``optboost.BoostRegressor`` fitted on a Dask cluster (``optboost.dask.boost``): same
    parameters; ``monotone`` and ``interactions`` by column name. ``fit(X, y,
    sample_weight=None, client=None)`` with dask collections of the same partitions; the
    client may be given to the constructor too (``client=``)."""

    __init__ = _with_client(BoostRegressor)

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, eval_set: Any = None, *,
        client: Any = None,
    ) -> DaskBoostRegressor:
        loss = loss_text(self.loss if self.loss is not None else DEFAULTS["loss"])
        self._dask_fit(X, y, sample_weight, eval_set, loss, client)
        self.n_targets_ = 1
        return self

    def predict(self, X: Any) -> Any:
        if not is_dask_frame(X):
            return BoostRegressor.predict(self, X)
        return self._on_partitions(X, BoostRegressor.predict, np.empty(0))


class DaskBoostClassifier(_DaskFit, BoostClassifier):
    """``optboost.BoostClassifier`` fitted on a Dask cluster: same parameters (class_weight
    "balanced" from the class counts of every partition; ``client=`` as for
    DaskBoostRegressor)."""

    __init__ = _with_client(BoostClassifier)

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, eval_set: Any = None, *,
        client: Any = None,
    ) -> DaskBoostClassifier:
        if not is_dask_frame(y):
            raise DataTypeError(f"y must be a dask Series, got {type_name(y)}")
        # The distinct labels only come to the client: they choose the default loss.
        client = self.client if client is None else client
        n_classes = int(resolve_client(client).compute(y.nunique()).result())
        loss = self._loss_for(n_classes)
        self._dask_fit(X, y, sample_weight, eval_set, loss, client, self.class_weight)
        self.classes_ = np.asarray(self._model_.classes)
        return self

    def predict(self, X: Any) -> Any:
        if not is_dask_frame(X):
            return BoostClassifier.predict(self, X)
        return self._on_partitions(X, BoostClassifier.predict, self.classes_[:0])

    def predict_proba(self, X: Any) -> Any:
        if not is_dask_frame(X):
            return BoostClassifier.predict_proba(self, X)
        return self._on_partitions(
            X, BoostClassifier.predict_proba, np.empty((0, len(self.classes_)))
        )
