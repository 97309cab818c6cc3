"""``optboost.cv``: k-fold cross-validation of a formula and its parameters, the
way ``lgb.cv``, ``xgb.cv`` and R's ``gbm(cv.folds=)`` users expect.

Each fold trains ``optboost.boost`` on the other folds with the fold itself as
``valid=``, so the per-iteration losses are the core's own (the model's loss,
weighted as in training). The result has their mean and standard error over
folds per iteration, the best iteration by the minimum and by the
one-standard-error rule (Breiman et al., "Classification and Regression
Trees", §3.4.3: the fewest iterations whose mean validation loss is within one
standard error of the minimum), and optionally the fold models.

Documentation: https://optboost.github.io/optboost/explain/
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ._extras import require
from .conformal import CVPlus, cv_plus_scores
from .errors import ParameterError
from .formula import _parse
from .fitting import fit
from .frames import to_polars
from .groups import group_codes, ranking_target
from .metrics import BUILT_IN, Metric, is_built_in
from .plan import R_NAMES, FitPlan


@dataclass
class CVResult:
    """What :func:`cv` returns.

    history: one row per iteration with ``n_folds`` (folds that reached it),
    ``train_mean``, ``train_se``, ``valid_mean``, ``valid_se`` (the standard
    error is the folds' sample standard deviation over √n_folds);
    best_iteration: the iteration of least mean validation loss;
    best_iteration_1se: the first iteration whose mean validation loss is at
    most the minimum plus its standard error; folds: the validation row
    indices of each fold; fold_histories: each fold model's history;
    metrics: per-fold values of the requested metrics with their mean and
    standard error (on each fold model's final predictions); models: the fold
    models with ``keep_models=True``; conformal: with ``conformal=True``, the CV+
    intervals of the fold models (``result.conformal.predict(new, level=0.9)``).
    """

    history: pl.DataFrame
    best_iteration: int
    best_iteration_1se: int
    folds: list[np.ndarray]
    fold_histories: list[pl.DataFrame]
    metrics: pl.DataFrame | None = None
    models: list[Any] | None = field(default=None, repr=False)
    conformal: CVPlus | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        best = self.history.row(self.best_iteration - 1, named=True)
        return (
            f"<optboost.CVResult {len(self.folds)} folds: best iteration {self.best_iteration} "
            f"(valid {best['valid_mean']:.5g} ± {best['valid_se']:.2g}), "
            f"one-SE rule {self.best_iteration_1se}>"
        )

    def plot(self, path: str | os.PathLike | None = None, ax: Any = None) -> Any:
        """Mean train and validation loss against iterations, a band of ±1
        standard error, and both best iterations (matplotlib). Returns the
        figure; with ``path`` also saves it."""
        matplotlib = require("matplotlib", "CVResult.plot")
        if path is not None and ax is None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        figure = ax.figure if ax is not None else plt.figure(figsize=(6, 4))
        ax = ax or figure.add_subplot(1, 1, 1)
        h = self.history
        x = h["iteration"].to_numpy()
        for name, color in (("train", "tab:blue"), ("valid", "tab:orange")):
            mean = h[f"{name}_mean"].to_numpy()
            se = np.nan_to_num(h[f"{name}_se"].to_numpy())
            ax.plot(x, mean, color=color, label=f"{name} (mean of {len(self.folds)} folds)")
            ax.fill_between(x, mean - se, mean + se, color=color, alpha=0.2)
        ax.axvline(self.best_iteration, color="k", linestyle="--", label="minimum")
        ax.axvline(self.best_iteration_1se, color="k", linestyle=":", label="one-SE rule")
        ax.set_xlabel("iteration")
        ax.set_ylabel("loss")
        ax.legend()
        if path is not None:
            figure.savefig(path, dpi=100, bbox_inches="tight")
        return figure


def cv(
    formula: str,
    data: Any,
    folds: int | Sequence[Sequence[int]] = 5,
    stratified: bool | None = None,
    groups: str | Sequence[Any] | None = None,
    seed: int = 0,
    metrics: Sequence[str | Metric] | Mapping[str, Metric] | None = None,
    keep_models: bool = False,
    conformal: bool = False,
    **params: Any,
) -> CVResult:
    """Cross-validate ``optboost.boost(formula, ..., **params)``.

    folds: the number of folds, or the validation row indices of each fold.
    stratified: keep each class's share in every fold (default: for binary
        and multiclass losses when ``groups`` is not given).
    groups: a column name or one label per row; rows of a group stay in one
        fold (group k-fold: groups shuffled, then each given to the fold with
        the fewest rows so far). A ranking loss's ``group=`` column is the
        default, and every fold must keep each query group whole.
    seed: the fold assignment's and the training's seed.
    metrics: the core's metric names (as ``boost``'s ``metrics=``: auc, rmse,
        mae, logloss, error, poisson_deviance, gamma_deviance) or functions
        ``f(y, prediction)`` of the encoded target and the response-scale
        predictions, evaluated on every fold's held-out rows with the fold
        model's kept iteration.
    conformal: also score every row with the fold model that held it out and
        keep the fold models, for CV+ prediction intervals (Barber, Candès,
        Ramdas & Tibshirani 2021) when no calibration rows can be spared:
        ``result.conformal.predict(new, type="interval", level=0.9)`` gives
        ``lower`` and ``upper`` (optboost.conformal.CVPlus). Regression and
        ``Quantiles`` losses; the fold models keep their last iteration, so
        early stopping (which would let the held-out rows choose the model) is
        refused.
    **params: anything :func:`optboost.boost` takes (method, loss, n_iter,
        weights, early_stopping_rounds, ...).

    Documentation: https://optboost.github.io/optboost/api/#optboost.crossval.cv
    """
    frame = to_polars(data)
    n = frame.height
    if "valid" in params:
        raise ParameterError("cv makes each fold's validation data itself; do not pass valid=")
    # The fit plan of the folds' common parameters: the loss (inferred once, from all rows,
    # when none is given) and the task that stratifies the folds.
    plan = FitPlan.make({**params, "seed": seed}, formula=formula, data=frame)
    if plan.fit["cv_folds"] is not None:
        raise ParameterError("cv makes the folds itself (folds=): pass no cv.folds")
    params = {name: value for name, value in params.items() if R_NAMES.get(name, name) != "loss"}
    params["loss"] = plan.loss
    task = plan.task
    if conformal:
        params = _cv_plus_params(params)
    weights_column = params.get("weights") if isinstance(params.get("weights"), str) else None
    target = _parse(formula, frame, weights_column)[0]
    query = plan.fit["group"]
    if query is not None and not isinstance(query, str):
        raise ParameterError("cv takes group= as a column name (each fold takes its rows)")
    if query is not None and groups is None:
        groups = query  # folds never split a query group
    validation_rows = make_folds(frame, folds, task, target, stratified, groups, seed)
    if query is not None:
        _check_whole_groups(validation_rows, group_codes(query, frame), query)
    metric_functions = _metric_functions(metrics)
    callable_metrics = any(f is not None for f in metric_functions.values())
    weights = params.pop("weights", None)
    histories, models, metric_values = [], [], {name: [] for name in metric_functions}
    fold_scores, score_kind = [], "absolute"
    for rows in validation_rows:
        train_rows = np.setdiff1d(np.arange(n), rows)
        fold_weights = weights
        if weights is not None and not isinstance(weights, str):
            fold_weights = np.asarray(weights, dtype=np.float64)[train_rows]
        fold = {"valid": frame[rows], "weights": fold_weights, "seed": seed, "progress": False}
        fold_plan = FitPlan.make({**params, **fold}, formula=formula, data=frame[train_rows])
        model = fit(formula, frame[train_rows], fold_plan)
        histories.append(model.history)
        if metric_functions:
            valid = frame[rows]
            y = model.spec.target_values(valid)
            prediction = model.predict(valid) if callable_metrics else None
            for name, function in metric_functions.items():
                if function is None:  # the core's metric
                    columns = model.spec.columns(valid)
                    target = np.ascontiguousarray(y, dtype=np.float64).ravel()
                    if query is not None:
                        target = ranking_target(target, group_codes(query, valid))
                    value = model._core.metric(name, columns, target)
                else:
                    value = function(y, prediction)
                metric_values[name].append(float(value))
        if conformal:
            score_kind, values = cv_plus_scores(model, frame[rows])
            fold_scores.append(values)
        if keep_models or conformal:
            models.append(model)
    cv_plus = None
    if conformal:
        fold_of = np.concatenate([np.full(len(r), f) for f, r in enumerate(validation_rows)])
        cv_plus = CVPlus(models, fold_of, np.concatenate(fold_scores), score_kind)
    history = fold_statistics(histories)
    best, best_1se = best_iterations(history)
    return CVResult(
        history=history,
        best_iteration=best,
        best_iteration_1se=best_1se,
        folds=validation_rows,
        fold_histories=histories,
        metrics=_metric_table(metric_values) if metric_functions else None,
        models=models if keep_models else None,
        conformal=cv_plus,
    )


def _cv_plus_params(params: dict[str, Any]) -> dict[str, Any]:
    """The fold models' parameters for CV+: their own held-out rows may not choose them."""
    for name, value in params.items():
        canonical = R_NAMES.get(name, name)
        if canonical == "early_stopping_rounds" and value is not None:
            raise ParameterError(
                "cv(conformal=True) refuses early_stopping_rounds: the rows that score a fold "
                "model must not choose its iteration (fix n_iter, e.g. cv's best_iteration)"
            )
        if canonical == "keep" and value != "last":
            raise ParameterError(
                f"cv(conformal=True) keeps each fold model's last iteration, not keep={value!r}"
            )
    return {**params, "keep": "last"}


def _check_whole_groups(validation_rows: list[np.ndarray], codes: np.ndarray, name: str) -> None:
    """Every query group validates in one fold and trains in the others."""
    for f, rows in enumerate(validation_rows):
        inside = np.zeros(len(codes), dtype=bool)
        inside[rows] = True
        split = np.intersect1d(codes[inside], codes[~inside])
        if split.size:
            row = int(np.flatnonzero(inside & (codes == split[0]))[0])
            raise ParameterError(
                f"fold {f} splits the query group of row {row} (column {name!r}) between "
                "training and validation: give folds (or groups=) that keep each query whole"
            )


def make_folds(
    frame: pl.DataFrame,
    folds: int | Sequence[Sequence[int]],
    task: str,
    target: str,
    stratified: bool | None,
    groups: str | Sequence[Any] | None,
    seed: int,
) -> list[np.ndarray]:
    """The validation row indices of each fold (sorted), deterministic in ``seed``."""
    n = frame.height
    if not isinstance(folds, (int, np.integer)) or isinstance(folds, bool):
        return _given_folds(folds, n)
    k = int(folds)
    if k < 2 or k > n:
        raise ParameterError(f"folds must be between 2 and the number of rows ({n}), got {k}")
    rng = np.random.default_rng(seed)
    fold_of = np.empty(n, dtype=np.int64)
    if groups is not None:
        if stratified:
            raise ParameterError("stratified folds and groups cannot be combined")
        labels = frame.get_column(groups) if isinstance(groups, str) else pl.Series(list(groups))
        if len(labels) != n:
            raise ParameterError(f"groups has {len(labels)} labels for {n} rows")
        codes = labels.cast(pl.String).fill_null("\0null").to_numpy()
        unique, group_of = np.unique(codes, return_inverse=True)
        if len(unique) < k:
            raise ParameterError(f"{len(unique)} groups cannot fill {k} folds")
        sizes = np.bincount(group_of)
        fold_sizes = np.zeros(k, dtype=np.int64)
        fold_of_group = np.empty(len(unique), dtype=np.int64)
        for g in rng.permutation(len(unique)):
            fold_of_group[g] = int(np.argmin(fold_sizes))
            fold_sizes[fold_of_group[g]] += sizes[g]
        fold_of = fold_of_group[group_of]
    elif stratified if stratified is not None else task != "regression":
        classes = frame.get_column(target).cast(pl.String).fill_null("\0null").to_numpy()
        # Deal each class's shuffled rows round the folds, continuing where the last
        # class stopped, so that fold sizes differ by at most one.
        offset = 0
        for label in np.unique(classes):
            rows = rng.permutation(np.flatnonzero(classes == label))
            fold_of[rows] = (offset + np.arange(len(rows))) % k
            offset += len(rows)
    else:
        fold_of[rng.permutation(n)] = np.arange(n) % k
    return [np.flatnonzero(fold_of == f) for f in range(k)]


def _given_folds(folds: Any, n: int) -> list[np.ndarray]:
    """The validation rows of each given fold, sorted: integer row indices in 0..n-1, each row
    in at most one fold and at most once (a row validated twice, or trained on in the fold that
    validates it, would bias the estimate)."""
    if isinstance(folds, (str, bytes)) or not isinstance(folds, Iterable):
        raise ParameterError(
            f"folds must be a number of folds or lists of row indices, got {folds!r}"
        )
    given = []
    for f, rows in enumerate(folds):
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
            raise ParameterError(f"folds[{f}] must be a list of row indices, got {rows!r}")
        rows = np.asarray(list(rows))
        if rows.size == 0:
            raise ParameterError(f"folds[{f}] has no rows")
        if rows.ndim != 1 or rows.dtype == bool or not np.issubdtype(rows.dtype, np.integer):
            kind = rows.dtype if rows.ndim == 1 else f"a {rows.ndim}-dimensional array"
            raise ParameterError(
                f"folds[{f}] must hold integer row indices, got {kind} (first {rows.flat[0]!r})"
            )
        outside = rows[(rows < 0) | (rows >= n)]
        if outside.size:
            raise ParameterError(f"folds[{f}] holds row {outside[0]}, outside 0..{n - 1}")
        rows = np.sort(rows.astype(np.int64))
        repeated = rows[1:][rows[1:] == rows[:-1]]
        if repeated.size:
            raise ParameterError(f"folds[{f}] lists row {repeated[0]} more than once")
        given.append(rows)
    if len(given) < 2:
        raise ParameterError(f"folds must give at least 2 folds, got {len(given)}")
    fold_of = np.full(n, -1, dtype=np.int64)
    for f, rows in enumerate(given):
        taken = rows[fold_of[rows] >= 0]
        if taken.size:
            raise ParameterError(
                f"folds[{f}] and folds[{fold_of[taken[0]]}] both hold row {taken[0]}: a row may "
                "validate one fold only (it trains the others)"
            )
        fold_of[rows] = f
    return given


def fold_statistics(histories: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Per iteration: folds that reached it, mean and standard error of the
    train and validation loss over them."""
    length = max(h.height for h in histories)
    columns: dict[str, list] = {"iteration": list(range(1, length + 1)), "n_folds": []}
    for name in ("train", "valid"):
        columns[f"{name}_mean"], columns[f"{name}_se"] = [], []
    for i in range(length):
        present = [h for h in histories if h.height > i]
        columns["n_folds"].append(len(present))
        for name in ("train", "valid"):
            values = np.array([h[f"{name}_loss"][i] for h in present], dtype=np.float64)
            columns[f"{name}_mean"].append(float(np.mean(values)))
            se = np.std(values, ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
            columns[f"{name}_se"].append(float(se))
    return pl.DataFrame(
        columns,
        schema={
            "iteration": pl.Int64,
            "n_folds": pl.Int64,
            "train_mean": pl.Float64,
            "train_se": pl.Float64,
            "valid_mean": pl.Float64,
            "valid_se": pl.Float64,
        },
    )


def best_iterations(history: pl.DataFrame) -> tuple[int, int]:
    """The iteration of least mean validation loss, and the first whose mean is
    within one standard error of that minimum."""
    mean = history["valid_mean"].to_numpy()
    se = np.nan_to_num(history["valid_se"].to_numpy())
    best = int(np.nanargmin(mean))
    within = np.flatnonzero(mean <= mean[best] + se[best])
    return best + 1, int(within[0]) + 1


def _metric_functions(metrics: Any) -> dict[str, Metric | None]:
    """The metrics by name: a function, or None for the core's metric of that name."""
    if metrics is None:
        return {}
    if isinstance(metrics, Mapping):
        return dict(metrics)
    if isinstance(metrics, str):
        metrics = [metrics]
    functions: dict[str, Metric | None] = {}
    for metric in metrics:
        if isinstance(metric, str):
            name = metric.strip().lower()
            if not is_built_in(name):
                raise ParameterError(
                    f"unknown metric {metric!r}; use one of {', '.join(BUILT_IN)} or a function "
                    "f(y, prediction)"
                )
            functions[name] = None
        elif callable(metric):
            functions[getattr(metric, "__name__", f"metric{len(functions)}")] = metric
        else:
            raise ParameterError(f"a metric must be a name or a function, got {metric!r}")
    return functions


def _metric_table(values: Mapping[str, list[float]]) -> pl.DataFrame:
    rows = []
    for name, per_fold in values.items():
        v = np.array(per_fold)
        rows.append(
            {
                "metric": name,
                "mean": float(v.mean()),
                "se": float(v.std(ddof=1) / np.sqrt(len(v))),
                "folds": per_fold,
            }
        )
    return pl.DataFrame(rows)
