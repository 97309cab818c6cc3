"""Formulas with bounded cost (issue 39): powers, products, size arguments and '- col' of a
column the caller left out. Each test carries a timeout: the findings were hangs."""

import json

import numpy as np
import optboost
import polars as pl
import pytest
from optboost.errors import FormulaError
from optboost.expansion import MAX_EXPONENT, MAX_TERMS, bounded_parser
from optboost.formula import DesignSpec, build_design
from optboost.frames import MissingColumnError
from optboost.terms import MAX_COMPUTED_COLUMNS

pytestmark = pytest.mark.timeout(120)


def numbers(n_columns: int, n_rows: int = 30, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {"y": rng.normal(size=n_rows)}
        | {f"x{j}": rng.uniform(1, 5, n_rows) for j in range(n_columns)}
    )


def names(formula: str, frame: pl.DataFrame) -> list[str]:
    return build_design(formula, frame).spec.feature_names


# ------------------------------------------------------------------ powers


def test_a_power_beyond_the_number_of_terms_is_that_number_as_in_r():
    frame = numbers(3)
    # (x0+x1)**40 was 2^40 products of formulaic's expansion: minutes
    assert names("y ~ (x0 + x1)**40", frame) == names("y ~ (x0 + x1)^2", frame)
    assert names("y ~ (x0 + x1)**40", frame) == ["x0", "x1", "x0:x1"]
    assert names("y ~ . ^ 30", frame) == names("y ~ .^3", frame)
    assert len(names("y ~ . ^ 30", frame)) == 7  # 3 mains, 3 pairs, 1 triple


def test_power_expansion_is_formulaics_order_and_factor_order():
    from formulaic import Formula

    context = {"__formulaic_variables_available__": ["y", *"abcde"]}
    formulas = [
        "y ~ (a + b + c + d)^3",
        "y ~ (a + b:c + c:d + a:d)^4",  # terms that share factors
        "y ~ (a + a:b + b)^2",
        "y ~ (a*b + c)^2:d",
        "y ~ (a + np.log(b) + I(c))^2 + .^2",
        "y ~ (c + a + b)**2 ** 2",
    ]
    for formula in formulas:
        expected = [repr(t) for t in Formula(formula, _context=context).rhs]
        bounded = Formula(formula, _context=context, _parser=bounded_parser())
        assert [repr(t) for t in bounded.rhs] == expected, formula


@pytest.mark.parametrize("exponent", ["0", "1.5", "x1", "-1", f"{MAX_EXPONENT + 1}", "9" * 60])
def test_an_exponent_that_is_no_count_is_refused(exponent):
    with pytest.raises(FormulaError, match=r"\*\*|\^|exponent|parse"):
        build_design(f"y ~ (x0 + x1)^{exponent}", numbers(2))


def test_an_absurd_exponent_names_the_limit():
    with pytest.raises(FormulaError, match=f"1..{MAX_EXPONENT}.*got 1e\\+23"):
        build_design("y ~ (x0 + x1)**99999999999999999999999", numbers(2))


def test_products_are_counted_before_they_are_built():
    wide = numbers(101)
    with pytest.raises(FormulaError, match=f"would form 5,151 terms.*{MAX_TERMS:,}"):
        build_design("y ~ .^2", wide)  # 101 mains and 5,050 pairs
    with pytest.raises(FormulaError, match=f"{MAX_TERMS:,}"):
        build_design("y ~ " + "*".join(f"x{j}" for j in range(14)), numbers(14))
    with pytest.raises(FormulaError, match=f"{MAX_TERMS:,}"):
        build_design("y ~ (x0+x1+x2+x3+x4+x5+x6+x7+x8+x9+x10+x11+x12+x13)^14", numbers(14))
    with pytest.raises(FormulaError, match=f"{MAX_TERMS:,}"):
        build_design("y ~ (.):(.):(.)", numbers(30))  # 27,000 products of ':'
    # every formula's products share one budget: two powers under it alone, over it together
    twelve = "(" + " + ".join(f"x{j}" for j in range(12)) + ")^12"
    assert len(names(f"y ~ {twelve}", numbers(12))) == 4095
    with pytest.raises(FormulaError, match=f"{MAX_TERMS:,}"):
        build_design(f"y ~ {twelve} + {twelve}:x0", numbers(12))


def test_a_power_at_the_budget_builds_the_right_columns():
    frame = numbers(99, n_rows=8)
    design = build_design("y ~ .^2", frame)
    assert len(design.spec.feature_names) == 99 + 99 * 98 // 2
    columns = {c.name: c.values for c in optboost.formula.per_column(design.features)}
    product = frame["x3"].to_numpy() * frame["x70"].to_numpy()
    np.testing.assert_array_equal(columns["x3:x70"], product)


# ------------------------------------------------------------------ size arguments


@pytest.mark.parametrize(
    "term, message",
    [
        ("bs(x0, df=100000000)", r"gives 100,000,000 spline columns, at most 99"),
        ("bs(x0, df=100)", r"gives 100 spline columns, at most 99"),
        ("bs(x0, df=101, include_intercept=True)", r"gives 101 spline columns, at most 100"),
        ("bs(x0, knots=[" + ", ".join(["2.0"] * 200) + "])", r"gives 203 spline columns"),
        ("bs(x0, degree=11)", r"degree must be an integer in 0..10"),
        ("bs(x0, df=4.5)", r"df must be an integer"),
        ("bs(x0, knots=3)", r"knots must be a list"),
        ("bs(x0, lower_bound=[1, 2])", r"lower_bound must be a finite number"),
        ("bs(x0, df=10**8)", r"must be a literal"),
        ("poly(x0, degree=21)", r"degree must be an integer in 1..20"),
        ("poly(x0, degree=10000000, raw=True)", r"degree must be an integer in 1..20"),
    ],
)
def test_size_arguments_are_checked_before_anything_is_computed(term, message):
    # bs(x, df=10**8) allocated some 760 MB and ended in a raw MemoryError after 12 s
    with pytest.raises(FormulaError, match=message) as error:
        build_design(f"y ~ {term}", numbers(1))
    assert "bs(" in str(error.value) or "poly(" in str(error.value)


def test_a_term_of_too_many_columns_is_refused_naming_it():
    rng = np.random.default_rng(1)
    frame = pl.DataFrame(
        {"y": rng.normal(size=40), "g": [str(i % 40) for i in range(40)], "x": rng.normal(size=40)}
    )
    levels = "[" + ", ".join(repr(str(i)) for i in range(150)) + "]"
    with pytest.raises(FormulaError, match=f"gives 22,500 columns.*{MAX_COMPUTED_COLUMNS:,}"):
        build_design(f"y ~ C(g, levels={levels}):C(x, levels={levels})", frame)
    with pytest.raises(FormulaError, match="gives 4,080 columns, more than the 3,160 left"):
        build_design(
            "y ~ poly(x, degree=20):poly(x, degree=19):poly(x, degree=18)"  # 6,840 columns
            " + poly(x, degree=17):poly(x, degree=16):poly(x, degree=15)",
            frame,
        )
    assert len(build_design("y ~ poly(x, degree=20):C(g)", frame).spec.feature_names) == 800


def test_a_model_file_cannot_ask_for_more_columns_than_it_lists():
    frame = numbers(2)
    spec = build_design("y ~ poly(x0, degree=2, raw=True):poly(x1, degree=2, raw=True)", frame).spec
    data = spec.to_dict()
    term = data["terms"][0]
    term["factors"] = ["poly(x0, degree=20, raw=True)", "poly(x1, degree=20, raw=True)"]
    with pytest.raises(FormulaError, match="gives more columns than the model has"):
        DesignSpec.from_dict(json.loads(json.dumps(data)))


def test_stored_spline_knots_must_match_the_term():
    frame = numbers(1)
    spec = build_design("y ~ bs(x0, df=5)", frame).spec
    data = spec.to_dict()
    (state,) = data["terms"][0]["state"].values()
    state["knots"] = state["knots"] + [state["upper"]]
    loaded = DesignSpec.from_dict(json.loads(json.dumps(data)))
    with pytest.raises(FormulaError, match="stored 'knots' must hold 2 numbers"):
        loaded.columns(frame)


def test_fuzz_findings_are_formula_errors():
    frame = numbers(2)
    with pytest.raises(FormulaError, match="too large for a float"):
        build_design("y ~ I(x0 + " + "9" * 400 + ")", frame)
    with pytest.raises(FormulaError, match="no training values within"):
        build_design("y ~ bs(-(1), df=5, lower_bound=0)", frame)


def test_terms_sharing_columns_keep_their_own_values():
    rng = np.random.default_rng(2)
    frame = pl.DataFrame(
        {"y": rng.normal(size=12), "x": rng.normal(size=12), "g": list("abc") * 4}
    )
    design = build_design("y ~ (x + g)^2 + C(g, levels=['c', 'a', 'b']):x + np.log(x**2):x", frame)
    columns = {c.name: c.values for c in optboost.formula.per_column(design.features)}
    x = frame["x"].to_numpy()
    g = frame["g"].to_numpy()
    np.testing.assert_array_equal(columns["x:g[b]"], x * (g == "b"))
    np.testing.assert_array_equal(columns["C(g, levels=['c', 'a', 'b'])[c]:x"], (g == "c") * x)
    np.testing.assert_allclose(columns["np.log(x ** 2):x"], np.log(x**2) * x)
    again = DesignSpec.from_dict(design.spec.to_dict()).columns(frame)
    per_column = optboost.formula.per_column
    for a, b in zip(per_column(again), per_column(design.features)):
        assert a.name == b.name
        np.testing.assert_array_equal(a.values, b.values)


# ------------------------------------------------------------------ '- col'


@pytest.fixture
def with_offset() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 200
    a, b = rng.normal(size=n), rng.normal(size=n)
    return pl.DataFrame(
        {
            "y": a + rng.normal(size=n) * 0.1,
            "a": a,
            "b": b,
            "off": b * 0.5,
            "w": rng.uniform(1, 2, n),
        }
    )


def test_removing_the_offset_column_is_a_no_op(with_offset):
    settings = dict(n_iter=5, max_depth=2, seed=1)
    removed = optboost.boost("y ~ . - off", data=with_offset, offset="off", **settings)
    plain = optboost.boost("y ~ .", data=with_offset, offset="off", **settings)
    assert removed.feature_names == plain.feature_names == ["a", "b", "w"]
    np.testing.assert_array_equal(
        removed.predict(with_offset, offset="off"), plain.predict(with_offset, offset="off")
    )
    # the formulaic path (a computed term) too, and the weights column beside it
    both = optboost.boost(
        "y ~ . - off - w + np.log(w)", data=with_offset, offset="off", weights="w", **settings
    )
    assert both.feature_names == ["a", "b", "np.log(w)"]


def test_removing_a_column_truly_absent_still_names_it(with_offset):
    for formula in ("y ~ . - zz", "y ~ . - zz + np.log(w)"):
        with pytest.raises(MissingColumnError, match="'zz' is not in the data"):
            optboost.boost(formula, data=with_offset, offset="off", n_iter=2)


def test_using_the_offset_column_as_a_feature_says_it_is_the_offset(with_offset):
    for formula in ("y ~ a + off", "y ~ a + np.log(off)"):
        with pytest.raises(MissingColumnError, match="'off' is the offset"):
            optboost.boost(formula, data=with_offset, offset="off", n_iter=2)


def test_a_long_formula_beyond_bare_names_is_refused_before_formulaic_parses_it():
    # formulaic's tokenizer took 10 s on a 500 KB formula (a levels list repeated by the fuzz)
    levels = "[" + ", ".join(repr(str(i)) for i in range(4000)) + "]"
    with pytest.raises(FormulaError, match="30,908 characters is too long.*20,000"):
        build_design(f"y ~ C(x0, levels={levels})", numbers(1))
    # a formula of bare names has its own linear parse, and no such bound
    frame = numbers(3000, n_rows=5)
    listed = "y ~ " + " + ".join(f"x{j}" for j in range(3000))
    assert len(listed) > 20_000
    assert build_design(listed, frame).spec.feature_names == [f"x{j}" for j in range(3000)]
