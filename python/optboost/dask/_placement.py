"""Where the rows live: a dask DataFrame's partitions or Parquet files as polars frames held by
the workers (never by the client), their schemas checked, and the workers that hold them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from .._distributed import worker as _worker
from ..errors import DataError, DataTypeError

# dtypes that hold the levels of a categorical feature: partitions may differ among these (a
# pandas categorical's categories per partition, a column of nulls only), not otherwise.
_LEVEL_DTYPES = ("String", "Categorical", "Enum", "Null")


@dataclass
class Partitions:
    """Row partitions held by the workers, in data order: a future of a polars frame each,
    with its name for messages ("partition 3", "file 'x.parquet'")."""

    futures: list[Any]
    labels: list[str]
    rows: list[int]
    schema: list[tuple[str, str]]  # of the first partition: (column, dtype text)
    samples: list[pl.DataFrame]  # the first rows of each partition

    @property
    def n_rows(self) -> int:
        return sum(self.rows)

    def holders(self, client: Any) -> list[str]:
        """The worker holding each partition (the first in address order if several do)."""
        where = client.who_has(self.futures)
        return [min(where[future.key]) for future in self.futures]


def is_dask_frame(data: Any) -> bool:
    return type(data).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(
        data, "to_delayed"
    )


def partitions_of(client: Any, data: Any, what: str) -> Partitions:
    """The partitions of ``data`` (a dask DataFrame of pandas partitions, or a list of Parquet
    paths read on the workers), checked to agree in columns and dtypes before any training:
    a partition or file that does not is named."""
    if is_dask_frame(data):
        if not hasattr(data, "dtypes") or not hasattr(data, "columns"):
            raise DataTypeError(f"{what}: expected a dask DataFrame, got {type(data).__name__}")
        declared = {str(name): str(dtype) for name, dtype in data.dtypes.items()}
        from distributed import wait

        parts = client.compute(data.to_delayed(), sync=False)  # persisted where computed
        wait(parts)
        where = client.who_has(parts)
        labels = [f"{what} partition {i}" for i in range(len(parts))]
        futures = [
            client.submit(
                _worker.checked_partition,
                part,
                label,
                declared,
                workers=[min(where[part.key])],  # converted where it is
                allow_other_workers=False,
                pure=False,
                retries=0,
            )
            for part, label in zip(parts, labels)
        ]
        del parts  # the pandas partitions are released once converted
    elif isinstance(data, (list, tuple)) and data and all(
        isinstance(p, (str, os.PathLike)) for p in data
    ):
        paths = [os.fspath(p) for p in data]
        workers = sorted(client.nthreads())
        if not workers:
            raise DataError("the Dask cluster has no workers")
        labels = [f"{what} file {path!r}" for path in paths]
        # Files spread over the workers in turn; each is read where it will be trained on.
        futures = [
            client.submit(
                _worker.read_parquet,
                path,
                workers=[workers[i % len(workers)]],
                allow_other_workers=False,
                pure=False,
                retries=0,
            )
            for i, path in enumerate(paths)
        ]
    else:
        raise DataTypeError(
            f"{what} must be a dask DataFrame or a non-empty list of Parquet paths, got "
            f"{type(data).__module__}.{type(data).__name__}"
        )
    if not futures:
        raise DataError(f"{what} has no partitions")
    surveys = client.gather(client.map(_worker.survey, futures, pure=False, retries=0))
    rows = [height for height, _, _ in surveys]
    schemas = [schema for _, schema, _ in surveys]
    check_schemas(schemas, labels)
    if sum(rows) == 0:
        raise DataError(f"{what} has no rows (columns: {[n for n, _ in schemas[0]][:30]})")
    return Partitions(futures, labels, rows, schemas[0], [sample for _, _, sample in surveys])


def check_schemas(schemas: Sequence[list[tuple[str, str]]], labels: Sequence[str]) -> None:
    """Every partition has the first one's columns (in any order) with compatible dtypes."""
    reference = dict(schemas[0])
    for schema, label in zip(schemas[1:], labels[1:]):
        columns = dict(schema)
        missing = [name for name in reference if name not in columns]
        if missing:
            raise DataError(
                f"{label} has no column {missing[0]!r}, which {labels[0]} has"
                + (f" (also missing: {missing[1:10]})" if len(missing) > 1 else "")
            )
        extra = [name for name in columns if name not in reference]
        if extra:
            raise DataError(f"{label} has column(s) {extra[:10]}, which {labels[0]} has not")
        for name, dtype in columns.items():
            if not compatible(dtype, reference[name]):
                raise DataError(
                    f"column {name!r} has dtype {dtype} in {label} but {reference[name]} in "
                    f"{labels[0]}; cast it to one dtype in every partition"
                )


def compatible(first: str, second: str) -> bool:
    if first == second:
        return True
    kinds = [dtype.split("(")[0] for dtype in (first, second)]
    return all(kind in _LEVEL_DTYPES for kind in kinds) or "Null" in kinds


def by_worker(holders: Sequence[str], rows: Sequence[int]) -> dict[str, list[int]]:
    """Partition indices per worker holding rows, the workers in order of their first
    partition (rank 0 holds the data's first rows). A worker whose partitions are all empty
    takes no part."""
    groups: dict[str, list[int]] = {}
    for index, worker in enumerate(holders):
        groups.setdefault(worker, []).append(index)
    return {
        worker: indices
        for worker, indices in groups.items()
        if any(rows[i] > 0 for i in indices)
    }
