"""Optional dependencies: a feature whose package is missing raises MissingDependencyError naming
the ``pip install "optboost[...]"`` that installs it; the help and the docstrings link the site."""

from __future__ import annotations

import importlib
import io
import re
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import optboost
from optboost import _extras
from optboost.errors import MissingDependencyError, OptboostError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"a": rng.normal(size=200), "c": rng.choice(["u", "v"], size=200)})
    frame = frame.with_columns(y=pl.col("a") * 2)
    return optboost.boost("y ~ a + c", frame, n_iter=5, progress=False), frame


def hide(monkeypatch, *modules: str) -> None:
    """Make `modules` unimportable, with their submodules: an earlier test may have imported
    ``sklearn.base``, which a cached entry would otherwise still give."""
    for name in modules:
        for loaded in [m for m in sys.modules if m.startswith(name + ".")]:
            monkeypatch.setitem(sys.modules, loaded, None)
        monkeypatch.setitem(sys.modules, name, None)


def test_the_error_is_an_import_error_of_the_package_that_names_the_extra(monkeypatch):
    hide(monkeypatch, "shap")
    with pytest.raises(MissingDependencyError) as caught:
        _extras.require("shap", "model.explain")
    assert isinstance(caught.value, ImportError) and isinstance(caught.value, OptboostError)
    assert str(caught.value) == (
        'model.explain needs shap, an optional dependency of optboost: '
        'pip install "optboost[explain]"'
    )
    with pytest.raises(KeyError):  # only the fixed table's modules
        _extras.require("os", "nothing")


def test_every_named_extra_exists_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for extra in set(_extras.EXTRAS.values()):
        assert re.search(rf"^{extra} = \[", text, flags=re.M), extra


@pytest.mark.parametrize(
    "hidden, extra, action",
    [
        (("matplotlib", "matplotlib.pyplot"), "plot", lambda m, f: m.plot()),
        (("matplotlib", "matplotlib.pyplot"), "plot",
         lambda m, f: optboost.cv("y ~ a", f, folds=2, n_iter=3, progress=False).plot()),
        (("matplotlib", "matplotlib.pyplot"), "plot",
         lambda m, f: importlib.import_module("optboost.explain").plot_partial_dependence(
             m.partial_dependence(f, "a"))),
        (("shap",), "explain", lambda m, f: m.explain(f)),
        (("onnx",), "onnx", lambda m, f: m.to_onnx()),
        (("treelite", "treelite.model_builder"), "treelite", lambda m, f: m.to_treelite()),
    ],
)
def test_each_feature_names_its_extra(model, monkeypatch, hidden, extra, action):
    fitted, frame = model
    hide(monkeypatch, *hidden)
    with pytest.raises(MissingDependencyError, match=rf'pip install "optboost\[{extra}\]"'):
        action(fitted, frame)


@pytest.mark.parametrize(
    "module, hidden, extra",
    [
        ("optboost.sklearn", "sklearn", "sklearn"),
        ("optboost.dask", "distributed", "dask"),
        ("optboost.spark", "pyspark", "spark"),
    ],
)
def test_modules_that_need_an_extra_say_so_on_import(monkeypatch, module, hidden, extra):
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    hide(monkeypatch, hidden)
    with pytest.raises(MissingDependencyError, match=rf'pip install "optboost\[{extra}\]"'):
        importlib.import_module(module)


def test_a_pandas_frame_without_pyarrow_names_the_pandas_extra(monkeypatch):
    pd = pytest.importorskip("pandas")
    from optboost import frames

    def needs_pyarrow(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

    monkeypatch.setattr(frames.pl, "from_pandas", needs_pyarrow)
    with pytest.raises(MissingDependencyError, match=r'needs pyarrow.*optboost\[pandas\]'):
        frames.to_polars(pd.DataFrame({"a": ["x", "y"]}))


def test_the_demo_says_how_to_get_its_picture(monkeypatch, tmp_path):
    from optboost import demo

    hide(monkeypatch, "matplotlib", "matplotlib.pyplot")
    out = io.StringIO()
    demo.save_plot([], tmp_path / "demo.png", out)
    assert 'pip install "optboost[plot]"' in out.getvalue()
    assert not (tmp_path / "demo.png").exists()


def test_help_and_public_docstrings_link_the_site(capsys):
    site_url = re.search(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(), re.M).group(1)
    assert _extras.DOCS_URL == site_url
    from optboost import cli

    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert site_url in capsys.readouterr().out
    for name in ("optboost", "optboost.api", "optboost.model", "optboost.crossval",
                 "optboost.losses", "optboost.errors", "optboost.explain", "optboost.export",
                 "optboost.sklearn", "optboost.plot", "optboost.dask", "optboost.spark"):
        assert site_url in importlib.import_module(name).__doc__, name
    for obj in (optboost.boost, optboost.Model, optboost.load, optboost.cv):
        assert site_url in obj.__doc__, obj
