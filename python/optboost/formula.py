"""R-style formulas (``y ~ a + C(b) + np.log(c) + a:d``) to feature columns.

:mod:`.formula_parse` parses the formula into its target and terms (formulaic for the
structure, never evaluating anything). Terms then take one of two paths:

* bare columns (``a``) and ``C(column)`` / ``factor(column)``: numeric columns
  go to the core zero-copy where possible (:mod:`.features`), string /
  Categorical / Enum columns and ``C(...)`` become native categorical codes
  (trees split on categories directly, no dummies);
* every other term (transforms, interactions) is computed by :mod:`.term_values`,
  the interpreter of a small closed expression language (:mod:`.terms`) evaluated
  without ``eval``, with full dummy sets for categorical factors and missing inputs
  giving NaN (no row is ever dropped).

The :class:`DesignSpec` (:mod:`.design_spec`) re-derives the same columns for new data
by column name from plain values only (expression texts, level lists, learnt numbers):
a model file is data, and loading or predicting with one runs no code it names.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from .design_spec import Design, DesignSpec, TermSpec, evaluated_target, target_matrix
from .errors import DataError, FormulaError
from .features import (
    Feature,
    FeatureBlock,
    FeatureColumn,
    column_feature,
    feature_columns,
    frame_features,
    matrix_block,
    matrix_features,
    other_columns,
    per_column,
)
from .formula_parse import parse_formula
from .survival import split_strata, survival_target
from .frames import (
    MissingColumnError,
    dtypes_by_name,
    fit_target,
    get_column,
    missing_column_message,
    to_polars,
    weight_values,
)
from .term_values import Evaluation, factor_levels, interaction_columns, term_width
from .terms import (
    MAX_COMPUTED_COLUMNS,
    Categorical,
    Column,
    Factor,
    Offset,
    column_factor,
    is_survival,
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
    "column_feature",
    "feature_columns",
    "frame_features",
    "matrix_block",
    "matrix_features",
    "per_column",
]

# The parse under its former name (crossval.py and the Dask front end import it from here).
_parse = parse_formula


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
    without_strata, strata = split_strata(formula)
    target, target_factor, terms = parse_formula(without_strata, frame, weights_column, left_out)
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
    offsets = [f[0] for f in computed_terms if isinstance(f[0].tree, Offset)]
    if len(offsets) > 1 or any(
        isinstance(factor.tree, Offset) for f in computed_terms if len(f) > 1 for factor in f
    ):
        raise FormulaError(f"formula {formula!r}: at most one offset(...), as a term of its own")
    offset_column = offsets[0].tree.text if offsets else None
    if offsets:
        read = set(offsets[0].columns)
        terms = [
            term
            for term in terms
            # a column the offset reads is not also a feature (through '.', say)
            if (term not in read if type(term) is str else not isinstance(term[0].tree, Offset))
        ]
    features: list[Feature] = []
    spec_terms: list[TermSpec] = []
    computed: list[np.ndarray] = []
    others = other_columns(frame)
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
        y = target_matrix(encoding, frame, targets)
    else:
        if target_factor is None:
            target_series = get_column(frame, target, role="target column")
        else:
            target_series = evaluated_target(target_factor.text, frame, context)
        encoding = fit_target(target_series, task)
        y = encoding.encode(target_series)
        expression = None if target_factor is None else target_factor.text
        counting = survival_target(expression, frame, context, strata)
        y = y if counting is None else counting
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
        strata=strata,
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
                "center(), scale(), poly(), bs(), ns(), mean(), median(), sd(), min(), max(), "
                "cut(), C(), factor(), relevel(), offset(); pass your own in context="
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
