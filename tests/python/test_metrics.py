"""Evaluation metrics (``metrics=[...]``): built-ins against scikit-learn on
the predictions, callables, early stopping on the first metric, errors."""

import numpy as np
import polars as pl
import pytest

import optboost

sk = pytest.importorskip("sklearn.metrics")


@pytest.fixture
def pima():
    from conftest import _dataset

    frame = _dataset("pima_diabetes")
    return frame[:500], frame[500:]


def test_binary_metrics_equal_scikit_learn(pima):
    train, valid = pima
    model = optboost.boost(
        "y ~ .", train, valid=valid, loss="logistic", n_iter=15,
        metrics=["auc", "logloss", "error", "rmse", "mae"],
    )
    last = model.history.row(-1, named=True)
    for frame, side in [(train, "train"), (valid, "valid")]:
        y, p = frame["y"].to_numpy(), model.predict(frame)
        assert last[f"{side}_auc"] == pytest.approx(sk.roc_auc_score(y, p), rel=1e-12)
        assert last[f"{side}_logloss"] == pytest.approx(sk.log_loss(y, p), rel=1e-10)
        assert last[f"{side}_error"] == pytest.approx(np.mean((p > 0.5) != y), abs=0)
        assert last[f"{side}_rmse"] == pytest.approx(np.sqrt(np.mean((y - p) ** 2)), rel=1e-12)
        assert last[f"{side}_mae"] == pytest.approx(np.mean(np.abs(y - p)), rel=1e-12)
    # The logistic loss is the log loss.
    assert last["valid_logloss"] == pytest.approx(last["valid_loss"], rel=1e-10)


def test_multiclass_and_deviance_metrics(penguins, concrete):
    model = optboost.boost("y ~ .", penguins, loss="softmax", n_iter=10, metrics=["logloss", "error"])
    frame = penguins
    y = model.spec.target_values(frame)
    p = model.predict(frame)
    last = model.history.row(-1, named=True)
    assert last["train_logloss"] == pytest.approx(sk.log_loss(y, p, labels=[0, 1, 2]), rel=1e-10)
    assert last["train_error"] == pytest.approx(np.mean(np.argmax(p, axis=1) != y))
    assert last["valid_logloss"] is None
    poisson = optboost.boost("y ~ .", concrete, loss="poisson", n_iter=10, metrics="poisson_deviance")
    mu = poisson.predict(concrete)
    assert poisson.history["train_poisson_deviance"][-1] == pytest.approx(
        sk.mean_poisson_deviance(concrete["y"].to_numpy(), mu), rel=1e-10
    )


def test_weighted_rmse(crabs):
    w = np.linspace(0.5, 2.0, crabs.height)
    model = optboost.boost("y ~ .", crabs, weights=w, n_iter=5, metrics=["rmse"])
    y, p = crabs["y"].to_numpy(), model.predict(crabs)
    expected = np.sqrt(np.sum(w * (y - p) ** 2) / np.sum(w))
    assert model.history["train_rmse"][-1] == pytest.approx(expected, rel=1e-12)


def test_early_stopping_follows_the_first_metric(pima):
    train, valid = pima
    common = dict(valid=valid, loss="logistic", n_iter=300, early_stopping_rounds=10)
    by_auc = optboost.boost("y ~ .", train, metrics=["auc", "logloss"], **common)
    history = by_auc.history
    auc = history["valid_auc"].to_numpy()
    best = int(np.argmax(auc)) + 1  # first iteration of the largest AUC
    assert by_auc.kept_iteration == best
    assert history["iteration"][-1] == best + 10
    # Without metrics the validation loss decides, and here it decides differently.
    by_loss = optboost.boost("y ~ .", train, **common)
    assert by_loss.kept_iteration != by_auc.kept_iteration
    # Pinned to the first metric: logloss first behaves as the validation loss.
    by_logloss = optboost.boost("y ~ .", train, metrics=["logloss", "auc"], **common)
    assert by_logloss.kept_iteration == by_loss.kept_iteration


def test_callable_metrics(crabs, tmp_path):
    seen = {}

    def rmse(y, p):
        seen["types"] = (type(y), type(p), p.shape)
        return float(np.sqrt(np.mean((y - p) ** 2)))

    train, valid = crabs[:150], crabs[150:]
    model = optboost.boost(
        "y ~ .", train, valid=valid, n_iter=6, metrics=["rmse", rmse, lambda y, p: 1.0]
    )
    history = model.history
    assert seen["types"] == (np.ndarray, np.ndarray, (50,))  # the last call: validation rows
    assert history["train_metric_2"].to_list() == [1.0] * 6  # a lambda: named by position
    # The callable equals the built-in, iteration by iteration (its name, rmse, is the
    # built-in's, so it is named by its position too).
    np.testing.assert_allclose(history["train_metric_1"], history["train_rmse"], rtol=1e-12)
    np.testing.assert_allclose(history["valid_metric_1"], history["valid_rmse"], rtol=1e-12)
    model.update(2)
    assert model.history["train_metric_1"].len() == 8
    np.testing.assert_allclose(model.history["train_metric_1"], model.history["train_rmse"], rtol=1e-12)
    # Saved: the built-in columns stay, the callables' are not restorable.
    path = tmp_path / "m.json"
    model.save(path)
    loaded = optboost.load(path)
    np.testing.assert_array_equal(loaded.history["train_rmse"], model.history["train_rmse"])


def test_metrics_from_the_cli(tmp_path, crabs):
    from optboost.cli import main

    data = tmp_path / "crabs.parquet"
    crabs.write_parquet(data)
    main(["fit", str(data), "y ~ .", "-p", "metrics=rmse,mae", "--n-iter", "3", "-o",
          str(tmp_path / "m.json"), "--quiet"])
    history = optboost.load(tmp_path / "m.json").history
    assert history["train_rmse"].len() == 3 and history["train_mae"].null_count() == 0


def test_metric_errors(crabs, pima):
    train, valid = pima
    with pytest.raises(optboost.OptboostError, match="unknown metric 'accuracy'"):
        optboost.boost("y ~ .", crabs, n_iter=2, metrics=["accuracy"])
    with pytest.raises(optboost.OptboostError, match="auc with the squared loss"):
        optboost.boost("y ~ .", crabs, n_iter=2, metrics=["auc"])
    with pytest.raises(optboost.OptboostError, match="'bad' returned str"):
        def bad(y, p):
            return "high"

        optboost.boost("y ~ .", crabs, n_iter=2, metrics=[bad])
    with pytest.raises(optboost.OptboostError, match="must be a built-in one"):
        optboost.boost("y ~ .", train, valid=valid, loss="logistic", n_iter=5,
                       early_stopping_rounds=2, metrics=[lambda y, p: 0.0, "auc"])
    one_class = valid.with_columns(pl.lit(1).alias("y"))
    with pytest.raises(optboost.OptboostError, match="auc needs both classes"):
        optboost.boost("y ~ .", train, valid=one_class, loss="logistic", n_iter=5, metrics=["auc"])


def test_metrics_in_the_estimators(pima):
    from optboost.sklearn import BoostClassifier

    train, valid = pima
    x, y = train.drop("y").to_numpy(), train["y"].to_numpy()
    xv, yv = valid.drop("y").to_numpy(), valid["y"].to_numpy()
    classifier = BoostClassifier(n_iter=5, params={"metrics": ["auc"]})
    classifier.fit(x, y, eval_set=(xv, yv))
    assert classifier.history_["valid_auc"][-1] == pytest.approx(
        sk.roc_auc_score(yv, classifier.predict_proba(xv)[:, 1]), rel=1e-12
    )
    with pytest.raises(optboost.OptboostError, match="callable metrics need optboost.boost"):
        BoostClassifier(n_iter=2, params={"metrics": [lambda y, p: 0.0]}).fit(x, y)
