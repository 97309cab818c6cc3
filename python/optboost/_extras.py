"""Optional dependencies, and where the documentation is.

The base install is numpy, polars, formulaic and tqdm; a feature that needs more imports it
through :func:`require`, whose error names the extra that installs it."""

from __future__ import annotations

import sys
from types import ModuleType

from .errors import MissingDependencyError

DOCS_URL = "https://optboost.github.io/optboost/"

# top-level module -> the extra of pyproject.toml that installs it
EXTRAS = {
    "matplotlib": "plot",
    "pandas": "pandas",
    "pyarrow": "pandas",
    "sklearn": "sklearn",
    "shap": "explain",
    "onnx": "onnx",
    "treelite": "treelite",
    "dask": "dask",
    "distributed": "dask",
    "pyspark": "spark",
}


def install_hint(module: str) -> str:
    return f'pip install "optboost[{EXTRAS[module.split(".")[0]]}]"'


def missing(module: str, feature: str) -> MissingDependencyError:
    """The error saying that ``feature`` needs ``module`` and which extra installs it."""
    return MissingDependencyError(
        f"{feature} needs {module.split('.')[0]}, an optional dependency of optboost: "
        f"{install_hint(module)}"
    )


def require(module: str, feature: str) -> ModuleType:
    """The module, or a MissingDependencyError saying that ``feature`` needs it and which
    ``pip install "optboost[...]"`` gives it. ``module`` is one of EXTRAS' fixed names (or a
    submodule of one), never a name from data."""
    error = missing(module, feature)
    try:
        # the import statement's hook (not importlib's), so that whatever replaces it sees this
        __import__(module)  # safe: every caller passes a literal name of EXTRAS, never data
    except ImportError as cause:
        raise error from cause
    return sys.modules[module]
