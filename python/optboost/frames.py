"""Data frames to the column arrays the Rust core takes, and back.

The core takes named feature columns, each either numeric (1-D C-contiguous
float64, NaN = missing) or categorical (int32 codes, -1 = missing, plus the
number of levels), a float64 target and optional float64 weights.

polars is the primary frame type; pandas frames are converted with
``pl.from_pandas`` (the user's frame is never modified). Arrays returned here
may be read-only views into the user's frame: never write into them.
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from ._extras import install_hint
from .errors import DataError, DataTypeError, MissingDependencyError, OptboostError
from .warn import warn_once_per_call

Kind = Literal["numeric", "categorical"]
Task = Literal["regression", "binary", "multiclass"]
TASKS: tuple[str, ...] = ("regression", "binary", "multiclass")

MAX_LISTED = 10  # values, rows or columns quoted in one message


class MissingColumnError(DataError):
    """A column named in a formula or argument is not in the data."""


class TargetError(DataError):
    """The target cannot be encoded for the requested task."""


class WeightsError(DataError):
    """The weights are not non-negative finite numbers with a positive sum."""


def to_polars(data: Any) -> pl.DataFrame:
    """The data as a polars DataFrame; pandas frames and pyarrow tables are
    converted (a new object: the caller's frame is left untouched)."""
    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, pl.LazyFrame):
        raise DataTypeError("a polars LazyFrame must be collected first: pass lf.collect()")
    module = type(data).__module__.split(".")[0]
    if module == "pandas" and hasattr(data, "columns"):
        converter = _from_pandas
    elif module == "pyarrow":
        converter = pl.from_arrow
    elif isinstance(data, dict):
        converter = pl.DataFrame
    else:
        raise DataTypeError(
            "expected a polars or pandas DataFrame, got "
            f"{type(data).__module__}.{type(data).__name__}"
        )
    try:
        return converter(data)
    except OptboostError:
        raise
    except ImportError as error:  # polars reads pandas' string columns through pyarrow
        raise MissingDependencyError(
            f"reading a {type(data).__name__} needs {error.name or 'pyarrow'}, an optional "
            f"dependency of optboost: {install_hint('pandas')}"
        ) from error
    except Exception as error:  # pyarrow and polars raise their own types
        raise DataTypeError(
            f"cannot convert the {type(data).__name__} to columns: {type(error).__name__}: "
            f"{str(error)[:300]}"
        ) from None


def _from_pandas(data: Any) -> pl.DataFrame:
    names = [str(name) for name in data.columns]
    if len(set(names)) != len(names):
        repeated = sorted(n for n, count in Counter(names).items() if count > 1)
        raise DataError(f"the frame has duplicate column names: {_listing(repeated)}")
    if not all(isinstance(name, str) for name in data.columns):
        # polars needs string names; 0, 1, ... become "0", "1", ... as in pl.from_pandas
        data = data.rename(columns=str)
    # NaN stays NaN rather than becoming null (polars' default): every reader of a float
    # column here takes NaN as missing, as pandas does, and a float column with nulls costs a
    # copy when handed to the core (to_numpy writes NaN into a new buffer), where one with NaN
    # is a view of the pandas frame's own memory.
    frame = pl.from_pandas(data, nan_to_null=False)
    # pl.from_pandas makes a pandas categorical a Categorical, whose levels we
    # sort; an Enum keeps the category order the user declared in pandas.
    enums = {}
    for name, dtype in data.dtypes.items():
        categories = getattr(dtype, "categories", None)
        if categories is not None and all(isinstance(c, str) for c in categories):
            enums[str(name)] = pl.Enum(list(categories))
    return frame.cast(enums) if enums else frame


def _listing(items: Sequence[Any], limit: int = MAX_LISTED) -> str:
    shown = ", ".join(repr(item) for item in items[:limit])
    if len(items) > limit:
        shown += f", ... ({len(items) - limit} more)"
    return f"[{shown}]"


def polars_text(text: str) -> str:
    """``text`` as polars (UTF-8) can hold it: what UTF-8 cannot encode (a lone surrogate,
    which a model file's JSON may give a class label) written as its escape, ``\\ud800``;
    any other text as it is."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def get_column(frame: pl.DataFrame, name: str, *, role: str = "column") -> pl.Series:
    """The column called ``name``; a missing one raises MissingColumnError that
    names it, suggests close matches and lists the available columns."""
    # Asked of polars rather than looked up in frame.columns, which it builds anew at each
    # call: thousands of names for a wide frame.
    try:
        return frame.get_column(name)
    except pl.exceptions.ColumnNotFoundError:
        pass
    raise MissingColumnError(missing_column_message(name, frame.columns, role=role))


def missing_column_message(
    name: str, available: Sequence[str], *, role: str = "column"
) -> str:
    shown = name if len(name) <= 100 else name[:100] + f"... ({len(name)} characters)"
    message = f"{role} {shown!r} is not in the data"
    # difflib is quadratic in the lengths: a name no person typed gets no hint
    close = difflib.get_close_matches(name, available, n=3) if len(name) <= 200 else []
    if close:
        message += f" (did you mean {' or '.join(repr(c) for c in close)}?)"
    return message + f"; available columns: {_listing(list(available), limit=30)}"


# ---------------------------------------------------------------- dtypes


def dtypes_by_name(frame: pl.DataFrame) -> dict[str, pl.DataType]:
    """Column name -> dtype, as ``frame.schema`` gives but some ten times faster on wide
    frames (the Schema object checks every entry; 11 ms against 1 ms at 8,000 columns)."""
    return dict(zip(frame.columns, frame.dtypes))


def is_categorical_dtype(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def is_numeric_dtype(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or dtype == pl.Boolean


_KIND_OF_DTYPE_CLASS: dict[type, Kind | None] = {}


def column_kind(name: str, dtype: pl.DataType) -> Kind:
    """``feature_kind`` of the column ``name`` of dtype ``dtype``, without its series (a
    wide frame's thousands of columns): the kind depends on the dtype's class only, so it
    is worked out once per class."""
    dtype_class = dtype if isinstance(dtype, type) else type(dtype)  # pl.Float64 or Float64()
    kind = _KIND_OF_DTYPE_CLASS.get(dtype_class, "")
    if kind == "":
        kind = (
            "categorical" if is_categorical_dtype(dtype)
            else "numeric" if is_numeric_dtype(dtype)
            else None
        )
        _KIND_OF_DTYPE_CLASS[dtype_class] = kind
    if kind is None:
        raise DataTypeError(
            f"column {name!r} has dtype {dtype}, which is neither numeric nor "
            "categorical; cast it (e.g. to Float64, or to String for a categorical feature)"
        )
    return kind


def feature_kind(series: pl.Series, dtype: pl.DataType | None = None) -> Kind:
    """How a bare column enters the model, decided by its dtype (``dtype``: the
    series' own, when the caller has it from the frame's schema; reading it off
    a series costs microseconds, which add up on thousands of columns)."""
    return column_kind(series.name, series.dtype if dtype is None else dtype)


# ---------------------------------------------------------------- numeric


def numeric_values(series: pl.Series, dtype: pl.DataType | None = None) -> np.ndarray:
    """A 1-D C-contiguous float64 array, NaN where the value is null or NaN
    (``dtype``: the series' own, if known, as in ``feature_kind``).

    A single-chunk Float64 column without nulls comes back zero-copy (a
    read-only view of the frame's buffer); anything else costs one copy of
    this column only.
    """
    dtype = series.dtype if dtype is None else dtype
    if not is_numeric_dtype(dtype):
        raise DataTypeError(
            f"column {series.name!r} has dtype {dtype}; a numeric feature needs numbers "
            "(wrap it in C(...) to use it as categorical)"
        )
    if dtype != pl.Float64:
        series = series.cast(pl.Float64)
    # to_numpy turns the nulls of a float column into NaN (copying only then).
    values = series.to_numpy()
    return np.ascontiguousarray(values, dtype=np.float64)


# ---------------------------------------------------------------- categorical


def _as_strings(series: pl.Series) -> pl.Series:
    """Values as strings, the form level maps are kept in. Float NaN is missing."""
    if series.dtype.is_float():
        series = series.fill_nan(None)
    return series.cast(pl.String)


def categorical_levels(series: pl.Series) -> list[str]:
    """The level map learnt from training data: an Enum's own category order,
    otherwise the distinct non-missing values in sorted order (numbers are
    sorted as numbers, then written as strings)."""
    if isinstance(series.dtype, pl.Enum):
        return series.dtype.categories.to_list()
    if isinstance(series.dtype, pl.Categorical):
        series = series.cast(pl.String)
    if series.dtype.is_float():
        series = series.fill_nan(None)
    distinct = series.drop_nulls().unique().sort()
    return distinct.cast(pl.String).to_list()


def categorical_codes(series: pl.Series, levels: Sequence[str]) -> np.ndarray:
    """int32 codes into ``levels`` (-1 = missing). Values not in the level map
    become -1 too, with a UserWarning naming the column and those values, at the user's line
    and once per column in one call (cross-validation's folds say it once)."""
    if not (is_categorical_dtype(series.dtype) or is_numeric_dtype(series.dtype)):
        raise DataTypeError(
            f"column {series.name!r} has dtype {series.dtype}; a categorical feature needs "
            "strings, categories or numbers"
        )
    strings = _as_strings(series)
    if levels:
        codes = (
            strings.cast(pl.Enum(list(levels)), strict=False)
            .to_physical()
            .cast(pl.Int32)
        )
    else:
        codes = pl.repeat(None, len(strings), dtype=pl.Int32, eager=True)
    unseen_mask = codes.is_null() & strings.is_not_null()
    if unseen_mask.any():
        unseen = strings.filter(unseen_mask)
        distinct = unseen.unique(maintain_order=True).to_list()
        warn_once_per_call(
            f"unseen levels of {series.name}",
            f"column {series.name!r}: {len(unseen)} value(s) of {len(distinct)} level(s) not seen "
            f"in training are treated as missing: {_listing(distinct)}",
        )
    return np.ascontiguousarray(codes.fill_null(-1).to_numpy(), dtype=np.int32)


# ---------------------------------------------------------------- target


def _missing_mask(series: pl.Series) -> pl.Series:
    mask = series.is_null()
    if series.dtype.is_float():
        mask = mask | series.is_nan().fill_null(False)
    return mask


def _check_no_missing(series: pl.Series, what: str) -> None:
    mask = _missing_mask(series)
    count = int(mask.sum())
    if count:
        rows = np.flatnonzero(mask.to_numpy())[:5].tolist()
        raise TargetError(
            f"{what} {series.name!r} is missing (null/NaN) in {count} of {len(series)} rows, "
            f"first at rows {rows}; rows without a target cannot be used: drop them first "
            f"(e.g. df.drop_nulls({series.name!r}))"
        )


def _class_labels(series: pl.Series) -> list[Any]:
    """Distinct target values in class order: an Enum's own order (only the
    categories present), otherwise sorted."""
    if isinstance(series.dtype, pl.Enum):
        present = set(series.drop_nulls().cast(pl.String).unique().to_list())
        return [c for c in series.dtype.categories.to_list() if c in present]
    if isinstance(series.dtype, pl.Categorical):
        series = series.cast(pl.String)
    return series.drop_nulls().unique().sort().to_list()


@dataclass(frozen=True)
class TargetEncoding:
    """How target values map to what the core takes: regression as is, the
    classes to indices 0..K-1 (binary: labels[1] is the positive class)."""

    task: Task
    labels: tuple[Any, ...] | None = None

    @property
    def n_classes(self) -> int:
        return len(self.labels) if self.labels is not None else 0

    @property
    def positive_class(self) -> Any:
        if self.task != "binary":
            raise AttributeError("only a binary target has a positive class")
        return self.labels[1]

    def encode(self, series: pl.Series) -> np.ndarray:
        """Encode a target column (e.g. of a validation set) with these labels."""
        _check_no_missing(series, "target")
        if self.task == "regression":
            if not is_numeric_dtype(series.dtype):
                raise TargetError(
                    f"target {series.name!r} has dtype {series.dtype}; regression needs a numeric "
                    "target (for classes use a binary or multiclass loss)"
                )
            values = numeric_values(series)
            if not np.isfinite(values).all():
                rows = np.flatnonzero(~np.isfinite(values))[:5].tolist()
                raise TargetError(f"target {series.name!r} is infinite at rows {rows}")
            return values
        return self._class_indices(series)

    def _class_indices(self, series: pl.Series) -> np.ndarray:
        labels = list(self.labels)
        if all(isinstance(label, str) for label in labels):
            keys, new_keys = _as_strings(series), labels
        elif is_numeric_dtype(series.dtype):
            keys, new_keys = series.cast(pl.Float64), [float(label) for label in labels]
        else:
            raise TargetError(
                f"target {series.name!r} has dtype {series.dtype}, but the classes are {labels}"
            )
        indices = keys.replace_strict(
            new_keys, list(range(len(labels))), default=None, return_dtype=pl.Float64
        )
        unknown = indices.is_null()
        if unknown.any():
            values = series.filter(unknown).unique(maintain_order=True).to_list()
            raise TargetError(
                f"target {series.name!r} has values that are not among the classes "
                f"{_listing(labels)}: {_listing(values)}"
            )
        return np.ascontiguousarray(indices.to_numpy(), dtype=np.float64)

    def decode(self, indices: np.ndarray) -> list[Any]:
        """Class labels for class indices (e.g. predicted classes)."""
        return [self.labels[int(i)] for i in np.asarray(indices)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "labels": None if self.labels is None else list(self.labels),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TargetEncoding:
        """From ``to_dict``'s plain values, checked (a model file is untrusted)."""
        if not isinstance(data, dict) or data.get("task") not in TASKS:
            raise DataError(f"target encoding: task must be one of {list(TASKS)}")
        task, labels = data["task"], data.get("labels")
        if task == "regression":
            if labels is not None:
                raise DataError("target encoding: a regression target has no classes")
            return cls(task=task)
        if not isinstance(labels, list) or not (
            all(isinstance(label, str) for label in labels)
            or all(isinstance(label, (int, float)) for label in labels)  # bool is an int
        ):
            raise DataError(
                "target encoding: classes must be a list of strings, or a list of numbers"
            )
        if not all(isinstance(label, str) or math.isfinite(label) for label in labels):
            raise DataError("target encoding: numeric classes must be finite (training refuses "
                            "a missing or infinite target)")
        if len(set(labels)) != len(labels) or len(labels) < 2:
            raise DataError("target encoding: at least two distinct classes are needed")
        if task == "binary" and len(labels) != 2:
            raise DataError(f"target encoding: a binary target has 2 classes, not {len(labels)}")
        return cls(task=task, labels=tuple(labels))


def fit_target(series: pl.Series, task: str) -> TargetEncoding:
    """Learn the target encoding for ``task`` from training data."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    _check_no_missing(series, "target")
    if task == "regression":
        return TargetEncoding("regression")
    dtype = series.dtype
    if not (is_numeric_dtype(dtype) or is_categorical_dtype(dtype)):
        raise TargetError(
            f"target {series.name!r} has dtype {dtype}, which cannot hold classes"
        )
    if dtype.is_float():
        non_integral = series.filter(series.round() != series)
        if task == "multiclass" and len(non_integral):
            raise TargetError(
                f"a multiclass target needs integer or string classes; {series.name!r} has "
                f"non-integer values such as {_listing(non_integral.unique().to_list(), 3)}"
            )
    labels = _class_labels(series)
    if dtype.is_float():
        labels = [int(v) if float(v).is_integer() else v for v in labels]
    if task == "binary" and len(labels) != 2:
        raise TargetError(
            f"a binary target needs exactly 2 classes; {series.name!r} has {len(labels)}: "
            f"{_listing(labels)}"
        )
    if task == "multiclass" and len(labels) < 2:
        raise TargetError(
            f"a multiclass target needs at least 2 classes; {series.name!r} has {len(labels)}: "
            f"{_listing(labels)}"
        )
    return TargetEncoding(task, tuple(labels))  # type: ignore[arg-type]


def encode_target(series: pl.Series, task: str) -> tuple[np.ndarray, TargetEncoding]:
    """The float64 target the core takes, and the encoding to reuse on new data."""
    encoding = fit_target(series, task)
    return encoding.encode(series), encoding


# ---------------------------------------------------------------- weights


def weight_values(frame: pl.DataFrame, weights: str | Any | None) -> np.ndarray | None:
    """Observation weights from a column name or an array-like, checked to be
    finite, non-negative and not all zero."""
    if weights is None:
        return None
    if isinstance(weights, str):
        series = get_column(frame, weights, role="weights column")
        if not is_numeric_dtype(series.dtype):
            raise WeightsError(
                f"weights column {weights!r} has dtype {series.dtype}; need numbers"
            )
        values, what = numeric_values(series), f"weights column {weights!r}"
    else:
        if isinstance(weights, pl.Series):
            weights = weights.cast(pl.Float64).to_numpy()
        try:
            values, what = np.asarray(weights, dtype=np.float64), "weights"
        except (TypeError, ValueError):
            raise WeightsError(
                "weights must be a column name or one number per row (an array or Series), "
                f"got {type(weights).__module__}.{type(weights).__name__}"
            ) from None
        if values.ndim != 1 or len(values) != frame.height:
            raise WeightsError(
                f"weights must be 1-D with one value per row ({frame.height}), "
                f"got shape {values.shape}"
            )
        values = np.ascontiguousarray(values)
    bad = ~np.isfinite(values)
    if bad.any():
        rows = np.flatnonzero(bad)[:5].tolist()
        raise WeightsError(
            f"{what} must be finite; {int(bad.sum())} are missing or infinite, first at rows {rows}"
        )
    negative = values < 0
    if negative.any():
        rows = np.flatnonzero(negative)[:5].tolist()
        raise WeightsError(
            f"{what} must be non-negative; {int(negative.sum())} are negative, first at rows {rows}"
        )
    if not (values > 0).any():
        raise WeightsError(f"{what} are all zero")
    return values
