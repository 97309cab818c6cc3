"""Monotone and interaction constraints by original column name, mapped to
the model's features (the core takes feature names)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import ParameterError

CONSTRAINTS = ("monotone", "interactions")


def parse_monotone(value: Any) -> dict[str, int]:
    """``{"age": 1, "debt": -1}``, or the text forms ``'{"age": 1}'`` and
    ``"age:1,debt:-1"`` (as the command line's --param gives them)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            value = _json(text, "monotone")
        else:
            pairs = [p for p in text.split(",") if p.strip()]
            value = {}
            for pair in pairs:
                name, sep, direction = pair.rpartition(":")
                if not sep or not name.strip():
                    raise ParameterError(f"monotone: expected name:direction, got {pair!r}")
                value[name.strip()] = _direction(direction.strip())
    if not isinstance(value, Mapping):
        raise ParameterError(
            f"monotone must map column names to 1 (increasing) or -1 (decreasing), got {value!r}"
        )
    return {str(name): _direction(direction) for name, direction in value.items()}


def parse_interactions(value: Any) -> list[list[str]]:
    """``[["a", "b"], ["c", "d", "e"]]``, or the text forms
    ``'[["a", "b"]]'`` and ``"a,b;c,d,e"``."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            value = _json(text, "interactions")
        else:
            value = [[n.strip() for n in s.split(",")] for s in text.split(";") if s.strip()]
    ok = isinstance(value, Sequence) and all(
        isinstance(s, Sequence) and not isinstance(s, str) for s in value
    )
    if not ok or isinstance(value, str):
        raise ParameterError(
            f"interactions must be a list of lists of column names, got {value!r}"
        )
    return [[str(name) for name in group] for group in value]


def monotone_features(monotone: Mapping[str, int], features: Sequence[Any]) -> dict[str, int]:
    """Feature name -> direction. A key names a feature, or a column that
    enters the formula as a bare numeric term."""
    out = {}
    for column, direction in monotone.items():
        chosen = [f for f in features if f.name == column] or [
            f for f in features if tuple(f.source_columns) == (column,) and not f.materialised
        ]
        if not chosen:
            through = [f.name for f in features if column in f.source_columns]
            if through:
                raise ParameterError(
                    f"monotone: column {column!r} enters the model only through "
                    f"{', '.join(through)}; a monotone constraint needs the column as a bare "
                    "numeric term (or name one of those features exactly)"
                )
            raise ParameterError(
                f"monotone: {column!r} is not a feature of the model; features: "
                f"{', '.join(f.name for f in features)}"
            )
        for feature in chosen:
            if feature.kind == "categorical":
                raise ParameterError(
                    f"monotone: {column!r} is categorical; categorical features have no order "
                    "and cannot be constrained"
                )
            out[feature.name] = direction
    return out


def interaction_features(
    groups: Sequence[Sequence[str]], features: Sequence[Any]
) -> list[list[str]]:
    """Each group of columns -> the features computed from those columns only."""
    known = {c for f in features for c in f.source_columns} | {f.name for f in features}
    out = []
    for group in groups:
        unknown = [c for c in group if c not in known]
        if unknown:
            raise ParameterError(
                f"interactions: {', '.join(map(repr, unknown))} not in the model; columns: "
                f"{', '.join(sorted({c for f in features for c in f.source_columns}))}"
            )
        members = set(group)
        out.append(
            [
                f.name
                for f in features
                if f.name in members or (f.source_columns and set(f.source_columns) <= members)
            ]
        )
    return out


def constraint_params(params: dict[str, Any], features: Sequence[Any]) -> dict[str, Any]:
    """``params`` with monotone and interactions (by column) as the core's
    JSON text by feature name."""
    params = dict(params)
    if params.get("monotone") is not None:
        by_feature = monotone_features(parse_monotone(params["monotone"]), features)
        params["monotone"] = json.dumps(by_feature)
    if params.get("interactions") is not None:
        groups = interaction_features(parse_interactions(params["interactions"]), features)
        params["interactions"] = json.dumps(groups)
    return params


def _json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ParameterError(f"{name}: {text!r} is not valid JSON ({error})") from None


def _direction(value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if number not in (-1.0, 0.0, 1.0):
        raise ParameterError(f"monotone directions are 1, -1 or 0, got {value!r}")
    return int(number)
