"""R's formula idioms, as R users write them: every row of the README's "R formula → optboost"
table fits (or is refused, where the row says so), then what each idiom means."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import optboost
from optboost.errors import FormulaError, ModelFileError
from optboost.formula import build_design, per_column

README = Path(__file__).resolve().parents[2] / "README.md"


def r_table_rows() -> list[tuple[list[str], str | None, str]]:
    """(formulas, loss, meaning) of each row of the README's R table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### R formula → optboost", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 2 or cells[0] in ("R formula", "---"):
            continue
        spans = re.findall(r"`([^`]*)`", cells[0])
        loss = next((m for s in spans for m in re.findall(r'loss="(\w+)"', s)), None)
        rows.append(([s for s in spans if "~" in s], loss, cells[1]))
    return rows


ROWS = r_table_rows()


def frame(n: int = 300, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 25, n)
    z = rng.normal(size=n)
    exposure = rng.uniform(0.5, 2.0, n)
    y = np.sin(x / 4) + z + rng.normal(scale=0.1, size=n)
    return pl.DataFrame(
        {
            "y": y,
            "x": x,
            "z": z,
            "k": rng.choice(["a", "b", "c"], n),
            "exposure": exposure,
            "count": rng.poisson(exposure * np.exp(0.05 * x)).astype(float),
            "y1": y,
            "y2": 2 * z - x / 10,
            "time": rng.uniform(1, 10, n),
            "event": rng.integers(0, 2, n),
            "start": np.zeros(n),
            "stop": rng.uniform(1, 10, n),
        }
    ).with_columns(y=pl.col("y").round(0))


def test_the_readme_has_the_r_table():
    assert len(ROWS) >= 10
    assert sum(len(formulas) for formulas, _, _ in ROWS) >= 14


@pytest.mark.parametrize(
    "formula, loss, meaning",
    [(f, loss, meaning) for formulas, loss, meaning in ROWS for f in formulas],
)
def test_each_row_of_the_r_table(formula, loss, meaning, tmp_path):
    data = frame()
    params = {"loss": loss} if loss else {}
    if meaning.startswith("refused"):
        with pytest.raises(FormulaError, match="not supported") as error:
            optboost.boost(formula, data, n_iter=3, **params)
        assert "the cox loss" in str(error.value)  # what is supported
        return
    model = optboost.boost(formula, data, n_iter=10, **params)
    predictions = model.predict(data.head(50))
    assert np.isfinite(predictions).all()
    model.save(tmp_path / "m.json")
    loaded = optboost.load(tmp_path / "m.json")
    assert np.array_equal(loaded.predict(data.head(50)), predictions)


def design_columns(formula: str, data: pl.DataFrame, new: pl.DataFrame | None = None) -> dict:
    spec = build_design(formula, data).spec
    return {c.name: c.values for c in per_column(spec.columns(data if new is None else new))}


# ------------------------------------------------------------------ arguments as in R


@pytest.mark.parametrize(
    "positional, keyword",
    [
        ("poly(x, 2)", "poly(x, degree=2)"),
        ("poly(x, 3, raw=TRUE)", "poly(x, degree=3, raw=True)"),
        ("ns(x, 3)", "ns(x, df=3)"),
        ("bs(x, 5, NULL, 2)", "bs(x, df=5, degree=2)"),
        ("bs(x, df=4, intercept=TRUE)", "bs(x, df=4, include_intercept=True)"),
        ("ns(x, df=3, Boundary.knots=c(0, 30))", "ns(x, df=3, lower_bound=0, upper_bound=30)"),
    ],
)
def test_r_arguments_give_the_columns_of_their_keywords(positional, keyword):
    data = frame()
    r = list(design_columns(f"y ~ {positional}", data).values())
    named = list(design_columns(f"y ~ {keyword}", data).values())
    assert len(r) == len(named) > 0
    for a, b in zip(r, named):
        assert np.array_equal(a, b, equal_nan=True)


def test_natural_splines_have_df_columns_linear_beyond_the_boundary_knots():
    data = frame()
    beyond = pl.DataFrame({"x": np.linspace(30, 60, 7)})
    columns = design_columns("y ~ ns(x, df=4)", data, beyond.with_columns(y=0.0))
    assert len(columns) == 4
    for values in columns.values():
        assert np.allclose(np.diff(values, 2), 0.0, atol=1e-9)  # linear past the upper knot
    inside = design_columns("y ~ ns(x, df=4)", data)
    order = np.argsort(data["x"].to_numpy())
    assert not np.allclose(np.diff(inside["ns(x, df=4)[2]"][order], 2), 0.0, atol=1e-9)


def test_spline_and_polynomial_sizes_are_bounded_before_anything_is_computed():
    with pytest.raises(FormulaError, match="at most"):
        build_design("y ~ ns(x, df=100000)", frame())
    with pytest.raises(FormulaError, match="degree"):
        build_design("y ~ poly(x, 50)", frame())
    with pytest.raises(FormulaError, match="at most degree"):
        build_design("y ~ poly(x, 2, 3, 4)", frame())


# ------------------------------------------------------------------ comparisons and logic


def test_comparisons_and_r_logic_are_three_valued():
    data = pl.DataFrame(
        {
            "y": [0.0] * 6,
            "a": [1.0, 0.0, None, 1.0, 0.0, None],
            "b": [None, None, 1.0, 0.0, 0.0, 0.0],
        }
    )
    columns = design_columns(
        "y ~ I(a > 0.5) + I(a & b) + I(a | b) + I(!a) + I(a == b) + I(a != 1)", data
    )
    values = list(columns.values())
    nan = np.nan
    expected = [
        [1, 0, nan, 1, 0, nan],  # a > 0.5
        [nan, 0, nan, 0, 0, 0],  # FALSE & NA is FALSE
        [1, nan, 1, 1, 0, nan],  # TRUE | NA is TRUE
        [0, 1, nan, 0, 1, nan],
        [nan, nan, nan, 0, 1, nan],
        [0, 1, nan, 0, 1, nan],
    ]
    for got, want in zip(values, expected):
        assert np.array_equal(got, np.array(want, dtype=float), equal_nan=True)


def test_comparisons_of_numbers_and_chains_broadcast_over_the_rows():
    data = pl.DataFrame({"y": [0.0] * 4, "x": [0.0, 2.0, 4.0, None]})
    columns = list(design_columns("y ~ I(1 < x < 3) + I(x > 1 & 2 > 1) + I(1 > 0)", data).values())
    assert np.array_equal(columns[0], [0, 1, 0, np.nan], equal_nan=True)
    assert np.array_equal(columns[1], [0, 1, 1, np.nan], equal_nan=True)
    assert np.array_equal(columns[2], [1, 1, 1, 1])


def test_a_comparison_as_the_response():
    data = frame()
    model = optboost.boost("I(y == 1) ~ x + z", data, n_iter=5, loss="logistic")
    assert model.classes == [0, 1]
    expected = (data["y"] == 1).cast(pl.Float64).to_numpy()
    assert np.array_equal(model.spec.target_values(data), expected)


# ------------------------------------------------------------------ statistics of the training rows


def test_statistics_are_learnt_at_fit_and_applied_to_new_rows():
    data = frame()
    x = data["x"].to_numpy()
    formula = "y ~ I(x - mean(x)) + I(x / sd(x)) + I(x - median(x)) + z"
    model = optboost.boost(formula, data, n_iter=3)
    new = data.head(1).with_columns(x=pl.lit(100.0))
    columns = {c.name: c.values for c in per_column(model.spec.columns(new))}
    assert columns["I(x - mean(x))"][0] == 100.0 - x.mean()
    assert columns["I(x / sd(x))"][0] == 100.0 / x.std(ddof=1)
    assert columns["I(x - median(x))"][0] == 100.0 - np.median(x)
    state = json.dumps(model.spec.to_dict()["terms"])
    assert repr(float(x.mean())) in state  # stored as a number in the model


def test_min_and_max_of_two_columns_point_at_pmin_and_pmax():
    with pytest.raises(FormulaError, match="pmin"):
        build_design("y ~ I(min(x, z))", frame())


# ------------------------------------------------------------------ cut and relevel


def test_cut_with_a_count_follows_r():
    data = pl.DataFrame({"y": [0.0] * 11, "x": [float(v) for v in range(11)]})
    columns = design_columns("y ~ cut(x, breaks=2)", data)
    # R: cut(0:10, 2) has levels "(-0.01,5]" "(5,10]"
    assert list(columns) == ["cut(x, breaks=2)[(-0.01,5]]", "cut(x, breaks=2)[(5,10]]"]
    first = list(columns.values())[0]
    assert np.array_equal(first, (data["x"].to_numpy() <= 5).astype(float))


def test_cut_with_boundaries_leaves_values_outside_missing():
    data = pl.DataFrame({"y": [0.0] * 5, "x": [0.0, 2.0, 5.0, 7.0, 12.0]})
    columns = design_columns("y ~ cut(x, breaks=c(0, 5, 10))", data)
    term = "cut(x, breaks=c(0, 5, 10))"
    assert list(columns) == [f"{term}[(0,5]]", f"{term}[(5,10]]"]
    low, high = columns.values()
    nan = np.nan
    assert np.array_equal(low, [nan, 1, 1, 0, nan], equal_nan=True)
    assert np.array_equal(high, [nan, 0, 0, 1, nan], equal_nan=True)
    lowest = design_columns("y ~ cut(x, breaks=c(0, 5, 10), include.lowest=TRUE)", data)
    assert list(lowest)[0].endswith("[[0,5]]")
    assert list(lowest.values())[0][0] == 1.0


@pytest.mark.parametrize(
    "term, message",
    [
        ("cut(x, breaks=100000)", "breaks"),
        ("cut(x, breaks=1e400)", "breaks"),
        ("cut(x, breaks=2.5)", "breaks"),
        ("cut(x, breaks=c(1, 1e400))", "finite"),
        ("cut(x, breaks=c(5, 1))", "increasing"),
        ("cut(x)", "breaks="),
        ("cut(x, breaks=3, labels=FALSE)", "breaks="),
    ],
)
def test_cut_arguments_are_checked(term, message):
    with pytest.raises(FormulaError, match=message):
        build_design(f"y ~ {term}", frame())


def test_a_files_cut_state_must_agree_with_its_levels(tmp_path):
    model = optboost.boost("y ~ cut(x, breaks=3) + z", frame(), n_iter=3)
    data = model.to_dict()
    term = data["design"]["terms"][0]
    (key,) = term["state"]
    term["state"][key]["breaks"] = term["state"][key]["breaks"][:-1]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="breaks"):
        optboost.load(path)


def test_relevel_puts_the_reference_level_first():
    data = frame()
    model = optboost.boost('y ~ relevel(factor(k), ref="b") + x', data, n_iter=3)
    assert model.spec.features[0].levels == ("b", "a", "c")
    with pytest.raises(FormulaError, match="'d' is not a level"):
        build_design('y ~ relevel(k, ref="d")', data)


# ------------------------------------------------------------------ offsets, targets, survival


def test_offset_of_an_expression_is_the_poisson_exposure_model():
    data = frame()
    model = optboost.boost("count ~ x + offset(log(exposure))", data, n_iter=20, loss="poisson")
    assert model.feature_names == ["x"]  # exposure is the offset, not also a feature
    given = optboost.boost(
        "count ~ x", data, n_iter=20, loss="poisson", offset=np.log(data["exposure"].to_numpy())
    )
    new = data.head(20)
    expected = given.predict(new, offset=np.log(new["exposure"].to_numpy()))
    assert np.array_equal(model.predict(new), expected)
    doubled = model.predict(new.with_columns(exposure=pl.col("exposure") * 2))
    assert np.allclose(doubled / model.predict(new), 2.0)


def test_an_offset_expression_reads_no_learnt_state():
    with pytest.raises(FormulaError, match="offset"):
        build_design("count ~ x + offset(center(exposure))", frame())


def test_cbind_is_several_targets():
    data = frame()
    bound = optboost.boost("cbind(y1, y2) ~ x + z", data, n_iter=5)
    added = optboost.boost("y1 + y2 ~ x + z", data, n_iter=5)
    assert bound.target_names == ["y1", "y2"]
    assert np.array_equal(bound.predict(data), added.predict(data))


def test_counting_process_data_from_time_zero_is_the_plain_cox_model():
    data = frame()
    counting = optboost.boost("Surv(start, stop, event) ~ x", data, n_iter=10, loss="cox")
    plain = optboost.boost("Surv(stop, event) ~ x", data, n_iter=10, loss="cox")
    assert np.array_equal(counting.predict(data, type="link"), plain.predict(data, type="link"))


def test_strata_split_the_risk_sets_and_are_not_features():
    data = frame()
    stratified = optboost.boost("Surv(time, event) ~ x + strata(k)", data, n_iter=10, loss="cox")
    pooled = optboost.boost("Surv(time, event) ~ x", data, n_iter=10, loss="cox")
    assert [f.name for f in stratified.spec.features] == ["x"]
    assert not np.array_equal(stratified.predict(data, type="link"),
                              pooled.predict(data, type="link"))
