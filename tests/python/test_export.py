"""ONNX export against onnxruntime; the model file's JSON Schema."""

import json
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
    ],
)
def test_onnx_predictions_equal_optboost(formula, loss, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from optboost.export import onnx_inputs

    frame = numeric_frame(1)
    model = optboost.boost(formula, frame, loss=loss, n_iter=20, max_depth=4, progress=False)
    model.to_onnx(tmp_path / "model.onnx")
    session = ort.InferenceSession(str(tmp_path / "model.onnx"))
    outputs = session.run(None, {"X": onnx_inputs(model, frame)})
    link = model.predict(frame, type="link").reshape(frame.height, -1)
    np.testing.assert_allclose(outputs[0], link, rtol=1e-6, atol=1e-6)
    if loss != "squared":
        response = model.predict(frame).reshape(frame.height, -1)
        np.testing.assert_allclose(outputs[1], response, rtol=1e-6, atol=1e-6)


def test_onnx_refuses_categorical_rules_naming_the_feature():
    pytest.importorskip("onnx")
    frame = numeric_frame(2).with_columns(
        s=pl.when(pl.col("y") > 1).then(pl.lit("u")).otherwise(pl.lit("v"))
    )
    model = optboost.boost("y ~ a + s", frame, n_iter=5, progress=False)
    with pytest.raises(optboost.ParameterError, match="categorical feature 's'"):
        model.to_onnx()


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
