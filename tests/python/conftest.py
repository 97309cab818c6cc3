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


# What a test may skip for locally but not in CI (CI=true), where .ci/run installs every optional
# package the tests use (optboost[ci]) and Rust's linker needs a C compiler: there such a skip
# fails, so that no test stops running unnoticed. The shared data sets live outside the
# repository, so a test without them stays a skip; so do skips for other reasons (platform,
# features a build lacks).
MISSING_IN_CI = ("could not import ", "no C compiler")


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _fail_if_missing_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if os.environ.get("CI") != "true" or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if reason.startswith(MISSING_IN_CI):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where nothing may be missing: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    _fail_if_missing_in_ci(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    report = yield
    _fail_if_missing_in_ci(report)
    return report


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
def adult() -> pl.DataFrame:
    return _dataset("adult")


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
