"""Export to treelite (:func:`to_treelite`, below; numeric and categorical
rules, from which tl2cgen compiles a standalone C predictor) and to ONNX: the
trees as one ``ai.onnx.ml`` ``TreeEnsembleRegressor``
(opset 3, thresholds and leaf values stored as doubles), for serving with
onnxruntime or any ONNX runtime.

The graph's input ``X`` is a double matrix (rows × the model's features, in
``model.feature_names`` order; NaN = missing): the model's feature columns,
which :func:`onnx_inputs` computes from a frame (transforms and interactions
are evaluated by optboost, not by the graph). Outputs: ``link`` (rows ×
outputs, the raw scores) and, for a sigmoid, softmax or exp link (the
probabilities or mean of ``model.predict``) or a Quantiles model (each row's
quantiles sorted), ``response``. ONNX's tree
outputs are floats, so scores agree with optboost to float precision.

A categorical rule (a set of levels going left) becomes a chain of
``BRANCH_EQ`` tests on the level codes of its smaller side, each of which
leads to the same subtree when it holds: that subtree is shared, not copied
(a node with several parents, which onnxruntime accepts; copying would
multiply the size of trees with nested categorical rules). Missing values
(NaN) follow the rule's default direction.

Documentation: https://optboost.github.io/optboost/explain/
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ._extras import require
from .errors import ParameterError
from .features import per_column
from .fitted import FittedModel
from .trees import core_dict, left_codes


ML_OPSET = 3
ONNX_OPSET = 17


def _refuse_target_stats(model: FittedModel, export: str) -> None:
    """The graphs take the model's features as columns; a target statistic is a lookup of a
    categorical column's level that they do not express."""
    core = json.loads(model._core.to_json())["model"]
    encoded = sorted({f["target_stats"]["source"] for f in core["features"] if "target_stats" in f})
    if encoded:
        raise ParameterError(
            f"{export} does not express cat_encoding='target_stats' (columns {encoded}): "
            "fit with cat_encoding='partition' to export"
        )


def onnx_inputs(model: FittedModel, data: Any) -> np.ndarray:
    """The graph input for the rows of ``data``: the model's feature columns as
    a float64 matrix, categorical features as level codes, missing values NaN
    (the same matrix as :func:`treelite_inputs`)."""
    return treelite_inputs(model, data)


def to_onnx(model: FittedModel, path: str | os.PathLike | None = None) -> Any:
    """The model as an ``onnx.ModelProto`` (needs the onnx package); with
    ``path`` also written there."""
    _refuse_target_stats(model, "to_onnx")
    onnx = require("onnx", "to_onnx")
    from onnx import TensorProto, helper, numpy_helper
    core = core_dict(model)
    names = model.feature_names
    level_counts = [len(f.levels or ()) for f in model.spec.features]
    attributes: dict[str, list] = {
        key: []
        for key in (
            "nodes_treeids",
            "nodes_nodeids",
            "nodes_featureids",
            "nodes_modes",
            "nodes_truenodeids",
            "nodes_falsenodeids",
            "nodes_missing_value_tracks_true",
            "target_treeids",
            "target_nodeids",
            "target_ids",
        )
    }
    thresholds, leaf_weights = [], []

    def emit(t, i, feature, mode, value, true_id, false_id, missing_true):
        attributes["nodes_treeids"].append(t)
        attributes["nodes_nodeids"].append(i)
        attributes["nodes_featureids"].append(feature)
        attributes["nodes_modes"].append(mode)
        attributes["nodes_truenodeids"].append(true_id)
        attributes["nodes_falsenodeids"].append(false_id)
        attributes["nodes_missing_value_tracks_true"].append(int(missing_true))
        thresholds.append(value)

    for t, (tree, weight, output) in enumerate(
        zip(core["trees"], core["weights"], core["tree_outputs"])
    ):
        nodes = tree["nodes"]
        next_id = len(nodes)  # ids for the extra nodes of equality chains
        for i, node in enumerate(nodes):
            if node["left"] == 0:
                emit(t, i, 0, "LEAF", 0.0, 0, 0, False)
                attributes["target_treeids"].append(t)
                attributes["target_nodeids"].append(i)
                attributes["target_ids"].append(output)
                leaf_weights.append(weight * node["value"])
            elif node["category"] is None:
                emit(
                    t,
                    i,
                    node["feature"],
                    "BRANCH_LEQ",
                    float(node["threshold"]),
                    node["left"],
                    node["right"],
                    node["default_left"],
                )
            else:
                codes, true_id, false_id, missing_true = _equality_chain(
                    node, tree, level_counts[node["feature"]]
                )
                ids = [i, *range(next_id, next_id + len(codes) - 1)]
                next_id += len(codes) - 1
                for k, code in enumerate(codes):
                    # Every test of the chain leads to the same subtree when it holds.
                    otherwise = ids[k + 1] if k + 1 < len(codes) else false_id
                    emit(
                        t,
                        ids[k],
                        node["feature"],
                        "BRANCH_EQ",
                        float(code),
                        true_id,
                        otherwise,
                        missing_true,
                    )
    n_outputs = core["n_outputs"]
    ensemble = helper.make_node(
        "TreeEnsembleRegressor",
        ["X"],
        ["link"],
        domain="ai.onnx.ml",
        n_targets=n_outputs,
        aggregate_function="SUM",
        post_transform="NONE",
        base_values_as_tensor=numpy_helper.from_array(np.asarray(core["bias"], dtype=np.float64)),
        nodes_values_as_tensor=numpy_helper.from_array(np.asarray(thresholds, dtype=np.float64)),
        target_weights_as_tensor=numpy_helper.from_array(
            np.asarray(leaf_weights, dtype=np.float64)
        ),
        **attributes,
    )
    nodes = [ensemble]
    outputs = [helper.make_tensor_value_info("link", TensorProto.FLOAT, [None, n_outputs])]
    # The response as the core's loss vocabulary gives the model's link; none for an identity
    # link (the response is the link) or a margin (no response scale).
    link, scale = model._core.link
    response = None
    if link == "sigmoid" and scale == 1.0:
        response = [helper.make_node("Sigmoid", ["link"], ["response"])]
    elif link == "sigmoid":
        scale = numpy_helper.from_array(np.asarray([scale], np.float32), "scale")
        response = [
            helper.make_node("Constant", [], ["scale"], value=scale),
            helper.make_node("Mul", ["link", "scale"], ["scaled"]),
            helper.make_node("Sigmoid", ["scaled"], ["response"]),
        ]
    elif link == "softmax":
        response = [helper.make_node("Softmax", ["link"], ["response"], axis=1)]
    elif link == "exp":
        response = [helper.make_node("Exp", ["link"], ["response"])]
    elif link == "sorted":
        # Quantiles: each row's scores in increasing order (the K smallest of K, ascending).
        k = numpy_helper.from_array(np.asarray([n_outputs], np.int64), "k")
        response = [
            helper.make_node("Constant", [], ["k"], value=k),
            helper.make_node(
                "TopK", ["link", "k"], ["response", "order"], axis=1, largest=0, sorted=1
            ),
        ]
    if response is not None:
        nodes.extend(response)
        outputs.append(
            helper.make_tensor_value_info("response", TensorProto.FLOAT, [None, n_outputs])
        )
    graph = helper.make_graph(
        nodes,
        "optboost",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, len(names)])],
        outputs,
    )
    proto = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", ONNX_OPSET),
            helper.make_opsetid("ai.onnx.ml", ML_OPSET),
        ],
        producer_name="optboost",
        doc_string=f"{model.formula}; inputs: {', '.join(names)}",
    )
    proto.ir_version = min(proto.ir_version, 9)
    onnx.checker.check_model(proto)
    if path is not None:
        onnx.save(proto, os.fspath(path))
    return proto


def _equality_chain(node: dict, tree: dict, n_levels: int) -> tuple[list[int], int, int, bool]:
    """A categorical rule as a chain of equality tests: the codes tested (those of the smaller
    side among the feature's levels), the child their rows go to, the child the rest go to,
    and whether missing values (NaN) go to the first. A rule with an empty side tests the
    code -1, which no row has (missing codes are NaN in the graph's input)."""
    words = tree["categories"][node["category"]]["left_codes"]
    default_left = node["default_left"]
    left = set(left_codes(words))
    # A code past the split's bit words takes the default direction.
    goes_left = [c in left if c < 64 * len(words) else default_left for c in range(n_levels)]
    left_side = [c for c in range(n_levels) if goes_left[c]]
    right_side = [c for c in range(n_levels) if not goes_left[c]]
    if len(left_side) <= len(right_side):
        return left_side or [-1], node["left"], node["right"], default_left
    return right_side, node["right"], node["left"], not default_left


# ------------------------------------------------------------------ treelite


def treelite_inputs(model: FittedModel, data: Any) -> np.ndarray:
    """The input of the treelite model (and of a predictor tl2cgen compiles
    from it) for the rows of ``data``: the model's feature columns as a
    float64 matrix, categorical features as level codes, missing values NaN."""
    _refuse_target_stats(model, "the exports")
    columns = per_column(model.spec.columns(data))
    matrix = np.column_stack([np.asarray(c.values, dtype=np.float64) for c in columns])
    for j, spec in enumerate(model.spec.features):
        if spec.kind == "categorical":
            # optboost's missing code is -1; treelite reads a negative category as a level
            # outside every list, but NaN as missing (the default direction).
            matrix[matrix[:, j] < 0, j] = np.nan
    return matrix


def to_treelite(model: FittedModel) -> Any:
    """The model as a ``treelite.Model`` (needs the treelite package), from
    which ``tl2cgen`` compiles a standalone C predictor.

    Tree weights are folded into the leaf values and the bias is treelite's
    base score, so ``treelite.gtil.predict(tl, X, pred_margin=True)`` gives
    ``model.predict(data, type="link")`` for ``X = treelite_inputs(model,
    data)``; without ``pred_margin``, treelite's postprocessor gives the
    response of the model's link (probabilities, or the mean of an exp link). Numeric
    rules are ``x <= threshold``; categorical rules list the level codes
    going left; missing values follow each rule's default direction.
    """
    _refuse_target_stats(model, "to_treelite")
    require("treelite.model_builder", "to_treelite")
    from treelite.model_builder import (
        Metadata,
        ModelBuilder,
        PostProcessorFunc,
        TreeAnnotation,
    )
    core = core_dict(model)
    n_outputs = core["n_outputs"]
    if model._core.link[0] == "sorted":
        raise ParameterError(
            "to_treelite cannot export a Quantiles model (treelite has no postprocessor that "
            "sorts a row's quantiles): use to_onnx, whose 'response' output is sorted"
        )
    # treelite's postprocessor for the model's link (the core's loss vocabulary gives it); a
    # margin keeps its scores, as a classifier's when the target is classes.
    link, scale = model._core.link
    if link == "sigmoid":
        task, post = "kBinaryClf", PostProcessorFunc("sigmoid", sigmoid_alpha=scale)
    elif link == "softmax":
        task, post = "kMultiClf", PostProcessorFunc("softmax")
    elif link == "exp":
        task, post = "kRegressor", PostProcessorFunc("exponential")
    elif link == "margin" and model.task == "multiclass":
        task, post = "kMultiClf", PostProcessorFunc("identity_multiclass")
    elif link == "margin" and model.task == "binary":
        task, post = "kBinaryClf", PostProcessorFunc("identity")
    else:
        task, post = "kRegressor", PostProcessorFunc("identity")
    multiclass = task == "kMultiClf"
    # Several regression outputs (multi_squared) are treelite's targets, one class each.
    targets = n_outputs if not multiclass else 1
    level_counts = [len(f.levels or ()) for f in model.spec.features]
    # Trees of weight 0 (after a momentum method's rewrite, or past the kept iteration) add
    # nothing; treelite needs one tree at least.
    kept = [
        (tree, weight, output)
        for tree, weight, output in zip(core["trees"], core["weights"], core["tree_outputs"])
        if weight != 0.0
    ] or [({"nodes": [{"left": 0, "value": 0.0}], "categories": []}, 1.0, 0)]
    builder = ModelBuilder(
        threshold_type="float64",
        leaf_output_type="float64",
        metadata=Metadata(
            num_feature=len(model.feature_names),
            task_type=task,
            average_tree_output=False,
            num_target=targets,
            num_class=[n_outputs if multiclass else 1] * targets,
            leaf_vector_shape=(1, 1),
        ),
        tree_annotation=TreeAnnotation(
            num_tree=len(kept),
            target_id=[0 if multiclass else output for _, _, output in kept],
            class_id=[output if multiclass else 0 for _, _, output in kept],
        ),
        postprocessor=post,
        base_scores=[float(b) for b in core["bias"]],
        attributes={"producer": "optboost", "formula": model.formula},
    )
    for tree, weight, _ in kept:
        builder.start_tree()
        for i, node in enumerate(tree["nodes"]):
            builder.start_node(i)
            if node["left"] == 0:
                builder.leaf(weight * node["value"])
            elif node["category"] is None:
                builder.numerical_test(
                    node["feature"],
                    float(node["threshold"]),
                    default_left=node["default_left"],
                    opname="<=",
                    left_child_key=node["left"],
                    right_child_key=node["right"],
                )
            else:
                words = tree["categories"][node["category"]]["left_codes"]
                codes = left_codes(words)
                if node["default_left"]:
                    # A code past the split's bit words takes the default direction in
                    # optboost; treelite sends a code outside the list to the other side.
                    codes += range(64 * len(words), level_counts[node["feature"]])
                builder.categorical_test(
                    node["feature"],
                    default_left=node["default_left"],
                    category_list=codes,
                    category_list_right_child=False,
                    left_child_key=node["left"],
                    right_child_key=node["right"],
                )
            builder.end_node()
        builder.end_tree()
    return builder.commit()
