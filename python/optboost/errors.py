"""The exceptions optboost raises. Every error of the Rust core arrives as one of
these classes, with the core's message; all derive from :class:`OptboostError`.

Documentation: https://optboost.github.io/optboost/api/#errors
"""

from __future__ import annotations


class OptboostError(Exception):
    """Base class of every optboost error."""


class DataError(OptboostError, ValueError):
    """Data that cannot be used: empty, ragged, missing columns, wrong types."""


class DataTypeError(DataError, TypeError):
    """Data of the wrong type: not a frame, or a column of a dtype that cannot be used."""


class InvalidValueError(DataError):
    """A value the algorithms cannot accept (non-finite target, negative weight, ...)."""


class FormulaError(OptboostError, ValueError):
    """The formula cannot be parsed or evaluated; the message quotes it."""


class ParameterError(OptboostError, ValueError):
    """An unknown parameter, method or loss name, or a value outside its domain."""


class ModelFileError(OptboostError, ValueError):
    """A model file (or pickle) that cannot be read back."""


class ModelFileNotFoundError(ModelFileError, FileNotFoundError):
    """No model file at the given path."""


class TrainingError(OptboostError, RuntimeError):
    """Training that could not go on, or an internal error of the core."""


class ParameterTypeError(ParameterError, TypeError):
    """A parameter of the wrong type."""


class NotTrainableError(OptboostError, RuntimeError):
    """Continued training asked of a model that no longer holds its training state."""


class MissingDependencyError(OptboostError, ImportError):
    """A feature needs an optional package; the message says which ``pip install "optboost[...]"``
    installs it."""


class WorseThanConstantWarning(UserWarning):
    """The model a fit keeps has a higher loss on its own validation data than the initial
    constant (0 trees): its trees fit noise there. Early stopping keeps the best iterate, the
    constant included, so this is said of fits that keep their last iterate (no early stopping)
    or that monitor a metric other than the loss."""


class LossInferredWarning(UserWarning):
    """No ``loss=`` was given and the loss was chosen from the target, as R's gbm chooses its
    distribution and says so (``warnings.simplefilter("ignore", LossInferredWarning)``
    silences it; the model's summary records the choice)."""
