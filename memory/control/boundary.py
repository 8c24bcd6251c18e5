"""The memory's information boundary, checked at run time on everything that crosses it.

What may enter the memory is exactly: the goal and the proposed subgoal as ``str``, and
:class:`~memory.contract.frames.Frame` objects whose fields are plain ``numpy.ndarray`` (or ``None``), an
``int`` step and a ``str`` source. Not a subclass, not a simulator handle, not a dict that could
carry ground truth: a value of any other type is refused with a ``TypeError`` naming it. The
static side of the same boundary (``memory`` imports nothing from the simulator) is checked by
``tests/test_memory_isolation.py`` in a fresh interpreter.
"""

from __future__ import annotations

import numpy as np

from memory.contract.frames import Frame

__all__ = ["check_frame", "check_text"]

_ARRAY_FIELDS = ("rgb", "joint_state", "action")


def check_text(value, what: str) -> str:
    """``value`` if it is exactly a ``str``; else ``TypeError`` naming ``what`` and the type."""
    if type(value) is not str:
        raise TypeError(f"{what} crossing into the memory must be a str, got {type(value).__module__}.{type(value).__qualname__}")
    return value


def check_frame(frame, what: str = "frame") -> Frame:
    """``frame`` if it is exactly a :class:`Frame` of plain arrays; else ``TypeError``."""
    if type(frame) is not Frame:
        raise TypeError(f"{what} crossing into the memory must be a memory.contract.frames.Frame, got "
                        f"{type(frame).__module__}.{type(frame).__qualname__}")
    for name in _ARRAY_FIELDS:
        value = getattr(frame, name)
        if value is not None and type(value) is not np.ndarray:
            raise TypeError(f"{what}.{name} must be a plain numpy.ndarray or None, got "
                            f"{type(value).__module__}.{type(value).__qualname__}")
    if type(frame.step) is not int or type(frame.source) is not str:
        raise TypeError(f"{what}: step must be an int and source a str, got {type(frame.step).__name__}, "
                        f"{type(frame.source).__name__}")
    return frame
