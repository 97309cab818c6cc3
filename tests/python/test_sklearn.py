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
    # A sparse matrix fits the model of the same matrix dense, so both checks fail alike.
    if isinstance(estimator, BoostClassifier):
        reason = (
            "15 rows and 30 features: many splits tie exactly in gain, and weighted, "
            "repeated and shuffled rows sum the gradients in different orders, so rounding "
            "picks different but equally good splits (the training losses agree to 1e-16)"
        )
    else:
        reason = (
            "min_samples_leaf (default 10) counts rows, as LightGBM's min_data_in_leaf does: a "
            "row of weight 2 is one row, its repetition two, so the smallest leaves differ"
        )
    return {
        f"check_sample_weight_equivalence_on_{layout}_data": reason
        for layout in ("dense", "sparse")
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
    # scikit-learn's contract for every frame, categorical columns or not: the fit's names in
    # the fit's order (the columns are then read by name, as boost() reads them)
    with pytest.raises(ValueError, match="same order"):
        model.predict(X.select("s", "a", "b"))
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


def _matrix_data(n_rows=3_000):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(n_rows, 5))
    X[rng.random(n_rows) < 0.05, 2] = np.nan
    y = X[:, 0] + np.sin(X[:, 1]) + np.nan_to_num(X[:, 2]) * X[:, 3] + 0.1 * rng.normal(size=n_rows)
    return X, y


def test_c_and_fortran_order_matrices_give_identical_models():
    # A C-order matrix reaches the core in place and is binned by rows; a Fortran-order one is
    # read column by column. Same cut points, same bins: the same model, bit for bit.
    X, y = _matrix_data()
    X_c, X_f = np.ascontiguousarray(X), np.asfortranarray(X)
    settings = dict(n_iter=15, max_depth=4, subsample=0.8, validation_fraction=0.2)
    by_rows = BoostRegressor(**settings).fit(X_c, y)
    by_columns = BoostRegressor(**settings).fit(X_f, y)
    assert by_rows.core_model_.to_json() == by_columns.core_model_.to_json()
    predictions = by_columns.predict(X_f)
    np.testing.assert_array_equal(by_rows.predict(X_c), predictions)
    np.testing.assert_array_equal(by_rows.predict(X_f), predictions)
    # a strided view (every other row) is neither order: copied once, same result
    np.testing.assert_array_equal(by_rows.predict(X_c[::2]), predictions[::2])
    np.testing.assert_array_equal(by_rows.predict(X_c[:, :5]), predictions)
    # and integer or float32 matrices are converted to float64 first
    as_float32 = BoostRegressor(**settings).fit(X_c.astype(np.float32), y)
    expected = BoostRegressor(**settings).fit(X_c.astype(np.float32).astype(np.float64), y)
    assert as_float32.core_model_.to_json() == expected.core_model_.to_json()


def test_c_order_matrix_is_not_copied_to_columns():
    # The estimator hands the caller's C-order matrix itself to the core (no Fortran copy).
    X, y = _matrix_data(500)
    estimator = BoostRegressor(n_iter=2)
    columns, _ = estimator._fit_columns(X, y)
    assert len(columns) == 1 and np.shares_memory(columns[0].values, X)
    assert columns[0].names == [f"x{j}" for j in range(5)]


def test_estimator_and_boost_give_identical_models_on_the_same_columns():
    # One column pipeline: the estimator on a frame (numeric, missing and categorical columns)
    # trains the model boost("y ~ .", frame) trains, and a matrix the model of its x0, x1, ...
    X, y = _matrix_data()
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(5)}).with_columns(
        c=pl.Series(list(rng.choice(["p", "q", "r", None], len(y))), dtype=pl.String),
        k=pl.Series(rng.integers(0, 4, len(y))),
    )
    settings = dict(n_iter=12, max_depth=4, validation_fraction=None)
    formula_model = optboost.boost(
        "y ~ .", frame.with_columns(y=pl.Series(y)), n_iter=12, max_depth=4,
        validation_fraction=None,
    )
    for data in (frame, frame.to_pandas()):
        estimator = BoostRegressor(**settings).fit(data, y)
        assert estimator.core_model_.to_json() == formula_model._core.to_json()
        np.testing.assert_array_equal(estimator.predict(data), formula_model.predict(frame))
    numeric = frame.select(f"x{j}" for j in range(5)).with_columns(y=pl.Series(y))
    from_matrix = BoostRegressor(**settings).fit(X, y)
    assert from_matrix.core_model_.to_json() == optboost.boost(
        "y ~ .", numeric, n_iter=12, max_depth=4, validation_fraction=None
    )._core.to_json()


def test_frame_errors_come_from_the_shared_pipeline():
    X, y = _matrix_data(200)
    frame = pl.DataFrame({"a": X[:, 0], "when": pl.Series([None] * 200, dtype=pl.Date)})
    with pytest.raises(optboost.DataTypeError, match="'when' has dtype Date"):
        BoostRegressor(n_iter=2).fit(frame, y)
    model = BoostRegressor(n_iter=2).fit(frame.select("a"), y)
    with pytest.raises(ValueError, match="Feature names unseen at fit time"):
        model.predict(frame.select(b=pl.col("a")))
    with pytest.raises(optboost.DataError, match="one value per row"):
        BoostRegressor(n_iter=2).fit(frame.select("a"), y[:10])


def test_infinity_is_refused_with_its_position_and_nan_is_missing(monkeypatch):
    X, y = _matrix_data(1_000)
    model = BoostRegressor(n_iter=3).fit(X, y)  # NaN in column 2: missing values
    bad = X.copy()
    bad[700, 4] = -np.inf
    # blocks of 100 rows, so that the infinity is found in a later block than the first
    monkeypatch.setattr(optboost.sklearn, "_CHECK_BLOCK_VALUES", 500)
    with pytest.raises(optboost.DataError, match=r"infinity \(row 700, column 4\)"):
        BoostRegressor(n_iter=3).fit(bad, y)
    with pytest.raises(optboost.DataError, match=r"infinity \(row 700, column 4\)"):
        model.predict(bad)


def test_a_missing_column_of_a_frame_without_string_names_is_named():
    X, y = _matrix_data(300)
    model = BoostRegressor(n_iter=2).fit(pd.DataFrame(X), y)  # columns 0..4: no names kept
    with pytest.raises(optboost.DataError, match="'4'"):
        model.predict(pd.DataFrame(X, columns=[0, 1, 2, 3, 7]))


def _fit_core(columns, y, valid=None, roles=None, weights=None, offset=None, loss="squared"):
    """The model and the validation losses of a small fit on `columns`, validated on `valid` =
    (columns, y); weights and offset: (training, validation) pairs, or arrays for every row
    when `roles` deals the rows out."""
    from optboost import _core
    from optboost.params import param_pairs

    pairs = param_pairs(
        {"n_iter": 8, "max_depth": 4, "n_threads": 2, "min_category_count": 1, "loss": loss}
    )
    valid_args = (None, None) if valid is None else (valid[0], np.ascontiguousarray(valid[1]))
    both = (lambda pair: (None, None) if pair is None else pair) if roles is None else (
        lambda values: (values, None)
    )
    (weights, valid_weights), (offset, valid_offset) = both(weights), both(offset)
    booster = _core.Booster(
        pairs, columns, np.ascontiguousarray(y), weights, *valid_args, valid_weights, offset,
        valid_offset, row_roles=roles,
    )  # fmt: skip
    optboost.training.train(booster, 8, progress=False)
    return booster.model().to_json(), booster.history()["valid_loss"]


def _take_rows(columns: list, rows: np.ndarray) -> list:
    """The feature columns (or blocks) at `rows`, copied, in the order each had."""

    def take(values: np.ndarray) -> np.ndarray:
        order = "C" if values.ndim == 2 and not values.flags.f_contiguous else "F"
        return np.require(values[rows], requirements=order)

    return [c._replace(values=take(c.values)) for c in columns]


def test_rows_dealt_out_by_roles_give_the_model_and_losses_of_their_copies():
    # row_roles leave both sides of a split in place and take y, weights and offsets row by
    # row (several values a row for several outputs): the model and the validation losses are
    # those of copies of the rows, in every column layout.
    from optboost.formula import FeatureBlock, FeatureColumn
    from optboost.holdout import LEFT_OUT, TRAINS, VALIDATES

    X, y = _matrix_data(4_000)
    rng = np.random.default_rng(1)
    codes = rng.integers(-1, 3, len(y)).astype(np.int32)
    weights, offset = rng.uniform(0.5, 2.0, len(y)), rng.normal(0, 0.1, len(y))
    roles = rng.choice([TRAINS, VALIDATES, LEFT_OUT], len(y), p=[0.6, 0.3, 0.1]).astype(np.uint8)
    train, held = roles == TRAINS, roles == VALIDATES
    names = [f"x{j}" for j in range(5)]
    for columns in (
        [FeatureBlock(names, np.ascontiguousarray(X))],
        [FeatureBlock(names, np.asfortranarray(X))],
        [FeatureColumn(n, np.ascontiguousarray(X[:, j]), "numeric", 0) for j, n in enumerate(names)]
        + [FeatureColumn("c", codes, "categorical", 3)],
    ):
        copies = (_take_rows(columns, train), _take_rows(columns, held))
        model, losses = _fit_core(
            copies[0], y[train], (copies[1], y[held]),
            weights=(weights[train], weights[held]), offset=(offset[train], offset[held]),
        )  # fmt: skip
        assert all(np.isfinite(losses))
        assert _fit_core(columns, y, roles=roles, weights=weights, offset=offset) == (
            model, losses,
        )  # fmt: skip
        two = np.column_stack([y, 1.0 - y])
        expected = _fit_core(copies[0], two[train].ravel(), (copies[1], two[held].ravel()),
                             loss="multi_squared")  # fmt: skip
        assert _fit_core(columns, two.ravel(), roles=roles, loss="multi_squared") == expected
    # Every row trains: the fit on all rows.
    assert _fit_core(columns, y, roles=np.zeros(len(y), np.uint8)) == _fit_core(columns, y)
    bad = roles.copy()
    bad[5] = 3
    with pytest.raises(optboost.DataError, match="row 5 has 3"):
        _fit_core(columns, y, roles=bad)
    with pytest.raises(optboost.DataError, match="row_roles has 3999 entries for the 4000 rows"):
        _fit_core(columns, y, roles=roles[1:])
    with pytest.raises(optboost.DataError, match="target has 3999 values for the 4000 rows"):
        _fit_core(columns, y[1:], roles=roles)
    with pytest.raises(optboost.DataError, match="pass no validation data as well"):
        _fit_core(columns, y, (columns, y), roles=roles)


def test_validation_fraction_leaves_the_matrix_in_place_with_the_same_model():
    # The estimator and boost() hold rows out without copying the training rows; the model is
    # the one trained on the split done by hand.
    from optboost.holdout import held_rows

    X, y = _matrix_data(3_000)
    settings = dict(n_iter=10, max_depth=3, validation_fraction=0.25)
    estimator = BoostRegressor(**settings).fit(X, y)
    held = held_rows(y, 0.25, 0, stratify=False)
    by_hand = BoostRegressor(**{**settings, "validation_fraction": None}).fit(
        X[~held], y[~held], eval_set=(X[held], y[held])
    )
    assert estimator.core_model_.to_json() == by_hand.core_model_.to_json()
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(5)}).with_columns(y=pl.Series(y))
    model = optboost.boost("y ~ .", frame, n_iter=10, max_depth=3, validation_fraction=0.25)
    split = optboost.boost(
        "y ~ .", frame.filter(pl.Series(~held)), valid=frame.filter(pl.Series(held)),
        n_iter=10, max_depth=3,
    )
    assert model._core.to_json() == split._core.to_json()


def test_estimators_pickled_before_the_shared_pipeline_still_predict():
    # Their state had `_layout_`: None for a matrix (columns by position), else the frame's
    # (name, kind, levels) per column.
    X, y = _matrix_data(400)
    for fitted, data in (
        (BoostRegressor(n_iter=3).fit(X, y), X),
        (BoostRegressor(n_iter=3).fit(
            regression_frame().select("a", "b", "s"), regression_frame()["y"]),
         regression_frame().select("a", "b", "s")),
    ):
        state = fitted.__getstate__()
        features = state.pop("_features_")
        on_frame = state.pop("_fitted_on_frame_")
        state["_layout_"] = (
            [(f.name, f.kind, f.levels) for f in features] if on_frame else None
        )
        old = BoostRegressor.__new__(BoostRegressor)
        old.__setstate__(state)
        np.testing.assert_array_equal(old.predict(data), fitted.predict(data))


def _xy(n: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + 2 * X[:, 1] ** 2 + rng.normal(scale=0.3, size=n)
    return X, y


def test_n_estimators_is_n_iter():
    X, y = _xy()
    by_sklearn_name = BoostRegressor(n_estimators=12).fit(X, y)
    by_own_name = BoostRegressor(n_iter=12).fit(X, y)
    assert by_sklearn_name.n_iter_ == 12
    np.testing.assert_array_equal(by_sklearn_name.predict(X), by_own_name.predict(X))
    with pytest.raises(optboost.ParameterError, match="n_estimators"):
        BoostRegressor(n_estimators=5, n_iter=5).fit(X, y)


@pytest.mark.parametrize("method", ["gbm", "rgbm"])
def test_warm_start_trains_on_to_the_longer_fit(method):
    X, y = _xy()
    warm = BoostRegressor(method=method, n_iter=10, warm_start=True).fit(X, y)
    first = warm.predict(X)
    warm.set_params(n_iter=25).fit(X, y)
    assert warm.n_iter_ == 25
    longer = BoostRegressor(method=method, n_iter=25).fit(X, y)
    np.testing.assert_array_equal(warm.predict(X), longer.predict(X))
    assert not np.array_equal(first, warm.predict(X))
    with pytest.raises(optboost.ParameterError, match="below the 25 iterations"):
        warm.set_params(n_iter=5).fit(X, y)
    with pytest.raises(optboost.DataError, match="warm_start"):
        warm.set_params(n_iter=30).fit(X, y + 1)
    # Without warm_start a fit starts anew (and keeps no training state).
    cold = BoostRegressor(method=method, n_iter=10).fit(X, y)
    cold.set_params(n_iter=25).fit(X, y)
    np.testing.assert_array_equal(cold.predict(X), longer.predict(X))
    assert not hasattr(cold, "_booster_")
    restored = pickle.loads(pickle.dumps(warm))
    np.testing.assert_array_equal(restored.predict(X), warm.predict(X))


def test_staged_predict_gives_every_iteration():
    X, y = _xy()
    regressor = BoostRegressor(n_iter=15).fit(X, y)
    stages = list(regressor.staged_predict(X))
    assert len(stages) == 15
    np.testing.assert_array_equal(stages[-1], regressor.predict(X))
    assert not np.array_equal(stages[0], stages[-1])
    labels = np.where(y > np.median(y), "up", "down")
    classifier = BoostClassifier(n_iter=8).fit(X, labels)
    stages = list(classifier.staged_predict(X))
    assert len(stages) == 8 and set(stages[0]) <= {"up", "down"}
    np.testing.assert_array_equal(stages[-1], classifier.predict(X))


def test_model_is_the_optboost_model():
    X, y = _xy()
    regressor = BoostRegressor(n_iter=10).fit(X, y)
    model = regressor.model_
    assert isinstance(model, optboost.Model)
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(4)})
    np.testing.assert_array_equal(model.predict(frame), regressor.predict(X))
    assert model.n_iter == 10 and "x0" in model.summary()
    labels = np.where(y > np.median(y), "up", "down")
    classifier = BoostClassifier(n_iter=6).fit(pd.DataFrame(X, columns=list("abcd")), labels)
    model = classifier.model_
    data = pd.DataFrame(X, columns=list("abcd"))
    assert model.classes == ["down", "up"]
    np.testing.assert_array_equal(model.predict(data), classifier.predict_proba(data)[:, 1])
    assert list(model.predict(data, type="class")) == list(classifier.predict(data))
