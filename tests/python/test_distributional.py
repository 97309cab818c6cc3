"""Distributional boosting (#42): loss="normal" and the other families predict a distribution
(type="distribution", "response" = the mean, "quantile", "interval"), saved and loaded bit for
bit, with SHAP per parameter, scikit-learn's predict_dist, the metrics nll and crps through
valid= and cv, and conformal intervals from normalised residuals."""

import numpy as np
import polars as pl
import pytest
from scipy import stats

import optboost
from optboost.errors import ParameterError
from optboost.sklearn import BoostRegressor


def _frame(n, seed, kind="real"):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=n)
    z = rng.uniform(0, 1, size=n)
    location, sd = np.sin(2 * np.pi * x), 0.1 + z
    e = rng.normal(size=n)
    if kind == "positive":
        y = np.exp(location + sd * e)
    elif kind == "counts":
        y = rng.negative_binomial(2.0, 2.0 / (2.0 + np.exp(1 + location))).astype(float)
    else:
        y = location + sd * e
    return pl.DataFrame({"x": x, "z": z, "y": y}), sd


@pytest.mark.timeout(120)
def test_normal_predicts_mean_distribution_quantiles_and_intervals():
    (train, _), (test, true_sd) = _frame(1500, 0), _frame(500, 1)
    model = optboost.boost("y ~ x + z", train, loss="normal", n_iter=150)
    dist = model.predict(test, type="distribution")
    assert dist.columns == ["mean", "sd"] and dist.height == test.height
    assert np.corrcoef(dist["sd"].to_numpy(), true_sd)[0, 1] > 0.8
    np.testing.assert_array_equal(model.predict(test), dist["mean"].to_numpy())
    q = model.predict(test, type="quantile", quantiles=[0.05, 0.5, 0.95])
    assert q.columns == ["q0.05", "q0.5", "q0.95"]
    mean, sd = dist["mean"].to_numpy(), dist["sd"].to_numpy()
    np.testing.assert_allclose(q["q0.05"].to_numpy(), stats.norm.ppf(0.05, mean, sd), rtol=1e-12)
    interval = model.predict(test, type="interval", level=0.9)
    np.testing.assert_allclose(interval["lower"].to_numpy(), q["q0.05"].to_numpy(), rtol=1e-12)
    y = test["y"].to_numpy()
    covered = np.mean((interval["lower"].to_numpy() <= y) & (y <= interval["upper"].to_numpy()))
    assert 0.82 < covered < 0.97, covered
    # SHAP per parameter: each output's block sums to its link-scale score.
    contrib = model.predict(test, type="contrib")
    assert "mean/bias" in contrib.columns and "sd/bias" in contrib.columns
    link = model.predict(test, type="link")
    for k, name in enumerate(["mean", "sd"]):
        block = contrib.select([c for c in contrib.columns if c.startswith(f"{name}/")])
        np.testing.assert_allclose(block.to_numpy().sum(axis=1), link[:, k], atol=1e-9)
    with pytest.raises(ParameterError, match="quantiles="):
        model.predict(test, type="quantile")
    with pytest.raises(ParameterError, match=r"\(0, 1\)"):
        model.predict(test, type="quantile", quantiles=[1.5])


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "loss, kind, columns, scipy_mean",
    [
        ("lognormal", "positive", ["meanlog", "sdlog"], lambda d: stats.lognorm.mean(d["sdlog"], scale=np.exp(d["meanlog"]))),
        ("gamma_dist", "positive", ["a", "scale"], lambda d: stats.gamma.mean(d["a"], scale=d["scale"])),
        ("negative_binomial", "counts", ["n", "p"], lambda d: stats.nbinom.mean(d["n"], d["p"])),
        ("student_t(4)", "real", ["df", "loc", "scale"], lambda d: stats.t.mean(d["df"], d["loc"], d["scale"])),
    ],
)
def test_every_family_predicts_its_scipy_distribution_and_saves_bit_for_bit(
    tmp_path, loss, kind, columns, scipy_mean
):
    (train, _), (test, _) = _frame(600, 2, kind), _frame(200, 3, kind)
    model = optboost.boost("y ~ x + z", train, loss=loss, n_iter=40)
    dist = model.predict(test, type="distribution")
    assert dist.columns == columns
    values = {c: dist[c].to_numpy() for c in columns}
    np.testing.assert_allclose(model.predict(test), scipy_mean(values), rtol=1e-9)
    median = model.predict(test, type="quantile", quantiles=0.5)["q0.5"].to_numpy()
    assert np.all(np.isfinite(median))
    path = tmp_path / "m.json"
    model.save(path)
    loaded = optboost.load(path)
    assert loaded.predict(test, type="distribution").equals(dist)


@pytest.mark.timeout(120)
def test_nll_and_crps_for_valid_early_stopping_and_cv():
    (train, _), (valid, _) = _frame(800, 4), _frame(300, 5)
    model = optboost.boost(
        "y ~ x + z", train, loss="normal", n_iter=500, valid=valid, metrics=["nll", "crps"],
        early_stopping_rounds=10, learning_rate=0.3,
    )
    assert model.n_iter < 500
    history = model.history
    assert "valid_nll" in history.columns and "valid_crps" in history.columns
    np.testing.assert_allclose(history["valid_nll"].to_numpy(), history["valid_loss"].to_numpy(), rtol=1e-9)
    result = optboost.cv("y ~ x + z", train, folds=3, loss="normal", n_iter=20, metrics=["crps"])
    assert result is not None
    with pytest.raises(Exception, match="closed form"):
        optboost.boost("y ~ x + z", _frame(100, 6, "positive")[0], loss="gamma_dist", n_iter=2, metrics=["crps"])


@pytest.mark.timeout(120)
def test_sklearn_predict_dist_and_conformal_normalised_intervals():
    (train, _), (calib, _), (test, _) = _frame(800, 7), _frame(400, 8), _frame(400, 9)
    X, y = train.select("x", "z").to_numpy(), train["y"].to_numpy()
    reg = BoostRegressor(loss="normal", n_iter=60).fit(X, y)
    dist = reg.predict_dist(test.select("x", "z").to_numpy())
    assert dist.columns == ["mean", "sd"]
    np.testing.assert_array_equal(reg.predict(test.select("x", "z").to_numpy()), dist["mean"].to_numpy())
    with pytest.raises(ParameterError, match="distributional"):
        BoostRegressor(n_iter=2).fit(X, y).predict_dist(X)

    model = optboost.boost("y ~ x + z", train, loss="normal", n_iter=60)
    cm = model.conformalize(calib)
    assert cm.conformal.score == "normalized"
    interval = cm.predict(test, type="interval", level=0.9)
    dist = model.predict(test, type="distribution")
    width = (interval["upper"] - interval["lower"]).to_numpy()
    # μ ± q̂σ: widths proportional to the predicted sd, centred on the mean.
    ratio = width / dist["sd"].to_numpy()
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
    np.testing.assert_allclose(
        (interval["upper"] + interval["lower"]).to_numpy() / 2, dist["mean"].to_numpy(), atol=1e-9
    )
    y_test = test["y"].to_numpy()
    covered = np.mean((interval["lower"].to_numpy() <= y_test) & (y_test <= interval["upper"].to_numpy()))
    assert covered > 0.85, covered
