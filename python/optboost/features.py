"""Model features and the core's columns: how each feature is read from a frame (bare
numeric columns zero-copy where possible, a short, wide frame's in one block; categorical ones
as codes of a stored level map), shared by the formula front end and the scikit-learn
estimators."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Union

import numpy as np
import polars as pl
import polars.selectors as cs

from .errors import DataError, FormulaError
from .frames import (
    Kind,
    categorical_codes,
    categorical_levels,
    column_kind,
    dtypes_by_name,
    get_column,
    numeric_values,
)
from .plain import distinct, expect, flag, text, texts


class FeatureColumn(NamedTuple):
    """One column for the core: ``(name, values, kind, n_levels)``; values are
    float64 (numeric, NaN = missing) or int32 codes (categorical, -1 = missing);
    n_levels is 0 for numeric columns."""

    name: str
    values: np.ndarray
    kind: Kind
    n_levels: int


class FeatureBlock(NamedTuple):
    """Numeric columns for the core in one item, as a wide frame's are: ``values[:, j]`` (a
    Fortran- or C-order float64 array) is the column of ``names[j]``. The core reads it as those
    columns; ``per_column`` splits it for code that wants them one by one."""

    names: list[str]
    values: np.ndarray
    kind: Kind = "numeric"
    n_levels: int = 0


def per_column(columns: Sequence[FeatureColumn | FeatureBlock]) -> list[FeatureColumn]:
    """The columns with every block split into its columns (views, no copy; a sparse block's
    columns dense, one array each)."""
    result: list[FeatureColumn] = []
    for column in columns:
        if isinstance(column, FeatureBlock) and column.kind == "sparse":
            indptr, indices, values, n_rows = column.values
            for j, name in enumerate(column.names):
                dense = np.zeros(n_rows)
                stored = slice(indptr[j], indptr[j + 1])
                dense[indices[stored]] = values[stored]
                result.append(FeatureColumn(name, dense, "numeric", 0))
        elif isinstance(column, FeatureBlock):
            result.extend(
                FeatureColumn(name, column.values[:, j], "numeric", 0)
                for j, name in enumerate(column.names)
            )
        else:
            result.append(column)
    return result


@dataclass(frozen=True)
class Feature:
    """How one model feature is derived from the data.

    source: the bare column name, ``C(column)``, or the term that produced it
    (e.g. ``a:b`` for ``a[x]:b``); source_columns: the original data columns
    it depends on (for importance by original column); levels: the level map
    of a categorical feature (code i <-> levels[i]); materialised: whether it
    is computed from a term rather than read from a column.
    """

    name: str
    kind: Kind
    source: str
    source_columns: tuple[str, ...]
    levels: tuple[str, ...] | None = None
    materialised: bool = False

    @classmethod
    def numeric_columns(cls, names: Sequence[str]) -> list[Feature]:
        """``Feature(name, "numeric", name, (name,))`` for each of ``names`` (bare numeric
        columns), filled in without the frozen dataclass's ``__init__``, whose
        ``object.__setattr__`` per field costs half as much again on a wide frame's
        thousands of columns."""
        new = object.__new__
        features = []
        for name in names:
            feature = new(cls)
            feature.__dict__.update(
                name=name,
                kind="numeric",
                source=name,
                source_columns=(name,),
                levels=None,
                materialised=False,
            )
            features.append(feature)
        return features

    @property
    def n_levels(self) -> int:
        return len(self.levels) if self.levels is not None else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "source_columns": list(self.source_columns),
            "levels": None if self.levels is None else list(self.levels),
            "materialised": self.materialised,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Feature:
        expect(data, Mapping, "a feature")
        kind = data["kind"]
        if kind not in ("numeric", "categorical"):
            raise FormulaError(f"feature kind must be 'numeric' or 'categorical', got {kind!r}")
        levels = data.get("levels")
        if levels is not None:
            distinct(texts(levels, "levels"), f"levels of feature {data['name']!r}")
        return cls(
            name=text(data["name"], "feature name"),
            kind=kind,
            source=text(data["source"], "feature source"),
            source_columns=tuple(texts(data["source_columns"], "source columns")),
            levels=None if levels is None else tuple(texts(levels, "levels")),
            materialised=flag(data.get("materialised", False), "materialised"),
        )


# Up to this many rows, a frame's bare numeric columns are copied out in one block
# (``_numeric_block``): a column of 4,096 float64 (32 KB) copies in about the time of
# the per-column calls (``get_column``, ``to_numpy``: some 10 µs) it replaces. Taller
# frames keep the per-column path, which reads float64 columns without a copy.
BLOCK_MAX_ROWS = 4_096
# Below this many bare numeric columns, the per-column calls cost too little to matter.
BLOCK_MIN_COLUMNS = 64
# Up to this many rows, a whole frame of numbers is converted through its transpose
# (``whole_block``).
TRANSPOSE_MAX_ROWS = 32


def _numeric_block(
    frame: pl.DataFrame, features: Sequence[Feature], numeric_frame: bool = False
) -> tuple[np.ndarray, dict[str, int]]:
    """The bare numeric features of a short, wide frame as the columns of one Fortran-order
    float64 array, and each one's column in it; no columns when the frame is tall or narrow,
    or when a column is not numbers (``numeric_values`` then says which). numeric_frame:
    whether the caller knows every column of the frame to be numbers (``whole_block``)."""
    bare = [f for f in features if f.kind == "numeric" and not f.materialised]
    if frame.height > BLOCK_MAX_ROWS or len(bare) < BLOCK_MIN_COLUMNS:
        return np.empty((0, 0)), {}
    names = [f.source_columns[0] for f in bare]
    block = None
    if numeric_frame and 2 * len(names) >= frame.width:
        position = {name: j for j, name in enumerate(frame.columns)}
        block = whole_block(frame, picker([position[name] for name in names]))
    if block is None:
        block = selected_block(frame, names)
    if block is None:
        return np.empty((0, 0)), {}
    return block, {f.name: j for j, f in enumerate(bare)}


# Where a wide model's features are in a frame: (the frame's columns, the features' positions
# among them as a ``picker``, or None when one is absent, whether to convert the whole frame).
Layout = tuple[list[str], Union[slice, np.ndarray, None], bool]


def wide_block(
    frame: pl.DataFrame, names: Sequence[str], layout: Layout | None, whole: bool
) -> tuple[np.ndarray | None, Layout | None]:
    """The bare numeric columns ``names`` of a short frame as one block (None for a tall frame,
    for few names, and when a column is absent or not numbers), and the layout to keep for the
    next frame: ``layout`` again when that frame has the same columns (finding thousands of
    names again costs more than a prediction of a few rows). whole=False: the frame has columns
    that are not numbers (so not to be converted all together)."""
    if frame.height > BLOCK_MAX_ROWS or len(names) < BLOCK_MIN_COLUMNS:
        return None, layout
    columns = frame.columns
    if layout is None or layout[0] != columns:
        position = {name: j for j, name in enumerate(columns)}
        index = [position.get(name) for name in names]
        whole = whole and 2 * len(names) >= len(columns)
        layout = (columns, None if None in index else picker(index), whole)
    _, taken, whole = layout
    if taken is None:
        return None, layout
    block = whole_block(frame, taken) if whole else None
    if block is None:
        if whole:  # a column of text, dates, ...: the frame's layout says no more
            layout = (columns, taken, False)
        block = selected_block(frame, list(names))
    return block, layout


def selected_block(frame: pl.DataFrame, names: list[str]) -> np.ndarray | None:
    """The columns ``names`` as a read-only Fortran-order float64 array, as ``numeric_values``
    gives each (NaN for nulls), or None when one is not numbers."""
    # frame[names] takes the columns without an expression per name, which select builds;
    # to_numpy casts them to their common type, float64 (NaN for nulls) when they mix
    # integers and floats, as numeric_values casts each.
    return _float_block(frame[names].to_numpy(order="fortran"))


def picker(index: Sequence[int]) -> slice | np.ndarray:
    """What takes the columns at ``index`` from an array: a slice when they are a run (a view,
    still in Fortran order), else the index."""
    if len(index) and index[-1] - index[0] == len(index) - 1 and list(index) == list(
        range(index[0], index[-1] + 1)
    ):
        return slice(index[0], index[-1] + 1)
    return np.asarray(index, dtype=np.intp)


def whole_block(frame: pl.DataFrame, columns: slice | np.ndarray) -> np.ndarray | None:
    """The ``columns`` (a ``picker``) as ``selected_block`` gives them, from the conversion
    of the whole frame: on a frame of numbers, polars' selection of thousands of columns by name
    costs as much as the conversion, and picking them from the array next to nothing. None when
    the frame has a column that is not numbers (the array is then of objects)."""
    try:
        if 0 < frame.height <= TRANSPOSE_MAX_ROWS:
            # The frame's rows as columns, in one array row each: for a few rows of thousands
            # of columns, half the time of to_numpy's column-by-column copy. Either way the
            # values are cast to the columns' common type, a float64 for mixed integers and
            # floats, which is what numeric_values casts each column to.
            block = frame.transpose().to_numpy(order="c").T
        else:
            block = frame.to_numpy(order="fortran")
    except Exception:  # a column polars cannot put in an array with the others (Int128, ...)
        return None  # the column-by-column path names the problem
    if block.dtype.kind not in "biuf":
        return None
    return _float_block(block[:, columns])


def _float_block(block: np.ndarray) -> np.ndarray | None:
    if block.dtype.kind not in "biuf":  # strings, dates, ...: not numbers
        return None
    block = np.asfortranarray(block, dtype=np.float64)
    block.flags.writeable = False
    return block


# Column dtypes whose every value is a number (or a boolean) the core reads as float64: a bare
# column of one of them is a numeric feature without further look (``column_kind`` decides the
# others, one by one).
_PLAIN_NUMERIC = (
    pl.Float64, pl.Float32, pl.Int64, pl.Int32, pl.Int16, pl.Int8,
    pl.UInt64, pl.UInt32, pl.UInt16, pl.UInt8, pl.Boolean,
)


def other_columns(frame: pl.DataFrame) -> set[str]:
    """Names of the frame's columns of a dtype outside ``_PLAIN_NUMERIC``. polars picks them out
    in one call (the complement, few columns, costs a tenth of the plain ones' selection); a dtype
    per column (``frame.dtypes``) and a check each cost milliseconds on a wide frame."""
    return set(frame.select(~cs.by_dtype(*_PLAIN_NUMERIC)).columns)


def feature_columns(
    frame: pl.DataFrame,
    features: Sequence[Feature],
    computed: Sequence[np.ndarray] = (),
    schema: Mapping[str, pl.DataType] | None = None,
    numeric_frame: bool = False,
) -> list[FeatureColumn | FeatureBlock]:
    """The core's columns of ``features``, read from ``frame`` by name: the one column pipeline
    of the formula front end and the scikit-learn estimators. ``computed``: the values of the
    materialised features, in order. ``schema``: ``dtypes_by_name(frame)`` if the caller has it
    (a wide frame's costs milliseconds); read here only for columns outside the numeric block.
    ``numeric_frame``: as in ``_numeric_block``. Runs of features in the block become one
    ``FeatureBlock`` each."""
    result: list[FeatureColumn | FeatureBlock] = []
    computed_index = 0
    block, in_block = _numeric_block(frame, features, numeric_frame)
    if in_block and len(in_block) == len(features):  # every feature in the block
        return [FeatureBlock(list(in_block), block)]
    run: list[str] = []  # names of consecutive features in the block, not yet added

    def add_run() -> None:
        if run:
            start = in_block[run[0]]
            result.append(FeatureBlock(run.copy(), block[:, start : start + len(run)]))
            run.clear()

    for feature in features:
        if feature.name in in_block:
            run.append(feature.name)
            continue
        add_run()
        if feature.materialised:
            values = computed[computed_index]
            computed_index += 1
            result.append(FeatureColumn(feature.name, values, "numeric", 0))
            continue
        if schema is None:
            schema = dtypes_by_name(frame)
        try:
            series = frame.get_column(feature.source_columns[0])
        except pl.exceptions.ColumnNotFoundError:
            # get_column's membership test costs O(columns): only for the message.
            series = get_column(frame, feature.source_columns[0], role="feature column")
        if feature.kind == "categorical":
            assert feature.levels is not None
            codes = categorical_codes(series, feature.levels)
            result.append(FeatureColumn(feature.name, codes, "categorical", feature.n_levels))
        else:
            values = numeric_values(series, schema[feature.source_columns[0]])
            result.append(FeatureColumn(feature.name, values, "numeric", 0))
    add_run()
    return result


def column_feature(
    name: str, frame: pl.DataFrame, schema: Mapping[str, pl.DataType]
) -> Feature:
    """The column ``name`` as a bare feature: numeric, or categorical (strings, Categorical,
    Enum) with its level map learnt from ``frame``."""
    kind = column_kind(name, schema[name])
    levels = (
        tuple(categorical_levels(frame.get_column(name))) if kind == "categorical" else None
    )
    return Feature(name, kind, name, (name,), levels)


def frame_features(frame: pl.DataFrame) -> tuple[Feature, ...]:
    """Every column of ``frame`` as a bare feature, as ``y ~ .`` takes them (the scikit-learn
    estimators' features of a frame)."""
    schema = dtypes_by_name(frame)
    return tuple(column_feature(name, frame, schema) for name in frame.columns)


def matrix_features(names: Sequence[str]) -> tuple[Feature, ...]:
    """The numeric features of a matrix's columns, named ``names``."""
    return tuple(Feature(name, "numeric", name, (name,)) for name in names)


# Row indices cross to the core as uint32.
MAX_SPARSE_ROWS = 2**32 - 1


def is_sparse(X: Any) -> bool:
    """Whether X is a scipy.sparse matrix or array (told without importing scipy)."""
    return type(X).__module__.startswith("scipy.sparse") and hasattr(X, "tocsc")


def sparse_block(names: Sequence[str], X: Any) -> FeatureBlock:
    """A scipy.sparse matrix as one sparse block for the core, in CSC form (CSR converted: a
    copy proportional to the stored values, never to the dense matrix; other formats as
    scipy converts them). Rows not stored are 0.0, a stored NaN is missing; ±inf, duplicate
    or unsorted row indices of a CSC matrix and more rows than uint32 holds are refused."""
    if X.ndim != 2:
        raise DataError(f"expected a 2-D sparse matrix, got {X.ndim}-D")
    n_rows, n_columns = X.shape
    if n_rows > MAX_SPARSE_ROWS:
        raise DataError(f"a sparse matrix of {n_rows} rows: at most {MAX_SPARSE_ROWS} are supported")
    if len(names) != n_columns:
        raise DataError(f"a sparse matrix of {n_columns} columns, expected {len(names)}")
    csc = X if X.format == "csc" else X.tocsc()
    values = np.ascontiguousarray(csc.data, dtype=np.float64)
    infinite = np.isinf(values)
    if infinite.any():
        k = int(np.argmax(infinite))
        column = int(np.searchsorted(csc.indptr, k, side="right")) - 1
        raise DataError(
            f"Input X contains infinity (row {int(csc.indices[k])}, column {column}); "
            "missing values are NaN"
        )
    indices = np.asarray(csc.indices)
    if indices.size and (indices.min() < 0 or indices.max() >= n_rows):
        bad = int(indices.min()) if indices.min() < 0 else int(indices.max())
        raise DataError(f"a sparse matrix of {n_rows} rows has row index {bad}: not in 0..{n_rows - 1}")
    # int32 indices (scipy's default) are read as uint32 in place, being non-negative.
    rows = indices.view(np.uint32) if indices.dtype == np.int32 else indices.astype(np.uint32)
    indptr = np.asarray(csc.indptr).astype(np.int64, copy=False)
    return FeatureBlock(list(names), (indptr, np.ascontiguousarray(rows), values, n_rows), "sparse")


def matrix_block(names: Sequence[str], X: np.ndarray) -> FeatureBlock:
    """A 2-D float64 matrix as one block for the core, read in place in either order: a
    C-order (row-major) matrix is binned by rows, never copied to columns. Any other layout
    (a strided view) is copied once, in C order."""
    if X.dtype != np.float64 or X.ndim != 2:
        raise DataError(f"expected a 2-D float64 matrix, got {X.ndim}-D {X.dtype}")
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    return FeatureBlock(list(names), X)
