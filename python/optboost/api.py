"""``optboost.boost``: a formula, a data frame and a method in; a fitted Model out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from .class_weights import class_weight_values
from .constraints import CONSTRAINTS, constraint_params, parse_interactions, parse_monotone
from .errors import ParameterError
from .formula import DesignSpec, build_design
from .holdout import TRAINS, VALIDATES, held_roles, held_rows, resolve_fraction
from .losses import CustomLoss, LossLike, loss_text
from .metrics import BUILT_IN, CallableMetrics, split_metrics
from .model import Model
from .offsets import offset_values, without_column
from .params import param_pairs, resolve
from .terms import is_survival, parse_factor
from .training import Callback, Progress


def boost(
    formula: str,
    data: Any,
    *,
    method: str = "gbm",
    loss: LossLike = "squared",
    n_iter: int = 100,
    learning_rate: float = 0.1,
    valid: Any = None,
    validation_fraction: float | str | None = "auto",
    weights: Any = None,
    offset: Any = None,
    class_weight: Any = None,
    early_stopping_rounds: int | None = None,
    seed: int = 0,
    n_threads: int = 0,
    progress: Progress = None,
    callback: Callback | None = None,
    context: Mapping[str, Any] | None = None,
    init_model: Any = None,
    **params: Any,
) -> Model:
    """Fit a boosted model.

    formula: ``"y ~ a + b + C(c) + np.log(d) + a:b"`` (``y ~ .`` for all other
        columns); bare columns go to the core without copying, string and
        categorical columns become native categorical features.
    data: a polars or pandas DataFrame (never modified; no row is dropped).
    method: "gbm", "rgbm", "agbm", "agbmr", "vagbm", "proximal", ... (docs/algorithms.md §4).
    loss: "squared", "absolute", "logistic", ... or a loss object such as
        ``optboost.Pinball(tau=0.9)``. A binary loss takes a target of 0/1, bool
        or two strings (the second in sorted order is the positive class); a
        multiclass loss takes integer or string classes.
    valid: a validation frame with the same columns, for ``history`` and
        ``early_stopping_rounds``; a momentum method keeps the iterate of lowest
        validation loss.
    validation_fraction: without ``valid``, hold out this fraction of the rows
        (seeded by ``seed``, stratified by class) as the validation data.
        "auto": 0.1 for the momentum methods (agbm, agbmr, vagbm,
        accelerated_gbm, accelerated_proximal) when that is at least 10 rows,
        so that they keep the iterate of lowest held-out loss instead of the
        last one (docs/algorithms.md); none for the other methods. None:
        train on every row (the papers' algorithms exactly).
    weights: a column name or one value per row.
    offset: a column name (left out of ``.``; the validation frame's column of
        that name is its offset) or an array, n values or (n, K) for K classes:
        added to the link before the first iteration (R's offset, LightGBM's
        init_score, XGBoost's base_margin). The model does not store it:
        ``predict`` needs ``offset=`` too, as R's glm and gbm do.
    class_weight: "balanced" (every class the same total weight) or a
        mapping from class label to weight, multiplying the sample weights
        of the training rows (classification losses only).
    progress: None shows a bar for fits longer than ~2 s on a terminal;
        True always; False never.
    callback: called with a dict of the history record after every
        iteration; returning False stops training, raising KeyboardInterrupt
        stops it like Ctrl-C (the model keeps the finished iterations).
    context: extra names for formula expressions (your own functions).
    init_model: a Model (or the path of a saved one) to train ``n_iter``
        more iterations from, on ``data`` through its own formula and bin
        mappers (pass the formula, method, loss and parameters it was fitted
        with; no offset, weights column or custom loss). For gbm, rgbm and
        proximal this is, bit for bit, the model of one fit with its
        iterations plus ``n_iter``; other methods are refused.
    **params: any other training parameter by name (max_depth, gamma,
        lambda, step, ...; ``optboost.param_names()`` lists them), among them
        ``subsample``, ``colsample_bytree``, ``colsample_bynode``;
        ``sample_strategy="goss"`` (with ``top_rate``, ``other_rate``) and
        ``quantized_gradients=True``;
        ``monotone={"age": 1, "debt": -1}`` (by column: 1 increasing, -1
        decreasing; bare numeric columns only) and
        ``interactions=[["a", "b"], ["c", "d"]]`` (the columns whose features
        may share a root-to-leaf path; a column in no group is used alone);
        ``metrics=["auc", "logloss", f]`` (built-ins: auc, rmse, mae, error,
        logloss, poisson_deviance, gamma_deviance; or callables
        ``f(y, prediction) -> float`` on the encoded target and the response
        predictions), recorded in ``history`` as train_<name> and
        valid_<name>; with validation data, early stopping and the kept
        iterate follow the first metric on the validation rows instead of the
        validation loss (LightGBM's ``first_metric_only``; it must then be a
        built-in one, callables are recorded only);
        ``cat_encoding="target_stats"`` (or ``"city:target_stats,zip:partition"``
        by column; default ``"partition"``) replaces categorical columns by
        ordered target statistics (Prokhorenkova et al. 2018): the mean target
        of a level's earlier rows in a seeded permutation, shrunk towards the
        mean with weight ``cat_prior_weight`` (1); one per class for multiclass
        losses. Not in Dask fits or the ONNX/treelite exports.
    """
    if valid is not None and validation_fraction not in (None, "auto"):
        raise ParameterError("pass valid= or validation_fraction=, not both")
    prepared = prepare_settings(
        method, loss, n_iter, learning_rate, early_stopping_rounds, seed, n_threads, params
    )
    if init_model is not None:
        return _continue(init_model, formula, data, prepared, valid, progress, callback)
    task = prepared.task
    design = build_design(
        formula,
        without_column(data, offset),
        task=task,
        weights=weights,
        context=context,
        left_out=[offset] if isinstance(offset, str) else (),
    )
    spec = design.spec
    pairs, offset = design_pairs(formula, spec, prepared, offset)
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
    if class_weight is not None:
        if task == "regression":
            raise ParameterError("class_weight needs a classification loss")
        labels = spec.target_encoding.labels
        by_class = class_weight_values(class_weight, design.y, labels)
        weights_values = by_class if weights_values is None else weights_values * by_class
    features, y = design.features, design.y
    roles = None  # what each row is for (holdout.TRAINS, ...); None: every row trains
    fraction = None if valid is not None else resolve_fraction(validation_fraction, method, len(y))
    if fraction is not None:
        roles = held_roles(held_rows(y, fraction, seed, stratify=task != "regression"))
    if early_stopping_rounds is not None and valid_args[0] is None and roles is None:
        raise ParameterError(
            "early_stopping_rounds needs validation data: pass valid= or validation_fraction="
        )
    y, valid_args = flat_targets(spec, y, valid_args)
    booster = _core.Booster(
        pairs,
        features,
        y,
        weights_values,
        *valid_args,
        *offsets,
        custom_loss=loss if isinstance(loss, CustomLoss) else None,
        row_roles=roles,
    )
    model = Model._from_booster(booster, spec, dict(pairs))
    if prepared.functions:
        train_y, valid_y = (y, valid_args[1]) if roles is None else split_by_roles(y, roles)
        model._callable_metrics = CallableMetrics(prepared.functions, train_y, valid_y)
    model._train(int(n_iter), progress, callback)
    return model


def _continue(
    init_model: Any,
    formula: str,
    data: Any,
    prepared: PreparedSettings,
    valid: Any,
    progress: Progress,
    callback: Callback | None,
) -> Model:
    """``boost(..., init_model=)``: a new Model, ``init_model`` trained further."""
    from .continuation import as_model, check_formula, continued_booster

    start = as_model(init_model)
    check_formula(start, formula)
    if prepared.functions or prepared.constraints:
        raise ParameterError(
            "init_model takes the core's parameters only: pass no callable metrics, "
            "monotone or interactions (the model's features keep their own)"
        )
    pairs = dict(prepared.pairs)
    booster = continued_booster(start, data, pairs, valid)
    model = Model(start._core, start.spec, pairs, start._history, None, booster=booster)
    model._earlier_history = {name: list(v) for name, v in start._history.items()}
    model._train(int(pairs["n_iter"]), progress, callback)
    return model


def split_by_roles(y: np.ndarray, roles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation rows' y (row-major n × K values for K outputs), as the core
    takes them by ``row_roles``."""
    by_row = y.reshape(len(roles), -1)
    return by_row[roles == TRAINS].reshape(-1), by_row[roles == VALIDATES].reshape(-1)


@dataclass
class PreparedSettings:
    """The training parameters checked and resolved before the data are read: the core's
    (name, value) pairs, the resolved settings (task, loss, ...), the constraints by column
    name (mapped to features once the design exists) and the callable metrics by name."""

    pairs: list
    resolved: dict[str, Any]
    constraints: dict[str, Any]
    functions: dict[str, Any]

    @property
    def task(self) -> str:
        return self.resolved["task"]


def prepare_settings(
    method: str,
    loss: LossLike,
    n_iter: int,
    learning_rate: float,
    early_stopping_rounds: int | None,
    seed: int,
    n_threads: int,
    params: Mapping[str, Any],
) -> PreparedSettings:
    """``boost``'s parameters checked and resolved (shared with ``optboost.dask.boost``)."""
    settings = {
        "method": method,
        "loss": loss_text(loss),
        "n_iter": n_iter,
        "learning_rate": learning_rate,
        "early_stopping_rounds": early_stopping_rounds,
        "seed": seed,
        "n_threads": n_threads,
        **params,
    }
    functions: dict[str, Any] = {}
    if settings.get("metrics") is not None:
        names, functions = split_metrics(settings["metrics"])
        first = settings["metrics"]
        first = first if isinstance(first, str) or callable(first) else next(iter(first), None)
        settings["metrics"] = ",".join(names) or None
        if early_stopping_rounds is not None and callable(first):
            raise ParameterError(
                "early stopping follows the first metric, which must be a built-in one "
                f"({', '.join(BUILT_IN)}); callable metrics are recorded in the history only"
            )
    # Constraints name columns: checked now, mapped to the model's features once they exist.
    constraints = {name: settings.pop(name) for name in CONSTRAINTS if name in settings}
    parse_monotone(constraints.get("monotone") or {})
    parse_interactions(constraints.get("interactions") or [])
    pairs, resolved = resolve(settings)
    return PreparedSettings(pairs, resolved, constraints, functions)


def design_pairs(
    formula: str, spec: DesignSpec, prepared: PreparedSettings, offset: Any
) -> tuple[list, Any]:
    """The core's parameters once the design is known (the loss of several targets, the
    constraints by feature), and the offset (the formula's offset(column) if it has one);
    checks that a Surv() target comes with a survival loss."""
    pairs, resolved = prepared.pairs, prepared.resolved
    survival = spec.target_expression is not None and is_survival(
        parse_factor(spec.target_expression)
    )
    if survival and _core.loss_info(resolved["loss"])["task"] != "survival":
        raise ParameterError(
            f"formula {formula!r}: a Surv(time, event) target needs loss="
            f"{' or '.join(repr(name) for name in _losses_of_task('survival'))}, "
            f"not {resolved['loss']!r}"
        )
    if spec.targets:
        pairs = _multi_output_loss(pairs, resolved["loss"], spec.targets)
    if spec.offset_column is not None:
        if offset is not None:
            raise ParameterError(
                f"formula {formula!r} has offset({spec.offset_column}); pass no offset= too"
            )
        offset = spec.offset_column
    if prepared.constraints:
        pairs = pairs + param_pairs(constraint_params(prepared.constraints, spec.features))
    return pairs, offset


def flat_targets(
    spec: DesignSpec, y: np.ndarray, valid_args: tuple[Any, Any, Any]
) -> tuple[np.ndarray, tuple[Any, Any, Any]]:
    """y and the validation y as the core takes them: an (n, K) target of several target
    columns row-major, n × K values."""
    if spec.targets:
        y = np.ascontiguousarray(y).ravel()
        if valid_args[1] is not None:
            valid_args = (valid_args[0], np.ascontiguousarray(valid_args[1]).ravel(), valid_args[2])
    return y, valid_args


def _losses_of_task(task: str) -> list[str]:
    """The core's losses for `task` (its loss vocabulary says)."""
    return [name for name in _core.loss_names() if _core.loss_info(name)["task"] == task]


def _multi_output_loss(pairs: list, loss: str, targets: tuple[str, ...]) -> list:
    """The parameters with the loss of several targets: the core's loss that fits `loss` (the
    loss in force) to several target columns (the squared loss over K outputs)."""
    multi_output = _core.loss_info(loss)["multi_output"]
    if multi_output is None:
        raise ParameterError(
            f"{len(targets)} targets ({', '.join(targets)}) need the squared loss "
            f"(multi-output regression); got loss {loss!r}"
        )
    return [(name, multi_output if name == "loss" else value) for name, value in pairs] + (
        [] if "loss" in dict(pairs) else [("loss", multi_output)]
    )


def param_names() -> list[str]:
    """Every training parameter ``boost`` accepts by name."""
    return list(_core.param_names())


def method_names() -> list[str]:
    """Every method name."""
    return list(_core.method_names())
