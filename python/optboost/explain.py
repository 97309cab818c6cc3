"""Explaining a fitted model: SHAP contributions and interaction values (computed
exactly in the Rust core by TreeSHAP), ``shap.Explanation`` objects, partial
dependence and ICE curves, and importance by gain, splits, cover, SHAP or
permutation.

Contributions are on the link scale (raw scores, log-odds for logistic): with
the ``bias`` column they add up to ``model.predict(newdata, type="link")`` in
every row. By default they are per original data column: a feature computed
from several columns (an interaction ``a:b``, a transform of two columns)
gives its contribution to its source columns in equal parts, and the levels of
a categorical column are one feature already. ``by="feature"`` gives them per
model feature instead.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from .errors import ParameterError
from .frames import to_polars

if TYPE_CHECKING:
    from .model import Model

By = Literal["column", "feature"]
BIAS = "bias"


# ------------------------------------------------------------------ SHAP values


def _names_and_matrix(model: Model, by: By) -> tuple[list[str], np.ndarray]:
    """Output names and the (features × outputs) matrix that turns per-feature
    values into them: the identity for by="feature", equal shares of each
    feature among its source columns for by="column"."""
    features = model.feature_names
    if by == "feature":
        return features, np.eye(len(features))
    if by != "column":
        raise ParameterError(f"by must be 'column' or 'feature', got {by!r}")
    columns = model.spec.input_columns
    index = {c: i for i, c in enumerate(columns)}
    sources = model.spec.source_columns
    matrix = np.zeros((len(features), len(columns)))
    for i, name in enumerate(features):
        owners = sources.get(name) or (name,)
        for column in owners:
            matrix[i, index[column]] += 1.0 / len(owners)
    return columns, matrix


def _bias_name(names: Sequence[str]) -> str:
    # a data column may itself be called "bias"
    name = BIAS
    while name in names:
        name = f"_{name}"
    return name


def contribution_array(model: Model, newdata: Any, by: By = "column") -> tuple[np.ndarray, list[str]]:
    """SHAP values as an array of shape (n, K, m + 1) (K outputs: 1, or the
    number of classes), the last slot of each block the bias, and the m + 1
    names."""
    names, matrix = _names_and_matrix(model, by)
    raw = model._core.predict_contrib(model.spec.columns(newdata))
    n_features = len(model.feature_names)
    raw = raw.reshape(raw.shape[0], -1, n_features + 1)
    values = np.concatenate([raw[:, :, :n_features] @ matrix, raw[:, :, n_features:]], axis=2)
    return values, [*names, _bias_name(names)]


def contributions(model: Model, newdata: Any, by: By = "column") -> pl.DataFrame:
    """SHAP contributions as a polars frame, one row per row of ``newdata``:
    one column per original data column (``by="column"``) or model feature
    (``by="feature"``) and ``bias``; each row sums to the link-scale score.
    Multiclass models give one block of columns per class, named
    ``"{class}/{column}"`` (and ``"{class}/bias"``), in class order."""
    values, names = contribution_array(model, newdata, by)
    if values.shape[1] == 1:
        return pl.DataFrame(values[:, 0, :], schema=names, orient="row")
    labels = model.classes or [str(k) for k in range(values.shape[1])]
    schema = [f"{label}/{name}" for label in labels for name in names]
    return pl.DataFrame(values.reshape(values.shape[0], -1), schema=schema, orient="row")


def interactions(model: Model, newdata: Any, by: By = "column") -> tuple[np.ndarray, list[str]]:
    """SHAP interaction values, shape (n, m + 1, m + 1), or (n, K, m + 1,
    m + 1) for multiclass, and the m + 1 names of both axes (the last is the
    bias, at the last diagonal entry). Entry (i, j) is half the interaction of
    i and j; the diagonal holds the main effects; row i sums to i's
    contribution, and the matrix to the link-scale score."""
    names, matrix = _names_and_matrix(model, by)
    raw = model._core.predict_interactions(model.spec.columns(newdata))
    width = len(model.feature_names) + 1
    raw = raw.reshape(raw.shape[0], -1, width, width)
    # The bias stays its own row and column.
    full = np.zeros((width, matrix.shape[1] + 1))
    full[:-1, :-1] = matrix
    full[-1, -1] = 1.0
    values = np.einsum("fi,nkfg,gj->nkij", full, raw, full)
    names = [*names, _bias_name(names)]
    return (values[:, 0] if values.shape[1] == 1 else values), names


def predict_explained(model: Model, newdata: Any, type: str, by: By) -> Any:
    """``Model.predict`` for type="contrib" (a polars frame) and
    type="interaction" (a numpy array; names as in :func:`interactions`)."""
    if type == "contrib":
        return contributions(model, newdata, by)
    return interactions(model, newdata, by)[0]


def explain(model: Model, newdata: Any, by: By = "column") -> Any:
    """A ``shap.Explanation`` of the link-scale scores of ``newdata`` (needs
    the ``shap`` package: ``pip install "optboost[explain]"``). Its ``data``
    holds the original column values (``by="column"``) or the model's feature
    columns (``by="feature"``; categorical features as level codes)."""
    try:
        import shap
    except ImportError:
        raise ImportError(
            'model.explain needs the shap package: pip install "optboost[explain]"'
        ) from None
    values, names = contribution_array(model, newdata, by)
    frame = to_polars(newdata)
    if by == "column":
        data = np.column_stack(
            [_plain_values(frame.get_column(c)) for c in names[:-1]]
        )
    else:
        data = np.column_stack([c.values for c in model.spec.columns(frame)])
    if values.shape[1] == 1:
        shap_values, base = values[:, 0, :-1], values[:, 0, -1]
    else:
        # shap's layout for several outputs: (rows, features, outputs)
        shap_values, base = values[:, :, :-1].transpose(0, 2, 1), values[:, :, -1]
    return shap.Explanation(
        values=shap_values,
        base_values=base,
        data=data,
        feature_names=names[:-1],
        output_names=None if values.shape[1] == 1 else [str(c) for c in model.classes],
    )


def _plain_values(series: pl.Series) -> np.ndarray:
    if series.dtype.is_numeric():
        return series.cast(pl.Float64).fill_null(float("nan")).to_numpy()
    return np.asarray(series.cast(pl.String).to_list(), dtype=object)
