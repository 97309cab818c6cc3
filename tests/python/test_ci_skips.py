"""In CI (CI=true) a test skipped for a missing package or C compiler fails (the hooks of
conftest.py); other skips (a data set outside the repository, a platform) stay skips, and
outside CI all of them are skips."""

from pathlib import Path


pytest_plugins = ["pytester"]

PROBES = '''
import pytest

def test_missing_package():
    pytest.importorskip("no_such_module_of_optboost")

def test_missing_data_set():
    pytest.skip("data set /nowhere/penguins.parquet not available")

def test_other_platform():
    pytest.skip("needs POSIX signals")
'''


def run(pytester, monkeypatch, ci):
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_probes=PROBES)
    monkeypatch.setenv("CI", ci)
    return pytester.runpytest("-p", "no:cacheprovider")


def test_missing_prerequisites_fail_in_ci(pytester, monkeypatch):
    result = run(pytester, monkeypatch, "true")
    result.assert_outcomes(failed=1, skipped=2)
    result.stdout.fnmatch_lines(["*skipped in CI, where nothing may be missing: could not import*"])


def test_outside_ci_they_are_skips(pytester, monkeypatch):
    run(pytester, monkeypatch, "false").assert_outcomes(skipped=3)
