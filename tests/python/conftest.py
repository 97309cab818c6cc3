"""Shared fixtures: the real data sets (read-only, never copied) and small frames."""

import os
from pathlib import Path

import polars as pl
import pytest

# the worktree's sibling ../shared/datasets unless OPTBOOST_DATASETS says otherwise
DATASETS = Path(
    os.environ.get(
        "OPTBOOST_DATASETS", Path(__file__).resolve().parents[3] / "shared" / "datasets"
    )
)


def _dataset(name: str) -> pl.DataFrame:
    path = DATASETS / f"{name}.parquet"
    if not path.exists():
        pytest.skip(f"data set {path} not available")
    return pl.read_parquet(path)


@pytest.fixture(scope="session")
def penguins_data() -> pl.DataFrame:
    return _dataset("penguins")


@pytest.fixture
def penguins(penguins_data) -> pl.DataFrame:
    # a fresh frame per test, so a test that (wrongly) mutated it could not hide it
    return penguins_data.clone()


@pytest.fixture
def crabs() -> pl.DataFrame:
    return _dataset("crabs")


@pytest.fixture
def german_credit() -> pl.DataFrame:
    return _dataset("german_credit")


@pytest.fixture
def small() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "a": [1.0, 2.0, None, 4.0, float("nan"), 6.0],
            "b": [1, 2, 3, 4, 5, 6],
            "s": ["x", "y", None, "x", "z", "y"],
            "y": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5],
            "w": [1.0, 2.0, 1.0, 1.0, 0.0, 1.0],
        }
    )


@pytest.fixture
def redwine() -> pl.DataFrame:
    return _dataset("redwine")


@pytest.fixture
def concrete() -> pl.DataFrame:
    return _dataset("concrete")
