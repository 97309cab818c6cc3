"""``optboost.dask.boost``: one long-lived training task per worker holding rows (SPMD, as
``lightgbm.dask`` and ``xgboost.dask``), each running the same booster on its own rows; the
Rust core does every reduction over a TCP star rooted at rank 0. Python places the data,
builds the spec and starts the tasks, in two rounds: every rank first builds its core inputs
(so that a bad partition is named before any rank waits for another), then all train.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from ..class_weights import class_weight_values
from ..errors import ParameterError
from ..holdout import GlobalHoldout, check_held, resolve_fraction
from ..model import Model
from ..plan import FitPlan
from . import _worker
from ._design import distributed_design
from ._placement import is_dask_frame, partitions_of
from ._ranks import train_ranks


def boost(
    formula: str,
    data: Any,
    *,
    client: Any = None,
    timeout: float = 600.0,
    **arguments: Any,
) -> Model:
    """``optboost.boost`` on a Dask cluster; returns the same ``optboost.Model``.

    data: a dask DataFrame of pandas partitions, or a list of Parquet paths that every worker
        can read (each file is read on the worker that trains on it).
    valid: validation data of the same kinds, or an in-memory pandas or polars frame (sent to
        one worker as one partition).
    client: a ``distributed.Client`` (None: the default client).
    weights, offset: column names (arrays cannot be split over workers).
    validation_fraction: as in ``optboost.boost``: the rows held out are those
        ``optboost.boost`` holds out of the partitions concatenated in order (same seed),
        whichever and however many workers hold them.
    timeout: seconds a rank waits for the others at any exchange before the fit fails.

    One rank per worker holding rows (a worker with no partition, or only empty ones, takes no
    part), rank 0 on the worker of the first partition.

    Every other argument as in ``optboost.boost`` (checked by its fit plan, R's names among
    them), except that without ``loss=`` the loss is the squared one (the target is not read on
    the client to infer it). Not supported: custom losses (``CustomLoss``), the cox and
    multiclass_hinge losses, the ranking losses, callable metrics and the AUC metric, ``callback``,
    ``progress=True``, ``train.fraction`` and ``cv.folds``. A worker lost while training raises
    ``DistributedTrainingError`` (an ``OptboostError``) naming it and the iteration, with the
    model of the last finished iteration as its ``model``. The model's ``traffic`` (not saved
    with it) lists, per rank, the bytes and messages it exchanged.
    """
    plan = FitPlan.make(arguments)
    fit = plan.fit
    _refuse_unsupported(plan, timeout)
    if "auc" in str(dict(plan.pairs).get("metrics", "")).split(","):
        raise ParameterError("optboost.dask does not compute the AUC metric (it ranks all rows)")
    if _core.loss_info(plan.resolved["loss"])["task"] == "ranking":
        raise ParameterError(
            f"optboost.dask does not fit the ranking loss {plan.resolved['loss']} yet: the "
            "data-parallel booster adds per-row terms over workers, and a query group's terms "
            "tie its rows together; fit with optboost.boost on the collected frame "
            "(ddf.compute())"
        )
    if not _core.loss_info(plan.resolved["loss"])["distributable"]:
        raise ParameterError(
            f"optboost.dask does not fit the {plan.resolved['loss']} loss, whose value is not "
            "a sum of the workers' parts (docs/algorithms.md §12)"
        )
    task, seed = plan.task, plan.seed
    weights, offset, valid = fit["weights"], fit["offset"], fit["valid"]
    client = resolve_client(client)
    parts = partitions_of(client, data, "data")
    valid_parts = None
    if valid is not None:
        valid_parts = partitions_of(client, _distributed_valid(valid), "valid")
    design = distributed_design(
        client, formula, parts, task=task, weights=weights, offset=offset, context=fit["context"]
    )
    spec = design.spec
    pairs, offset = plan.design_pairs(formula, spec, offset)
    fraction = None
    if valid is None:
        fraction = resolve_fraction(
            fit["validation_fraction"], plan.method, parts.n_rows, plan.preset
        )
    stratify = task != "regression"
    group_counts = (
        design.class_counts.astype(np.int64)
        if stratify
        else np.asarray(parts.rows, dtype=np.int64).reshape(-1, 1)
    )
    train_rows = np.asarray(parts.rows, dtype=np.int64)
    if fraction is not None:
        holdout = GlobalHoldout(group_counts, fraction, seed, stratify)
        held = np.array([holdout.n_held(p) for p in range(len(parts.rows))], dtype=np.int64)
        check_held(int(held.sum()), parts.n_rows, fraction)
        train_rows = train_rows - held
    plan.check_validation(
        fraction is not None or valid is not None, "pass valid= or validation_fraction="
    )
    k = spec.target_encoding.n_classes if task == "multiclass" else len(spec.target_names)
    class_weight = _class_weight(fit["class_weight"], spec, design.class_counts, parts.n_rows, task)
    rank_plan = _worker.RankPlan(
        spec=spec.to_dict(),
        context=dict(fit["context"]) if fit["context"] else None,
        weights_column=weights,
        offset_column=offset,
        n_outputs=k,
        class_weight=class_weight,
        fraction=fraction,
        seed=seed,
        stratify=stratify,
        group_counts=group_counts.tolist(),
        train_starts=(np.cumsum(train_rows) - train_rows).tolist(),
    )
    return train_ranks(client, parts, valid_parts, rank_plan, pairs, plan.n_iter, timeout)


def _distributed_valid(valid: Any) -> Any:
    """Validation data as ``partitions_of`` takes it: an in-memory pandas or polars frame
    becomes a dask DataFrame of one partition."""
    if is_dask_frame(valid) or isinstance(valid, (list, tuple)):
        return valid
    module = type(valid).__module__.split(".")[0]
    if module in ("pandas", "polars") and hasattr(valid, "columns"):
        import dask.dataframe as dd

        frame = valid.to_pandas() if module == "polars" else valid
        return dd.from_pandas(frame, npartitions=1)
    return valid


def _refuse_unsupported(plan: FitPlan, timeout: Any) -> None:
    fit = plan.fit
    if plan.custom_loss is not None:
        raise ParameterError(
            "optboost.dask does not take a CustomLoss: its Python functions would run on every "
            "worker at every iteration; use a built-in loss"
        )
    if plan.functions:
        raise ParameterError(
            "optboost.dask takes built-in metric names only; callable metrics would run on "
            "one worker's rows"
        )
    if fit["callback"] is not None:
        raise ParameterError("optboost.dask takes no callback (training runs on the workers)")
    if fit["progress"] is True:
        raise ParameterError("optboost.dask shows no progress bar (training runs on the workers)")
    for name in ("train_fraction", "cv_folds"):
        if fit[name] is not None:
            raise ParameterError(f"optboost.dask does not take {name.replace('_', '.')}")
    for name in ("weights", "offset"):
        value = fit[name]
        if value is not None and not isinstance(value, str):
            raise ParameterError(
                f"optboost.dask takes {name}= as a column name of the data, got "
                f"{type(value).__name__}"
            )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ParameterError(f"timeout must be a number of seconds > 0, got {timeout!r}")


def resolve_client(client: Any) -> Any:
    if client is not None:
        return client
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        raise ParameterError(
            "optboost.dask needs a Dask client: pass client= or create one first "
            "(distributed.Client(...))"
        ) from None


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
