"""R-style formulas (``y ~ a + C(b) + np.log(c) + a:d``) to feature columns.

formulaic parses the formula. Terms then take one of two paths:

* bare columns (``a``) and ``C(column)`` never reach formulaic's materialiser:
  numeric columns go to the core zero-copy where possible, string /
  Categorical / Enum columns and ``C(...)`` become native categorical codes
  (no one-hot dummies; trees split on categories directly);
* every other term (transforms, interactions) is materialised by formulaic,
  without intercept (trees need none), with full dummy sets (trees do not mind
  collinearity) and with ``na_action="ignore"`` so that no row is ever
  dropped: missing inputs give NaN.

The resulting :class:`DesignSpec` re-derives the same columns for new data by
column name, using the level maps and formulaic's model spec learnt in
training.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, NamedTuple

import numpy as np
import polars as pl
from formulaic import Formula, ModelSpec, model_matrix
from formulaic.parser import DefaultFormulaParser
from formulaic.parser.types import Factor, Term, Token
from formulaic.transforms import TRANSFORMS
from formulaic.utils.code import sanitize_variable_names

from .errors import OptboostError
from .frames import (
    Kind,
    MissingColumnError,
    TargetEncoding,
    categorical_codes,
    categorical_levels,
    feature_kind,
    fit_target,
    get_column,
    missing_column_message,
    numeric_values,
    to_polars,
    weight_values,
)

__all__ = [
    "Design",
    "DesignSpec",
    "Feature",
    "FeatureColumn",
    "FormulaError",
    "build_design",
]

SPEC_VERSION = 1
DEFAULT_CONTEXT: Mapping[str, Any] = {"np": np, "numpy": np}


class FormulaError(OptboostError, ValueError):
    """The formula cannot be parsed or evaluated; the message quotes it."""


class FeatureColumn(NamedTuple):
    """One column for the core: ``(name, values, kind, n_levels)``; values are
    float64 (numeric, NaN = missing) or int32 codes (categorical, -1 = missing);
    n_levels is 0 for numeric columns."""

    name: str
    values: np.ndarray
    kind: Kind
    n_levels: int


@dataclass(frozen=True)
class Feature:
    """How one model feature is derived from the data.

    source: the bare column name, ``C(column)``, or the formulaic term that
    produced it (e.g. ``a:b`` for ``a:b[x]``); source_columns: the original
    data columns it depends on (for importance by original column);
    levels: the level map of a categorical feature (code i <-> levels[i]);
    materialised: whether formulaic computes it.
    """

    name: str
    kind: Kind
    source: str
    source_columns: tuple[str, ...]
    levels: tuple[str, ...] | None = None
    materialised: bool = False

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
        levels = data.get("levels")
        return cls(
            name=data["name"],
            kind=data["kind"],
            source=data["source"],
            source_columns=tuple(data["source_columns"]),
            levels=None if levels is None else tuple(levels),
            materialised=bool(data.get("materialised", False)),
        )


@dataclass
class DesignSpec:
    """Everything needed to turn a frame into the model's feature columns
    again: picklable and JSON-serialisable (``to_dict`` / ``from_dict``).

    ``context`` (names available to formula expressions beyond numpy and
    formulaic's transforms) is kept in memory only; after loading a saved
    spec, pass it again to :meth:`columns` if the formula uses own functions.
    """

    formula: str
    target: str
    target_encoding: TargetEncoding
    features: tuple[Feature, ...]
    weights_column: str | None = None
    model_spec: ModelSpec | None = field(default=None, repr=False, compare=False)
    context: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def task(self) -> str:
        return self.target_encoding.task

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
        return list(dict.fromkeys(c for f in self.features for c in f.source_columns))

    # -------------------------------------------------------------- data

    def columns(
        self, data: Any, *, context: Mapping[str, Any] | None = None
    ) -> list[FeatureColumn]:
        """The feature columns of ``data``, selected by name (never by
        position); unseen categorical levels become missing with a warning."""
        frame = to_polars(data)
        missing = [c for c in self.input_columns if c not in frame.columns]
        if missing:
            raise MissingColumnError(
                missing_column_message(missing[0], frame.columns, role="feature column")
                + (f" (also missing: {missing[1:]})" if len(missing) > 1 else "")
            )
        matrix = None
        if self.model_spec is not None:
            matrix = self._materialise(frame, context)
        return self._feature_columns(frame, matrix)

    def target_values(self, data: Any) -> np.ndarray:
        """The encoded target of ``data`` (e.g. a validation set), with the
        training classes."""
        frame = to_polars(data)
        return self.target_encoding.encode(
            get_column(frame, self.target, role="target column")
        )

    def weight_values(
        self, data: Any, weights: str | Any | None = None
    ) -> np.ndarray | None:
        """Weights of ``data``: ``weights`` if given, else the training weights
        column if there was one."""
        frame = to_polars(data)
        return weight_values(
            frame, weights if weights is not None else self.weights_column
        )

    def _materialise(
        self, frame: pl.DataFrame, context: Mapping[str, Any] | None
    ) -> np.ndarray:
        assert self.model_spec is not None
        names = self._formulaic_input_columns()
        evaluation_context = _evaluation_context(
            context if context is not None else self.context
        )
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                matrix = self.model_spec.get_model_matrix(
                    frame.select(names) if names else frame, context=evaluation_context
                )
        except (
            Exception
        ) as error:  # formulaic raises many types; keep them all, add the formula
            raise FormulaError(
                f"formula {self.formula!r}: could not evaluate the transformed terms on new data: "
                f"{type(error).__name__}: {error}"
            ) from error
        _reissue(caught)
        expected = [f.name for f in self.features if f.materialised]
        produced = list(matrix.model_spec.column_names)
        if produced != expected:
            raise FormulaError(
                f"formula {self.formula!r}: new data gives columns {produced}, "
                f"training gave {expected}"
            )
        return _dense(matrix, frame.height, self.formula)

    def _formulaic_input_columns(self) -> list[str]:
        names = (c for f in self.features if f.materialised for c in f.source_columns)
        return list(dict.fromkeys(names))

    def _feature_columns(
        self, frame: pl.DataFrame, matrix: np.ndarray | None
    ) -> list[FeatureColumn]:
        result = []
        materialised_index = 0
        for feature in self.features:
            if feature.materialised:
                assert matrix is not None
                values = np.ascontiguousarray(
                    matrix[:, materialised_index], dtype=np.float64
                )
                materialised_index += 1
                result.append(FeatureColumn(feature.name, values, "numeric", 0))
                continue
            series = frame.get_column(feature.source_columns[0])
            if feature.kind == "categorical":
                assert feature.levels is not None
                codes = categorical_codes(series, feature.levels)
                result.append(
                    FeatureColumn(feature.name, codes, "categorical", feature.n_levels)
                )
            else:
                result.append(
                    FeatureColumn(feature.name, numeric_values(series), "numeric", 0)
                )
        return result

    # -------------------------------------------------------------- serialisation

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description (no pickled objects in it)."""
        formulaic_state = None
        if self.model_spec is not None:
            spec = self.model_spec
            formulaic_state = {
                "terms": [_term_string(term) for term in spec.formula],
                "materializer": spec.materializer,
                "transform_state": _state_to_json(spec.transform_state),
                "encoder_state": _state_to_json(spec.encoder_state),
            }
        return {
            "version": SPEC_VERSION,
            "formula": self.formula,
            "target": self.target,
            "target_encoding": self.target_encoding.to_dict(),
            "weights_column": self.weights_column,
            "features": [feature.to_dict() for feature in self.features],
            "formulaic": formulaic_state,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DesignSpec:
        if data.get("version") != SPEC_VERSION:
            raise ValueError(f"unsupported DesignSpec version {data.get('version')!r}")
        model_spec = None
        state = data.get("formulaic")
        if state is not None:
            model_spec = ModelSpec(
                formula=Formula(list(state["terms"]), _ordering="none"),
                materializer=state["materializer"],
                na_action="ignore",
                ensure_full_rank=False,
                output="numpy",
                transform_state=_state_from_json(state["transform_state"]),
                encoder_state=_state_from_json(state["encoder_state"]),
            )
        return cls(
            formula=data["formula"],
            target=data["target"],
            target_encoding=TargetEncoding.from_dict(data["target_encoding"]),
            features=tuple(Feature.from_dict(f) for f in data["features"]),
            weights_column=data.get("weights_column"),
            model_spec=model_spec,
        )

    def __reduce__(self):
        # Pickle through the JSON form: one serialisation path, no dependence
        # on formulaic's private object layout across versions.
        return (DesignSpec.from_dict, (self.to_dict(),))


@dataclass
class Design:
    """The training data in the core's terms, and the spec to redo it."""

    spec: DesignSpec
    features: list[FeatureColumn]
    y: np.ndarray
    weights: np.ndarray | None


# ------------------------------------------------------------------ building


def build_design(
    formula: str,
    data: Any,
    *,
    task: str = "regression",
    weights: str | Any | None = None,
    context: Mapping[str, Any] | None = None,
) -> Design:
    """Parse ``formula`` against ``data`` and produce the core's inputs.

    task: "regression", "binary" or "multiclass" (how the target is encoded);
    weights: a column name (left out of ``.``) or an array with one value per
    row; context: extra names for formula expressions (own functions).
    """
    frame = to_polars(data)
    weights_column = weights if isinstance(weights, str) else None
    parsed = _parse(formula, frame, weights_column)
    target = _target_name(formula, parsed)
    _check_names(formula, frame, parsed, context)

    pending: list[Feature | Term] = []
    for term in parsed.rhs:
        if not term.factors or all(
            f.eval_method == Factor.EvalMethod.LITERAL for f in term.factors
        ):
            continue  # the intercept: trees need none
        pending.append(_fast_path_feature(term, frame) or term)

    bare = {f.source_columns[0] for f in pending if isinstance(f, Feature)}
    if target in bare:
        raise FormulaError(
            f"formula {formula!r}: the target {target!r} is also a feature"
        )
    if not pending:
        raise FormulaError(f"formula {formula!r} has no features")

    model_spec, matrix = None, None
    terms = [item for item in pending if isinstance(item, Term)]
    if terms:
        model_spec, matrix = _materialise_terms(formula, terms, frame, context)
        columns_by_term = {str(s.term): list(s.columns) for s in model_spec.structure}
        features: list[Feature] = []
        for item in pending:
            if isinstance(item, Feature):
                features.append(item)
                continue
            sources = _term_source_columns(item, frame)
            features.extend(
                Feature(name, "numeric", _term_string(item), sources, materialised=True)
                for name in columns_by_term[str(item)]
            )
        # features index the matrix columns in order; formulaic keeps the term order given
        if [f.name for f in features if f.materialised] != list(
            model_spec.column_names
        ):
            raise FormulaError(
                f"formula {formula!r}: unexpected formulaic column order"
            )
    else:
        features = [item for item in pending if isinstance(item, Feature)]

    names = [f.name for f in features]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise FormulaError(
            f"formula {formula!r} gives duplicate feature names {duplicated}"
        )

    target_series = get_column(frame, target, role="target column")
    encoding = fit_target(target_series, task)
    y = encoding.encode(target_series)

    spec = DesignSpec(
        formula=formula,
        target=target,
        target_encoding=encoding,
        features=tuple(features),
        weights_column=weights_column,
        model_spec=model_spec,
        context=context,
    )
    return Design(
        spec=spec,
        features=spec._feature_columns(frame, matrix),
        y=y,
        weights=weight_values(frame, weights),
    )


def _parse(formula: str, frame: pl.DataFrame, weights_column: str | None):
    if not isinstance(formula, str):
        raise TypeError(
            f"formula must be a string like 'y ~ a + b', got {type(formula).__name__}"
        )
    available = [c for c in frame.columns if c != weights_column]
    try:
        return Formula(
            formula, _context={"__formulaic_variables_available__": available}
        )
    except Exception as error:
        raise FormulaError(f"cannot parse formula {formula!r}: {error}") from error


def _target_name(formula: str, parsed: Any) -> str:
    lhs = getattr(parsed, "lhs", None)
    if lhs is None:
        raise FormulaError(
            f"formula {formula!r} has no target: write it as 'y ~ a + b'"
        )
    terms = [t for t in lhs if t.factors]
    if len(terms) != 1 or len(terms[0].factors) != 1:
        raise FormulaError(
            f"formula {formula!r}: the left-hand side must be one column"
        )
    factor = terms[0].factors[0]
    if factor.eval_method != Factor.EvalMethod.LOOKUP:
        raise FormulaError(
            f"formula {formula!r}: the left-hand side must be a bare column name, "
            f"not {factor.expr!r} (transform the target in the data instead)"
        )
    return factor.expr


def _check_names(
    formula: str, frame: pl.DataFrame, parsed: Any, context: Mapping | None
) -> None:
    """Every bare name in the formula (also in ``- x``, which formulaic would
    silently ignore) and every variable of an expression must be a column
    (or, for expressions, a name of the evaluation context)."""
    names = [
        str(token)
        for token in _tokens(DefaultFormulaParser().get_ast(formula))
        if token.kind == Token.Kind.NAME
    ]
    for term in parsed.rhs:
        for factor in term.factors:
            if factor.eval_method == Factor.EvalMethod.PYTHON:
                names.extend(_expression_variables(factor.expr))
    known = set(_evaluation_context(context)) | set(TRANSFORMS) | set(dir(builtins))
    for name in dict.fromkeys(names):
        if name not in frame.columns and name not in known:
            raise MissingColumnError(
                f"formula {formula!r}: " + missing_column_message(name, frame.columns)
            )


def _tokens(node: Any):
    if isinstance(node, Token):
        yield node
    for arg in getattr(node, "args", ()):
        yield from _tokens(arg)


def _fast_path_feature(term: Term, frame: pl.DataFrame) -> Feature | None:
    """A Feature for a bare column or ``C(column[, levels=[...]])``, which
    bypass formulaic's materialiser; None for anything else."""
    if len(term.factors) != 1:
        return None
    factor = term.factors[0]
    if factor.eval_method == Factor.EvalMethod.LOOKUP:
        name = factor.expr
        series = frame.get_column(name)
        kind = feature_kind(series)
        levels = tuple(categorical_levels(series)) if kind == "categorical" else None
        return Feature(name, kind, name, (name,), levels)
    wrapped = _categorical_call(factor.expr)
    if wrapped is None or wrapped[0] not in frame.columns:
        return None
    name, levels = wrapped
    if levels is None:
        levels = categorical_levels(frame.get_column(name))
    elif len(set(levels)) != len(levels):
        raise FormulaError(f"C({name}, levels=...) lists a level twice: {levels}")
    return Feature(factor.expr, "categorical", factor.expr, (name,), tuple(levels))


def _categorical_call(expr: str) -> tuple[str, list[str] | None] | None:
    """(column, levels) if ``expr`` is ``C(column)`` or ``C(column, levels=[...])``."""
    aliases: dict[str, str] = {}
    try:
        node = ast.parse(sanitize_variable_names(expr, {}, aliases), mode="eval").body
    except SyntaxError:
        return None
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "C"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    ):
        return None
    levels = None
    for keyword in node.keywords:
        if keyword.arg != "levels":
            return None  # contrasts etc.: leave it to formulaic
        try:
            levels = [str(level) for level in ast.literal_eval(keyword.value)]
        except (ValueError, TypeError, SyntaxError):
            return None
    column = node.args[0].id
    return aliases.get(column, column), levels


def _term_source_columns(term: Term, frame: pl.DataFrame) -> tuple[str, ...]:
    names = []
    for factor in term.factors:
        if factor.eval_method == Factor.EvalMethod.LOOKUP:
            names.append(factor.expr)
        elif factor.eval_method == Factor.EvalMethod.PYTHON:
            names.extend(_expression_variables(factor.expr))
    return tuple(n for n in dict.fromkeys(names) if n in frame.columns)


def _expression_variables(expr: str) -> list[str]:
    """Names an expression reads as values, in order: ``x`` in ``np.log(x)``
    or ``bs(x, df=4)``, not ``np``, ``bs`` or other called names. (formulaic's
    own ``required_variables`` is empty for stateful transforms like bs().)"""
    aliases: dict[str, str] = {}
    try:
        tree = ast.parse(sanitize_variable_names(expr, {}, aliases), mode="eval")
    except SyntaxError:
        return []
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, ast.Attribute):
                func = func.value
            called.add(id(func))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            called.add(id(node.value))  # a module or namespace such as contr.sum
    names = [
        aliases.get(node.id, node.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and id(node) not in called
    ]
    return list(dict.fromkeys(names))


def _term_string(term: Term) -> str:
    """A term as formula text that parses back to the same term (formulaic's
    own str() drops the backticks around names like `a b`)."""
    parts = []
    for factor in term.factors:
        if (
            factor.eval_method == Factor.EvalMethod.LOOKUP
            and not factor.expr.isidentifier()
        ):
            parts.append(f"`{factor.expr}`")
        else:
            parts.append(factor.expr)
    return ":".join(parts)


def _evaluation_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**DEFAULT_CONTEXT, **(context or {})}


def _materialise_terms(
    formula: str, terms: Sequence[Term], frame: pl.DataFrame, context: Mapping | None
) -> tuple[ModelSpec, np.ndarray]:
    names = list(
        dict.fromkeys(c for t in terms for c in _term_source_columns(t, frame))
    )
    try:
        matrix = model_matrix(
            Formula([_term_string(t) for t in terms], _ordering="none"),
            frame.select(names) if names else frame,
            context=_evaluation_context(context),
            na_action="ignore",
            ensure_full_rank=False,
            output="numpy",
        )
    except (
        Exception
    ) as error:  # formulaic raises many types; keep them all, add the formula
        raise FormulaError(
            f"formula {formula!r}: could not evaluate the transformed terms: "
            f"{type(error).__name__}: {error}"
        ) from error
    return matrix.model_spec, _dense(matrix, frame.height, formula)


def _reissue(caught: Sequence[warnings.WarningMessage]) -> None:
    """Pass on formulaic's warnings except its DataMismatchWarning about
    ``{nan}``: at prediction it flags plain missing values as unseen levels,
    which training (na_action="ignore") accepted silently."""
    for record in caught:
        message = str(record.message)
        if (
            type(record.message).__name__ == "DataMismatchWarning"
            and ": {nan}." in message
        ):
            continue
        warnings.warn(record.message, stacklevel=4)


def _dense(matrix: Any, n_rows: int, formula: str) -> np.ndarray:
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] != n_rows:
        raise FormulaError(
            f"formula {formula!r}: formulaic returned {values.shape[0]} rows for {n_rows}"
        )
    return values


# ------------------------------------------------------------------ JSON for formulaic state
#
# formulaic keeps what it learnt (levels, contrasts, spline knots, centring
# constants) in nested dicts of numpy values, enums and small dataclasses.
# They are written as tagged JSON; decoding only ever instantiates classes
# from formulaic's own modules, so loading a model never runs foreign code.


def _qualified_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _formulaic_class(path: str) -> type:
    module_name, _, qualname = path.partition(":")
    if module_name.split(".")[0] != "formulaic":
        raise ValueError(f"refusing to load non-formulaic class {path!r}")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _state_to_json(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Enum):
        return {"__enum__": _qualified_name(type(value)), "name": value.name}
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": value.dtype.str}
    if isinstance(value, (list, tuple)):
        items = [_state_to_json(v) for v in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict):
        return {
            "__dict__": [
                [_state_to_json(k), _state_to_json(v)] for k, v in value.items()
            ]
        }
    if is_dataclass(value) and type(value).__module__.startswith("formulaic"):
        state = {
            f.name: _state_to_json(getattr(value, f.name))
            for f in fields(value)
            if f.init
        }
        return {"__dataclass__": _qualified_name(type(value)), "fields": state}
    if type(value).__module__.startswith("formulaic") and not vars(value):
        return {"__object__": _qualified_name(type(value))}
    raise TypeError(
        f"cannot write formulaic state of type {type(value).__name__} to JSON; "
        "this transform is not supported in saved models"
    )


def _state_from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_state_from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__enum__" in value:
        return _formulaic_class(value["__enum__"])[value["name"]]
    if "__ndarray__" in value:
        return np.array(value["__ndarray__"], dtype=np.dtype(value["dtype"]))
    if "__tuple__" in value:
        return tuple(_state_from_json(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {
            _hashable(_state_from_json(k)): _state_from_json(v)
            for k, v in value["__dict__"]
        }
    if "__dataclass__" in value:
        cls = _formulaic_class(value["__dataclass__"])
        return cls(**{k: _state_from_json(v) for k, v in value["fields"].items()})
    if "__object__" in value:
        return _formulaic_class(value["__object__"])()
    raise ValueError(f"unknown formulaic state entry {value!r}")


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key
