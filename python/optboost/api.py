"""``optboost.boost``: a formula, a data frame and a method in; a fitted Model out.

Documentation: https://optboost.github.io/optboost/method_guide/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core
from .fitting import fit
from .losses import LossLike
from .continuation import check_formula, continued_booster
from .crossval import cv
from .errors import ParameterError
from .model import Model, load
from .plan import R_NAMES, FitPlan
from .training import Callback, Progress


def boost(
    formula: str,
    data: Any,
    *,
    method: str | None = None,
    loss: LossLike | Mapping[str, Any] | None = None,
    n_iter: int | None = None,
    learning_rate: float | None = None,
    valid: Any = None,
    validation_fraction: float | str | None = "auto",
    weights: Any = None,
    offset: Any = None,
    class_weight: Any = None,
    group: Any = None,
    early_stopping_rounds: int | None = None,
    seed: int | None = None,
    n_threads: int | None = None,
    progress: Progress = None,
    callback: Callback | None = None,
    context: Mapping[str, Any] | None = None,
    init_model: Any = None,
    **params: Any,
) -> Model:
    """Fit a boosted model.

    formula: ``"y ~ a + b + C(c) + np.log(d) + a:b"`` (``y ~ .`` for all other
        columns); bare columns go to the core without copying, string and
        categorical columns become native categorical features.
    data: a polars or pandas DataFrame (never modified; no row is dropped).
    method: "gbm" (the default), "rgbm", "agbm", "agbmr", "vagbm", "proximal", ...
        (docs/algorithms.md §4), in any case.
    loss: "squared", "absolute", "logistic", ... or a loss object such as
        ``optboost.Pinball(tau=0.9)``. A binary loss takes a target of 0/1, bool
        or two strings (the second in sorted order is the positive class); a
        multiclass loss takes integer or string classes. None: chosen from the
        target as R's gbm chooses its distribution (the summary records it):
        ``Surv(...)`` cox, two distinct values logistic, more than two string,
        categorical or boolean labels softmax (each said by a
        LossInferredWarning), anything else squared.
    n_iter, learning_rate, seed, n_threads: None is the core's default (100,
        0.1, 0, all cores).
    valid: a validation frame with the same columns, for ``history`` and
        ``early_stopping_rounds``; a momentum method keeps the iterate of lowest
        validation loss.
    validation_fraction: without ``valid``, hold out this fraction of the rows
        (seeded by ``seed``, stratified by class) as the validation data.
        "auto": 0.1 for the momentum methods (agbm, agbmr, vagbm,
        accelerated_gbm, accelerated_proximal) when that is at least 10 rows,
        so that they keep the iterate of lowest held-out loss instead of the
        last one (docs/algorithms.md); none for the other methods. None:
        train on every row (the papers' algorithms exactly).
    weights: a column name or one value per row.
    offset: a column name (left out of ``.``; the validation frame's column of
        that name is its offset) or an array, n values or (n, K) for K classes:
        added to the link before the first iteration (R's offset, LightGBM's
        init_score, XGBoost's base_margin). The model does not store it:
        ``predict`` needs ``offset=`` too, as R's glm and gbm do.
    group: the query groups of a ranking loss (``lambdarank``, ``pairwise``,
        ``rank_xendcg``): a column name (left out of ``.``; the validation
        frame's column of that name gives its groups) or one id per row. Rows
        are ranked within their group; a group's rows need not be contiguous.
        Held-out validation rows are whole groups.
    class_weight: "balanced" (every class the same total weight) or a
        mapping from class label to weight, multiplying the sample weights
        of the training rows (classification losses only).
    progress: None shows a bar for fits longer than ~2 s on a terminal;
        True always; False never.
    callback: called with a dict of the history record after every
        iteration; returning False stops training, raising KeyboardInterrupt
        stops it like Ctrl-C (the model keeps the finished iterations).
    context: extra names for formula expressions (your own functions).
    init_model: a Model (or the path of a saved one) to train ``n_iter``
        more iterations from, on ``data`` through its own formula and bin
        mappers (pass the formula, method, loss and parameters it was fitted
        with; no offset, weights column or custom loss). For gbm, rgbm and
        proximal this is, bit for bit, the model of one fit with its
        iterations plus ``n_iter``; other methods are refused.
    **params: any other training parameter by name (max_depth, gamma,
        lambda, step, ...; ``optboost.param_names()`` lists them), among them
        ``subsample``, ``colsample_bytree``, ``colsample_bynode``;
        ``sample_strategy="goss"`` (with ``top_rate``, ``other_rate``) and
        ``quantized_gradients=True``;
        ``monotone={"age": 1, "debt": -1}`` (by column: 1 increasing, -1
        decreasing; bare numeric columns only) and
        ``interactions=[["a", "b"], ["c", "d"]]`` (the columns whose features
        may share a root-to-leaf path; a column in no group is used alone);
        ``metrics=["auc", "logloss", f]`` (built-ins: auc, rmse, mae, error,
        logloss, poisson_deviance, gamma_deviance; or callables
        ``f(y, prediction) -> float`` on the encoded target and the response
        predictions), recorded in ``history`` as train_<name> and
        valid_<name>; with validation data, early stopping and the kept
        iterate follow the first metric on the validation rows instead of the
        validation loss (LightGBM's ``first_metric_only``; it must then be a
        built-in one, callables are recorded only);
        ``preset="paper"`` runs the method as its paper states it (every
        setting of docs/algorithms.md §13 you do not give yourself; then
        ``validation_fraction="auto"`` holds out nothing) and ``keep="last"``
        keeps the last iterate instead of a momentum method's best one;
        ``cat_encoding="target_stats"`` (or ``"city:target_stats,zip:partition"``
        by column; default ``"partition"``) replaces categorical columns by
        ordered target statistics (Prokhorenkova et al. 2018): the mean target
        of a level's earlier rows in a seeded permutation, shrunk towards the
        mean with weight ``cat_prior_weight`` (1); one per class for multiclass
        losses; ``cat_permutations`` (1) averages them over that many
        permutations, ``cat_combinations`` (0) adds at most that many pairs of
        such columns whose ordered statistic predicts better than either
        column's (feature ``"a*b"``, SHAP shared equally by the two). Not in
        Dask fits or the ONNX/treelite exports.

    R's gbm and mboost argument names are accepted with their meaning (pass
    them as ``**{"n.trees": 500}``): ``n.trees`` and ``mstop`` (n_iter),
    ``shrinkage`` and ``nu`` (learning_rate), ``bag.fraction`` (subsample),
    ``n.minobsinnode`` (min_samples_leaf), ``interaction.depth`` = k (k splits
    per tree: leaf-wise growth with k + 1 leaves), ``distribution`` (a loss, or
    R's list as a dict: ``{"name": "quantile", "alpha": 0.9}``),
    ``train.fraction`` (the first rows train, the rest validate) and
    ``cv.folds`` = k (k-fold ``optboost.cv`` first; the model is then fitted on
    every row with the best iteration's number of iterations, as
    ``gbm.perf(method="cv")`` picks it, and keeps the cross-validation as
    ``model.cv``).

    Documentation: https://optboost.github.io/optboost/api/#optboost.api.boost
    """
    arguments = dict(
        method=method,
        loss=loss,
        n_iter=n_iter,
        learning_rate=learning_rate,
        valid=valid,
        validation_fraction=validation_fraction,
        weights=weights,
        offset=offset,
        class_weight=class_weight,
        group=group,
        early_stopping_rounds=early_stopping_rounds,
        seed=seed,
        n_threads=n_threads,
        progress=progress,
        callback=callback,
        context=context,
        **params,
    )
    plan = FitPlan.make(arguments, formula=formula, data=data)
    if init_model is not None:
        return _continue(init_model, formula, data, plan)
    if plan.fit["cv_folds"] is not None:
        return _fit_with_cv(formula, data, plan, arguments)
    return fit(formula, data, plan)


def _continue(init_model: Any, formula: str, data: Any, plan: FitPlan) -> Model:
    """``boost(..., init_model=)``: a new Model, ``init_model`` trained further."""
    start = _as_model(init_model)
    check_formula(start, formula)
    if plan.functions or plan.constraints:
        raise ParameterError(
            "init_model takes the core's parameters only: pass no callable metrics, "
            "monotone or interactions (the model's features keep their own)"
        )
    pairs = dict(plan.pairs)
    booster = continued_booster(start, data, pairs, plan.fit["valid"])
    model = Model(start._core, start.spec, pairs, start._history, None, booster=booster)
    model._earlier_history = {name: list(v) for name, v in start._history.items()}
    model._train(plan.n_iter, plan.fit["progress"], plan.fit["callback"])
    return model


def _as_model(init_model: Any) -> Model:
    """``init_model`` as a Model: a Model, or the path of a saved one."""
    if isinstance(init_model, Model):
        return init_model
    if isinstance(init_model, str) or hasattr(init_model, "__fspath__"):
        return load(init_model)
    raise ParameterError(
        f"init_model must be an optboost.Model or the path of a saved model, got "
        f"{type(init_model).__name__}"
    )


def _fit_with_cv(formula: str, data: Any, plan: FitPlan, arguments: dict[str, Any]) -> Model:
    """R gbm's ``cv.folds = k``: k-fold cross-validation of the same parameters
    (``optboost.cv``), then the model on every row with the best iteration's number of
    iterations, which ``gbm.perf(method="cv")`` reports; the model keeps the cross-validation
    as ``model.cv``."""
    given = {
        name: value
        for name, value in arguments.items()
        if value is not None and R_NAMES.get(name, name) not in ("cv_folds", "loss")
    }
    given["loss"] = plan.loss
    result = cv(formula, data, folds=plan.fit["cv_folds"], **{**given, "progress": False})
    # The full fit trains the cross-validated number of iterations (no early stopping).
    given = {
        name: value
        for name, value in given.items()
        if R_NAMES.get(name, name) not in ("n_iter", "early_stopping_rounds")
    }
    best = FitPlan.make({**given, "n_iter": result.best_iteration})
    best.loss_note = plan.loss_note
    model = fit(formula, data, best)
    model.cv = result
    return model


def param_names() -> list[str]:
    """Every training parameter ``boost`` accepts by name."""
    return list(_core.param_names())


def method_names() -> list[str]:
    """Every method name."""
    return list(_core.method_names())
