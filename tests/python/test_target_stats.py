"""cat_encoding="target_stats" from Python: a string column becomes ordered target
statistics (Prokhorenkova et al. 2018); the model predicts from the all-row statistics
after a save and load, credits the string column in SHAP values, and the exports refuse it."""

import json

import numpy as np
import optboost
import polars as pl
import pytest

pytestmark = pytest.mark.timeout(120)


def frame(seed: int, n: int = 800) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cities = np.array([f"city{i}" for i in range(15)])
    city = rng.integers(0, 15, n)
    x = rng.normal(size=n)
    rate = 1 / (1 + np.exp(-(city / 3.0 - 2.3 + 0.5 * x)))
    return pl.DataFrame(
        {
            "x": x,
            "city": cities[city],
            "y": (rng.random(n) < rate).astype(np.int64),
            "k": city % 3,
        }
    )


def fit(data: pl.DataFrame, formula: str = "y ~ x + city", **params) -> optboost.Model:
    return optboost.boost(
        formula, data, **{"loss": "logistic", "n_iter": 30, "cat_encoding": "target_stats",
                          "seed": 1, "progress": False, **params},
    )


def core_features(model: optboost.Model) -> list[dict]:
    return json.loads(model._core.to_json())["model"]["features"]


def test_a_string_column_becomes_its_target_statistic_and_survives_save_and_load(tmp_path):
    data = frame(0)
    model = fit(data)
    city = core_features(model)[1]
    assert city["name"] == "city" and "Numeric" in city["mapper"]
    assert city["target_stats"]["source"] == "city"
    assert city["target_stats"]["prior"] == pytest.approx(data["y"].mean(), abs=1e-12)
    # Unseen levels (and missing ones) read the prior.
    test = frame(1, 200)
    p = model.predict(test)
    path = tmp_path / "m.json"
    model.save(path)
    back = optboost.load(path)
    assert core_features(back) == core_features(model)
    np.testing.assert_array_equal(back.predict(test), p)
    # Better than the constant: the column carries the signal.
    logloss = -np.mean(np.where(test["y"] == 1, np.log(p), np.log(1 - p)))
    mean = data["y"].mean()
    constant = -np.mean(np.where(test["y"] == 1, np.log(mean), np.log(1 - mean)))
    assert logloss < constant - 0.05


def test_the_same_model_for_every_thread_count():
    data = frame(2)
    assert fit(data, n_threads=1)._core.to_json() == fit(data, n_threads=2)._core.to_json()


def test_shap_values_and_importance_credit_the_string_column(tmp_path):
    data = frame(3).with_columns(k2=pl.col("k").cast(pl.String))
    model = optboost.boost(
        "k ~ x + city + C(k2)", data,
        loss="softmax", n_iter=10, cat_encoding="city:target_stats",
        progress=False,
    )
    assert model.feature_names[:4] == ["x", "city[0]", "city[1]", "city[2]"]
    contrib = model.predict(data, type="contrib")
    assert contrib.columns == [f"{k}/{c}" for k in model.classes for c in ("x", "city", "k2", "bias")]
    by_feature = model.predict(data, type="contrib", by="feature")
    for k in model.classes:
        summed = by_feature.select(pl.sum_horizontal([f"{k}/city[{j}]" for j in range(3)]))
        np.testing.assert_allclose(contrib[f"{k}/city"], summed.to_series(), rtol=1e-12)
    # A save and load, and the trees table, with more core features than columns.
    model.save(tmp_path / "m.json")
    back = optboost.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict(data), model.predict(data))
    from optboost.explain import importance
    from optboost.trees import trees_frame

    assert set(trees_frame(model).filter(~pl.col("is_leaf"))["feature"]) <= set(model.feature_names)

    table = importance(model, "split")
    assert set(table["column"]) == {"x", "city", "k2"}


def test_exports_and_bad_values_are_refused_by_name():
    model = fit(frame(4))
    from optboost.export import to_onnx, to_treelite, treelite_inputs

    for export in (to_onnx, to_treelite):
        with pytest.raises(optboost.ParameterError, match="cat_encoding"):
            export(model)
    with pytest.raises(optboost.ParameterError, match="cat_encoding"):
        treelite_inputs(model, frame(4))
    with pytest.raises(optboost.ParameterError, match="cat_encoding"):
        fit(frame(4), cat_encoding="ordered")
    with pytest.raises(optboost.ParameterError, match="cat_encoding"):
        optboost.boost("y ~ x + city", frame(4), cat_encoding="x:target_stats", progress=False)


def test_the_default_encoding_is_unchanged():
    data = frame(5)
    default = optboost.boost("y ~ x + city", data, loss="logistic", n_iter=5, progress=False)
    partition = optboost.boost(
        "y ~ x + city", data, loss="logistic", n_iter=5, cat_encoding="partition", progress=False
    )
    assert default._core.to_json() == partition._core.to_json()
    assert "Categorical" in core_features(default)[1]["mapper"]


def test_model_files_with_target_statistics_follow_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    schema = json.loads((Path(__file__).parents[2] / "docs" / "model_schema.json").read_text())
    fit(frame(6)).save(tmp_path / "m.json")
    jsonschema.validate(json.loads((tmp_path / "m.json").read_text()), schema)


def pairs(seed: int, n: int = 900) -> pl.DataFrame:
    """Two string columns whose levels decide the class only together."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 6, n), rng.integers(0, 6, n)
    rate = np.where((a + b) % 2 == 0, 0.85, 0.15)
    return pl.DataFrame(
        {
            "x": rng.normal(size=n),
            "a": [f"a{i}" for i in a],
            "b": [f"b{i}" for i in b],
            "y": (rng.random(n) < rate).astype(np.int64),
        }
    )


def test_a_combination_is_credited_to_both_of_its_columns_and_saved(tmp_path):
    data = pairs(0)
    model = fit(data, "y ~ x + a + b", cat_combinations=2, cat_permutations=3)
    assert model.feature_names == ["x", "a", "a*b", "b"]
    assert model._core.feature_combined_with == [None, None, "b", None]
    by_feature = model.predict(data, type="contrib", by="feature")
    by_column = model.predict(data, type="contrib")
    assert by_column.columns == ["x", "a", "b", "bias"]
    half = by_feature["a*b"] / 2
    np.testing.assert_allclose(by_column["a"], by_feature["a"] + half, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(by_column["b"], by_feature["b"] + half, rtol=1e-12, atol=1e-12)
    scores = model.predict(data, type="link")
    np.testing.assert_allclose(by_column.sum_horizontal(), scores, atol=1e-9)
    model.save(tmp_path / "m.json")
    back = optboost.load(tmp_path / "m.json")
    assert core_features(back) == core_features(model)
    np.testing.assert_array_equal(back.predict(pairs(1, 200)), model.predict(pairs(1, 200)))
    # The pair carries the signal that neither column carries alone.
    plain = fit(data, "y ~ x + a + b")
    test = pairs(2, 400)

    def logloss(m):
        p = m.predict(test)
        return -np.mean(np.where(test["y"] == 1, np.log(p), np.log(1 - p)))

    assert logloss(model) < logloss(plain) - 0.05


def test_permutation_and_combination_counts_are_checked_by_name():
    for name, value in [("cat_permutations", 0), ("cat_permutations", 65),
                        ("cat_combinations", 33)]:
        with pytest.raises(optboost.OptboostError, match=name):
            fit(pairs(3, 100), "y ~ x + a + b", **{name: value})
