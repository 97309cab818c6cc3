"""Warnings attributed to the user's own line: the first caller outside optboost."""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

# (the call it was, the topics warned about in it): see ``warn_once_per_call``.
_last_call: tuple[tuple, set[str]] = ((), set())


def _caller() -> tuple[int, FrameType | None, FrameType | None]:
    """The stacklevel, for a ``warnings.warn`` in the function that called the caller of this,
    of the first frame outside optboost; that frame, and the optboost frame it called."""
    frame = sys._getframe(2)  # the function that warns: stacklevel 1
    inner = None
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        inner, frame = frame, frame.f_back
        level += 1
    return level, frame, inner


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn at the user's line (their ``boost``, ``predict`` or ``fit`` call)."""
    level, _, _ = _caller()
    warnings.warn(message, category, stacklevel=level + 1)


def warn_once_per_call(topic: str, message: str, category: type[Warning] = UserWarning) -> None:
    """``warn``, once per ``topic`` in one call of optboost from the user's line: the folds of
    ``optboost.cv`` read the same column many times, and say so once. Consecutive calls from
    one line (a loop) may count as one."""
    global _last_call
    level, user, entry = _caller()
    call = (id(entry), entry and entry.f_code, id(user), user and user.f_lasti)
    if _last_call[0] != call:
        _last_call = (call, set())
    if topic in _last_call[1]:
        return
    _last_call[1].add(topic)
    warnings.warn(message, category, stacklevel=level + 1)
