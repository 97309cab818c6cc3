"""Model files: the JSON entries ``Model.save`` writes around the core model, and their checks
on reading. A file is untrusted data: every entry is checked, sizes are bounded before they
are read, nothing it names is imported or called, and every problem is a ModelFileError."""

from __future__ import annotations

import itertools
import json
import math
import os
import stat
from collections.abc import Mapping
from typing import Any, Callable, NamedTuple

from . import _core
from .conformal import Calibration
from .design_spec import DesignSpec
from .errors import FormulaError, ModelFileError, ModelFileNotFoundError, OptboostError
from .history import HISTORY_COLUMNS, metric_columns

FILE_FORMAT = "optboost-python-model"
FILE_VERSION = 1
# Far above any real model (a 3,000-tree depth-6 model is about 17 MB); bounds what a file can ask.
MAX_FILE_BYTES = 2 * 1024**3

# The history's columns and types come from the binding, which produces them.


class SavedModel(NamedTuple):
    """What a file holds, checked: ``Model``'s arguments."""

    core: Any
    spec: DesignSpec
    params: dict[str, str]
    history: dict[str, list]
    stop: tuple[str, str] | None
    interrupted: bool
    # The calibration of a conformalized model (optboost.conformal.Calibration), or None.
    conformal: Any = None


def file_envelope(
    spec: DesignSpec,
    params: Mapping[str, str],
    history: Mapping[str, list],
    stop: tuple[str, str] | None,
    interrupted: bool,
    conformal: Any = None,
) -> dict[str, Any]:
    """Every entry of the file but the core model."""
    return {
        "format": FILE_FORMAT,
        "version": FILE_VERSION,
        "optboost_version": _core.__version__,
        "formula": spec.formula,
        "params": dict(params),
        "design": spec.to_dict(),
        "history": {
            name: [_finite_or_none(v) for v in values] for name, values in history.items()
        },
        "stop": None if stop is None else list(stop),
        "interrupted": interrupted,
        **({} if conformal is None else {"conformal": conformal.to_dict()}),
    }


def entry_core(data: Mapping[str, Any]) -> Any:
    """The core model of a file's "model" entry (an object, or the core's JSON text)."""
    model_json = data["model"]
    if isinstance(model_json, str):
        return _core.CoreModel.from_json(model_json)
    if not isinstance(model_json, Mapping):
        raise ModelFileError("the file's 'model' entry is not an object")
    return _core.CoreModel.from_json(json.dumps(model_json, allow_nan=False))


def saved_model(
    data: Mapping[str, Any], core_of: Callable[[], Any], context: Mapping[str, Any] | None
) -> SavedModel:
    """The checks of every entry of a file, ``core_of()`` giving the core model (built
    from the "model" entry, or by ``read_model`` already)."""
    if not isinstance(data, Mapping) or data.get("format") != FILE_FORMAT:
        raise ModelFileError(f'not an optboost model file (no "format": "{FILE_FORMAT}" entry)')
    if data.get("version") != FILE_VERSION:
        raise ModelFileError(
            f"model file version {_number_text(data.get('version'))}; this optboost reads "
            f"version {FILE_VERSION}"
        )
    try:
        core = core_of()
        _check_level_counts(core, data["design"])
        spec = DesignSpec.from_dict(data["design"], context=context)
        _check_agreement(core, spec)
        params = _params(data.get("params"))
        return SavedModel(
            core,
            spec,
            params,
            _history(data.get("history"), metric_columns(params)),
            _stop(data.get("stop")),
            interrupted=data.get("interrupted", False) is True,
            conformal=(
                None if data.get("conformal") is None else Calibration.from_dict(data["conformal"])
            ),
        )
    except ModelFileError:
        raise
    except FormulaError as error:
        raise ModelFileError(f"model file: {error}") from None
    except OptboostError as error:
        raise ModelFileError(str(error)) from None
    except (Exception, RecursionError) as error:  # noqa: BLE001 - a file can hold anything
        raise ModelFileError(
            f"malformed optboost model file ({type(error).__name__}: {_short(error)})"
        ) from None


def read_model(
    path: str | os.PathLike, context: Mapping[str, Any] | None
) -> SavedModel:
    """The model file at ``path``, checked."""
    raw = read_file(path)
    # The fast path: the core parses the whole file once, builds and validates its model, and
    # hands back the other entries (formula, design, history: small) as JSON text.
    try:
        core, entries = _core.CoreModel.from_file_json(raw)
        data = {name: json.loads(text) for name, text in entries}
    except (OptboostError, ValueError, RecursionError):
        # Whatever the core refuses is read as before, so that the error says why in the same
        # words (and what Python's json reads and the core's does not, such as repeated keys
        # or NaN in the history, still loads, and is checked the same way).
        pass
    else:
        return saved_model(data, lambda: core, context)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise ModelFileError(
            f"{os.fspath(path)} is not an optboost model file: {_short(error)}"
        ) from None
    return saved_model(data, lambda: entry_core(data), context)


def read_file(path: str | os.PathLike) -> bytes:
    """The bytes of the model file at ``path``: a regular file of at most MAX_FILE_BYTES,
    checked on the opened file before anything is read (a device such as /dev/zero never
    ends; a FIFO would block until some writer came, so it is opened without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ModelFileNotFoundError(f"no model file at {os.fspath(path)!r}") from None
    except (OSError, TypeError, ValueError) as error:
        raise ModelFileError(f"cannot read model file {path!r}: {error}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ModelFileError(
                f"{os.fspath(path)} is not a regular file (a directory, device, FIFO or socket "
                "is not a model file)"
            )
        if status.st_size > MAX_FILE_BYTES:
            raise ModelFileError(
                f"{os.fspath(path)} is {status.st_size} bytes; model files are at most "
                f"{MAX_FILE_BYTES}"
            )
        with open(fd, "rb", closefd=False) as file:
            # At most one byte more than allowed: the file may have grown since fstat.
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ModelFileError(f"cannot read model file {os.fspath(path)!r}: {error}") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        raise ModelFileError(f"{os.fspath(path)} is larger than {MAX_FILE_BYTES} bytes")
    return raw


def _short(error: BaseException, limit: int = 300) -> str:
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."


# Far above any machine's cores (the core caps a count at the cores it has): bounds the
# integer a file's n_threads may hold before it reaches the core's unsigned count.
MAX_FILE_THREADS = 2**31 - 1


def _params(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ModelFileError("the file's 'params' must map names to text values")
    # The one count predict reads from the file (the fit's thread count).
    threads = value.get("n_threads", "0")
    if not (threads.isdecimal() and threads.isascii() and len(threads) <= 10) or (
        int(threads) > MAX_FILE_THREADS
    ):
        raise ModelFileError(
            f"the file's n_threads is {_short_text(threads)!r}; allowed a count from 0 to "
            f"{MAX_FILE_THREADS}"
        )
    return dict(value)


def _number_text(value: Any) -> str:
    """``repr`` of a value read from a file, with an integer of more than 16 digits written
    as the float it is closest to (1e+308, not 309 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**16:
        try:
            return repr(float(value))
        except OverflowError:
            return f"an integer of {len(str(abs(value)))} digits"
    return _short_text(repr(value))


def _short_text(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _history(value: Any, metric_names: list[str]) -> dict[str, list]:
    if not isinstance(value, Mapping):
        raise ModelFileError("the file's 'history' must be an object of columns")
    columns = {}
    for name in (*HISTORY_COLUMNS, *metric_names):
        column = value.get(name, [])
        if not isinstance(column, list) or not all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in column
        ):
            raise ModelFileError(f"history column {name!r} must be a list of numbers")
        columns[name] = column
    if len({len(c) for c in columns.values()}) > 1:
        raise ModelFileError("the history columns differ in length")
    restarted = value.get("restarted", [])
    if not isinstance(restarted, list) or not all(isinstance(v, bool) for v in restarted):
        raise ModelFileError("history column 'restarted' must be a list of booleans")
    columns["restarted"] = restarted
    return columns


def _stop(value: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise ModelFileError("the file's 'stop' must be null or two strings")
    return value[0], value[1]


def _check_agreement(core: Any, spec: DesignSpec) -> None:
    """The core model and the formula's design must describe the same model."""
    # The columns the core reads: a categorical column's target statistics (one feature per
    # class for a multiclass loss) read that one column.
    read = _columns_read(core)
    if [name for name, _ in read] != spec.feature_names:
        raise ModelFileError("the model's features and its formula's features differ")
    # The design codes a categorical column by its levels and the core maps those codes: the
    # two must agree on every feature's kind and level count, or predict would fail on data.
    for feature, (_, core_levels) in zip(spec.features, read):
        design_levels = feature.n_levels if feature.kind == "categorical" else None
        if design_levels != core_levels:
            raise ModelFileError(
                f"feature {feature.name!r} is {_kind_text(design_levels)} in the formula's "
                f"design but {_kind_text(core_levels)} in the model"
            )
    task = _core.loss_task(core.loss)
    encoding = spec.target_encoding
    if encoding.task != task:
        raise ModelFileError(f"the loss {core.loss!r} is for {task}, the target for {encoding.task}")
    if spec.targets:
        if core.n_outputs != len(spec.targets) or core.loss != "multi_squared":
            raise ModelFileError(
                f"the model has {core.n_outputs} outputs of the {core.loss!r} loss for the "
                f"{len(spec.targets)} targets {list(spec.targets)}"
            )
        return
    info = _core.loss_info(core.loss)
    # One output per class, per quantile level or per parameter of a distribution.
    per_row = info["levels"] or info["parameters"]
    if task == "multiclass":
        expected_outputs = encoding.n_classes
    else:
        expected_outputs = 1 if per_row is None else len(per_row)
    if core.n_outputs != expected_outputs:
        raise ModelFileError(
            f"the model has {core.n_outputs} outputs for a {task} target with "
            f"{encoding.n_classes} classes"
        )


def _check_level_counts(core: Any, design: Any) -> None:
    """The design's level lists against the core's mappers, by length only, before the
    design's checks read each level: a list far longer than the model maps (10^6 levels in
    15 MB) is refused at once. ``_check_agreement`` checks kinds and counts in full."""
    features = design.get("features") if isinstance(design, Mapping) else None
    if not isinstance(features, list):
        return  # the design's own checks say what is wrong
    for feature, (_, core_levels) in zip(features, _columns_read(core)):
        levels = feature.get("levels") if isinstance(feature, Mapping) else None
        if isinstance(levels, list) and len(levels) != core_levels:
            raise ModelFileError(
                f"feature {_short_text(repr(feature.get('name')))} is "
                f"{_kind_text(len(levels))} in the formula's design but "
                f"{_kind_text(core_levels)} in the model"
            )


def _columns_read(core: Any) -> list[tuple[str, int | None]]:
    """The columns the core reads, in order, each with the level count of its mapper or of its
    target statistics (the same for every feature read from that column), None for a numeric
    one."""
    by_column = itertools.groupby(
        zip(core.feature_sources, core.feature_levels), key=lambda pair: pair[0]
    )
    return [next(features) for _, features in by_column]


def _kind_text(levels: int | None) -> str:
    return "numeric" if levels is None else f"categorical with {levels} levels"


def _finite_or_none(value: Any) -> Any:
    # strict JSON has no NaN or infinity; they read back as nulls
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
