"""``optboost.spark.boost``: one rank per partition of a Spark DataFrame, all started together
in a barrier stage (``mapInArrow(..., barrier=True)``), each running the same booster on its
own rows over the core's collective, as ``optboost.dask`` does with one rank per worker. The
driver reads two summaries of the partitions first (rows and first rows; levels and classes),
builds the formula's spec and the ranks' plan from them (``optboost._distributed``), then runs
the barrier stage and collects the ranks' results from its report listener.
"""

from __future__ import annotations

import functools
import re
import secrets
import time
from typing import Any

from .. import errors
from .._distributed import worker
from .._distributed.design import distributed_design
from .._distributed.fit import (
    DistributedTrainingError,
    kept_sentence,
    last_finished,
    rank_named_in,
    rank_plan,
    refuse_unsupported,
)
from ..errors import DataError, DataTypeError, OptboostError, ParameterError
from ..frames import to_polars
from ..model import Model
from ..plan import FitPlan
from ..training import warn
from . import _tasks
from ._reports import ReportKey, ReportServer

ENGINE = "optboost.spark"
# How often the driver looks at the barrier stage while the ranks train.
POLL_SECONDS = 0.5
# After a failed stage, how long past the core's own timeout the driver waits for the
# surviving ranks to report the model of the last finished iteration.
SURVIVOR_GRACE_SECONDS = 10.0
# The errors a rank may report, by name: the classes of optboost.errors only.
REPORTED_ERRORS = {
    name: value
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, OptboostError)
}


def boost(formula: str, data: Any, *, timeout: float = 600.0, **arguments: Any) -> Model:
    """``optboost.boost`` on a Spark DataFrame; returns the same ``optboost.Model``, equal to
    the one-process fit of the DataFrame's rows in partition order (``data.toPandas()``).

    data: a ``pyspark.sql.DataFrame``. One rank per partition holding rows, all run at once in
        a barrier stage: the cluster needs one free task slot per partition
        (``data.coalesce(n)`` to use fewer). Its partitions are computed once and kept on the
        executors for the fit (``localCheckpoint``).
    valid: validation rows: a small Spark, pandas or polars DataFrame (collected to the driver
        and given to rank 0).
    weights, offset: column names.
    timeout: seconds a rank waits for the others at any exchange before the fit fails, and
        that the barrier stage may take to start all its tasks.

    Every other argument as in ``optboost.boost``, checked as ``optboost.dask.boost`` checks
    them, with the same exceptions (no CustomLoss, callable metrics, AUC, callback, progress
    bar, cox or multiclass_hinge loss; the squared loss unless ``loss=`` is given). A rank
    lost while training (its executor or Python worker killed) raises
    ``DistributedTrainingError`` naming the rank and its partition, with the model of the last
    finished iteration as its ``model`` when a surviving rank handed one back.
    """
    from pyspark.sql import DataFrame

    plan = FitPlan.make(arguments)
    fit = plan.fit
    refuse_unsupported(plan, timeout, ENGINE)
    if not isinstance(data, DataFrame):
        raise DataTypeError(
            f"{ENGINE}.boost takes a pyspark.sql.DataFrame, got "
            f"{type(data).__module__}.{type(data).__name__}"
        )
    sc = data.sparkSession.sparkContext
    n_partitions = data.rdd.getNumPartitions()
    slots = sc.defaultParallelism
    if n_partitions > slots:
        raise ParameterError(
            f"data has {n_partitions} partitions but the cluster runs {slots} tasks at once; "
            "a barrier stage needs one task slot per partition: data.coalesce("
            f"{slots}) (or fewer) before the fit"
        )
    # Read once, its partitions kept on the executors: the three passes below see the same rows
    # even if computing the DataFrame again would not give them, and the barrier stage starts
    # from stored partitions (Spark refuses one that would compute a union or coalesce).
    data = data.localCheckpoint(eager=True)
    rows, samples = _survey(data, n_partitions)
    if sum(rows) == 0:
        raise DataError(f"data has no rows (columns: {data.columns[:30]})")
    valid = _valid_frame(fit["valid"])
    design = distributed_design(
        formula,
        samples,
        list(data.columns),
        functools.partial(_levels, data, rows, samples),
        task=plan.task,
        weights=fit["weights"],
        offset=fit["offset"],
        context=fit["context"],
        engine=ENGINE,
    )
    ranks, pairs = rank_plan(plan, formula, design, rows, valid is not None)
    conf = sc.getConf()
    host = conf.get("spark.driver.host") or "127.0.0.1"
    bind = conf.get("spark.driver.bindAddress") or host
    fit_id = secrets.token_hex(8)
    world = sum(1 for n in rows if n > 0)
    server = ReportServer(bind, host, ReportKey.generate(), fit_id, world, float(timeout))
    try:
        job = _tasks.RankJob(
            plan=ranks,
            pairs=pairs,
            n_iter=plan.n_iter,
            timeout=float(timeout),
            rows=rows,
            valid=valid,
            report_address=server.address,
            report_key=server.key,
            fit_id=fit_id,
        )
        stage_error = _run_barrier_stage(data, job, fit_id, float(timeout))
        return _model_of(job, server, stage_error)
    finally:
        server.close()


def _survey(data: Any, n_partitions: int) -> tuple[list[int], list]:
    """Rows and first rows of each partition, in partition order."""
    batches = data.mapInArrow(_tasks.survey, _tasks.spark_schema(_tasks.SURVEY_SCHEMA)).collect()
    rows = [0] * n_partitions
    samples: list = []
    by_partition = {int(row["partition"]): row for row in batches}
    for partition in range(n_partitions):
        row = by_partition.get(partition)
        if row is not None and row["rows"] > 0:
            rows[partition] = int(row["rows"])
            samples.append(_tasks.read_frame(bytes(row["sample"])))
    return rows, samples


def _levels(
    data: Any, rows: list[int], samples: list, level_columns: list[str], target_columns: list[str]
) -> list:
    """``worker.levels`` of every partition, in partition order (an empty one's from no rows)."""
    task = functools.partial(_tasks.levels, level_columns, target_columns)
    collected = data.mapInArrow(task, _tasks.spark_schema(_tasks.LEVELS_SCHEMA)).collect()
    empty = worker.levels(samples[0].head(0), level_columns, target_columns)
    found: dict[int, tuple[dict, dict]] = {}
    for row in collected:
        distinct, counts = found.setdefault(int(row["partition"]), ({}, {}))
        frame = _tasks.read_frame(bytes(row["data"]))
        if row["kind"] == "level":
            distinct[row["name"]] = frame.to_series()
        else:
            counts[row["name"]] = frame
    return [found.get(p, empty) for p in range(len(rows))]


def _valid_frame(valid: Any) -> Any:
    if valid is None:
        return None
    from pyspark.sql import DataFrame

    if isinstance(valid, DataFrame):
        valid = valid.toPandas()
    return to_polars(valid)


def _run_barrier_stage(data: Any, job: _tasks.RankJob, fit_id: str, timeout: float) -> Any:
    """Runs the ranks' barrier stage to its end; returns the Spark error that ended it, if
    one did. A stage whose tasks do not all start within the timeout (too few free slots) is
    cancelled with an error."""
    from pyspark import InheritableThread

    sc = data.sparkSession.sparkContext
    group = f"optboost-train-{fit_id}"
    outcome: dict[str, Any] = {}

    def run() -> None:
        sc.setJobGroup(group, "optboost.spark.boost: training", interruptOnCancel=True)
        try:
            data.mapInArrow(
                functools.partial(_tasks.train, job),
                _tasks.spark_schema(_tasks.RANK_SCHEMA),
                barrier=True,
            ).collect()
        except Exception as error:  # Py4J's or Spark's: read on the driver
            outcome["error"] = error

    thread = InheritableThread(target=run, daemon=True)
    thread.start()
    started = time.monotonic()
    all_running = False
    while thread.is_alive():
        thread.join(POLL_SECONDS)
        if all_running or not thread.is_alive():
            continue
        all_running = _stage_running(sc, group)
        if not all_running and time.monotonic() - started > timeout:
            sc.cancelJobGroup(group)
            thread.join(timeout)
            raise DistributedTrainingError(
                f"Spark did not start the {len(job.rows)} tasks of the training stage together "
                f"within {timeout:g} s: a barrier stage needs one free task slot per partition "
                "at once; coalesce the DataFrame to fewer partitions or free the cluster"
            )
    return outcome.get("error")


def _stage_running(sc: Any, group: str) -> bool:
    tracker = sc.statusTracker()
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job is not None else ():
            stage = tracker.getStageInfo(stage_id)
            started = 0 if stage is None else stage.numActiveTasks + stage.numCompletedTasks
            if stage is not None and started >= stage.numTasks:
                return True
    return False


def _model_of(job: _tasks.RankJob, server: ReportServer, stage_error: Any) -> Model:
    ranks = job.ranks()
    partition_of = {rank: partition for partition, rank in ranks.items()}
    world = len(ranks)
    lost = None
    reports = server.reports()
    if stage_error is not None:
        lost = _failed_rank(str(stage_error), ranks)
        expected = set(range(world)) - ({lost} if lost is not None else set())
        deadline = time.monotonic() + job.timeout + SURVIVOR_GRACE_SECONDS
        reports = server.wait_for(expected, deadline)
    own = [reports[r]["failed"] for r in sorted(reports) if "failed" in reports[r]]
    if own and stage_error is None:  # a rank's own error (bad rows, a failed join): as is
        first = own[0]
        raise REPORTED_ERRORS.get(first.get("kind"), OptboostError)(str(first.get("message")))
    context = job.plan.context
    if stage_error is None and len(reports) == world and not any(
        report.get("error") for report in reports.values()
    ):
        first = reports[0]
        for message in first["warnings"]:
            warn(str(message))
        model = Model.from_dict(first["model"], context=context)
        # Not saved with the model: what each rank exchanged.
        model.traffic = [reports[r]["traffic"] for r in range(world)]
        return model
    core = [str(r["error"]) for r in reports.values() if r.get("error")]
    core += [str(r["failed"].get("message")) for r in reports.values() if "failed" in r]
    if lost is None:
        lost = rank_named_in(core, world)
    if lost is None:
        missing = sorted(set(range(world)) - set(reports))
        lost = missing[0] if missing else None
    model, iteration = last_finished(list(reports.values()), context)
    who = (
        f"rank {lost} of {world} (partition {partition_of[lost]})"
        if lost is not None
        else f"one of the {world} ranks"
    )
    when = f" at iteration {iteration}" if iteration is not None else ""
    kept = kept_sentence(model, iteration)
    spark = f" Spark: {_spark_message(stage_error)}." if stage_error is not None else ""
    said = f" The core: {core[0]}." if core else ""
    if not reports:
        raise DistributedTrainingError(
            f"distributed training failed: {who} failed before any rank reported."
            f"{spark}{said}",
            rank=lost,
        )
    raise DistributedTrainingError(
        f"distributed training failed{when}: {who} was lost.{spark}{said} {kept}",
        model=model,
        rank=lost,
        iteration=iteration,
    )


def _failed_rank(message: str, ranks: dict[int, int]) -> int | None:
    """The rank whose task failed the stage, from Spark's message ("Task 1 in stage 3.0
    failed", "barrier task ResultTask(3, 1) finished unsuccessfully")."""
    found = re.search(r"Task (\d+) in stage", message) or re.search(
        r"ResultTask\(\d+, (\d+)\)", message
    )
    return ranks.get(int(found.group(1))) if found else None


def _spark_message(error: Any) -> str:
    """The first line of Spark's own message (a Py4JJavaError's text is mostly a stack)."""
    java = getattr(error, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines or ["(no message)"])[0][:400]

