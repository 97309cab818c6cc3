"""One fit's plan: every entry point (``optboost.boost``, the scikit-learn estimators,
``optboost.cv``, ``optboost.dask.boost``) turns its arguments into a :class:`FitPlan`, once per
call, and trains through it. The plan owns the defaults (the core's), the R names, the shared
checks, the parameters as the core takes them, the rows held out for validation and the
arguments of the core's Booster, so that the entry points differ only in how they read data.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _core
from .constraints import CONSTRAINTS, constraint_params, parse_interactions, parse_monotone
from .errors import LossInferredWarning, ParameterError, ParameterTypeError
from .groups import check_group, held_groups
from .holdout import LEFT_OUT, TRAINS, VALIDATES, held_rows, resolve_fraction
from .losses import CustomLoss, loss_text
from .metrics import BUILT_IN, split_metrics
from .params import param_pairs, resolve
from .training import warn

DEFAULTS: dict[str, Any] = dict(_core.param_defaults())
"""The core's defaults of the parameters every entry point shows: method, loss, n_iter,
learning_rate, seed, n_threads (None in a signature means this default)."""

# R gbm's and mboost's argument names with the same meaning as optboost's.
R_NAMES = {
    "n.trees": "n_iter",
    "mstop": "n_iter",
    "shrinkage": "learning_rate",
    "nu": "learning_rate",
    "bag.fraction": "subsample",
    "n.minobsinnode": "min_samples_leaf",
    "distribution": "loss",
    "train.fraction": "train_fraction",
    "cv.folds": "cv_folds",
    "interaction.depth": "interaction_depth",
}

# The fit's own arguments beside the core's parameters, with their defaults.
FIT_ARGUMENTS: dict[str, Any] = {
    "valid": None,
    "validation_fraction": "auto",
    "train_fraction": None,
    "cv_folds": None,
    "weights": None,
    "offset": None,
    "class_weight": None,
    "progress": None,
    "callback": None,
    "context": None,
    "group": None,
}


@dataclass
class FitPlan:
    """A fit's arguments checked and resolved, before the data are read into the core.

    pairs: the core's (name, text) parameters; resolved: what training uses as the core
    resolves it (method, loss, task, step, rho); constraints: monotone/interactions by column
    (mapped to features once they exist); functions: callable metrics by name; loss: the loss
    as given (a CustomLoss object, else its text); loss_note: how the loss was chosen when no
    loss was given (recorded in the model's summary); fit: the fit's own arguments
    (``FIT_ARGUMENTS``)."""

    pairs: list
    resolved: dict[str, Any]
    constraints: dict[str, Any]
    functions: dict[str, Any]
    loss: Any
    n_iter: int
    seed: int
    early_stopping_rounds: int | None
    fit: dict[str, Any] = field(default_factory=dict)
    loss_note: str | None = None

    # ------------------------------------------------------------------ building

    @classmethod
    def make(
        cls,
        arguments: Mapping[str, Any],
        *,
        formula: str | None = None,
        data: Any = None,
        callable_metrics: bool = True,
    ) -> FitPlan:
        """The plan of `arguments` (every keyword of ``optboost.boost``, R's names among them;
        None: the default). With `formula` and `data` a missing loss is inferred from the
        target (``infer_loss``)."""
        given = with_r_names(arguments)
        fit = {name: given.pop(name, default) for name, default in FIT_ARGUMENTS.items()}
        for name, default in DEFAULTS.items():
            if given.get(name) is None:
                given[name] = default if name != "loss" else None
        loss_note = None
        if given["loss"] is None:
            given["loss"] = DEFAULTS["loss"]
            if formula is not None and data is not None:
                given["loss"], loss_note = infer_loss(formula, data)
                # A numeric target keeps the default loss, as before (recorded, not said): what
                # is said is a loss that makes the fit a classification or a survival model.
                if given["loss"] != DEFAULTS["loss"]:
                    warn(
                        f"no loss given: {loss_note} (pass loss= to choose another)",
                        LossInferredWarning,
                    )
        loss = given["loss"]
        given["loss"] = loss_text(loss)
        given["method"] = method_name(given["method"])
        _check_fit_arguments(fit, given)
        if not isinstance(loss, CustomLoss):
            check_group(given["loss"], fit["group"])
        functions: dict[str, Any] = {}
        if given.get("metrics") is not None:
            names, functions = split_metrics(given["metrics"])
            if functions and not callable_metrics:
                raise ParameterError(
                    "built-in metric names only here; callable metrics need optboost.boost"
                )
            first = given["metrics"]
            first = first if isinstance(first, str) or callable(first) else next(iter(first), None)
            given["metrics"] = ",".join(names) or None
            if given.get("early_stopping_rounds") is not None and callable(first):
                raise ParameterError(
                    "early stopping follows the first metric, which must be a built-in one "
                    f"({', '.join(BUILT_IN)}); callable metrics are recorded in the history only"
                )
        # Constraints name columns: checked now, mapped to the model's features once they exist.
        constraints = {name: given.pop(name) for name in CONSTRAINTS if name in given}
        parse_monotone(constraints.get("monotone") or {})
        parse_interactions(constraints.get("interactions") or [])
        pairs, resolved = resolve(given)
        return cls(
            pairs=pairs,
            resolved=resolved,
            constraints=constraints,
            functions=functions,
            loss=loss if isinstance(loss, CustomLoss) else given["loss"],
            n_iter=int(given["n_iter"]),
            seed=int(given["seed"]),
            early_stopping_rounds=given.get("early_stopping_rounds"),
            fit=fit,
            loss_note=loss_note,
        )

    @property
    def task(self) -> str:
        return self.resolved["task"]

    @property
    def method(self) -> str:
        return self.resolved["method"]

    @property
    def custom_loss(self) -> CustomLoss | None:
        return self.loss if isinstance(self.loss, CustomLoss) else None

    # ------------------------------------------------------------------ the design

    def design_pairs(self, formula: str, spec: Any, offset: Any) -> tuple[list, Any]:
        """The core's parameters once the design is known (the loss of several targets, the
        constraints by feature), and the offset (the formula's offset(column) if it has one);
        checks that a Surv() target comes with a survival loss."""
        from .terms import is_survival, parse_factor

        pairs, loss = self.pairs, self.resolved["loss"]
        survival = spec.target_expression is not None and is_survival(
            parse_factor(spec.target_expression)
        )
        if survival and _core.loss_info(loss)["task"] != "survival":
            raise ParameterError(
                f"formula {formula!r}: a Surv(time, event) target needs loss="
                f"{' or '.join(repr(name) for name in losses_of_task('survival'))}, "
                f"not {loss!r}"
            )
        if spec.targets:
            pairs = _multi_output_loss(pairs, loss, spec.targets)
        if spec.offset_column is not None:
            if offset is not None:
                raise ParameterError(
                    f"formula {formula!r} has offset({spec.offset_column}); pass no offset= too"
                )
            offset = spec.offset_column
        if self.constraints:
            pairs = pairs + param_pairs(constraint_params(self.constraints, spec.features))
        return pairs, offset

    # ------------------------------------------------------------------ rows

    def row_roles(
        self,
        y: np.ndarray,
        stratify: bool,
        roles: np.ndarray | None = None,
        groups: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """What each row is for (holdout.TRAINS, ...; None: every row trains): `roles` (rows
        left out, e.g. of weight 0) with the validation rows taken out of those that train:
        R's ``train.fraction`` (the first rows train, the rest validate, as R's gbm does), or
        ``validation_fraction`` of them at random (seeded, stratified by class). With query
        `groups` (a ranking loss's codes) whole groups train or validate: the first groups to
        appear train under ``train.fraction``, groups at random otherwise."""
        if self.fit["valid"] is not None:
            return roles
        training = np.arange(len(y)) if roles is None else np.flatnonzero(roles == TRAINS)
        if self.fit["train_fraction"] is not None:
            n_train = int(np.floor(self.fit["train_fraction"] * len(training)))
            if n_train < 1:
                raise ParameterError(
                    f"train.fraction={self.fit['train_fraction']} of {len(training)} rows "
                    "leaves no row to train on"
                )
            held = np.zeros(len(training), dtype=bool)
            held[n_train:] = True
            if groups is not None:
                # Groups in the order they first appear: the first fraction of them train.
                first: dict[float, int] = {}
                for code in groups[training]:
                    first.setdefault(code, len(first))
                order = np.array([first[code] for code in groups[training]])
                held = order >= max(1, int(np.floor(self.fit["train_fraction"] * len(first))))
        elif groups is not None:
            fraction = resolve_fraction(
                self.fit["validation_fraction"], self.method, len(training), self.preset
            )
            if fraction is None:
                return roles
            held = held_groups(groups, training, fraction, self.seed)
        else:
            kept_y = y.reshape(len(y), -1)[training] if y.ndim > 1 else y[training]
            fraction = resolve_fraction(
                self.fit["validation_fraction"], self.method, len(training), self.preset
            )
            if fraction is None:
                return roles
            held = held_rows(kept_y, fraction, self.seed, stratify=stratify)
        out = np.full(len(y), LEFT_OUT, dtype=np.uint8) if roles is not None else None
        if out is None:
            return np.where(held, VALIDATES, TRAINS).astype(np.uint8)
        out[training] = np.where(held, VALIDATES, TRAINS)
        return out

    def check_validation(self, has_validation: bool, how: str) -> None:
        """Early stopping needs validation rows; `how` says how to give them."""
        if self.early_stopping_rounds is not None and not has_validation:
            raise ParameterError(f"early_stopping_rounds needs validation data: {how}")

    # ------------------------------------------------------------------ the core

    @property
    def preset(self) -> str | None:
        """The ``preset`` given (``"paper"``), else None."""
        return dict(self.pairs).get("preset")

    def booster(self, pairs: list, features: Any, y: np.ndarray, **inputs: Any) -> Any:
        """The core's Booster of this plan (``new_booster``'s inputs)."""
        return new_booster(pairs, features, y, custom_loss=self.custom_loss, **inputs)


def new_booster(
    pairs: list,
    features: Any,
    y: np.ndarray,
    weights: Any = None,
    valid: tuple[Any, Any, Any] = (None, None, None),
    offsets: tuple[Any, Any] = (None, None),
    custom_loss: CustomLoss | None = None,
    row_roles: np.ndarray | None = None,
    distributed: Any = None,
    init_model: Any = None,
) -> Any:
    """The core's Booster: `valid` is (features, y, weights) of validation data, `offsets` the
    training and validation offsets, `row_roles` what each row is for (``FitPlan.row_roles``),
    `distributed` a rank's place in a data-parallel fit (optboost.dask), `init_model` a core
    model to train further (optboost.continuation). The core's warnings
    (more threads than the machine runs) point at the user's call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        booster = _core.Booster(
            pairs,
            features,
            y,
            weights,
            *valid,
            *offsets,
            custom_loss=custom_loss,
            row_roles=row_roles,
            distributed=distributed,
            init_model=init_model,
        )
    for warning in caught:
        warn(str(warning.message), warning.category)
    return booster


# ---------------------------------------------------------------------- R's names


def with_r_names(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` with R gbm's and mboost's names as optboost's (``R_NAMES``; an R
    ``distribution`` list given as a dict, ``interaction.depth`` as leaf-wise growth with
    k + 1 leaves); an argument given by both names is refused."""
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        own = R_NAMES.get(name, name)
        if value is None:
            out.setdefault(own, None)
            continue
        if own == "interaction_depth":
            for key, setting in interaction_depth(value).items():
                if out.get(key) is not None or arguments.get(key) is not None:
                    raise ParameterError(
                        f"interaction.depth sets {key} (R's splits per tree: leaf-wise growth "
                        f"with interaction.depth + 1 leaves); pass no {key} as well"
                    )
                out[key] = setting
            continue
        if out.get(own) is not None:
            raise ParameterError(f"{name!r} and {own!r} are one parameter: pass one of them")
        if own == "loss" and isinstance(value, Mapping):
            value = distribution_loss(value)
        out[own] = value
    return out


def interaction_depth(value: Any) -> dict[str, Any]:
    """R gbm's interaction.depth k, the number of splits of each tree, as optboost's
    parameters: leaf-wise growth to k + 1 leaves (depth at most k)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(
            f"interaction.depth must be an integer >= 1 (splits per tree), got {value!r}"
        )
    k = int(value)
    return {"growth": "leafwise", "max_leaves": k + 1, "max_depth": k}


# R's distribution list items that are the loss's parameter, by R distribution name.
_DISTRIBUTION_PARAMETERS = {"quantile": "alpha", "tdist": "df", "tweedie": "power"}


def distribution_loss(distribution: Mapping[str, Any]) -> str:
    """R gbm's ``distribution = list(name = "quantile", alpha = 0.9)``, given as a dict, as the
    loss's text (``"quantile(0.9)"``, which ``loss_text`` reads as R's names)."""
    items = dict(distribution)
    name = items.pop("name", None)
    if not isinstance(name, str):
        raise ParameterError(
            f"distribution as a dict needs a 'name' (R's list(name=...)), got {distribution!r}"
        )
    parameter = _DISTRIBUTION_PARAMETERS.get(name.strip().lower())
    if parameter is not None and parameter in items:
        value = items.pop(parameter)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError(f"distribution {name!r}: {parameter} must be a number")
        name = f"{name}({float(value)!r})"
    if items:
        raise ParameterError(
            f"distribution {name!r} takes no {', '.join(map(repr, items))}"
            + (f" (its parameter is {parameter!r})" if parameter else "")
        )
    return name


def method_name(method: Any) -> Any:
    """A method name in any case (``"AGBM"``) as the core's, when one name matches."""
    if not isinstance(method, str):
        return method
    names = _core.method_names()
    if method in names:
        return method
    matches = [name for name in names if name.lower() == method.strip().lower()]
    return matches[0] if len(matches) == 1 else method


# ---------------------------------------------------------------------- the loss


def infer_loss(formula: str, data: Any) -> tuple[str, str]:
    """The loss R's gbm would choose for the formula's target, and why: ``Surv(...)`` cox, two
    distinct values logistic, more than two labels (strings, categories, booleans) softmax,
    anything else squared."""
    if not isinstance(formula, str) or "~" not in formula:
        return DEFAULTS["loss"], "the target is not a column; the squared loss"
    target = formula.split("~", 1)[0].strip()
    if target.startswith("Surv(") or target.startswith("Surv ("):
        return "cox", "the target is Surv(...): the cox loss"
    name = target[1:-1] if target.startswith("`") and target.endswith("`") else target
    column = _target_column(data, name)
    if column is None:
        return DEFAULTS["loss"], f"the target {target!r} is an expression: the squared loss"
    import polars as pl

    from .frames import is_categorical_dtype, is_numeric_dtype

    distinct = column.drop_nulls().n_unique()
    dtype = column.dtype
    labels = dtype == pl.Boolean or is_categorical_dtype(dtype) or not is_numeric_dtype(dtype)
    if distinct == 2:
        return "logistic", f"the target {name!r} has two values: the logistic loss (binary)"
    if distinct > 2 and labels:
        return (
            "softmax",
            f"the target {name!r} has {distinct} labels: the softmax loss (multiclass)",
        )
    return DEFAULTS["loss"], f"the target {name!r} is numeric: the squared loss (regression)"


def _target_column(data: Any, name: str) -> Any:
    """The target column as a polars Series, or None when `name` is not a column of `data`."""
    import polars as pl

    from .frames import to_polars

    if isinstance(data, Mapping):
        return pl.Series(name, data[name]) if name in data else None
    columns = getattr(data, "columns", None)
    if columns is None or name not in list(columns):
        return None
    if isinstance(data, pl.DataFrame):
        return data.get_column(name)
    return to_polars(data[[name]]).get_column(name)


def losses_of_task(task: str) -> list[str]:
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


# ---------------------------------------------------------------------- checks


def _check_fit_arguments(fit: dict[str, Any], given: Mapping[str, Any]) -> None:
    valid = fit["valid"]
    if valid is not None and fit["validation_fraction"] not in (None, "auto"):
        raise ParameterError("pass valid= or validation_fraction=, not both")
    fraction = fit["train_fraction"]
    if fraction is not None:
        if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) or not (
            0 < fraction <= 1
        ):
            raise ParameterError(f"train.fraction must be a number in (0, 1], got {fraction!r}")
        if valid is not None or fit["validation_fraction"] not in (None, "auto"):
            raise ParameterError(
                "train.fraction holds out the last rows for validation: pass no valid= or "
                "validation_fraction= as well"
            )
        # R's train.fraction = 1 trains on every row.
        fit["train_fraction"] = None if fraction == 1 else float(fraction)
        fit["validation_fraction"] = None
    folds = fit["cv_folds"]
    if folds is not None:
        if isinstance(folds, bool) or not isinstance(folds, numbers.Integral):
            raise ParameterError(f"cv.folds must be a number of folds, got {folds!r}")
        if folds < 2:
            fit["cv_folds"] = None  # R's gbm: cv.folds = 0 or 1 runs no cross-validation
        elif valid is not None:
            raise ParameterError("cv.folds makes each fold's validation data: pass no valid=")
    progress = fit["progress"]
    if progress is not None and not isinstance(progress, bool):
        raise ParameterTypeError(
            f"progress must be True, False or None, got {type(progress).__name__}"
        )

