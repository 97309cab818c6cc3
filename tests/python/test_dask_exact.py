"""optboost.dask equals one process on ordinary data: continuous features with more distinct
values than bins (the binning sample drawn by global row index and gathered exactly), the
held-out tenth of the momentum methods (drawn over all rows in data order, stratified by class),
the subsampled and GOSS rows (keyed by global row index, selected over the workers), on 1, 2
and 3 workers holding unequal partitions."""

from __future__ import annotations


import numpy as np
import pytest

pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")

from distributed import Client, LocalCluster  # noqa: E402

import optboost  # noqa: E402
import optboost.dask as odask  # noqa: E402
from optboost.holdout import GlobalHoldout, held_rows  # noqa: E402

pytestmark = pytest.mark.timeout(240)

RTOL = 1e-9
# Unequal partitions; with 2 or 3 workers each rank holds more distinct values than the 4,096
# runs a thinned summary kept.
SIZES = (9_000, 17_000, 6_000, 18_000)
# Partition i on worker PLACES[i] % (number of workers used): rank 0 holds partitions 0 and 3.
PLACES = (0, 1, 2, 0)
SCATTERED: list = []


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        yield client
        SCATTERED.clear()


def continuous(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = x[:, 0] + np.sin(3 * x[:, 1]) + 0.5 * x[:, 1] * x[:, 2] + rng.normal(scale=0.3, size=n)
    labels = np.where(y > 0.5, "hi", np.where(y < -0.5, "lo", "mid"))
    return pd.DataFrame(x, columns=["a", "b", "c"]).assign(y=y, cls=labels)


def split(frame: pd.DataFrame, sizes) -> list[pd.DataFrame]:
    ends = np.cumsum(sizes)
    return [frame.iloc[end - n : end].reset_index(drop=True) for n, end in zip(sizes, ends)]


def on_workers(client, pieces, n_workers: int):
    workers = sorted(client.nthreads())
    futures = [
        client.scatter(p, workers=[workers[PLACES[i] % n_workers]], hash=False)
        for i, p in enumerate(pieces)
    ]
    SCATTERED.extend(futures)
    return dd.from_delayed(futures, meta=pieces[0].iloc[:0], verify_meta=False)


def assert_equal_to_one_process(client, frame, sizes, formula, settings):
    local = optboost.boost(formula, frame, **settings)
    for n_workers in (1, 2, 3):
        data = on_workers(client, split(frame, sizes), n_workers)
        model = odask.boost(formula, data, client=client, timeout=60, **settings)
        assert model.n_trees == local.n_trees, (n_workers, settings)
        np.testing.assert_allclose(
            model.predict(frame), local.predict(frame), rtol=RTOL, atol=0,
            err_msg=f"{n_workers} workers, {settings}",
        )
        if "valid_loss" in local.history.columns:
            np.testing.assert_allclose(
                model.history["valid_loss"].to_numpy(), local.history["valid_loss"].to_numpy(),
                rtol=RTOL,
            )


METHODS = ["gbm", "rgbm", "agbm", "agbmr", "vagbm", "proximal", "residual_proximal",
           "accelerated_proximal", "residual_gbm", "accelerated_gbm", "repeated_gbm"]


@pytest.mark.filterwarnings("ignore::UserWarning")  # the momentum safeguard's notes
@pytest.mark.parametrize("method", METHODS)
def test_every_method_with_its_defaults_equals_one_process(client, method):
    # Defaults: the momentum methods hold out a tenth of the rows.
    frame = continuous(sum(SIZES))
    assert_equal_to_one_process(client, frame, SIZES, "y ~ a + b + c",
                                dict(method=method, n_iter=8))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("method", ["gbm", "agbm"])
def test_classes_and_their_stratified_held_out_rows_equal_one_process(client, method):
    frame = continuous(sum(SIZES), seed=1)
    assert_equal_to_one_process(client, frame, SIZES, "cls ~ a + b + c",
                                dict(method=method, loss="softmax", n_iter=6, seed=4))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "settings",
    [dict(subsample=0.6), dict(sample_strategy="goss"),
     dict(method="agbm", subsample=0.5, colsample_bytree=0.7)],
)
def test_subsampled_and_goss_rows_equal_one_process(client, settings):
    frame = continuous(sum(SIZES), seed=2)
    assert_equal_to_one_process(client, frame, SIZES, "y ~ a + b + c", dict(settings, n_iter=8))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("settings", [dict(validation_fraction=None), dict(method="agbm")])
def test_adult_equals_one_process(client, settings, adult):
    frame = adult.to_pandas()
    sizes = (7_000, 12_000, 3_000, len(frame) - 22_000)
    assert_equal_to_one_process(client, frame, sizes, "y ~ .",
                                dict(settings, loss="logistic", n_iter=10))


@pytest.mark.parametrize("stratify", [False, True])
def test_the_global_holdout_is_held_rows_of_the_concatenated_partitions(stratify):
    rng = np.random.default_rng(7)
    sizes = (0, 13, 250, 1, 77)
    y = rng.integers(0, 3, sum(sizes)).astype(np.float64)
    y[y == 1] = 2  # a class code absent from the data draws nothing, as np.unique skips it
    starts = np.cumsum(sizes) - sizes
    parts = [y[s : s + n] for s, n in zip(starts, sizes)]
    counts = (
        [[int((p == c).sum()) for c in range(3)] for p in parts]
        if stratify
        else [[len(p)] for p in parts]
    )
    holdout = GlobalHoldout(counts, 0.2, 11, stratify)
    joined = np.concatenate([holdout.held(i, p, f"partition {i}") for i, p in enumerate(parts)])
    np.testing.assert_array_equal(joined, held_rows(y, 0.2, 11, stratify))
    assert sum(holdout.n_held(i) for i in range(len(parts))) == joined.sum()
