"""The scikit-learn estimators: the full estimator check suite, and frames
with categorical columns."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import polars as pl
import pytest

import optboost
from optboost.sklearn import BoostClassifier, BoostRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks
from support import available, regression_frame


def missing_losses(estimator) -> list[str]:
    # Classification needs the core's logistic (binary) and softmax (multiclass)
    # losses; checks of a classifier skip while this build lacks them.
    if isinstance(estimator, BoostClassifier):
        return [loss for loss in ("logistic", "softmax") if not available("gbm", loss)]
    return []


def expected_failures(estimator) -> dict[str, str]:
    if isinstance(estimator, BoostClassifier):
        return {
            "check_sample_weight_equivalence_on_dense_data": (
                "15 rows and 30 features: many splits tie exactly in gain, and weighted, "
                "repeated and shuffled rows sum the gradients in different orders, so rounding "
                "picks different but equally good splits (the training losses agree to 1e-16)"
            )
        }
    return {
        "check_sample_weight_equivalence_on_dense_data": (
            "min_samples_leaf (default 10) counts rows, as LightGBM's min_data_in_leaf does: a "
            "row of weight 2 is one row, its repetition two, so the smallest leaves differ"
        )
    }


@parametrize_with_checks(
    [BoostRegressor(n_iter=30), BoostClassifier(n_iter=30)],
    expected_failed_checks=expected_failures,
)
def test_sklearn_estimator_checks(estimator, check):
    missing = missing_losses(estimator)
    if missing:
        pytest.skip(f"this build of the core has no {' or '.join(missing)} loss yet")
    check(estimator)


def test_regressor_on_numpy_pandas_and_polars_agree():
    frame = regression_frame().drop("s")
    X, y = frame.select("a", "b"), frame["y"]
    from_numpy = BoostRegressor(n_iter=20).fit(X.to_numpy(), y.to_numpy()).predict(X.to_numpy())
    from_pandas = BoostRegressor(n_iter=20).fit(X.to_pandas(), y.to_pandas()).predict(X.to_pandas())
    from_polars = BoostRegressor(n_iter=20).fit(X, y).predict(X)
    np.testing.assert_array_equal(from_numpy, from_pandas)
    np.testing.assert_array_equal(from_numpy, from_polars)


def test_regressor_with_string_columns_from_polars_and_pandas():
    frame = regression_frame()
    X, y = frame.select("a", "b", "s"), frame["y"].to_numpy()
    model = BoostRegressor(n_iter=40, params={"min_samples_leaf": 2}).fit(X, y)
    assert list(model.feature_names_in_) == ["a", "b", "s"] and model.n_features_in_ == 3
    predictions = model.predict(X)
    assert model.score(X, y) > 0.9
    # columns are found by name
    np.testing.assert_array_equal(model.predict(X.select("s", "a", "b")), predictions)
    pandas_model = BoostRegressor(n_iter=40, params={"min_samples_leaf": 2}).fit(X.to_pandas(), y)
    np.testing.assert_array_equal(pandas_model.predict(X.to_pandas()), predictions)
    with pytest.raises(ValueError, match="frame"):
        model.predict(X.select("a", "b").to_numpy())
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), predictions)
    assert model.history_.height == 40
    assert model.feature_importances_.sum() == pytest.approx(1.0)


def test_regressor_passes_method_and_loss_through():
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = X[:, 0] * 2
    model = BoostRegressor(method="gbm", loss="squared", n_iter=5, max_depth=2).fit(X, y)
    assert model.core_model_.method == "gbm" and model.n_iter_ == 5
    with pytest.raises(ValueError, match="own parameters"):
        BoostRegressor(params={"max_depth": 3}).fit(X, y)
    with pytest.raises(ValueError, match="unknown parameter"):
        BoostRegressor(params={"depth": 3}).fit(X, y)


def test_classifier_with_string_labels_and_categorical_column():
    if not available("gbm", "logistic"):
        pytest.skip("this build has no logistic loss yet")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "c": pd.Categorical(rng.choice(["u", "v"], 300))})
    y = np.where((X["a"] > 0) ^ (X["c"] == "u"), "spam", "ham")
    model = BoostClassifier(n_iter=40).fit(X, y)
    assert list(model.classes_) == ["ham", "spam"]
    assert model.score(X, y) > 0.95
    probabilities = model.predict_proba(X)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), model.classes_[probabilities.argmax(axis=1)])


def test_frames_are_not_modified():
    frame = regression_frame()
    X = frame.select("a", "b", "s")
    before = X.clone()
    BoostRegressor(n_iter=3).fit(X, frame["y"])
    assert X.equals(before)
    pandas_X = X.to_pandas()
    pandas_before = pandas_X.copy()
    BoostRegressor(n_iter=3).fit(pandas_X, frame["y"].to_numpy())
    pd.testing.assert_frame_equal(pandas_X, pandas_before)
    assert isinstance(pl.from_pandas(pandas_X), pl.DataFrame)


def test_eval_set_and_early_stopping_match_the_formula_front_end():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + 0.5 * rng.normal(size=600)
    X_train, X_valid, y_train, y_valid = X[:450], X[450:], y[:450], y[450:]
    reg = BoostRegressor(n_iter=400, learning_rate=0.3, max_depth=3, early_stopping_rounds=5)
    reg.fit(X_train, y_train, eval_set=(X_valid, y_valid))
    assert reg.n_iter_ < 400
    assert reg.history_["valid_loss"].null_count() == 0
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(4)}).with_columns(y=pl.Series(y))
    model = optboost.boost(
        "y ~ x0 + x1 + x2 + x3", frame.head(450), valid=frame.tail(150), n_iter=400,
        learning_rate=0.3, max_depth=3, early_stopping_rounds=5,
    )
    np.testing.assert_array_equal(reg.predict(X_valid), model.predict(frame.tail(150)))


def test_validation_fraction_holds_out_stratified_rows():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + rng.normal(size=400) > 0, "yes", "no")
    clf = BoostClassifier(n_iter=300, early_stopping_rounds=5, validation_fraction=0.25)
    clf.fit(X, y)
    assert clf.n_iter_ < 300 and list(clf.classes_) == ["no", "yes"]
    with pytest.raises(optboost.ParameterError, match="needs validation data"):
        BoostClassifier(early_stopping_rounds=5).fit(X, y)
