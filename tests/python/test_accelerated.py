"""Accelerated methods from Python: the best iterate kept and warned about, prediction at any
iteration (equal to a fresh fit), staged prediction, and no divergence with the defaults."""

from __future__ import annotations

import warnings

import numpy as np
import optboost
import polars as pl
import pytest
from conftest import _dataset
from support import binary_frame, regression_frame

# Every method the core knows, so that a new one is tested without editing this file.
METHODS = optboost.method_names()
ACCELERATED = ["agbm", "agbmr", "vagbm", "accelerated_gbm", "accelerated_proximal"]
# The papers' algorithms exactly: no safeguard, the printed sign, every row trains.
UNGUARDED_PAPER = {"safeguard": "none", "corrected_residual": "paper", "validation_fraction": None}


def fit(data, formula="y ~ .", **params):
    params.setdefault("progress", False)
    params.setdefault("n_threads", 1)
    return optboost.boost(formula, data, **params)


@pytest.mark.parametrize("method", METHODS)
def test_predict_at_iteration_k_equals_a_fresh_k_iteration_fit(method):
    data = regression_frame(300, seed=3)
    # Every row trains (no held-out part), so that the model keeps its last iteration.
    params = dict(
        method=method, max_depth=3, learning_rate=0.3, max_inner=2, validation_fraction=None
    )
    full = fit(data, n_iter=8, **params)
    assert full.kept_iteration == 8
    staged = full.staged_predict(data, iterations=[0, 3, 8], type="link")
    for stage, k in zip(staged, [0, 3, 8]):
        at_k = full.predict(data, type="link", iteration=k)
        assert np.array_equal(stage, at_k)
        if k:
            fresh = fit(data, n_iter=k, **params)
            assert np.array_equal(fresh.predict(data, type="link"), at_k), k
    assert np.array_equal(full.predict(data), full.predict(data, iteration=8))
    assert len(full.staged_predict(data)) == 8
    with pytest.raises(optboost.ParameterError, match="iteration"):
        full.predict(data, iteration=9)
    with pytest.raises(optboost.ParameterError, match="integer"):
        full.predict(data, iteration=True)


def housing():
    return _dataset("boston_housing")


def test_a_risen_loss_keeps_the_best_iterate_and_warns_at_the_users_call():
    # Unguarded AGBM with the paper's sign at η = 1 rises after its best iterate (the issue's
    # adult example in small): the model keeps the best one and says so.
    data = housing()
    with pytest.warns(UserWarning, match=r"keeps iteration \d+") as caught:
        model = fit(
            data, method="agbm", n_iter=40, learning_rate=1.0, gamma=0.1, **UNGUARDED_PAPER
        )
    assert caught[0].filename == __file__  # stacklevel points at this call
    losses = model.history["train_loss"].to_numpy()
    kept = model.best_iteration
    assert kept is not None and kept < 40
    assert losses[kept - 1] == losses.min() < losses[-1]
    assert model.kept_iteration == kept
    assert model.history["kept"].to_list().index(True) == kept - 1
    assert f"keeps iteration {kept} of 40" in model.summary()
    assert f"keeps iteration {kept}" in repr(model)
    assert np.array_equal(model.predict(data), model.predict(data, iteration=kept))


def test_the_safeguard_warns_and_the_loss_never_rises():
    data = housing()
    with pytest.warns(UserWarning, match="the safeguard undid") as caught:
        model = fit(data, method="vagbm", n_iter=100, learning_rate=1.0, validation_fraction=None)
    assert caught[0].filename == __file__
    losses = model.history["train_loss"].to_numpy()
    assert np.all(np.diff(losses) <= 0)
    assert model.history["restarted"].sum() > 0
    assert model.best_iteration is None
    assert "safeguard" in model.summary()


def test_the_reference_code_sign_converges_where_the_papers_sign_diverges():
    # housing, η = 1, γ = 0.05, depth 3, both unguarded (AGBM paper, Fig. 1 setting).
    data = housing()
    common = dict(method="agbm", n_iter=150, learning_rate=1.0, gamma=0.05, max_depth=3)
    common["validation_fraction"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = fit(data, safeguard="none", corrected_residual="paper", **common)
    losses = paper.history["train_loss"].to_numpy()
    assert "diverged" in paper.stop_reason or losses[-1] > 10 * losses.min()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: it converges
        reference = fit(data, safeguard="none", corrected_residual="reference_code", **common)
    losses = reference.history["train_loss"].to_numpy()
    assert losses[-1] < 0.05 * losses[0]


def test_a_diverged_fit_never_returns_the_constant_silently():
    data = regression_frame(200, seed=5)
    with pytest.warns(UserWarning, match="initial constant"):
        model = fit(data, method="gbm", n_iter=5, learning_rate=1000.0, step="constant")
    assert model.n_trees == 0 and model.kept_iteration == 0
    assert "initial constant" in model.summary()


@pytest.mark.parametrize(
    "name, loss",
    [("sonar", "logistic"), ("pima_diabetes", "logistic"), ("boston_housing", "squared")],
)
@pytest.mark.parametrize("method", ACCELERATED)
def test_accelerated_defaults_do_not_diverge(name, loss, method):
    data = _dataset(name)
    n_iter = 150 if method in ("agbm", "agbmr") else 300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # safeguard restarts are reported, and allowed
        model = fit(data, method=method, loss=loss, n_iter=n_iter, max_depth=6)
    losses = model.history["train_loss"].to_numpy()
    assert "diverged" not in model.stop_reason
    assert np.all(np.isfinite(losses))
    # Momentum steps never raise the loss; a plain step after a restart may, by rounding, once
    # the loss is ~0 (a depth-6 ensemble separates sonar): allow 1e-9 of the starting loss.
    rise = np.max(losses[1:] - np.minimum.accumulate(losses)[:-1])
    assert rise <= 1e-9 * losses[0], f"the training loss rose by {rise}"
    assert losses[-1] < losses[0]


def test_plot_marks_the_kept_iteration(tmp_path):
    pytest.importorskip("matplotlib")
    data = housing()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fit(
            data, method="agbm", n_iter=40, learning_rate=1.0, gamma=0.1, **UNGUARDED_PAPER
        )
    fig = model.plot(tmp_path / "curves.png")
    kept = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}["_agbm kept"]
    trees = model.history.filter(pl.col("kept"))["trees"].item()
    assert list(kept.get_xdata()) == [trees]


def test_binary_staged_class_predictions():
    data = binary_frame(200, seed=2)
    model = fit(data, "label ~ a + b", method="agbm", loss="logistic", n_iter=5)
    stages = model.staged_predict(data, type="class")
    assert len(stages) == 5
    assert set(np.unique(stages[-1])) <= {"yes", "no"}
    assert np.array_equal(stages[-1], model.predict(data, type="class"))
    assert isinstance(model.history, pl.DataFrame)


def test_a_momentum_method_holds_out_a_tenth_by_default_and_keeps_its_best_iterate():
    # "auto" is exactly an explicit validation frame of the same held-out rows.
    from optboost.holdout import held_rows

    data = regression_frame(400, seed=11)
    params = dict(method="agbm", n_iter=60, learning_rate=0.3, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "keeps iteration k" is reported, and expected
        auto = fit(data, **params)
        held = held_rows(data["y"].to_numpy(), 0.1, 4, stratify=False)
        explicit = fit(data.filter(~held), valid=data.filter(held), **params)
    assert held.sum() == 40
    assert auto.history["valid_loss"].null_count() == 0
    assert np.array_equal(auto.predict(data), explicit.predict(data))
    valid = auto.history["valid_loss"].to_numpy()
    assert auto.kept_iteration == int(np.argmin(valid)) + 1


def test_classification_holds_out_every_class_in_proportion():
    from optboost.holdout import held_rows

    y = np.repeat([0.0, 1.0, 2.0], [50, 30, 120])
    held = held_rows(y, 0.1, 0, stratify=True)
    assert [int(held[y == c].sum()) for c in (0, 1, 2)] == [5, 3, 12]
    data = binary_frame(300, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fit(data, "label ~ a + b", method="vagbm", loss="logistic", n_iter=20)
    assert model.history["valid_loss"].null_count() == 0


@pytest.mark.parametrize(
    "method, rows, held_out",
    [("agbm", 400, True), ("gbm", 400, False), ("proximal", 400, False), ("agbm", 90, False)],
)
def test_auto_holds_out_only_for_momentum_methods_with_enough_rows(method, rows, held_out):
    data = regression_frame(rows, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fit(data, method=method, n_iter=5)
    assert (model.history["valid_loss"].null_count() == 0) == held_out


def test_validation_fraction_none_runs_every_row_and_keeps_the_last_iterate():
    data = regression_frame(400, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a safeguard restart is reported, and allowed
        model = fit(data, method="accelerated_gbm", n_iter=30, validation_fraction=None)
    assert model.history["valid_loss"].null_count() == 30
    assert model.kept_iteration == 30


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, "half", True])
def test_a_bad_validation_fraction_is_refused(bad):
    data = regression_frame(200, seed=2)
    with pytest.raises(optboost.ParameterError, match="validation_fraction"):
        fit(data, method="agbm", n_iter=3, validation_fraction=bad)


def test_a_validation_frame_and_a_fraction_together_are_refused():
    data = regression_frame(200, seed=2)
    with pytest.raises(optboost.ParameterError, match="not both"):
        fit(data, method="agbm", n_iter=3, valid=data, validation_fraction=0.2)


def test_the_held_out_part_protects_the_test_loss_of_a_momentum_method():
    # Noisy data and many iterations: the unguarded-by-validation fit goes on fitting noise.
    rng = np.random.default_rng(0)
    n = 1200
    x = rng.normal(size=(n, 5))
    y = np.sin(2 * x[:, 0]) + 0.5 * x[:, 1] + rng.normal(scale=1.0, size=n)
    frame = pl.DataFrame({f"x{j}": x[:, j] for j in range(5)}).with_columns(y=y)
    train, test = frame.head(600), frame.tail(600)
    truth = np.sin(2 * test["x0"].to_numpy()) + 0.5 * test["x1"].to_numpy()
    errors = {}
    for fraction in ("auto", None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = fit(train, method="agbm", n_iter=300, validation_fraction=fraction)
        errors[fraction] = np.mean((model.predict(test) - truth) ** 2)
    assert errors["auto"] < 0.8 * errors[None], errors
