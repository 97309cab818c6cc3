"""Modelling options through every front end: boost(), the scikit-learn
estimators and the CLI's --param."""

from __future__ import annotations

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.cli import main
from optboost.sklearn import BoostClassifier, BoostRegressor
from support import binary_frame, regression_frame


# ------------------------------------------------------------ subsampling


def test_subsampling_reaches_the_core_and_is_seeded():
    frame = regression_frame(2_000)
    fit = lambda **kw: optboost.boost(  # noqa: E731
        "y ~ a + b + s", frame, n_iter=30, progress=False, **kw
    ).predict(frame)
    full = fit()
    sampled = fit(subsample=0.5, colsample_bytree=0.7, colsample_bynode=0.5, seed=3)
    again = fit(subsample=0.5, colsample_bytree=0.7, colsample_bynode=0.5, seed=3, n_threads=1)
    other_seed = fit(subsample=0.5, colsample_bytree=0.7, colsample_bynode=0.5, seed=4)
    assert not np.array_equal(full, sampled)
    np.testing.assert_array_equal(sampled, again)
    assert not np.array_equal(sampled, other_seed)
    np.testing.assert_array_equal(fit(subsample=1.0), full)
    residual = frame["y"].to_numpy() - sampled
    assert residual.std() < 0.5 * frame["y"].std()


def test_subsample_out_of_range_is_a_parameter_error():
    with pytest.raises(optboost.ParameterError, match="subsample"):
        optboost.boost("y ~ a", regression_frame(), subsample=0.0, progress=False)
    # R's bag.fraction is subsample: accepted, with subsample's checks.
    with pytest.raises(optboost.ParameterError, match="subsample"):
        optboost.boost("y ~ a", regression_frame(), **{"bag.fraction": 1.5})


def test_goss_draws_seeded_rows_and_refuses_a_subsample_beside_it():
    frame = regression_frame(3_000)
    fit = lambda **kw: optboost.boost(  # noqa: E731
        "y ~ a + b + s", frame, n_iter=30, progress=False, **kw
    ).predict(frame)
    full = fit()
    goss = fit(sample_strategy="goss", seed=3)
    assert not np.array_equal(goss, full)
    np.testing.assert_array_equal(goss, fit(sample_strategy="goss", seed=3, n_threads=1))
    assert not np.array_equal(goss, fit(sample_strategy="goss", seed=4))
    np.testing.assert_array_equal(fit(top_rate=0.5, other_rate=0.5), full)
    residual = frame["y"].to_numpy() - goss
    assert residual.std() < 0.5 * frame["y"].std()
    with pytest.raises(optboost.ParameterError, match="subsample"):
        fit(sample_strategy="goss", subsample=0.5)
    with pytest.raises(optboost.ParameterError, match="sample_strategy"):
        fit(data_sample_strategy="goss")


def test_sklearn_estimators_take_the_sampling_fractions():
    frame = regression_frame(1_000)
    X, y = frame.select("a", "b").to_numpy(), frame["y"].to_numpy()
    full = BoostRegressor(n_iter=20).fit(X, y).predict(X)
    model = BoostRegressor(n_iter=20, subsample=0.5, colsample_bynode=0.5).fit(X, y)
    assert not np.array_equal(model.predict(X), full)
    assert model.get_params()["subsample"] == 0.5
    with pytest.raises(optboost.ParameterError, match="subsample"):
        BoostRegressor(subsample=0.5, params={"subsample": 0.5}).fit(X, y)
    labels = binary_frame(600)
    clf = BoostClassifier(n_iter=20, colsample_bytree=0.5).fit(
        labels.select("a", "b").to_numpy(), labels["label"].to_numpy()
    )
    assert clf.score(labels.select("a", "b").to_numpy(), labels["label"].to_numpy()) > 0.8


def test_quantized_gradients_is_a_switch_close_to_the_exact_fit():
    # 20,000 rows of three complete numeric columns: least-squares trees on unit weights, whose
    # statistics the switch rounds (docs/algorithms.md §7).
    rng = np.random.default_rng(5)
    x = rng.normal(size=(20_000, 3))
    frame = pl.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2]}).with_columns(
        y=pl.col("a").sin() + pl.col("b") * pl.col("c")
    )
    fit = lambda **kw: optboost.boost(  # noqa: E731
        "y ~ a + b + c", frame, n_iter=30, max_bins=63, progress=False, **kw
    ).predict(frame)
    exact, quantized = fit(), fit(quantized_gradients=True)
    assert not np.array_equal(exact, quantized)
    np.testing.assert_allclose(quantized, exact, atol=1e-2)
    np.testing.assert_array_equal(fit(quantized_gradients=False), exact)
    with pytest.raises(optboost.ParameterError, match="quantized_gradients"):
        fit(quantized_gradients="sometimes")
    with pytest.raises(optboost.ParameterError, match="max_depth"):
        fit(max_depth=True)


def test_cli_param_subsample(tmp_path):
    data = tmp_path / "train.parquet"
    regression_frame().write_parquet(data)
    paths = {}
    for label, extra in [("full", []), ("sampled", ["--param", "subsample=0.5"])]:
        paths[label] = tmp_path / f"{label}.json"
        args = ["fit", str(data), "y ~ a + b", "--n-iter", "10", "-q", "-o", str(paths[label])]
        assert main(args + extra) == 0
    frame = regression_frame()
    full, sampled = (optboost.load(paths[k]).predict(frame) for k in ("full", "sampled"))
    assert not np.array_equal(full, sampled)


# ------------------------------------------------------------ monotone and interaction constraints


def wiggly_frame(n: int = 3_000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    age, debt, c = rng.uniform(size=(3, n))
    region = rng.choice(["north", "south"], size=n)
    y = 2 * age + 0.6 * np.sin(12 * age) - 1.5 * debt + np.sin(6 * c) + rng.normal(0, 0.3, n)
    return pl.DataFrame({"age": age, "debt": debt, "c": c, "region": region, "y": y})


def along(model, frame: pl.DataFrame, column: str, rows: int = 30) -> np.ndarray:
    """Predictions for the first rows with `column` swept over a grid: rows x grid."""
    grid = np.linspace(-0.1, 1.1, 300)
    probe = frame.head(rows).join(pl.DataFrame({column + "_grid": grid}), how="cross")
    probe = probe.with_columns(pl.col(column + "_grid").alias(column)).drop(column + "_grid")
    return np.asarray(model.predict(probe)).reshape(rows, len(grid))


@pytest.mark.parametrize(
    "method, loss", [("gbm", "squared"), ("proximal", "absolute"), ("agbmr", "huber(0.5)")]
)
def test_boost_monotone_by_column_name(method, loss):
    frame = wiggly_frame()
    model = optboost.boost(
        "y ~ age + debt + c + region", frame, method=method, loss=loss, n_iter=40,
        monotone={"age": 1, "debt": -1}, progress=False,
    )
    assert (np.diff(along(model, frame, "age"), axis=1) >= 0).all()
    assert (np.diff(along(model, frame, "debt"), axis=1) <= 0).all()
    free = optboost.boost("y ~ age + debt + c", frame, n_iter=40, progress=False)
    assert not (np.diff(along(free, frame, "age"), axis=1) >= 0).all()


def test_boost_monotone_errors_name_the_problem():
    frame = wiggly_frame(300)
    with pytest.raises(optboost.ParameterError, match="categorical"):
        optboost.boost("y ~ age + region", frame, monotone={"region": 1})
    with pytest.raises(optboost.ParameterError, match="not a feature"):
        optboost.boost("y ~ age", frame, monotone={"debt": 1})
    with pytest.raises(optboost.ParameterError, match="bare"):
        optboost.boost("y ~ np.log(age) + debt", frame, monotone={"age": 1})
    with pytest.raises(optboost.ParameterError, match="1, -1 or 0"):
        optboost.boost("y ~ age", frame, monotone={"age": 2})
    # A transformed feature can be named exactly.
    optboost.boost("y ~ np.log(age) + debt", frame, monotone={"np.log(age)": 1}, n_iter=3)


def test_boost_interactions_by_column():
    frame = wiggly_frame(2_000)
    model = optboost.boost(
        "y ~ age + debt + c + region", frame, n_iter=10, max_depth=4,
        interactions=[["age", "debt"], ["c", "region"]], progress=False,
    )
    # Along age, the prediction's shape must not depend on c or region: the difference of two
    # sweeps over age at rows differing only in c and region is constant.
    base = frame.head(1).with_columns(pl.lit(0.9).alias("c"), pl.lit("south").alias("region"))
    other = frame.head(1).with_columns(pl.lit(0.1).alias("c"), pl.lit("north").alias("region"))
    difference = along(model, base, "age", rows=1)[0] - along(model, other, "age", rows=1)[0]
    assert np.ptp(difference) < 1e-9


def test_sklearn_and_cli_take_constraints(tmp_path):
    frame = wiggly_frame(1_500)
    X, y = frame.select("age", "debt", "c"), frame["y"].to_numpy()
    by_name = BoostRegressor(n_iter=30, monotone={"age": 1}).fit(X, y)
    by_index = BoostRegressor(n_iter=30, monotone={0: 1}).fit(X.to_numpy(), y)
    np.testing.assert_array_equal(by_name.predict(X), by_index.predict(X.to_numpy()))
    assert (np.diff(along(by_name, frame.select("age", "debt", "c"), "age"), axis=1) >= 0).all()
    BoostRegressor(n_iter=5, interactions=[[0, 1]]).fit(X.to_numpy(), y)
    data = tmp_path / "train.parquet"
    frame.write_parquet(data)
    out = tmp_path / "model.json"
    args = ["fit", str(data), "y ~ age + debt + c", "--n-iter", "30", "-q", "-o", str(out)]
    assert main(args + ["--param", "monotone=age:1,debt:-1", "-p", "interactions=age,debt;c"]) == 0
    model = optboost.load(out)
    assert (np.diff(along(model, frame, "age"), axis=1) >= 0).all()


# ------------------------------------------------------------ offsets


def test_offset_column_continues_a_model_and_is_needed_at_predict():
    frame = regression_frame(1_500)
    base = dict(step="constant", n_iter=6, progress=False)
    first = optboost.boost("y ~ a + b + s", frame, **base)
    long = optboost.boost("y ~ a + b + s", frame, **{**base, "n_iter": 12})
    with_link = frame.with_columns(link=pl.Series(first.predict(frame, type="link")))
    rest = optboost.boost("y ~ .", with_link, offset="link", init="zero", **base)
    assert "link" not in rest.feature_importance()["column"].to_list()
    np.testing.assert_allclose(
        rest.predict(with_link, offset="link"), long.predict(frame), rtol=1e-12, atol=1e-12
    )
    # The same offset as an array; without it, predictions lack the offset.
    as_array = optboost.boost(
        "y ~ a + b + s", frame, offset=with_link["link"].to_numpy(), init="zero", **base
    )
    np.testing.assert_array_equal(as_array.predict(frame), rest.predict(with_link))
    np.testing.assert_allclose(
        as_array.predict(frame, offset=with_link["link"]), long.predict(frame), rtol=1e-12
    )


def test_offset_on_the_link_scale_for_binary_losses():
    frame = binary_frame(800)
    offset = np.where(frame["a"].to_numpy() > 0, 2.0, -2.0)
    model = optboost.boost("label ~ a + b", frame, loss="logistic", offset=offset, n_iter=5)
    link = model.predict(frame, type="link", offset=offset)
    probability = model.predict(frame, offset=offset)
    np.testing.assert_allclose(probability, 1 / (1 + np.exp(-link)), rtol=1e-12)
    with pytest.raises(optboost.DataError, match="800 rows"):
        optboost.boost("label ~ a + b", frame, loss="logistic", offset=offset[:10], n_iter=2)


def test_cli_offset(tmp_path):
    frame = regression_frame(500).with_columns(shift=pl.col("a") * 3)
    data = tmp_path / "train.parquet"
    frame.write_parquet(data)
    model_path, out = tmp_path / "model.json", tmp_path / "p.csv"
    fit = ["fit", str(data), "y ~ a + b", "--n-iter", "5", "-q", "-o", str(model_path)]
    assert main(fit + ["--offset", "shift"]) == 0
    assert main(["predict", str(model_path), str(data), "--offset", "shift", "-o", str(out)]) == 0
    expected = optboost.load(model_path).predict(frame, offset="shift")
    np.testing.assert_allclose(pl.read_csv(out)["prediction"].to_numpy(), expected, rtol=1e-12)


# ------------------------------------------------------------ class weights


def test_class_weight_balanced_and_mapping_multiply_sample_weights():
    rng = np.random.default_rng(1)
    n = 1_200
    a = rng.normal(size=n)
    label = np.where(a + rng.normal(scale=1.5, size=n) > 1.6, "rare", "common")
    frame = pl.DataFrame({"a": a, "label": label})
    counts = {c: int((label == c).sum()) for c in ("common", "rare")}
    balanced = {c: n / (2 * counts[c]) for c in counts}
    fit = lambda **kw: optboost.boost(  # noqa: E731
        "label ~ a", frame, loss="logistic", n_iter=20, progress=False, **kw
    ).predict(frame)
    by_name = fit(class_weight="balanced")
    np.testing.assert_array_equal(by_name, fit(class_weight=balanced))
    np.testing.assert_array_equal(
        by_name, fit(weights=np.where(label == "rare", balanced["rare"], balanced["common"]))
    )
    assert by_name.mean() > fit().mean() + 0.1  # the rare class weighs more
    with pytest.raises(optboost.ParameterError, match="not a class"):
        fit(class_weight={"other": 2.0})
    with pytest.raises(optboost.ParameterError, match="classification"):
        optboost.boost("a ~ label", frame, class_weight="balanced")
    # scikit-learn: the same weights.
    X = frame.select("a").to_numpy()
    clf = BoostClassifier(n_iter=20, class_weight="balanced").fit(X, label)
    plain = BoostClassifier(n_iter=20).fit(
        X, label, sample_weight=np.where(label == "rare", balanced["rare"], balanced["common"])
    )
    np.testing.assert_array_equal(clf.predict_proba(X), plain.predict_proba(X))
    assert clf.get_params()["class_weight"] == "balanced"
