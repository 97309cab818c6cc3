"""The Model object: persistence (file, pickle), continued training,
importance, text, plots and prediction types."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.trees import core_dict
from support import regression_frame, require

FORMULA = "y ~ a + b + s + np.log1p(np.abs(a)) + a:b"


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return regression_frame()


@pytest.fixture(scope="module")
def model(frame) -> optboost.Model:
    valid = regression_frame(seed=1)
    return optboost.boost(FORMULA, frame, n_iter=25, valid=valid, progress=False)


def test_save_load_round_trip_gives_identical_predictions(model, frame, tmp_path):
    path = tmp_path / "model.json"
    model.save(path)
    loaded = optboost.load(path)
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    assert loaded.history.equals(model.history)
    assert loaded.formula == FORMULA and loaded.params == model.params
    assert loaded.feature_names == model.feature_names
    content = json.loads(path.read_text())
    assert content["format"] == "optboost-python-model" and content["version"] == 1
    assert content["model"]["format"] == "optboost-model"  # the core's own versioned JSON
    assert content["design"]["formula"] == FORMULA


def test_pickle_round_trip_gives_identical_predictions(model, frame):
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(frame), model.predict(frame))
    assert repr(restored) == repr(model)


def _bits(scores) -> np.ndarray:
    return np.ascontiguousarray(scores, dtype=np.float64).view(np.uint64)


def test_a_version_2_file_of_an_earlier_optboost_loads_and_predicts_as_before():
    """data/model_v2.json was saved by the optboost of commit 787c0c4 (core format 2, every
    threshold written) from ``y ~ x2 + s + age`` on data/model_v1_train.csv; a fit with the
    same data and parameters now writes version 3 without thresholds, and both predict the
    same to the bit, with the same trees."""
    data = Path(__file__).resolve().parent / "data"
    saved = json.loads((data / "model_v2.json").read_text())
    assert saved["model"]["version"] == 2
    assert all("threshold" in tree for tree in saved["model"]["model"]["trees"])
    frame = pl.read_csv(data / "model_v1_train.csv")
    old = optboost.load(data / "model_v2.json")
    # min_samples_leaf: least squares' leaf minimum then (its default is 1 since).
    new = optboost.boost("y ~ x2 + s + age", frame, n_iter=3, max_depth=2, seed=0,
                         n_threads=1, progress=False, min_samples_leaf=10)
    assert np.array_equal(_bits(old.predict(frame)), _bits(new.predict(frame)))
    assert old.trees().equals(new.trees())
    assert core_dict(old) == core_dict(new)


def test_saved_loaded_and_unpickled_models_predict_bit_for_bit(tmp_path):
    """Format version 3 (trees as arrays): the same predictions, to the bit, at every
    iteration, for numeric and categorical rules, multiclass and momentum (per-iteration
    weights) models; the file keeps the core model's JSON as the core wrote it."""
    frame = regression_frame(n=400).with_columns(
        k=(pl.col("a") * 3).floor().clip(-1, 1).cast(pl.Int64)
    )
    cases = [
        optboost.boost(FORMULA, frame, n_iter=12, max_depth=4, progress=False),
        optboost.boost("k ~ a + b + s", frame, loss="softmax", n_iter=5, progress=False),
        optboost.boost("y ~ a + s", frame, method="agbm", n_iter=6, progress=False),
    ]
    for model in cases:
        path = tmp_path / "m.json"
        model.save(path)
        core = json.loads(path.read_text())["model"]
        # version 3: trained trees' thresholds are implied by their bins and left out
        trees = core["model"]["trees"]
        assert core["version"] == 3 and not any("nodes" in t or "threshold" in t for t in trees)
        # the same values (Python and Rust spell some floats differently, e.g. 2.8e-05)
        assert core == json.loads(model._core.to_json())
        for back in (optboost.load(path), pickle.loads(pickle.dumps(model))):
            assert back.to_dict() == model.to_dict()
            for k in range(model.n_iter + 1):
                assert np.array_equal(
                    _bits(back.predict(frame, type="link", iteration=k)),
                    _bits(model.predict(frame, type="link", iteration=k)),
                )
    assert any(
        node["category"] is not None
        for tree in core_dict(cases[0])["trees"]
        for node in tree["nodes"]
    )


def test_files_the_core_parser_refuses_are_read_as_python_reads_json(model, frame, tmp_path):
    """A repeated key or a NaN in the history: Python's json takes them (the last key wins),
    the core's parser does not; such files load as they did before the core read files."""
    path = tmp_path / "m.json"
    model.save(path)
    text = path.read_text()
    path.write_text('{"formula": "ignored", ' + text[1:])
    np.testing.assert_array_equal(optboost.load(path).predict(frame), model.predict(frame))
    content = model.to_dict()
    content["history"]["seconds"][0] = float("nan")
    path.write_text(json.dumps(content))
    assert np.isnan(optboost.load(path).history["seconds"][0])


def test_binary_model_round_trip_keeps_labels(tmp_path):
    require("gbm", "logistic")
    from support import binary_frame

    data = binary_frame()
    model = optboost.boost("label ~ a + b", data, loss="logistic", n_iter=10, progress=False)
    model.save(tmp_path / "m.json")
    loaded = optboost.load(tmp_path / "m.json")
    assert loaded.positive_class == "yes"
    np.testing.assert_array_equal(
        loaded.predict(data, type="class"), model.predict(data, type="class")
    )


def test_loading_bad_files_raises_model_file_error(model, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("not json")
    with pytest.raises(optboost.ModelFileError, match="not an optboost model file"):
        optboost.load(path)
    path.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(optboost.ModelFileError, match="format"):
        optboost.load(path)
    content = model.to_dict()
    path.write_text(json.dumps({**content, "version": 99}))
    with pytest.raises(optboost.ModelFileError, match="version 99"):
        optboost.load(path)
    broken = {**content, "model": {**content["model"], "version": 99}}
    path.write_text(json.dumps(broken))
    with pytest.raises(optboost.ModelFileError, match="version"):
        optboost.load(path)
    with pytest.raises(FileNotFoundError):
        optboost.load(tmp_path / "missing.json")


def test_update_continues_training_like_one_longer_fit(frame):
    model = optboost.boost("y ~ a + b + s", frame, n_iter=30, progress=False)
    loss_before = model.history["train_loss"][-1]
    assert model.update(20) is model
    assert model.n_iter == 50 and model.n_trees == 50
    assert model.history["train_loss"][-1] < loss_before
    assert model.history["iteration"].to_list() == list(range(1, 51))
    at_once = optboost.boost("y ~ a + b + s", frame, n_iter=50, progress=False)
    np.testing.assert_allclose(model.predict(frame), at_once.predict(frame), rtol=1e-12)


def test_update_after_load_or_unpickle_raises(model, tmp_path):
    with pytest.raises(optboost.NotTrainableError, match="no longer holds its training state"):
        pickle.loads(pickle.dumps(model)).update(5)
    model.save(tmp_path / "m.json")
    with pytest.raises(optboost.NotTrainableError):
        optboost.load(tmp_path / "m.json").update(5)


def test_update_rejects_bad_counts(frame):
    model = optboost.boost("y ~ a", frame, n_iter=2, progress=False)
    with pytest.raises(optboost.ParameterError):
        model.update(0)


def test_feature_importance_by_column_and_by_feature(model):
    by_feature = model.feature_importance(by="feature")
    assert set(by_feature["feature"]) == set(model.feature_names)
    by_column = model.feature_importance()
    # the columns of every kind of importance, then the split counts
    assert by_column.columns == ["column", "importance", "share", "splits"]
    assert by_feature.columns == ["feature", "importance", "share", "splits"]
    assert set(by_column["column"]) == {"a", "b", "s"}
    # an interaction's gain is shared by its columns, so totals agree
    assert by_column["importance"].sum() == pytest.approx(by_feature["importance"].sum())
    assert by_column["share"].sum() == pytest.approx(1.0)
    assert by_column["importance"].is_sorted(descending=True)
    with pytest.raises(optboost.ParameterError):
        model.feature_importance(by="tree")


def test_repr_and_summary(model):
    text = repr(model)
    assert FORMULA in text and "gbm/squared" in text and "25 iterations" in text
    summary = model.summary()
    for part in (
        "gbm",
        "squared",
        "25 iterations",
        "valid loss",
        "top columns by gain",
        "regression",
    ):
        assert part in summary


def test_prediction_types(model, frame):
    response = model.predict(frame)
    np.testing.assert_array_equal(model.predict(frame, type="link"), response)  # squared: identity
    with pytest.raises(optboost.ParameterError, match="classification"):
        model.predict(frame, type="class")
    with pytest.raises(optboost.ParameterError, match="type"):
        model.predict(frame, type="probability")


def test_unseen_level_is_missing_with_a_warning(model, frame):
    new = frame.head(5).with_columns(s=pl.lit("purple"))
    with pytest.warns(UserWarning, match="purple"):
        predictions = model.predict(new)
    assert np.isfinite(predictions).all()


def test_the_unseen_level_warning_points_at_the_users_line(model, frame):
    new = frame.head(5).with_columns(s=pl.lit("purple"))
    with pytest.warns(UserWarning, match="purple") as record:
        model.predict(new)
    assert [w.filename for w in record] == [__file__]
    with pytest.warns(UserWarning, match="purple") as record:
        model.spec.columns(new)
    assert [w.filename for w in record] == [__file__]


def test_plot_returns_a_figure_and_saves_png(model, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    figure = model.plot(tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert len(figure.axes) == 2


def test_plot_without_matplotlib_says_how_to_install(model, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'pip install "optboost\[plot\]"'):
        model.plot()
