"""optboost on a Dask cluster: training and prediction for data spread over workers.

``boost(formula, data, client=..., **the parameters of optboost.boost)`` fits on a dask
DataFrame (pandas partitions) or a list of Parquet files read on the workers and returns the
ordinary ``optboost.Model``; ``predict(model, ddf)`` predicts partition by partition;
``DaskBoostRegressor`` / ``DaskBoostClassifier`` are the scikit-learn style estimators.

As ``lightgbm.dask`` and ``xgboost.dask`` do, one long-lived task per worker holding rows runs
the same booster on that worker's rows; the Rust core sums histograms, losses and line-search
terms and merges the bin sketches over a TCP star rooted at rank 0, so every rank grows the
same trees. Raw rows never pass through the client: it sees schemas, a few sample rows, the
categorical levels and class counts. Needs ``pip install "optboost[dask]"``.

Documentation: https://optboost.github.io/optboost/dask/
"""

from .._extras import EXTRAS, missing

try:  # what the modules below import where they need it: checked here to name the extra
    import distributed  # noqa: F401
    import pandas  # noqa: F401
except ImportError as error:
    name = (error.name or "").split(".")[0]
    raise missing(name if name in EXTRAS else "distributed", "optboost.dask") from error

from ._fit import boost
from ._predict import predict
from .._distributed.fit import DistributedTrainingError

__all__ = [
    "DaskBoostClassifier",
    "DaskBoostRegressor",
    "DistributedTrainingError",
    "boost",
    "predict",
]


def __getattr__(name: str):
    # The estimators need scikit-learn, which the rest does not: imported when asked for.
    if name in ("DaskBoostClassifier", "DaskBoostRegressor"):
        from . import _sklearn

        # safe: name is one of the two fixed names just checked, never from data
        return getattr(_sklearn, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
