"""Several quantiles in one model (optboost.Quantiles): one output per level, a polars frame of
q<level> columns, never crossing; every method that takes pinball takes it; saved and loaded
bit for bit."""

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import _core
from optboost.errors import ParameterError, ParameterTypeError

LEVELS = [0.05, 0.5, 0.95]


def _frame(n, seed, noise="hetero"):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=n)
    z = rng.normal(size=n)
    scale = 0.2 + np.abs(x) if noise == "hetero" else 1.0
    y = np.sin(2 * x) + z * 0.3 + scale * rng.standard_t(3, size=n)
    return pl.DataFrame({"x": x, "z": z, "y": y})


def _crossings(frame):
    values = frame.to_numpy()
    return int(np.sum(np.any(np.diff(values, axis=1) < 0, axis=1)))


def test_predict_gives_one_column_per_level_that_never_crosses():
    train, test = _frame(600, 0), _frame(400, 1)
    model = optboost.boost("y ~ x + z", train, loss=optboost.Quantiles(LEVELS), n_iter=60)
    assert model.loss == "quantiles(0.05, 0.5, 0.95)"
    pred = model.predict(test)
    assert isinstance(pred, pl.DataFrame)
    assert pred.columns == ["q0.05", "q0.5", "q0.95"]
    assert pred.height == test.height
    assert _crossings(pred) == 0
    # The levels cover what they should on unseen rows (a loose band: 400 rows).
    y = test["y"].to_numpy()
    below = [(y <= pred[c].to_numpy()).mean() for c in pred.columns]
    assert below[0] < 0.15 and 0.35 < below[1] < 0.65 and below[2] > 0.85, below
    # The raw scores are the link; sorting them gives the response.
    link = model.predict(test, type="link")
    assert link.shape == (test.height, 3)
    np.testing.assert_array_equal(np.sort(link, axis=1), pred.to_numpy())


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore::UserWarning")  # the momentum methods' safeguard notes
def test_zero_crossings_over_random_data_for_every_method_that_takes_pinball():
    methods = []
    for method in optboost.method_names():
        try:
            _core.resolve_params([("method", method), ("loss", "pinball(0.9)")])
        except Exception:
            continue
        methods.append(method)
    assert {"gbm", "proximal", "accelerated_proximal"} <= set(methods)
    rng = np.random.default_rng(7)
    for trial in range(12):
        method = methods[trial % len(methods)]
        n = int(rng.integers(30, 300))
        levels = sorted(rng.choice(np.arange(1, 100), size=int(rng.integers(2, 6)), replace=False))
        levels = [float(v) / 100 for v in levels]
        train = _frame(n, trial, noise="hetero" if trial % 2 else "flat")
        model = optboost.boost(
            "y ~ x + z",
            train,
            method=method,
            loss=optboost.Quantiles(levels),
            n_iter=int(rng.integers(1, 40)),
            learning_rate=float(rng.uniform(0.05, 1.0)),
            max_depth=int(rng.integers(1, 5)),
        )
        # Unseen inputs far outside the training range too.
        wide = pl.DataFrame({"x": rng.uniform(-50, 50, 500), "z": rng.normal(0, 10, 500)})
        for rows in (train, wide):
            pred = model.predict(rows)
            assert pred.width == len(levels)
            assert _crossings(pred) == 0, (method, levels)


def test_sorting_never_raises_the_pinball_loss_of_the_raw_scores():
    train, test = _frame(300, 2), _frame(300, 3)
    model = optboost.boost(
        "y ~ x + z", train, loss=optboost.Quantiles([0.1, 0.3, 0.5, 0.7, 0.9]), n_iter=40,
        learning_rate=0.8,
    )
    tau = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    y = test["y"].to_numpy()[:, None]

    def loss(q):
        r = y - q
        return np.maximum(tau * r, (tau - 1) * r).sum(axis=1)

    raw, sorted_ = model.predict(test, type="link"), model.predict(test).to_numpy()
    assert np.all(loss(sorted_) <= loss(raw) + 1e-12)


def test_each_output_equals_the_pinball_model_of_its_level():
    train = _frame(300, 4)
    joint = optboost.boost("y ~ x + z", train, loss=optboost.Quantiles(LEVELS), n_iter=20)
    link = joint.predict(train, type="link")
    for k, tau in enumerate(LEVELS):
        single = optboost.boost("y ~ x + z", train, loss=optboost.Pinball(tau), n_iter=20)
        np.testing.assert_allclose(link[:, k], single.predict(train), rtol=0, atol=1e-12)


def test_saved_and_loaded_bit_for_bit(tmp_path):
    train = _frame(200, 5)
    model = optboost.boost("y ~ x + z", train, loss="quantiles(0.1, 0.9)", n_iter=15)
    path = tmp_path / "q.json"
    model.save(path)
    loaded = optboost.load(path)
    assert loaded.loss == "quantiles(0.1, 0.9)"
    assert loaded.predict(train).equals(model.predict(train))
    assert loaded.predict(train).columns == ["q0.1", "q0.9"]


def test_bad_levels_are_refused_with_the_value():
    with pytest.raises(ParameterError, match="0.5 then 0.2"):
        optboost.Quantiles([0.5, 0.2])
    with pytest.raises(ParameterError, match=r"\(0, 1\)"):
        optboost.Quantiles([0.5, 1.0])
    with pytest.raises(ParameterError, match="1 to 99"):
        optboost.Quantiles([])
    with pytest.raises(ParameterTypeError, match="numbers"):
        optboost.Quantiles(["a"])
    with pytest.raises(ParameterTypeError, match="list"):
        optboost.Quantiles(0.5)
    with pytest.raises(ParameterError, match="newton"):
        optboost.boost("y ~ x", _frame(50, 6), loss=optboost.Quantiles(LEVELS), step="newton")


def test_onnx_sorts_and_treelite_refuses():
    pytest.importorskip("onnx")
    model = optboost.boost("y ~ x + z", _frame(100, 13), loss=optboost.Quantiles(LEVELS), n_iter=5)
    assert model.to_onnx() is not None
    with pytest.raises(ParameterError, match="Quantiles"):
        model.to_treelite()


def test_permutation_importance_reads_the_summed_pinball_loss():
    train = _frame(300, 14)
    model = optboost.boost("y ~ x + z", train, loss=optboost.Quantiles(LEVELS), n_iter=30)
    table = model.feature_importance(kind="permutation", data=train, n_repeats=2)
    ranked = table["column"].to_list()
    assert ranked[0] == "x"  # y depends on x through sin(2x) and the noise's scale


def test_boost_regressor_predicts_the_sorted_levels():
    from optboost.sklearn import BoostRegressor

    train = _frame(200, 15)
    X, y = train.select("x", "z").to_numpy(), train["y"].to_numpy()
    regressor = BoostRegressor(loss=optboost.Quantiles(LEVELS), n_iter=20).fit(X, y)
    model = optboost.boost("y ~ x + z", train, loss=optboost.Quantiles(LEVELS), n_iter=20)
    np.testing.assert_array_equal(regressor.predict(X), model.predict(train).to_numpy())
