"""Offsets (initial scores): per-row values added to the link before the first
iteration and at prediction time, as R's ``offset``, LightGBM's ``init_score``
and XGBoost's ``base_margin``. A model does not store them: a model fitted with
an offset needs the same kind of offset at prediction, as R's glm and gbm do."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DataError
from .frames import get_column, numeric_values, to_polars


def offset_values(offset: Any, data: Any, n_rows: int, n_outputs: int) -> np.ndarray:
    """The offset as a contiguous float64 array of n_rows × n_outputs values
    (row-major): a column name of ``data``, or an array of n_rows values (one
    output) or shape (n_rows, n_outputs)."""
    if isinstance(offset, str):
        values = numeric_values(get_column(to_polars(data), offset, role="offset column"))
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
