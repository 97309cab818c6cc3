"""SHAP contributions and interaction values against brute-force Shapley values,
shap.Explanation, partial dependence, importance kinds."""

import itertools
import json
import math

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.trees import core_dict


def random_frame(seed: int, n: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    a[rng.random(n) < 0.15] = np.nan
    b = rng.uniform(size=n)
    s = rng.choice(["p", "q", "r", "t"], size=n).astype(object)
    s[rng.random(n) < 0.1] = None
    c = rng.normal(size=n)
    y = np.nan_to_num(a) * (b > 0.5) + (s == "q") * 1.5 - c + rng.normal(scale=0.3, size=n)
    classes = np.digitize(y, [-0.5, 0.8])
    return pl.DataFrame(
        {
            "a": a,
            "b": b,
            "s": pl.Series(list(s), dtype=pl.String),
            "c": c,
            "y": y,
            "k": [f"class{k}" for k in classes],
            "yes": y > 0,
        }
    )


# ------------------------------------------------------------------ brute force


def goes_left(node, tree, column, row):
    values, kind = column.values, column.kind
    if kind == "numeric":
        v = values[row]
        return node["default_left"] if math.isnan(v) else v <= node["threshold"]
    code = int(values[row])
    words = tree["categories"][node["category"]]["left_codes"]
    if code < 0 or code // 64 >= len(words):
        return node["default_left"]
    return (words[code // 64] >> (code % 64)) & 1 == 1


def conditional_expectation(tree, columns, row, known, i=0):
    node = tree["nodes"][i]
    if node["left"] == 0:
        return node["value"]
    left, right = node["left"], node["right"]
    if node["feature"] in known:
        nxt = left if goes_left(node, tree, columns[node["feature"]], row) else right
        return conditional_expectation(tree, columns, row, known, nxt)
    cl, cr = tree["nodes"][left]["count"], tree["nodes"][right]["count"]
    return (
        cl * conditional_expectation(tree, columns, row, known, left)
        + cr * conditional_expectation(tree, columns, row, known, right)
    ) / (cl + cr)


def brute_force_shap(model, frame):
    """Shapley values of each row by enumerating every feature subset, with the
    cover-weighted conditional expectation TreeSHAP defines: (n, K, m + 1)."""
    core = core_dict(model)  # each tree with its list of nodes
    columns = model.spec.columns(frame)
    m, k_out = len(columns), core["n_outputs"]
    out = np.zeros((frame.height, k_out, m + 1))
    for row in range(frame.height):
        for k in range(k_out):

            def value(known, row=row, k=k):
                total = core["bias"][k]
                for tree, w, o in zip(core["trees"], core["weights"], core["tree_outputs"]):
                    if o == k:
                        total += w * conditional_expectation(tree, columns, row, known)
                return total

            cache = {}
            for size in range(m + 1):
                for subset in itertools.combinations(range(m), size):
                    cache[frozenset(subset)] = value(set(subset))
            for i in range(m):
                for subset, v in cache.items():
                    if i in subset:
                        continue
                    s = len(subset)
                    weight = math.factorial(s) * math.factorial(m - s - 1) / math.factorial(m)
                    out[row, k, i] += weight * (cache[subset | {i}] - v)
            out[row, k, m] = cache[frozenset()]
    return out


CASES = [
    ("y ~ a + b + s + c", "squared", 0),
    ("y ~ a + b + s + c", "squared", 1),
    ("yes ~ a + s + c", "logistic", 2),
    ("k ~ a + b + s", "softmax", 3),
]


@pytest.mark.parametrize("formula,loss,seed", CASES)
def test_contributions_equal_brute_force_shapley_values(formula, loss, seed):
    frame = random_frame(seed)
    model = optboost.boost(
        formula,
        frame,
        loss=loss,
        n_iter=4,
        max_depth=3,
        seed=seed,
        progress=False,
        min_samples_leaf=5,
    )
    rows = frame.head(25)
    got = model.predict(rows, type="contrib", by="feature").to_numpy()
    expected = brute_force_shap(model, rows).reshape(rows.height, -1)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("formula,loss,seed", CASES)
def test_contributions_sum_to_the_link_score(formula, loss, seed):
    frame = random_frame(seed, n=2000)
    model = optboost.boost(formula, frame, loss=loss, n_iter=30, max_depth=5, progress=False)
    contrib = model.predict(frame, type="contrib")
    link = model.predict(frame, type="link").reshape(frame.height, -1)
    sums = contrib.to_numpy().reshape(frame.height, link.shape[1], -1).sum(axis=2)
    np.testing.assert_allclose(sums, link, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "formula,loss,method",
    [
        ("y ~ a + b + s + c", "squared", "gbm"),
        ("yes ~ a + s + c", "logistic", "agbm"),  # momentum rewrites earlier weights
        ("k ~ a + b + s", "softmax", "gbm"),
    ],
)
def test_contributions_at_an_iteration_sum_to_that_iterations_link(formula, loss, method):
    frame = random_frame(5, n=600)
    model = optboost.boost(
        formula, frame, loss=loss, method=method, n_iter=12, max_depth=4, progress=False
    )
    for k in sorted({0, 1, 5, model.kept_iteration}):
        link = model.predict(frame, type="link", iteration=k).reshape(frame.height, -1)
        contrib = model.predict(frame, type="contrib", iteration=k).to_numpy()
        sums = contrib.reshape(frame.height, link.shape[1], -1).sum(axis=2)
        np.testing.assert_allclose(sums, link, rtol=1e-9, atol=1e-12)
        interaction = model.predict(frame.head(20), type="interaction", iteration=k)
        np.testing.assert_allclose(
            interaction.sum(axis=-1).reshape(20, -1),
            contrib[:20],
            rtol=1e-9,
            atol=1e-12,
        )
    kept = model.predict(frame, type="contrib", iteration=model.kept_iteration)
    assert kept.equals(model.predict(frame, type="contrib"))
    with pytest.raises(optboost.ParameterError, match="iteration"):
        model.predict(frame, type="contrib", iteration=model.kept_iteration + 1)


def test_contribution_columns_bias_and_class_blocks():
    frame = random_frame(4)
    model = optboost.boost("y ~ a + b + s + c", frame, n_iter=5, progress=False)
    assert model.predict(frame, type="contrib").columns == ["a", "b", "s", "c", "bias"]
    multi = optboost.boost("k ~ a + b", frame, loss="softmax", n_iter=3, progress=False)
    contrib = multi.predict(frame, type="contrib")
    assert contrib.columns == [f"{k}/{c}" for k in multi.classes for c in ("a", "b", "bias")]


def test_a_column_never_split_on_gets_exactly_zero():
    frame = random_frame(5).with_columns(noise=pl.lit(1.0))
    model = optboost.boost("y ~ a + b + noise", frame, n_iter=10, progress=False)
    assert (model.predict(frame, type="contrib")["noise"] == 0.0).all()


def test_features_from_several_columns_are_shared_equally_among_them():
    frame = random_frame(6)
    model = optboost.boost("y ~ a + b:c + I(b * c)", frame, n_iter=10, progress=False)
    by_feature = model.predict(frame, type="contrib", by="feature")
    by_column = model.predict(frame, type="contrib")
    assert by_column.columns == ["a", "b", "c", "bias"]
    derived = [f for f in model.feature_names if f != "a"]
    half = by_feature.select(pl.sum_horizontal(derived) / 2).to_series()
    np.testing.assert_allclose(by_column["b"], half, rtol=1e-12)
    np.testing.assert_allclose(by_column["c"], half, rtol=1e-12)
    np.testing.assert_allclose(
        by_column.to_numpy().sum(axis=1), by_feature.to_numpy().sum(axis=1), rtol=1e-12
    )


def test_interaction_values_add_up_to_contributions():
    frame = random_frame(7)
    model = optboost.boost("y ~ a + b + s + c", frame, n_iter=8, max_depth=4, progress=False)
    inter = model.predict(frame, type="interaction")
    contrib = model.predict(frame, type="contrib").to_numpy()
    assert inter.shape == (frame.height, 5, 5)
    np.testing.assert_allclose(inter.sum(axis=2), contrib, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(inter, inter.transpose(0, 2, 1), atol=1e-12)


def test_explain_gives_a_shap_explanation():
    shap = pytest.importorskip("shap")
    frame = random_frame(8)
    model = optboost.boost("y ~ a + b + s", frame, n_iter=5, progress=False)
    explanation = model.explain(frame.head(10))
    assert isinstance(explanation, shap.Explanation)
    assert explanation.feature_names == ["a", "b", "s"]
    link = model.predict(frame.head(10), type="link")
    np.testing.assert_allclose(
        explanation.values.sum(axis=1) + explanation.base_values, link, rtol=1e-9
    )


def test_explain_without_shap_says_how_to_install_it(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_shap(name, *args, **kwargs):
        if name == "shap":
            raise ImportError("no shap")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_shap)
    frame = random_frame(9)
    model = optboost.boost("y ~ a", frame, n_iter=2, progress=False)
    with pytest.raises(ImportError, match="optboost\\[explain\\]"):
        model.explain(frame)


# ------------------------------------------------------------------ partial dependence


def test_partial_dependence_averages_predictions_with_the_column_set():
    frame = random_frame(10)
    model = optboost.boost("y ~ a + b + s + a:c", frame, n_iter=10, progress=False)
    pd_frame = model.partial_dependence(frame, "a", grid=[-1.0, 0.0, 2.0])
    assert pd_frame.columns == ["a", "prediction"]
    for value, expected in zip([-1.0, 0.0, 2.0], pd_frame["prediction"]):
        forced = frame.with_columns(a=pl.lit(value))
        assert model.predict(forced).mean() == pytest.approx(expected, rel=1e-12)
    ice = model.partial_dependence(frame, "a", grid=[-1.0, 0.0, 2.0], kind="individual")
    assert ice.height == 3 * frame.height
    averaged = ice.group_by("a", maintain_order=True).agg(pl.col("prediction").mean())
    np.testing.assert_allclose(averaged["prediction"], pd_frame["prediction"], rtol=1e-12)


def test_partial_dependence_on_categorical_and_two_columns():
    frame = random_frame(11)
    model = optboost.boost("k ~ a + b + s", frame, loss="softmax", n_iter=5, progress=False)
    one = model.partial_dependence(frame, "s")
    assert one["s"].to_list() == ["p", "q", "r", "t"]
    assert one.columns == ["s"] + [f"prediction/{c}" for c in model.classes]
    np.testing.assert_allclose(one.select(pl.exclude("s")).sum_horizontal(), 1.0)
    two = model.partial_dependence(frame, ["b", "s"], grid_size=5, type="link")
    assert two.height == 5 * 4 and two.columns[:2] == ["b", "s"]


def kinds_frame(n: int = 300) -> pl.DataFrame:
    """One column of each kind partial dependence meets: integer with many values, boolean,
    polars categorical and enum, constant, all missing."""
    rng = np.random.default_rng(13)
    age = rng.integers(18, 91, size=n)
    flag = rng.random(n) < 0.4
    level = rng.choice(["u", "v", "w"], size=n)
    y = 0.05 * age + flag + (level == "v") + rng.normal(scale=0.2, size=n)
    return pl.DataFrame(
        {
            "age": age,
            "flag": flag,
            "cat": pl.Series(level, dtype=pl.Categorical),
            "enum": pl.Series(level, dtype=pl.Enum(["u", "v", "w"])),
            "const": np.full(n, 7, dtype=np.int32),
            "empty": pl.Series([None] * n, dtype=pl.Float64),
            "y": y,
        }
    )


def forced_mean(model, frame, column, value):
    forced = frame.with_columns(pl.lit(value).cast(frame.schema[column]).alias(column))
    return model.predict(forced).mean()


@pytest.mark.parametrize("column", ["age", "flag", "cat", "enum", "const"])
def test_partial_dependence_on_every_kind_of_column(column):
    frame = kinds_frame()
    model = optboost.boost("y ~ age + flag + cat + enum + const + empty", frame, n_iter=10,
                           progress=False)
    curve = model.partial_dependence(frame, column)
    assert curve.schema[column] == frame.schema[column]  # grid values the column can hold
    distinct = frame[column].unique().sort().to_list()
    if column == "age":
        # more distinct values than grid_size: 20 integers spread between its 5% and 95% quantiles
        grid = curve["age"].to_list()
        assert len(grid) == 20 and grid == sorted(set(grid))
        low, high = np.quantile(frame["age"].to_numpy(), [0.05, 0.95])
        assert low - 0.5 <= grid[0] and grid[-1] <= high + 0.5
    else:
        assert sorted(curve[column].to_list()) == distinct
    for value, expected in zip(curve[column], curve["prediction"]):
        assert forced_mean(model, frame, column, value) == pytest.approx(expected, rel=1e-12)
    if column == "age":
        # the integer column's grid follows the data: the curve rises with age as y does
        assert curve["prediction"][-1] > curve["prediction"][0]


def test_partial_dependence_on_a_column_without_values_is_a_data_error():
    frame = kinds_frame()
    model = optboost.boost("y ~ age + empty", frame, n_iter=5, progress=False)
    with pytest.raises(optboost.DataError, match=r"'empty'.*no values.*300 rows.*grid="):
        model.partial_dependence(frame, "empty")
    with pytest.raises(optboost.DataError, match=r"'empty'"):
        model.partial_dependence(frame, ["age", "empty"])
    # with values to try, it is answered: missing is what every row holds
    curve = model.partial_dependence(frame, "empty", grid=[0.0, 1.0])
    assert curve["empty"].to_list() == [0.0, 1.0] and curve["prediction"].is_finite().all()


def test_partial_dependence_grid_values_must_fit_the_column():
    frame = kinds_frame()
    model = optboost.boost("y ~ age + flag", frame, n_iter=5, progress=False)
    assert model.partial_dependence(frame, "age", grid=[20, 40])["age"].to_list() == [20, 40]
    with pytest.raises(optboost.ParameterError, match=r"grid for 'age'.*20\.5.*Int64"):
        model.partial_dependence(frame, "age", grid=[20, 20.5])
    with pytest.raises(optboost.ParameterError, match=r"grid for 'flag' is empty"):
        model.partial_dependence(frame, "flag", grid=[])
    with pytest.raises(optboost.ParameterError, match="one sequence of values per column"):
        model.partial_dependence(frame, ["age", "flag"], grid=[[20, 40]])
    with pytest.raises(optboost.DataError, match="newdata has none"):
        model.partial_dependence(frame.head(0), "age")


def test_plot_partial_dependence(tmp_path):
    pytest.importorskip("matplotlib")
    from optboost.explain import plot_partial_dependence

    frame = random_frame(12)
    model = optboost.boost("y ~ a + b + s", frame, n_iter=5, progress=False)
    plot_partial_dependence(
        model.partial_dependence(frame.head(30), "a", kind="individual"), tmp_path / "ice.png"
    )
    plot_partial_dependence(model.partial_dependence(frame, ["a", "s"]), tmp_path / "pd2.png")
    assert (tmp_path / "ice.png").stat().st_size > 0


# ------------------------------------------------------------------ importance and trees


def test_importance_kinds():
    frame = random_frame(13)
    model = optboost.boost("y ~ a + b + s + c + a:b", frame, n_iter=20, progress=False)
    gain = model.feature_importance()
    split = model.feature_importance(kind="split")
    assert gain.columns[:3] == split.columns == ["column", "importance", "share"]
    assert dict(split.select("column", "importance").iter_rows()) == dict(
        gain.select("column", pl.col("splits").cast(pl.Float64)).iter_rows()
    )
    trees = model.trees()
    cover = model.feature_importance(kind="cover", by="feature")
    assert cover["importance"].sum() == trees.filter(~pl.col("is_leaf"))["cover"].sum()
    shap_importance = model.feature_importance(kind="shap", data=frame)
    contrib = model.predict(frame, type="contrib")
    top = shap_importance.row(0, named=True)
    assert top["importance"] == pytest.approx(contrib[top["column"]].abs().mean())
    perm = model.feature_importance(kind="permutation", data=frame, n_repeats=3)
    assert perm.columns == ["column", "importance", "std", "share"]
    assert perm.row(0, named=True)["column"] in ("a", "c", "s")
    with pytest.raises(optboost.ParameterError, match="needs data"):
        model.feature_importance(kind="shap")


def test_trees_frame_reproduces_predictions():
    frame = random_frame(14)
    model = optboost.boost("y ~ a + b + s", frame, n_iter=5, max_depth=3, progress=False)
    trees = model.trees()
    assert {
        "tree",
        "node",
        "feature",
        "threshold",
        "levels",
        "missing",
        "left",
        "right",
        "value",
        "gain",
        "cover",
        "tree_weight",
        "output",
    } <= set(trees.columns)
    nodes = {(r["tree"], r["node"]): r for r in trees.to_dicts()}
    bias = json.loads(model._core.to_json())["model"]["bias"][0]
    rows = frame.head(20).to_dicts()
    link = model.predict(frame.head(20), type="link")
    for row, expected in zip(rows, link):
        total = bias
        for t in range(model.n_trees):
            node = nodes[(t, 0)]
            while not node["is_leaf"]:
                x = row[node["feature"]]
                if x is None or (isinstance(x, float) and math.isnan(x)):
                    left = node["missing"] == "left"
                elif node["threshold"] is not None:
                    left = x <= node["threshold"]
                else:
                    left = x in node["levels"]
                node = nodes[(t, node["left"] if left else node["right"])]
            total += node["tree_weight"] * node["value"]
        assert total == pytest.approx(expected, rel=1e-12, abs=1e-12)
    text = model.dump_trees()
    assert text.count("\ntree ") == model.n_trees and "leaf" in text
