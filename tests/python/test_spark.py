"""optboost.spark on a local Spark (``local[2]``, started here): fits equal the one-process
model of the same rows, the Spark ML estimators work inside a Pipeline, a bad partition is
named before training, and a rank killed while training gives a clear error with the model of
the last finished iteration."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import optboost  # noqa: E402
import optboost.spark as ospark  # noqa: E402
from optboost.errors import DataError, OptboostError, ParameterError  # noqa: E402

# Two partitions of unequal sizes (local[2] runs two tasks at once: one rank each); a level of
# "shop" only in the second.
SIZES = (700, 1150)
RTOL = 1e-9


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java (17): none on PATH nor JAVA_HOME")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("optboost-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def piece(n: int, seed: int, last: bool = False):
    rng = np.random.default_rng(seed)
    shops = ["a", "b", "z"] if last else ["a", "b"]
    # Fewer distinct values than bins: the merged sketches then give one process's cut points.
    x1 = np.round(rng.normal(size=n) * 16) / 16
    x2 = rng.integers(0, 6, n).astype(np.float64)
    shop = rng.choice(shops, n)
    score = x1 + 0.5 * x2 + (shop == "z") * 2.0 + rng.normal(scale=0.5, size=n)
    return pd.DataFrame(
        {
            "x1": x1,
            "x2": x2,
            "shop": shop,
            "w": rng.uniform(0.5, 2.0, n),
            "y": score,
            "cls": np.where(score < 0.5, "low", np.where(score < 2.5, "mid", "high")),
            "label": (score > 1.5).astype(np.float64),
        }
    )


@pytest.fixture(scope="module")
def pieces():
    return [piece(n, seed, last=seed == len(SIZES)) for seed, n in enumerate(SIZES, start=1)]


def frame_of(spark, pieces):
    """One Spark partition per piece, in order."""
    schema = spark.createDataFrame(next(p for p in pieces if len(p))).schema
    frames = [spark.createDataFrame(p, schema=schema).coalesce(1) for p in pieces]
    data = frames[0]
    for other in frames[1:]:
        data = data.union(other)
    return data


def whole(pieces):
    return pd.concat(pieces, ignore_index=True)


FITS = {
    "gbm": dict(method="gbm"),
    "agbm": dict(method="agbm"),
    "proximal_absolute": dict(method="proximal", loss="absolute"),
    "softmax": dict(method="gbm", loss="softmax"),
}
FORMULA = "{target} ~ x1 + x2 + shop"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", list(FITS))
def test_spark_fit_equals_the_single_process_fit(spark, pieces, name):
    settings = dict(FITS[name], n_iter=15, validation_fraction=None, seed=3)
    formula = FORMULA.format(target="cls" if name == "softmax" else "y")
    local = optboost.boost(formula, whole(pieces), **settings)
    model = ospark.boost(formula, frame_of(spark, pieces), timeout=60, **settings)
    assert isinstance(model, optboost.Model)
    assert model.n_trees == local.n_trees
    assert model.spec.to_dict() == local.spec.to_dict()
    assert len(model.traffic) == len(SIZES)  # one rank per partition
    np.testing.assert_allclose(
        model.predict(whole(pieces)), local.predict(whole(pieces)), rtol=RTOL, atol=0
    )
    np.testing.assert_allclose(
        model.history["train_loss"].to_numpy(), local.history["train_loss"].to_numpy(), rtol=RTOL
    )


@pytest.mark.timeout(300)
def test_held_out_rows_weights_and_an_empty_partition_as_one_process(spark, pieces):
    # agbm's default holds out a tenth of the rows, drawn over the global row order; an empty
    # partition takes no part (one rank).
    settings = dict(method="agbm", n_iter=12, seed=5, weights="w")
    local = optboost.boost("y ~ x1 + x2 + shop", whole(pieces), **settings)
    model = ospark.boost("y ~ x1 + x2 + shop", frame_of(spark, pieces), timeout=60, **settings)
    np.testing.assert_allclose(
        model.predict(whole(pieces)), local.predict(whole(pieces)), rtol=RTOL, atol=0
    )
    np.testing.assert_allclose(
        model.history["valid_loss"].to_numpy(), local.history["valid_loss"].to_numpy(), rtol=RTOL
    )
    empty_first = [pieces[0].iloc[:0], whole(pieces)]
    settings = dict(n_iter=5, validation_fraction=None)
    alone = ospark.boost("y ~ x1 + shop", frame_of(spark, empty_first), timeout=60, **settings)
    assert len(alone.traffic) == 1
    local = optboost.boost("y ~ x1 + shop", whole(pieces), **settings)
    np.testing.assert_allclose(alone.predict(whole(pieces)), local.predict(whole(pieces)),
                               rtol=RTOL, atol=0)


@pytest.mark.timeout(300)
def test_validation_rows_and_early_stopping_as_one_process(spark, pieces):
    valid = piece(300, 11, last=True)
    settings = dict(method="agbm", n_iter=40, learning_rate=0.5, early_stopping_rounds=3,
                    seed=4)
    local = optboost.boost("y ~ x1 + x2 + shop", whole(pieces), valid=valid, **settings)
    model = ospark.boost("y ~ x1 + x2 + shop", frame_of(spark, pieces), valid=valid,
                         timeout=60, **settings)
    assert model.n_iter == local.n_iter
    np.testing.assert_allclose(
        model.history["valid_loss"].to_numpy(), local.history["valid_loss"].to_numpy(), rtol=RTOL
    )
    np.testing.assert_allclose(model.predict(valid), local.predict(valid), rtol=RTOL, atol=0)


@pytest.mark.timeout(300)
def test_estimators_in_a_pipeline_predict_as_the_local_model(spark, pieces):
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import VectorAssembler

    data = whole(pieces).assign(id=np.arange(sum(SIZES)))
    frame = frame_of(spark, [data.iloc[: SIZES[0]], data.iloc[SIZES[0]:]])
    settings = dict(n_iter=10, validation_fraction=None, seed=2)
    pipeline = Pipeline(stages=[
        VectorAssembler(inputCols=["x1", "x2"], outputCol="features"),
        ospark.SparkBoostRegressor(labelCol="y", predictionCol="yhat", **settings),
    ])
    fitted = pipeline.fit(frame)
    out = fitted.transform(frame).select("id", "yhat").toPandas().sort_values("id")
    local = optboost.boost("y ~ f0 + f1", data.assign(f0=data.x1, f1=data.x2), **settings)
    assert fitted.stages[-1].model.n_trees == local.n_trees
    np.testing.assert_allclose(out["yhat"].to_numpy(), local.predict(data.assign(
        f0=data.x1, f1=data.x2)), rtol=RTOL, atol=0)

    classifier = ospark.SparkBoostClassifier(formula="cls ~ x1 + x2 + shop", **settings)
    model = Pipeline(stages=[classifier]).fit(frame)
    out = model.transform(frame).select("id", "prediction", "probability").toPandas()
    out = out.sort_values("id")
    local = optboost.boost("cls ~ x1 + x2 + shop", data, loss="softmax", **settings)
    probabilities = np.vstack([v.toArray() for v in out["probability"]])
    np.testing.assert_allclose(probabilities, local.predict(data), rtol=RTOL, atol=0)
    assert list(out["prediction"]) == list(local.predict(data, type="class"))

    binary = ospark.SparkBoostClassifier(featuresCol="features", **settings)
    assembled = VectorAssembler(inputCols=["x1", "x2"], outputCol="features").transform(frame)
    out = binary.fit(assembled).transform(assembled).toPandas().sort_values("id")
    local = optboost.boost("label ~ f0 + f1", data.assign(f0=data.x1, f1=data.x2),
                           loss="logistic", **settings)
    positive = local.predict(data.assign(f0=data.x1, f1=data.x2))
    probabilities = np.vstack([v.toArray() for v in out["probability"]])
    np.testing.assert_allclose(probabilities[:, 1], positive, rtol=RTOL, atol=0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-12)
    assert set(out["prediction"]) <= {0.0, 1.0}


@pytest.mark.timeout(300)
def test_predict_adds_the_local_predictions_as_a_column(spark, pieces):
    data = whole(pieces).assign(id=np.arange(sum(SIZES)))
    frame = frame_of(spark, [data.iloc[: SIZES[0]], data.iloc[SIZES[0]:]])
    model = optboost.boost("cls ~ x1 + shop", data, loss="softmax", n_iter=5)
    out = ospark.predict(model, frame).select("id", "prediction").toPandas().sort_values("id")
    np.testing.assert_allclose(np.vstack(out["prediction"]), model.predict(data), rtol=RTOL)
    with pytest.raises(OptboostError, match="needs column"):
        ospark.predict(model, frame.drop("shop"))


@pytest.mark.timeout(300)
def test_bad_partitions_and_arguments_are_named_before_training(spark, pieces):
    bad = [pieces[0], pieces[1].assign(y=np.nan)]
    with pytest.raises(DataError, match=r"partition 1: target 'y' is missing"):
        ospark.boost("y ~ x1", frame_of(spark, bad), timeout=60, validation_fraction=None)
    data = frame_of(spark, pieces)
    with pytest.raises(ParameterError, match="callback"):
        ospark.boost("y ~ x1", data, callback=lambda record: None)
    with pytest.raises(ParameterError, match=r"center\(x1\).*learn"):
        ospark.boost("y ~ center(x1) + x2", data)
    with pytest.raises(ParameterError, match="3 partitions.*coalesce"):
        ospark.boost("y ~ x1", data.repartition(3))
    with pytest.raises(OptboostError, match="pyspark.sql.DataFrame"):
        ospark.boost("y ~ x1", whole(pieces))


def _training_ranks() -> list[int]:
    """The pids of the Python workers connected to each other over TCP: the two ranks of a
    fit, once both train (Spark's own connections are to the JVM)."""
    import psutil

    workers = {}
    for child in psutil.Process().children(recursive=True):
        try:
            if "pyspark.daemon" in " ".join(child.cmdline()):
                workers[child.pid] = [
                    c for c in child.net_connections("inet") if c.status == "ESTABLISHED"
                ]
        except psutil.Error:  # a worker that ended meanwhile
            continue
    ends = {(c.laddr.port, c.raddr.port): pid for pid, conns in workers.items() for c in conns}
    return sorted({pid for (mine, theirs), pid in ends.items() if (theirs, mine) in ends
                   and ends[(theirs, mine)] != pid})


@pytest.mark.timeout(300)
def test_a_killed_rank_gives_an_error_with_the_last_model(spark, pieces):
    pytest.importorskip("psutil")
    killed: list[int] = []

    def kill_once_training() -> None:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            ranks = _training_ranks()
            if len(ranks) == 2:
                time.sleep(2.0)  # a few iterations first
                os.kill(ranks[-1], signal.SIGKILL)
                killed.append(ranks[-1])
                return
            time.sleep(0.1)
        spark.sparkContext.cancelAllJobs()  # no ranks found: end the fit, and the test fails

    killer = threading.Thread(target=kill_once_training, daemon=True)
    killer.start()
    started = time.monotonic()
    try:
        with pytest.raises(ospark.DistributedTrainingError) as raised:
            ospark.boost("y ~ x1 + x2 + shop", frame_of(spark, pieces), n_iter=1_000_000,
                         learning_rate=1e-4, timeout=20, validation_fraction=None)
    finally:
        killer.join()
    error = raised.value
    assert killed, "the test found no training ranks to kill"
    assert isinstance(error, OptboostError)
    # Which rank the killed worker held is not visible from outside: the error names it
    # (partition i holds rank i here) and the other rank handed back its model.
    assert error.rank in (0, 1) and f"rank {error.rank} of 2 (partition {error.rank})" in str(error)
    assert f"iteration {error.iteration}" in str(error)
    assert error.model is not None and error.model.n_iter == error.iteration - 1 >= 1
    assert error.model.predict(whole(pieces)).shape == (sum(SIZES),)
    assert time.monotonic() - started < 200
    # The session survives the lost worker: the next fit trains.
    model = ospark.boost("y ~ x1", frame_of(spark, pieces), n_iter=2, timeout=60,
                         validation_fraction=None)
    assert model.n_trees == 2
