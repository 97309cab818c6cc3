"""One fit of a fit plan (``optboost.plan.FitPlan``): the design, the core's Booster and its
training. ``boost`` and each fold of ``optboost.cv`` end here, so that cross-validation sits
below ``boost`` (which runs it for R's ``cv.folds``) and imports run one way."""

from __future__ import annotations

from typing import Any

import numpy as np

from .class_weights import class_weight_values
from .errors import ParameterError
from .formula import DesignSpec, build_design
from .frames import to_polars
from .groups import group_codes, ranking_target
from .holdout import TRAINS, VALIDATES
from .metrics import CallableMetrics
from .model import Model
from .offsets import offset_values, without_column
from .plan import FitPlan


def fit(formula: str, data: Any, plan: FitPlan) -> Model:
    """``boost``'s fit of `plan` (``FitPlan.make`` of boost's arguments)."""
    task, fit_args = plan.task, plan.fit
    valid, weights, offset = fit_args["valid"], fit_args["weights"], fit_args["offset"]
    group = fit_args["group"]
    codes = None if group is None else group_codes(group, to_polars(data), "the training data")
    if group is not None and valid is not None and not isinstance(group, str):
        raise ParameterError("with valid=, group= must name a column (of both frames)")
    left_out = [name for name in (offset, group) if isinstance(name, str)]
    design = build_design(
        formula,
        without_column(without_column(data, offset), group),
        task=task,
        weights=weights,
        context=fit_args["context"],
        left_out=left_out,
    )
    spec = design.spec
    pairs, offset = plan.design_pairs(formula, spec, offset)
    valid_args: tuple[Any, Any, Any] = (None, None, None)
    if valid is not None:
        valid_args = (
            spec.columns(valid),
            spec.target_values(valid),
            spec.weight_values(valid) if isinstance(weights, str) else None,
        )
    offsets: tuple[Any, Any] = (None, None)
    if offset is not None:
        k = spec.target_encoding.n_classes if task == "multiclass" else len(spec.target_names)
        offsets = (
            offset_values(offset, data, len(design.y), k),
            offset_values(offset, valid, len(valid_args[1]), k)
            if valid is not None and isinstance(offset, str)
            else None,
        )
    weights_values = design.weights
    class_weight = fit_args["class_weight"]
    if class_weight is not None:
        if task == "regression":
            raise ParameterError("class_weight needs a classification loss")
        labels = spec.target_encoding.labels
        by_class = class_weight_values(class_weight, design.y, labels)
        weights_values = by_class if weights_values is None else weights_values * by_class
    features, y = design.features, design.y
    roles = plan.row_roles(y, stratify=task != "regression", groups=codes)
    plan.check_validation(
        valid is not None or roles is not None,
        "pass valid= or validation_fraction=",
    )
    y, valid_args = flat_targets(spec, y, valid_args)
    if codes is not None:
        y = ranking_target(y, codes)
        if valid is not None:
            valid_codes = group_codes(group, to_polars(valid), "the validation data")
            valid_args = (valid_args[0], ranking_target(valid_args[1], valid_codes), valid_args[2])
    booster = plan.booster(
        pairs, features, y, weights=weights_values, valid=valid_args, offsets=offsets,
        row_roles=roles,
    )
    model = Model._from_booster(booster, spec, dict(pairs))
    model.loss_note = plan.loss_note
    if plan.functions:
        train_y, valid_y = (y, valid_args[1]) if roles is None else split_by_roles(y, roles)
        model._callable_metrics = CallableMetrics(plan.functions, train_y, valid_y)
    model._train(plan.n_iter, fit_args["progress"], fit_args["callback"])
    return model


def split_by_roles(y: np.ndarray, roles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation rows' y (row-major n × K values for K outputs), as the core
    takes them by ``row_roles``."""
    by_row = y.reshape(len(roles), -1)
    return by_row[roles == TRAINS].reshape(-1), by_row[roles == VALIDATES].reshape(-1)


def flat_targets(
    spec: DesignSpec, y: np.ndarray, valid_args: tuple[Any, Any, Any]
) -> tuple[np.ndarray, tuple[Any, Any, Any]]:
    """y and the validation y as the core takes them: an (n, K) target of several target
    columns row-major, n × K values."""
    if spec.targets or np.ndim(y) == 2:
        y = np.ascontiguousarray(y).ravel()
        if valid_args[1] is not None:
            valid_args = (valid_args[0], np.ascontiguousarray(valid_args[1]).ravel(), valid_args[2])
    return y, valid_args
