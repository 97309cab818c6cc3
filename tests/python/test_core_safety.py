"""The core's behaviour at the Python boundary on hostile input: corrupted model
files, absurd thread counts, overlapping calls on one model. Every failure is an
OptboostError subclass; no PanicException (a BaseException) and no raw
RuntimeError from pyo3 reaches the caller."""

from __future__ import annotations

import copy
import json
import threading
import time
import warnings

import numpy as np
import optboost
import pytest
from support import regression_frame

FORMULA = "y ~ a + b + s"


@pytest.fixture(scope="module")
def frame():
    return regression_frame()


@pytest.fixture(scope="module")
def saved(frame) -> dict:
    return optboost.boost(FORMULA, frame, n_iter=5, progress=False).to_dict()


def _set_nodes(content: dict, nodes: list[dict]) -> None:
    """Replaces the first tree by ``nodes`` (in the compact layout of format version 2)."""
    splits = [n for n in nodes if n["left"] != 0]
    tree = {name: [n[name] for n in nodes] for name in ("left", "value", "count")}
    for name in ("right", "feature", "threshold", "bin", "default_left", "gain"):
        tree[name] = [n[name] for n in splits]
    content["model"]["model"]["trees"][0] = {**tree, "categories": []}


def _split(left: int, right: int) -> dict:
    return {"feature": 0, "left": left, "right": right, "threshold": 0.5, "bin": 1,
            "default_left": True, "category": None, "value": 0.0, "gain": 1.0, "count": 2}


def _leaf() -> dict:
    return {**_split(0, 0), "value": 0.1}


def _corruptions(saved: dict):
    """(name, file content) of the probe's payloads."""
    chain = copy.deepcopy(saved)
    nodes = []
    for i in range(20_000):
        nodes += [_split(2 * i + 2, 2 * i + 1), _leaf()]
    _set_nodes(chain, nodes + [_leaf()])
    yield "deep chain", chain
    dag = copy.deepcopy(saved)
    _set_nodes(dag, [_split(i + 1, i + 1) for i in range(61)] + [_leaf()])
    yield "shared children", dag
    for t, tree in enumerate(saved["model"]["model"]["trees"]):
        categories = tree.get("category") or []
        if any(c is not None for c in categories):
            null_category = copy.deepcopy(saved)
            null_category["model"]["model"]["trees"][t]["category"] = [None] * len(categories)
            yield "null category", null_category
    for loss in [{"name": "pinball", "tau": 7.0}, {"name": "huber", "delta": -1.0},
                 {"name": "logistic", "ridge": -5.0}, {"name": "exponential", "beta": 0.0}]:
        bad_loss = copy.deepcopy(saved)
        bad_loss["model"]["model"]["loss"] = loss
        yield f"loss {loss}", bad_loss
    for weight in [1e308, -1e308]:
        big = copy.deepcopy(saved)
        big["model"]["model"]["weights"][0] = weight
        yield f"weight {weight}", big


def test_corrupted_model_files_raise_model_file_error(saved, frame, tmp_path):
    path = tmp_path / "corrupted.json"
    optboost.Model.from_dict(saved).predict(frame)
    for name, content in _corruptions(saved):
        path.write_text(json.dumps(content))
        with pytest.raises(optboost.ModelFileError, match="inconsistent model"):
            optboost.load(path)
        with pytest.raises(optboost.ModelFileError):
            optboost.Model.from_dict(content)


def test_a_thread_count_above_the_machine_warns_and_trains_the_same_model(frame):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        capped = optboost.boost(FORMULA, frame, n_iter=3, n_threads=100_000, progress=False)
    messages = [w for w in caught if "n_threads=100000" in str(w.message)]
    assert len(messages) == 1 and messages[0].category is UserWarning
    # The warning points at the caller of boost(), not at optboost's own code.
    assert messages[0].filename == __file__
    one = optboost.boost(FORMULA, frame, n_iter=3, n_threads=1, progress=False)
    assert capped.to_dict()["model"] == one.to_dict()["model"]


def test_predictions_do_not_depend_on_the_thread_count_and_a_bad_count_is_an_error(frame):
    model = optboost.boost(FORMULA, frame, n_iter=5, n_threads=1, progress=False)
    by_fit = model.predict(frame)  # the fit's n_threads
    staged = model.staged_predict(frame, [2, 5])
    for n_threads in (0, 1, 2, 100_000):
        np.testing.assert_array_equal(model.predict(frame, n_threads=n_threads), by_fit)
        for got, want in zip(model.staged_predict(frame, [2, 5], n_threads=n_threads), staged):
            np.testing.assert_array_equal(got, want)
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(optboost.ParameterError, match="n_threads"):
            model.predict(frame, n_threads=bad)


def test_a_second_update_while_one_runs_is_a_busy_error():
    big = regression_frame(n=200_000, seed=3)
    model = optboost.boost(FORMULA, big, n_iter=1, max_depth=6, progress=False)
    booster = model._booster
    booster.extend(1_000_000)
    errors: list[BaseException] = []

    def train_for_a_while():
        try:
            booster.advance(1_000_000, 1.5)
        except BaseException as error:  # noqa: BLE001 - any exception fails the test below
            errors.append(error)

    worker = threading.Thread(target=train_for_a_while)
    worker.start()
    time.sleep(0.3)
    try:
        with pytest.raises(optboost.TrainingError, match="busy"):
            model.update(5)
        with pytest.raises(optboost.TrainingError, match="busy"):
            booster.iteration
    finally:
        worker.join()
    assert errors == []
    # Once the first call is done, the model trains again.
    model.update(1)


def test_overlapping_updates_from_two_threads_fail_cleanly():
    big = regression_frame(n=100_000, seed=4)
    model = optboost.boost(FORMULA, big, n_iter=1, progress=False)
    errors: list[BaseException] = []

    def update():
        try:
            model.update(15)
        except BaseException as error:  # noqa: BLE001 - classified below
            errors.append(error)

    threads = [threading.Thread(target=update) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for error in errors:
        assert isinstance(error, optboost.TrainingError) and "busy" in str(error), repr(error)
