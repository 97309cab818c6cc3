"""optboost on Spark: training and prediction for a Spark DataFrame.

``boost(formula, data=spark_df, **the parameters of optboost.boost)`` fits with one rank per
partition, all started together in a barrier stage, and returns the ordinary
``optboost.Model``, equal to the one-process fit of the same rows; ``predict(model, df)`` adds
the predictions as a column (a pandas UDF); ``SparkBoostRegressor`` / ``SparkBoostClassifier``
are Spark ML estimators (``pyspark.ml.Pipeline`` stages).

The ranks run the same booster on their own rows and the Rust core does every reduction over
its authenticated TCP collective, as for ``optboost.dask``: rank 0 (the first partition
holding rows) opens the root's port and tells the others its address and the fit's join
secret through ``BarrierTaskContext.allGather``. Raw rows never pass through the driver: it
sees row counts, a few sample rows, the categorical levels and class counts. Needs
``pip install "optboost[spark]"``.

Documentation: https://optboost.github.io/optboost/spark/
"""

from .._extras import EXTRAS, missing

try:  # what the modules below import where they need it: checked here to name the extra
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError as error:
    name = (error.name or "").split(".")[0]
    raise missing(name if name in EXTRAS else "pyspark", "optboost.spark") from error

from .._distributed.fit import DistributedTrainingError
from ._fit import boost
from ._ml import (
    SparkBoostClassificationModel,
    SparkBoostClassifier,
    SparkBoostRegressionModel,
    SparkBoostRegressor,
)
from ._predict import predict

__all__ = [
    "DistributedTrainingError",
    "SparkBoostClassificationModel",
    "SparkBoostClassifier",
    "SparkBoostRegressionModel",
    "SparkBoostRegressor",
    "boost",
    "predict",
]
