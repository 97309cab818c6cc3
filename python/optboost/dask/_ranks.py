"""The ranks of one distributed fit: one task per worker holding rows, started together, and
watched until all hand back the model or one fails (then the others are given the core's
timeout to hand back the model of the last finished iteration, and cancelled)."""

from __future__ import annotations

import asyncio
from concurrent.futures import CancelledError
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._distributed import worker as _worker
from .._distributed.fit import (
    DistributedTrainingError,
    kept_sentence,
    last_finished,
    rank_named_in,
)
from ..errors import OptboostError
from ..model import Model
from ..training import warn
from ._placement import Partitions, by_worker

# What distributed.wait raises at its timeout (asyncio's own class before Python 3.11).
WAIT_TIMEOUT = (TimeoutError, asyncio.TimeoutError)
# How often the client looks for lost workers while the ranks train.
POLL_SECONDS = 0.5
# After a failure, how long past the core's own timeout the client waits for the surviving
# ranks to hand back the model of the last finished iteration.
SURVIVOR_GRACE_SECONDS = 10.0


@dataclass
class Rank:
    worker: str
    partitions: list[int]
    valid_partitions: list[int]


def place_ranks(client: Any, parts: Partitions, valid_parts: Partitions | None) -> list[Rank]:
    """One rank per worker holding training rows, in the order of their first partition; each
    validation partition goes to the rank on its worker, else to the ranks in turn."""
    groups = by_worker(parts.holders(client), parts.rows)
    ranks = [Rank(worker, indices, []) for worker, indices in groups.items()]
    if valid_parts is not None:
        rank_of = {rank.worker: rank for rank in ranks}
        for i, worker in enumerate(valid_parts.holders(client)):
            rank_of.get(worker, ranks[i % len(ranks)]).valid_partitions.append(i)
    return ranks


def train_ranks(
    client: Any,
    parts: Partitions,
    valid_parts: Partitions | None,
    plan: _worker.RankPlan,
    pairs: list,
    n_iter: int,
    timeout: float,
) -> Model:
    ranks = place_ranks(client, parts, valid_parts)
    # First every rank builds its inputs: a bad partition fails here, before any rank waits
    # for the others in the core.
    inputs = [
        client.submit(
            _worker.prepare_rank,
            plan,
            rank.partitions,
            [parts.labels[i] for i in rank.partitions],
            [parts.futures[i] for i in rank.partitions],
            [valid_parts.futures[i] for i in rank.valid_partitions] if valid_parts else [],
            [valid_parts.labels[i] for i in rank.valid_partitions] if valid_parts else [],
            workers=[rank.worker],
            allow_other_workers=False,
            pure=False,
            retries=0,
        )
        for rank in ranks
    ]
    _wait_for_inputs(client, inputs, ranks)
    address = _root_address(client, ranks[0].worker)
    # The secret goes to each rank inside its task's arguments only; the key names the fit by
    # a separate random id, since keys are shown to every client, the dashboard and the logs.
    secret = _worker.JobSecret.generate()
    fit_id = secrets.token_hex(8)
    futures = [
        client.submit(
            _worker.train_rank,
            inputs[r],
            plan,
            pairs,
            n_iter,
            (r, len(ranks), address, secret, float(timeout)),
            key=f"optboost-train-{fit_id}-{r}",
            workers=[rank.worker],
            allow_other_workers=False,
            pure=False,
            retries=0,
        )
        for r, rank in enumerate(ranks)
    ]
    results, failure = _watch(client, futures, ranks, timeout)
    del inputs
    context = plan.context
    if failure is None:
        first = results[0]
        for message in first["warnings"]:
            warn(message)
        model = Model.from_dict(first["model"], context=context)
        # Not saved with the model: what each rank exchanged (benches/dask_scaling.py).
        model.traffic = [results[r]["traffic"] for r in range(len(ranks))]
        return model
    raise _failure_error(failure, results, ranks, context)


def _root_address(client: Any, worker: str) -> str:
    """The "host:port" the root of the fit's star binds on `worker`, and every rank connects to.
    The port is free when probed; another process could take it before rank 0 binds it (a small
    race, as in lightgbm.dask): the fit then fails with the core's bind error."""
    from distributed.comm import get_address_host

    port = client.run(_worker.free_port, workers=[worker])[worker]
    host = get_address_host(worker)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # IPv6 in brackets


def _wait_for_inputs(client: Any, inputs: list, ranks: list[Rank]) -> None:
    """Until every rank has built its inputs; raises the first rank's error (it names the
    partition), or names a worker that left the cluster meanwhile (its task would wait for it
    for ever)."""
    from distributed import wait

    while True:
        try:
            wait(inputs, timeout=POLL_SECONDS)
        except (*WAIT_TIMEOUT, CancelledError):
            alive = set(client.nthreads())
            for r, future in enumerate(inputs):
                gone = future.status == "cancelled" or (
                    future.status == "pending" and ranks[r].worker not in alive
                )
                if gone:
                    client.cancel(inputs)
                    raise DistributedTrainingError(
                        f"worker {ranks[r].worker} (rank {r} of {len(ranks)}) left the cluster "
                        "while it read its partitions; nothing was trained",
                        worker=ranks[r].worker,
                        rank=r,
                    ) from None
            continue
        for future in inputs:
            if future.status != "finished":
                future.result()
        return


@dataclass
class Failure:
    rank: int | None  # the lost or failed rank, when the client saw which
    cause: str
    error: BaseException | None = None  # an error of the rank's own (re-raised as is)


def _watch(
    client: Any, futures: list, ranks: list[Rank], timeout: float
) -> tuple[dict[int, dict], Failure | None]:
    from distributed import wait

    pending = {future: r for r, future in enumerate(futures)}
    results: dict[int, dict] = {}
    failure: Failure | None = None
    deadline = None
    while pending:
        try:
            wait(list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
        except (*WAIT_TIMEOUT, CancelledError):  # a cancelled future is seen below
            pass
        for future in [future for future in pending if future.done()]:
            r = pending.pop(future)
            if future.status == "finished":
                results[r] = future.result()
                if results[r]["error"] is not None and failure is None:
                    failure = Failure(None, results[r]["error"])
            elif failure is None or failure.rank is None:
                failure = _task_failure(future, r)
        if not pending:
            break
        alive = set(client.nthreads())
        lost = [r for r in pending.values() if ranks[r].worker not in alive]
        if lost and (failure is None or failure.rank is None):
            failure = Failure(lost[0], "the worker left the cluster")
        if failure is None:
            continue
        # A rank's own error (bad data found by the core) ends the fit at once; after a lost
        # worker the survivors hand back their models, within the core's timeout.
        if failure.error is not None or len(lost) == len(pending):
            break
        if deadline is None:
            deadline = time.monotonic() + timeout + SURVIVOR_GRACE_SECONDS
        if time.monotonic() > deadline:
            break
    if pending:
        client.cancel(list(pending))
    return results, failure


def _task_failure(future: Any, rank: int) -> Failure:
    if future.status == "cancelled":  # its inputs were lost with its worker
        return Failure(rank, "its task was cancelled: the worker left with its data")
    error = future.exception()
    own = isinstance(error, OptboostError)  # the rank's own error (bad data), re-raised as is
    return Failure(rank, f"{type(error).__name__}: {error}", error if own else None)


def _failure_error(
    failure: Failure, results: dict[int, dict], ranks: list[Rank], context: Mapping | None
) -> BaseException:
    if failure.error is not None:
        return failure.error
    rank = failure.rank
    core_messages = [res["error"] for res in results.values() if res["error"]]
    if rank is None:  # the core's message names the rank it lost
        rank = rank_named_in(core_messages, len(ranks))
    model, iteration = last_finished(list(results.values()), context)
    who = (
        f"worker {ranks[rank].worker} (rank {rank} of {len(ranks)})"
        if rank is not None
        else f"one of the {len(ranks)} workers"
    )
    when = f" at iteration {iteration}" if iteration is not None else ""
    kept = kept_sentence(model, iteration)
    core = f" The core: {core_messages[0]}." if core_messages else ""
    return DistributedTrainingError(
        f"distributed training failed{when}: {who} was lost ({failure.cause}).{core} {kept}",
        model=model,
        worker=ranks[rank].worker if rank is not None else None,
        rank=rank,
        iteration=iteration,
    )
