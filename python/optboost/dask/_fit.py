"""``optboost.dask.boost``: one long-lived training task per worker holding rows (SPMD, as
``lightgbm.dask`` and ``xgboost.dask``), each running the same booster on its own rows; the
Rust core does every reduction over a TCP star rooted at rank 0. Python places the data,
builds the spec and starts the tasks, in two rounds: every rank first builds its core inputs
(so that a bad partition is named before any rank waits for another), then all train.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..api import design_pairs, prepare_settings
from ..class_weights import class_weight_values
from .. import _core
from ..errors import ParameterError
from ..holdout import GlobalHoldout, check_held, resolve_fraction
from ..losses import CustomLoss, LossLike
from ..model import Model
from . import _worker
from ._design import distributed_design
from ._placement import partitions_of
from ._ranks import train_ranks

def boost(
    formula: str,
    data: Any,
    *,
    client: Any = None,
    method: str = "gbm",
    loss: LossLike = "squared",
    n_iter: int = 100,
    learning_rate: float = 0.1,
    valid: Any = None,
    validation_fraction: float | str | None = "auto",
    weights: str | None = None,
    offset: str | None = None,
    class_weight: Any = None,
    early_stopping_rounds: int | None = None,
    seed: int = 0,
    n_threads: int = 0,
    progress: Any = None,
    callback: Any = None,
    context: Mapping[str, Any] | None = None,
    timeout: float = 600.0,
    **params: Any,
) -> Model:
    """``optboost.boost`` on a Dask cluster; returns the same ``optboost.Model``.

    data: a dask DataFrame of pandas partitions, or a list of Parquet paths that every worker
        can read (each file is read on the worker that trains on it).
    valid: validation data of the same kinds.
    client: a ``distributed.Client`` (None: the default client).
    weights, offset: column names (arrays cannot be split over workers).
    validation_fraction: as in ``optboost.boost``: the rows held out are those
        ``optboost.boost`` holds out of the partitions concatenated in order (same seed),
        whichever and however many workers hold them.
    timeout: seconds a rank waits for the others at any exchange before the fit fails.

    One rank per worker holding rows (a worker with no partition, or only empty ones, takes no
    part), rank 0 on the worker of the first partition.

    Every other parameter as in ``optboost.boost``. Not supported: custom losses
    (``CustomLoss``), the cox and multiclass_hinge losses, callable metrics and the AUC
    metric, ``callback`` and ``progress=True``. A worker lost while training raises
    ``DistributedTrainingError`` (an ``OptboostError``) naming it and the iteration, with the
    model of the last finished iteration as its ``model``. The model's ``traffic`` (not saved
    with it) lists, per rank, the bytes and messages it exchanged.
    """
    _refuse_unsupported(loss, params, progress, callback, weights, offset, timeout)
    if valid is not None and validation_fraction not in (None, "auto"):
        raise ParameterError("pass valid= or validation_fraction=, not both")
    prepared = prepare_settings(
        method, loss, n_iter, learning_rate, early_stopping_rounds, seed, n_threads, params
    )
    if prepared.functions:
        raise ParameterError(
            "optboost.dask takes built-in metric names only; callable metrics would run on "
            "one worker's rows"
        )
    if "auc" in str(dict(prepared.pairs).get("metrics", "")).split(","):
        raise ParameterError("optboost.dask does not compute the AUC metric (it ranks all rows)")
    if not _core.loss_info(prepared.resolved["loss"])["distributable"]:
        raise ParameterError(
            f"optboost.dask does not fit the {prepared.resolved['loss']} loss, whose value is not "
            "a sum of the workers' parts (docs/algorithms.md §12)"
        )
    task = prepared.task
    client = resolve_client(client)
    parts = partitions_of(client, data, "data")
    valid_parts = partitions_of(client, valid, "valid") if valid is not None else None
    design = distributed_design(
        client, formula, parts, task=task, weights=weights, offset=offset, context=context
    )
    spec = design.spec
    pairs, offset = design_pairs(formula, spec, prepared, offset)
    fraction = None
    if valid is None:
        fraction = resolve_fraction(validation_fraction, method, parts.n_rows, params.get("preset"))
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
    if early_stopping_rounds is not None and fraction is None and valid is None:
        raise ParameterError(
            "early_stopping_rounds needs validation data: pass valid= or validation_fraction="
        )
    k = spec.target_encoding.n_classes if task == "multiclass" else len(spec.target_names)
    plan = _worker.RankPlan(
        spec=spec.to_dict(),
        context=dict(context) if context else None,
        weights_column=weights,
        offset_column=offset,
        n_outputs=k,
        class_weight=_class_weight(class_weight, spec, design.class_counts, parts.n_rows, task),
        fraction=fraction,
        seed=seed,
        stratify=stratify,
        group_counts=group_counts.tolist(),
        train_starts=(np.cumsum(train_rows) - train_rows).tolist(),
    )
    return train_ranks(client, parts, valid_parts, plan, pairs, int(n_iter), timeout)


def _refuse_unsupported(loss, params, progress, callback, weights, offset, timeout) -> None:
    if isinstance(loss, CustomLoss):
        raise ParameterError(
            "optboost.dask does not take a CustomLoss: its Python functions would run on every "
            "worker at every iteration; use a built-in loss"
        )
    if callback is not None:
        raise ParameterError("optboost.dask takes no callback (training runs on the workers)")
    if progress is True:
        raise ParameterError("optboost.dask shows no progress bar (training runs on the workers)")
    for name, value in (("weights", weights), ("offset", offset)):
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
