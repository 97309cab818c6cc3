"""The log-link losses poisson, gamma and tweedie(p): one stump matched against
LightGBM's objectives on real data (same split, its Newton leaves, its metric),
every method runs, targets are validated, and models round-trip."""

import numpy as np
import polars as pl
import pytest

import optboost
from optboost.metrics import LOSS_METRICS as METRICS, tweedie_deviance

# (optboost loss, LightGBM objective and parameters, variance power p)
PEERS = [
    ("poisson", {"objective": "poisson", "poisson_max_delta_step": 1e-300}, 1.0),
    ("tweedie(1.5)", {"objective": "tweedie", "tweedie_variance_power": 1.5}, 1.5),
    ("tweedie(1.2)", {"objective": "tweedie", "tweedie_variance_power": 1.2}, 1.2),
    ("gamma", {"objective": "gamma"}, 2.0),
]


def f_free_terms(y: np.ndarray, p: float) -> float:
    """Mean of the terms of optboost's loss (half the unit deviance) that
    LightGBM's metrics leave out."""
    if p == 1.0:
        y_ln_y = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
        return float(np.mean(y_ln_y - y))
    if p == 2.0:
        return float(np.mean(-1.0 - np.log(y)))
    return float(np.mean(y ** (2 - p) / ((2 - p) * (1 - p))))


@pytest.mark.parametrize("loss,peer,p", PEERS, ids=[c[0] for c in PEERS])
def test_one_stump_matches_lightgbm(redwine, loss, peer, p):
    lgb = pytest.importorskip("lightgbm")
    x = redwine.drop("y").to_numpy()
    y = redwine["y"].to_numpy().astype(float)
    metric = peer["objective"]
    params = {
        **peer,
        "num_leaves": 2,
        "learning_rate": 1.0,
        "min_data_in_leaf": 1,
        "min_sum_hessian_in_leaf": 0.0,
        "lambda_l2": 0.0,
        "boost_from_average": True,
        "metric": metric,
        "verbose": -1,
    }
    data = lgb.Dataset(x, y)
    evals: dict = {}
    peer_model = lgb.train(
        params,
        data,
        1,
        valid_sets=[data],
        valid_names=["train"],
        callbacks=[lgb.record_evaluation(evals)],
    )
    peer_link = peer_model.predict(x, raw_score=True)
    common = dict(method="gbm", learning_rate=1.0, n_iter=1, max_depth=1, min_samples_leaf=1)
    # LightGBM's leaves are Newton steps −ΣG/ΣH from the log of the mean target: so are
    # optboost's Newton trees without the leaf ridge.
    newton = optboost.boost("y ~ .", redwine, loss=loss, step="newton", l2_leaf=0, **common)
    link = newton.predict(redwine, type="link")
    assert len(np.unique(peer_link)) == 2, "LightGBM found no split"
    np.testing.assert_array_equal(link > link.mean(), peer_link > peer_link.mean())
    # LightGBM computes gradients in float32: its leaves agree to that precision.
    np.testing.assert_allclose(link, peer_link, rtol=0, atol=1e-6)
    # LightGBM's metric is our loss without the terms free of f (compared on the metric's
    # scale: our loss is a small difference of the two).
    ours = newton.history["train_loss"][-1]
    np.testing.assert_allclose(ours - f_free_terms(y, p), evals["train"][metric][0], rtol=1e-7)
    # The exact leaf line search on the same split does at least as well as LightGBM's Newton
    # leaves.
    exact = optboost.boost("y ~ .", redwine, loss=loss, leaf_newton_steps=0, **common)
    exact_link = exact.predict(redwine, type="link")
    np.testing.assert_array_equal(exact_link > exact_link.mean(), link > link.mean())
    assert exact.history["train_loss"][-1] <= ours + 1e-15


@pytest.mark.parametrize("loss", ["poisson", "gamma", "tweedie(1.5)"])
def test_every_method_fits_and_predicts_the_mean(concrete, loss):
    frame = concrete.head(400)
    # These losses have no global smoothness constant σ, so the methods' constant step
    # ρ = 1/σ has no default that fits every scale of y; ρ = 1/ℓ'' at the starting constant
    # (ℓ''(y, ln ȳ) averages ȳ^{2−p}) is the Newton scale there.
    y = frame["y"].to_numpy()
    p = {"poisson": 1.0, "gamma": 2.0}.get(loss, 1.5)
    rho = 1.0 / np.mean(y) ** (2 - p)
    for method in optboost.method_names():
        model = optboost.boost(
            "y ~ .", frame, loss=loss, method=method, n_iter=8, max_depth=2, rho=rho
        )
        history = model.history["train_loss"].to_numpy()
        assert np.all(np.isfinite(history)) and history[-1] < history[0], method
        link = model.predict(frame, type="link")
        np.testing.assert_allclose(model.predict(frame), np.exp(link), rtol=1e-15)


def test_deviance_metrics_are_twice_the_loss(concrete):
    y = concrete["y"].to_numpy()
    for loss, metric in [
        ("poisson", METRICS["poisson_deviance"]),
        ("gamma", METRICS["gamma_deviance"]),
        ("tweedie(1.5)", tweedie_deviance(1.5)),
    ]:
        model = optboost.boost("y ~ .", concrete, loss=loss, n_iter=5)
        deviance = metric(y, model.predict(concrete))
        np.testing.assert_allclose(deviance, 2 * model.history["train_loss"][-1], rtol=1e-10)
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    mu = np.full(len(y), y.mean() * 1.1)
    y0 = np.where(np.arange(len(y)) % 5 == 0, 0.0, y)
    np.testing.assert_allclose(
        METRICS["poisson_deviance"](y0, mu), sklearn_metrics.mean_poisson_deviance(y0, mu)
    )
    np.testing.assert_allclose(
        METRICS["gamma_deviance"](y, mu), sklearn_metrics.mean_gamma_deviance(y, mu)
    )
    np.testing.assert_allclose(
        tweedie_deviance(1.3)(y0, mu), sklearn_metrics.mean_tweedie_deviance(y0, mu, power=1.3)
    )


def test_targets_outside_the_domain_are_rejected():
    frame = pl.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": [1.0, -2.0, 0.0, 4.0]})
    with pytest.raises(optboost.InvalidValueError, match=r"row 1 is -2 \(the poisson loss needs targets ≥ 0\)"):
        optboost.boost("y ~ x", frame, loss="poisson", n_iter=2)
    with pytest.raises(optboost.InvalidValueError, match=r"row 1 is -2 .*tweedie"):
        optboost.boost("y ~ x", frame, loss=optboost.Tweedie(1.4), n_iter=2)
    positive = frame.with_columns(pl.col("y").abs())
    with pytest.raises(optboost.InvalidValueError, match=r"row 2 is 0 \(the gamma loss needs targets > 0\)"):
        optboost.boost("y ~ x", positive, loss="gamma", n_iter=2)
    with pytest.raises(optboost.OptboostError, match=r"\(1, 2\)"):
        optboost.boost("y ~ x", positive, loss="tweedie(p=2.5)", n_iter=2)
    assert frame["y"].to_list() == [1.0, -2.0, 0.0, 4.0]


def test_names_round_trip_and_sklearn(tmp_path, redwine):
    assert str(optboost.Tweedie(1.3)) == "tweedie(1.3)"
    model = optboost.boost("y ~ .", redwine, loss="tweedie(p=1.3)", n_iter=5)
    assert model.loss == "tweedie(1.3)"
    path = tmp_path / "tweedie.json"
    model.save(path)
    loaded = optboost.load(path)
    assert loaded.loss == "tweedie(1.3)"
    np.testing.assert_array_equal(loaded.predict(redwine), model.predict(redwine))
    # R's gbm spelling of the Poisson distribution.
    assert optboost.boost("y ~ .", redwine, loss="poisson", n_iter=3).loss == "poisson"
    from optboost.sklearn import BoostRegressor

    x = redwine.drop("y").to_numpy()
    y = redwine["y"].to_numpy()
    regressor = BoostRegressor(loss="poisson", n_iter=5).fit(x, y)
    assert np.all(regressor.predict(x) > 0)
    with pytest.raises(optboost.InvalidValueError, match="targets ≥ 0"):
        BoostRegressor(loss="poisson", n_iter=5).fit(x, -y)
