"""Short, wide frames: their numeric columns reach the core in one block (a
Fortran-order float64 array), and give the same models and predictions, to the
bit, as the same columns handed over one by one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import features, formula, formula_parse
from optboost.errors import DataError, DataTypeError
from optboost.formula import FeatureBlock, FeatureColumn, per_column
from optboost.frames import MissingColumnError

DATA = Path(__file__).parent / "data"


def wide_frame(p: int = 120, n: int = 40, seed: int = 0) -> pl.DataFrame:
    """p numeric columns of several dtypes, with nulls and NaN, a string column in the
    middle (so the block comes in two runs) and a target."""
    rng = np.random.default_rng(seed)
    columns: dict[str, pl.Series] = {}
    for j in range(p):
        x = rng.normal(size=n)
        if j % 4 == 0:
            columns[f"x{j}"] = pl.Series(np.round(3 * x).astype(np.int64)).scatter([1, 5], None)
        elif j % 4 == 1:
            columns[f"x{j}"] = pl.Series(x.astype(np.float32))
        elif j % 4 == 2:
            columns[f"x{j}"] = pl.Series(np.where(x > 1.5, np.nan, x)).scatter([2], None)
        else:
            columns[f"x{j}"] = pl.Series(x > 0)
        if j == p // 2:
            columns["s"] = pl.Series(rng.choice(["a", "b", "c"], size=n))
    y = columns["x2"].fill_null(0.0).fill_nan(0.0) + rng.normal(size=n)
    return pl.DataFrame(columns).with_columns(y=y)


def one_by_one(monkeypatch):
    monkeypatch.setattr(features, "BLOCK_MIN_COLUMNS", 10**9)


def bits(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)


def test_blocks_give_the_models_and_predictions_of_single_columns(monkeypatch):
    frame = wide_frame()
    before = frame.clone()
    design = formula.build_design("y ~ .", frame)
    kinds = [type(c) for c in design.features]
    assert kinds == [FeatureBlock, FeatureColumn, FeatureBlock]
    assert sum(len(c.names) for c in design.features if isinstance(c, FeatureBlock)) == 120
    blocked = optboost.boost("y ~ .", frame, n_iter=20, max_depth=3, seed=1)
    scores = blocked.predict(frame.head(7), type="link")
    contributions = blocked.predict(frame.head(7), type="contrib")
    with monkeypatch.context() as patch:
        one_by_one(patch)
        features = formula.build_design("y ~ .", frame).features
        assert all(isinstance(c, FeatureColumn) for c in features)
        single = optboost.boost("y ~ .", frame, n_iter=20, max_depth=3, seed=1)
        assert np.array_equal(bits(single.predict(frame.head(7), type="link")), bits(scores))
        assert single.predict(frame.head(7), type="contrib").equals(contributions)
    assert single.trees().equals(blocked.trees())
    assert frame.equals(before)


def test_block_values_are_the_per_column_values():
    """Each column of the block holds what numeric_values gives that column alone:
    ints, bools and float32 cast to float64, nulls and NaN as NaN."""
    frame = wide_frame()
    design = formula.build_design("y ~ .", frame)
    for column in per_column(design.features):
        if column.kind == "numeric":
            expected = features.numeric_values(frame.get_column(column.name))
            assert np.array_equal(bits(column.values), bits(expected)), column.name
    block = design.features[0].values
    assert block.flags.f_contiguous and not block.flags.writeable


def test_tall_or_narrow_frames_keep_single_columns():
    narrow = wide_frame(p=features.BLOCK_MIN_COLUMNS - 1)
    assert all(isinstance(c, FeatureColumn) for c in formula.build_design("y ~ .", narrow).features)
    tall = wide_frame(p=70, n=features.BLOCK_MAX_ROWS + 1)
    assert all(isinstance(c, FeatureColumn) for c in formula.build_design("y ~ .", tall).features)


def test_a_wide_frame_with_a_text_column_where_numbers_were_is_refused_by_name():
    frame = wide_frame()
    model = optboost.boost("y ~ .", frame, n_iter=3)
    broken = frame.with_columns(pl.col("x7").cast(pl.String))
    with pytest.raises(DataTypeError, match="x7"):
        model.predict(broken)


def test_permutation_importance_by_feature_permutes_block_columns():
    """Bare columns are features of their own: shuffling the feature (in the core's
    columns, blocks split) and shuffling the data column are the same permutation."""
    frame = wide_frame()
    model = optboost.boost("y ~ .", frame, n_iter=20, max_depth=3)
    tables = {
        by: model.feature_importance(by, kind="permutation", data=frame, n_repeats=2, seed=0)
        for by in ("feature", "column")
    }
    by_feature = dict(zip(*tables["feature"].select("feature", "importance")))
    by_column = dict(zip(*tables["column"].select("column", "importance")))
    assert by_feature["x2"] > 0
    assert all(by_feature[name] == by_column[name] for name in by_column)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda b: b[::2], "contiguous"),
        (lambda b: b[:, :-1], "array of 60 columns"),
        (lambda b: b.astype(np.float32), "2-D float64"),
        (lambda b: b[:, 0].copy(), "2-D float64"),
    ],
)
def test_the_core_refuses_a_malformed_block(make, message):
    frame = wide_frame()
    model = optboost.boost("y ~ .", frame.select(f"x{j}" for j in range(0, 120, 2)).with_columns(
        frame["y"]), n_iter=2)
    names = [f"x{j}" for j in range(0, 120, 2)]
    block = np.asfortranarray(np.random.default_rng(0).normal(size=(5, len(names))))
    predictions = model._core.predict([FeatureBlock(names, block)])
    assert predictions.shape == (5, 1)
    # a C-order block is read in place too, row by row: the same predictions
    np.testing.assert_array_equal(
        model._core.predict([FeatureBlock(names, np.ascontiguousarray(block))]), predictions
    )
    with pytest.raises(DataError, match=message):
        model._core.predict([FeatureBlock(names, make(block))])
    with pytest.raises(DataError, match="kind"):
        model._core.predict([(names, block, "categorical", 0)])
    with pytest.raises(DataError, match="features"):
        model._core.predict([FeatureBlock(names[::-1], block)])


def test_a_held_out_part_of_a_wide_frame_gives_the_model_of_single_columns(monkeypatch):
    # A momentum method holds out a tenth of the rows (validation_fraction="auto"): the rows
    # taken from a block must stay a block the core accepts, with the same model.
    frame = wide_frame(n=200)
    settings = dict(method="agbm", n_iter=10, max_depth=3, seed=2)
    blocked = optboost.boost("y ~ .", frame, **settings)
    with monkeypatch.context() as patch:
        one_by_one(patch)
        single = optboost.boost("y ~ .", frame, **settings)
    assert single.trees().equals(blocked.trees())
    link = blocked.predict(frame, type="link")
    assert np.array_equal(bits(single.predict(frame, type="link")), bits(link))


# ------------------------------------------------------------------ frames of numbers only
# Their bare columns become features without per-column formula objects, and their block comes
# from one conversion of the whole frame (through its transpose for a few rows), picked by the
# positions the model keeps of the training frame's columns.


def numeric_wide_frame(p: int = 150, n: int = 40, seed: int = 0) -> pl.DataFrame:
    """p columns of numbers of six dtypes, with nulls and NaN (an all-null one too), and y."""
    rng = np.random.default_rng(seed)
    columns: dict[str, pl.Series] = {}
    for j in range(p):
        x = rng.normal(size=n)
        kind = j % 6
        if kind == 0:
            series = pl.Series(np.round(3 * x).astype(np.int64)).scatter([1, 5], None)
        elif kind == 1:
            series = pl.Series(x.astype(np.float32))
        elif kind == 2:
            series = pl.Series(np.where(x > 1.5, np.nan, x)).scatter([2], None)
        elif kind == 3:
            series = pl.Series(x > 0)
        elif kind == 4:
            series = pl.Series((2**40 * x).astype(np.int64))  # beyond float32's integers
        else:
            series = pl.Series(np.abs(np.round(10 * x)).astype(np.uint8))
        columns[f"x{j}"] = series
    columns["gone"] = pl.Series([None] * n, dtype=pl.Float64)
    y = columns["x2"].fill_null(0.0).fill_nan(0.0) + rng.normal(size=n)
    return pl.DataFrame(columns).with_columns(y=y)


def mixed_wide_frame(p: int = 150, n: int = 40, seed: int = 1) -> pl.DataFrame:
    """numeric_wide_frame with categorical columns mixed in: text (with nulls), Categorical and
    Enum."""
    rng = np.random.default_rng(seed)
    frame = numeric_wide_frame(p, n, seed)
    text = pl.Series(rng.choice(["a", "b", "c"], size=n)).scatter([0, 3], None)
    return frame.insert_column(10, text.alias("s")).with_columns(
        c=pl.Series(rng.choice(["u", "v"], size=n)).cast(pl.Categorical),
        e=pl.Series(rng.choice(["lo", "mid", "hi"], size=n)).cast(pl.Enum(["lo", "mid", "hi"])),
    )


def test_a_frame_of_numbers_is_one_block_of_the_per_column_values(monkeypatch):
    """Every column of the whole-frame conversion (transpose for a few rows, to_numpy for more)
    holds what numeric_values gives that column alone."""

    def refuse(*args):
        raise AssertionError("a frame of numbers is converted whole, not column by column")

    monkeypatch.setattr(features, "selected_block", refuse)
    for n in (6, features.TRANSPOSE_MAX_ROWS + 8):
        frame = numeric_wide_frame(n=n)
        design = formula.build_design("y ~ .", frame)
        assert [type(c) for c in design.features] == [FeatureBlock]
        block = design.features[0]
        assert block.names == [c for c in frame.columns if c != "y"]
        assert block.values.flags.f_contiguous and not block.values.flags.writeable
        for j, name in enumerate(block.names):
            expected = features.numeric_values(frame.get_column(name))
            assert np.array_equal(bits(block.values[:, j]), bits(expected)), (n, name)
        for frame_rows in (frame.head(3), frame.select(frame.columns[::-1])):
            columns = design.spec.columns(frame_rows)
            assert [type(c) for c in columns] == [FeatureBlock]
            for j, name in enumerate(columns[0].names):
                expected = features.numeric_values(frame_rows.get_column(name))
                assert np.array_equal(bits(columns[0].values[:, j]), bits(expected)), name


@pytest.mark.parametrize("make", [numeric_wide_frame, mixed_wide_frame])
def test_wide_frames_give_the_models_and_predictions_of_single_columns(monkeypatch, make):
    frame = make()
    settings = dict(n_iter=15, max_depth=3, seed=3)
    fast = optboost.boost("y ~ .", frame, **settings)
    with monkeypatch.context() as patch:
        one_by_one(patch)
        single = optboost.boost("y ~ .", frame, **settings)
        features = formula.build_design("y ~ .", frame).features
        assert all(isinstance(c, FeatureColumn) for c in features)
        reference = single.predict(frame, type="link")
    assert fast.spec.to_dict() == single.spec.to_dict()
    assert fast.trees().equals(single.trees())
    # The same rows in every layout a prediction may see them: the training frame's (a few rows
    # and all), columns in another order, extra columns, pandas.
    reordered = frame.select(frame.columns[::-1])
    extra = frame.with_columns(pl.lit(1.0).alias(f"extra{j}") for j in range(400))
    for rows in (frame, frame.head(5), reordered, extra, frame.to_pandas(), frame.head(5)):
        link = fast.predict(rows, type="link")
        assert np.array_equal(bits(link), bits(reference[: len(link)]))


def test_wide_models_predict_as_the_code_before_the_fast_path():
    """data/wide_predictions.json: the link predictions of these models by the optboost of
    commit d928edc (before bare columns skipped per-column formula objects and blocks came from
    the whole frame), as float.hex."""
    stored = json.loads((DATA / "wide_predictions.json").read_text())
    for name, make in (("numeric", numeric_wide_frame), ("mixed", mixed_wide_frame)):
        frame = make()
        # min_samples_leaf: least squares' leaf minimum then (its default is 1 since).
        model = optboost.boost("y ~ .", frame, n_iter=15, max_depth=3, seed=3, min_samples_leaf=10)
        link = model.predict(frame.head(9), type="link")
        assert [float(v).hex() for v in link] == stored[name], name


def test_a_wide_model_names_a_column_missing_at_predict():
    frame = numeric_wide_frame()
    model = optboost.boost("y ~ .", frame, n_iter=3)
    model.predict(frame.head(5))  # the training frame's layout, kept
    for _ in range(2):  # the layout of the broken frame is kept too: the same error again
        with pytest.raises(MissingColumnError, match="'x7'") as error:
            model.predict(frame.head(5).drop("x7"))
        assert "x17" not in str(error.value).split("available")[0]
    with pytest.raises(MissingColumnError, match=r"'x7'.*also missing: \['x8'\]"):
        model.predict(frame.drop("x7", "x8"))


def test_a_wide_model_refuses_text_where_numbers_were_by_name():
    frame = numeric_wide_frame()
    model = optboost.boost("y ~ .", frame, n_iter=3)
    broken = frame.head(5).with_columns(pl.col("x7").cast(pl.String))
    for _ in range(2):
        with pytest.raises(DataTypeError, match="x7"):
            model.predict(broken)
    assert model.predict(frame.head(5)).shape == (5,)  # and the frame of numbers still works


def test_features_of_numeric_columns_are_those_of_the_dataclass():
    """Feature.numeric_columns fills features in without __init__: every field, the same
    values, equal and hashing alike."""
    built = formula.Feature.numeric_columns(["a", "b c"])
    expected = [formula.Feature(n, "numeric", n, (n,)) for n in ("a", "b c")]
    assert built == expected
    assert [hash(f) for f in built] == [hash(f) for f in expected]
    fields = [f.name for f in dataclasses.fields(formula.Feature)]
    assert [list(vars(f)) for f in built] == [fields, fields]
    assert [dataclasses.asdict(f) for f in built] == [dataclasses.asdict(f) for f in expected]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built[0].name = "z"


def test_bare_names_parsed_by_formulaic_are_the_features_of_the_simple_parse():
    """Parentheses send a formula to formulaic; its bare names become the same features, in
    the same order, with the same columns for the core, as ``y ~ .``."""
    frame = mixed_wide_frame(p=70)
    names = [c for c in frame.columns if c != "y"]
    spelled = "y ~ (" + " + ".join(names) + ")"
    assert formula_parse._parse_simple(spelled, frame, None) is None
    dotted, parsed = (formula.build_design(f, frame) for f in ("y ~ .", spelled))
    assert parsed.spec.to_dict()["features"] == dotted.spec.to_dict()["features"]
    for a, b in zip(per_column(dotted.features), per_column(parsed.features)):
        assert (a.name, a.kind, a.n_levels) == (b.name, b.kind, b.n_levels)
        if a.kind == "numeric":
            assert np.array_equal(bits(a.values), bits(b.values)), a.name
        else:
            assert np.array_equal(a.values, b.values), a.name
