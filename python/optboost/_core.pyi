"""Type stubs of the Rust extension module (src/python/)."""

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

__version__: str
MODEL_FORMAT_VERSION: int
# (column, "int64" | "float64" | "bool") of Booster.history, in order.
HISTORY_SCHEMA: list[tuple[str, str]]
ROW_ROLES: tuple[int, int, int]  # (trains, validates, left out), as Booster(row_roles=) reads them

# (name, values, kind, n_levels): float64 values for "numeric" (NaN = missing),
# int32 codes for "categorical" (-1 = missing, below n_levels); 1-D, C-contiguous.
# Or a numeric block (names, values, "numeric", 0): a list of names and a 2-D
# float64 array with a column per name, in Fortran or C order (both read in place).
FeatureColumns: TypeAlias = Sequence[
    tuple[str, np.ndarray, str, int] | tuple[list[str], np.ndarray, str, int]
]
StopKind: TypeAlias = Literal["completed", "early_stopping", "diverged", "worker_lost"]

def param_names() -> list[str]: ...
def method_names() -> list[str]: ...
def param_defaults() -> dict[str, str | int | float]: ...
def metric_names() -> list[str]: ...
def loss_names() -> list[str]: ...
# method, loss, task, step, rho (None: from the data), preset, and preset_settings: the
# (name, value) pairs the preset set (those not given).
def resolve_params(
    params: Sequence[tuple[str, str]],
) -> dict[str, str | float | None | list[tuple[str, str]]]: ...
def loss_task(loss: str) -> Literal["regression", "binary", "multiclass"]: ...

# A loss's row of the core's loss vocabulary, from its text ("pinball(0.9)", "custom"):
# name, parameter ((name, value) or None), levels (quantiles' levels, else None), task
# ("regression", "binary", "multiclass", "multi_output", "survival", "quantiles",
# "distribution"), target (the
# target encoding: "regression", "binary", "multiclass"), link ("identity", "sigmoid",
# "softmax", "exp", "margin", "sorted": quantiles sorted per row, "distribution": a distribution's parameters), link_scale (the
# sigmoid's, else None), separable, piecewise_linear, sigma_from_data, distributable, metrics
# (the built-in metrics that fit it), default_metric ("mse", "mae", "logloss", "error",
# "poisson_deviance", "gamma_deviance", "tweedie_deviance", "pinball", "quantiles", "nll"; the
# tweedie deviance and pinball take the parameter, quantiles the levels), multi_output (the loss fitting it to several target columns, or None), r_gbm
# (R gbm's distribution name for it, or None), parameters (a distributional loss's parameter
# names, as its response gives them, e.g. ["mean", "sd"]; else None).
def loss_info(loss: str) -> dict[str, Any]: ...

# What a method declares: name, momentum, proximal (its direction is the per-row prox),
# multiclass, trees_per_iteration (per output; None when it varies), step_rules.
def method_info(method: str) -> dict[str, Any]: ...

class Booster:
    def __init__(
        self,
        params: Sequence[tuple[str, str]],
        features: FeatureColumns,
        y: npt.NDArray[np.float64],
        weights: npt.NDArray[np.float64] | None = None,
        valid_features: FeatureColumns | None = None,
        valid_y: npt.NDArray[np.float64] | None = None,
        valid_weights: npt.NDArray[np.float64] | None = None,
        offset: npt.NDArray[np.float64] | None = None,
        valid_offset: npt.NDArray[np.float64] | None = None,
        custom_loss: Any = None,
        # What each row of `features` is for (0: trains, 1: validates, 2: left out), read in
        # place by both sides; y, weights and offset are given for every row.
        row_roles: npt.NDArray[np.uint8] | None = None,
        # One rank of a data-parallel fit: (rank, world, root "host:port", the job's secret
        # (16 to 1024 random bytes, the same on every rank), timeout in seconds, this rank's
        # training rows as (global start, count) ranges in their order, or None: the rows after
        # the ranks before it); features, y, weights and offsets are this rank's rows.
        distributed: tuple[int, int, str, bytes, float, list[tuple[int, int]] | None]
        | None = None,
        # A model to train further on these rows (binned with its mappers), from its scores.
        init_model: CoreModel | None = None,
    ) -> None: ...
    def advance(
        self, max_steps: int, max_seconds: float
    ) -> tuple[int, tuple[StopKind, str] | None]: ...
    def extend(self, extra: int) -> None: ...
    def continue_after_early_stopping(self, rounds: int | None = None) -> bool: ...
    @property
    def finished(self) -> tuple[StopKind, str] | None: ...
    @property
    def iteration(self) -> int: ...
    @property
    def initial_valid_loss(self) -> float | None: ...
    def model(self) -> CoreModel: ...
    def history(self, start: int = 0) -> dict[str, list]: ...
    def traffic(self) -> dict[str, int]: ...
    def response_outputs(self) -> tuple[list[float], list[float] | None]: ...

class CoreModel:
    @staticmethod
    def from_json(text: str) -> CoreModel: ...
    # A Python model file's bytes: the core model and the raw JSON of each other entry.
    @staticmethod
    def from_file_json(data: bytes) -> tuple[CoreModel, list[tuple[str, str]]]: ...
    def to_json(self) -> str: ...
    def predict(
        self, features: FeatureColumns, iteration: int | None = None, n_threads: int = 0
    ) -> npt.NDArray[np.float64]: ...
    def predict_response(
        self, features: FeatureColumns, iteration: int | None = None, n_threads: int = 0
    ) -> npt.NDArray[np.float64]: ...
    def predict_staged(
        self,
        features: FeatureColumns,
        iterations: Sequence[int],
        response: bool,
        n_threads: int = 0,
    ) -> list[npt.NDArray[np.float64]]: ...
    def response(self, scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
    def metric(
        self,
        name: str,
        features: FeatureColumns,
        y: npt.NDArray[np.float64],
        weights: npt.NDArray[np.float64] | None = None,
        n_threads: int = 0,
    ) -> float: ...
    def predict_contrib(
        self, features: FeatureColumns, iteration: int | None = None
    ) -> npt.NDArray[np.float64]: ...
    def predict_interactions(
        self, features: FeatureColumns, iteration: int | None = None
    ) -> npt.NDArray[np.float64]: ...
    def feature_importance(self) -> tuple[list[str], list[float], list[int]]: ...
    @property
    def feature_names(self) -> list[str]: ...
    @property
    def feature_sources(self) -> list[str]: ...
    @property
    def feature_combined_with(self) -> list[str | None]: ...
    @property
    def feature_levels(self) -> list[int | None]: ...
    @property
    def n_outputs(self) -> int: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def n_iterations(self) -> int: ...
    @property
    def method(self) -> str: ...
    @property
    def loss(self) -> str: ...
    # (link name, the sigmoid's scale or None), as loss_info's link and link_scale.
    @property
    def link(self) -> tuple[str, float | None]: ...
    @property
    def best_iteration(self) -> int | None: ...
