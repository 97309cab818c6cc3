"""Helpers shared by the API tests: small synthetic frames and checks for
which methods and losses this build of the core offers (others are being
added in parallel; tests that need them skip until they exist)."""

from __future__ import annotations

import functools

import numpy as np
import optboost
import polars as pl
import pytest


def regression_frame(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = rng.uniform(size=n)
    s = rng.choice(["red", "green", "blue"], size=n)
    y = 2 * a + np.sin(6 * b) + (s == "red") * 1.5 + rng.normal(scale=0.1, size=n)
    return pl.DataFrame({"a": a, "b": b, "s": s, "y": y})


def binary_frame(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = rng.normal(size=n)
    label = np.where(a + 0.5 * b + rng.normal(scale=0.3, size=n) > 0, "yes", "no")
    return pl.DataFrame({"a": a, "b": b, "label": label})


@functools.cache
def available(method: str = "gbm", loss: str = "squared") -> bool:
    """Whether the core offers this method with this loss: both names exist and
    parameter validation accepts the combination. Nothing is trained here: a
    method that accepts its parameters and then fails must fail its test, not
    be skipped."""
    if method not in optboost.method_names():
        return False
    if loss.split("(")[0].strip() not in optboost._core.loss_names():
        return False
    try:
        optboost._core.resolve_params([("method", method), ("loss", loss)])
    except optboost.ParameterError:
        return False
    return True


def require(method: str = "gbm", loss: str = "squared") -> None:
    if not available(method, loss):
        pytest.skip(f"this build has no {method} with the {loss} loss yet")
