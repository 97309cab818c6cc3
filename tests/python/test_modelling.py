"""Modelling options through every front end: boost(), the scikit-learn
estimators and the CLI's --param."""

from __future__ import annotations

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.cli import main
from optboost.sklearn import BoostClassifier, BoostRegressor
from support import binary_frame, regression_frame


# ------------------------------------------------------------ subsampling


def test_subsampling_reaches_the_core_and_is_seeded():
    frame = regression_frame(2_000)
    fit = lambda **kw: optboost.boost(  # noqa: E731
        "y ~ a + b + s", frame, n_iter=30, progress=False, **kw
    ).predict(frame)
    full = fit()
    sampled = fit(subsample=0.5, colsample_bytree=0.7, colsample_bynode=0.5, seed=3)
    again = fit(subsample=0.5, colsample_bytree=0.7, colsample_bynode=0.5, seed=3, n_threads=1)
    other_seed = fit(subsample=0.5, colsample_bytree=0.7, colsample_bynode=0.5, seed=4)
    assert not np.array_equal(full, sampled)
    np.testing.assert_array_equal(sampled, again)
    assert not np.array_equal(sampled, other_seed)
    np.testing.assert_array_equal(fit(subsample=1.0), full)
    residual = frame["y"].to_numpy() - sampled
    assert residual.std() < 0.5 * frame["y"].std()


def test_subsample_out_of_range_is_a_parameter_error():
    with pytest.raises(optboost.ParameterError, match="subsample"):
        optboost.boost("y ~ a", regression_frame(), subsample=0.0, progress=False)
    with pytest.raises(optboost.ParameterError, match="subsample"):
        optboost.boost("y ~ a", regression_frame(), **{"bag.fraction": 0.5})


def test_sklearn_estimators_take_the_sampling_fractions():
    frame = regression_frame(1_000)
    X, y = frame.select("a", "b").to_numpy(), frame["y"].to_numpy()
    full = BoostRegressor(n_iter=20).fit(X, y).predict(X)
    model = BoostRegressor(n_iter=20, subsample=0.5, colsample_bynode=0.5).fit(X, y)
    assert not np.array_equal(model.predict(X), full)
    assert model.get_params()["subsample"] == 0.5
    with pytest.raises(optboost.ParameterError, match="subsample"):
        BoostRegressor(subsample=0.5, params={"subsample": 0.5}).fit(X, y)
    labels = binary_frame(600)
    clf = BoostClassifier(n_iter=20, colsample_bytree=0.5).fit(
        labels.select("a", "b").to_numpy(), labels["label"].to_numpy()
    )
    assert clf.score(labels.select("a", "b").to_numpy(), labels["label"].to_numpy()) > 0.8


def test_cli_param_subsample(tmp_path):
    data = tmp_path / "train.parquet"
    regression_frame().write_parquet(data)
    paths = {}
    for label, extra in [("full", []), ("sampled", ["--param", "subsample=0.5"])]:
        paths[label] = tmp_path / f"{label}.json"
        args = ["fit", str(data), "y ~ a + b", "--n-iter", "10", "-q", "-o", str(paths[label])]
        assert main(args + extra) == 0
    frame = regression_frame()
    full, sampled = (optboost.load(paths[k]).predict(frame) for k in ("full", "sampled"))
    assert not np.array_equal(full, sampled)
