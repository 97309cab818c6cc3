"""A model file is data, never code: regression tests for the adversarial probe.

Nothing read from a model file, a pickle of optboost's own objects, or a data
frame may crash the process, hang it, or reach ``eval``; every error is an
``optboost.OptboostError`` subclass. Each test reproduces one finding with the
payload that worked against the code of commit 0813760 (the files are built
from ``data/model_v1.json``, a model written by that code, whose design held
formulaic's state as tagged JSON).

Calls that could crash (a stack overflow in the core) or hang (an exponential
walk, a million threads) run in a subprocess with a timeout; code-execution
payloads would create a marker file in pytest's tmp_path, and every such test
asserts that the file does not exist afterwards.
"""

from __future__ import annotations

import copy
import os
import re
import json
import pickle
import pickletools
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import optboost
import polars as pl
import pytest

HERE = Path(__file__).resolve().parent
FUZZ_DIR = HERE.parent / "fuzz"
sys.path.insert(0, str(FUZZ_DIR))
import fuzz_models as fm  # noqa: E402

MODEL_V1 = HERE / "data" / "model_v1.json"
TRAIN_V1 = HERE / "data" / "model_v1_train.csv"
TERM = "np.log1p(age)"


@pytest.fixture
def v1() -> dict:
    """The saved model of 0813760: y ~ np.log1p(age) + x2 + s + C(s):x2."""
    return json.loads(MODEL_V1.read_text())


@pytest.fixture
def v1_frame() -> pl.DataFrame:
    return pl.read_csv(TRAIN_V1).head(5)


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, dict]:
    """Small models saved by the optboost under test (its current format)."""
    return fm.build_bases(tmp_path_factory.mktemp("bases"))


@pytest.fixture
def marker(tmp_path) -> Path:
    path = tmp_path / "markers" / fm.MARKER_NAME
    path.parent.mkdir()
    return path


def write(tmp_path: Path, doc: dict, name: str = "model.json") -> Path:
    path = tmp_path / name
    path.write_text(fm.dumps(doc), encoding="utf-8")
    return path


def shell_touch(marker: Path) -> str:
    return f"__import__('os').system('touch {marker}')"


def load_and_predict(path: Path, frame: pl.DataFrame):
    """Load and predict; returns the predictions, or the OptboostError raised.
    Any other exception propagates (and fails the test)."""
    try:
        model = optboost.load(path)
        return model.predict(frame)
    except optboost.OptboostError as error:
        return error


def assert_refused_or_inert(path: Path, frame: pl.DataFrame, marker: Path) -> None:
    """The file is refused with ModelFileError, or -- if the payload sits where
    the reader no longer looks -- loads and predicts without running it."""
    outcome = load_and_predict(path, frame)
    assert not marker.exists(), "the payload in the model file ran"
    if isinstance(outcome, optboost.OptboostError):
        assert isinstance(outcome, optboost.ModelFileError), repr(outcome)
    else:
        assert np.all(np.isfinite(outcome))


# ------------------------------------------------------------------ probes in a subprocess

PROBE = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
sys.path.insert(0, sys.argv[1])
import fuzz_models as fm
text = open(sys.argv[2], encoding="utf-8", errors="surrogateescape").read()
print(json.dumps(fm.evaluate(text, None, sys.argv[3], sys.argv[4])))
"""


def probe(tmp_path: Path, doc: dict | str, timeout: float = 60) -> dict:
    """fuzz_models.evaluate (load, then predict response / link / class on six
    rows) in a subprocess: its outcome, or crash / hang."""
    path = tmp_path / "probe.json"
    text = doc if isinstance(doc, str) else fm.dumps(doc)
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    markers = tmp_path / "probe-markers"
    markers.mkdir(exist_ok=True)
    command = [sys.executable, "-c", PROBE, str(FUZZ_DIR), str(path), str(tmp_path), str(markers)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "detail": f"no answer in {timeout} s"}
    if done.returncode != 0:
        return {"outcome": "crash", "detail": f"exit {done.returncode}: {done.stderr[-500:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_rejected(result: dict, error: str = "ModelFileError") -> None:
    assert result["outcome"] == "rejected", result
    assert error in result["mro"], result


def assert_safe(result: dict) -> None:
    """Refused with an OptboostError, or loaded with finite predictions."""
    assert result["outcome"] in ("rejected", "ok"), result


def run_cli(tmp_path: Path, model_path: Path, data: pl.DataFrame, timeout: float = 60):
    data_path = tmp_path / "data.parquet"
    data.write_parquet(data_path)
    return subprocess.run(
        [sys.executable, "-m", "optboost.cli", "predict", str(model_path), str(data_path)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_clean_cli_error(done: subprocess.CompletedProcess) -> None:
    assert done.returncode != 0, done.stdout[:500]
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], done.stderr


# ------------------------------------------------------------------ 1. code at load


def gadget_docs(v1: dict, marker: Path, secret: Path) -> dict[str, dict]:
    """The probe's tagged-JSON gadgets, each in the formula state of a v1 file."""
    gadgets = {
        "stateful_eval": {
            "__dataclass__": "formulaic.utils.stateful_transforms:stateful_eval",
            "fields": {
                "expr": shell_touch(marker),
                "env": None,
                "metadata": None,
                "state": None,
                "spec": None,
            },
        },
        "numpy.savetxt": {
            "__dataclass__": "formulaic.transforms.basis_spline:numpy.savetxt",
            "fields": {"fname": str(marker), "X": {"__ndarray__": [1.0], "dtype": "<f8"}},
        },
        "numpy.fromfile": {
            "__dataclass__": "formulaic.utils.code:numpy.fromfile",
            "fields": {"file": str(secret), "dtype": "uint8"},
        },
    }
    docs = {}
    for name, gadget in gadgets.items():
        doc = copy.deepcopy(v1)
        doc["design"]["formulaic"]["transform_state"] = {"__dict__": [["np.log1p(age)", gadget]]}
        docs[name] = doc
    return docs


@pytest.mark.parametrize("gadget", ["stateful_eval", "numpy.savetxt"])
def test_load_does_not_call_gadgets_from_formula_state(gadget, v1, v1_frame, marker, tmp_path):
    secret = tmp_path / "secret.txt"
    path = write(tmp_path, gadget_docs(v1, marker, secret)[gadget])
    assert_refused_or_inert(path, v1_frame, marker)


def test_load_does_not_read_files_named_in_formula_state(v1, v1_frame, marker, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"TOPSECRET-4711")
    path = write(tmp_path, gadget_docs(v1, marker, secret)["numpy.fromfile"])
    try:
        model = optboost.load(path)
    except optboost.OptboostError as error:
        assert isinstance(error, optboost.ModelFileError), repr(error)
        return
    # loaded: the file's bytes must not have been read into the model
    leaked = json.dumps(list(b"TOPSECRET-4711"))[1:-1]
    state = repr(vars(model.spec)) + json.dumps(model.to_dict(), default=repr)
    assert leaked not in state.replace(" ", "").replace(",", ", "), "numpy.fromfile ran at load"


def _doctored_pickle(monkeypatch, obj, state: dict) -> bytes:
    """A pickle that goes through optboost's own reduce path with ``state`` in
    place of the object's real state (Model: __getstate__ / __setstate__)."""
    with monkeypatch.context() as patch:
        patch.setattr(type(obj), "__getstate__", lambda self: state)
        data = pickle.dumps(obj)
    return data


def _globals_of(data: bytes) -> set[str]:
    names, strings = set(), []
    for opcode, arg, _ in pickletools.genops(data):
        if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif opcode.name == "STACK_GLOBAL":
            names.add(".".join(strings[-2:]))
        elif opcode.name == "GLOBAL":
            names.add(arg.replace(" ", "."))
    return names


# Python's pickle runs code by design: a pickle from an untrusted source is
# unsafe whatever optboost does (it can name os.system itself). These tests only
# check that optboost's own __reduce__ / __setstate__ path adds no second hole:
# a pickle naming nothing but optboost's classes, whose state carries the
# gadget, must not run it.
@pytest.mark.parametrize("gadget", ["stateful_eval", "numpy.savetxt"])
def test_unpickling_a_model_does_not_call_gadgets(gadget, v1, marker, tmp_path, monkeypatch):
    model = optboost.boost(
        "y ~ np.log1p(age) + x2 + s", pl.read_csv(TRAIN_V1), n_iter=2, progress=False
    )
    state = gadget_docs(v1, marker, tmp_path / "secret.txt")[gadget]
    data = _doctored_pickle(monkeypatch, model, state)
    assert all(name.startswith(("optboost.", "copyreg.", "builtins.")) for name in _globals_of(data))
    try:
        loaded = pickle.loads(data)
    except optboost.OptboostError as error:
        assert isinstance(error, optboost.ModelFileError), repr(error)
    else:
        loaded.predict(pl.read_csv(TRAIN_V1).head(3))
    assert not marker.exists(), "the gadget ran while unpickling"


def test_unpickling_a_design_spec_does_not_call_gadgets(v1, marker, tmp_path, monkeypatch):
    model = optboost.boost(
        "y ~ np.log1p(age) + x2 + s", pl.read_csv(TRAIN_V1), n_iter=2, progress=False
    )
    spec = model.spec
    design = gadget_docs(v1, marker, tmp_path / "secret.txt")["stateful_eval"]["design"]
    reduced = spec.__reduce__()
    if not (
        isinstance(reduced, tuple)
        and len(reduced) == 2
        and len(reduced[1]) == 1
        and isinstance(reduced[1][0], dict)
    ):
        pytest.skip("the design spec no longer pickles as (constructor, (dict,))")

    class Carrier:  # pickles exactly as the spec would, with the doctored dict
        def __reduce__(self):
            return (reduced[0], (design,))

    data = pickle.dumps(Carrier())
    assert all(name.startswith(("optboost.", "copyreg.", "builtins.")) for name in _globals_of(data))
    try:
        pickle.loads(data)
    except optboost.OptboostError:
        pass  # refused (a bare spec is not a model file: any OptboostError will do)
    assert not marker.exists(), "the gadget ran while unpickling a DesignSpec"


# ------------------------------------------------------------------ 2. code at predict


def with_term_payload(doc: dict, payload: str) -> dict:
    """Every occurrence of the term np.log1p(age) in the file replaced by the
    payload (formula, features, stored terms, state keys), as an editor would."""
    return json.loads(json.dumps(doc).replace(TERM, payload.replace("'", "\\u0027")))


def term_payload(marker: Path) -> str:
    return f"np.log1p(age + 0 * __import__('os').system('touch {marker}'))"


def test_predict_does_not_eval_stored_terms(v1, v1_frame, marker, tmp_path):
    path = write(tmp_path, with_term_payload(v1, term_payload(marker)))
    outcome = load_and_predict(path, v1_frame)
    assert not marker.exists(), "a stored term ran as Python at predict"
    assert isinstance(outcome, optboost.OptboostError), "a term with __import__ was accepted"


def test_predict_does_not_eval_stored_terms_current_format(bases, marker, tmp_path):
    doc = bases["regression"]
    assert TERM in json.dumps(doc)
    path = write(tmp_path, with_term_payload(doc, term_payload(marker)))
    outcome = load_and_predict(path, fm.predict_frame())
    assert not marker.exists(), "a stored term ran as Python at predict"
    assert isinstance(outcome, optboost.OptboostError), "a term with __import__ was accepted"


def test_cli_predict_does_not_eval_stored_terms(v1, v1_frame, marker, tmp_path):
    path = write(tmp_path, with_term_payload(v1, term_payload(marker)))
    done = run_cli(tmp_path, path, v1_frame)
    assert not marker.exists(), "optboost predict ran a stored term as Python"
    assert_clean_cli_error(done)


# ------------------------------------------------------------------ 3-4. deep and shared trees


def test_a_400000_node_chain_does_not_crash_predict(bases, tmp_path):
    doc = fm.with_tree(bases["regression"], fm.chain_nodes(400_000))
    result = probe(tmp_path, doc, timeout=120)
    assert result["outcome"] != "crash", "a 400,000-level tree overflows the stack"
    assert_safe(result)


def test_a_dag_of_shared_children_does_not_hang(bases, tmp_path):
    doc = fm.with_tree(bases["regression"], fm.dag_nodes(62))
    path = write(tmp_path, doc)
    assert path.stat().st_size < 40_000  # the probe's 33 KB file
    result = probe(tmp_path, doc, timeout=30)
    assert result["outcome"] != "hang", "Tree::depth() walks every path of a DAG"
    assert_rejected(result)  # a node with two parents is not a tree


# ------------------------------------------------------------------ 5. threads

THREADS = r"""
import json, os, resource, warnings
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
import numpy as np, optboost, polars as pl
frame = pl.DataFrame({"x": np.arange(50.0), "y": np.arange(50.0) % 7})
seen = []
def count(record):
    status = open("/proc/self/status").read()
    seen.append(int(status.split("Threads:")[1].split()[0]))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        optboost.boost("y ~ x", frame, n_iter=2, n_threads=10**6, progress=False, callback=count)
        error = None
    except optboost.OptboostError as e:
        error = type(e).__name__ + ": " + str(e)
print(json.dumps({"threads": max(seen or [0]), "error": error,
                  "warnings": [str(w.message) for w in caught], "cores": os.cpu_count()}))
"""


def test_a_million_threads_are_capped_to_the_cores_with_a_warning():
    try:
        done = subprocess.run(
            [sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("n_threads=10**6 did not finish training 2 iterations in 60 s")
    assert done.returncode == 0, done.stderr[-1000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"] is None, result
    assert result["threads"] <= result["cores"] + 16, result
    assert any("thread" in w.lower() for w in result["warnings"]), result


# ------------------------------------------------------------------ 6. values the core must refuse


def _categorical_feature(doc: dict) -> int:
    features = doc["model"]["model"]["features"]
    return next(i for i, f in enumerate(features) if "Categorical" in f["mapper"])


def test_a_categorical_split_without_its_category_is_refused(bases, tmp_path):
    doc = bases["regression"]
    feature = _categorical_feature(doc)
    nodes = [fm.split(1, 2, feature=feature), fm.leaf(-1.0), fm.leaf(1.0)]
    nodes[0]["category"] = None
    result = probe(tmp_path, fm.with_tree(doc, nodes))
    assert "internal error" not in result["detail"], result  # a caught panic
    assert_rejected(result)


@pytest.mark.parametrize(
    "base, name, value",
    [
        ("binary", "ridge", -5.0),
        ("binary", "beta", 0.0),
        ("binary", "beta", -2.0),
        ("pinball", "tau", 7.0),
        ("huber", "delta", -1.0),
    ],
)
def test_out_of_range_loss_parameters_are_refused(bases, tmp_path, base, name, value):
    doc = copy.deepcopy(bases[base])
    loss = doc["model"]["model"]["loss"]
    if name == "beta":
        loss.clear()
        loss.update(name="exponential", beta=value)
    else:
        loss[name] = value
    assert_rejected(probe(tmp_path, doc))


@pytest.mark.parametrize("weight", [1e308, -1e308])
def test_huge_tree_weights_are_refused_or_predict_finite(bases, tmp_path, weight):
    doc = copy.deepcopy(bases["regression"])
    model = doc["model"]["model"]
    model["weights"] = [weight] * len(model["weights"])
    assert_safe(probe(tmp_path, doc))


def test_a_softmax_model_with_one_output_is_refused(bases, tmp_path):
    doc = copy.deepcopy(bases["multiclass"])
    model = doc["model"]["model"]
    model["n_outputs"] = 1
    model["bias"] = model["bias"][:1]
    model["tree_outputs"] = [0] * len(model["tree_outputs"])
    assert_rejected(probe(tmp_path, doc))


@pytest.mark.parametrize("labels", [["hi", "lo"], ["hi", "lo", "mid", "extra"]])
def test_class_labels_not_matching_the_outputs_are_refused(bases, tmp_path, labels):
    doc = copy.deepcopy(bases["multiclass"])
    doc["design"]["target_encoding"]["labels"] = labels
    assert_rejected(probe(tmp_path, doc))


# ------------------------------------------------------------------ 7. error kinds for bad files


def test_deeply_nested_json_is_a_model_file_error(v1, bases, tmp_path):
    doc = copy.deepcopy(bases["regression"])
    doc["design"]["features"][0]["levels"] = fm._nested(100_000)
    assert_rejected(probe(tmp_path, doc))
    assert_rejected(probe(tmp_path, "[" * 100_000 + "]" * 100_000))
    old = copy.deepcopy(v1)
    old["design"]["formulaic"]["transform_state"] = fm._nested(100_000, {"__tuple__": []})
    assert_rejected(probe(tmp_path, old))


MALFORMED = {
    "stop is empty": lambda d: d.__setitem__("stop", []),
    "design is a list": lambda d: d.__setitem__("design", []),
    "features is a number": lambda d: d["design"].__setitem__("features", 5),
    "feature is a string": lambda d: d["design"]["features"].__setitem__(0, "age"),
    "feature kind unknown": lambda d: d["design"]["features"][0].__setitem__("kind", "bogus"),
    "levels not strings": lambda d: _first_categorical(d).__setitem__("levels", [1, None, 2.5]),
    "levels a string": lambda d: _first_categorical(d).__setitem__("levels", "abc"),
    "levels nested": lambda d: _first_categorical(d).__setitem__("levels", [["a"], {"b": 1}]),
    "source_columns empty": lambda d: d["design"]["features"][1].__setitem__("source_columns", []),
    "target_encoding labels a number": lambda d: d["design"]["target_encoding"].__setitem__("labels", 5),
    "task unknown": lambda d: d["design"]["target_encoding"].__setitem__("task", "bogus"),
    "history a list": lambda d: d.__setitem__("history", []),
    "params a list": lambda d: d.__setitem__("params", [1, 2]),
    "model a string": lambda d: d.__setitem__("model", "x"),
    "trees missing": lambda d: d["model"]["model"].pop("trees"),
    "bias a string": lambda d: d["model"]["model"].__setitem__("bias", "x"),
    "no features in the core": lambda d: d["model"]["model"].__setitem__("features", []),
    "n_outputs huge": lambda d: d["model"]["model"].__setitem__("n_outputs", 2**63),
    "file is a list": None,
}


def _first_categorical(doc: dict) -> dict:
    return next(f for f in doc["design"]["features"] if f.get("kind") == "categorical")


@pytest.mark.parametrize("mutation", sorted(MALFORMED))
def test_malformed_files_raise_model_file_error(bases, tmp_path, mutation):
    doc = copy.deepcopy(bases["regression"])
    if MALFORMED[mutation] is None:
        doc = [doc]
    else:
        MALFORMED[mutation](doc)
    result = probe(tmp_path, doc)
    assert_safe(result)  # never IndexError, AttributeError, AssertionError, pyarrow errors...
    if result["outcome"] == "rejected" and result["stage"] == "load":
        assert "ModelFileError" in result["mro"], result


@pytest.mark.parametrize("mutation", ["stop is empty", "design is a list", "levels not strings"])
def test_cli_predict_on_a_malformed_file_prints_one_line(bases, tmp_path, mutation):
    doc = copy.deepcopy(bases["regression"])
    MALFORMED[mutation](doc)
    done = run_cli(tmp_path, write(tmp_path, doc), fm.predict_frame())
    assert_clean_cli_error(done)


def test_cli_predict_on_a_truncated_file_prints_one_line(bases, tmp_path):
    text = fm.dumps(bases["regression"])
    path = tmp_path / "model.json"
    path.write_text(text[: len(text) // 2])
    assert_clean_cli_error(run_cli(tmp_path, path, fm.predict_frame()))


def test_loading_a_missing_file_is_a_model_file_error(tmp_path):
    with pytest.raises(optboost.ModelFileError):
        optboost.load(tmp_path / "no-such-model.json")


# ------------------------------------------------------------------ 7. error kinds for formulas and data


@pytest.fixture
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(0)
    n = 40
    x = rng.normal(size=n)
    return pl.DataFrame(
        {"x": x, "s": rng.choice(["a", "b"], n), "w": rng.uniform(0.5, 1, n), "y": 2 * x}
    )


def fit(formula: str, data, **kwargs):
    return optboost.boost(formula, data, n_iter=2, max_depth=2, progress=False, **kwargs)


def test_braces_in_a_formula_work_or_are_a_formula_error(frame):
    try:
        model = fit("y ~ {x**2}", frame)
    except optboost.OptboostError as error:
        assert isinstance(error, optboost.FormulaError), repr(error)
    else:
        assert model.predict(frame).shape == (frame.height,)


def test_a_bar_in_a_formula_is_a_formula_error(frame):
    with pytest.raises(optboost.FormulaError):
        fit("y ~ x | s", frame)


def test_an_expression_as_weights_is_an_optboost_error(frame):
    with pytest.raises(optboost.OptboostError, match="weight"):
        fit("y ~ x", frame, weights=pl.col("w"))


@pytest.mark.parametrize("formula", ["y ~ x +", "y ~ (x", "y ~ x + + ", "~ ~ x", "y ~ x)"])
def test_formula_syntax_errors_have_no_ansi_codes(frame, formula, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    with pytest.raises(optboost.FormulaError) as caught:
        fit(formula, frame)
    assert "\x1b[" not in str(caught.value)


def test_a_wrong_dtype_at_predict_is_a_data_error(frame):
    model = fit("y ~ x + s", frame)
    with pytest.raises(optboost.DataError):
        model.predict(frame.with_columns(x=pl.lit("text")))


def test_numpy_input_to_boost_is_a_data_error():
    with pytest.raises(optboost.DataError):
        fit("y ~ a", np.zeros((10, 2)))


@pytest.mark.parametrize("kwargs, suggestion", [({"method": "gmb"}, "gbm"), ({"loss": "squred"}, "squared")])
def test_a_misspelled_method_or_loss_gets_did_you_mean(frame, kwargs, suggestion):
    with pytest.raises(optboost.ParameterError, match=f"did you mean.*{suggestion}"):
        fit("y ~ x", frame, **kwargs)


def test_an_empty_frame_says_it_has_no_rows(frame):
    with pytest.raises(optboost.DataError) as caught:
        fit("y ~ x", frame.head(0))
    message = str(caught.value)
    assert "has 0: []" not in message
    assert "no rows" in message or "empty" in message, message


# ------------------------------------------------------------------ 8. silent losses


@pytest.fixture
def one_frame() -> pl.DataFrame:
    rng = np.random.default_rng(1)
    one = rng.normal(size=60)
    return pl.DataFrame({"1": one, "x2": rng.normal(size=60), "y": 3 * one})


@pytest.mark.parametrize("formula", ["y ~ .", "y ~ `1` + x2"])
def test_a_column_named_1_is_not_silently_left_out(one_frame, formula):
    try:
        model = fit(formula, one_frame)
    except optboost.OptboostError:
        return  # refusing the name out loud is fine
    assert "1" in model.feature_names, model.feature_names


@pytest.mark.parametrize("case", ["huge target", "learning rate 100"])
def test_a_model_with_no_trees_is_not_returned_silently(frame, case):
    data, kwargs = frame, {}
    if case == "huge target":
        data = frame.with_columns(y=pl.col("y") * 1e154)
    else:
        kwargs = {"learning_rate": 100.0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = optboost.boost("y ~ x", data, n_iter=5, progress=False, **kwargs)
        except optboost.OptboostError:
            return
    if model.n_trees == 0:
        assert caught, f"{case}: a model with 0 trees and no warning ({model.stop_reason})"


# ------------------------------------------------------------------ 9. concurrent update


def test_concurrent_updates_raise_an_optboost_error_or_both_work():
    rng = np.random.default_rng(2)
    n = 20_000
    x = rng.normal(size=(n, 4))
    data = pl.DataFrame({f"x{i}": x[:, i] for i in range(4)}).with_columns(
        y=pl.Series(x @ np.arange(1.0, 5.0))
    )
    model = optboost.boost("y ~ .", data, n_iter=1, max_depth=4, n_threads=1, progress=False)
    errors: list[BaseException] = []

    def update():
        try:
            model.update(15)
        except BaseException as error:  # noqa: BLE001 - collected and checked below
            errors.append(error)

    for _ in range(3):
        threads = [threading.Thread(target=update) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    for error in errors:
        assert isinstance(error, optboost.OptboostError), repr(error)
    assert np.all(np.isfinite(model.predict(data.head(10))))


# ------------------------------------------------------------------ found by the 100,000-case campaign


def _saved(tmp_path: Path, formula: str, frame: pl.DataFrame, **params) -> dict:
    model = optboost.boost(formula, frame, n_iter=3, **params)
    path = tmp_path / "base.json"
    model.save(path)
    return json.loads(path.read_text())


def _campaign_frame() -> pl.DataFrame:
    rng = np.random.default_rng(4)
    return pl.DataFrame(
        {
            "x": rng.normal(size=60),
            "s": rng.choice(["a", "b", "c"], size=60),
            "y": rng.integers(0, 2, size=60),
        }
    )


def test_class_labels_of_mixed_types_are_refused(tmp_path):
    doc = _saved(tmp_path, "y ~ x + s", _campaign_frame(), loss="logistic")
    doc["design"]["target_encoding"]["labels"] = ["0", 1]
    with pytest.raises(optboost.ModelFileError, match="strings, or a list of numbers"):
        optboost.load(write(tmp_path, doc))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_class_labels_that_are_not_finite_are_refused(tmp_path, bad):
    # the model fuzz's case 41:38427: labels [NaN, 1] loaded and predict(type="class") gave NaN
    doc = _saved(tmp_path, "y ~ x + s", _campaign_frame(), loss="logistic")
    doc["design"]["target_encoding"]["labels"] = [bad, 1]
    with pytest.raises(optboost.ModelFileError, match="classes must be finite"):
        optboost.load(write(tmp_path, doc))


def test_repeated_levels_are_refused(tmp_path):
    doc = _saved(tmp_path, "y ~ x + s", _campaign_frame())
    doc["design"]["features"][1]["levels"] = ["a", "a", "c"]
    with pytest.raises(optboost.ModelFileError, match="repeat a level"):
        optboost.load(write(tmp_path, doc))


def test_a_term_reading_a_column_no_feature_names_is_refused(tmp_path):
    doc = _saved(tmp_path, "y ~ np.log1p(np.abs(x)) + s", _campaign_frame())
    doc["design"]["terms"][0]["factors"] = ["np.log1p(np.abs(gbm))"]
    with pytest.raises(optboost.ModelFileError, match="no feature lists"):
        optboost.load(write(tmp_path, doc))


def test_learnt_numbers_too_large_for_a_float_are_refused(tmp_path):
    doc = _saved(tmp_path, "y ~ center(x) + s", _campaign_frame())
    doc["design"]["terms"][0]["state"]["center(x)"]["mean"] = 2**1100
    with pytest.raises(optboost.ModelFileError, match="finite numbers only"):
        optboost.load(write(tmp_path, doc))


# ------------------------------------------------------------------ issue 39: validation bounds work


def _counts_frame() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    x = rng.normal(size=80)
    return pl.DataFrame(
        {
            "x": x,
            "s": rng.choice(["a", "b", "c", "d"], size=80),
            "n": rng.poisson(np.exp(0.5 * x)).astype(np.float64),
        }
    )


@pytest.fixture(scope="module")
def poisson_doc(tmp_path_factory) -> dict:
    """A saved Poisson (log link) AGBM model: its file holds the iteration path with weights."""
    path = tmp_path_factory.mktemp("poisson") / "model.json"
    optboost.boost(
        "n ~ x + s", _counts_frame(), loss="poisson", method="agbm", n_iter=5, progress=False
    ).save(path)
    return json.loads(path.read_text())


def _core_model(doc: dict) -> dict:
    return doc["model"]["model"]


def _wide_softmax(doc: dict, n_outputs: int) -> dict:
    """The multiclass base declaring ``n_outputs`` classes (labels, bias and outputs agree)."""
    doc = copy.deepcopy(doc)
    core = _core_model(doc)
    core["n_outputs"] = n_outputs
    core["bias"] = [0.0] * n_outputs
    doc["design"]["target_encoding"]["labels"] = [f"class{i}" for i in range(n_outputs)]
    return doc


def test_a_softmax_file_of_2_20_outputs_is_refused_at_load(bases, tmp_path):
    result = probe(tmp_path, _wide_softmax(bases["multiclass"], 1 << 20), timeout=120)
    assert_rejected(result)
    assert "n_outputs = 1048576" in result["detail"], result


WIDE_PREDICT = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, optboost, polars as pl
import fuzz_models as fm
model = optboost.load(sys.argv[2])
frame = pl.concat([fm.predict_frame()] * 2000)  # 12,000 rows x 65,536 outputs: 6.3 GB of scores
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
try:
    model.predict(frame, type="link")
    print(json.dumps({"error": None}))
except optboost.OptboostError as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error)}))
"""


@pytest.mark.timeout(300)
def test_rows_times_outputs_beyond_memory_is_an_error_not_an_abort(bases, tmp_path):
    path = write(tmp_path, _wide_softmax(bases["multiclass"], 1 << 16))
    done = subprocess.run(
        [sys.executable, "-c", WIDE_PREDICT, str(FUZZ_DIR), str(path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-1000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"] == "DataError", result
    assert "12000 rows × 65536 scores per row" in result["message"], result


@pytest.mark.parametrize("bias", [800.0, 710.0])
def test_a_log_link_bias_whose_mean_overflows_is_refused(poisson_doc, tmp_path, bias):
    doc = copy.deepcopy(poisson_doc)
    _core_model(doc)["bias"] = [bias]
    with pytest.raises(optboost.ModelFileError, match="log link of the poisson loss"):
        optboost.load(write(tmp_path, doc))


@pytest.mark.parametrize("loss", ["poisson", "gamma", "tweedie"])
def test_log_link_responses_of_huge_leaves_are_finite(poisson_doc, tmp_path, loss):
    doc = copy.deepcopy(poisson_doc)
    core = _core_model(doc)
    core["loss"] = {"name": loss, "p": 1.5} if loss == "tweedie" else {"name": loss}
    for tree in core["trees"]:
        tree["value"] = [1e29] * len(tree["value"])  # inside the 1e30 bound on a term
    model = optboost.load(write(tmp_path, doc))
    frame = _counts_frame().head(10)
    response = model.predict(frame, type="response")
    assert np.all(response == np.finfo(np.float64).max), response
    for k in range(model.kept_iteration + 1):
        assert np.all(np.isfinite(model.predict(frame, type="response", iteration=k)))
    stages = model.staged_predict(frame, type="response")
    assert all(np.all(np.isfinite(s)) for s in stages)


def _damaged_path(doc: dict, damage: str) -> dict:
    doc = copy.deepcopy(doc)
    core = _core_model(doc)
    if damage == "weight 1e308":
        core["iteration_weights"][2][0] = 1e308
    elif damage == "weight 1e300":
        core["iteration_weights"][2][0] = 1e300
    elif damage == "trees beyond the model":
        core["iteration_trees"][1] = len(core["trees"]) + 3
    elif damage == "trees decreasing":
        core["iteration_trees"][0], core["iteration_trees"][3] = (
            core["iteration_trees"][3],
            core["iteration_trees"][0],
        )
    elif damage == "weights shorter than their trees":
        core["iteration_weights"][3].pop()
    elif damage == "weights for fewer iterations":
        core["iteration_weights"].pop()
    elif damage == "best iteration beyond the path":
        core["best_iteration"] = 10**18
    return doc


@pytest.mark.parametrize(
    "damage, message",
    [
        ("weight 1e308", "iteration_weights[2][0] = 1e308"),
        ("weight 1e300", "iteration_weights[2][0] = 1e300"),
        ("trees beyond the model", "iteration_trees[1]"),
        ("trees decreasing", "iteration_trees decreases"),
        ("weights shorter than their trees", "iteration_weights[3] has"),
        ("weights for fewer iterations", "4 iteration_weights for 5 iteration_trees"),
        ("best iteration beyond the path", "best_iteration = 1000000000000000000"),
    ],
)
def test_an_inconsistent_iteration_path_is_refused_at_load(poisson_doc, tmp_path, damage, message):
    path = write(tmp_path, _damaged_path(poisson_doc, damage))
    with pytest.raises(optboost.ModelFileError) as caught:
        optboost.load(path)
    assert message in str(caught.value)
    assert "internal error" not in str(caught.value)


def test_a_100_digit_thread_count_is_refused_at_load_and_by_the_cli(poisson_doc, tmp_path):
    doc = copy.deepcopy(poisson_doc)
    doc["params"]["n_threads"] = "9" * 100
    path = write(tmp_path, doc)
    with pytest.raises(optboost.ModelFileError, match="n_threads"):
        optboost.load(path)
    assert_clean_cli_error(run_cli(tmp_path, path, _counts_frame().head(5)))
    # A count within the bound still predicts.
    doc["params"]["n_threads"] = "2"
    model = optboost.load(write(tmp_path, doc))
    assert np.all(np.isfinite(model.predict(_counts_frame().head(5))))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_load_refuses_what_is_not_a_regular_file(tmp_path, kind):
    if kind == "device":
        path = Path("/dev/zero")
    elif kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)  # no writer: opening it for reading used to block for ever
    else:
        path = tmp_path
    with pytest.raises(optboost.ModelFileError, match="not a regular file"):
        optboost.load(path)


def test_design_levels_must_match_the_cores_mapper(poisson_doc, tmp_path):
    doc = copy.deepcopy(poisson_doc)
    feature = next(f for f in doc["design"]["features"] if f.get("levels"))
    feature["levels"] = [f"level{i}" for i in range(10**6)]
    with pytest.raises(optboost.ModelFileError) as caught:
        optboost.load(write(tmp_path, doc))
    message = str(caught.value)
    assert f"feature {feature['name']!r}" in message and "1000000 levels" in message, message
    assert "4 levels in the model" in message, message


@pytest.mark.parametrize(
    "field, value, shown",
    [("bias", [1e308], "bias 0 = 1e308"), ("loss", {"name": "tweedie", "p": 1e308}, "= 1e308")],
)
def test_numbers_in_rejection_messages_are_printed_as_numbers(
    poisson_doc, tmp_path, field, value, shown
):
    doc = copy.deepcopy(poisson_doc)
    _core_model(doc)[field] = value
    with pytest.raises(optboost.ModelFileError) as caught:
        optboost.load(write(tmp_path, doc))
    message = str(caught.value)
    assert shown in message, message
    assert max(len(run) for run in re.findall(r"\d+", message)) < 20, message


def test_a_huge_integer_in_the_header_is_printed_as_a_number(poisson_doc, tmp_path):
    doc = copy.deepcopy(poisson_doc)
    path = tmp_path / "model.json"
    path.write_text(fm.dumps(doc).replace('"version": 1', '"version": 1' + "0" * 308, 1))
    with pytest.raises(optboost.ModelFileError) as caught:
        optboost.load(path)
    message = str(caught.value)
    assert "1e+308" in message and "0" * 20 not in message, message
