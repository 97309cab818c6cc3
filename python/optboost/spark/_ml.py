"""Spark ML estimators: ``SparkBoostRegressor`` and ``SparkBoostClassifier`` fit with
``optboost.spark.boost`` and give a Spark ML ``Model`` whose ``transform`` adds the predictions
(pandas UDFs), so that they work inside a ``pyspark.ml.Pipeline``.

The features are either a vector column (``featuresCol``, e.g. a VectorAssembler's output;
its entries become the features ``f0``, ``f1``, …) or the DataFrame's own columns through a
``formula`` (categorical string columns included). The fitted optboost model is the Spark
model's ``model``.
"""

from __future__ import annotations

from typing import Any

from pyspark.ml import Estimator
from pyspark.ml import Model as SparkModel
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasFeaturesCol,
    HasLabelCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasWeightCol,
)

from .. import _core
from ..errors import DataError, ParameterError
from ..losses import loss_text
from ..model import Model
from ._fit import boost
from ._predict import prediction_column

# The target's and the weights' columns in the frame given to optboost.spark.boost.
TARGET_COLUMN = "optboost_target_"
WEIGHT_COLUMN = "optboost_sample_weight_"
FEATURE_PREFIX = "f"


class _BoostParams(HasFeaturesCol, HasLabelCol, HasPredictionCol, HasWeightCol):
    formula: Param = Param(
        Params._dummy(),
        "formula",
        "an optboost formula over the DataFrame's columns (its target is the label); "
        "None: labelCol ~ the entries of featuresCol",
        typeConverter=TypeConverters.toString,
    )
    timeout: Param = Param(
        Params._dummy(),
        "timeout",
        "seconds a rank waits for the others at any exchange before the fit fails",
        typeConverter=TypeConverters.toFloat,
    )
    parameters: Param = Param(
        Params._dummy(),
        "parameters",
        "the other arguments of optboost.boost, as a dict (method, loss, n_iter, ...)",
    )

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(
            featuresCol="features",
            labelCol="label",
            predictionCol="prediction",
            timeout=600.0,
            parameters={},
        )

    def _set_given(self, given: dict[str, Any], parameters: dict[str, Any]) -> None:
        self._set(**{name: value for name, value in given.items() if value is not None})
        self._set(parameters=dict(parameters))

    def _features(self, dataset: Any, model: Model | None = None) -> tuple[Any, str | None]:
        """The frame optboost sees: the formula's columns as they are, or the vector's
        entries as columns f0, f1, … (``model``: the fitted one, which says how many)."""
        from pyspark.ml.functions import vector_to_array
        from pyspark.sql import functions

        if self.isDefined(self.formula) and self.getOrDefault(self.formula):
            return dataset, None
        column = self.getFeaturesCol()
        if column not in dataset.columns:
            raise DataError(
                f"featuresCol {column!r} is not a column of the DataFrame ({dataset.columns[:30]})"
                "; give a vector column or a formula"
            )
        if model is not None:
            width = 1 + max(int(name[len(FEATURE_PREFIX):]) for name in model.spec.input_columns)
        else:
            first = dataset.select(column).first()
            if first is None:
                raise DataError("the DataFrame has no rows")
            width = len(first[0])
        names = [f"{FEATURE_PREFIX}{j}" for j in range(width)]
        clash = sorted(set(names) & set(dataset.columns))
        if clash:
            raise DataError(
                f"the DataFrame has column(s) {clash[:10]}, the names the entries of "
                f"{column!r} take; rename them"
            )
        values = vector_to_array(functions.col(f"`{column}`"))
        entries = [values[j].alias(name) for j, name in enumerate(names)]
        return dataset.select("*", *entries), "entries"

    def _arguments(self) -> dict[str, Any]:
        parameters = dict(self.getOrDefault(self.parameters) or {})
        for name in ("weights", "formula", "data", "timeout"):
            if name in parameters:
                raise ParameterError(
                    f"set {name} through the estimator's own parameters (weightCol, formula, "
                    "timeout), not in parameters"
                )
        return parameters


class _BoostEstimator(_BoostParams, Estimator):
    def _boost(self, dataset: Any, loss: str | None) -> Model:
        frame, mode = self._features(dataset)
        arguments = self._arguments()
        if loss is not None:
            arguments["loss"] = loss
        weight = self.getOrDefault(self.weightCol) if self.isDefined(self.weightCol) else None
        timeout = self.getOrDefault(self.timeout)
        if mode is None:
            return boost(
                self.getOrDefault(self.formula), frame, weights=weight or None, timeout=timeout,
                **arguments,
            )
        entries = [c for c in frame.columns if c.startswith(FEATURE_PREFIX) and c[1:].isdigit()]
        selected = [frame[f"`{self.getLabelCol()}`"].alias(TARGET_COLUMN)]
        if weight:
            selected.append(frame[f"`{weight}`"].alias(WEIGHT_COLUMN))
        frame = frame.select(*selected, *entries)
        return boost(
            f"{TARGET_COLUMN} ~ " + " + ".join(entries),
            frame,
            weights=WEIGHT_COLUMN if weight else None,
            timeout=timeout,
            **arguments,
        )


class _BoostModel(_BoostParams, SparkModel):
    def __init__(self, model: Model | None = None) -> None:
        super().__init__()
        self.model = model

    def _inputs(self, dataset: Any) -> Any:
        frame, _ = self._features(dataset, self.model)
        return frame

    def _finish(self, dataset: Any, frame: Any, added: dict[str, Any]) -> Any:
        """``dataset`` with the ``added`` columns (computed on ``frame``, which may hold the
        vector's entries as columns too)."""
        kept = [frame[f"`{c}`"] for c in dataset.columns]
        return frame.select(*kept, *[column.alias(name) for name, column in added.items()])


class SparkBoostRegressor(_BoostEstimator):
    """``optboost.spark.boost`` as a Spark ML estimator for a numeric label: ``fit(df)`` gives
    a ``SparkBoostRegressionModel`` whose ``transform(df)`` adds ``predictionCol``.

    ``SparkBoostRegressor(featuresCol="features", labelCol="label", formula=None,
    weightCol=None, timeout=600.0, **parameters)``: ``parameters`` are ``optboost.boost``'s
    (method, loss, n_iter, learning_rate, ...)."""

    def __init__(
        self,
        *,
        featuresCol: str | None = None,
        labelCol: str | None = None,
        predictionCol: str | None = None,
        weightCol: str | None = None,
        formula: str | None = None,
        timeout: float | None = None,
        **parameters: Any,
    ) -> None:
        super().__init__()
        given = dict(
            featuresCol=featuresCol, labelCol=labelCol, predictionCol=predictionCol,
            weightCol=weightCol, formula=formula, timeout=timeout,
        )
        self._set_given(given, parameters)

    def _fit(self, dataset: Any) -> SparkBoostRegressionModel:
        model = self._boost(dataset, None)
        return self._copyValues(SparkBoostRegressionModel(model))


class SparkBoostRegressionModel(_BoostModel):
    """A fitted ``SparkBoostRegressor``: ``model`` is the ``optboost.Model``."""

    def _transform(self, dataset: Any) -> Any:
        frame = self._inputs(dataset)
        column = prediction_column(self.model, frame, None, None)
        return self._finish(dataset, frame, {self.getPredictionCol(): column})


class SparkBoostClassifier(_BoostEstimator, HasProbabilityCol):
    """``optboost.spark.boost`` as a Spark ML estimator for class labels: ``fit(df)`` gives a
    ``SparkBoostClassificationModel`` whose ``transform(df)`` adds ``predictionCol`` (the
    class label) and ``probabilityCol`` (a vector of the class probabilities, in the order of
    ``model.classes``). Without ``loss`` in the parameters the loss is logistic for two
    classes, softmax for more. Same parameters as ``SparkBoostRegressor``, and
    ``probabilityCol``."""

    def __init__(
        self,
        *,
        featuresCol: str | None = None,
        labelCol: str | None = None,
        predictionCol: str | None = None,
        probabilityCol: str | None = None,
        weightCol: str | None = None,
        formula: str | None = None,
        timeout: float | None = None,
        **parameters: Any,
    ) -> None:
        super().__init__()
        self._setDefault(probabilityCol="probability")
        given = dict(
            featuresCol=featuresCol, labelCol=labelCol, predictionCol=predictionCol,
            probabilityCol=probabilityCol, weightCol=weightCol, formula=formula, timeout=timeout,
        )
        self._set_given(given, parameters)

    def _fit(self, dataset: Any) -> SparkBoostClassificationModel:
        loss = self._arguments().get("loss")
        if loss is None:
            label = self._label_of(dataset)
            # Only the number of distinct labels comes to the driver: it chooses the loss.
            n_classes = dataset.select(f"`{label}`").distinct().count()
            loss = "logistic" if n_classes == 2 else "softmax"
        else:
            loss = loss_text(loss)
        if _core.loss_task(loss) == "regression":
            raise ParameterError(f"SparkBoostClassifier needs a classification loss; got {loss!r}")
        model = self._boost(dataset, loss)
        return self._copyValues(SparkBoostClassificationModel(model))

    def _label_of(self, dataset: Any) -> str:
        if self.isDefined(self.formula) and self.getOrDefault(self.formula):
            target = str(self.getOrDefault(self.formula)).split("~", 1)[0].strip().strip("`")
            if target not in dataset.columns:
                raise ParameterError(
                    f"formula {self.getOrDefault(self.formula)!r}: without loss= the classifier "
                    "counts the classes of a target column, and the target is not one; pass "
                    "loss='logistic' or 'softmax'"
                )
            return target
        return self.getLabelCol()


class SparkBoostClassificationModel(_BoostModel, HasProbabilityCol):
    """A fitted ``SparkBoostClassifier``: ``model`` is the ``optboost.Model``."""

    def __init__(self, model: Model | None = None) -> None:
        super().__init__(model)
        self._setDefault(probabilityCol="probability")

    def _transform(self, dataset: Any) -> Any:
        from pyspark.ml.functions import array_to_vector
        from pyspark.sql import functions

        frame = self._inputs(dataset)
        probabilities = prediction_column(self.model, frame, "response", None)
        if self.model.task == "binary":
            probabilities = functions.array(1.0 - probabilities, probabilities)
        added = {
            self.getPredictionCol(): prediction_column(self.model, frame, "class", None),
            self.getProbabilityCol(): array_to_vector(probabilities),
        }
        return self._finish(dataset, frame, added)
