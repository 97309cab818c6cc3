"""The design of a fitted model (:class:`DesignSpec`): everything needed to turn new data into
the model's feature columns again, by column name, from plain values only (expression texts,
level lists, learnt numbers). A model file is data: loading or predicting with one runs no
code it names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from .errors import FormulaError
from .features import (
    Feature,
    FeatureBlock,
    FeatureColumn,
    Layout,
    feature_columns,
    wide_block,
)
from .frames import (
    MissingColumnError,
    TargetEncoding,
    get_column,
    missing_column_message,
    to_polars,
    weight_values,
)
from .plain import distinct, expect, listed, optional_text, plain_state, text, texts
from .survival import survival_target
from .term_values import Evaluation, check_stored_state, interaction_columns, term_width
from .terms import Factor, parse_factor, stateful_keys

SPEC_VERSION = 2
# Models written by optboost 0.1 (spec version 1) whose formula had transformed
# terms stored formulaic's objects, which cannot be read back without running
# code named by the file; those with bare columns and C(...) only still load.
OLD_SPEC_VERSION = 1
MAX_LEVELS = 1_000_000


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
        expect(data, Mapping, "a term")
        factors = tuple(texts(data["factors"], "term factors"))
        names = tuple(texts(data["names"], "term names"))
        levels = data["levels"]
        expect(levels, list, "term levels")
        state = data.get("state", {})
        expect(state, Mapping, "term state")
        if not factors or not (len(factors) == len(names) == len(levels)):
            raise FormulaError("a term needs as many names and level lists as factors")
        term = cls(
            factors=factors,
            names=names,
            levels=tuple(None if lv is None else tuple(texts(lv, "levels")) for lv in levels),
            state={text(k, "state key"): plain_state(v) for k, v in state.items()},
        )
        for factor, levels_of in zip(term.parsed, term.levels):
            if levels_of is not None:
                distinct(levels_of, f"levels of {factor.text!r}")
            for key in stateful_keys(factor):
                if key not in term.state:
                    raise FormulaError(f"term {factor.text!r} has no stored state for {key}")
            if factor.is_categorical and levels_of is None:
                raise FormulaError(f"categorical factor {factor.text!r} has no stored levels")
            check_stored_state(factor, levels_of, term.state)
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
    # R's offset(...) term: the column's name, or the expression's text (offset(log(exposure))),
    # added to the link at fit and predict.
    offset_column: str | None = None
    # The target columns of a multi-output formula (``y1 + y2 ~ x``), one model output each;
    # empty for one target (``target``).
    targets: tuple[str, ...] = ()
    # The columns of ``strata(...)`` terms (a stratified cox model): with them, or with
    # ``Surv(start, stop, event)``, the target is (n, 3): signed stop, start, stratum.
    strata: tuple[str, ...] = ()
    # (frame columns, each feature's position among them or None if one is absent, whether
    # to convert the whole frame) of the last frame of ``_wide_block``.
    _layout: Layout | None = field(
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
        if not self._all_bare_numeric:
            return None
        block, self._layout = wide_block(frame, self._input_columns, self._layout, whole)
        return block

    def target_values(self, data: Any) -> np.ndarray:
        """The encoded target of ``data`` (e.g. a validation set), with the
        training classes; (n, K) for a multi-output formula."""
        frame = to_polars(data)
        if self.targets:
            return target_matrix(self.target_encoding, frame, self.targets)
        counting = survival_target(self.target_expression, frame, self.context, self.strata)
        if counting is not None:
            return counting
        return self.target_encoding.encode(self._target_series(frame))

    def _target_series(self, frame: pl.DataFrame) -> pl.Series:
        if self.target_expression is None:
            return get_column(frame, self.target, role="target column")
        return evaluated_target(self.target_expression, frame, self.context or {})

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
            **({"strata": list(self.strata)} if self.strata else {}),
        }

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], context: Mapping[str, Any] | None = None
    ) -> DesignSpec:
        """Rebuild a spec from plain values; FormulaError (or KeyError/TypeError,
        which the model loader reports as a malformed file) for anything else.
        Calls nothing named by ``data``."""
        expect(data, Mapping, "the design")
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
        features = tuple(Feature.from_dict(f) for f in listed(data["features"], "features"))
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
            formula=text(data["formula"], "formula"),
            target=text(data["target"], "target"),
            target_encoding=TargetEncoding.from_dict(data["target_encoding"]),
            features=features,
            weights_column=optional_text(data.get("weights_column"), "weights column"),
            terms=terms,
            context=context,
            target_expression=optional_text(data.get("target_expression"), "target expression"),
            offset_column=optional_text(data.get("offset_column"), "offset column"),
            targets=tuple(texts(data.get("targets", []), "targets")),
            strata=tuple(texts(data.get("strata", []), "strata")),
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


@dataclass
class Design:
    """The training data in the core's terms, and the spec to redo it."""

    spec: DesignSpec
    features: list[FeatureColumn | FeatureBlock]
    y: np.ndarray
    weights: np.ndarray | None


def target_matrix(
    encoding: TargetEncoding, frame: pl.DataFrame, targets: Sequence[str]
) -> np.ndarray:
    """The (n, K) target of a multi-output formula, one encoded column per target."""
    return np.column_stack(
        [encoding.encode(get_column(frame, c, role="target column")) for c in targets]
    )


def evaluated_target(text: str, frame: pl.DataFrame, context: Mapping[str, Any]) -> pl.Series:
    factor = parse_factor(text)
    for column in factor.columns:
        get_column(frame, column, role="target column")
    with np.errstate(all="ignore"):
        values = interaction_columns([factor], [text], Evaluation(frame, context), [None])[0][1]
    return pl.Series(text, values).fill_nan(None)
