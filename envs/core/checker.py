"""The sequential subgoal checker every task is defined by.

A task is an ordered list of :class:`SubgoalEntry`. Every control step the checker looks at the
current entry only: first its failure predicate, then its success predicate; success moves the
pointer on. The episode succeeds when every entry has succeeded without a failure; a failure is
latched. Entries flagged ``demonstration`` are executed by the scripted oracle inside ``reset``
and form the conditioning video.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Predicate = Callable[[], bool]


@dataclass
class SubgoalEntry:
    """One subgoal of a task.

    ``template`` is the grounded language with one ``<>`` per object in ``ground``; ``option``
    names the executor (solver) that achieves it, and ``target`` is the object that solver acts on.
    """

    name: str
    template: str
    success: Predicate
    option: str
    ground: tuple[Any, ...] = ()
    target: Any = None
    fail: Predicate | None = None
    demonstration: bool = False
    record: bool = True  # False for hidden reset/teleport phases of the video
    params: dict[str, Any] = field(default_factory=dict)


class SequentialChecker:
    def __init__(self, entries: list[SubgoalEntry]):
        self.entries = entries
        self.index = 0
        self.failed = False
        self.fail_reason: str | None = None
        self.completed_at: list[int] = []

    @property
    def current(self) -> SubgoalEntry | None:
        return self.entries[self.index] if self.index < len(self.entries) else None

    @property
    def done(self) -> bool:
        return self.index >= len(self.entries)

    @property
    def success(self) -> bool:
        return self.done and not self.failed

    def update(self, step: int, extra_fail: Predicate | None = None) -> None:
        """Evaluate the current entry once; ``extra_fail`` is a task-wide failure predicate."""
        if self.failed or self.done:
            return
        entry = self.current
        if entry.fail is not None and entry.fail():
            self.failed, self.fail_reason = True, f"failed during '{entry.name}'"
            return
        if extra_fail is not None and extra_fail():
            self.failed, self.fail_reason = True, f"task failure during '{entry.name}'"
            return
        if entry.success():
            self.index += 1
            self.completed_at.append(step)
