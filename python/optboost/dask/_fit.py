"""``optboost.dask.boost``: one long-lived training task per worker holding rows (SPMD, as
``lightgbm.dask`` and ``xgboost.dask``), each running the same booster on its own rows; the
Rust core does every reduction over a TCP star rooted at rank 0. Python places the data,
builds the spec and starts the tasks, in two rounds: every rank first builds its core inputs
(so that a bad partition is named before any rank waits for another), then all train.
"""

from __future__ import annotations

from typing import Any

from .._distributed import worker
from .._distributed.design import DistributedDesign, distributed_design
from .._distributed.fit import rank_plan as make_rank_plan
from .._distributed.fit import refuse_unsupported
from ..errors import ParameterError
from ..model import Model
from ..plan import FitPlan
from ._placement import Partitions, is_dask_frame, partitions_of
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
    refuse_unsupported(plan, timeout, "optboost.dask")
    weights, offset, valid = fit["weights"], fit["offset"], fit["valid"]
    client = resolve_client(client)
    parts = partitions_of(client, data, "data")
    valid_parts = None
    if valid is not None:
        valid_parts = partitions_of(client, _distributed_valid(valid), "valid")
    design = dask_design(
        client, formula, parts, task=plan.task, weights=weights, offset=offset,
        context=fit["context"],
    )
    rank_plan, pairs = make_rank_plan(plan, formula, design, parts.rows, valid is not None)
    return train_ranks(client, parts, valid_parts, rank_plan, pairs, plan.n_iter, timeout)


def dask_design(
    client: Any, formula: str, parts: Partitions, **options: Any
) -> DistributedDesign:
    """The spec of ``formula`` over the partitions, their levels collected on the workers
    (``options``: those of ``distributed_design``)."""

    def collect_levels(level_columns: list[str], target_columns: list[str]) -> list:
        return client.gather(
            client.map(
                worker.levels,
                parts.futures,
                level_columns=level_columns,
                target_columns=target_columns,
                pure=False,
                retries=0,
            )
        )

    columns = [name for name, _ in parts.schema]
    return distributed_design(formula, parts.samples, columns, collect_levels, **options)


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
