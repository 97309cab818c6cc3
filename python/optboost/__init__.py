"""optboost: the boosting algorithms of optimization theory (GBM, RGBM, AGBM,
proximal, Grubb & Bagnell) on a fast histogram-tree engine in Rust, with
R-style formulas.

>>> m = optboost.boost("y ~ a + b + C(c)", data=df, method="agbm", n_iter=200)
>>> m.predict(new_df)

Names are imported on first use, so that ``optboost --help`` starts at once.

Documentation: https://optboost.github.io/optboost/
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "__version__": "_core",
    "boost": "api",
    "method_names": "api",
    "param_names": "api",
    "cv": "crossval",
    "CVResult": "crossval",
    "DataError": "errors",
    "DataTypeError": "errors",
    "FormulaError": "errors",
    "InvalidValueError": "errors",
    "ModelFileError": "errors",
    "ModelFileNotFoundError": "errors",
    "NotTrainableError": "errors",
    "OptboostError": "errors",
    "ParameterError": "errors",
    "ParameterTypeError": "errors",
    "TrainingError": "errors",
    "WorseThanConstantWarning": "errors",
    "LossInferredWarning": "errors",
    "MissingColumnError": "frames",
    "TargetError": "frames",
    "WeightsError": "frames",
    "Exponential": "losses",
    "Tweedie": "losses",
    "CustomLoss": "losses",
    "Huber": "losses",
    "Logistic": "losses",
    "Pinball": "losses",
    "Quantiles": "losses",
    "Model": "model",
    "load": "model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'optboost' has no attribute {name!r}")
    # safe: module and name come from the fixed _EXPORTS table above, never from data
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
