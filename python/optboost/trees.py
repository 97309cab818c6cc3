"""The model's trees as data (``FittedModel.trees()``) and as text (``FittedModel.dump_trees()``).

They are read from the core model's JSON form (the same plain data a model
file holds, see docs/model_schema.json; ``core_dict`` gives each tree its
nodes as dicts): node i of a tree has children
``left``/``right`` (0 for leaves: the root is never a child); a numeric rule
sends a row left when ``x <= threshold``, a categorical rule when its level is
in ``levels``; a missing value (or a level unseen in training) goes left when
``default_left``. The model's link score of output k is
``bias[k] + sum(weight * leaf value)`` over the trees of output k.
"""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

from .fitted import FittedModel

SCHEMA = {
    "tree": pl.Int64,
    "node": pl.Int64,
    "is_leaf": pl.Boolean,
    "feature": pl.String,
    "threshold": pl.Float64,
    "levels": pl.List(pl.String),
    "missing": pl.String,
    "left": pl.Int64,
    "right": pl.Int64,
    "value": pl.Float64,
    "gain": pl.Float64,
    "cover": pl.Int64,
    "tree_weight": pl.Float64,
    "output": pl.Int64,
}


def core_dict(model: FittedModel) -> dict[str, Any]:
    """The core model as plain data: bias, trees, weights, tree_outputs, features; each tree
    with its ``nodes`` as dicts of every field (see ``tree_nodes``)."""
    core = json.loads(model._core.to_json())["model"]
    cuts = [feature["mapper"].get("Numeric", {}).get("cuts") for feature in core["features"]]
    for tree in core["trees"]:
        tree["nodes"] = tree_nodes(tree, cuts)
    return core


def tree_nodes(tree: dict[str, Any], cuts: list[list[Any] | None]) -> list[dict[str, Any]]:
    """A tree's nodes, one dict of every field each, from either layout of a model file:
    the list of node objects of format version 1 (returned as it is), or the arrays of
    versions 2 and 3, where ``left``/``value``/``count`` have an entry per node and the
    fields of splits (``right``, ``feature``, ``threshold``, ``bin``, ``default_left``,
    ``gain``, ``category``) an entry per split, in node order; leaves get 0, false, null
    there. Version 3 leaves ``threshold`` out when the bins imply it: split on bin b of a
    numeric feature, the threshold is the feature's cut b - 1 (``cuts``: each feature's,
    None for a categorical one), +inf past the last cut; on a categorical feature, 0."""
    if "nodes" in tree:
        return tree["nodes"]
    category = tree.get("category")
    thresholds = tree.get("threshold")
    if thresholds is None:
        categories = category or [None] * len(tree["bin"])
        thresholds = [
            0.0 if c is not None
            else float(cuts[f][b - 1]) if b <= len(cuts[f]) else math.inf
            for f, b, c in zip(tree["feature"], tree["bin"], categories)
        ]
    nodes, k = [], 0
    for left, value, count in zip(tree["left"], tree["value"], tree["count"]):
        node = {"feature": 0, "left": 0, "right": 0, "threshold": 0.0, "bin": 0,
                "default_left": False, "category": None, "value": value, "gain": 0.0,
                "count": count}
        if left != 0:
            node.update(
                feature=tree["feature"][k], left=left, right=tree["right"][k],
                threshold=thresholds[k], bin=tree["bin"][k],
                default_left=tree["default_left"][k], gain=tree["gain"][k],
                category=None if category is None else category[k],
            )
            k += 1
        nodes.append(node)
    return nodes


def left_codes(words: list[int]) -> list[int]:
    """Category codes whose bit is set in a split's 64-bit words."""
    return [64 * w + b for w, word in enumerate(words) for b in range(64) if word >> b & 1]


def trees_frame(model: FittedModel) -> pl.DataFrame:
    """One row per node of every tree (see the module doc for the columns' meaning;
    ``levels`` lists the levels a categorical rule sends left, ``missing`` is
    "left"/"right" for rules and null for leaves, ``value`` is the node's fitted
    value before the tree weight, ``output`` the class index of multiclass trees)."""
    core = core_dict(model)
    names = model.feature_names
    levels_of = {f.name: f.levels for f in model.spec.features}
    rows: dict[str, list] = {name: [] for name in SCHEMA}
    for t, (tree, weight, output) in enumerate(
        zip(core["trees"], core["weights"], core["tree_outputs"])
    ):
        for i, node in enumerate(tree["nodes"]):
            leaf = node["left"] == 0
            categorical = not leaf and node["category"] is not None
            levels = None
            if categorical:
                codes = left_codes(tree["categories"][node["category"]]["left_codes"])
                known = levels_of.get(names[node["feature"]]) or ()
                levels = [known[c] if c < len(known) else str(c) for c in codes]
            threshold = None if leaf or categorical else float(node["threshold"])
            values = {
                "tree": t,
                "node": i,
                "is_leaf": leaf,
                "feature": None if leaf else names[node["feature"]],
                "threshold": threshold,
                "levels": levels,
                "missing": None if leaf else ("left" if node["default_left"] else "right"),
                "left": None if leaf else node["left"],
                "right": None if leaf else node["right"],
                "value": node["value"],
                "gain": node["gain"],
                "cover": node["count"],
                "tree_weight": weight,
                "output": output,
            }
            for name, value in values.items():
                rows[name].append(value)
    return pl.DataFrame(rows, schema=SCHEMA)


def dump_trees(model: FittedModel, precision: int = 6) -> str:
    """Every tree as indented text, one node a line."""
    frame = trees_frame(model)
    core = core_dict(model)
    bias = ", ".join(_g(b, precision) for b in core["bias"])
    lines = [f"optboost model {model.formula!r}: {model.n_trees} trees, bias {bias}"]
    by_tree = frame.partition_by("tree", maintain_order=True, as_dict=False)
    for nodes in by_tree:
        rows = nodes.to_dicts()
        first = rows[0]
        lines.append(
            f"tree {first['tree']} (output {first['output']}, weight "
            f"{_g(first['tree_weight'], precision)}):"
        )

        def visit(i: int, depth: int, rows: list[dict] = rows) -> None:
            node = rows[i]
            indent = "  " * (depth + 1)
            if node["is_leaf"]:
                lines.append(
                    f"{indent}{i}: leaf {_g(node['value'], precision)} (cover {node['cover']})"
                )
                return
            if node["threshold"] is not None:
                rule = f"{node['feature']} <= {_g(node['threshold'], precision)}"
            else:
                rule = f"{node['feature']} in {{{', '.join(node['levels'])}}}"
            lines.append(
                f"{indent}{i}: if {rule} (missing {node['missing']}) then {node['left']} "
                f"else {node['right']} (gain {_g(node['gain'], precision)}, "
                f"cover {node['cover']})"
            )
            visit(node["left"], depth + 1)
            visit(node["right"], depth + 1)

        visit(0, 0)
    return "\n".join(lines) + "\n"


def _g(value: float, precision: int) -> str:
    return f"{value:.{precision}g}" if math.isfinite(value) else str(value)
