"""optboost.dask on a two-worker LocalCluster (processes): distributed fits give the
single-process model of the same rows, bad partitions are named before training, a lost worker
gives a clear error with the last finished model, predictions come back as dask collections."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")

from distributed import Client, LocalCluster  # noqa: E402

import optboost  # noqa: E402
import optboost.dask as odask  # noqa: E402
from optboost.errors import DataError, FormulaError, OptboostError, ParameterError  # noqa: E402

pytestmark = pytest.mark.timeout(60)

# Four partitions of unequal sizes, one of them empty; a level of "shop" ("z") and one of "tier"
# only in the last partition.
SIZES = (700, 0, 450, 850)
RTOL = 1e-9
SCATTERED: list = []


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        yield client
        SCATTERED.clear()


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
            "tier": pd.Categorical(rng.choice(["gold", "iron"] + (["tin"] if last else []), n)),
            "w": rng.uniform(0.5, 2.0, n),
            "y": score,
            "cls": np.where(score < 0.5, "low", np.where(score < 2.5, "mid", "high")),
        }
    )


@pytest.fixture(scope="module")
def pieces():
    seeds = range(1, len(SIZES) + 1)
    return [piece(n, seed, last=seed == len(SIZES)) for n, seed in zip(SIZES, seeds)]


def frame_on(client, pieces, placement: str):
    """The pieces as a dask frame, all on the first worker ("one") or alternately on both
    ("two"), in order."""
    workers = sorted(client.nthreads())
    chosen = [workers[0]] * len(pieces) if placement == "one" else [
        workers[i % 2] for i in range(len(pieces))
    ]
    futures = [client.scatter(p, workers=[w], hash=False) for p, w in zip(pieces, chosen)]
    SCATTERED.extend(futures)  # a frame built from futures needs them kept
    return dd.from_delayed(futures, meta=pieces[0].iloc[:0], verify_meta=False)


def whole(pieces):
    return pd.concat(pieces, ignore_index=True)


FITS = {
    "gbm": dict(method="gbm"),
    "agbm": dict(method="agbm"),
    "proximal_absolute": dict(method="proximal", loss="absolute"),
    "rgbm": dict(method="rgbm"),
    "residual_gbm": dict(method="residual_gbm"),
    "softmax": dict(method="gbm", loss="softmax"),
}
FORMULA = "{target} ~ x1 + x2 + shop + tier"


@pytest.mark.parametrize("placement", ["one", "two"])
@pytest.mark.parametrize("name", list(FITS))
def test_distributed_fit_equals_the_single_process_fit(client, pieces, name, placement):
    settings = dict(FITS[name], n_iter=15, validation_fraction=None, seed=3)
    formula = FORMULA.format(target="cls" if name == "softmax" else "y")
    local = optboost.boost(formula, whole(pieces), **settings)
    model = odask.boost(formula, frame_on(client, pieces, placement), client=client, timeout=30,
                        **settings)
    assert isinstance(model, optboost.Model)
    assert model.n_trees == local.n_trees
    assert model.spec.to_dict() == local.spec.to_dict()
    np.testing.assert_allclose(
        model.predict(whole(pieces)), local.predict(whole(pieces)), rtol=RTOL, atol=0
    )
    np.testing.assert_allclose(
        model.history["train_loss"].to_numpy(), local.history["train_loss"].to_numpy(), rtol=RTOL
    )


def test_weights_and_balanced_classes_as_one_process(client, pieces):
    settings = dict(loss="softmax", n_iter=8, validation_fraction=None, weights="w",
                    class_weight="balanced")
    formula = "cls ~ x1 + x2 + shop"
    local = optboost.boost(formula, whole(pieces), **settings)
    model = odask.boost(formula, frame_on(client, pieces, "two"), client=client, timeout=30,
                        **settings)
    np.testing.assert_allclose(model.predict(whole(pieces)), local.predict(whole(pieces)),
                               rtol=RTOL)


def twice(values):
    return 2 * values


@pytest.mark.parametrize(
    "formula, settings",
    [
        ("y ~ x1 + shop", dict(offset="off")),
        ("y ~ x1 + shop + offset(off)", {}),
        ("y + x2 ~ x1 + shop", {}),
        ("y ~ twice(x1) + x2:shop", dict(context={"twice": twice})),
        ("np.log(y + 10) ~ x1 + C(x2)", dict(metrics=["rmse", "mae"])),
    ],
)
def test_offsets_targets_and_terms_as_one_process(client, pieces, formula, settings):
    pieces = [p.assign(off=np.linspace(0.0, 1.0, len(p))) for p in pieces]
    settings = dict(settings, n_iter=6, validation_fraction=None)
    local = optboost.boost(formula, whole(pieces), **settings)
    model = odask.boost(formula, frame_on(client, pieces, "two"), client=client, timeout=30,
                        **settings)
    offset = {"offset": "off"} if "offset" in settings else {}
    np.testing.assert_allclose(model.predict(whole(pieces), **offset),
                               local.predict(whole(pieces), **offset), rtol=RTOL)
    for column in model.history.columns:
        if column != "seconds":
            np.testing.assert_allclose(model.history[column].to_numpy().astype(float),
                                       local.history[column].to_numpy().astype(float), rtol=RTOL)


@pytest.mark.filterwarnings("ignore:agbm:UserWarning")  # the momentum safeguard's notes
def test_validation_frame_and_early_stopping_as_one_process(client, pieces):
    train, valid = pieces, [piece(200, 9), piece(150, 10)]
    settings = dict(method="agbm", n_iter=60, learning_rate=0.5, early_stopping_rounds=3)
    local = optboost.boost("y ~ x1 + x2 + shop", whole(train), valid=whole(valid), **settings)
    # The validation rows on both workers, and all on one of them (the other takes part in the
    # validation sums with none).
    for valid_frame in (frame_on(client, valid, "two"), frame_on(client, valid[:1], "one")):
        expected = local
        if valid_frame.npartitions == 1:
            expected = optboost.boost("y ~ x1 + x2 + shop", whole(train), valid=whole(valid[:1]),
                                      **settings)
        model = odask.boost("y ~ x1 + x2 + shop", frame_on(client, train, "two"), client=client,
                            valid=valid_frame, timeout=30, **settings)
        assert model.stop_reason == expected.stop_reason
        assert model.n_iter == expected.n_iter < 60
        np.testing.assert_allclose(model.history["valid_loss"].to_numpy(),
                                   expected.history["valid_loss"].to_numpy(), rtol=RTOL)
        np.testing.assert_allclose(model.predict(whole(pieces)), expected.predict(whole(pieces)),
                                   rtol=RTOL)


def test_held_out_rows_do_not_depend_on_the_workers(client, pieces):
    settings = dict(method="agbm", n_iter=12, validation_fraction=0.2, seed=5, timeout=30)
    one = odask.boost("y ~ x1 + x2 + shop", frame_on(client, pieces, "one"), client=client,
                      **settings)
    two = odask.boost("y ~ x1 + x2 + shop", frame_on(client, pieces, "two"), client=client,
                      **settings)
    assert one.history["valid_loss"].null_count() == 0
    np.testing.assert_allclose(
        one.history["valid_loss"].to_numpy(), two.history["valid_loss"].to_numpy(), rtol=RTOL
    )
    np.testing.assert_allclose(one.predict(whole(pieces)), two.predict(whole(pieces)), rtol=RTOL)


def test_parquet_files_are_read_on_the_workers(client, pieces, tmp_path):
    paths = []
    for i, p in enumerate(pieces):
        paths.append(str(tmp_path / f"part{i}.parquet"))
        p.drop(columns="tier").to_parquet(paths[-1])
    settings = dict(n_iter=10, validation_fraction=None)
    local = optboost.boost("y ~ x1 + x2 + shop", whole(pieces), **settings)
    model = odask.boost("y ~ x1 + x2 + shop", paths, client=client, timeout=30, **settings)
    np.testing.assert_allclose(model.predict(whole(pieces)), local.predict(whole(pieces)),
                               rtol=RTOL)


def test_a_partition_missing_a_column_is_named(client, pieces):
    broken = [pieces[0], pieces[2].drop(columns="shop"), pieces[3]]
    futures = [client.scatter(p, hash=False) for p in broken]
    SCATTERED.extend(futures)
    ddf = dd.from_delayed(futures, meta=pieces[0].iloc[:0], verify_meta=False)
    with pytest.raises(DataError, match=r"data partition 1 has no column 'shop'"):
        odask.boost("y ~ x1 + shop", ddf, client=client, timeout=30)


def test_a_partition_of_another_dtype_is_named(client, pieces):
    other = pieces[2].assign(x2=pieces[2]["x2"].astype(np.int64))
    futures = [client.scatter(p, hash=False) for p in (pieces[0], other)]
    SCATTERED.extend(futures)
    ddf = dd.from_delayed(futures, meta=pieces[0].iloc[:0], verify_meta=False)
    with pytest.raises(DataError, match=r"data partition 1: column 'x2' has dtype int64; the "
                                        r"dask frame declares float64"):
        odask.boost("y ~ x1 + x2", ddf, client=client, timeout=30)


def test_bad_values_are_named_by_partition_before_training(client, pieces):
    bad = [pieces[0], pieces[2].assign(y=np.nan)]
    with pytest.raises(OptboostError, match=r"data partition 1: target 'y' is missing"):
        odask.boost("y ~ x1", frame_on(client, bad, "two"), client=client, timeout=30)


def test_parquet_files_that_disagree_are_named(client, pieces, tmp_path):
    first, second = str(tmp_path / "first.parquet"), str(tmp_path / "second.parquet")
    pieces[0].drop(columns="tier").to_parquet(first)
    pieces[2].drop(columns=["tier", "shop"]).to_parquet(second)
    with pytest.raises(DataError, match=r"file '.*second.parquet' has no column 'shop'"):
        odask.boost("y ~ x1 + shop", [first, second], client=client, timeout=30)
    pieces[2].drop(columns="tier").assign(x1=lambda f: f["x1"].astype("float32")).to_parquet(
        second
    )
    with pytest.raises(DataError, match=r"column 'x1' has dtype Float32 in data file "
                                        r"'.*second.parquet' but Float64"):
        odask.boost("y ~ x1 + shop", [first, second], client=client, timeout=30)


def test_the_spec_unions_levels_across_partitions(client, pieces):
    from optboost.dask import _fit, _placement
    from optboost.formula import build_design

    parts = _placement.partitions_of(client, frame_on(client, pieces, "two"), "data")
    assert parts.rows == list(SIZES)
    for formula in ("cls ~ .", "cls ~ x1 + shop:x1 + C(x2) + np.log(x1 + 10)"):
        design = _fit.dask_design(
            client, formula, parts, task="multiclass", weights=None, offset=None, context=None
        )
        local = build_design(formula, whole(pieces), task="multiclass").spec
        assert design.spec.to_dict() == local.to_dict()
    levels = {f.name: f.levels for f in design.spec.features}
    assert levels["C(x2)"] == tuple(f"{v}.0" for v in range(6))  # as one process writes them
    counts = design.class_counts
    assert counts.shape == (4, 3) and counts.sum() == sum(SIZES) and counts[1].sum() == 0


def test_refusals(client, pieces):
    ddf = frame_on(client, pieces, "two")
    for settings, message in [
        (dict(loss=optboost.CustomLoss(lambda y, f: (f - y) ** 2, lambda y, f: f - y)),
         "CustomLoss"),
        (dict(callback=lambda record: None), "callback"),
        (dict(progress=True), "progress"),
        (dict(metrics=[lambda y, f: 0.0]), "callable metrics"),
        (dict(loss="logistic", metrics=["logloss", "auc"]), "AUC"),
        (dict(weights=np.ones(2000)), "column name"),
        (dict(loss="multiclass_hinge"), "multiclass_hinge loss"),
    ]:
        with pytest.raises(ParameterError, match=message):
            odask.boost("y ~ x1", ddf, client=client, **settings)
    with pytest.raises(ParameterError, match=r"center\(x1\).*learn"):
        odask.boost("y ~ center(x1) + x2", ddf, client=client)
    with pytest.raises(FormulaError, match="classes of a classification from a column"):
        odask.boost("I(y * 2) ~ x1", ddf, client=client, loss="logistic")


def test_predict_gives_dask_collections_equal_to_local_predict(client, pieces):
    data = whole(pieces)
    ddf = frame_on(client, pieces, "two")
    model = optboost.boost("y ~ x1 + x2 + shop + tier", data, n_iter=10)
    series = odask.predict(model, ddf)
    assert isinstance(series, dd.Series)
    np.testing.assert_array_equal(series.compute().to_numpy(), model.predict(data))
    classes = optboost.boost("cls ~ x1 + x2 + shop", data, loss="softmax", n_iter=5)
    # dask cannot turn a frame of scattered futures into an array (its graph loses them):
    # the (n, K) probabilities are asked of an ordinary frame.
    probabilities = odask.predict(classes, dd.from_pandas(data, npartitions=3))
    assert probabilities.ndim == 2
    np.testing.assert_array_equal(probabilities.compute(), classes.predict(data))
    labels = odask.predict(classes, ddf, type="class").compute()
    assert list(labels) == list(classes.predict(data, type="class"))


def test_estimators_fit_dask_collections(client, pieces):
    from optboost.sklearn import BoostClassifier, BoostRegressor

    data = whole(pieces)
    ddf = dd.from_pandas(data, npartitions=4).persist()  # see above: predict_proba's array
    X, columns = ddf[["x1", "x2", "shop"]], ["x1", "x2", "shop"]
    settings = dict(n_iter=8, validation_fraction=None)
    regressor = odask.DaskBoostRegressor(**settings).fit(
        X, ddf["y"], sample_weight=ddf["w"], client=client
    )
    local = BoostRegressor(**settings).fit(data[columns], data["y"], sample_weight=data["w"])
    np.testing.assert_allclose(regressor.predict(X).compute(), local.predict(data[columns]),
                               rtol=RTOL)
    np.testing.assert_allclose(regressor.predict(data[columns]), local.predict(data[columns]),
                               rtol=RTOL)
    classifier = odask.DaskBoostClassifier(**settings).fit(X, ddf["cls"], client=client)
    local = BoostClassifier(**settings).fit(data[columns], data["cls"])
    assert list(classifier.classes_) == list(local.classes_)
    np.testing.assert_allclose(classifier.predict_proba(X).compute(),
                               local.predict_proba(data[columns]), rtol=RTOL)
    assert list(classifier.predict(X).compute()) == list(local.predict(data[columns]))


def test_a_killed_worker_gives_an_error_with_the_last_model(client, pieces):
    workers = sorted(client.nthreads())
    victim = workers[1]
    started = time.monotonic()

    def kill_once_training() -> None:
        # Once the ranks train (their tasks are processing), a second more, then the kill.
        while time.monotonic() - started < 30:
            processing = client.processing()
            if any("optboost-train" in str(key) for keys in processing.values() for key in keys):
                time.sleep(1.0)
                try:
                    client.run(os._exit, 1, workers=[victim])
                except Exception:  # the worker dies before it answers
                    pass
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_once_training, daemon=True)
    killer.start()
    try:
        with pytest.raises(odask.DistributedTrainingError) as raised:
            odask.boost("y ~ x1 + x2 + shop", frame_on(client, pieces, "two"), client=client,
                        n_iter=1_000_000, learning_rate=1e-4, timeout=20,
                        validation_fraction=None)
        error = raised.value
        assert isinstance(error, OptboostError)
        assert time.monotonic() - started < 50
        assert error.worker == victim and error.rank == 1
        assert victim in str(error) and f"iteration {error.iteration}" in str(error)
        assert error.model is not None and error.model.n_iter == error.iteration - 1 >= 1
        assert error.model.predict(whole(pieces)).shape == (sum(SIZES),)
    finally:
        killer.join()
        client.wait_for_workers(2, timeout=30)


def _recording_secrets(monkeypatch) -> list:
    """Makes every fit's job secret visible to the test, and only to it."""
    from optboost._distributed import worker as _worker

    drawn: list = []
    generate = _worker.JobSecret.generate

    def recorded(cls):
        drawn.append(generate())
        return drawn[-1]

    monkeypatch.setattr(_worker.JobSecret, "generate", classmethod(recorded))
    return drawn


def _spellings(secret) -> list[str]:
    import base64

    value = secret.reveal()
    return [
        value.hex(),
        value.hex().upper(),
        repr(value),
        str(value),
        base64.b64encode(value).decode(),
        str(int.from_bytes(value, "little")),
        str(int.from_bytes(value, "big")),
        value[:8].hex(),
    ]


def test_the_job_secret_is_in_no_task_key_log_or_text(client, pieces, monkeypatch):
    drawn = _recording_secrets(monkeypatch)
    odask.boost("y ~ x1 + x2", frame_on(client, pieces, "two"), client=client, n_iter=3,
                validation_fraction=None, timeout=30)
    assert len(drawn) == 1
    secret = drawn[0]
    keys = client.run_on_scheduler(
        lambda dask_scheduler: [str(entry[0]) for entry in dask_scheduler.transition_log]
    )
    training = [key for key in keys if "optboost-train" in key]
    assert len(training) >= 2, keys[-20:]
    stored = "\n".join(
        keys
        + [str(entry) for entry in client.get_scheduler_logs()]
        + [str(entry) for logs in client.get_worker_logs().values() for entry in logs]
    )
    for spelling in _spellings(secret):
        assert spelling not in stored
    arguments = (0, 2, "127.0.0.1:1", secret, 30.0)
    for text in (repr(secret), str(secret), repr(arguments), str(arguments)):
        assert "hidden" in text and not any(s in text for s in _spellings(secret))


def _hold(client, worker: str, name: str):
    """Occupies the only thread of `worker` until the Event `name` is set; returns the holding
    task once it runs, so that every task sent to `worker` later waits behind it."""
    from distributed import Event

    def hold(name):
        Event(f"{name}-running").set()
        Event(name).wait(timeout=50)

    future = client.submit(hold, name, workers=[worker], allow_other_workers=False, pure=False)
    assert Event(f"{name}-running", client=client).wait(timeout=20)
    return future


def _flood(address: str, idle: int, slow: int, stop: threading.Event, ready: threading.Event,
           held: list) -> None:
    """Opens `idle` silent connections and `slow` ones that send a hello's first bytes one per
    0.5 s (slow loris) to the root at `address` as soon as it listens; sets `ready` when all are
    open and drips until `stop`."""
    import socket

    host, port = address.rsplit(":", 1)
    host = host.strip("[]")

    def connect():
        deadline = time.monotonic() + 20
        while True:
            try:
                return socket.create_connection((host, int(port)), timeout=5)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    held.extend(connect() for _ in range(idle))
    dripping = [connect() for _ in range(slow)]
    held.extend(dripping)
    ready.set()
    hello_start = b"OPTBCOLL" + (2).to_bytes(4, "little") + bytes(80)
    sent = 0
    while not stop.is_set():
        for sock in dripping:
            try:
                sock.send(hello_start[sent % len(hello_start):][:1])
            except OSError:  # the root cut it off, as it should
                pass
        sent += 1
        stop.wait(0.5)


def test_a_flood_at_the_root_before_the_workers_join_changes_no_model(client, pieces,
                                                                      monkeypatch):
    from optboost.dask import _ranks

    settings = dict(n_iter=6, validation_fraction=None, seed=5, timeout=30)
    formula = "y ~ x1 + x2 + shop"
    plain = odask.boost(formula, frame_on(client, pieces, "two"), client=client, **settings)
    stop, ready, held, seen = threading.Event(), threading.Event(), [], {}
    root_address = _ranks._root_address

    def address_with_a_flood(client_, root_worker):
        # Rank 1's worker is kept busy until 500 idle and 100 slow connections are open at the
        # root: they all come before its join.
        address = root_address(client_, root_worker)
        other = next(w for w in client.nthreads() if w != root_worker)
        seen["hold"] = _hold(client, other, "optboost-test-flood")
        flooder = threading.Thread(target=_flood, args=(address, 500, 100, stop, ready, held),
                                   daemon=True)
        flooder.start()
        seen["flooder"] = flooder

        def release():
            from distributed import Event

            if ready.wait(timeout=30):
                Event("optboost-test-flood", client=client).set()

        threading.Thread(target=release, daemon=True).start()
        return address

    monkeypatch.setattr(_ranks, "_root_address", address_with_a_flood)
    try:
        flooded = odask.boost(formula, frame_on(client, pieces, "two"), client=client,
                              **settings)
    finally:
        stop.set()
        if "flooder" in seen:
            seen["flooder"].join(timeout=10)
        for sock in held:
            sock.close()
    assert ready.is_set() and len(held) == 600
    assert seen["hold"].status == "finished"
    data = whole(pieces)
    np.testing.assert_array_equal(flooded.predict(data), plain.predict(data))
    assert flooded.n_trees == plain.n_trees


def test_an_in_memory_validation_frame_and_the_client_given_to_the_estimator(client, pieces):
    train, valid = pieces, piece(200, 9)
    settings = dict(n_iter=12, loss="squared", validation_fraction=None)
    local = optboost.boost("y ~ x1 + x2 + shop", whole(train), valid=valid, **settings)
    for frame in (valid, __import__("polars").from_pandas(valid)):
        model = odask.boost("y ~ x1 + x2 + shop", frame_on(client, train, "two"), client=client,
                            valid=frame, timeout=30, **settings)
        np.testing.assert_allclose(model.history["valid_loss"].to_numpy(),
                                   local.history["valid_loss"].to_numpy(), rtol=RTOL)
    data = whole(pieces)
    ddf = dd.from_pandas(data, npartitions=2).persist()
    classifier = odask.DaskBoostClassifier(client=client, n_iter=5, validation_fraction=None)
    assert classifier.get_params()["client"] is client
    classifier.fit(ddf[["x1", "x2"]], ddf["cls"])
    assert isinstance(classifier.model_, optboost.Model)
    assert sorted(classifier.classes_) == ["high", "low", "mid"]
    with pytest.raises(ParameterError, match="cv.folds"):
        odask.boost("y ~ x1", ddf, client=client, **{"cv.folds": 3})
