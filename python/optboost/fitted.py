"""What the modules that read a trained model (explain, export, trees, report) use of it.

:class:`optboost.Model` is the one implementation. Those modules name this protocol rather
than the class: ``model.py`` imports them for its methods, so importing it back would make a
circle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .design_spec import DesignSpec


class FittedModel(Protocol):
    _core: Any  # the core model (optboost._core.CoreModel)
    _history: Mapping[str, list]
    _stop: tuple[str, str] | None
    spec: DesignSpec
    params: dict[str, str]

    @property
    def formula(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def loss(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def classes(self) -> list[Any] | None: ...
    @property
    def positive_class(self) -> Any: ...
    @property
    def feature_names(self) -> list[str]: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def n_iter(self) -> int: ...
    @property
    def kept_iteration(self) -> int: ...
    @property
    def stop_reason(self) -> str: ...

    def predict(
        self, newdata: Any, type: Any = None, iteration: int | None = None, **kwargs: Any
    ) -> Any: ...

    def feature_importance(self, by: Any = "column", **kwargs: Any) -> Any: ...
