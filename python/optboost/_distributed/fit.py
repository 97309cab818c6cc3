"""The engine-neutral part of a distributed fit, on the driver: which arguments an engine
refuses, the ranks' plan (held-out rows, class weights, where each partition's rows start among
all of them) and the error of a fit that could not finish."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _core
from ..class_weights import class_weight_values
from ..errors import ParameterError, TrainingError
from ..holdout import GlobalHoldout, check_held, resolve_fraction
from ..model import Model
from ..plan import FitPlan
from .design import DistributedDesign
from .worker import RankPlan


class DistributedTrainingError(TrainingError):
    """A distributed fit that could not finish: a worker lost or a collective failed.

    ``model``: the model of the last iteration every rank finished (None if no rank handed one
    back), an ordinary ``optboost.Model``: it predicts and saves, but holds no training state
    (``model.update`` is not possible: fit again to train more). ``worker``, ``rank``: the lost
    worker's address and rank when known; ``iteration``: the iteration that failed.
    """

    def __init__(
        self,
        message: str,
        model: Model | None = None,
        worker: str | None = None,
        rank: int | None = None,
        iteration: int | None = None,
    ):
        super().__init__(message)
        self.model = model
        self.worker = worker
        self.rank = rank
        self.iteration = iteration


def refuse_unsupported(plan: FitPlan, timeout: Any, engine: str) -> None:
    """The arguments of ``optboost.boost`` a distributed fit cannot honour, named."""
    fit = plan.fit
    if plan.custom_loss is not None:
        raise ParameterError(
            f"{engine} does not take a CustomLoss: its Python functions would run on every "
            "worker at every iteration; use a built-in loss"
        )
    if plan.functions:
        raise ParameterError(
            f"{engine} takes built-in metric names only; callable metrics would run on "
            "one worker's rows"
        )
    if fit["callback"] is not None:
        raise ParameterError(f"{engine} takes no callback (training runs on the workers)")
    if fit["progress"] is True:
        raise ParameterError(f"{engine} shows no progress bar (training runs on the workers)")
    for name in ("train_fraction", "cv_folds"):
        if fit[name] is not None:
            raise ParameterError(f"{engine} does not take {name.replace('_', '.')}")
    for name in ("weights", "offset"):
        value = fit[name]
        if value is not None and not isinstance(value, str):
            raise ParameterError(
                f"{engine} takes {name}= as a column name of the data, got "
                f"{type(value).__name__}"
            )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ParameterError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    if "auc" in str(dict(plan.pairs).get("metrics", "")).split(","):
        raise ParameterError(f"{engine} does not compute the AUC metric (it ranks all rows)")
    if _core.loss_info(plan.resolved["loss"])["task"] == "ranking":
        raise ParameterError(
            f"{engine} does not fit the ranking loss {plan.resolved['loss']} yet: the "
            "data-parallel booster adds per-row terms over workers, and a query group's terms "
            "tie its rows together; fit with optboost.boost on the collected frame"
        )
    if not _core.loss_info(plan.resolved["loss"])["distributable"]:
        raise ParameterError(
            f"{engine} does not fit the {plan.resolved['loss']} loss, whose value is not "
            "a sum of the workers' parts (docs/algorithms.md §12)"
        )


def rank_plan(
    plan: FitPlan,
    formula: str,
    design: DistributedDesign,
    rows: Sequence[int],
    has_valid: bool,
) -> tuple[RankPlan, list]:
    """What every rank needs to build its inputs (``rows``: the rows of each partition, in
    data order), and the core's parameters."""
    fit = plan.fit
    task, seed = plan.task, plan.seed
    spec = design.spec
    pairs, offset = plan.design_pairs(formula, spec, fit["offset"])
    n_rows = int(sum(rows))
    fraction = None
    if not has_valid:
        fraction = resolve_fraction(fit["validation_fraction"], plan.method, n_rows, plan.preset)
    stratify = task != "regression"
    group_counts = (
        design.class_counts.astype(np.int64)
        if stratify
        else np.asarray(rows, dtype=np.int64).reshape(-1, 1)
    )
    train_rows = np.asarray(rows, dtype=np.int64)
    if fraction is not None:
        holdout = GlobalHoldout(group_counts, fraction, seed, stratify)
        held = np.array([holdout.n_held(p) for p in range(len(rows))], dtype=np.int64)
        check_held(int(held.sum()), n_rows, fraction)
        train_rows = train_rows - held
    plan.check_validation(
        fraction is not None or has_valid, "pass valid= or validation_fraction="
    )
    k = spec.target_encoding.n_classes if task == "multiclass" else len(spec.target_names)
    class_weight = _class_weight(fit["class_weight"], spec, design.class_counts, n_rows, task)
    ranks = RankPlan(
        spec=spec.to_dict(),
        context=dict(fit["context"]) if fit["context"] else None,
        weights_column=fit["weights"],
        offset_column=offset,
        n_outputs=k,
        class_weight=class_weight,
        fraction=fraction,
        seed=seed,
        stratify=stratify,
        group_counts=group_counts.tolist(),
        train_starts=(np.cumsum(train_rows) - train_rows).tolist(),
    )
    return ranks, pairs


def _class_weight(class_weight: Any, spec: Any, counts: Any, n_rows: int, task: str) -> Any:
    """class_weight as a mapping from class to weight: "balanced" from the global class
    counts, with the single-process formula n / (K · count)."""
    if class_weight is None:
        return None
    if task == "regression":
        raise ParameterError("class_weight needs a classification loss")
    if isinstance(class_weight, str) and class_weight == "balanced":
        totals = counts.sum(axis=0)
        k = len(totals)
        return {
            label: float(n_rows) / (k * float(total))
            for label, total in zip(spec.target_encoding.labels, totals)
        }
    class_weight_values(class_weight, np.zeros(0), spec.target_encoding.labels)  # checks it
    return class_weight


def rank_named_in(messages: Sequence[str], world: int) -> int | None:
    """The rank a lost connection's message names (the core's "rank k"), if one of ``world``."""
    named = re.search(r"rank (\d+)", " ".join(messages))
    return int(named.group(1)) if named and int(named.group(1)) < world else None


def last_finished(reports: Sequence[dict], context: Any) -> tuple[Model | None, int | None]:
    """After a failure: the model of the furthest iteration any rank handed back, and the
    iteration that failed (None, None when no rank handed one back)."""
    survivors = [report for report in reports if report.get("model") is not None]
    if not survivors:
        return None, None
    best = max(survivors, key=lambda report: int(report["iteration"]))
    return Model.from_dict(best["model"], context=context), int(best["iteration"]) + 1


def kept_sentence(model: Model | None, iteration: int | None) -> str:
    """What a DistributedTrainingError's ``.model`` holds, said to the user."""
    if model is None:
        return "No rank handed back a model."
    return (
        f".model holds the model of iteration {iteration - 1} (it predicts and saves; fit "
        "again to train more)"
    )
