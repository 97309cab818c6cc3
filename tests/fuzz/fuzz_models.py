#!/usr/bin/env python
"""Fuzz optboost's model files and prediction frames.

A model file is data, never code: whatever a file or a frame holds, loading
and predicting must either work (finite predictions) or raise an
``optboost.OptboostError`` subclass -- never another exception, a crash, a
hang, or a side effect of code smuggled into the file.

    python tests/fuzz/fuzz_models.py --cases 100000 --seed 1
    python tests/fuzz/fuzz_models.py --seconds 600 --workers 2
    python tests/fuzz/fuzz_models.py --replay 1:4711      # one case, in-process, verbose

Each case is generated *inside* a worker subprocess from ``(seed, index)``,
so a segfault or a hang (> ``--timeout`` s) kills only that worker: the case
is counted as ``crash`` / ``hang`` and a new worker takes over. Outcomes:

    rejected     an OptboostError subclass (at load or at predict)
    ok           loaded and predicted, every prediction finite
    other        any other exception type (RecursionError, IndexError, ...)
    nonfinite    predictions with NaN or infinity
    side_effect  a payload in the file ran (its marker file exists)
    crash        the worker died (segfault, abort, ...)
    hang         no answer within the timeout

and for the sampled CLI runs (``optboost predict model.json data.parquet``):

    cli_ok, cli_rejected (exit != 0 with a one-line error, no traceback),
    cli_traceback, cli_bad_output, cli_crash, cli_hang, cli_side_effect

This module is also imported by tests/python/test_fuzz_models.py for the
mutation operators, the base models and the worker.
"""

from __future__ import annotations

import argparse
import base64
import collections
import copy
import json
import math
import os
import pickle
import random
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------- base models

N_TRAIN = 40


def train_frame(seed: int = 0):
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    n = N_TRAIN
    age = rng.uniform(1, 80, n)
    x2 = rng.normal(size=n)
    s = rng.choice(["a", "b", "c"], n)
    y = 0.05 * age + x2 + (s == "a") * 1.0
    return pl.DataFrame(
        {
            "age": age,
            "x2": x2,
            "s": s,
            "y": y,
            "yb": (y > np.median(y)).astype(np.int64),
            "label": np.where(x2 > 0.5, "hi", np.where(x2 < -0.5, "lo", "mid")),
            "n": np.floor(np.exp(0.5 * x2) + (s == "a")),
        }
    )


def predict_frame():
    return train_frame(seed=1).head(6)


# name: (formula, loss, extra params)
BASES: dict[str, tuple[str, str, dict]] = {
    "regression": ("y ~ np.log1p(age) + x2 + s + C(s):x2", "squared", {}),
    "binary": ("yb ~ age + x2 + s", "logistic(0.5)", {}),
    "multiclass": ("label ~ age + x2 + s", "softmax", {}),
    "pinball": ("y ~ age + scale(x2) + s", "pinball(0.9)", {}),
    "huber": ("y ~ age + x2", "huber(1.5)", {"method": "agbm"}),
    # A log link, and a momentum method's iteration path with weights.
    "poisson": ("n ~ age + x2 + s", "poisson", {"method": "agbm"}),
}


def build_bases(directory: str | os.PathLike) -> dict[str, dict]:
    """Fit the small base models, save them (and the prediction frame) in
    ``directory``; returns name -> saved dict."""
    import optboost

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    frame = train_frame()
    predict_frame().write_parquet(directory / "data.parquet")
    docs = {}
    for name, (formula, loss, extra) in BASES.items():
        params = {"n_iter": 3, "max_depth": 2, "n_threads": 1, "progress": False, **extra}
        model = optboost.boost(formula, frame, loss=loss, **params)
        model.save(directory / f"{name}.json")
        with open(directory / f"{name}.json", encoding="utf-8") as file:
            docs[name] = json.load(file)
    return docs


def load_bases(directory: str | os.PathLike) -> dict[str, dict]:
    directory = Path(directory)
    docs = {}
    for name in BASES:
        with open(directory / f"{name}.json", encoding="utf-8") as file:
            docs[name] = json.load(file)
    return docs


# ---------------------------------------------------------------- payloads

MARKER_NAME = "pwned"


def code_payloads(marker_dir: str) -> list[str]:
    """Strings that run a command creating a file in ``marker_dir`` if they
    ever reach eval (as a formula term or a stateful_eval expr)."""
    marker = os.path.join(marker_dir, MARKER_NAME)
    return [
        f"__import__('os').system('touch {marker}')",
        f"np.log1p(age + 0 * __import__('os').system('touch {marker}'))",
        f"x2 + 0 * len(open('{marker}', 'w').name)",
        f"C(s, levels=__import__('os').system('touch {marker}'))",
        f"{{__import__('pathlib').Path('{marker}').touch() or x2}}",
    ]


def gadgets(marker_dir: str) -> list[dict]:
    """Tagged-JSON entries that call something other than a formulaic class
    when the formula state is decoded."""
    marker = os.path.join(marker_dir, MARKER_NAME)
    return [
        {
            "__dataclass__": "formulaic.utils.stateful_transforms:stateful_eval",
            "fields": {
                "expr": f"__import__('os').system('touch {marker}')",
                "env": None,
                "metadata": None,
                "state": None,
                "spec": None,
            },
        },
        {
            "__dataclass__": "formulaic.transforms.basis_spline:numpy.savetxt",
            "fields": {"fname": marker, "X": {"__ndarray__": [1.0], "dtype": "<f8"}},
        },
        {
            "__dataclass__": "formulaic.utils.code:numpy.fromfile",
            "fields": {"file": "/etc/hostname", "dtype": "uint8"},
        },
        {"__object__": "formulaic.transforms.basis_spline:numpy.random.seed"},
        {"__enum__": "formulaic.utils.code:numpy.__dict__", "name": "savetxt"},
        {"__ndarray__": [1, 2], "dtype": "O"},
        {"__ndarray__": [[1], [2, 3]], "dtype": "<f8"},
        {"__ndarray__": 1, "dtype": "V1000000000"},
        {"__dataclass__": "os:system", "fields": {"command": f"touch {marker}"}},
        {"__dataclass__": "formulaic:__builtins__.eval", "fields": {}},
    ]


EXTREMES: list[Any] = [
    0,
    -1,
    1,
    2,
    255,
    256,
    2**31 - 1,
    2**31,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63),
    10**40,
    0.5,
    -0.0,
    1e-300,
    5e-324,
    1e308,
    -1e308,
    float("nan"),
    float("inf"),
    float("-inf"),
    True,
    False,
    None,
    "",
    "x",
    "0",
    "nan",
    "\x00",
    "é∂\u202e",
    "a" * 10_000,
    [],
    {},
    [None],
    [[]],
    {"": None},
    {"__tuple__": []},
    {"__dict__": [[[], 1]]},
]

KINDS = (
    "set",
    "delete",
    "truncate",
    "duplicate",
    "empty",
    "wrap",
    "nest",
    "numeric",
    "swap",
    "gadget",
    "payload",
    "child",
    "rename",
)


MAX_WALK_DEPTH = 40


def _walk(value: Any, path: tuple, out: list) -> None:
    out.append(path)
    if len(path) >= MAX_WALK_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _walk(item, path + (key,), out)
    elif isinstance(value, list):
        if len(value) > 8 and all(isinstance(v, (int, float)) for v in value):
            indices: Any = (0, len(value) // 2, len(value) - 1)  # long numeric arrays
        elif len(value) > 64:
            indices = (0, 1, len(value) // 2, len(value) - 1)  # long chains of nodes
        else:
            indices = range(len(value))
        for index in indices:
            _walk(value[index], path + (index,), out)


def all_paths(doc: Any) -> list[tuple]:
    out: list[tuple] = []
    _walk(doc, (), out)
    return out


def _get(doc: Any, path: tuple) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


NEST_TOKEN = "@@optboost-fuzz-nest:"


def _nested(depth: int, leaf: Any = 0) -> Any:
    """A placeholder for ``depth`` nested lists around ``leaf``; ``dumps``
    writes it out as text (deep Python objects would break the fuzzer's own
    recursion, not optboost's)."""
    return f"{NEST_TOKEN}{depth}:{json.dumps(leaf)}@@"


def dumps(doc: Any) -> str:
    """JSON text of a mutated document, with nesting placeholders expanded.
    NaN / Infinity are written as Python's json does (and reads back)."""
    text = json.dumps(doc)
    while NEST_TOKEN in text:
        try:
            start = text.index('"' + NEST_TOKEN)
            end = text.index('@@"', start + len(NEST_TOKEN)) + 3
            depth_text, _, leaf = json.loads(text[start:end])[len(NEST_TOKEN) : -2].partition(":")
            depth = int(depth_text)
        except ValueError:
            # A placeholder that ended up inside another string (a mutated key, say)
            # is left as plain text.
            return text.replace(NEST_TOKEN, "optboost-fuzz-nest-unexpanded:")
        text = text[:start] + "[" * depth + leaf + "]" * depth + text[end:]
    return text


def numeric_variants(x: Any) -> list[Any]:
    return [-x, x + 1, x - 1, x * 1e300, x * 2**40, x / 1e300, 0, -x - 1]


def apply_op(doc: Any, op: tuple, marker_dir: str) -> Any:
    """Apply one mutation ``(kind, path_index, value, choice)`` to ``doc`` (in
    place when possible; returns the new root)."""
    kind, path_index, value, choice = op
    paths = all_paths(doc)
    path = paths[path_index % len(paths)]
    target = _get(doc, path)
    if kind == "set":
        return _set(doc, path, copy.deepcopy(value))
    if kind == "delete":
        if not path:
            return {}
        parent = _get(doc, path[:-1])
        del parent[path[-1]]
        return doc
    if kind == "truncate" and isinstance(target, (list, str)):
        return _set(doc, path, target[: choice % (len(target) + 1)])
    if kind == "duplicate" and isinstance(target, list):
        if target and choice % 2:
            item = target[choice % len(target)]
            return _set(doc, path, target + [copy.deepcopy(item)])
        return _set(doc, path, target + copy.deepcopy(target))
    if kind == "empty":
        return _set(doc, path, type(target)() if isinstance(target, (list, dict, str)) else None)
    if kind == "wrap":
        wrapped = [[target], {"v": target}, {"__tuple__": target}, {"__dict__": target}]
        return _set(doc, path, wrapped[choice % len(wrapped)])
    if kind == "nest":
        depth = (10, 200, 1_000, 5_000, 100_000)[choice % 5]
        leaf_value = target if choice % 2 and len(json.dumps(target)) < 10_000 else 0
        return _set(doc, path, _nested(depth, leaf_value))
    if kind == "numeric" and isinstance(target, (int, float)) and not isinstance(target, bool):
        variants = numeric_variants(target)
        return _set(doc, path, variants[choice % len(variants)])
    if kind == "swap":
        other = paths[choice % len(paths)]
        if path and other and other[: len(path)] != path and path[: len(other)] != other:
            a, b = copy.deepcopy(target), copy.deepcopy(_get(doc, other))
            doc = _set(doc, path, b)
            return _set(doc, other, a)
        return doc
    if kind == "gadget":
        options = gadgets(marker_dir)
        return _set(doc, path, copy.deepcopy(options[choice % len(options)]))
    if kind == "payload":
        options = code_payloads(marker_dir)
        payload = options[choice % len(options)]
        terms = _terms(doc)
        if terms is not None and choice % 3:
            terms[choice % len(terms)] = payload
            return doc
        return _set(doc, path, payload)
    if kind == "child":
        tree = _tree(doc, choice)
        field = ("left", "right", "feature", "category", "bin", "value", "count")[
            (choice // 7) % 7
        ]
        nodes = tree.get("nodes") if tree is not None else None
        if isinstance(nodes, list) and nodes and all(isinstance(n, dict) for n in nodes):
            # the layout of format version 1: a list of node objects
            node = nodes[choice % len(nodes)]
            node[field] = value if not isinstance(value, str) else choice % (len(nodes) + 2)
        elif tree is not None and isinstance(tree.get(field), list) and tree[field]:
            # the compact layout: one array per field (per node or per split)
            column = tree[field]
            size = len(tree["left"]) if isinstance(tree.get("left"), list) else len(column)
            column[choice % len(column)] = (
                value if not isinstance(value, str) else choice % (size + 2)
            )
        return doc
    if kind == "rename" and path and isinstance(_get(doc, path[:-1]), dict):
        parent = _get(doc, path[:-1])
        parent[str(value)[:40] + "_"] = parent.pop(path[-1])
        return doc
    # operator not applicable here: plain replacement
    return _set(doc, path, copy.deepcopy(value))


def _terms(doc: Any) -> list | None:
    try:
        terms = doc["design"]["formulaic"]["terms"]
    except (KeyError, TypeError, IndexError):
        return None
    return terms if isinstance(terms, list) and terms else None


def _tree(doc: Any, choice: int) -> dict | None:
    try:
        trees = doc["model"]["model"]["trees"]
        tree = trees[choice % len(trees)]
    except (KeyError, TypeError, IndexError, ZeroDivisionError):
        return None
    return tree if isinstance(tree, dict) else None


def leaf(value: float = 0.5) -> dict:
    return {
        "feature": 0,
        "left": 0,
        "right": 0,
        "threshold": 0.0,
        "bin": 0,
        "default_left": False,
        "category": None,
        "value": value,
        "gain": 0.0,
        "count": 1,
    }


def split(left: int, right: int, feature: int = 0, threshold: float = 0.0) -> dict:
    node = leaf(0.0)
    node.update(left=left, right=right, feature=feature, threshold=threshold, bin=1, gain=1.0)
    return node


def chain_nodes(n_nodes: int) -> list[dict]:
    """A degenerate tree of the probe's shape: ``n_nodes - 1`` splits in a
    line (each one's left child is the next split), every right child the one
    leaf at the end: ``n_nodes - 1`` levels deep. Children come after their
    parent, so the core's index check passes."""
    last = n_nodes - 1
    return [split(i + 1, last) for i in range(last)] + [leaf(1.0)]


def dag_nodes(n_nodes: int = 62) -> list[dict]:
    """Every split's two children are the same next node: n nodes, 2**(n-1) paths."""
    return [split(i + 1, i + 1) for i in range(n_nodes - 1)] + [leaf(1.0)]


def compact(nodes: list[dict]) -> dict:
    """A tree in the compact layout of model format version 2 (one array per field; the
    fields of splits for splits only) from node dicts of every field."""
    splits = [n for n in nodes if n["left"] != 0]
    tree = {name: [n[name] for n in nodes] for name in ("left", "value", "count")}
    for name in ("right", "feature", "threshold", "bin", "default_left", "gain"):
        tree[name] = [n[name] for n in splits]
    if any(n["category"] is not None for n in splits):
        tree["category"] = [n["category"] for n in splits]
    tree["categories"] = []
    return tree


def with_tree(doc: dict, nodes: list[dict]) -> dict:
    """``doc`` with its first tree replaced by ``nodes``, in the layout of its format version."""
    doc = copy.deepcopy(doc)
    core = doc["model"]
    core["model"]["trees"][0] = (
        {"nodes": nodes, "categories": []} if core["version"] == 1 else compact(nodes)
    )
    return doc


def structural_case(doc: dict, choice: int, marker_dir: str) -> dict:
    """Whole-structure attacks: deep trees, DAGs, gadgets at every state slot."""
    variant = choice % 6
    if variant == 0:
        return with_tree(doc, chain_nodes((1_001, 20_001, 100_001, 400_001)[(choice // 6) % 4]))
    if variant == 1:
        return with_tree(doc, dag_nodes(20 + (choice // 6) % 43))
    if variant == 2:
        doc = copy.deepcopy(doc)
        state = doc["design"].get("formulaic") or {}
        options = gadgets(marker_dir)
        state["transform_state"] = {"__dict__": [["k", options[(choice // 6) % len(options)]]]}
        doc["design"]["formulaic"] = state
        state.setdefault("terms", ["x2"])
        state.setdefault("materializer", "narwhals")
        state.setdefault("encoder_state", {"__dict__": []})
        return doc
    if variant == 3:
        doc = copy.deepcopy(doc)
        options = code_payloads(marker_dir)
        payload = options[(choice // 6) % len(options)]
        state = doc["design"].get("formulaic")
        if state:
            state["terms"][0] = payload
        for feature in doc["design"]["features"]:
            if feature.get("materialised"):
                feature["name"] = feature["source"] = payload
                break
        else:
            doc["formula"] = doc["design"]["formula"] = "y ~ " + payload
        return doc
    if variant == 4:
        doc = copy.deepcopy(doc)
        doc["model"]["model"]["weights"] = [
            (1e308, -1e308, float("nan"), float("inf"), 1e300)[(choice // 6) % 5]
        ] * len(doc["model"]["model"]["weights"])
        return doc
    doc = copy.deepcopy(doc)
    loss = doc["model"]["model"]["loss"]
    param = {"logistic": "ridge", "exponential": "beta", "pinball": "tau", "huber": "delta"}
    loss[param.get(loss.get("name"), "tau")] = (-5.0, 0.0, 7.0, -1.0, float("nan"), 1e308)[
        (choice // 6) % 6
    ]
    return doc


FIELD_CASES = (
    "iteration_weights value",
    "iteration_weights length",
    "iteration_trees value",
    "iteration_trees order",
    "best_iteration",
    "n_outputs",
    "design levels",
    "mapper levels",
    "loss parameter",
    "log-link bias",
    "huge leaves",
    "n_threads",
)
HUGE_NUMBERS = (1e308, -1e308, 1e300, 1e31, 1e29, 800.0, 710.0, -800.0, float("nan"), float("inf"))
HUGE_COUNTS = (-1, 0, 1, 2, 3, 4, 2**16, 2**16 + 1, 2**17, 2**31, 2**64, 10**30)


def field_case(doc: dict, choice: int) -> dict:
    """The fields validation bounds the work of: the iteration path, the output count, the
    levels of the design and of the core's mappers, loss parameters, a log link's bias and
    leaves, and the thread count of the params."""
    doc = copy.deepcopy(doc)
    core = doc["model"]["model"]
    kind = FIELD_CASES[choice % len(FIELD_CASES)]
    pick = choice // len(FIELD_CASES)
    path = core.get("iteration_trees") or []
    weights = core.get("iteration_weights") or []
    if kind == "iteration_weights value" and weights:
        row = weights[pick % len(weights)]
        if row:
            row[(pick // 7) % len(row)] = HUGE_NUMBERS[(pick // 3) % len(HUGE_NUMBERS)]
    elif kind == "iteration_weights length" and weights:
        row = weights[pick % len(weights)]
        action = (pick // 5) % 4
        if action == 0 and row:
            row.pop()
        elif action == 1:
            row.append(0.5)
        elif action == 2:
            weights.pop()
        else:
            weights.append(list(core["weights"]))
    elif kind == "iteration_trees value" and path:
        beyond = len(core["trees"]) if pick % 2 else 0  # past the trees, or not
        path[pick % len(path)] = HUGE_COUNTS[(pick // 3) % len(HUGE_COUNTS)] + beyond
    elif kind == "iteration_trees order" and path:
        action = pick % 3
        if action == 0:
            path.reverse()
        elif action == 1:
            path.pop()
        else:
            path.append(path[-1] + 1)
    elif kind == "best_iteration":
        core["best_iteration"] = HUGE_COUNTS[pick % len(HUGE_COUNTS)]
    elif kind == "n_outputs":
        n = HUGE_COUNTS[pick % len(HUGE_COUNTS)]
        core["n_outputs"] = n
        # Consistent bias and labels up to 2^17 outputs (the 2^20 of issue 39 is a regression
        # test of its own: its 5 MB file takes seconds to write and parse).
        if pick % 3 and 0 <= n <= 2**17:
            core["bias"] = [0.0] * n
            encoding = doc["design"].get("target_encoding")
            if isinstance(encoding, dict) and encoding.get("labels"):
                encoding["labels"] = [f"class{i}" for i in range(n)]
    elif kind == "design levels":
        features = [f for f in doc["design"]["features"] if f.get("levels")]
        if features:
            size = (0, 1, 2, 5, 1_000, 10**5)[pick % 6]
            features[0]["levels"] = [f"level{i}" for i in range(size)]
    elif kind == "mapper levels":
        mappers = [f["mapper"]["Categorical"] for f in core["features"] if "Categorical" in f["mapper"]]
        if mappers:
            size = (0, 1, 2, 5, 1_000, 10**5)[pick % 6]
            mappers[0]["level_bins"] = [i % mappers[0]["n_bins"] for i in range(size)]
    elif kind == "loss parameter":
        losses = (
            {"name": "tweedie", "p": (1.5, 1.0, 2.0, 1e308, -1.0, float("nan"))[pick % 6]},
            {"name": "poisson"},
            {"name": "gamma"},
            {"name": "pinball", "tau": 1e308},
            {"name": "huber", "delta": 1e-320},
            {"name": "exponential", "beta": 1e308},
            {"name": "cox"},
        )
        core["loss"] = losses[(pick // 6) % len(losses)]
    elif kind == "log-link bias":
        core["bias"] = [HUGE_NUMBERS[pick % len(HUGE_NUMBERS)]] * len(core["bias"])
    elif kind == "huge leaves":
        value = (1e29, -1e29, 1e30, 1e31, 710.0, 1e3)[pick % 6]
        for tree in core["trees"]:
            if isinstance(tree, dict) and isinstance(tree.get("value"), list):
                tree["value"] = [value] * len(tree["value"])
    elif kind == "n_threads":
        doc["params"]["n_threads"] = ("9" * 100, "-1", "1e9", "4294967296", "", "٣")[pick % 6]
    return doc


def text_mutation(text: str, rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:  # truncated file
        return text[: rng.randrange(len(text) + 1)]
    if kind == 1:  # a flipped character
        i = rng.randrange(len(text))
        return text[:i] + rng.choice('{}[]",:0-e.\\\x00\x7f\u00e9') + text[i + 1 :]
    if kind == 2:  # garbage inserted
        i = rng.randrange(len(text))
        return text[:i] + rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "[" * 50000]) + text[i:]
    if kind == 3:  # bytes that are not UTF-8 (written with surrogateescape)
        i = rng.randrange(len(text))
        return text[:i] + "\udcff\udcfe" + text[i:]
    return text.replace('"', "'", rng.randrange(1, 4))  # not JSON any more


def random_op(rng: random.Random) -> tuple:
    kind = rng.choice(KINDS)
    value: Any
    roll = rng.random()
    if roll < 0.5:
        value = rng.choice(EXTREMES)
    elif roll < 0.7:
        value = rng.choice([rng.randrange(-5, 300), rng.uniform(-1e6, 1e6), 10.0 ** rng.randrange(-320, 309)])
    elif roll < 0.85:
        value = rng.choice(["squared", "softmax", "logistic", "gbm", "categorical", "numeric", "polars", "narwhals", "pandas", "regression", "binary", "multiclass", "completed"])
    else:
        value = rng.choice([[1, 2, 3], ["a", "b"], {"a": 1}, [0.0] * 3, [[0, 1]]])
    return (kind, rng.randrange(1 << 30), value, rng.randrange(1 << 30))


def generate_case(bases: dict[str, dict], seed: int, index: int, marker_dir: str):
    """The case ``(seed, index)``: (model text, frame spec, description)."""
    rng = random.Random(f"{seed}:{index}")
    name = rng.choice(sorted(bases))
    doc = copy.deepcopy(bases[name])
    roll = rng.random()
    description: list[Any] = [name]
    if roll < 0.04:
        choice = rng.randrange(1 << 30)
        doc = structural_case(doc, choice, marker_dir)
        description.append(("structural", choice))
        ops = []
    elif roll < 0.10:
        choice = rng.randrange(1 << 30)
        doc = field_case(doc, choice)
        description.append(("field", FIELD_CASES[choice % len(FIELD_CASES)], choice))
    else:
        ops = [random_op(rng) for _ in range(rng.choice((1, 1, 1, 2, 3)))]
        for op in ops:
            doc = apply_op(doc, op, marker_dir)
        description.extend(_short(op) for op in ops)
    text = dumps(doc)
    if rng.random() < 0.05:
        text = text_mutation(text, rng)
        description.append("text")
    frame = random_frame_spec(rng) if rng.random() < 0.15 else None
    if frame is not None:
        description.append(("frame", frame))
    return text, frame, description


def _short(op: tuple) -> tuple:
    kind, path_index, value, choice = op
    text = repr(value)
    return (kind, path_index, text if len(text) < 40 else text[:37] + "...", choice)


# ---------------------------------------------------------------- hostile frames

FRAME_VARIANTS = (
    "string",
    "bool",
    "int",
    "date",
    "list",
    "all_null",
    "inf",
    "nan",
    "huge",
    "tiny",
    "drop",
    "empty",
    "one_row",
    "duplicate_names",
    "int_names",
    "pandas",
    "object",
    "categorical",
    "unseen_levels",
    "null_dtype",
)


def random_frame_spec(rng: random.Random) -> tuple[str, str]:
    return (rng.choice(FRAME_VARIANTS), rng.choice(["age", "x2", "s", "y", "yb", "label"]))


def make_frame(spec: tuple[str, str] | None, base=None):
    """A hostile prediction frame built from the base prediction frame."""
    import numpy as np
    import polars as pl

    frame = predict_frame() if base is None else base
    if spec is None:
        return frame
    variant, column = spec
    n = frame.height
    if variant == "string":
        return frame.with_columns(pl.col(column).cast(pl.String).fill_null("?") + "x")
    if variant == "bool":
        return frame.with_columns(pl.Series(column, [True, False] * (n // 2) + [True] * (n % 2)))
    if variant == "int":
        return frame.with_columns(pl.Series(column, list(range(n)), dtype=pl.Int8))
    if variant == "date":
        return frame.with_columns(pl.lit("2024-01-01").str.to_date().alias(column))
    if variant == "list":
        return frame.with_columns(pl.Series(column, [[1.0]] * n))
    if variant == "all_null":
        return frame.with_columns(pl.lit(None).alias(column))
    if variant == "null_dtype":
        return frame.with_columns(pl.Series(column, [None] * n, dtype=pl.Null))
    if variant in ("inf", "nan", "huge", "tiny"):
        value = {"inf": float("inf"), "nan": float("nan"), "huge": 1e308, "tiny": 5e-324}[variant]
        return frame.with_columns(pl.Series(column, [value, -value] * (n // 2) + [value] * (n % 2)))
    if variant == "drop":
        return frame.drop(column)
    if variant == "empty":
        return frame.head(0)
    if variant == "one_row":
        return frame.head(1)
    if variant == "categorical":
        return frame.with_columns(pl.col(column).cast(pl.String).cast(pl.Categorical))
    if variant == "unseen_levels":
        return frame.with_columns(pl.Series(column, [f"new{i}" for i in range(n)]))
    pdf = frame.to_pandas()
    if variant == "duplicate_names":
        pdf.columns = [column if c == "x2" else c for c in pdf.columns]
        return pdf
    if variant == "int_names":
        pdf.columns = [7 if c == column else c for c in pdf.columns]
        return pdf
    if variant == "object":
        pdf[column] = np.array([object()] * n, dtype=object)
        return pdf
    return pdf  # "pandas": the plain pandas form


# ---------------------------------------------------------------- one case, in-process

OUTCOMES = ("rejected", "ok", "other", "nonfinite", "side_effect", "crash", "hang", "harness")


def check_predictions(model, frame, kind: str, n_rows: int, iteration=None) -> str | None:
    """None if fine, else the reason."""
    import numpy as np

    predictions = model.predict(frame, type=kind, iteration=iteration)
    array = np.asarray(predictions)
    if array.shape[:1] != (n_rows,):
        return f"{kind}: {array.shape} predictions for {n_rows} rows"
    if kind == "class":
        classes = model.classes or []
        bad = [v for v in array.tolist() if v not in classes]
        return f"class: labels {bad[:3]} not among {classes}" if bad else None
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        return f"{kind}: non-finite predictions {values.ravel()[:4].tolist()}"
    if kind == "response" and model.task in ("binary", "multiclass") and model.loss != "hinge":
        if np.any(values < 0) or np.any(values > 1):
            return f"response: probabilities outside [0, 1]: {values.ravel()[:4].tolist()}"
        if values.ndim == 2 and not np.allclose(values.sum(axis=1), 1.0):
            return "response: class probabilities do not sum to 1"
    return None


def evaluate(text: str, frame_spec: Any, workdir: str, marker_dir: str) -> dict:
    """Load ``text`` as a model file and predict with it; the outcome."""
    import optboost

    import warnings

    path = os.path.join(workdir, "model.json")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as file:
        file.write(text)
    try:
        frame = make_frame(frame_spec)
    except Exception as error:  # the fuzzer's own fault: a variant that cannot be built
        return {"outcome": "harness", "detail": f"make_frame({frame_spec}): {error!r}"}
    n_rows = len(frame)
    result: dict[str, Any] = {"outcome": "ok", "detail": ""}
    stage = "load"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = optboost.load(path)
            kinds = ["response", "link"] + (["class"] if model.task != "regression" else [])
            for kind in kinds:
                stage = f"predict {kind}"
                problem = check_predictions(model, frame, kind, n_rows)
                if problem:
                    result = {"outcome": "nonfinite", "detail": problem}
                    break
            # The models of earlier iterations (the iteration path and its weights).
            iterations = model._core.n_iterations
            for k in sorted({0, 1, iterations // 2, iterations} & set(range(iterations + 1))):
                if result["outcome"] != "ok":
                    break
                stage = f"predict iteration {k}"
                for kind in kinds[:2]:
                    problem = check_predictions(model, frame, kind, n_rows, iteration=k)
                    if problem:
                        result = {"outcome": "nonfinite", "detail": f"iteration {k}: {problem}"}
                        break
    except optboost.OptboostError as error:
        result = {
            "outcome": "rejected",
            "detail": f"{stage}: {type(error).__name__}: {error}"[:300],
            "stage": stage,
            "mro": [c.__name__ for c in type(error).__mro__],
        }
    except BaseException as error:  # noqa: BLE001 - that is what is counted
        if isinstance(error, KeyboardInterrupt):
            raise
        result = {
            "outcome": "other",
            "detail": f"{stage}: {type(error).__name__}: {str(error)[:200]}",
            "type": type(error).__name__,
        }
    if os.listdir(marker_dir):
        result = {"outcome": "side_effect", "detail": f"{stage}: created {os.listdir(marker_dir)}"}
        for name in os.listdir(marker_dir):
            os.remove(os.path.join(marker_dir, name))
    return result


def run_cli(text: str, workdir: str, marker_dir: str, data_path: str, timeout: float) -> dict:
    """``optboost predict model.json data.parquet`` on the mutated file."""
    path = os.path.join(workdir, "cli-model.json")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as file:
        file.write(text)
    command = [sys.executable, "-m", "optboost.cli", "predict", path, data_path]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "cli_hang", "detail": f"no exit in {timeout} s"}
    result: dict[str, Any]
    lines = done.stderr.strip().splitlines()
    if done.returncode < 0:
        result = {"outcome": "cli_crash", "detail": f"signal {-done.returncode}"}
    elif "Traceback" in done.stderr:
        result = {"outcome": "cli_traceback", "detail": lines[-1] if lines else ""}
    elif done.returncode == 0:
        ok = done.stdout.count("\n") == 7 and all(
            x.lower() not in done.stdout for x in ("nan", "inf")
        )
        result = {"outcome": "cli_ok" if ok else "cli_bad_output", "detail": done.stdout[:200]}
    elif len(lines) == 1 and "error" in lines[0]:
        result = {"outcome": "cli_rejected", "detail": lines[0][:300]}
    else:
        result = {"outcome": "cli_traceback", "detail": f"{len(lines)} lines: {done.stderr[:200]}"}
    if os.listdir(marker_dir):
        result = {"outcome": "cli_side_effect", "detail": str(os.listdir(marker_dir))}
        for name in os.listdir(marker_dir):
            os.remove(os.path.join(marker_dir, name))
    return result


def evaluate_fit(frame_spec: Any, formula: str, loss: str, marker_dir: str) -> dict:
    """Train on a hostile frame: a model with finite predictions or an OptboostError."""
    import optboost

    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = make_frame(frame_spec, base=train_frame())
            model = optboost.boost(formula, frame, loss=loss, n_iter=2, max_depth=2, n_threads=1, progress=False)
            problem = check_predictions(model, frame, "link", len(frame))
            result = {"outcome": "nonfinite", "detail": problem} if problem else {"outcome": "ok", "detail": ""}
    except optboost.OptboostError as error:
        result = {"outcome": "rejected", "detail": f"{type(error).__name__}: {error}"[:300]}
    except BaseException as error:  # noqa: BLE001
        if isinstance(error, KeyboardInterrupt):
            raise
        result = {"outcome": "other", "detail": f"{type(error).__name__}: {str(error)[:200]}", "type": type(error).__name__}
    return result


# ---------------------------------------------------------------- the worker process

MEMORY_LIMIT = 6 << 30  # address space of a worker: a huge allocation fails, not the machine


def _send(stream, obj: Any) -> None:
    stream.write(base64.b64encode(pickle.dumps(obj)) + b"\n")
    stream.flush()


def worker_main(base_dir: str, marker_dir: str) -> None:
    """Answer requests on stdin, one pickled (base64) request per line; the
    channel is between this script and its own workers only."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    import optboost  # noqa: F401  (import before the first timed case)

    bases = load_bases(base_dir)
    workdir = tempfile.mkdtemp(prefix="optboost-fuzz-worker-")
    data_path = os.path.join(base_dir, "data.parquet")
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing a case prints may corrupt the channel
    for line in sys.stdin.buffer:
        request = pickle.loads(base64.b64decode(line))
        kind = request[0]
        if kind == "gen":
            _, seed, index, cli, cli_timeout = request
            try:
                text, frame, description = generate_case(bases, seed, index, marker_dir)
            except Exception as error:  # the fuzzer's own fault
                _send(out, {"outcome": "harness", "detail": f"generate_case: {error!r}"})
                continue
            result = evaluate(text, frame, workdir, marker_dir)
            result["case"] = description
            if cli:
                result["cli"] = run_cli(text, workdir, marker_dir, data_path, cli_timeout)
        elif kind == "text":
            _, text, frame = request
            result = evaluate(text, frame, workdir, marker_dir)
        elif kind == "fit":
            _, frame, formula, loss = request
            result = evaluate_fit(frame, formula, loss, marker_dir)
        else:
            result = {"outcome": "other", "detail": f"unknown request {kind!r}"}
        _send(out, result)
    shutil.rmtree(workdir, ignore_errors=True)


class Worker:
    """A worker subprocess; ``ask`` returns its answer or a crash / hang outcome."""

    def __init__(self, base_dir: str, marker_dir: str, timeout: float):
        self.base_dir, self.marker_dir, self.timeout = base_dir, marker_dir, timeout
        self.process: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", self.base_dir, self.marker_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        return self.process

    def ask(self, request: Any, timeout: float | None = None) -> dict:
        process = self.process if self.process and self.process.poll() is None else self._start()
        assert process.stdin and process.stdout
        try:
            _send(process.stdin, request)
        except (BrokenPipeError, OSError):
            return self._died("crash", "worker gone before the request")
        deadline = time.monotonic() + (timeout or self.timeout) + (30 if request[0] == "gen" and request[3] else 0)
        buffer = b""
        fd = process.stdout.fileno()
        while not buffer.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                return self._died("hang", f"no answer in {timeout or self.timeout:g} s")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                process.wait()
                return self._died("crash", f"worker exit status {process.returncode}")
            buffer += chunk
        return pickle.loads(base64.b64decode(buffer))

    def _died(self, outcome: str, detail: str) -> dict:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.process = None
        for name in os.listdir(self.marker_dir):  # a payload may have run before the crash
            os.remove(os.path.join(self.marker_dir, name))
            detail += f"; and created {name}"
            outcome = "side_effect"
        return {"outcome": outcome, "detail": detail}

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()  # type: ignore[union-attr]
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


# ---------------------------------------------------------------- the campaign


def campaign(args: argparse.Namespace) -> int:
    root = Path(tempfile.mkdtemp(prefix="optboost-fuzz-"))
    base_dir = root / "bases"
    build_bases(base_dir)
    counts: collections.Counter = collections.Counter()
    cli_counts: collections.Counter = collections.Counter()
    other_types: collections.Counter = collections.Counter()
    examples: dict[str, list] = collections.defaultdict(list)
    lock = threading.Lock()
    next_index = [0]
    started = time.monotonic()
    stop_at = started + args.seconds if args.seconds else math.inf
    limit = args.cases if args.cases else (math.inf if args.seconds else 100_000)

    def take() -> int | None:
        with lock:
            if next_index[0] >= limit or time.monotonic() >= stop_at:
                return None
            next_index[0] += 1
            return next_index[0] - 1

    def record(index: int, result: dict) -> None:
        with lock:
            counts[result["outcome"]] += 1
            if result["outcome"] == "other":
                other_types[result.get("type", "?")] += 1
            if result["outcome"] not in ("ok", "rejected") and len(examples[result["outcome"]]) < args.examples:
                examples[result["outcome"]].append((f"{args.seed}:{index}", result.get("detail", ""), result.get("case")))
            if "cli" in result:
                cli = result["cli"]
                cli_counts[cli["outcome"]] += 1
                if cli["outcome"] not in ("cli_ok", "cli_rejected") and len(examples[cli["outcome"]]) < args.examples:
                    examples[cli["outcome"]].append((f"{args.seed}:{index}", cli["detail"], result.get("case")))
            done = sum(counts.values())
            if args.progress and done % args.progress == 0:
                print(f"[{time.monotonic() - started:7.1f} s] {done} cases: {dict(counts)}", file=sys.stderr, flush=True)

    def run_worker(number: int) -> None:
        marker_dir = root / f"markers-{number}"
        marker_dir.mkdir()
        worker = Worker(str(base_dir), str(marker_dir), args.timeout)
        try:
            while (index := take()) is not None:
                cli = args.cli_every > 0 and index % args.cli_every == 0
                result = worker.ask(("gen", args.seed, index, cli, args.timeout * 3))
                if result["outcome"] in ("crash", "hang", "side_effect") and "case" not in result:
                    try:
                        result["case"] = describe(args.seed, index, base_dir, str(marker_dir))
                    except Exception as error:  # noqa: BLE001
                        result["case"] = f"(cannot describe: {error!r})"
                record(index, result)
        finally:
            worker.close()

    threads = [threading.Thread(target=run_worker, args=(i,)) for i in range(args.workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    total = sum(counts.values())
    print(f"optboost fuzz: seed {args.seed}, {total} cases in {elapsed:.0f} s ({args.workers} workers)")
    for outcome in OUTCOMES:
        print(f"  {outcome:12s} {counts.get(outcome, 0):8d}")
    if other_types:
        print("  other exception types: " + ", ".join(f"{k} {v}" for k, v in other_types.most_common()))
    if cli_counts:
        print(f"  CLI runs ({sum(cli_counts.values())}):")
        for outcome, count in sorted(cli_counts.items()):
            print(f"    {outcome:16s} {count:6d}")
    for outcome, items in examples.items():
        print(f"  examples of {outcome} (replay with --seed S --replay S:I):")
        for case_id, detail, case in items:
            print(f"    {case_id}: {detail[:160]!s}  case={str(case)[:160]}")
    shutil.rmtree(root, ignore_errors=True)
    bad = total - counts.get("ok", 0) - counts.get("rejected", 0)
    bad += sum(v for k, v in cli_counts.items() if k not in ("cli_ok", "cli_rejected"))
    return 1 if bad else 0


def describe(seed: int, index: int, base_dir: Path, marker_dir: str) -> Any:
    _, _, description = generate_case(load_bases(base_dir), seed, index, marker_dir)
    return description


def replay(case: str) -> int:
    seed_text, _, index_text = case.partition(":")
    root = Path(tempfile.mkdtemp(prefix="optboost-fuzz-replay-"))
    build_bases(root / "bases")
    marker_dir = root / "markers"
    marker_dir.mkdir()
    text, frame, description = generate_case(load_bases(root / "bases"), int(seed_text), int(index_text), str(marker_dir))
    print("case:", description)
    print("file:", text[:2000] + (" ..." if len(text) > 2000 else ""))
    (root / "case.json").write_text(text, encoding="utf-8", errors="surrogateescape")
    print("written to", root / "case.json")
    print("outcome:", evaluate(text, frame, str(root), str(marker_dir)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, help="number of cases (default 100000, or unlimited with --seconds)")
    parser.add_argument("--seconds", type=float, help="stop after this long")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a case counts as a hang")
    parser.add_argument("--cli-every", type=int, default=500, help="also run the CLI on every Nth case (0: never)")
    parser.add_argument("--examples", type=int, default=5, help="examples kept per bad outcome")
    parser.add_argument("--progress", type=int, default=5000, help="print counts every N cases (0: never)")
    parser.add_argument("--replay", metavar="SEED:INDEX", help="run one case in-process and show it")
    parser.add_argument("--worker", nargs=2, metavar=("BASE_DIR", "MARKER_DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(*args.worker)
        return 0
    if args.replay:
        return replay(args.replay)
    return campaign(args)


if __name__ == "__main__":
    sys.exit(main())
