"""optboost.boost end to end: fitting, prediction, parameters, errors,
progress, callbacks and Ctrl-C, and memory (no copy of the numeric data)."""

from __future__ import annotations

import os
import signal
import threading
import tracemalloc
import warnings

import numpy as np
import optboost
import polars as pl
import pytest
from optboost import _core
from support import binary_frame, regression_frame, require

# ---------------------------------------------------------------- fitting and prediction


def test_fit_predict_regression_with_categorical_column():
    frame = regression_frame()
    model = optboost.boost("y ~ a + b + s", frame, n_iter=80, max_depth=3, progress=False)
    predictions = model.predict(frame)
    assert predictions.shape == (frame.height,)
    residual = predictions - frame["y"].to_numpy()
    assert np.mean(residual**2) < 0.1 * np.var(frame["y"].to_numpy())
    assert model.n_iter == 80 and model.n_trees == 80
    assert model.method == "gbm" and model.loss == "squared" and model.task == "regression"


def test_real_data_crabs_end_to_end(crabs):
    model = optboost.boost("y ~ fl + rw + cl + bd + C(sp) + sex", crabs, n_iter=60, progress=False)
    predictions = model.predict(crabs)
    assert np.corrcoef(predictions, crabs["y"].to_numpy())[0, 1] > 0.99
    importance = model.feature_importance()
    assert set(importance["column"]) == {"fl", "rw", "cl", "bd", "sp", "sex"}


def test_pandas_input_gives_the_same_model():
    frame = regression_frame()
    from_polars = optboost.boost("y ~ a + b + s", frame, n_iter=20, progress=False)
    from_pandas = optboost.boost("y ~ a + b + s", frame.to_pandas(), n_iter=20, progress=False)
    np.testing.assert_array_equal(
        from_polars.predict(frame), from_pandas.predict(frame.to_pandas())
    )


def test_pandas_nan_gives_the_model_of_polars_nulls():
    frame = regression_frame().with_columns(
        a=pl.when(pl.int_range(pl.len()) % 7 == 0).then(None).otherwise(pl.col("a"))
    )
    pandas_frame = frame.to_pandas()
    assert pandas_frame["a"].isna().sum() == frame["a"].null_count() > 0
    formula = "y ~ a + b + s + np.abs(a) + a:b"  # computed terms read the NaN too
    from_polars = optboost.boost(formula, frame, n_iter=20, progress=False)
    from_pandas = optboost.boost(formula, pandas_frame, n_iter=20, progress=False)
    np.testing.assert_array_equal(from_polars.predict(frame), from_pandas.predict(pandas_frame))


def test_user_frame_is_not_modified_and_rows_are_kept():
    frame = regression_frame().with_columns(
        a=pl.when(pl.int_range(pl.len()) % 7 == 0).then(None).otherwise(pl.col("a"))
    )
    before = frame.clone()
    model = optboost.boost("y ~ a + b + s", frame, n_iter=5, progress=False)
    assert frame.equals(before)
    assert model.predict(frame).shape == (frame.height,)  # rows with a missing value kept


def test_prediction_selects_columns_by_name():
    frame = regression_frame()
    model = optboost.boost("y ~ a + b + s", frame, n_iter=20, progress=False)
    shuffled = frame.select("s", "y", "b", "a").with_columns(extra=pl.lit(1.0))
    np.testing.assert_array_equal(model.predict(frame), model.predict(shuffled))
    # the target is not needed for prediction
    np.testing.assert_array_equal(model.predict(frame), model.predict(frame.drop("y")))


def test_nan_and_null_both_mean_missing():
    frame = regression_frame()
    mask = np.arange(frame.height) % 5 == 0
    with_nan = frame.with_columns(a=pl.Series(np.where(mask, np.nan, frame["a"].to_numpy())))
    with_null = frame.with_columns(a=pl.when(pl.Series(mask)).then(None).otherwise(pl.col("a")))
    nan_model = optboost.boost("y ~ a + b", with_nan, n_iter=20, progress=False)
    null_model = optboost.boost("y ~ a + b", with_null, n_iter=20, progress=False)
    np.testing.assert_array_equal(nan_model.predict(with_nan), null_model.predict(with_null))
    np.testing.assert_array_equal(nan_model.predict(with_null), nan_model.predict(with_nan))


def test_parameters_reach_the_core():
    frame = regression_frame()
    stumps = optboost.boost("y ~ a + b + s", frame, n_iter=15, max_depth=1, progress=False)
    assert stumps.feature_importance()["splits"].sum() == 15  # one split per stump
    assert stumps.params["max_depth"] == "1"
    deeper = optboost.boost("y ~ a + b + s", frame, n_iter=15, max_depth=4, progress=False)
    assert deeper.feature_importance()["splits"].sum() > 15


def test_learning_rate_and_seed_are_recorded():
    model = optboost.boost(
        "y ~ a + b", regression_frame(), n_iter=3, learning_rate=0.25, seed=7, progress=False
    )
    assert model.params["learning_rate"] == "0.25" and model.params["seed"] == "7"


def test_weights_column_and_array():
    frame = regression_frame().with_columns(w=pl.Series(np.linspace(0.1, 2.0, 400)))
    by_name = optboost.boost("y ~ a + b", frame, weights="w", n_iter=10, progress=False)
    by_array = optboost.boost(
        "y ~ a + b", frame, weights=frame["w"].to_numpy(), n_iter=10, progress=False
    )
    unweighted = optboost.boost("y ~ a + b", frame, n_iter=10, progress=False)
    np.testing.assert_array_equal(by_name.predict(frame), by_array.predict(frame))
    assert not np.array_equal(by_name.predict(frame), unweighted.predict(frame))
    assert "w" not in by_name.feature_names


def test_validation_history_and_early_stopping():
    rng = np.random.default_rng(1)
    frame = pl.DataFrame({"a": rng.normal(size=600), "b": rng.normal(size=600)})
    frame = frame.with_columns(y=pl.col("a") + pl.Series(rng.normal(scale=2.0, size=600)))
    train, valid = frame.head(300), frame.tail(300)
    model = optboost.boost(
        "y ~ a + b",
        train,
        valid=valid,
        n_iter=500,
        learning_rate=0.3,
        max_depth=6,
        early_stopping_rounds=5,
        progress=False,
    )
    history = model.history
    assert history["valid_loss"].null_count() == 0
    assert model.n_iter < 500
    assert model.best_iteration is not None and model.best_iteration < model.n_iter
    assert "early stopping" in model.stop_reason
    best = history["valid_loss"].arg_min() + 1
    assert model.best_iteration == best
    # the kept model is the best iterate: its validation loss is the minimum
    kept = np.mean((model.predict(valid) - valid["y"].to_numpy()) ** 2) / 2
    assert kept == pytest.approx(history["valid_loss"].min(), rel=1e-9)


def test_history_columns():
    model = optboost.boost("y ~ a + b + s", regression_frame(), n_iter=12, progress=False)
    history = model.history
    assert history.columns == [
        "iteration",
        "trees",
        "train_loss",
        "valid_loss",
        "cos_mean",
        "cos_min",
        "step",
        "seconds",
        "restarted",
        "kept",
    ]
    assert history.height == 12
    assert history["iteration"].to_list() == list(range(1, 13))
    assert history["trees"].to_list() == list(range(1, 13))
    assert history["valid_loss"].null_count() == 12
    assert (history["cos_min"] <= history["cos_mean"] + 1e-12).all()
    assert history["cos_mean"].is_between(-1, 1).all()
    assert history["train_loss"].diff().drop_nulls().max() <= 1e-12  # gbm never increases it here
    assert history["seconds"].diff().drop_nulls().min() >= 0


def test_loss_objects_render_to_core_spelling():
    assert str(optboost.Pinball(tau=0.9)) == "pinball(0.9)"
    assert str(optboost.Huber(delta=1.0)) == "huber(1.0)"
    assert str(optboost.Logistic(ridge=1e-4)) == "logistic(0.0001)"
    assert str(optboost.Logistic()) == "logistic"
    assert str(optboost.Exponential(beta=1.0)) == "exponential(1.0)"


def test_quantile_loss_object():
    require("gbm", "pinball(0.9)")
    frame = regression_frame()
    model = optboost.boost(
        "y ~ a + b + s", frame, loss=optboost.Pinball(tau=0.9), n_iter=100, progress=False
    )
    share_below = np.mean(frame["y"].to_numpy() <= model.predict(frame))
    assert 0.8 < share_below < 0.97
    assert model.loss.startswith("pinball")


def test_binary_string_target_states_positive_class():
    require("gbm", "logistic")
    frame = binary_frame()
    model = optboost.boost("label ~ a + b", frame, loss="logistic", n_iter=50, progress=False)
    assert (
        model.task == "binary" and model.positive_class == "yes" and model.classes == ["no", "yes"]
    )
    probability = model.predict(frame)
    assert ((probability >= 0) & (probability <= 1)).all()
    classes = model.predict(frame, type="class")
    assert set(classes) <= {"no", "yes"}
    assert np.mean(classes == frame["label"].to_numpy()) > 0.85
    link = model.predict(frame, type="link")
    np.testing.assert_array_equal(classes == "yes", link > 0)
    assert "positive class 'yes'" in model.summary()


def test_binary_targets_bool_and_integers_agree():
    require("gbm", "logistic")
    frame = binary_frame().with_columns(
        as_bool=pl.col("label") == "yes", as_int=(pl.col("label") == "yes").cast(pl.Int64)
    )
    by_bool = optboost.boost("as_bool ~ a + b", frame, loss="logistic", n_iter=20, progress=False)
    by_int = optboost.boost("as_int ~ a + b", frame, loss="logistic", n_iter=20, progress=False)
    np.testing.assert_array_equal(by_bool.predict(frame), by_int.predict(frame))
    assert by_bool.positive_class is True and by_int.positive_class == 1


def test_binary_real_data_pima():
    require("gbm", "logistic")
    from conftest import _dataset

    pima = _dataset("pima_diabetes")
    model = optboost.boost("y ~ .", pima, loss=optboost.Logistic(), n_iter=50, progress=False)
    assert np.mean(model.predict(pima, type="class") == pima["y"].to_numpy()) > 0.8


def test_multiclass_penguins(penguins):
    require("gbm", "softmax")
    model = optboost.boost(
        "y ~ bill_length_mm + bill_depth_mm + flipper_length_mm + body_mass_g + island + sex",
        penguins,
        loss="softmax",
        n_iter=30,
        progress=False,
    )
    probabilities = model.predict(penguins)
    assert probabilities.shape == (penguins.height, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert np.mean(model.predict(penguins, type="class") == penguins["y"].to_numpy()) > 0.95


# ---------------------------------------------------------------- bad input


def test_formula_naming_a_missing_column():
    with pytest.raises(optboost.MissingColumnError, match="'c'"):
        optboost.boost("y ~ a + c", regression_frame(), progress=False)


def test_target_with_nan_and_null_counts_rows():
    frame = regression_frame().with_columns(
        y=pl.when(pl.int_range(pl.len()) < 3).then(None).otherwise(pl.col("y"))
    )
    frame = frame.with_columns(
        y=pl.when(pl.int_range(pl.len()) == 10).then(float("nan")).otherwise(pl.col("y"))
    )
    with pytest.raises(optboost.TargetError, match="4 of 400 rows") as caught:
        optboost.boost("y ~ a + b", frame, progress=False)
    assert isinstance(caught.value, optboost.OptboostError) and isinstance(caught.value, ValueError)


def test_non_numeric_target_for_regression_loss():
    with pytest.raises(optboost.TargetError, match="regression needs a numeric target"):
        optboost.boost("s ~ a + b", regression_frame(), loss="squared", progress=False)


def test_wrong_number_of_classes_for_binary_loss():
    require("gbm", "logistic")
    with pytest.raises(optboost.TargetError, match="exactly 2 classes.*3"):
        optboost.boost("s ~ a + b", regression_frame(), loss="logistic", progress=False)


def test_unknown_method_lists_valid_names():
    with pytest.raises(optboost.ParameterError, match="method") as caught:
        optboost.boost("y ~ a", regression_frame(), method="xgboost", progress=False)
    for name in ("gbm", "agbm", "proximal"):
        assert name in str(caught.value)


def test_unknown_loss_lists_valid_names():
    with pytest.raises(optboost.ParameterError, match="loss.*squared"):
        optboost.boost("y ~ a", regression_frame(), loss="quadratic", progress=False)


def test_unknown_parameter_lists_valid_names():
    with pytest.raises(optboost.ParameterError, match="did you mean 'max_depth'") as caught:
        optboost.boost("y ~ a", regression_frame(), max_dept=3, progress=False)
    assert "min_samples_leaf" in str(caught.value)


def test_parameter_value_out_of_domain():
    with pytest.raises(optboost.ParameterError, match="learning_rate"):
        optboost.boost("y ~ a", regression_frame(), learning_rate=-1.0, progress=False)
    with pytest.raises(optboost.ParameterError, match="max_depth"):
        optboost.boost("y ~ a", regression_frame(), max_depth="deep", progress=False)


def test_prediction_data_missing_a_column():
    model = optboost.boost("y ~ a + b + s", regression_frame(), n_iter=3, progress=False)
    with pytest.raises(optboost.MissingColumnError, match="'s'"):
        model.predict(regression_frame().drop("s"))


def test_early_stopping_needs_validation_data():
    with pytest.raises(optboost.ParameterError, match="valid="):
        optboost.boost("y ~ a", regression_frame(), early_stopping_rounds=5, progress=False)


def test_core_errors_map_to_exception_classes():
    a = np.arange(10, dtype=np.float64)
    columns = [("a", a, "numeric", 0)]
    with pytest.raises(optboost.DataError, match="target has 9 rows"):
        _core.Booster([], columns, np.zeros(9))
    with pytest.raises(optboost.InvalidValueError, match="code 5"):
        _core.Booster([], [("c", np.array([0, 5] * 5, dtype=np.int32), "categorical", 3)], a)
    with pytest.raises(optboost.DataError, match="float64"):
        _core.Booster([], [("a", a.astype(np.float32), "numeric", 0)], a)
    with pytest.raises(optboost.ParameterError, match="gamma"):
        _core.resolve_params([("gamma", "2.0")])
    with pytest.raises(optboost.ModelFileError, match="not an optboost model"):
        _core.CoreModel.from_json("{}")
    for cls in (optboost.DataError, optboost.ParameterError, optboost.ModelFileError):
        assert issubclass(cls, ValueError) and issubclass(cls, optboost.OptboostError)
    assert issubclass(optboost.TrainingError, optboost.OptboostError)


# ---------------------------------------------------------------- progress, callback, Ctrl-C


def test_callback_sees_every_iteration_and_can_stop():
    seen = []

    def callback(record):
        seen.append(record)
        return record["iteration"] < 7

    model = optboost.boost(
        "y ~ a + b", regression_frame(), n_iter=50, callback=callback, progress=False
    )
    assert [r["iteration"] for r in seen] == list(range(1, 8))
    assert model.n_iter == 7
    # "kept" marks the iteration the finished model uses: not part of a per-iteration record
    assert set(seen[0]) == set(model.history.columns) - {"kept"}


def test_keyboard_interrupt_from_callback_keeps_finished_iterations():
    frame = regression_frame()

    def callback(record):
        if record["iteration"] == 5:
            raise KeyboardInterrupt

    with pytest.warns(UserWarning, match="interrupted after 5 iterations"):
        model = optboost.boost("y ~ a + b", frame, n_iter=50, callback=callback, progress=False)
    assert model.interrupted and model.n_iter == 5 and model.n_trees == 5
    assert "interrupted" in model.stop_reason
    reference = optboost.boost("y ~ a + b", frame, n_iter=5, progress=False)
    np.testing.assert_array_equal(model.predict(frame), reference.predict(frame))
    model.update(3)  # and training can go on
    assert model.n_iter == 8 and not model.interrupted


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_during_training_stops_between_batches():
    frame = regression_frame(2000)
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.warns(UserWarning, match="interrupted"):
            model = optboost.boost("y ~ a + b + s", frame, n_iter=10_000_000, progress=False)
    finally:
        timer.cancel()
    assert model.interrupted
    assert 0 < model.n_iter < 10_000_000
    assert model.n_trees == model.n_iter
    assert np.isfinite(model.predict(frame)).all()


def test_progress_bar_when_asked(capsys):
    optboost.boost("y ~ a + b", regression_frame(), n_iter=20, progress=True)
    err = capsys.readouterr().err
    assert "optboost" in err and "20/20" in err


def test_no_progress_bar_when_not_a_terminal(capsys):
    optboost.boost("y ~ a + b", regression_frame(), n_iter=20)
    assert capsys.readouterr().err == ""


def test_progress_must_be_a_flag():
    with pytest.raises(TypeError, match="progress"):
        optboost.boost("y ~ a", regression_frame(), n_iter=2, progress="yes")


# ---------------------------------------------------------------- memory


def test_formula_path_makes_no_copy_of_numeric_data():
    """Numeric columns reach the core as views of the frame's buffers: the
    Python-side allocations while fitting stay far below one copy of the data."""
    n_rows, n_columns = 200_000, 10
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({f"x{j}": rng.normal(size=n_rows) for j in range(n_columns)})
    frame = frame.with_columns(y=pl.col("x0") * 2.0, s=pl.Series(rng.choice(["a", "b"], n_rows)))
    formula = "y ~ " + " + ".join([f"x{j}" for j in range(n_columns)] + ["s"])
    data_bytes = n_rows * n_columns * 8
    optboost.boost(formula, frame, n_iter=1, progress=False)  # warm up imports and caches
    tracemalloc.start()
    try:
        model = optboost.boost(formula, frame, n_iter=2, progress=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The target (one column) and the codes of `s` (int32) are allowed; a copy
    # of the ten numeric columns is not.
    assert peak < 0.35 * data_bytes, (
        f"peak {peak / 1e6:.1f} MB for {data_bytes / 1e6:.1f} MB of data"
    )
    assert model.n_trees == 2


def test_numeric_columns_are_passed_zero_copy():
    frame = regression_frame()
    design = optboost.formula.build_design("y ~ a + b", frame)
    buffer = frame["a"].to_numpy()
    assert np.shares_memory(design.features[0].values, buffer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optboost.boost("y ~ a + b", frame, loss="squared", n_iter=1, progress=False)


def test_one_core_call_validates_and_returns_what_training_uses():
    resolved = _core.resolve_params([("method", "gbm"), ("loss", "logistic")])
    # gbm takes Newton steps for a loss with a smoothness constant; rho = 1/sigma = 4.
    assert resolved == {
        "method": "gbm",
        "loss": "logistic(0)",
        "task": "binary",
        "step": "newton",
        "rho": 4.0,
        "preset": "none",
        "preset_settings": [],
    }
    # Under preset="paper" the step in force is the paper's, and the settings it made are listed.
    resolved = _core.resolve_params([("method", "gbm"), ("loss", "logistic"), ("preset", "paper")])
    assert resolved["step"] == "leaf_line_search"
    assert ("safeguard", "none") in resolved["preset_settings"]
    resolved = _core.resolve_params(
        [("method", "proximal"), ("loss", "pinball(0.9)"), ("lambda", "0.5")]
    )
    assert (resolved["task"], resolved["step"], resolved["rho"]) == (
        "regression",
        "leaf_line_search",
        0.5,
    )
    assert _core.resolve_params([("method", "agbm"), ("loss", "softmax")])["rho"] == 2.0
    assert _core.resolve_params([("loss", "absolute")])["step"] == "leaf_line_search"
    assert _core.resolve_params([("step", "line_search"), ("rho", "3")])["step"] == "line_search"
    with pytest.raises(optboost.ParameterError, match="step"):
        _core.resolve_params([("method", "agbm"), ("step", "newton")])


def test_history_columns_are_the_bindings_schema():
    model = optboost.boost("y ~ .", regression_frame(200, seed=1), n_iter=3, progress=False)
    raw = model._booster.history()
    assert list(raw) == [name for name, _ in _core.HISTORY_SCHEMA]
    assert model.history.columns == [*(name for name, _ in _core.HISTORY_SCHEMA), "kept"]
