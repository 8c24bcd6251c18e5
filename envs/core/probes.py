"""Questions a task asks about its own past, with true answers, for the memory assessment.

Tasks build them from their privileged truth (``task.probe_questions()``); the auditor in
``experiments/audit/assessment.py`` answers them from the memory's snapshot alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from subgoals.record_names import check_record_name

PROBE_KINDS = ("count", "binding", "route")


@dataclass(frozen=True)
class ProbeQuestion:
    """One question about the past, with its true answer.

    kind: ``count`` (answer: int; ``record`` names the progress record), ``binding`` (answer: the
    ``<y, x>`` of the true object; ``record`` is the binding text, ``candidates`` the points of all
    look-alike objects, the true one included), ``route`` (answer: tuple of segment words;
    ``record`` is the trajectory name).
    """

    kind: str
    text: str
    record: str
    answer: Any
    candidates: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        # a probe naming a record no tool writes would silently score nothing
        if self.kind not in PROBE_KINDS:
            raise ValueError(f"unknown probe kind {self.kind!r} (known: {', '.join(PROBE_KINDS)})")
        check_record_name(self.record)
