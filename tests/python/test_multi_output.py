"""Multi-output regression: BoostRegressor with a 2-D y (the multi_squared loss)."""

import pickle

import numpy as np
import polars as pl
import pytest

from optboost.errors import OptboostError
from optboost.sklearn import BoostRegressor


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    Y = np.column_stack([np.sin(6 * X[:, 0]) + X[:, 1], 3 * X[:, 2] - X[:, 3]])
    return X, Y


def test_a_2d_y_fits_one_output_per_column_equal_to_separate_fits():
    X, Y = _data()
    model = BoostRegressor(n_iter=30).fit(X, Y)
    assert model.core_model_.loss == "multi_squared"
    assert model.core_model_.n_outputs == 2
    pred = model.predict(X)
    assert pred.shape == (300, 2)
    # The loss is separable and the trees are per output: two squared-loss fits.
    separate = np.column_stack(
        [BoostRegressor(n_iter=30).fit(X, Y[:, k]).predict(X) for k in range(2)]
    )
    np.testing.assert_allclose(pred, separate, rtol=0, atol=1e-12)
    # scikit-learn's R², averaged over the outputs
    from sklearn.metrics import r2_score

    assert model.score(X, Y) == pytest.approx(r2_score(Y, pred))
    assert model.score(X, Y) > 0.9


def test_a_1d_y_keeps_1d_predictions():
    X, Y = _data()
    assert BoostRegressor(n_iter=5).fit(X, Y[:, 0]).predict(X).shape == (300,)
    assert BoostRegressor(n_iter=5).fit(X, Y[:, :1]).predict(X).shape == (300,)


def test_frames_validation_and_pickling_keep_the_outputs():
    X, Y = _data()
    frame = pl.DataFrame(X, schema=["a", "b", "c", "d"])
    model = BoostRegressor(n_iter=10, validation_fraction=0.2).fit(frame, Y)
    pred = model.predict(frame)
    assert pred.shape == (300, 2)
    assert model.history_["valid_loss"].is_not_null().all()
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(frame), pred)


def test_eval_set_with_another_number_of_columns_is_refused():
    X, Y = _data()
    with pytest.raises(OptboostError, match="same number of columns"):
        BoostRegressor(n_iter=5).fit(X, Y, eval_set=(X, Y[:, 0]))


def test_a_2d_y_needs_the_squared_loss():
    X, Y = _data()
    with pytest.raises(OptboostError, match=r"2-D y of shape \(300, 2\) needs the squared loss"):
        BoostRegressor(loss="absolute").fit(X, Y)
    with pytest.raises(OptboostError, match="needs a regression loss"):
        BoostRegressor(loss="softmax").fit(X, Y)


def test_sample_weights_of_zero_drop_rows_of_a_2d_y():
    X, Y = _data()
    w = np.ones(300)
    w[:50] = 0.0
    weighted = BoostRegressor(n_iter=10).fit(X, Y, sample_weight=w).predict(X)
    dropped = BoostRegressor(n_iter=10).fit(X[50:], Y[50:]).predict(X)
    np.testing.assert_allclose(weighted, dropped, rtol=0, atol=1e-12)


# ------------------------------------------------------------------ formula: y1 + y2 ~ ...

import optboost  # noqa: E402


def _frame(n=300, seed=0):
    X, Y = _data(n, seed)
    return pl.DataFrame(
        {"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "x4": X[:, 3], "y1": Y[:, 0], "y2": Y[:, 1]}
    )


def test_a_formula_with_two_targets_equals_two_single_target_fits():
    df = _frame()
    model = optboost.boost("y1 + y2 ~ x1 + x2 + x3 + x4", df, n_iter=20)
    assert model.loss == "multi_squared"
    assert model.target_names == ["y1", "y2"]
    pred = model.predict(df)
    assert pred.shape == (300, 2)
    for k, name in enumerate(["y1", "y2"]):
        single = optboost.boost(f"{name} ~ x1 + x2 + x3 + x4", df, n_iter=20).predict(df)
        np.testing.assert_allclose(pred[:, k], single, rtol=0, atol=1e-12)
    assert model.predict(df, iteration=3).shape == (300, 2)
    # '.' leaves every target out of the features
    assert optboost.boost("y1 + y2 ~ .", df, n_iter=3).spec.feature_names == [
        "x1", "x2", "x3", "x4"
    ]


def test_a_two_target_model_saves_loads_and_explains_per_target(tmp_path):
    df = _frame()
    model = optboost.boost("y1 + y2 ~ x1 + x2 + x3 + x4", df, n_iter=10, valid=df.head(80))
    assert model.history["valid_loss"].is_not_null().all()
    path = tmp_path / "two.json"
    model.save(path)
    loaded = optboost.load(path)
    assert loaded.target_names == ["y1", "y2"]
    np.testing.assert_array_equal(loaded.predict(df), model.predict(df))
    contrib = model.predict(df, type="contrib")
    assert contrib.columns[:5] == ["y1/x1", "y1/x2", "y1/x3", "y1/x4", "y1/bias"]
    pred = model.predict(df)
    for k, name in enumerate(["y1", "y2"]):
        block = contrib.select(pl.selectors.starts_with(f"{name}/")).to_numpy().sum(axis=1)
        np.testing.assert_allclose(block, pred[:, k], rtol=0, atol=1e-9)


def test_two_targets_need_the_squared_loss_and_numeric_columns():
    df = _frame()
    with pytest.raises(OptboostError, match=r"2 targets \(y1, y2\) need the squared loss"):
        optboost.boost("y1 + y2 ~ x1", df, loss="absolute")
    with pytest.raises(OptboostError, match="several targets need the squared loss"):
        optboost.boost("y1 + y2 ~ x1", df, loss="logistic")
    with pytest.raises(OptboostError, match="target 'y2' is also a feature"):
        optboost.boost("y1 + y2 ~ x1 + y2", df)
    with pytest.raises(OptboostError, match="y3"):
        optboost.boost("y1 + y3 ~ x1", df)
