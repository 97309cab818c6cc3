"""One fit plan for every entry point: R gbm's and mboost's argument names with their meaning,
the loss inferred from the target as R's gbm does, the hints, the core's defaults and metrics."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import optboost
from optboost.errors import LossInferredWarning, ParameterError
from optboost.plan import DEFAULTS, FitPlan, infer_loss

pytestmark = pytest.mark.timeout(120)


def frame(n: int = 300, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = rng.uniform(size=n)
    c = rng.choice(["u", "v", "w"], n)
    score = a + 2 * b + (c == "w") + rng.normal(scale=0.5, size=n)
    return pl.DataFrame(
        {
            "a": a,
            "b": b,
            "c": c,
            "y": score,
            "hit": (score > 1.5).astype(np.int64),
            "grade": np.where(score < 0.5, "low", np.where(score < 2.0, "mid", "high")),
        }
    )


def same_model(m1: optboost.Model, m2: optboost.Model, data: pl.DataFrame) -> None:
    assert m1.params == m2.params
    assert m1._core.to_json() == m2._core.to_json()
    np.testing.assert_array_equal(m1.predict(data), m2.predict(data))


def test_the_defaults_are_the_cores():
    assert DEFAULTS == {
        "method": "gbm", "loss": "squared", "n_iter": 100, "learning_rate": 0.1, "seed": 0,
        "n_threads": 0,
    }
    plan = FitPlan.make({})
    assert dict(plan.pairs)["n_iter"] == "100" and plan.method == "gbm"
    assert plan.n_iter == 100


def test_r_gbm_names_give_the_model_of_optboost_names():
    data = frame()
    r_names = optboost.boost(
        "hit ~ a + b + c",
        data,
        **{
            "distribution": "bernoulli",
            "n.trees": 25,
            "shrinkage": 0.05,
            "interaction.depth": 3,
            "bag.fraction": 0.8,
            "n.minobsinnode": 7,
        },
    )
    own = optboost.boost(
        "hit ~ a + b + c",
        data,
        loss="logistic",
        n_iter=25,
        learning_rate=0.05,
        growth="leafwise",
        max_leaves=4,
        max_depth=3,
        subsample=0.8,
        min_samples_leaf=7,
    )
    same_model(r_names, own, data)
    # interaction.depth = 3: three splits, four leaves per tree at most
    assert max(t["n_leaves"] for t in _tree_sizes(r_names)) <= 4


def _tree_sizes(model: optboost.Model) -> list[dict]:
    trees = model.trees()
    return (
        trees.group_by("tree").agg(n_leaves=pl.col("is_leaf").sum()).to_dicts()
    )


def test_mboost_names_and_r_distribution_lists():
    data = frame()
    mboost = optboost.boost("y ~ a + b", data, mstop=20, nu=0.2, loss="squared")
    same_model(mboost, optboost.boost("y ~ a + b", data, n_iter=20, learning_rate=0.2,
                                      loss="squared"), data)
    quantile = optboost.boost(
        "y ~ a + b", data, n_iter=10, distribution={"name": "quantile", "alpha": 0.9}
    )
    assert quantile.loss == "pinball(0.9)"
    same_model(quantile, optboost.boost("y ~ a + b", data, n_iter=10, loss="pinball(0.9)"), data)
    with pytest.raises(ParameterError, match="takes no 'beta'"):
        optboost.boost("y ~ a", data, distribution={"name": "quantile", "beta": 1})
    with pytest.raises(ParameterError, match="one parameter"):
        optboost.boost("y ~ a", data, n_iter=5, **{"n.trees": 5})
    with pytest.raises(ParameterError, match="pass no max_leaves"):
        optboost.boost("y ~ a", data, max_leaves=8, **{"interaction.depth": 2})


def test_names_in_any_case_and_the_hints():
    data = frame()
    upper = optboost.boost("y ~ a + b", data, method="AGBM", n_iter=5, loss="squared",
                           validation_fraction=None)
    assert upper.method == "agbm"
    with pytest.raises(ParameterError, match=r"quantile\(0\.9\)"):
        optboost.boost("y ~ a", data, loss="quantile", alpha=0.9)
    with pytest.raises(ParameterError, match="optboost calls it n_iter"):
        optboost.boost("y ~ a", data, loss="squared", num_boost_round=5)


def test_train_fraction_trains_on_the_first_rows_and_validates_on_the_rest():
    data = frame(200)
    model = optboost.boost("y ~ a + b + c", data, n_iter=15, loss="squared",
                           **{"train.fraction": 0.75})
    split = optboost.boost("y ~ a + b + c", data[:150], valid=data[150:], n_iter=15,
                           loss="squared")
    np.testing.assert_array_equal(model.predict(data), split.predict(data))
    np.testing.assert_array_equal(
        model.history["valid_loss"].to_numpy(), split.history["valid_loss"].to_numpy()
    )
    with pytest.raises(ParameterError, match="train.fraction"):
        optboost.boost("y ~ a", data, valid=data, loss="squared", **{"train.fraction": 0.5})


def test_cv_folds_keeps_the_cross_validated_iteration_as_gbm_perf():
    data = frame(240)
    model = optboost.boost("y ~ a + b + c", data, n_iter=40, learning_rate=0.3, loss="squared",
                           **{"cv.folds": 3})
    result = optboost.cv("y ~ a + b + c", data, folds=3, n_iter=40, learning_rate=0.3,
                         loss="squared")
    assert model.cv.best_iteration == result.best_iteration < 40
    assert model.n_iter == result.best_iteration
    same_model(model, optboost.boost("y ~ a + b + c", data, n_iter=result.best_iteration,
                                     learning_rate=0.3, loss="squared"), data)
    assert "3-fold cross-validation" in model.summary()
    # Early stopping stops each fold; the full fit trains the cross-validated iterations.
    stopped = optboost.boost("y ~ a + b + c", data, n_iter=40, learning_rate=0.3, loss="squared",
                             early_stopping_rounds=3, **{"cv.folds": 3})
    assert stopped.n_iter == stopped.cv.best_iteration


@pytest.mark.parametrize(
    "formula, loss", [("hit ~ a + b", "logistic"), ("grade ~ a + b", "softmax")]
)
def test_the_loss_is_inferred_from_the_target_and_said_once(formula, loss):
    data = frame()
    with pytest.warns(LossInferredWarning) as caught:
        model = optboost.boost(formula, data, n_iter=5)
    assert len(caught) == 1 and loss in str(caught[0].message)
    assert model.loss.split("(")[0] == loss
    assert "loss chosen from the target" in model.summary()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossInferredWarning)
        given = optboost.boost(formula, data, n_iter=5, loss=loss)
    np.testing.assert_array_equal(given.predict(data), model.predict(data))
    assert given.loss_note is None


def test_a_numeric_target_keeps_the_default_loss_without_a_warning():
    data = frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossInferredWarning)
        model = optboost.boost("y ~ a + b", data, n_iter=5)
    assert model.loss == "squared"
    assert "the squared loss" in model.summary()


def test_inference_rules():
    data = frame().with_columns(
        flag=pl.col("hit") == 1, code=pl.Series(np.arange(300) % 4, dtype=pl.Int64)
    )
    assert infer_loss("Surv(time, status) ~ a", data)[0] == "cox"
    assert infer_loss("flag ~ a", data)[0] == "logistic"
    assert infer_loss("code ~ a", data)[0] == "squared"  # numbers: R's gaussian
    assert infer_loss("np.log(y) ~ a", data)[0] == "squared"
    assert infer_loss("grade ~ a", data.to_pandas())[0] == "softmax"


def test_cv_infers_the_loss_once_and_takes_the_cores_metrics():
    data = frame()
    with pytest.warns(LossInferredWarning) as caught:
        result = optboost.cv("hit ~ a + b", data, folds=3, n_iter=10, keep_models=True,
                             metrics=["auc", "logloss"])
    assert len(caught) == 1
    from sklearn.metrics import roc_auc_score

    table = dict(zip(result.metrics["metric"], result.metrics["folds"]))
    for rows, model, auc in zip(result.folds, result.models, table["auc"]):
        valid = data[rows]
        assert auc == pytest.approx(roc_auc_score(valid["hit"], model.predict(valid)), rel=1e-12)
    with pytest.raises(ParameterError, match="unknown metric 'mse'"):
        optboost.cv("hit ~ a", data, folds=3, n_iter=3, loss="logistic", metrics=["mse"])
