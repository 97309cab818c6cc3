import json
import pickle
import warnings

import numpy as np
import polars as pl
import pytest
from optboost.formula import DesignSpec, FormulaError, build_design
from optboost.frames import MissingColumnError, TargetError
from polars.testing import assert_frame_equal


def by_name(columns):
    return {column.name: column for column in columns}


def assert_same_columns(left, right):
    assert [c.name for c in left] == [c.name for c in right]
    for a, b in zip(left, right):
        assert (a.kind, a.n_levels, a.values.dtype) == (
            b.kind,
            b.n_levels,
            b.values.dtype,
        )
        np.testing.assert_array_equal(a.values, b.values)


# ------------------------------------------------------------------ fast path


def test_bare_numeric_columns_are_zero_copy(crabs):
    design = build_design("y ~ fl + rw", crabs)
    for column in design.features:
        assert column.kind == "numeric" and column.n_levels == 0
        assert column.values.flags.c_contiguous
        assert np.shares_memory(column.values, crabs[column.name].to_numpy())
    assert design.spec.terms == ()  # nothing computed


def test_bare_string_columns_become_codes_not_dummies(crabs):
    design = build_design("y ~ sp + sex + fl", crabs)
    assert design.spec.feature_names == ["sp", "sex", "fl"]
    sp = by_name(design.features)["sp"]
    assert sp.kind == "categorical" and sp.n_levels == 2 and sp.values.dtype == np.int32
    np.testing.assert_array_equal(
        sp.values, (crabs["sp"] == "O").cast(pl.Int32).to_numpy()
    )
    assert design.spec.features[0].levels == ("B", "O")


def test_categorical_and_enum_columns_and_c_wrapper(penguins):
    frame = penguins.with_columns(
        pl.col("island").cast(pl.Categorical).alias("island_cat"),
        pl.col("sex").cast(pl.Enum(["male", "female"])).alias("sex_enum"),
    )
    design = build_design(
        "y ~ island_cat + sex_enum + C(year)", frame, task="multiclass"
    )
    features = {f.name: f for f in design.spec.features}
    assert features["island_cat"].levels == ("Biscoe", "Dream", "Torgersen")
    assert features["sex_enum"].levels == ("male", "female")
    assert features["C(year)"].levels == ("2007", "2008", "2009")
    assert features["C(year)"].source_columns == ("year",)
    assert not any(f.materialised for f in design.spec.features)
    columns = by_name(design.features)
    expected_sex = (
        frame["sex"].replace_strict({"male": 0, "female": 1}, default=-1).to_numpy()
    )
    np.testing.assert_array_equal(columns["sex_enum"].values, expected_sex)
    np.testing.assert_array_equal(
        columns["C(year)"].values, frame["year"].to_numpy() - 2007
    )


def test_c_with_levels_uses_the_given_order(crabs):
    design = build_design("y ~ C(sex, levels=['M', 'F'])", crabs)
    (column,) = design.features
    assert design.spec.features[0].levels == ("M", "F")
    np.testing.assert_array_equal(
        column.values, (crabs["sex"] == "F").cast(pl.Int32).to_numpy()
    )


# ------------------------------------------------------------------ dot and minus


def test_dot_is_all_columns_but_target_and_weights(small):
    design = build_design("y ~ .", small, weights="w")
    assert design.spec.feature_names == ["a", "b", "s"]
    np.testing.assert_array_equal(design.weights, small["w"].to_numpy())
    assert design.spec.weights_column == "w"


def test_dot_minus_column(penguins):
    design = build_design("y ~ . - year - sex", penguins, task="multiclass")
    assert design.spec.feature_names == [
        "island",
        "bill_length_mm",
        "bill_depth_mm",
        "flipper_length_mm",
        "body_mass_g",
    ]


# ------------------------------------------------------------------ materialised terms


def test_log_and_interactions_match_hand_computation(crabs):
    design = build_design("y ~ np.log(fl) + fl:rw + cl*bd", crabs)
    columns = by_name(design.features)
    fl, rw, cl, bd = (crabs[c].to_numpy() for c in ("fl", "rw", "cl", "bd"))
    np.testing.assert_allclose(columns["np.log(fl)"].values, np.log(fl))
    np.testing.assert_allclose(columns["fl:rw"].values, fl * rw)
    np.testing.assert_allclose(columns["cl:bd"].values, cl * bd)
    assert not np.shares_memory(columns["cl"].values, columns["cl:bd"].values)
    np.testing.assert_array_equal(
        columns["cl"].values, cl
    )  # the bare parts of a*b: fast path
    features = {f.name: f for f in design.spec.features}
    assert features["fl:rw"].materialised and features["fl:rw"].source_columns == (
        "fl",
        "rw",
    )
    assert not features["cl"].materialised
    assert (
        "1" not in design.spec.feature_names
        and "Intercept" not in design.spec.feature_names
    )


def test_interaction_with_a_string_column_has_one_column_per_level(crabs):
    design = build_design("y ~ sp:fl", crabs)
    columns = by_name(design.features)
    assert list(columns) == ["sp[B]:fl", "sp[O]:fl"]
    fl = crabs["fl"].to_numpy()
    np.testing.assert_allclose(
        columns["sp[O]:fl"].values, np.where(crabs["sp"] == "O", fl, 0)
    )
    assert design.spec.source_columns["sp[O]:fl"] == ("sp", "fl")


def test_no_row_is_dropped_when_features_are_missing(penguins):
    formula = "y ~ sex + np.log(body_mass_g) + island:bill_length_mm + bs(flipper_length_mm, df=4)"
    design = build_design(formula, penguins, task="multiclass")
    assert len(design.y) == penguins.height
    missing_mass = penguins["body_mass_g"].is_null().to_numpy()
    for column in design.features:
        assert len(column.values) == penguins.height
    np.testing.assert_array_equal(
        np.isnan(by_name(design.features)["np.log(body_mass_g)"].values), missing_mass
    )
    assert (by_name(design.features)["sex"].values == -1).sum() == penguins[
        "sex"
    ].null_count()


# ------------------------------------------------------------------ prediction


def test_prediction_selects_columns_by_name(penguins):
    formula = "y ~ . - year + np.log(body_mass_g) + island:bill_length_mm + C(year)"
    design = build_design(formula, penguins, task="multiclass")
    shuffled = penguins.drop("y").select(reversed(penguins.columns[:-1]))
    assert_same_columns(design.spec.columns(shuffled), design.features)


def test_prediction_with_a_missing_column_names_it_and_lists_available(crabs):
    spec = build_design("y ~ fl + np.log(rw)", crabs).spec
    with pytest.raises(MissingColumnError, match="'rw'.*available columns: \\['fl'"):
        spec.columns(crabs.select("fl", "cl"))


def test_unseen_levels_at_prediction_are_missing_with_a_warning(crabs):
    spec = build_design("y ~ sp + fl", crabs).spec
    new = crabs.head(4).with_columns(pl.Series("sp", ["B", "purple", None, "green"]))
    with pytest.warns(UserWarning, match="'sp'.*'purple', 'green'"):
        columns = by_name(spec.columns(new))
    np.testing.assert_array_equal(columns["sp"].values, [0, -1, -1, -1])


def test_validation_target_and_weights(german_credit):
    train, valid = german_credit.head(700), german_credit.tail(300)
    design = build_design("y ~ duration + purpose", train, task="binary")
    assert design.spec.target_encoding.positive_class == 1
    np.testing.assert_array_equal(
        design.spec.target_values(valid), valid["y"].cast(pl.Float64)
    )
    assert design.spec.weight_values(valid) is None


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "formula",
    ["y ~ fl + nope", "y ~ np.log(nope)", "y ~ . - nope", "nope ~ fl", "y ~ fl:nope"],
)
def test_a_missing_column_in_the_formula_is_named(crabs, formula):
    with pytest.raises(MissingColumnError, match="'nope'"):
        build_design(formula, crabs)


def test_close_column_names_are_suggested(crabs):
    with pytest.raises(MissingColumnError, match="did you mean 'fl'"):
        build_design("y ~ fll", crabs)


def test_unknown_function_error_quotes_the_formula(crabs):
    with pytest.raises(FormulaError, match=r"formula 'y ~ frobnicate\(fl\)'"):
        build_design("y ~ frobnicate(fl)", crabs)


def test_own_functions_via_context(crabs):
    design = build_design("y ~ double(fl)", crabs, context={"double": lambda x: 2 * x})
    np.testing.assert_allclose(design.features[0].values, 2 * crabs["fl"].to_numpy())


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("fl + rw", "has no target"),
        ("y ~ y + fl", "also a feature"),
        ("y ~ 1", "no features"),
    ],
)
def test_malformed_formulas(crabs, formula, message):
    with pytest.raises(FormulaError, match=message):
        build_design(formula, crabs)


def test_nan_target_is_an_error_with_the_count(penguins):
    frame = penguins.with_columns(pl.col("bill_depth_mm").alias("depth"))
    with pytest.raises(TargetError, match="2 of 344 rows"):
        build_design("bill_length_mm ~ island + depth", frame)


# ------------------------------------------------------------------ invariants


def test_the_users_frame_is_never_modified(penguins):
    before = penguins.clone()
    pandas_frame = penguins.to_pandas()
    pandas_before = pandas_frame.copy(deep=True)
    formula = "y ~ . + np.log(body_mass_g) + island:sex + C(year)"
    build_design(formula, penguins, task="multiclass")
    build_design(formula, pandas_frame, task="multiclass")
    assert_frame_equal(penguins, before)
    assert pandas_frame.equals(pandas_before)
    assert list(pandas_frame.dtypes) == list(pandas_before.dtypes)


def test_pandas_input_gives_the_same_arrays_as_polars(german_credit):
    formula = "y ~ . + np.log(credit_amount) + purpose:duration"
    from_polars = build_design(formula, german_credit, task="binary")
    from_pandas = build_design(formula, german_credit.to_pandas(), task="binary")
    assert_same_columns(from_pandas.features, from_polars.features)
    np.testing.assert_array_equal(from_pandas.y, from_polars.y)
    assert from_pandas.spec.to_dict() == from_polars.spec.to_dict()


def test_design_spec_round_trips_through_json_and_pickle(penguins):
    formula = (
        "y ~ island + sex + bill_length_mm + C(year) + np.log(body_mass_g) + island:bill_depth_mm"
        " + bs(flipper_length_mm, df=4) + center(year) + C(sex, contr.sum):island"
    )
    spec = build_design(formula, penguins, task="multiclass").spec
    from_json = DesignSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    from_pickle = pickle.loads(pickle.dumps(spec))
    assert from_json == spec and from_pickle == spec
    assert json.dumps(from_json.to_dict()) == json.dumps(spec.to_dict())
    new = penguins.sample(fraction=1.0, shuffle=True, seed=1).drop("y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # missing values are not "unseen levels"
        expected = spec.columns(new)
        assert_same_columns(from_json.columns(new), expected)
        assert_same_columns(from_pickle.columns(new), expected)


def test_source_columns_for_importance(penguins):
    spec = build_design("y ~ island + np.log(body_mass_g) + island:sex", penguins).spec
    assert spec.source_columns == {
        "island": ("island",),
        "np.log(body_mass_g)": ("body_mass_g",),
        "island[Biscoe]:sex[female]": ("island", "sex"),
        "island[Biscoe]:sex[male]": ("island", "sex"),
        "island[Dream]:sex[female]": ("island", "sex"),
        "island[Dream]:sex[male]": ("island", "sex"),
        "island[Torgersen]:sex[female]": ("island", "sex"),
        "island[Torgersen]:sex[male]": ("island", "sex"),
    }
    assert spec.input_columns == ["island", "body_mass_g", "sex"]


def test_column_names_that_are_not_identifiers(crabs):
    frame = crabs.rename({"fl": "front lobe"})
    design = build_design(
        "y ~ `front lobe` + np.log(`front lobe`) + `front lobe`:rw", frame
    )
    assert design.spec.feature_names == [
        "front lobe",
        "np.log(`front lobe`)",
        "front lobe:rw",
    ]
    restored = DesignSpec.from_dict(json.loads(json.dumps(design.spec.to_dict())))
    assert_same_columns(restored.columns(frame.drop("y")), design.features)
