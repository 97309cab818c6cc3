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


def test_given_folds_are_used_as_given():
    frame = data(60)
    folds = [np.arange(0, 20, dtype=np.int32), pl.Series(range(39, 19, -1)), list(range(40, 55))]
    result = optboost.cv("y ~ a + b", frame, folds=folds, n_iter=3, keep_models=True)
    # sorted, as int64; rows 55..59 validate no fold (they train every one)
    assert [f.tolist() for f in result.folds] == [
        list(range(20)), list(range(20, 40)), list(range(40, 55))
    ]
    assert [f.dtype for f in result.folds] == [np.int64] * 3
    for rows, model in zip(result.folds, result.models):
        alone = optboost.boost(
            "y ~ a + b", frame[np.setdiff1d(np.arange(60), rows)], valid=frame[rows], n_iter=3,
            progress=False,
        )
        np.testing.assert_array_equal(model.predict(frame), alone.predict(frame))


@pytest.mark.parametrize(
    "folds,message",
    [
        ([[0, 1, 2], [2, 3]], r"folds\[1\] and folds\[0\] both hold row 2"),
        ([[0, 1], [5, 3], [7, 8, 3]], r"folds\[2\] and folds\[1\] both hold row 3"),
        ([[0, 1, 1], [2, 3]], r"folds\[0\] lists row 1 more than once"),
        ([[0, 1], [2.0, 3.0]], r"folds\[1\] must hold integer row indices, got float64"),
        ([[0, 1], [2, 3.5]], r"folds\[1\] must hold integer row indices"),
        ([[True, False], [2, 3]], r"folds\[0\] must hold integer row indices, got bool"),
        ([[0, 1], ["2", "3"]], r"folds\[1\] must hold integer row indices"),
        ([[0, 1], [[2, 3]]], r"folds\[1\] must hold integer row indices, got a 2-dimensional"),
        ([[0, 1], []], r"folds\[1\] has no rows"),
        ([[0, 1], [2, 60]], r"folds\[1\] holds row 60, outside 0\.\.59"),
        ([[-1, 1], [2, 3]], r"folds\[0\] holds row -1, outside"),
        ([[0, 1]], r"at least 2 folds, got 1"),
        ([[0, 1], 5], r"folds\[1\] must be a list of row indices"),
        ("01", r"folds must be a number of folds or lists of row indices"),
    ],
)
def test_given_folds_that_overlap_repeat_or_are_not_row_indices_are_refused(folds, message):
    with pytest.raises(optboost.ParameterError, match=message):
        optboost.cv("y ~ a + b", data(60), folds=folds, n_iter=2)


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


def test_an_unseen_level_is_reported_once_at_the_cv_call_not_per_fold():
    frame = data().with_columns(
        k=pl.Series([f"level{i % 8}" if i % 50 else f"rare{i}" for i in range(400)])
    )
    with pytest.warns(UserWarning, match="not seen in training") as record:
        optboost.cv("y ~ a + k", frame, folds=4, n_iter=3, metrics=["rmse"])
    unseen = [w for w in record if "not seen in training" in str(w.message)]
    assert len(unseen) == 1  # every fold holds rare levels; one warning says so
    assert unseen[0].filename == __file__
