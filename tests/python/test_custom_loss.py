"""optboost.CustomLoss: a custom squared loss reproduces the built-in squared
model for every method, the derived prox and line searches are exact on a
non-quadratic loss, bad callables give clear errors, and saved models predict
the link."""

import numpy as np
import polars as pl
import pytest

import optboost

SQUARED = optboost.CustomLoss(
    value=lambda y, f: 0.5 * (y - f) ** 2,
    gradient=lambda y, f: f - y,
    hessian=lambda y, f: np.ones_like(f),
)


@pytest.mark.parametrize("method", optboost.method_names())
def test_custom_squared_reproduces_the_built_in(crabs, method):
    built_in = optboost.boost("y ~ .", crabs, loss="squared", method=method, n_iter=10)
    # A custom loss's curvature is unknown: it gets the leaf minimum of the other losses (10),
    # the built-in least squares 1.
    custom = optboost.boost("y ~ .", crabs, loss=SQUARED, method=method, n_iter=10,
                            min_samples_leaf=1)
    assert custom.loss == "custom"
    np.testing.assert_allclose(custom.predict(crabs), built_in.predict(crabs), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        custom.history["train_loss"], built_in.history["train_loss"], rtol=1e-12
    )


def test_without_hessian_and_a_non_quadratic_loss(crabs):
    # The Poisson loss as a custom loss (no Hessian: central differences) against the built-in:
    # the leaf line searches and the proximal method's prox are derived by 1-D solves.
    counts = crabs.with_columns(pl.col("y").round())
    poisson = optboost.CustomLoss(
        value=lambda y, f: np.exp(f) - y * f + np.where(y > 0, y * np.log(np.maximum(y, 1e-300)) - y, 0.0),
        gradient=lambda y, f: np.exp(f) - y,
    )
    for method in ("gbm", "proximal"):
        fits = {
            name: optboost.boost("y ~ .", counts, loss=loss, method=method, n_iter=8,
                                 leaf_newton_steps=0)
            for name, loss in (("built_in", "poisson"), ("custom", poisson))
        }
        # The first iteration: the same tree and leaves (exact leaf searches on both sides).
        np.testing.assert_allclose(
            fits["custom"].predict(counts, type="link", iteration=1),
            fits["built_in"].predict(counts, type="link", iteration=1),
            rtol=1e-9,
        )
        # Later trees may break near-ties of split gains differently (gradients equal to
        # rounding): the losses agree.
        np.testing.assert_allclose(
            fits["custom"].history["train_loss"], fits["built_in"].history["train_loss"],
            rtol=1e-5,
        )


def test_bad_callables_are_named(crabs):
    def shape(y, f):
        return np.zeros((len(y), 2))

    def short(y, f):
        return np.zeros(len(y) - 1)

    def not_finite(y, f):
        g = f - y
        g[:3] = np.nan
        return g

    def raises(y, f):
        raise ValueError("no")

    value = SQUARED.value
    with pytest.raises(optboost.OptboostError, match=r"CustomLoss gradient returned an array that is not one-dimensional"):
        optboost.boost("y ~ .", crabs, loss=optboost.CustomLoss(value, shape), n_iter=3)
    with pytest.raises(optboost.OptboostError, match=r"CustomLoss gradient returned \d+ values for \d+ rows"):
        optboost.boost("y ~ .", crabs, loss=optboost.CustomLoss(value, short), n_iter=3)
    with pytest.raises(optboost.OptboostError, match=r"CustomLoss gradient returned 3 non-finite values \(of \d+\)"):
        optboost.boost("y ~ .", crabs, loss=optboost.CustomLoss(value, not_finite), n_iter=3)
    with pytest.raises(optboost.OptboostError, match=r"CustomLoss value raised .*no"):
        optboost.boost("y ~ .", crabs, loss=optboost.CustomLoss(raises, SQUARED.gradient), n_iter=3)
    with pytest.raises(optboost.OptboostError, match="CustomLoss gradient must be a callable"):
        optboost.CustomLoss(value, 3)


def interrupting_loss(armed):
    """SQUARED, whose gradient raises KeyboardInterrupt (as Ctrl-C would) while armed["now"]."""

    def gradient(y, f):
        if armed["now"]:
            armed["now"] = False
            raise KeyboardInterrupt
        return f - y

    return optboost.CustomLoss(SQUARED.value, gradient, SQUARED.hessian)


@pytest.mark.parametrize("method", ["gbm", "agbm", "proximal"])
def test_ctrl_c_inside_the_loss_keeps_the_finished_iterations(crabs, method):
    # Row and feature sampling draw from the generator, and momentum methods carry state: the
    # interrupted iteration must leave no trace in either for update() to continue exactly.
    params = dict(method=method, subsample=0.7, colsample_bytree=0.8, seed=3, progress=False)
    reference = optboost.boost("y ~ .", crabs, loss=SQUARED, n_iter=7, **params)
    armed = {"now": False}

    def arm_after_4(record):
        armed["now"] = record["iteration"] == 4  # the next gradient call is iteration 5's

    with pytest.warns(UserWarning, match="interrupted after 4 iterations"):
        model = optboost.boost(
            "y ~ .", crabs, loss=interrupting_loss(armed), n_iter=50, callback=arm_after_4, **params
        )
    assert model.interrupted and model.n_iter == 4
    assert model.history["train_loss"].is_finite().all()
    np.testing.assert_array_equal(
        model.predict(crabs), reference.predict(crabs, iteration=4)
    )
    model.update(3)  # training goes on from the 4 finished iterations, as if never interrupted
    assert model.n_iter == 7 and not model.interrupted
    np.testing.assert_array_equal(
        model.history["train_loss"].to_numpy(), reference.history["train_loss"].to_numpy()
    )
    np.testing.assert_array_equal(
        model.predict(crabs, iteration=7), reference.predict(crabs, iteration=7)
    )


def test_ctrl_c_inside_the_loss_before_the_first_iteration(crabs):
    # The initial constant's search calls the gradient: nothing is fitted yet to keep.
    with pytest.raises(KeyboardInterrupt):
        optboost.boost("y ~ .", crabs, loss=interrupting_loss({"now": True}), n_iter=5)


def test_saved_custom_model_predicts_the_link(crabs, tmp_path):
    model = optboost.boost("y ~ .", crabs, loss=SQUARED, n_iter=5)
    link = model.predict(crabs)
    np.testing.assert_array_equal(link, model.predict(crabs, type="link"))
    path = tmp_path / "custom.json"
    model.save(path)
    with pytest.warns(UserWarning, match="not restorable"):
        loaded = optboost.load(path)
    np.testing.assert_array_equal(loaded.predict(crabs), link)
    with pytest.raises(optboost.OptboostError):
        optboost.boost("y ~ .", crabs, loss="custom", n_iter=2)


def test_the_regressor_takes_a_custom_loss_and_the_classifier_refuses_it(crabs):
    from sklearn.base import clone

    from optboost.sklearn import BoostClassifier, BoostRegressor

    X = crabs.drop("y").select(pl.selectors.numeric()).to_numpy()
    y = crabs["y"].to_numpy()
    built_in = BoostRegressor(n_iter=10, validation_fraction=None).fit(X, y)
    custom = BoostRegressor(loss=SQUARED, n_iter=10, validation_fraction=None,
                            params={"min_samples_leaf": 1})
    custom = clone(custom).fit(X, y)
    assert custom.core_model_.loss == "custom"
    np.testing.assert_allclose(custom.predict(X), built_in.predict(X), rtol=0, atol=1e-9)
    with pytest.raises(optboost.OptboostError, match="BoostRegressor"):
        BoostClassifier(loss=SQUARED, n_iter=2).fit(X, (y > y.mean()).astype(int))
