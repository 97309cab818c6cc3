"""Training a model further on data given again (``Model.update(n, data=)`` and
``boost(..., init_model=)``): the data go through the model's own design (its
formula, levels and bin mappers) and the core continues from the model's
scores, numbering its iterations after the model's. For gbm, rgbm and proximal
the result is the model of one longer fit with the same data and parameters,
bit for bit; the methods that carry state between iterations beyond the model's
scores (momentum, corrected residuals) are refused by the core, naming them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import ParameterError
from .plan import new_booster


def continued_booster(
    model: Any, data: Any, params: Mapping[str, str], valid: Any = None
) -> Any:
    """A core booster that trains ``model`` further on ``data`` (monitoring ``valid``)
    with ``params`` (the core's names and text values; ``n_iter`` more iterations)."""
    spec = model.spec
    y = _flat(spec, spec.target_values(data))
    valid_args: tuple[Any, Any, Any] = (None, None, None)
    if valid is not None:
        valid_args = (
            spec.columns(valid),
            _flat(spec, spec.target_values(valid)),
            spec.weight_values(valid),
        )
    return new_booster(
        list(params.items()),
        spec.columns(data),
        y,
        spec.weight_values(data),
        valid_args,
        init_model=model._core,
    )


def check_formula(model: Any, formula: str) -> None:
    """The formula of a continued fit is the model's: its features are fixed."""
    if formula.replace(" ", "") != model.formula.replace(" ", ""):
        raise ParameterError(
            f"init_model was fitted with formula {model.formula!r}; continue it with the same "
            f"formula, not {formula!r}"
        )


def _flat(spec: Any, y: np.ndarray) -> np.ndarray:
    """y as the core takes it: several target columns row-major."""
    return np.ascontiguousarray(y).ravel() if spec.targets else y
