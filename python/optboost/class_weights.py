"""Class weights for classification losses: ``"balanced"`` or a mapping from
class label to weight, multiplying the sample weights (as scikit-learn's and
LightGBM's ``class_weight``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import ParameterError


def class_weight_values(class_weight: Any, codes: np.ndarray, labels: Sequence[Any]) -> np.ndarray:
    """One weight per row: ``codes`` are class indices into ``labels``.
    "balanced": n / (K · count of the row's class), so that every class has the
    same total weight."""
    codes = np.asarray(codes).astype(np.intp)
    k = len(labels)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ParameterError(
                f"class_weight must be 'balanced' or a mapping from class to weight, "
                f"got {class_weight!r}"
            )
        counts = np.bincount(codes, minlength=k).astype(np.float64)
        per_class = np.divide(len(codes), k * counts, out=np.zeros(k), where=counts > 0)
    elif isinstance(class_weight, Mapping):
        per_class = np.ones(k)
        by_text = {str(label): index for index, label in enumerate(labels)}
        for key, weight in class_weight.items():
            index = next((i for i, label in enumerate(labels) if label == key), None)
            if index is None:
                index = by_text.get(str(key))
            if index is None:
                raise ParameterError(
                    f"class_weight names {key!r}, not a class; classes: {list(labels)}"
                )
            if not (isinstance(weight, (int, float)) and np.isfinite(weight) and weight >= 0):
                raise ParameterError(f"class_weight[{key!r}] must be a number >= 0, got {weight!r}")
            per_class[index] = float(weight)
    else:
        raise ParameterError(
            "class_weight must be 'balanced' or a mapping from class to weight, "
            f"got {class_weight!r}"
        )
    return per_class[codes]
