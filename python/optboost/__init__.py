"""optboost: the boosting algorithms of optimization theory (GBM, RGBM, AGBM,
proximal, Grubb & Bagnell) on a fast histogram-tree engine in Rust, with
R-style formulas.

>>> m = optboost.boost("y ~ a + b + C(c)", data=df, method="agbm", n_iter=200)
>>> m.predict(new_df)
"""

from ._core import __version__
from .api import boost, method_names, param_names
from .cv import CVResult, cv
from .errors import (
    DataError,
    DataTypeError,
    FormulaError,
    InvalidValueError,
    ModelFileError,
    ModelFileNotFoundError,
    NotTrainableError,
    OptboostError,
    ParameterError,
    ParameterTypeError,
    TrainingError,
)
from .frames import MissingColumnError, TargetError, WeightsError
from .losses import Exponential, Huber, Logistic, Pinball
from .model import Model, load

__all__ = [
    "CVResult",
    "DataError",
    "DataTypeError",
    "Exponential",
    "FormulaError",
    "Huber",
    "InvalidValueError",
    "Logistic",
    "MissingColumnError",
    "Model",
    "ModelFileError",
    "ModelFileNotFoundError",
    "NotTrainableError",
    "OptboostError",
    "ParameterError",
    "ParameterTypeError",
    "Pinball",
    "TargetError",
    "TrainingError",
    "WeightsError",
    "__version__",
    "boost",
    "cv",
    "load",
    "method_names",
    "param_names",
]
