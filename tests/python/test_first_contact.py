"""What a new user types first: R's names, Python keywords, the loss spellings of
the README, and the command line's start-up."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest

import optboost
from optboost.errors import ParameterError


@pytest.fixture
def data() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    return pl.DataFrame({"x": x, "z": rng.normal(size=300), "y": (x > 0).astype(np.int64)})


def test_r_distribution_names_are_the_same_models(data):
    ours = optboost.boost("y ~ x + z", data, loss="logistic", n_iter=5)
    theirs = optboost.boost("y ~ x + z", data, loss="bernoulli", n_iter=5)
    assert theirs.loss == "logistic(0)" or theirs.loss == ours.loss
    np.testing.assert_array_equal(ours.predict(data), theirs.predict(data))


@pytest.mark.parametrize(
    ("name", "answer"),
    [("num_boost_round", "n_iter"), ("eta", "learning_rate"), ("num_leaves", "max_leaves")],
)
def test_other_libraries_argument_names_are_answered_with_ours(data, name, answer):
    # R's names are accepted as they are (test_fit_plan.py); LightGBM's and XGBoost's answered.
    with pytest.raises(ParameterError, match=f"optboost calls it {answer}"):
        optboost.boost("y ~ x", data, loss="logistic", **{name: 3})


def test_missing_r_distributions_say_so(data):
    with pytest.raises(ParameterError, match="tdist"):
        optboost.boost("y ~ x", data, loss="tdist")


def test_lambda_as_a_keyword(data):
    spelled = optboost.boost("y ~ x", data, method="proximal", loss="absolute", n_iter=3, lambda_=0.5)
    given = optboost.boost("y ~ x", data, method="proximal", loss="absolute", n_iter=3, **{"lambda": 0.5})
    np.testing.assert_array_equal(spelled.predict(data), given.predict(data))
    assert spelled.params["lambda"] == "0.5"


def test_loss_parameters_by_name_as_in_the_readme(data):
    named = optboost.boost("y ~ x", data, loss="huber(delta=2)", n_iter=3)
    positional = optboost.boost("y ~ x", data, loss=optboost.Huber(delta=2.0), n_iter=3)
    np.testing.assert_array_equal(named.predict(data), positional.predict(data))


def test_misspelt_method_and_loss_get_suggestions(data):
    with pytest.raises(ParameterError, match="did you mean 'agbm'"):
        optboost.boost("y ~ x", data, method="agmb")
    with pytest.raises(ParameterError, match="did you mean 'logistic'"):
        optboost.boost("y ~ x", data, loss="logstic")


def test_the_command_line_answers_help_without_importing_the_engine():
    code = (
        "import sys, optboost.cli\n"
        "heavy = [m for m in ('polars', 'formulaic', 'numpy', 'optboost._core') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_hinge_models_give_margins_not_probabilities(data):
    model = optboost.boost("y ~ x + z", data, loss="hinge", n_iter=20)
    margins = model.predict(data)
    np.testing.assert_array_equal(margins, model.predict(data, type="link"))
    assert (margins < 0).any()  # a signed margin, not a number in [0, 1]
    with pytest.raises(ParameterError, match="margins, not probabilities"):
        model.predict(data, type="response")
    assert set(model.predict(data, type="class")) <= {0, 1}


def test_training_goes_on_after_early_stopping_with_a_new_patience():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(500, 2))
    frame = pl.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": x[:, 0] + rng.normal(size=500)})
    train, valid = frame.head(400), frame.tail(100)
    model = optboost.boost(
        "y ~ a + b", train, valid=valid, n_iter=500, learning_rate=0.5, early_stopping_rounds=3
    )
    stopped = model.n_iter
    assert stopped < 500 and model.kept_iteration < stopped
    with pytest.warns(UserWarning, match="early_stopping_rounds"):
        model.update(10)
    assert model.n_iter == stopped
    model.update(10, early_stopping_rounds=None)
    assert model.n_iter == stopped + 10 and model.kept_iteration == stopped + 10
    fresh = optboost.boost("y ~ a + b", train, valid=valid, n_iter=stopped + 10, learning_rate=0.5)
    np.testing.assert_array_equal(model.predict(valid), fresh.predict(valid))
