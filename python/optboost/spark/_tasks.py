"""What runs on the Spark executors, one task per partition (``DataFrame.mapInArrow``): the
partition's survey (rows, first rows), its levels, and its rank of the fit (in a barrier stage,
so that every rank runs at once).

Frames travel to the driver as Arrow IPC bytes (data, never pickles); a rank's result goes to
the driver's report listener (``_reports``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from .._distributed import worker
from .. import errors
from ..errors import DataError, OptboostError
from ._reports import ReportKey, send_report

SURVEY_SCHEMA = pa.schema(
    [("partition", pa.int64()), ("rows", pa.int64()), ("sample", pa.binary())]
)
LEVELS_SCHEMA = pa.schema(
    [("partition", pa.int64()), ("kind", pa.string()), ("name", pa.string()), ("data", pa.binary())]
)
RANK_SCHEMA = pa.schema([("partition", pa.int64())])


def spark_schema(schema: pa.Schema) -> str:
    """The DDL text mapInArrow takes for these fixed schemas."""
    names = {pa.int64(): "long", pa.string(): "string", pa.binary(): "binary"}
    return ", ".join(f"{field.name} {names[field.type]}" for field in schema)


def frame_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_ipc(buffer)
    return buffer.getvalue()


def read_frame(data: bytes) -> pl.DataFrame:
    return pl.read_ipc(io.BytesIO(data))


def partition_frame(batches: Iterable[pa.RecordBatch]) -> pl.DataFrame | None:
    """The partition's rows as one polars frame (None for a partition with no batch)."""
    batches = [batch for batch in batches]
    if not batches:
        return None
    return pl.from_arrow(pa.Table.from_batches(batches))  # type: ignore[return-value]


def _partition_id() -> int:
    from pyspark import TaskContext

    return TaskContext.get().partitionId()


def survey(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    frame = partition_frame(batches)
    rows = 0 if frame is None else frame.height
    sample = b"" if frame is None or rows == 0 else frame_bytes(worker.survey(frame)[2])
    yield pa.RecordBatch.from_pydict(
        {"partition": [_partition_id()], "rows": [rows], "sample": [sample]}, schema=SURVEY_SCHEMA
    )


def levels(
    level_columns: Sequence[str], target_columns: Sequence[str], batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """``worker.levels`` of the partition, one row per column (none for an empty partition)."""
    frame = partition_frame(batches)
    if frame is None or frame.height == 0:
        return
    distinct, counts = worker.levels(frame, level_columns, target_columns)
    items = [("level", name, series.to_frame()) for name, series in distinct.items()]
    items += [("count", name, table) for name, table in counts.items()]
    yield pa.RecordBatch.from_pydict(
        {
            "partition": [_partition_id()] * len(items),
            "kind": [kind for kind, _, _ in items],
            "name": [name for _, name, _ in items],
            "data": [frame_bytes(table) for _, _, table in items],
        },
        schema=LEVELS_SCHEMA,
    )


@dataclass(frozen=True)
class RankJob:
    """What every task of the barrier stage needs (sent inside its closure)."""

    plan: worker.RankPlan
    pairs: list
    n_iter: int
    timeout: float
    rows: list[int]  # per partition, as surveyed
    valid: pl.DataFrame | None  # validation rows, given to rank 0
    report_address: tuple[str, int]
    report_key: ReportKey
    fit_id: str

    def ranks(self) -> dict[int, int]:
        """The rank of each partition holding rows, in partition order."""
        holding = [p for p, n in enumerate(self.rows) if n > 0]
        return {partition: rank for rank, partition in enumerate(holding)}


def train(job: RankJob, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One partition's rank: build its inputs, learn the root's address and the join secret
    from rank 0 (``BarrierTaskContext.allGather``, which also tells every rank whether all
    inputs were built, so that none waits in the core for a rank that failed), train, report."""
    from pyspark import BarrierTaskContext

    context = BarrierTaskContext.get()
    partition = context.partitionId()
    ranks = job.ranks()
    rank = ranks.get(partition)
    label = f"partition {partition}"
    inputs = None
    failure: BaseException | None = None
    try:
        frame = partition_frame(batches)
        height = 0 if frame is None else frame.height
        if height != job.rows[partition]:
            raise DataError(
                f"{label} has {height} rows but had {job.rows[partition]} when optboost read it "
                "first: the DataFrame gives other rows each time it is computed; cache() or "
                "checkpoint() it before the fit"
            )
        if rank is not None:
            valid = [job.valid] if rank == 0 and job.valid is not None else []
            inputs = worker.prepare_rank(
                job.plan, [partition], [label], [frame], valid, ["valid"] * len(valid)
            )
    except Exception as error:  # reported to the driver, which raises it
        failure = error
    note: dict[str, Any] = {"ok": failure is None}
    if rank == 0 and failure is None:
        secret = worker.JobSecret.generate()
        host = context.getTaskInfos()[partition].address.rsplit(":", 1)[0].strip("[]")
        port = worker.free_port()
        note["root"] = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        note["secret"] = secret.reveal().hex()
    notes = [json.loads(text) for text in context.allGather(json.dumps(note))]
    if rank is None:
        return
    if failure is not None:
        report: dict[str, Any] = {"failed": _failure_text(failure)}
    elif not all(other.get("ok") for other in notes):
        report = {"skipped": True}
    else:
        root = notes[min(ranks)]
        distributed = (
            rank,
            len(ranks),
            str(root["root"]),
            worker.JobSecret(bytes.fromhex(root["secret"])),
            job.timeout,
        )
        try:
            report = worker.train_rank(inputs, job.plan, job.pairs, job.n_iter, distributed)
        except Exception as error:  # the join failed (e.g. the root's port was taken)
            report = {"failed": _failure_text(error)}
    report.update(fit=job.fit_id, rank=rank)
    send_report(job.report_address, job.report_key, report, job.timeout)
    yield pa.RecordBatch.from_pydict({"partition": [partition]}, schema=RANK_SCHEMA)


def _failure_text(error: BaseException) -> dict[str, str]:
    """The error as the driver re-raises it: the nearest class of optboost.errors, by name."""
    kind = next(
        (c.__name__ for c in type(error).__mro__ if c.__module__ == errors.__name__),
        "OptboostError",
    )
    text = str(error) if isinstance(error, OptboostError) else f"{type(error).__name__}: {error}"
    return {"kind": kind, "message": text[:4000]}
