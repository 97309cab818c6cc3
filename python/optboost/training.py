"""The training loop shared by :func:`optboost.boost`, ``Model.update`` and the
scikit-learn estimators.

The core runs iterations in short batches with the GIL released
(``Booster.advance``). Between batches Python updates the progress bar, calls
the user's callback and sees Ctrl-C. An interruption (Ctrl-C, or
KeyboardInterrupt raised by the callback) ends training with a warning and
leaves the model with every iteration finished so far.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from .errors import ParameterTypeError, WorseThanConstantWarning
from .warn import warn

# Seconds of work per batch: short enough for a lively bar and a prompt Ctrl-C,
# long enough that the per-call cost (microseconds) does not matter.
BATCH_SECONDS = 0.1
# A fit shows its bar only once it has run this long (progress=None).
PROGRESS_DELAY_SECONDS = 2.0

Callback = Callable[[dict], Optional[bool]]
Progress = Union[bool, None]


@dataclass
class TrainingOutcome:
    iterations: int
    interrupted: bool


def last_record(booster: Any) -> dict[str, Any]:
    """The latest history record as a dict (one value per history column)."""
    columns = booster.history(max(booster.iteration - 1, 0))
    return {name: values[-1] if values else None for name, values in columns.items()}


def train(
    booster: Any,
    n_iter: int,
    *,
    progress: Progress = None,
    callback: Callback | None = None,
) -> TrainingOutcome:
    """Run at most ``n_iter`` more iterations of ``booster`` (fewer if it
    finishes). ``callback(record)`` is called after every iteration; returning
    False stops training there."""
    if progress is not None and not isinstance(progress, bool):
        raise ParameterTypeError(f"progress must be True, False or None, got {type(progress).__name__}")
    start = booster.iteration
    bar = _progress_bar(progress, total=start + n_iter, initial=start)
    # With a callback every iteration is its own batch, so it sees each record.
    max_steps = 1 if callback is not None else sys.maxsize
    interrupted = False
    try:
        while booster.finished is None and booster.iteration - start < n_iter:
            remaining = n_iter - (booster.iteration - start)
            done, finished = booster.advance(min(max_steps, remaining), BATCH_SECONDS)
            if bar is not None:
                record = last_record(booster)
                postfix = {"train": f"{record['train_loss']:.4g}"}
                if record["valid_loss"] is not None:
                    postfix["valid"] = f"{record['valid_loss']:.4g}"
                bar.set_postfix(postfix, refresh=False)
                bar.update(done)
            if callback is not None and callback(last_record(booster)) is False:
                break
            if finished is not None:
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    if interrupted:
        warn(
            f"training interrupted after {booster.iteration} iterations; the model holds "
            "the finished ones (model.update(n_iter) trains more)"
        )
    else:
        _warn_about_outcome(booster, start)
        _warn_if_worse_than_constant(booster)
    return TrainingOutcome(booster.iteration - start, interrupted)


def _iterations_text(iterations: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(i) for i in iterations[:limit])
    more = f" and {len(iterations) - limit} more" if len(iterations) > limit else ""
    return f"iteration{'s' if len(iterations) > 1 else ''} {shown}{more}"


def _warn_about_outcome(booster: Any, start: int) -> None:
    """Never a worse model silently: say when a momentum step was undone, when
    training diverged, and when the model keeps an earlier iteration than the
    last one (early stopping, which the user asked for, aside)."""
    history = booster.history(start)
    restarted = [i for i, r in zip(history["iteration"], history.get("restarted", [])) if r]
    # booster.model() copies the model (and its features' names: thousands on wide data): taken
    # only when there is something to say.
    if restarted:
        warn(
            f"{booster.model().method}: a momentum step raised the training or validation "
            f"loss at "
            f"{_iterations_text(restarted)}; the safeguard undid "
            f"{'them' if len(restarted) > 1 else 'it'} and restarted the momentum "
            "(safeguard='restart'; 'train' watches the training loss only, 'none' runs the "
            "papers' recursion unguarded)"
        )
    finished = booster.finished
    if finished is None or finished[0] == "early_stopping":
        return
    model = booster.model()
    kept = model.best_iteration
    if kept is None:
        return
    what = (
        "the initial constant (0 trees): no iteration improved on it"
        if kept == 0
        else f"iteration {kept} ({model.n_trees} trees)"
    )
    if finished[0] == "diverged":
        warn(f"{model.method}: training {finished[1].split(';')[0]}; the model keeps {what}")
    elif booster.iteration > start:
        valid = history["valid_loss"]
        monitored = "validation" if valid and valid[-1] is not None else "training"
        warn(
            f"{model.method}: the {monitored} loss after the last iteration "
            f"({booster.iteration}) is higher than after iteration {kept}; the model keeps "
            f"{what} (predict(..., iteration=k) predicts with any earlier iteration)"
        )


def _warn_if_worse_than_constant(booster: Any) -> None:
    """Never a model worse than the constant on its own validation data without a word.

    It warns rather than keeping the constant: early stopping already keeps the best iterate,
    the constant (iteration 0) included, so this is reached when the user asked for the last
    iterate (no early stopping: n_iter trees, as the papers run them) or monitors a metric
    other than the loss, and dropping trees they asked for would be a surprise of its own."""
    constant = booster.initial_valid_loss
    if constant is None or booster.iteration == 0:
        return
    history = booster.history(0)
    valid = dict(zip(history["iteration"], history["valid_loss"]))
    # booster.model() copies the model: taken only when some iterate is worse than the constant.
    if all(v is None or v <= constant for v in valid.values()):
        return
    model = booster.model()
    kept = booster.iteration if model.best_iteration is None else model.best_iteration
    loss = valid.get(kept)
    if kept == 0 or loss is None or loss <= constant:
        return
    warn(
        f"{model.method}: the kept model (iteration {kept}, {model.n_trees} trees) has a "
        f"validation loss of {loss:.6g}, higher than the initial constant's {constant:.6g} "
        "(0 trees): its trees fit noise in the training rows. Pass early_stopping_rounds "
        "(which keeps the best iterate, the constant included), fewer iterations or a "
        "smaller learning_rate, or predict(..., iteration=0) for the constant",
        WorseThanConstantWarning,
    )


def _progress_bar(progress: Progress, total: int, initial: int):
    if progress is False:
        return None
    if progress is None and not _is_terminal():
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit="it",
        desc="optboost",
        delay=PROGRESS_DELAY_SECONDS if progress is None else 0.0,
        leave=progress is True,
    )


def _is_terminal() -> bool:
    stream = sys.stderr
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()
