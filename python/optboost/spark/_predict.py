"""Predictions for a Spark DataFrame through a pandas UDF: the model goes to the executors as
its model file's bytes (one broadcast), each Python worker loads it once with
``optboost.load`` and predicts batch by batch."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from ..errors import DataTypeError, ParameterError
from ..model import Model, load

# Models loaded in this Python worker, by the digest of their file's bytes.
_LOADED: dict[str, Model] = {}
_LOADING = threading.Lock()


def predict(
    model: Model,
    data: Any,
    type: str | None = None,
    iteration: int | None = None,
    *,
    column: str = "prediction",
) -> Any:
    """``data`` with one more column, ``column``: ``model.predict`` of its rows, computed on
    the executors. One value per row is a double (a class label for type="class"); several
    (multiclass probabilities, several targets, quantiles) an array of doubles. ``type``,
    ``iteration`` as in ``Model.predict``; the explanations (type="contrib", "interaction")
    are not computed here."""
    from pyspark.sql import DataFrame

    if not isinstance(model, Model):
        raise DataTypeError(f"expected an optboost.Model, got {type_name(model)}")
    if not isinstance(data, DataFrame):
        raise DataTypeError(f"expected a pyspark.sql.DataFrame, got {type_name(data)}")
    if type in ("contrib", "interaction", "interval", "set"):
        raise ParameterError(
            f"optboost.spark.predict does not compute type={type!r}; call model.predict on "
            "a pandas frame of the rows (data.toPandas())"
        )
    return data.withColumn(column, prediction_column(model, data, type, iteration))


def prediction_column(model: Model, data: Any, type: str | None, iteration: int | None) -> Any:
    """The Spark column of ``model.predict(rows, type, iteration)``."""
    from pyspark.sql import functions

    inputs = model.spec.input_columns
    absent = [name for name in inputs if name not in data.columns]
    if absent:
        raise DataTypeError(
            f"the model needs column(s) {absent[:10]}, which the DataFrame has not; its "
            f"columns: {data.columns[:30]}"
        )
    returned = _spark_type(model, type)
    udf = _udf(model_bytes(model), type, iteration, returned)
    return udf(functions.struct(*[functions.col(f"`{name}`") for name in inputs]))


def model_bytes(model: Model) -> bytes:
    """The model's file, as ``Model.save`` writes it."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        model.save(path)
        with open(path, "rb") as file:
            return file.read()


def loaded(data: bytes) -> Model:
    """The model of these file bytes, loaded once per Python worker (``optboost.load``)."""
    digest = hashlib.sha256(data).hexdigest()
    with _LOADING:
        if digest not in _LOADED:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.json")
                with open(path, "wb") as file:
                    file.write(data)
                _LOADED[digest] = load(path)
        return _LOADED[digest]


def _spark_type(model: Model, type: str | None) -> str:
    if type == "class":
        labels = model.classes or []
        if all(isinstance(label, str) for label in labels):
            return "string"
        if all(isinstance(label, (bool, np.bool_)) for label in labels):
            return "boolean"
        return "double"
    return "double" if model._core.n_outputs == 1 else "array<double>"


def _udf(data: bytes, type: str | None, iteration: int | None, returned: str) -> Any:
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import pandas_udf

    spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
    shared = spark.sparkContext.broadcast(data)

    @pandas_udf(returned)  # type: ignore[call-overload]
    def predictions(rows: pd.DataFrame) -> pd.Series:
        model = loaded(shared.value)
        if len(rows) == 0:
            return pd.Series([], dtype=object)
        values = model.predict(rows, type, iteration)
        if isinstance(values, pl.DataFrame):  # a Quantiles model's levels
            values = values.to_numpy()
        values = np.asarray(values)
        if returned == "array<double>":
            values = values.reshape(len(rows), -1).astype(np.float64)
            return pd.Series(list(values))
        if returned == "double":
            values = values.astype(np.float64)
        return pd.Series(values)

    return predictions


def type_name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__name__}"
