"""R-style formulas (``y ~ a + C(b) + np.log(c) + a:d``) to feature columns.

formulaic parses the formula's structure (``+``, ``-``, ``.``, ``:``, ``*``);
it never evaluates anything here. Terms then take one of two paths:

* bare columns (``a``) and ``C(column)`` / ``factor(column)``: numeric columns
  go to the core zero-copy where possible (a short, wide frame's in one block,
  with no Python object per column on the way but its ``Feature``), string /
  Categorical / Enum columns and ``C(...)`` become native categorical codes
  (trees split on categories directly, no dummies);
* every other term (transforms, interactions) is computed by :mod:`.terms`, a
  small closed expression language evaluated without ``eval``, with full
  dummy sets for categorical factors and missing inputs giving NaN (no row is
  ever dropped).

The :class:`DesignSpec` re-derives the same columns for new data by column
name from plain values only (expression texts, level lists, learnt numbers):
a model file is data, and loading or predicting with one runs no code it names.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Union

import numpy as np
import polars as pl
import polars.selectors as cs

from .errors import DataError, FormulaError
from .expansion import bounded_parser
from .frames import (
    Kind,
    MissingColumnError,
    TargetEncoding,
    categorical_codes,
    categorical_levels,
    column_kind,
    dtypes_by_name,
    fit_target,
    get_column,
    missing_column_message,
    numeric_values,
    to_polars,
    weight_values,
)
from .terms import (
    MAX_COMPUTED_COLUMNS,
    Categorical,
    Column,
    Offset,
    Evaluation,
    Factor,
    finite_float,
    column_factor,
    factor_levels,
    interaction_columns,
    is_survival,
    parse_factor,
    stateful_keys,
    term_width,
)

__all__ = [
    "Design",
    "DesignSpec",
    "Feature",
    "FeatureBlock",
    "FeatureColumn",
    "FormulaError",
    "TermSpec",
    "build_design",
]

SPEC_VERSION = 2
# Models written by optboost 0.1 (spec version 1) whose formula had transformed
# terms stored formulaic's objects, which cannot be read back without running
# code named by the file; those with bare columns and C(...) only still load.
OLD_SPEC_VERSION = 1
MAX_LEVELS = 1_000_000
# Characters of a formula with more than bare column names: formulaic's parse of one costs
# about 25 µs a character (a formula of bare names has its own parse, linear and fast).
MAX_FORMULA_LENGTH = 20_000

# A right-hand-side term: a bare column's name, or the parsed factors of any other term.
Term = Union[str, list[Factor]]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NON_IDENTIFIER_PREFIX = "_optboost_column_"


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
    """The columns with every block split into its columns (views, no copy)."""
    result: list[FeatureColumn] = []
    for column in columns:
        if isinstance(column, FeatureBlock):
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
        _expect(data, Mapping, "a feature")
        kind = data["kind"]
        if kind not in ("numeric", "categorical"):
            raise FormulaError(f"feature kind must be 'numeric' or 'categorical', got {kind!r}")
        levels = data.get("levels")
        if levels is not None:
            _distinct(_texts(levels, "levels"), f"levels of feature {data['name']!r}")
        return cls(
            name=_text(data["name"], "feature name"),
            kind=kind,
            source=_text(data["source"], "feature source"),
            source_columns=tuple(_texts(data["source_columns"], "source columns")),
            levels=None if levels is None else tuple(_texts(levels, "levels")),
            materialised=_flag(data.get("materialised", False), "materialised"),
        )


@dataclass(frozen=True)
class TermSpec:
    """A computed term: each factor's expression text and the name it takes in
    column names, the level map of each categorical factor, and the numbers its
    stateful transforms learnt (by transform text)."""

    factors: tuple[str, ...]
    names: tuple[str, ...]
    levels: tuple[tuple[str, ...] | None, ...]
    state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @cached_property
    def parsed(self) -> tuple[Factor, ...]:
        """The factors, parsed once (a term is read at load and at every predict)."""
        return tuple(parse_factor(text) for text in self.factors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "factors": list(self.factors),
            "names": list(self.names),
            "levels": [None if lv is None else list(lv) for lv in self.levels],
            "state": {key: dict(value) for key, value in self.state.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TermSpec:
        _expect(data, Mapping, "a term")
        factors = tuple(_texts(data["factors"], "term factors"))
        names = tuple(_texts(data["names"], "term names"))
        levels = data["levels"]
        _expect(levels, list, "term levels")
        state = data.get("state", {})
        _expect(state, Mapping, "term state")
        if not factors or not (len(factors) == len(names) == len(levels)):
            raise FormulaError("a term needs as many names and level lists as factors")
        term = cls(
            factors=factors,
            names=names,
            levels=tuple(None if lv is None else tuple(_texts(lv, "levels")) for lv in levels),
            state={_text(k, "state key"): _plain_state(v) for k, v in state.items()},
        )
        for factor, levels_of in zip(term.parsed, term.levels):
            if levels_of is not None:
                _distinct(levels_of, f"levels of {factor.text!r}")
            for key in stateful_keys(factor):
                if key not in term.state:
                    raise FormulaError(f"term {factor.text!r} has no stored state for {key}")
            if _is_categorical_factor(factor) and levels_of is None:
                raise FormulaError(f"categorical factor {factor.text!r} has no stored levels")
        return term


@dataclass
class DesignSpec:
    """Everything needed to turn a frame into the model's feature columns
    again: picklable and JSON-serialisable (``to_dict`` / ``from_dict``) as
    plain values.

    ``context`` (your own functions called in the formula) is kept in memory
    only; a loaded spec needs it again (``optboost.load(path, context=...)``).
    """

    formula: str
    target: str
    target_encoding: TargetEncoding
    features: tuple[Feature, ...]
    weights_column: str | None = None
    terms: tuple[TermSpec, ...] = ()
    context: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    # Set when the left-hand side transforms a column (``np.log(y) ~ x``, as in R):
    # the expression text, evaluated by the term language on every target read.
    target_expression: str | None = None
    # R's offset(column) term: the column added to the link at fit and predict.
    offset_column: str | None = None
    # The target columns of a multi-output formula (``y1 + y2 ~ x``), one model output each;
    # empty for one target (``target``).
    targets: tuple[str, ...] = ()
    # (frame columns, each feature's position among them or None if one is absent, whether
    # to convert the whole frame) of the last frame of ``_wide_block``.
    _layout: tuple[list[str], slice | np.ndarray | None, bool] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def task(self) -> str:
        return self.target_encoding.task

    @property
    def target_names(self) -> list[str]:
        """The target columns, one per model output (one for a single target)."""
        return list(self.targets) if self.targets else [self.target]

    @property
    def feature_names(self) -> list[str]:
        return [feature.name for feature in self.features]

    @property
    def source_columns(self) -> dict[str, tuple[str, ...]]:
        """Feature name -> the original data columns it is derived from."""
        return {feature.name: feature.source_columns for feature in self.features}

    @property
    def input_columns(self) -> list[str]:
        """The data columns needed to compute the features, in first-use order."""
        return list(self._input_columns)

    @cached_property
    def _input_columns(self) -> tuple[str, ...]:
        # Kept: every prediction checks them, and a spec's features never change.
        return tuple(dict.fromkeys(c for f in self.features for c in f.source_columns))

    @cached_property
    def _all_bare_numeric(self) -> bool:
        """Whether every feature is a numeric column read as is (``y ~ .`` on numbers)."""
        return not self.terms and all(
            f.kind == "numeric" and not f.materialised and f.source_columns == (f.name,)
            for f in self.features
        )

    @property
    def functions(self) -> list[str]:
        """Names of your own functions the formula calls (to pass in ``context=``)."""
        names = (name for term in self.terms for f in term.parsed for name in f.functions)
        return list(dict.fromkeys(names))

    # -------------------------------------------------------------- data

    def columns(
        self, data: Any, *, context: Mapping[str, Any] | None = None
    ) -> list[FeatureColumn | FeatureBlock]:
        """The feature columns of ``data``, selected by name (never by
        position); unseen categorical levels become missing with a warning.
        A short, wide frame's numeric columns come in blocks (``per_column``
        splits them)."""
        frame = to_polars(data)
        block = self._wide_block(frame)
        if block is not None:
            return [FeatureBlock(list(self._input_columns), block)]  # the feature names
        present = set(frame.columns)
        missing = [c for c in self._input_columns if c not in present]
        if missing:
            raise MissingColumnError(
                missing_column_message(missing[0], frame.columns, role="feature column")
                + (f" (also missing: {missing[1:]})" if len(missing) > 1 else "")
            )
        computed: list[tuple[str, np.ndarray]] = []
        evaluation_context = context if context is not None else (self.context or {})
        known: dict[Any, Any] = {}  # the columns the terms share (Evaluation.known)
        for term in self.terms:
            evaluation = Evaluation(frame, evaluation_context, dict(term.state), known=known)
            computed.extend(
                interaction_columns(term.parsed, term.names, evaluation, term.levels)
            )
        expected = [f.name for f in self.features if f.materialised]
        if [name for name, _ in computed] != expected:
            raise FormulaError(
                f"formula {self.formula!r}: the terms give columns "
                f"{[name for name, _ in computed][:10]}, the model has {expected[:10]}"
            )
        return self._feature_columns(frame, [values for _, values in computed])

    def _wide_block(self, frame: pl.DataFrame, whole: bool = True) -> np.ndarray | None:
        """Every feature of a wide model of bare numeric columns (``y ~ .`` on numbers), as the
        block of a short frame, or None: for other models and frames, and when a column is
        absent or not numbers (``columns`` then says which). Where each feature is in the frame
        is kept for the next frame of the same columns: finding thousands of names again costs
        more than a prediction of a few rows. whole=False: the frame has columns that are not
        numbers (so not to be converted all together)."""
        if not self._all_bare_numeric or frame.height > BLOCK_MAX_ROWS:
            return None
        names = self._input_columns
        if len(names) < BLOCK_MIN_COLUMNS:
            return None
        columns = frame.columns
        layout = self._layout
        if layout is None or layout[0] != columns:
            position = {name: j for j, name in enumerate(columns)}
            index = [position.get(name) for name in names]
            whole = whole and 2 * len(names) >= len(columns)
            layout = (columns, None if None in index else _picker(index), whole)
            self._layout = layout
        _, picker, whole = layout
        if picker is None:
            return None
        block = _whole_block(frame, picker) if whole else None
        if block is None:
            if whole:  # a column of text, dates, ...: the frame's layout says no more
                self._layout = (columns, picker, False)
            block = _selected_block(frame, list(names))
        return block

    def target_values(self, data: Any) -> np.ndarray:
        """The encoded target of ``data`` (e.g. a validation set), with the
        training classes; (n, K) for a multi-output formula."""
        frame = to_polars(data)
        if self.targets:
            return _target_matrix(self.target_encoding, frame, self.targets)
        return self.target_encoding.encode(self._target_series(frame))

    def _target_series(self, frame: pl.DataFrame) -> pl.Series:
        if self.target_expression is None:
            return get_column(frame, self.target, role="target column")
        return _evaluated_target(self.target_expression, frame, self.context or {})

    def weight_values(
        self, data: Any, weights: str | Any | None = None
    ) -> np.ndarray | None:
        """Weights of ``data``: ``weights`` if given, else the training weights
        column if there was one."""
        frame = to_polars(data)
        return weight_values(
            frame, weights if weights is not None else self.weights_column
        )

    def _feature_columns(
        self,
        frame: pl.DataFrame,
        computed: Sequence[np.ndarray],
        schema: Mapping[str, pl.DataType] | None = None,
        numeric_frame: bool = False,
    ) -> list[FeatureColumn | FeatureBlock]:
        """``numeric_frame``: as in ``_numeric_block``."""
        return feature_columns(frame, self.features, computed, schema, numeric_frame)

    # -------------------------------------------------------------- serialisation

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description of plain values."""
        return {
            "version": SPEC_VERSION,
            "formula": self.formula,
            "target": self.target,
            "target_encoding": self.target_encoding.to_dict(),
            "target_expression": self.target_expression,
            "offset_column": self.offset_column,
            "weights_column": self.weights_column,
            "features": [feature.to_dict() for feature in self.features],
            "terms": [term.to_dict() for term in self.terms],
            # only for several targets, so that single-target files stay as they were
            **({"targets": list(self.targets)} if self.targets else {}),
        }

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], context: Mapping[str, Any] | None = None
    ) -> DesignSpec:
        """Rebuild a spec from plain values; FormulaError (or KeyError/TypeError,
        which the model loader reports as a malformed file) for anything else.
        Calls nothing named by ``data``."""
        _expect(data, Mapping, "the design")
        version = data.get("version")
        if version == OLD_SPEC_VERSION:
            if data.get("formulaic") is not None:
                raise FormulaError(
                    "this model was saved by optboost 0.1 with transformed formula terms, "
                    "whose stored form could run code when loaded; it cannot be read safely. "
                    "Fit the model again with this version (models with only bare columns "
                    "and C(...) terms still load)"
                )
        elif version != SPEC_VERSION:
            raise FormulaError(f"unsupported design version {version!r}")
        terms = tuple(TermSpec.from_dict(t) for t in data.get("terms", []))
        features = tuple(Feature.from_dict(f) for f in _list(data["features"], "features"))
        # A term's columns are the product of its factors' widths (levels, poly's degree,
        # bs's splines): a file that lists few features cannot make prediction build
        # billions of columns.
        computed = sum(f.materialised for f in features)
        for term in terms:
            if term_width(term.parsed, term.levels) > computed:
                raise FormulaError(
                    f"term {':'.join(term.names)!r} gives more columns than the model has"
                )
        sources = {c for f in features for c in f.source_columns}
        for term in terms:
            for factor in term.parsed:
                unknown = [c for c in factor.columns if c not in sources]
                if unknown:
                    raise FormulaError(
                        f"term {factor.text!r} reads {unknown}, which no feature lists as a source"
                    )
        for feature in features:
            if not feature.source_columns:
                raise FormulaError(f"feature {feature.name!r} has no source column")
            if feature.kind == "categorical" and feature.levels is None:
                raise FormulaError(f"categorical feature {feature.name!r} has no levels")
            if feature.n_levels > MAX_LEVELS:
                raise FormulaError(f"feature {feature.name!r} has more than {MAX_LEVELS} levels")
        spec = cls(
            formula=_text(data["formula"], "formula"),
            target=_text(data["target"], "target"),
            target_encoding=TargetEncoding.from_dict(data["target_encoding"]),
            features=features,
            weights_column=_optional_text(data.get("weights_column"), "weights column"),
            terms=terms,
            context=context,
            target_expression=_optional_text(data.get("target_expression"), "target expression"),
            offset_column=_optional_text(data.get("offset_column"), "offset column"),
            targets=tuple(_texts(data.get("targets", []), "targets")),
        )
        if spec.target_expression is not None:
            parse_factor(spec.target_expression)
        needed = [name for name in spec.functions if not callable((context or {}).get(name))]
        if needed:
            raise FormulaError(
                f"the model's formula {spec.formula!r} calls your own function(s) {needed}; "
                "a model file cannot carry functions: load it with "
                f"optboost.load(path, context={{{', '.join(repr(n) + ': ...' for n in needed)}}})"
            )
        return spec

    def __reduce__(self):
        # Pickle through the plain form: one serialisation path, nothing callable in it.
        return (DesignSpec.from_dict, (self.to_dict(),))


def _expect(value: Any, kind: type, what: str) -> None:
    if not isinstance(value, kind):
        raise FormulaError(f"{what} must be a {kind.__name__}, got {type(value).__name__}")


def _text(value: Any, what: str) -> str:
    _expect(value, str, what)
    return value


def _optional_text(value: Any, what: str) -> str | None:
    return None if value is None else _text(value, what)


def _list(value: Any, what: str) -> list:
    _expect(value, list, what)
    return value


def _texts(values: Any, what: str) -> list[str]:
    return [_text(v, what) for v in _list(values, what)]


def _distinct(values: Sequence[str], what: str) -> None:
    if len(set(values)) != len(values):
        raise FormulaError(f"{what} repeat a level")


def _flag(value: Any, what: str) -> bool:
    _expect(value, bool, what)
    return value


def _plain_state(value: Any) -> dict[str, Any]:
    """Learnt numbers: a dict of numbers and lists of numbers, nothing else."""
    _expect(value, Mapping, "transform state")
    for key, entry in value.items():
        items = entry if isinstance(entry, list) else [entry]
        if not isinstance(key, str) or not all(finite_float(v) is not None for v in items):
            raise FormulaError(f"transform state {key!r} must hold finite numbers only")
    return dict(value)


@dataclass
class Design:
    """The training data in the core's terms, and the spec to redo it."""

    spec: DesignSpec
    features: list[FeatureColumn | FeatureBlock]
    y: np.ndarray
    weights: np.ndarray | None


# Up to this many rows, a frame's bare numeric columns are copied out in one block
# (``_numeric_block``): a column of 4,096 float64 (32 KB) copies in about the time of
# the per-column calls (``get_column``, ``to_numpy``: some 10 µs) it replaces. Taller
# frames keep the per-column path, which reads float64 columns without a copy.
BLOCK_MAX_ROWS = 4_096
# Below this many bare numeric columns, the per-column calls cost too little to matter.
BLOCK_MIN_COLUMNS = 64
# Up to this many rows, a whole frame of numbers is converted through its transpose
# (``_whole_block``).
TRANSPOSE_MAX_ROWS = 32


def _numeric_block(
    frame: pl.DataFrame, features: Sequence[Feature], numeric_frame: bool = False
) -> tuple[np.ndarray, dict[str, int]]:
    """The bare numeric features of a short, wide frame as the columns of one Fortran-order
    float64 array, and each one's column in it; no columns when the frame is tall or narrow,
    or when a column is not numbers (``numeric_values`` then says which). numeric_frame:
    whether the caller knows every column of the frame to be numbers (``_whole_block``)."""
    bare = [f for f in features if f.kind == "numeric" and not f.materialised]
    if frame.height > BLOCK_MAX_ROWS or len(bare) < BLOCK_MIN_COLUMNS:
        return np.empty((0, 0)), {}
    names = [f.source_columns[0] for f in bare]
    block = None
    if numeric_frame and 2 * len(names) >= frame.width:
        position = {name: j for j, name in enumerate(frame.columns)}
        block = _whole_block(frame, _picker([position[name] for name in names]))
    if block is None:
        block = _selected_block(frame, names)
    if block is None:
        return np.empty((0, 0)), {}
    return block, {f.name: j for j, f in enumerate(bare)}


def _selected_block(frame: pl.DataFrame, names: list[str]) -> np.ndarray | None:
    """The columns ``names`` as a read-only Fortran-order float64 array, as ``numeric_values``
    gives each (NaN for nulls), or None when one is not numbers."""
    # frame[names] takes the columns without an expression per name, which select builds;
    # to_numpy casts them to their common type, float64 (NaN for nulls) when they mix
    # integers and floats, as numeric_values casts each.
    return _float_block(frame[names].to_numpy(order="fortran"))


def _picker(index: Sequence[int]) -> slice | np.ndarray:
    """What takes the columns at ``index`` from an array: a slice when they are a run (a view,
    still in Fortran order), else the index."""
    if len(index) and index[-1] - index[0] == len(index) - 1 and list(index) == list(
        range(index[0], index[-1] + 1)
    ):
        return slice(index[0], index[-1] + 1)
    return np.asarray(index, dtype=np.intp)


def _whole_block(frame: pl.DataFrame, columns: slice | np.ndarray) -> np.ndarray | None:
    """The ``columns`` (a ``_picker``) as ``_selected_block`` gives them, from the conversion
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


def _other_columns(frame: pl.DataFrame) -> set[str]:
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


def matrix_block(names: Sequence[str], X: np.ndarray) -> FeatureBlock:
    """A 2-D float64 matrix as one block for the core, read in place in either order: a
    C-order (row-major) matrix is binned by rows, never copied to columns. Any other layout
    (a strided view) is copied once, in C order."""
    if X.dtype != np.float64 or X.ndim != 2:
        raise DataError(f"expected a 2-D float64 matrix, got {X.ndim}-D {X.dtype}")
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    return FeatureBlock(list(names), X)


# ------------------------------------------------------------------ building


def build_design(
    formula: str,
    data: Any,
    *,
    task: str = "regression",
    weights: str | Any | None = None,
    context: Mapping[str, Any] | None = None,
    left_out: Collection[str] = (),
) -> Design:
    """Parse ``formula`` against ``data`` and produce the core's inputs.

    task: "regression", "binary" or "multiclass" (how the target is encoded);
    weights: a column name (left out of ``.``) or an array with one value per
    row; context: your own functions, called by name in the formula;
    left_out: columns the caller took out of ``data`` (an offset column), which
    ``- name`` may remove as a no-op (R's removal of a column ``.`` leaves out).
    """
    frame = to_polars(data)
    if frame.height == 0:
        raise DataError(
            f"the data have no rows (columns: {frame.columns[:30]}); a model needs rows to fit"
        )
    weights_column = weights if isinstance(weights, str) else None
    context = dict(context or {})
    target, target_factor, terms = _parse(formula, frame, weights_column, left_out)
    present = set(frame.columns)  # polars builds frame.columns anew at each call
    for term in terms:
        if type(term) is str:
            if term not in present:
                raise _absent(formula, term, frame, left_out)
        else:
            for factor in term:
                _check_factor(formula, factor, frame, present, context, left_out)

    computed_terms = [term for term in terms if type(term) is not str]
    if any(is_survival(factor) for term in computed_terms for factor in term):
        raise FormulaError(
            f"formula {formula!r}: Surv(time, event) is a target, on the left of '~'"
        )
    offsets = [f[0].tree.column for f in computed_terms if isinstance(f[0].tree, Offset)]
    if len(offsets) > 1 or any(
        isinstance(factor.tree, Offset) for f in computed_terms if len(f) > 1 for factor in f
    ):
        raise FormulaError(f"formula {formula!r}: at most one offset(column), as a term of its own")
    offset_column = offsets[0] if offsets else None
    if offsets:
        terms = [
            term
            for term in terms
            # an offset column is not also a feature (through '.', say)
            if (
                term != offset_column
                if type(term) is str
                else not isinstance(term[0].tree, Offset)
            )
        ]
    features: list[Feature] = []
    spec_terms: list[TermSpec] = []
    computed: list[np.ndarray] = []
    others = _other_columns(frame)
    plain: list[str] = []  # the features that are bare columns of numbers
    schema: dict[str, pl.DataType] | None = None  # read only for the other columns
    known_levels: dict[str, tuple[str, ...] | None] = {}  # what the computed terms share
    known_columns: dict[Any, Any] = {}
    if not computed_terms and others.isdisjoint(terms):  # y ~ . on numbers: all at once
        plain = terms
        features = Feature.numeric_columns(plain)
        terms = []
    for term in terms:
        if type(term) is str:
            if term not in others:  # a column of numbers (the frame has it: checked above)
                features.append(Feature(term, "numeric", term, (term,)))
                plain.append(term)
                continue
            term = [column_factor(term)]
        if schema is None:
            schema = dtypes_by_name(frame)
        bare = _bare_feature(term, frame, schema)
        if bare is not None:
            features.append(bare)
            continue
        room = MAX_COMPUTED_COLUMNS - len(computed)
        spec_term, columns = _computed_term(
            formula, term, frame, context, room, known_levels, known_columns
        )
        spec_terms.append(spec_term)
        source = ":".join(spec_term.names)
        sources = tuple(dict.fromkeys(c for f in term for c in f.columns))
        for name, values in columns:
            features.append(Feature(name, "numeric", source, sources, materialised=True))
            computed.append(values)

    if not features:
        raise FormulaError(f"formula {formula!r} has no features")
    bare_columns = {f.source_columns[0] for f in features if not f.materialised}
    targets: tuple[str, ...] = ()
    if isinstance(target, tuple):  # several targets: y1 + y2 ~ ...
        targets, target = target, " + ".join(target)
        if task != "regression":
            raise FormulaError(
                f"formula {formula!r} has {len(targets)} targets: several targets need the "
                f"squared loss (multi-output regression), not a {task} loss"
            )
        target_columns = targets
    else:
        target_columns = target_factor.columns if target_factor is not None else (target,)
    for column in target_columns:
        if column in bare_columns:
            raise FormulaError(f"formula {formula!r}: the target {column!r} is also a feature")
    seen: set[str] = set()
    names = [f.name for f in features]
    duplicated = [] if len(set(names)) == len(names) else sorted(
        {name for name in names if name in seen or seen.add(name)}
    )
    if duplicated:
        raise FormulaError(f"formula {formula!r} gives duplicate feature names {duplicated}")

    if targets:
        encoding = fit_target(get_column(frame, targets[0], role="target column"), task)
        y = _target_matrix(encoding, frame, targets)
    else:
        if target_factor is None:
            target_series = get_column(frame, target, role="target column")
        else:
            target_series = _evaluated_target(target_factor.text, frame, context)
        encoding = fit_target(target_series, task)
        y = encoding.encode(target_series)
    spec = DesignSpec(
        formula=formula,
        target=target,
        target_encoding=encoding,
        features=tuple(features),
        weights_column=weights_column,
        terms=tuple(spec_terms),
        context=context or None,
        target_expression=None if target_factor is None else target_factor.text,
        offset_column=offset_column,
        targets=targets,
    )
    block = None
    if not spec_terms and len(plain) == len(features):
        # Every feature is a bare column of numbers: what the spec would work out feature by
        # feature for predictions is known already, and the training frame's layout is the
        # likeliest of the frames to come (``model.predict(df.head())``).
        spec.__dict__.update(_all_bare_numeric=True, _input_columns=tuple(plain))
        block = spec._wide_block(frame, whole=not others)
    return Design(
        spec=spec,
        features=(
            [FeatureBlock(plain, block)]
            if block is not None
            else spec._feature_columns(frame, computed, schema, not others)
        ),
        y=y,
        weights=weight_values(frame, weights),
    )


def _parse(
    formula: str,
    frame: pl.DataFrame,
    weights_column: str | None,
    left_out: Collection[str] = (),
) -> tuple[str, Factor | None, list[Term]]:
    """The target's name, its parsed expression when it transforms a column
    (else None), and the right-hand side's terms: a bare column's name, or a
    term's parsed factors. ``left_out``: as in ``build_design``."""
    if not isinstance(formula, str):
        raise FormulaError(
            f"formula must be a string like 'y ~ a + b', got {type(formula).__name__}"
        )
    if len(formula) > 1_000_000:
        raise FormulaError(f"formula of {len(formula)} characters is too long")
    simple = _parse_simple(formula, frame, weights_column, left_out)
    if simple is not None:
        return simple
    if len(formula) > MAX_FORMULA_LENGTH:
        raise FormulaError(
            f"formula of {len(formula):,} characters is too long: one beyond bare column names "
            f"(y ~ a + b - c) may have {MAX_FORMULA_LENGTH:,}; '.' stands for every other column"
        )
    # Column names formulaic would read as numbers (a column called `1`) get an
    # identifier alias, so that `.` and backticks keep them as columns.
    aliases = {
        f"{_NON_IDENTIFIER_PREFIX}{i}": name
        for i, name in enumerate(frame.columns)
        if _looks_literal(name)
    }
    reverse = {name: alias for alias, name in aliases.items()}
    text = re.sub(r"\bas\.factor\s*\(", "factor(", formula)  # R's spelling
    if reverse:
        text = re.sub(
            r"`([^`]*)`", lambda m: reverse.get(m.group(1), m.group(0)), text
        )
    available = [reverse.get(c, c) for c in frame.columns if c != weights_column]
    from formulaic import Formula  # its import is slow: only a fit needs it
    from formulaic.parser.types import Factor as FormulaicFactor

    try:
        parsed = Formula(
            text,
            _context={"__formulaic_variables_available__": available},
            _parser=bounded_parser(),
        )
    except FormulaError as error:  # an expansion beyond the bounds
        raise FormulaError(f"formula {formula!r}: {error}") from None
    except Exception as error:  # formulaic raises many types for bad syntax
        message = _ANSI.sub("", str(error)).replace("⧛", "").replace("⧚", "")
        raise FormulaError(f"cannot parse formula {formula!r}: {message}") from None
    if not hasattr(parsed, "lhs") or not hasattr(parsed, "rhs") or not hasattr(parsed.rhs, "__iter__"):
        raise FormulaError(
            f"formula {formula!r} has no target or uses '|' parts, which optboost does not "
            "support: write it as 'y ~ a + b'"
        )
    try:
        lhs_terms = [t for t in parsed.lhs if t.factors]
        rhs_terms = list(parsed.rhs)
        for term in rhs_terms:
            term.factors  # noqa: B018 - '|' parts give formulas here, not terms
    except Exception:
        raise FormulaError(
            f"formula {formula!r}: write it as 'y ~ a + b' (one target, then the features)"
        ) from None

    def restore(expr: str) -> str:
        for alias, name in aliases.items():
            expr = re.sub(rf"\b{alias}\b", "`" + name.replace("`", "") + "`", expr)
        return expr

    seen: dict[tuple[Any, str], Factor] = {}  # an expansion meets each factor in many terms

    def parsed(factor: Any) -> Factor:
        key = (factor.eval_method, factor.expr)
        if key not in seen:
            if factor.eval_method == FormulaicFactor.EvalMethod.LOOKUP:
                seen[key] = column_factor(aliases.get(factor.expr, factor.expr))
            else:
                seen[key] = _parse_factor(formula, restore(factor.expr))
        return seen[key]

    several = len(lhs_terms) > 1 and all(
        len(t.factors) == 1 and t.factors[0].eval_method == FormulaicFactor.EvalMethod.LOOKUP
        for t in lhs_terms
    )
    if not several and (len(lhs_terms) != 1 or len(lhs_terms[0].factors) != 1):
        raise FormulaError(
            f"formula {formula!r}: the left-hand side must be one column, or several columns "
            "joined by + (y1 + y2 ~ ..., one output each)"
        )
    lhs = lhs_terms[0].factors[0]
    target_factor = None
    target: str | tuple[str, ...]
    target_columns: tuple[str, ...]
    if several:  # y1 + y2 ~ ...: one output per column
        target = target_columns = tuple(
            aliases.get(t.factors[0].expr, t.factors[0].expr) for t in lhs_terms
        )
    elif lhs.eval_method == FormulaicFactor.EvalMethod.LOOKUP:
        target = aliases.get(lhs.expr, lhs.expr)
        target_columns = (target,)
    else:
        target_factor = parsed(lhs)
        if target_factor.is_categorical or stateful_keys(target_factor):
            raise FormulaError(
                f"formula {formula!r}: the left-hand side may be a column or a stateless "
                f"transform of columns (np.log(y), I(y / 1000)), not {lhs.expr!r}"
            )
        target, target_columns = target_factor.text, target_factor.columns
    for column in target_columns:
        if column not in frame.columns:
            raise MissingColumnError(
                f"formula {formula!r}: "
                + missing_column_message(column, frame.columns, role="target column")
            )
    _check_removed_names(formula, text, aliases, frame, left_out)
    factor_lists: list[Term] = []
    for term in rhs_terms:
        factors = [
            f for f in term.factors if f.eval_method != FormulaicFactor.EvalMethod.LITERAL
        ]
        if not factors:
            continue  # the intercept: trees need none
        if len(factors) == 1 and factors[0].eval_method == FormulaicFactor.EvalMethod.LOOKUP:
            factor_lists.append(aliases.get(factors[0].expr, factors[0].expr))
        else:
            factor_lists.append([parsed(f) for f in factors])
    return target, target_factor, factor_lists


def _target_matrix(
    encoding: TargetEncoding, frame: pl.DataFrame, targets: Sequence[str]
) -> np.ndarray:
    """The (n, K) target of a multi-output formula, one encoded column per target."""
    return np.column_stack(
        [encoding.encode(get_column(frame, c, role="target column")) for c in targets]
    )


def _evaluated_target(text: str, frame: pl.DataFrame, context: Mapping[str, Any]) -> pl.Series:
    factor = parse_factor(text)
    for column in factor.columns:
        get_column(frame, column, role="target column")
    with np.errstate(all="ignore"):
        values = interaction_columns([factor], [text], Evaluation(frame, context), [None])[0][1]
    return pl.Series(text, values).fill_nan(None)


_NAME = r"(?:[A-Za-z_][A-Za-z0-9_.]*|`[^`]*`)"
_SIMPLE_TERM = re.compile(rf"\s*([+-])\s*({_NAME}|\.|[01])\s*")
_SIMPLE_TARGET = re.compile(rf"\s*({_NAME})\s*~(.*)", re.S)


def _parse_simple(
    formula: str,
    frame: pl.DataFrame,
    weights_column: str | None,
    left_out: Collection[str] = (),
) -> tuple[str, None, list[Term]] | None:
    """The common formulas of bare names only (``y ~ a + b``, ``y ~ . - c``),
    parsed without formulaic, whose parse costs seconds on thousands of columns;
    None for anything else. Same terms, in the same order, as formulaic gives:
    names in order of first appearance, ``.`` as every other column in frame
    order, intercept terms dropped."""
    head = _SIMPLE_TARGET.fullmatch(formula)
    if head is None:
        return None
    target = head.group(1).strip("`")
    rest = head.group(2)
    rest = rest if rest.lstrip().startswith(("+", "-")) else "+" + rest
    added: list[str] = []
    removed: list[str] = []
    position = 0
    while position < len(rest):
        match = _SIMPLE_TERM.match(rest, position)
        if match is None or match.end() == position:
            return None
        sign, term = match.groups()
        position = match.end()
        if term in ("0", "1"):
            continue
        if term == "." and (sign == "-" or added):
            return None  # '.' first only: the order of 'a + .' is formulaic's business
        (added if sign == "+" else removed).append(term.strip("`") if term != "." else term)
    if added[:1] == ["."] and len(added) > 1:
        return None
    columns = frame.columns  # built anew at each call: once here
    if added == ["."]:
        names = [c for c in columns if c not in (target, weights_column)]
    else:
        names = list(dict.fromkeys(added))
    present = set(columns)
    for name in [target, *(name for name in removed if name not in left_out)]:
        if name not in present:
            raise MissingColumnError(
                f"formula {formula!r}: " + missing_column_message(name, frame.columns)
            )
    gone = set(removed)
    return target, None, [n for n in names if n not in gone]


def _looks_literal(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def _check_removed_names(
    formula: str,
    text: str,
    aliases: Mapping[str, str],
    frame: pl.DataFrame,
    left_out: Collection[str],
) -> None:
    """A name after '-' must be a column (or one of ``left_out``): formulaic would
    silently ignore a typo."""
    from formulaic.parser import DefaultFormulaParser
    from formulaic.parser.types import Token

    try:
        tree = DefaultFormulaParser().get_ast(text)
    except Exception:
        return  # Formula() parsed it; nothing more to learn here
    columns = set(frame.columns)
    for token in _tokens(tree):
        if token.kind == Token.Kind.NAME:
            name = aliases.get(str(token), str(token))
            if name not in columns and name not in left_out:
                raise MissingColumnError(
                    f"formula {formula!r}: " + missing_column_message(name, frame.columns)
                )


def _tokens(node: Any):
    from formulaic.parser.types import Token

    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Token):
            yield item
        stack.extend(getattr(item, "args", ()))


def _parse_factor(formula: str, text: str) -> Factor:
    try:
        return parse_factor(text)
    except FormulaError as error:
        raise FormulaError(f"formula {formula!r}: {error}") from None


def _check_factor(
    formula: str,
    factor: Factor,
    frame: pl.DataFrame,
    present: set[str],
    context: Mapping[str, Any],
    left_out: Collection[str],
) -> None:
    for name in factor.columns:
        if name not in present:
            raise _absent(formula, name, frame, left_out)
    for name in factor.functions:
        if not callable(context.get(name)):
            raise FormulaError(
                f"formula {formula!r}: unknown function {name!r} in {factor.text!r}; "
                "supported: numpy's elementwise functions (np.log, np.sqrt, ...), I(), "
                "center(), scale(), poly(), bs(), C(); pass your own in context="
            )


def _absent(
    formula: str, name: str, frame: pl.DataFrame, left_out: Collection[str]
) -> MissingColumnError:
    """The error for a feature column that ``frame`` lacks."""
    if name in left_out:
        return MissingColumnError(
            f"formula {formula!r}: column {name!r} is the offset (offset=), added to the "
            "link, not also a feature"
        )
    return MissingColumnError(
        f"formula {formula!r}: " + missing_column_message(name, frame.columns)
    )


def _is_categorical_factor(factor: Factor) -> bool:
    return isinstance(factor.tree, Categorical)


def _bare_feature(
    factors: Sequence[Factor], frame: pl.DataFrame, schema: Mapping[str, pl.DataType]
) -> Feature | None:
    """A Feature read straight from a column (a bare name or ``C(column)``), or None."""
    if len(factors) != 1:
        return None
    factor = factors[0]
    tree = factor.tree
    if isinstance(tree, Column):
        return column_feature(tree.name, frame, schema)
    if isinstance(tree, Categorical):
        levels = factor_levels(factor, frame)
        return Feature(factor.text, "categorical", factor.text, (tree.column,), levels)
    return None


def _computed_term(
    formula: str,
    factors: Sequence[Factor],
    frame: pl.DataFrame,
    context: Mapping[str, Any],
    room: int,
    known_levels: dict[str, tuple[str, ...] | None],
    known_columns: dict[Any, Any],
) -> tuple[TermSpec, list[tuple[str, np.ndarray]]]:
    """The term's spec and columns; FormulaError, before any is computed, if it would give
    more than ``room`` columns. known_levels, known_columns: what the design's terms share,
    its factors' levels (by text) and Evaluation.known."""
    names = tuple(
        f.tree.name if isinstance(f.tree, Column) else f.text for f in factors
    )
    for factor in factors:
        if factor.text not in known_levels:
            known_levels[factor.text] = factor_levels(factor, frame)
    levels = tuple(known_levels[f.text] for f in factors)
    evaluation = Evaluation(frame, context, learn=True, known=known_columns)
    try:
        width = term_width(factors, levels)
        if width > room:
            raise FormulaError(
                f"term {':'.join(f.text for f in factors)!r} gives {width:,} columns, more than "
                f"the {room:,} left of the {MAX_COMPUTED_COLUMNS:,} a formula's computed terms "
                "may give (a bare categorical column needs none: trees split on its levels)"
            )
        columns = interaction_columns(factors, names, evaluation, levels)
    except FormulaError as error:
        raise FormulaError(f"formula {formula!r}: {error}") from None
    term = TermSpec(
        factors=tuple(f.text for f in factors),
        names=names,
        levels=levels,
        state=evaluation.state,
    )
    return term, columns
