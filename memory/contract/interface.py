"""The memory interface: what the harness asks of any memory, ours or a researcher's.

A memory sits between the subgoal composer and the policy. The harness (``wrappers/memory_wrapper.py``,
``experiments/loop/episode.py``) calls exactly these five methods, so any object that has them runs
through the same loop, the same render schedule and the same audit as :class:`memory.layer.MemoryLayer`
(``--conditions memory:<module>:<Class>``; a minimal example: :mod:`memory.examples.last_seen`).

* ``reset(goal, demo_frames)``: a new episode: the goal text and the conditioning video's frames
  (:class:`memory.contract.frames.Frame`, ``source="video"``; empty for tasks without a video).
* ``observe(frame)``: every live frame the robot sees (``frame.rgb`` is ``None`` on steps that were
  not rendered; the schedule renders the front camera every 4 steps unless the memory declares
  ``render_stride`` / ``render_video`` / ``render_video_stride`` like a tool does).
* ``revise(proposed, frame)``: the composer's proposed subgoal and the current view; return a
  :class:`memory.layer.Revision` (the text to execute and the read traces that explain it).
* ``snapshot(step)``: what the memory held at ``step``, as :meth:`memory.store.memory_store.Snapshot.to_dict`
  (typed records of :mod:`memory.store.records`). The audit asks the episode's probe questions
  (a count, a binding, a route) of this snapshot, never of the memory's internals.
* ``diagnostics()``: a JSON-serialisable dict written into the episode's row.

The memory receives frames, the goal text and proposals only; it never sees the simulator.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from memory.contract.frames import Frame

__all__ = ["Memory", "MEMORY_METHODS", "check_memory", "load_memory_class"]

MEMORY_METHODS: tuple[str, ...] = ("reset", "observe", "revise", "snapshot", "diagnostics")
_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@runtime_checkable
class Memory(Protocol):
    """Structural type of a memory (see the module docstring)."""

    def reset(self, goal: str, demo_frames: Sequence[Frame]) -> None: ...

    def observe(self, frame: Frame) -> None: ...

    def revise(self, proposed: str, frame: Frame) -> Any: ...

    def snapshot(self, step: int) -> dict: ...

    def diagnostics(self) -> dict: ...


def check_memory(obj: object, where: str = "memory") -> object:
    """Return ``obj`` if it has every method of :class:`Memory`; else raise ``TypeError`` naming the missing ones."""
    missing = [m for m in MEMORY_METHODS if not callable(getattr(obj, m, None))]
    if missing:
        raise TypeError(f"{where} ({type(obj).__name__}) is not a memory: it lacks {', '.join(missing)} "
                        f"(the interface is {', '.join(MEMORY_METHODS)}; see memory/contract/interface.py)")
    return obj


def load_memory_class(path: str) -> type:
    """The class named by ``"package.module:Class"``; errors name the path and what is wrong with it."""
    if not isinstance(path, str) or not _PATH.fullmatch(path):
        raise ValueError(f"memory class {path!r} must be written 'package.module:Class'")
    module_name, class_name = path.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"memory class {path!r}: cannot import module {module_name!r} ({exc})") from exc
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ValueError(f"memory class {path!r}: module {module_name!r} has no class {class_name!r}")
    missing = [m for m in MEMORY_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise ValueError(f"memory class {path!r} lacks {', '.join(missing)} (see memory/contract/interface.py)")
    return cls
