import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from optboost.frames import (
    MissingColumnError,
    TargetEncoding,
    TargetError,
    WeightsError,
    categorical_codes,
    categorical_levels,
    encode_target,
    get_column,
    numeric_values,
    to_polars,
    weight_values,
)

# ------------------------------------------------------------------ numeric


def test_float64_without_nulls_is_zero_copy():
    series = pl.Series("x", np.linspace(0.0, 1.0, 1000))
    values = numeric_values(series)
    buffer_address = series.to_arrow().buffers()[1].address
    assert values.ctypes.data == buffer_address
    assert values.dtype == np.float64 and values.flags.c_contiguous
    assert not values.flags.owndata and not values.flags.writeable


def test_null_and_nan_both_become_nan():
    values = numeric_values(pl.Series("x", [1.0, None, float("nan"), 4.0]))
    np.testing.assert_array_equal(np.isnan(values), [False, True, True, False])


@pytest.mark.parametrize(
    ("series", "expected"),
    [
        (pl.Series("i", [1, None, 3]), [1.0, np.nan, 3.0]),
        (pl.Series("u", [1, 2], dtype=pl.UInt8), [1.0, 2.0]),
        (pl.Series("f", [1.5, None], dtype=pl.Float32), [1.5, np.nan]),
        (pl.Series("b", [True, False, None]), [1.0, 0.0, np.nan]),
    ],
)
def test_ints_bools_and_float32_cast_to_float64(series, expected):
    values = numeric_values(series)
    assert values.dtype == np.float64 and values.flags.c_contiguous
    np.testing.assert_array_equal(values, expected)


def test_numeric_values_of_strings_is_an_error_naming_the_column():
    with pytest.raises(TypeError, match="'name'"):
        numeric_values(pl.Series("name", ["a", "b"]))


# ------------------------------------------------------------------ categorical


def test_string_levels_are_sorted_and_null_is_minus_one():
    series = pl.Series("s", ["b", "a", None, "c", "a"])
    levels = categorical_levels(series)
    assert levels == ["a", "b", "c"]
    codes = categorical_codes(series, levels)
    assert codes.dtype == np.int32
    np.testing.assert_array_equal(codes, [1, 0, -1, 2, 0])


def test_categorical_levels_are_sorted_not_in_order_of_appearance():
    series = pl.Series("s", ["z", "a", None, "m"], dtype=pl.Categorical)
    assert categorical_levels(series) == ["a", "m", "z"]
    np.testing.assert_array_equal(
        categorical_codes(series, ["a", "m", "z"]), [2, 0, -1, 1]
    )


def test_enum_levels_keep_the_enum_order_including_unused_categories():
    series = pl.Series(
        "e", ["low", "high", None], dtype=pl.Enum(["low", "mid", "high"])
    )
    levels = categorical_levels(series)
    assert levels == ["low", "mid", "high"]
    np.testing.assert_array_equal(categorical_codes(series, levels), [0, 2, -1])


def test_numbers_as_categories_are_sorted_as_numbers():
    series = pl.Series("year", [10, 2, None, 1, 2])
    levels = categorical_levels(series)
    assert levels == ["1", "2", "10"]
    np.testing.assert_array_equal(categorical_codes(series, levels), [2, 1, -1, 0, 1])


def test_unseen_levels_become_missing_with_a_warning_naming_column_and_levels():
    series = pl.Series("colour", ["red", "mauve", None, "blue", "teal", "mauve"])
    with pytest.warns(UserWarning, match="colour") as record:
        codes = categorical_codes(series, ["blue", "red"])
    np.testing.assert_array_equal(codes, [1, -1, -1, 0, -1, -1])
    message = str(record[0].message)
    assert "'mauve'" in message and "'teal'" in message and "3 value(s)" in message


def test_unseen_level_warning_lists_at_most_ten_levels():
    series = pl.Series("id", [f"v{i}" for i in range(50)])
    with pytest.warns(UserWarning) as record:
        categorical_codes(series, ["v0"])
    message = str(record[0].message)
    assert message.count("'v") == 10 and "39 more" in message


def test_known_levels_give_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        categorical_codes(pl.Series("s", ["a", None]), ["a"])


# ------------------------------------------------------------------ target


def test_regression_target_as_is():
    y, encoding = encode_target(pl.Series("y", [1, 2, 3]), "regression")
    assert y.dtype == np.float64 and encoding.labels is None
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])


def test_regression_with_a_string_target_is_an_error_saying_so():
    with pytest.raises(TargetError, match="regression needs a numeric target"):
        encode_target(pl.Series("y", ["a", "b"]), "regression")


def test_binary_from_bool_positive_is_true():
    y, encoding = encode_target(pl.Series("y", [True, False, True]), "binary")
    np.testing.assert_array_equal(y, [1.0, 0.0, 1.0])
    assert encoding.labels == (False, True) and encoding.positive_class is True


def test_binary_from_strings_positive_is_second_sorted():
    y, encoding = encode_target(pl.Series("y", ["yes", "no", "no", "yes"]), "binary")
    np.testing.assert_array_equal(y, [1.0, 0.0, 0.0, 1.0])
    assert encoding.positive_class == "yes"


def test_binary_from_zero_one_positive_is_one(german_credit):
    y, encoding = encode_target(german_credit["y"], "binary")
    assert encoding.labels == (0, 1) and encoding.positive_class == 1
    np.testing.assert_array_equal(y, german_credit["y"].to_numpy().astype(float))


def test_binary_from_enum_uses_enum_order():
    series = pl.Series("y", ["bad", "good", "bad"], dtype=pl.Enum(["good", "bad"]))
    y, encoding = encode_target(series, "binary")
    assert encoding.positive_class == "bad"
    np.testing.assert_array_equal(y, [1.0, 0.0, 1.0])


@pytest.mark.parametrize("values", [["a", "b", "c"], [1, 1, 1]])
def test_binary_needs_two_classes_and_says_how_many(values):
    with pytest.raises(TargetError, match=f"has {len(set(values))}"):
        encode_target(pl.Series("y", values), "binary")


def test_multiclass_from_strings(crabs):
    y, encoding = encode_target(crabs["sp"], "multiclass")
    assert encoding.labels == ("B", "O")
    np.testing.assert_array_equal(y, (crabs["sp"] == "O").cast(pl.Float64).to_numpy())


def test_multiclass_from_integers(penguins):
    y, encoding = encode_target(penguins["y"], "multiclass")
    assert encoding.labels == (0, 1, 2) and encoding.n_classes == 3
    np.testing.assert_array_equal(y, penguins["y"].cast(pl.Float64).to_numpy())
    assert encoding.decode(np.array([2, 0])) == [2, 0]


def test_multiclass_needs_two_classes():
    with pytest.raises(TargetError, match="at least 2 classes"):
        encode_target(pl.Series("y", ["a", "a"]), "multiclass")


def test_multiclass_rejects_non_integer_numbers():
    with pytest.raises(TargetError, match="integer or string"):
        encode_target(pl.Series("y", [0.5, 1.0, 2.0]), "multiclass")


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_missing_target_is_an_error_with_count_and_rows(task):
    series = pl.Series("y", [0.0, None, 1.0, float("nan"), 1.0, 0.0])
    with pytest.raises(TargetError, match=r"2 of 6 rows, first at rows \[1, 3\]"):
        encode_target(series, task)


def test_validation_target_uses_training_classes_and_rejects_new_ones():
    encoding = TargetEncoding("multiclass", ("a", "b", "c"))
    np.testing.assert_array_equal(
        encoding.encode(pl.Series("y", ["c", "a"])), [2.0, 0.0]
    )
    with pytest.raises(TargetError, match="'d'"):
        encoding.encode(pl.Series("y", ["a", "d"]))


def test_target_encoding_round_trips_through_dict():
    encoding = TargetEncoding("binary", (False, True))
    assert TargetEncoding.from_dict(encoding.to_dict()) == encoding


def test_unknown_task_is_an_error():
    with pytest.raises(ValueError, match="task must be one of"):
        encode_target(pl.Series("y", [1.0]), "ranking")


# ------------------------------------------------------------------ weights


def test_weights_from_column_and_array(small):
    np.testing.assert_array_equal(weight_values(small, "w"), small["w"].to_numpy())
    array = np.arange(1, 7)
    np.testing.assert_array_equal(weight_values(small, array), array.astype(float))
    assert weight_values(small, None) is None


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1.0, -1.0, 1.0, 1.0, 1.0, 1.0], "non-negative"),
        ([1.0, np.nan, 1.0, 1.0, 1.0, 1.0], "finite"),
        ([1.0, np.inf, 1.0, 1.0, 1.0, 1.0], "finite"),
        ([0.0] * 6, "all zero"),
        ([1.0] * 5, "one value per row"),
    ],
)
def test_bad_weights_are_clear_errors(small, weights, message):
    with pytest.raises(WeightsError, match=message):
        weight_values(small, np.array(weights))


def test_weights_column_missing_names_it(small):
    with pytest.raises(MissingColumnError, match="'wt'.*did you mean 'w'"):
        weight_values(small, "wt")


# ------------------------------------------------------------------ frames


def test_pandas_frame_is_converted_and_left_untouched():
    frame = pd.DataFrame({"a": [1.0, np.nan], "s": ["x", None]}, index=[10, 20])
    before = frame.copy(deep=True)
    converted = to_polars(frame)
    assert converted.schema == pl.Schema({"a": pl.Float64, "s": pl.String})
    pd.testing.assert_frame_equal(frame, before)


def test_pandas_float_column_with_nan_is_read_in_place():
    # NaN kept as NaN (not null) lets the core read the pandas frame's own buffer: a copy
    # per column with a missing value cost 8 bytes a row each.
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.nan], "b": [0.5, 1.5, 2.5, 3.5]})
    converted = to_polars(frame)
    for name in ("a", "b"):
        values = numeric_values(converted[name])
        assert np.shares_memory(values, frame[name].to_numpy()), name
    np.testing.assert_array_equal(numeric_values(converted["a"]), [1.0, np.nan, 3.0, np.nan])
    assert categorical_levels(converted["a"]) == ["1.0", "3.0"]


def test_pandas_categorical_keeps_its_declared_order():
    frame = pd.DataFrame(
        {"c": pd.Categorical(["lo", "hi"], categories=["lo", "mid", "hi"])}
    )
    assert categorical_levels(to_polars(frame)["c"]) == ["lo", "mid", "hi"]


def test_unsupported_input_type_is_an_error():
    with pytest.raises(TypeError, match="polars or pandas"):
        to_polars([[1, 2]])


def test_missing_column_lists_available(small):
    with pytest.raises(
        MissingColumnError, match=r"available columns: \['a', 'b', 's', 'y', 'w'\]"
    ):
        get_column(small, "nope")
