"""ONNX and treelite export against onnxruntime and treelite; the model file's JSON Schema."""

import json
import sys
from pathlib import Path

import numpy as np
import optboost
import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]


def numeric_frame(seed: int, n: int = 500) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    x[rng.random((n, 3)) < 0.1] = np.nan
    y = np.nan_to_num(x[:, 0]) + (x[:, 1] > 0) + rng.normal(scale=0.3, size=n)
    return pl.DataFrame(
        {
            "a": x[:, 0],
            "b": x[:, 1],
            "c": x[:, 2],
            "y": y,
            "yes": y > 0.5,
            "k": np.digitize(y, [0.0, 1.0]).astype(np.int64),
        }
    )


@pytest.mark.parametrize(
    "formula,loss",
    [
        ("y ~ a + b + c + a:b", "squared"),
        ("yes ~ a + b + c", "logistic"),
        ("yes ~ a + b", "exponential"),
        ("k ~ a + b + c", "softmax"),
        # response: the relative hazard e^link; times from y, which has no missing values
        ("Surv(np.exp(y), yes) ~ a + b + c", "cox"),
        # response: each row's quantiles sorted (TopK)
        ("y ~ a + b + c", "quantiles(0.1, 0.5, 0.9)"),
    ],
)
@pytest.mark.parametrize("tree", ["ordinary", "oblivious"])
def test_onnx_predictions_equal_optboost(formula, loss, tree, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from optboost.export import onnx_inputs

    frame = numeric_frame(1)
    model = optboost.boost(
        formula, frame, loss=loss, n_iter=20, max_depth=4, tree=tree, progress=False
    )
    model.to_onnx(tmp_path / "model.onnx")
    session = ort.InferenceSession(str(tmp_path / "model.onnx"))
    outputs = session.run(None, {"X": onnx_inputs(model, frame)})
    link = model.predict(frame, type="link").reshape(frame.height, -1)
    np.testing.assert_allclose(outputs[0], link, rtol=1e-6, atol=1e-6)
    if loss != "squared":
        response = model.predict(frame)
        if isinstance(response, pl.DataFrame):  # quantiles
            response = response.to_numpy()
        response = response.reshape(frame.height, -1)
        np.testing.assert_allclose(outputs[1], response, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "data,formula,loss",
    [
        ("penguins", "y ~ .", "softmax"),
        ("german_credit", "y ~ .", "logistic"),
    ],
)
def test_onnx_categorical_rules_as_equality_chains(data, formula, loss, request, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from optboost.export import onnx_inputs

    frame = treelite_case(data, request)
    model = optboost.boost(formula, frame, loss=loss, n_iter=30, max_depth=5, progress=False)
    assert model.trees()["levels"].is_not_null().any()
    model.to_onnx(tmp_path / "model.onnx")
    session = ort.InferenceSession(str(tmp_path / "model.onnx"))
    # Unseen levels (missing for optboost) and missing values in the categorical columns.
    new = frame.with_columns(
        pl.when(pl.int_range(pl.len()) % 7 == 0)
        .then(pl.lit("never seen"))
        .otherwise(pl.col(c))
        .alias(c)
        for c in frame.columns
        if frame[c].dtype == pl.String
    )
    with pytest.warns(UserWarning, match="not seen"):
        x = onnx_inputs(model, new)
        link = model.predict(new, type="link").reshape(new.height, -1)
    outputs = session.run(None, {"X": x})
    np.testing.assert_allclose(outputs[0], link, rtol=1e-6, atol=1e-6)
    response = model.predict(frame).reshape(frame.height, -1)
    probabilities = session.run(None, {"X": onnx_inputs(model, frame)})[1]
    np.testing.assert_allclose(probabilities, response, rtol=1e-6, atol=1e-6)


def test_saved_models_follow_the_json_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "model_schema.json").read_text())
    frame = numeric_frame(3).with_columns(s=pl.lit("u"))
    for formula, loss in [
        ("y ~ a + C(s) + np.log(b) + a:b", "huber(1.0)"),
        ("k ~ a + b", "softmax"),
    ]:
        model = optboost.boost(formula, frame, loss=loss, n_iter=3, progress=False)
        model.save(tmp_path / "m.json")
        jsonschema.validate(json.loads((tmp_path / "m.json").read_text()), schema)


def test_the_schema_knows_every_loss_of_the_core():
    """A model file's loss is the core's tagged form {"name": ..., <parameter>: ...}: every name
    of the core's loss vocabulary, with its parameter, must validate, and a misspelt one not."""
    jsonschema = pytest.importorskip("jsonschema")
    from optboost import _core

    schema = json.loads((ROOT / "docs" / "model_schema.json").read_text())
    loss_schema = schema["properties"]["model"]["properties"]["model"]["properties"]["loss"]
    for name in [*_core.loss_names(), "custom"]:
        info = _core.loss_info(name) if name != "custom" else {"parameter": None, "levels": None}
        form = {"name": name}
        if info["parameter"] is not None:
            form[info["parameter"][0]] = info["parameter"][1]
        if info["levels"] is not None:
            form["levels"] = list(info["levels"])
        jsonschema.validate(form, loss_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "sqaured"}, loss_schema)


# ------------------------------------------------------------------ treelite


def with_missing(frame: pl.DataFrame, columns: list[str], seed: int) -> pl.DataFrame:
    """About a fifth of the rows with ``columns`` set to null."""
    rng = np.random.default_rng(seed)
    missing = pl.Series(rng.random(frame.height) < 0.2)
    return frame.with_columns(
        pl.when(missing).then(None).otherwise(pl.col(c)).alias(c) for c in columns
    )


def treelite_case(name, request):
    frame = request.getfixturevalue(name)
    if name == "german_credit":
        frame = with_missing(frame, ["status", "purpose", "duration", "credit_amount"], 1)
    return frame


@pytest.mark.parametrize(
    "data,formula,loss,method",
    [
        ("penguins", "y ~ .", "softmax", "gbm"),
        ("penguins", "body_mass_g ~ island + sex + bill_length_mm + year", "huber(1.0)", "agbm"),
        ("german_credit", "y ~ .", "logistic", "gbm"),
        ("german_credit", "y ~ status + purpose + duration + credit_amount", "exponential", "gbm"),
    ],
)
@pytest.mark.parametrize("tree", ["ordinary", "oblivious"])
def test_treelite_predictions_equal_optboost(data, formula, loss, method, tree, request):
    treelite = pytest.importorskip("treelite")
    from optboost.export import treelite_inputs

    # rows without a target cannot be fitted
    frame = treelite_case(data, request).drop_nulls(formula.split("~")[0].strip())
    model = optboost.boost(
        formula, frame, loss=loss, method=method, n_iter=30, max_depth=5, tree=tree,
        progress=False,
    )
    assert any(f.kind == "categorical" for f in model.spec.features)
    tl = model.to_treelite()
    x = treelite_inputs(model, frame)
    assert np.isnan(x).any()
    margin = treelite.gtil.predict(tl, x, pred_margin=True).reshape(frame.height, -1)
    link = model.predict(frame, type="link").reshape(frame.height, -1)
    np.testing.assert_allclose(margin, link, rtol=1e-6, atol=1e-6)
    if loss in ("softmax", "logistic", "exponential"):
        response = model.predict(frame)
        if isinstance(response, pl.DataFrame):  # quantiles
            response = response.to_numpy()
        response = response.reshape(frame.height, -1)
        probabilities = treelite.gtil.predict(tl, x).reshape(frame.height, -1)
        np.testing.assert_allclose(probabilities, response, rtol=1e-6, atol=1e-6)


def test_treelite_multi_output_regression_sends_each_tree_to_its_target(penguins):
    treelite = pytest.importorskip("treelite")
    from optboost.export import treelite_inputs

    frame = penguins.drop_nulls(["body_mass_g", "flipper_length_mm"])
    model = optboost.boost(
        "cbind(body_mass_g, flipper_length_mm) ~ island + sex + bill_length_mm", frame,
        n_iter=20, progress=False,
    )
    assert model.loss == "multi_squared"
    tl = model.to_treelite()
    margin = treelite.gtil.predict(tl, treelite_inputs(model, frame), pred_margin=True)
    link = model.predict(frame, type="link").reshape(frame.height, -1)
    assert link.shape == (frame.height, 2)
    np.testing.assert_allclose(margin.reshape(frame.height, -1), link, rtol=1e-6, atol=1e-6)


def test_treelite_unseen_levels_and_missing_only_splits(penguins):
    treelite = pytest.importorskip("treelite")
    from optboost.export import treelite_inputs

    # A column whose missing values carry the signal: its rule sends every number left and
    # only missing values right (threshold +inf).
    frame = penguins.with_columns(gap=pl.when(pl.col("y") == 2).then(None).otherwise(pl.lit(1.0)))
    model = optboost.boost(
        "y ~ gap + island + sex", frame, loss="softmax", n_iter=10, progress=False
    )
    new = frame.with_columns(island=pl.lit("Atlantis"), sex=pl.lit(None, dtype=pl.String))
    with pytest.warns(UserWarning, match="not seen"):
        x = treelite_inputs(model, new)
        link = model.predict(new, type="link").reshape(new.height, -1)
    assert model.trees().filter(pl.col("threshold") == float("inf")).height > 0
    margin = treelite.gtil.predict(model.to_treelite(), x, pred_margin=True)
    np.testing.assert_allclose(margin.reshape(new.height, -1), link, rtol=1e-6, atol=1e-6)


def test_tl2cgen_compiles_a_standalone_predictor(german_credit, tmp_path):
    tl2cgen = pytest.importorskip("tl2cgen")
    pytest.importorskip("treelite")
    import shutil

    if shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    from optboost.export import treelite_inputs

    frame = with_missing(german_credit, ["status", "duration"], 2)
    model = optboost.boost(
        "y ~ status + duration + purpose + age",
        frame,
        loss="logistic",
        n_iter=10,
        max_depth=3,
        progress=False,
    )
    suffix = {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")
    library = tmp_path / f"predictor{suffix}"
    tl2cgen.export_lib(model.to_treelite(), toolchain="gcc", libpath=str(library))
    predictor = tl2cgen.Predictor(str(library))
    x = treelite_inputs(model, frame)
    margin = predictor.predict(tl2cgen.DMatrix(x, dtype="float64"), pred_margin=True)
    np.testing.assert_allclose(
        np.asarray(margin).reshape(-1), model.predict(frame, type="link"), rtol=1e-6, atol=1e-6
    )


def test_to_treelite_without_treelite_says_how_to_install_it(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_treelite(name, *args, **kwargs):
        if name.startswith("treelite"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    model = optboost.boost("y ~ a + b", numeric_frame(4), n_iter=2, progress=False)
    monkeypatch.setattr(builtins, "__import__", no_treelite)
    with pytest.raises(ImportError, match=r"optboost\[treelite\]"):
        model.to_treelite()
