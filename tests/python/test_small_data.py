"""The small-data guard: early stopping on a validation part of n < 50 rows counts an iteration
as an improvement only when it lowers the best validation loss so far by more than a share 1/n
of it, and a kept model worse than the constant on its own validation data is said.

The data: 60 rows of 2,000 noise columns and a random binary target, 48 rows to train and 12 to
validate (a wide tiny set, as in issue 41)."""

import warnings

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import WorseThanConstantWarning

ROWS, COLUMNS, TRAIN = 60, 2000, 48
SMALL_VALIDATION_ROWS = 50


def noise_frame(seed: int, rows: int = ROWS, columns: int = COLUMNS) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, columns))
    y = (rng.random(rows) < 0.5).astype(int)
    return pl.DataFrame({f"x{j}": x[:, j] for j in range(columns)}).with_columns(y=pl.Series(y))


def fit(train, valid, **params):
    params = {"loss": "logistic", "n_threads": 1, "progress": False, **params}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = optboost.boost("y ~ .", train, valid=valid, **params)
    return model, [w for w in caught if issubclass(w.category, WorseThanConstantWarning)]


def log_loss(y, p) -> float:
    p = np.clip(np.asarray(p, dtype=float), 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


@pytest.mark.timeout(300)
def test_tiny_validation_part_stops_before_the_cap():
    # Seed 3: the 12 validation rows are all of one class, and their loss creeps down by ever
    # smaller amounts for as long as trees are added: any decrease counted as an improvement,
    # early stopping (patience 50) ran all 1,000 iterations.
    df = noise_frame(3)
    train, valid = df[:TRAIN], df[TRAIN:]
    model, _ = fit(train, valid, n_iter=1000, early_stopping_rounds=50)
    assert model.n_iter < 1000
    assert "early stopping" in model.stop_reason
    losses = np.asarray(model.history["valid_loss"])
    y = valid["y"].to_numpy()
    constant = log_loss(y, model.predict(valid, iteration=0))
    best = model.best_iteration
    kept = constant if best == 0 else losses[best - 1]
    # No later iteration beat the kept one by one row's share of its loss...
    assert np.all(losses[best:] >= kept * (1 - 1 / valid.height))
    # ... and training ran exactly the patience past it.
    assert model.n_iter == best + 50
    assert log_loss(y, model.predict(valid)) == pytest.approx(kept, rel=1e-9)


@pytest.mark.timeout(300)
def test_fifty_validation_rows_keep_the_plain_rule():
    # At 50 validation rows the margin is off: the kept iterate is the lowest validation loss.
    df = noise_frame(5, rows=TRAIN + SMALL_VALIDATION_ROWS, columns=200)
    train, valid = df[:TRAIN], df[TRAIN:]
    model, _ = fit(train, valid, n_iter=300, early_stopping_rounds=20)
    losses = np.asarray(model.history["valid_loss"])
    constant = log_loss(valid["y"].to_numpy(), model.predict(valid, iteration=0))
    expected = 0 if losses.min() >= constant else int(np.argmin(losses)) + 1
    assert model.best_iteration == expected
    # One row fewer and the rule applies: the lowest loss is within one row's share of the
    # kept iterate's.
    small = valid[: SMALL_VALIDATION_ROWS - 1]
    model, _ = fit(train, small, n_iter=300, early_stopping_rounds=20)
    losses = np.asarray(model.history["valid_loss"])
    constant = log_loss(small["y"].to_numpy(), model.predict(small, iteration=0))
    best = model.best_iteration
    kept = constant if best == 0 else losses[best - 1]
    assert losses.min() >= kept * (1 - 1 / small.height)


@pytest.mark.timeout(300)
def test_a_model_worse_than_the_constant_on_its_validation_data_warns():
    # Seed 0: every tree raises the validation loss; without early stopping gbm keeps its last
    # iterate, as asked, and says it is worse than the constant.
    df = noise_frame(0)
    train, valid = df[:TRAIN], df[TRAIN:]
    model, caught = fit(train, valid, n_iter=200)
    y = valid["y"].to_numpy()
    kept = log_loss(y, model.predict(valid))
    constant = log_loss(y, model.predict(valid, iteration=0))
    assert kept > constant
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"{kept:.6g}" in message and f"{constant:.6g}" in message
    assert "iteration 200" in message
    assert caught[0].filename == __file__  # attributed to the user's call


@pytest.mark.timeout(300)
def test_early_stopping_keeps_the_constant_without_a_warning():
    df = noise_frame(0)
    train, valid = df[:TRAIN], df[TRAIN:]
    model, caught = fit(train, valid, n_iter=200, early_stopping_rounds=20)
    assert model.best_iteration == 0 and model.n_trees == 0
    assert caught == []


@pytest.mark.timeout(120)
def test_a_model_better_than_the_constant_does_not_warn():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 5))
    y = (x[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    df = pl.DataFrame({f"x{j}": x[:, j] for j in range(5)}).with_columns(y=pl.Series(y))
    model, caught = fit(df[:300], df[300:], n_iter=50)
    assert caught == []
    y_va = df[300:]["y"].to_numpy()
    assert log_loss(y_va, model.predict(df[300:])) < log_loss(
        y_va, model.predict(df[300:], iteration=0)
    )


@pytest.mark.timeout(300)
def test_an_automatic_held_out_part_is_guarded_too():
    # No valid= given: the rows validation_fraction holds out are the model's own validation
    # data. Seed 0's trees fit noise, so the last of 200 iterates is worse than the constant
    # there, and saying so is the guard; with early stopping the constant is kept, silently.
    df = noise_frame(0)
    model, caught = fit(df, None, n_iter=200, validation_fraction=0.2)
    assert model.n_iter == 200 and len(caught) == 1
    assert "higher than the initial constant" in str(caught[0].message)
    model, caught = fit(df, None, n_iter=1000, early_stopping_rounds=50,
                        validation_fraction=0.2)
    assert model.best_iteration == 0 and model.n_iter == 50
    assert caught == []
