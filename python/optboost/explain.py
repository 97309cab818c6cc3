"""Explaining a fitted model: SHAP contributions and interaction values (computed
exactly in the Rust core by TreeSHAP), ``shap.Explanation`` objects, partial
dependence and ICE curves, and importance by gain, splits, cover, SHAP or
permutation.

Contributions are on the link scale (raw scores, log-odds for logistic): with
the ``bias`` column they add up to ``model.predict(newdata, type="link")`` in
every row. By default they are per original data column: a feature computed
from several columns (an interaction ``a:b``, a transform of two columns)
gives its contribution to its source columns in equal parts, and the levels of
a categorical column are one feature already. ``by="feature"`` gives them per
model feature instead.

Documentation: https://optboost.github.io/optboost/explain/
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from . import distributions
from ._extras import require
from .errors import DataError, ParameterError
from .features import per_column
from .fitted import FittedModel
from .frames import polars_text, to_polars
from .metrics import loss_metric


By = Literal["column", "feature"]
BIAS = "bias"


# ------------------------------------------------------------------ SHAP values


def _names_and_matrix(model: FittedModel, by: By) -> tuple[list[str], np.ndarray]:
    """Output names and the (features × outputs) matrix that turns per-feature
    values into them: the identity for by="feature", equal shares of each
    feature among its source columns for by="column"."""
    features = model.feature_names
    if by == "feature":
        return features, np.eye(len(features))
    if by != "column":
        raise ParameterError(f"by must be 'column' or 'feature', got {by!r}")
    columns = model.spec.input_columns
    index = {c: i for i, c in enumerate(columns)}
    sources = model.spec.source_columns
    matrix = np.zeros((len(features), len(columns)))
    # A target statistic's feature reads a categorical column of the core's input; a
    # combination of two columns reads both and is shared equally between them.
    core = model._core
    for i, (read, other) in enumerate(zip(core.feature_sources, core.feature_combined_with)):
        inputs = (read,) if other is None else (read, other)
        for source in inputs:
            owners = sources.get(source) or (source,)
            for column in owners:
                matrix[i, index[column]] += 1.0 / (len(owners) * len(inputs))
    return columns, matrix


def _bias_name(names: Sequence[str]) -> str:
    # a data column may itself be called "bias"
    name = BIAS
    while name in names:
        name = f"_{name}"
    return name


def contribution_array(
    model: FittedModel, newdata: Any, by: By = "column", iteration: int | None = None
) -> tuple[np.ndarray, list[str]]:
    """SHAP values as an array of shape (n, K, m + 1) (K outputs: 1, or the
    number of classes), the last slot of each block the bias, and the m + 1
    names; of the model after ``iteration`` iterations if given (checked by
    the caller)."""
    names, matrix = _names_and_matrix(model, by)
    raw = model._core.predict_contrib(model.spec.columns(newdata), iteration)
    n_features = len(model.feature_names)
    raw = raw.reshape(raw.shape[0], -1, n_features + 1)
    values = np.concatenate([raw[:, :, :n_features] @ matrix, raw[:, :, n_features:]], axis=2)
    return values, [*names, _bias_name(names)]


def contributions(
    model: FittedModel, newdata: Any, by: By = "column", iteration: int | None = None
) -> pl.DataFrame:
    """SHAP contributions as a polars frame, one row per row of ``newdata``:
    one column per original data column (``by="column"``) or model feature
    (``by="feature"``) and ``bias``; each row sums to the link-scale score.
    Multiclass models give one block of columns per class, named
    ``"{class}/{column}"`` (and ``"{class}/bias"``), in class order; multi-output
    models (``y1 + y2 ~ ...``) one per target, ``"{target}/{column}"``."""
    values, names = contribution_array(model, newdata, by, iteration)
    if values.shape[1] == 1:
        return pl.DataFrame(values[:, 0, :], schema=names, orient="row")
    labels = (
        model.classes
        or model.spec.targets
        or distributions.parameter_names(model.loss)
        or [str(k) for k in range(values.shape[1])]
    )
    schema = [polars_text(f"{label}/{name}") for label in labels for name in names]
    return pl.DataFrame(values.reshape(values.shape[0], -1), schema=schema, orient="row")


def interactions(
    model: FittedModel, newdata: Any, by: By = "column", iteration: int | None = None
) -> tuple[np.ndarray, list[str]]:
    """SHAP interaction values, shape (n, m + 1, m + 1), or (n, K, m + 1,
    m + 1) for multiclass, and the m + 1 names of both axes (the last is the
    bias, at the last diagonal entry). Entry (i, j) is half the interaction of
    i and j; the diagonal holds the main effects; row i sums to i's
    contribution, and the matrix to the link-scale score."""
    names, matrix = _names_and_matrix(model, by)
    raw = model._core.predict_interactions(model.spec.columns(newdata), iteration)
    width = len(model.feature_names) + 1
    raw = raw.reshape(raw.shape[0], -1, width, width)
    # The bias stays its own row and column.
    full = np.zeros((width, matrix.shape[1] + 1))
    full[:-1, :-1] = matrix
    full[-1, -1] = 1.0
    values = np.einsum("fi,nkfg,gj->nkij", full, raw, full)
    names = [*names, _bias_name(names)]
    return (values[:, 0] if values.shape[1] == 1 else values), names


def predict_explained(
    model: FittedModel, newdata: Any, type: str, by: By, iteration: int | None = None
) -> Any:
    """``Model.predict`` for type="contrib" (a polars frame) and
    type="interaction" (a numpy array; names as in :func:`interactions`)."""
    if type == "contrib":
        return contributions(model, newdata, by, iteration)
    return interactions(model, newdata, by, iteration)[0]


def explain(model: FittedModel, newdata: Any, by: By = "column") -> Any:
    """A ``shap.Explanation`` of the link-scale scores of ``newdata`` (needs
    the ``shap`` package: ``pip install "optboost[explain]"``). Its ``data``
    holds the original column values (``by="column"``) or the model's feature
    columns (``by="feature"``; categorical features as level codes)."""
    shap = require("shap", "model.explain")
    values, names = contribution_array(model, newdata, by)
    frame = to_polars(newdata)
    if by == "column":
        data = np.column_stack([_plain_values(frame.get_column(c)) for c in names[:-1]])
    else:
        data = np.column_stack([c.values for c in per_column(model.spec.columns(frame))])
    if values.shape[1] == 1:
        shap_values, base = values[:, 0, :-1], values[:, 0, -1]
    else:
        # shap's layout for several outputs: (rows, features, outputs)
        shap_values, base = values[:, :, :-1].transpose(0, 2, 1), values[:, :, -1]
    return shap.Explanation(
        values=shap_values,
        base_values=base,
        data=data,
        feature_names=names[:-1],
        output_names=None if values.shape[1] == 1 else [str(c) for c in model.classes],
    )


def _plain_values(series: pl.Series) -> np.ndarray:
    if series.dtype.is_numeric():
        return series.cast(pl.Float64).fill_null(float("nan")).to_numpy()
    return np.asarray(series.cast(pl.String).to_list(), dtype=object)


# ------------------------------------------------------------------ partial dependence


def partial_dependence(
    model: FittedModel,
    newdata: Any,
    columns: str | Sequence[str],
    grid: Sequence[Any] | Sequence[Sequence[Any]] | None = None,
    kind: Literal["average", "individual"] = "average",
    type: Literal["response", "link"] = "response",
    grid_size: int = 20,
) -> pl.DataFrame:
    """Partial dependence (Friedman, "Greedy Function Approximation: A Gradient
    Boosting Machine", §8.2) of the predictions on one or two data columns, and
    ICE curves (Goldstein et al., "Peeking Inside the Black Box").

    For every grid value (pair of values), every row of ``newdata`` gets that
    value in the column(s) and is predicted; kind="average" gives the mean over
    rows (columns: the grid column(s), then ``prediction``), kind="individual"
    one row per data row and grid value (``row``, grid column(s),
    ``prediction``). Multiclass models give ``prediction/{class}`` columns.
    Features computed from the column (transforms, interactions) follow it.

    grid: the values of one column, or one sequence per column; default: the
    column's distinct values when there are at most ``grid_size`` of them or it
    is not numeric (all training levels of a categorical feature), else
    ``grid_size`` evenly spaced values from its 5th to its 95th percentile.
    """
    frame = to_polars(newdata)
    names = [columns] if isinstance(columns, str) else list(columns)
    if len(names) not in (1, 2):
        raise ParameterError(f"columns must be one or two column names, got {columns!r}")
    if kind not in ("average", "individual"):
        raise ParameterError(f"kind must be 'average' or 'individual', got {kind!r}")
    if type not in ("response", "link"):
        raise ParameterError(f"type must be 'response' or 'link', got {type!r}")
    for name in names:
        if name not in frame.columns:
            raise ParameterError(f"no column {name!r} in the data")
    n = frame.height
    if n == 0:
        raise DataError("partial dependence needs rows: newdata has none")
    if grid is None:
        grids = [_default_grid(model, frame.get_column(name), grid_size) for name in names]
    else:
        given = [grid] if len(names) == 1 else list(grid)
        if len(given) != len(names):
            raise ParameterError(f"grid must give one sequence of values per column of {names}")
        grids = [_given_grid(frame.get_column(name), values) for name, values in zip(names, given)]
    points = list(itertools.product(*grids))
    # Predict in batches of about a million rows: one call per batch, bounded memory.
    per_batch = max(1, 1_000_000 // n)
    predictions = []
    for start in range(0, len(points), per_batch):
        batch = points[start : start + per_batch]
        stacked = pl.concat(
            [
                frame.with_columns(
                    [pl.lit(v).cast(frame.schema[c]).alias(c) for c, v in zip(names, point)]
                )
                for point in batch
            ]
        )
        p = model.predict(stacked, type=type)
        predictions.append(p.reshape(len(batch), n, -1))
    values = np.concatenate(predictions)  # (points, rows, outputs)
    outputs = (
        ["prediction"]
        if values.shape[2] == 1
        else [polars_text(f"prediction/{label}") for label in model.classes]
    )
    grid_columns = {
        name: pl.Series(name, [point[j] for point in points], dtype=frame.schema[name])
        for j, name in enumerate(names)
    }
    if kind == "average":
        mean = values.mean(axis=1)
        return pl.DataFrame(
            [*grid_columns.values()] + [pl.Series(o, mean[:, k]) for k, o in enumerate(outputs)]
        )
    result = pl.DataFrame(
        [pl.Series("row", np.tile(np.arange(n), len(points)))]
        + [s.gather(np.repeat(np.arange(len(points)), n)) for s in grid_columns.values()]
        + [pl.Series(o, values[:, :, k].reshape(-1)) for k, o in enumerate(outputs)]
    )
    return result


def _default_grid(model: FittedModel, series: pl.Series, grid_size: int) -> list[Any]:
    if isinstance(grid_size, bool) or not isinstance(grid_size, (int, np.integer)) or grid_size < 1:
        raise ParameterError(f"grid_size must be an integer >= 1, got {grid_size!r}")
    categorical = [
        f
        for f in model.spec.features
        if f.kind == "categorical" and not f.materialised and f.source_columns == (series.name,)
    ]
    if categorical and not series.dtype.is_numeric():
        # every training level, also those absent from newdata
        return list(categorical[0].levels or ())
    values = series.drop_nulls()
    if series.dtype.is_float():
        values = values.filter(values.is_not_nan())
    if values.len() == 0:
        raise DataError(
            f"partial dependence on {series.name!r}: the column has no values (all "
            f"{series.len()} rows are missing); give grid= the values to try"
        )
    distinct = values.unique().sort()
    if categorical or not series.dtype.is_numeric() or distinct.len() <= grid_size:
        return distinct.to_list()
    low, high = np.quantile(values.cast(pl.Float64).to_numpy(), [0.05, 0.95])
    spaced = np.linspace(low, high, grid_size)
    if series.dtype.is_integer():
        # values the column can hold: rounded, each once
        return [int(v) for v in np.unique(np.round(spaced))]
    return pl.Series(spaced).cast(series.dtype).to_list()


def _given_grid(series: pl.Series, values: Any) -> list[Any]:
    """The grid given for ``series``: values of its dtype (never silently truncated: 20.5 is
    no value of an integer column)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ParameterError(
            f"grid for {series.name!r} must be a sequence of values, got {values!r}"
        )
    values = list(values)
    if not values:
        raise ParameterError(f"grid for {series.name!r} is empty")
    try:
        return pl.Series(series.name, values, dtype=series.dtype, strict=True).to_list()
    except (TypeError, ValueError, pl.exceptions.PolarsError) as error:
        raise ParameterError(
            f"grid for {series.name!r}: {values!r} are not all values of its {series.dtype} "
            f"column ({error})"
        ) from None


def plot_partial_dependence(
    frame: pl.DataFrame,
    path: str | os.PathLike | None = None,
    ax: Any = None,
) -> Any:
    """Plots what :func:`partial_dependence` returned (matplotlib): a line per
    output against one numeric column (ICE: a thin line per row and their mean
    in bold), points for a categorical one, and against two columns one line
    per value of the second. Returns the figure; with ``path`` also saves it."""
    matplotlib = require("matplotlib", "plot_partial_dependence")
    if path is not None and ax is None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    outputs = [c for c in frame.columns if c == "prediction" or c.startswith("prediction/")]
    individual = "row" in frame.columns
    columns = [c for c in frame.columns if c not in outputs and c != "row"]
    figure = ax.figure if ax is not None else plt.figure(figsize=(6, 4))
    ax = ax or figure.add_subplot(1, 1, 1)
    x_name = columns[0]
    numeric = frame.schema[x_name].is_numeric()
    average = (
        frame.group_by(columns, maintain_order=True).agg(pl.col(outputs).mean())
        if individual
        else frame
    )
    style = "-" if numeric else "o-"
    for output in outputs:
        if individual:
            for (_,), curve in frame.group_by(["row"], maintain_order=True):
                ax.plot(
                    curve[x_name].to_list(),
                    curve[output].to_list(),
                    "-",
                    color="tab:gray",
                    alpha=0.15,
                    linewidth=0.7,
                )
        if len(columns) == 2:
            for (value,), curve in average.group_by([columns[1]], maintain_order=True):
                ax.plot(
                    curve[x_name].to_list(),
                    curve[output].to_list(),
                    style,
                    label=f"{columns[1]} = {value}",
                )
        else:
            label = output if len(outputs) > 1 else None
            ax.plot(
                average[x_name].to_list(),
                average[output].to_list(),
                style,
                linewidth=2.0,
                label=label,
            )
    ax.set_xlabel(x_name)
    ax.set_ylabel("partial dependence")
    if len(columns) == 2 or len(outputs) > 1:
        ax.legend(fontsize="small")
    if path is not None:
        figure.savefig(path, dpi=100, bbox_inches="tight")
    return figure


# ------------------------------------------------------------------ importance


def importance(
    model: FittedModel,
    kind: str,
    by: By = "column",
    data: Any = None,
    n_repeats: int = 5,
    seed: int = 0,
    metric: Callable[[np.ndarray, np.ndarray], float] | None = None,
) -> pl.DataFrame:
    """Importance by "split" (number of rules), "cover" (training rows reaching
    the rules), "shap" (mean absolute SHAP value over ``data``, summed over
    classes) or "permutation" (mean increase of ``metric`` over ``n_repeats``
    shuffles of the column in ``data``, with its standard deviation; the
    default metric follows the loss: squared error, absolute error, pinball
    loss, log loss, or the error rate for hinge losses). A frame of
    ``column`` (or ``feature``), ``importance``, ``share``, largest first."""
    names, matrix = _names_and_matrix(model, by)
    label = "column" if by == "column" else "feature"
    std = None
    if kind in ("split", "cover"):
        from .trees import trees_frame

        splits = trees_frame(model).filter(~pl.col("is_leaf"))
        per_feature = dict(
            splits.group_by("feature")
            .agg(pl.len() if kind == "split" else pl.col("cover").sum())
            .iter_rows()
        )
        counts = np.array([per_feature.get(f, 0) for f in model.feature_names], dtype=float)
        # Splits count fully for each source column (as the default table's splits do);
        # cover is shared out like gain.
        share_matrix = (matrix > 0).astype(float) if kind == "split" else matrix
        values = counts @ share_matrix
    elif kind == "shap":
        _needs(data, kind)
        contrib, _ = contribution_array(model, data, by)
        values = np.abs(contrib[:, :, :-1]).mean(axis=0).sum(axis=0)
    elif kind == "permutation":
        _needs(data, kind)
        values, std = _permutation(model, data, by, names, n_repeats, seed, metric)
    else:
        raise ParameterError(
            f"kind must be 'gain', 'split', 'cover', 'shap' or 'permutation', got {kind!r}"
        )
    columns: dict[str, Any] = {label: names, "importance": values}
    if std is not None:
        columns["std"] = std
    table = pl.DataFrame(columns)
    total = float(np.sum(np.abs(values)))
    table = table.with_columns(share=pl.col("importance") / total if total > 0 else pl.lit(0.0))
    return table.sort("importance", descending=True, maintain_order=True)


def _needs(data: Any, kind: str) -> None:
    if data is None:
        raise ParameterError(f"kind={kind!r} needs data=: rows to explain")


def default_metric(model: FittedModel) -> Callable[[np.ndarray, np.ndarray], float]:
    """The loss-like metric permutation importance uses: f(encoded target,
    response-scale prediction)."""

    return loss_metric(model.loss)


def _permutation(
    model: FittedModel,
    data: Any,
    by: By,
    names: list[str],
    n_repeats: int,
    seed: int,
    metric: Callable[[np.ndarray, np.ndarray], float] | None,
) -> tuple[np.ndarray, np.ndarray]:
    frame = to_polars(data)
    metric = metric or default_metric(model)
    y = model.spec.target_values(frame)
    baseline = metric(y, model.predict(frame))
    rng = np.random.default_rng(seed)
    columns = per_column(model.spec.columns(frame))  # one to permute at a time
    scores = np.zeros((len(names), n_repeats))
    for r in range(n_repeats):
        order = rng.permutation(frame.height)
        for i, name in enumerate(names):
            if by == "column":
                shuffled = frame.with_columns(frame.get_column(name).gather(order))
                prediction = model.predict(shuffled)
            else:
                # Shuffle one model feature: the core's columns, one permuted.
                permuted = [
                    c._replace(values=np.ascontiguousarray(c.values[order]))
                    if c.name == name
                    else c
                    for c in columns
                ]
                prediction = model._core.predict_response(permuted)
                prediction = prediction[:, 0] if prediction.shape[1] == 1 else prediction
            scores[i, r] = metric(y, prediction) - baseline
    return scores.mean(axis=1), scores.std(axis=1, ddof=1) if n_repeats > 1 else np.zeros(
        len(names)
    )
