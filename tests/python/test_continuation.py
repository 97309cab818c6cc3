"""Training further from a saved model (``load(path).update(n, data=)`` and
``boost(..., init_model=)``) and the randomisation parameters (``random_strength``,
``bootstrap="bayesian"``, ``bagging_temperature``) through the Python front end."""

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import NotTrainableError, OptboostError


def frame(n=600, seed=0, binary=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = np.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=n)
    df = pl.DataFrame({f"x{j}": x[:, j] for j in range(4)})
    df = df.with_columns(k=pl.Series(rng.choice(["a", "b", "c"], size=n)))
    return df.with_columns(y=pl.Series((y > 0).astype(np.int64) if binary else y))


CASES = [
    ({}, False),
    ({"loss": "logistic"}, True),
    ({"random_strength": 1.0, "bootstrap": "bayesian", "subsample": 0.8}, False),
    ({"method": "rgbm", "selection": "random", "t": 2}, False),
]


def bits(model, df):
    return np.asarray(model.predict(df), dtype=float).view(np.int64)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("settings,binary", CASES)
def test_load_then_update_with_data_is_the_longer_fit_bit_for_bit(tmp_path, settings, binary):
    df = frame(binary=binary)
    longer = optboost.boost("y ~ .", df, n_iter=14, **settings)
    short = optboost.boost("y ~ .", df, n_iter=9, **settings)
    path = tmp_path / "short.json"
    short.save(path)
    loaded = optboost.load(path)
    assert loaded.update(5, data=df) is loaded
    assert loaded.n_trees == longer.n_trees
    assert np.array_equal(bits(loaded, df), bits(longer, df))
    assert loaded.n_iter == 14
    assert loaded.history["iteration"].to_list() == list(range(1, 15))
    # init_model= from the path, and from the model object: the same.
    for start in (path, optboost.load(path)):
        again = optboost.boost("y ~ .", df, n_iter=5, init_model=start, **settings)
        assert np.array_equal(bits(again, df), bits(longer, df))


def test_a_loaded_model_without_data_says_to_pass_it(tmp_path):
    df = frame()
    path = tmp_path / "m.json"
    optboost.boost("y ~ .", df, n_iter=3).save(path)
    with pytest.raises(NotTrainableError, match="data="):
        optboost.load(path).update(2)


@pytest.mark.parametrize("method", ["agbm", "accelerated_gbm", "residual_proximal"])
def test_methods_with_momentum_or_carried_residuals_are_refused_by_name(tmp_path, method):
    df = frame(n=200)
    path = tmp_path / "m.json"
    optboost.boost("y ~ .", df, n_iter=3, method=method, validation_fraction=None).save(path)
    with pytest.raises(OptboostError, match=method):
        optboost.load(path).update(2, data=df)


def test_init_model_needs_the_models_formula_and_loss(tmp_path):
    df = frame()
    model = optboost.boost("y ~ x0 + x1", df, n_iter=3)
    with pytest.raises(OptboostError, match="formula"):
        optboost.boost("y ~ x0", df, n_iter=2, init_model=model)
    with pytest.raises(OptboostError, match="loss"):
        optboost.boost("y ~ x0 + x1", df, n_iter=2, init_model=model, loss="huber")


def test_randomisation_parameters_are_saved_and_loaded(tmp_path):
    df = frame()
    settings = {"random_strength": 0.5, "bootstrap": "bayesian", "bagging_temperature": 0.7}
    model = optboost.boost("y ~ .", df, n_iter=8, **settings)
    path = tmp_path / "m.json"
    model.save(path)
    loaded = optboost.load(path)
    assert loaded.params["random_strength"] == "0.5"
    assert loaded.params["bootstrap"] == "bayesian"
    assert loaded.params["bagging_temperature"] == "0.7"
    assert np.array_equal(bits(loaded, df), bits(model, df))
    plain = optboost.boost("y ~ .", df, n_iter=8)
    assert not np.array_equal(bits(model, df), bits(plain, df))


def test_randomisation_is_the_same_on_any_thread_count():
    df = frame(n=3000)
    settings = {"random_strength": 1.0, "bootstrap": "bayesian", "n_iter": 10}
    one = optboost.boost("y ~ .", df, n_threads=1, **settings)
    two = optboost.boost("y ~ .", df, n_threads=2, **settings)
    assert np.array_equal(bits(one, df), bits(two, df))


def test_bad_randomisation_values_name_the_parameter():
    df = frame(n=100)
    for name, value in [("random_strength", -1.0), ("bagging_temperature", 20.0),
                        ("bootstrap", "poisson")]:
        with pytest.raises(OptboostError, match=name):
            optboost.boost("y ~ .", df, n_iter=2, **{name: value})
