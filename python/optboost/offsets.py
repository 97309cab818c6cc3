"""Offsets (initial scores): per-row values added to the link before the first
iteration and at prediction time, as R's ``offset``, LightGBM's ``init_score``
and XGBoost's ``base_margin``. A model does not store them: a model fitted with
an offset needs the same kind of offset at prediction, as R's glm and gbm do (a
formula's ``offset(...)`` term is read from the new data by the model itself)."""

from __future__ import annotations

from typing import Any

import numpy as np

import polars as pl

from .errors import DataError, FormulaError
from .frames import get_column, numeric_values, to_polars
from .term_values import Evaluation, interaction_columns
from .terms import Column, parse_factor, stateful_keys


def offset_values(offset: Any, data: Any, n_rows: int, n_outputs: int) -> np.ndarray:
    """The offset as a contiguous float64 array of n_rows × n_outputs values
    (row-major): a column name of ``data``, or an array of n_rows values (one
    output) or shape (n_rows, n_outputs); a name that is not a column may be an
    expression of columns (a formula's ``offset(log(exposure))``)."""
    if isinstance(offset, str):
        values = _offset_column(offset, to_polars(data))
    else:
        values = np.asarray(offset.to_numpy() if hasattr(offset, "to_numpy") else offset)
        if values.dtype == object or not np.issubdtype(values.dtype, np.number):
            raise DataError(f"offset must be numbers, got dtype {values.dtype}")
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1 and n_outputs == 1:
        values = values[:, None]
    if values.shape != (n_rows, n_outputs):
        raise DataError(
            f"offset must have {n_rows} rows"
            + (f" and {n_outputs} columns (one per class)" if n_outputs > 1 else "")
            + f"; got shape {values.shape}"
        )
    if not np.isfinite(values).all():
        bad = int((~np.isfinite(values)).sum())
        raise DataError(f"offset has {bad} missing or infinite values")
    return np.ascontiguousarray(values).reshape(-1)


def without_column(data: Any, offset: Any) -> Any:
    """``data`` without the offset column (so that ``y ~ .`` leaves it out)."""
    if isinstance(offset, str):
        frame = to_polars(data)
        if offset in frame.columns:
            return frame.drop(offset)
    return data


def _offset_column(text: str, frame: pl.DataFrame) -> np.ndarray:
    """The column ``text`` of ``frame``, or the values of the expression ``text`` of its
    columns (stateless: the term language with nothing learnt)."""
    if text not in frame.columns:
        try:
            factor = parse_factor(text)
        except FormulaError:
            factor = None
        if factor is not None and not isinstance(factor.tree, Column):
            if factor.is_categorical or factor.functions or stateful_keys(factor):
                raise FormulaError(
                    f"offset {text!r}: an offset is numbers, from columns, operators and "
                    "elementwise functions only"
                )
            for column in factor.columns:
                get_column(frame, column, role="offset column")
            return interaction_columns([factor], [text], Evaluation(frame, {}), [None])[0][1]
    return numeric_values(get_column(frame, text, role="offset column"))
