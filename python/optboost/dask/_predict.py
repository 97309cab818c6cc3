"""Predictions for a dask DataFrame, partition by partition on the workers: a dask Series for
one output per row, a dask Array (rows × outputs) for several."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..errors import DataTypeError, ParameterError
from ..model import Model
from ._placement import is_dask_frame


def predict(
    model: Model,
    data: Any,
    type: str | None = None,
    iteration: int | None = None,
    *,
    offset: str | None = None,
) -> Any:
    """``model.predict`` on every partition of the dask DataFrame ``data``: a dask Series
    (named "prediction", with the partitions' index) for one value per row, a dask Array of
    rows × outputs (multiclass probabilities, several targets) otherwise. ``type``,
    ``iteration`` as in ``Model.predict``; ``offset`` a column name. The explanations
    (type="contrib", "interaction") are not computed here: call ``model.predict`` on a
    partition."""
    if not isinstance(model, Model):
        raise DataTypeError(f"expected an optboost.Model, got {type_name(model)}")
    if type in ("contrib", "interaction"):
        raise ParameterError(
            f"optboost.dask.predict does not compute type={type!r}; call model.predict on a "
            "partition (ddf.get_partition(i).compute())"
        )
    if offset is not None and not isinstance(offset, str):
        raise ParameterError(f"offset must be a column name here, got {type_name(offset)}")
    if not is_dask_frame(data):
        raise DataTypeError(f"expected a dask DataFrame, got {type_name(data)}")
    # One made-up row (dask's own) through the same path gives the output's dtype and
    # dimensions; its made-up levels are unseen ones, whose warning says nothing here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = model.predict(data._meta_nonempty.iloc[:1], type, iteration, offset=offset)[:0]
    return map_predictions(data, _model_predictions, meta, model, type, iteration, offset, meta)


def _model_predictions(
    part: Any,
    model: Model,
    type: str | None,
    iteration: int | None,
    offset: str | None,
    meta: np.ndarray,
) -> np.ndarray:
    if len(part) == 0:  # the core predicts no rows: an empty partition has nothing to ask
        return meta
    return model.predict(part, type, iteration, offset=offset)


def map_predictions(
    data: Any, predictions: Callable[..., np.ndarray], meta: np.ndarray, *args: Any
) -> Any:
    """``predictions(partition, *args)`` on every partition: a dask Series if they are 1-D
    (``meta``: the output of zero rows), else a dask Array of unknown chunk lengths."""
    if meta.ndim == 1:
        import pandas as pd

        series_meta = pd.Series(meta, index=data._meta.index, name="prediction")
        return data.map_partitions(_as_series, predictions, *args, meta=series_meta)
    return data.map_partitions(predictions, *args, meta=meta)


def _as_series(part: Any, predictions: Callable[..., np.ndarray], *args: Any) -> Any:
    import pandas as pd

    return pd.Series(predictions(part, *args), index=part.index, name="prediction")


def type_name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__name__}"
