"""optboost.cv against a hand-rolled fold loop; fold making; the CLI command."""

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.cli import main


def data(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = x[:, 0] - 2 * (x[:, 1] > 0) + rng.normal(scale=0.5, size=n)
    return pl.DataFrame(
        {
            "a": x[:, 0],
            "b": x[:, 1],
            "c": x[:, 2],
            "y": y,
            "g": rng.integers(0, 20, n),
            "yes": y > 0,
        }
    )


def test_cv_agrees_bit_for_bit_with_a_hand_rolled_fold_loop():
    frame = data()
    params = {"method": "agbm", "n_iter": 30, "max_depth": 3, "learning_rate": 0.2}
    result = optboost.cv("y ~ a + b + c", frame, folds=4, seed=3, **params)
    train, valid = [], []
    for rows in result.folds:
        rest = np.setdiff1d(np.arange(frame.height), rows)
        model = optboost.boost(
            "y ~ a + b + c", frame[rest], valid=frame[rows], seed=3, progress=False, **params
        )
        train.append(model.history["train_loss"].to_numpy())
        valid.append(model.history["valid_loss"].to_numpy())
    for name, losses in (("train", np.array(train)), ("valid", np.array(valid))):
        assert result.history[f"{name}_mean"].to_list() == list(np.mean(losses, axis=0))
        se = np.std(losses, axis=0, ddof=1) / np.sqrt(4)
        assert result.history[f"{name}_se"].to_list() == list(se)
    mean = np.mean(np.array(valid), axis=0)
    assert result.best_iteration == int(np.argmin(mean)) + 1
    assert result.best_iteration_1se <= result.best_iteration
    assert "best iteration" in repr(result)


def test_folds_partition_the_rows_and_respect_strata_and_groups():
    frame = data()
    result = optboost.cv("yes ~ a + b", frame, folds=5, loss="logistic", n_iter=3)
    rows = np.concatenate(result.folds)
    assert sorted(rows) == list(range(frame.height))
    share = frame["yes"].mean()
    for fold in result.folds:
        assert abs(frame["yes"].to_numpy()[fold].mean() - share) < 0.02
    grouped = optboost.cv("y ~ a", frame, folds=4, groups="g", n_iter=2)
    seen = [set(frame["g"].to_numpy()[fold]) for fold in grouped.folds]
    assert all(not (seen[i] & seen[j]) for i in range(4) for j in range(i + 1, 4))


def test_cv_keeps_models_and_evaluates_metrics():
    frame = data()
    result = optboost.cv(
        "yes ~ a + b",
        frame,
        folds=3,
        loss="logistic",
        n_iter=5,
        keep_models=True,
        metrics=["logloss", "error"],
    )
    assert len(result.models) == 3
    assert result.metrics["metric"].to_list() == ["logloss", "error"]
    assert (result.metrics["mean"] > 0).all()


def test_cv_plot(tmp_path):
    pytest.importorskip("matplotlib")
    result = optboost.cv("y ~ a + b", data(), folds=3, n_iter=5)
    result.plot(tmp_path / "cv.png")
    assert (tmp_path / "cv.png").stat().st_size > 0


def test_cli_cv(tmp_path, capsys):
    path = tmp_path / "train.parquet"
    data().write_parquet(path)
    out = tmp_path / "cv.csv"
    assert (
        main(["cv", str(path), "y ~ a + b", "--folds", "3", "--n-iter", "5", "-o", str(out)]) == 0
    )
    assert "best iteration" in capsys.readouterr().out
    assert pl.read_csv(out).height == 5


def test_cli_predict_contrib(tmp_path):
    path = tmp_path / "train.parquet"
    data().write_parquet(path)
    model_path = tmp_path / "model.json"
    assert main(["fit", str(path), "y ~ a + b", "-o", str(model_path), "-q", "--n-iter", "5"]) == 0
    out = tmp_path / "contrib.csv"
    assert main(["predict", str(model_path), str(path), "--type", "contrib", "-o", str(out)]) == 0
    assert pl.read_csv(out).columns == ["a", "b", "bias"]
