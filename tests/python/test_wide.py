"""Short, wide frames: their numeric columns reach the core in one block (a
Fortran-order float64 array), and give the same models and predictions, to the
bit, as the same columns handed over one by one."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import formula
from optboost.errors import DataError, DataTypeError
from optboost.formula import FeatureBlock, FeatureColumn, per_column


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
    monkeypatch.setattr(formula, "BLOCK_MIN_COLUMNS", 10**9)


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
            expected = formula.numeric_values(frame.get_column(column.name))
            assert np.array_equal(bits(column.values), bits(expected)), column.name
    block = design.features[0].values
    assert block.flags.f_contiguous and not block.flags.writeable


def test_tall_or_narrow_frames_keep_single_columns():
    narrow = wide_frame(p=formula.BLOCK_MIN_COLUMNS - 1)
    assert all(isinstance(c, FeatureColumn) for c in formula.build_design("y ~ .", narrow).features)
    tall = wide_frame(p=70, n=formula.BLOCK_MAX_ROWS + 1)
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
