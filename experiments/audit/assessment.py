"""Memory assessment: questions from the env's truth, answered from the memory's snapshot alone.

MEMORA's retrospective probe, applied to robot memory. At every decision where the task's
current subgoal depends on the past (``task.history_slot()`` is not None) and once at the end,
the task is asked for probe questions built from its privileged truth (``task.probe_questions()``:
"how many repetitions are done?", "where is the container hiding the green cube?", "which route
was demonstrated?"); each is answered from the memory's ``snapshot(t)`` (memory/contract/interface.py) alone, with an explicit
"not available" when the snapshot holds no answer. The score is independent of control success:
a memory can know the right answer and the episode still fail, and vice versa.

This module lives outside ``memory/`` on purpose: it is the auditor, and the only place where
truth and memory meet.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envs.core.probes import ProbeQuestion
from memory.store.memory_store import Snapshot

NOT_AVAILABLE = "not available"


def answer_from_snapshot(q: ProbeQuestion, snap) -> Any:
    records = snap.records
    if q.kind == "count":
        hits = [r for r in records.values() if getattr(r, "kind", "") == "progress" and r.name == q.record and r.count is not None]
        return hits[0].count if hits else NOT_AVAILABLE
    if q.kind == "binding":
        hits = [r for r in records.values() if getattr(r, "kind", "") == "entity" and r.binding == q.record and r.position is not None
                and getattr(r.status, "value", r.status) in ("verified", "reacquired")]
        if not hits or not q.candidates:
            return NOT_AVAILABLE
        pos = np.array(hits[-1].position, dtype=float)
        return q.candidates[int(np.argmin([np.hypot(*(pos - np.array(c))) for c in q.candidates]))]
    if q.kind == "route":
        hits = [r for r in records.values() if getattr(r, "kind", "") == "trajectory" and r.name == q.record]
        return tuple(hits[0].segments) if hits else NOT_AVAILABLE
    raise ValueError(f"unknown probe kind {q.kind!r}")


@dataclass
class Assessment:
    scores: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: {"asked": 0, "right": 0, "wrong": 0, "not_available": 0}))
    log: list[dict] = field(default_factory=list)
    route_by_length: dict[int, dict[str, int]] = field(default_factory=dict)

    def probe(self, task, memory, step: int) -> None:
        if memory is None or not hasattr(task, "probe_questions"):
            return
        snap = Snapshot.from_dict(memory.snapshot(step))  # the memory interface's snapshot, ours or a researcher's
        for q in task.probe_questions():
            got = answer_from_snapshot(q, snap)
            s = self.scores[q.kind]
            s["asked"] += 1
            if got == NOT_AVAILABLE:
                s["not_available"] += 1
                verdict = "not_available"
            elif (tuple(got) if isinstance(got, (list, tuple)) else got) == (tuple(q.answer) if isinstance(q.answer, (list, tuple)) else q.answer):
                s["right"] += 1
                verdict = "right"
            else:
                s["wrong"] += 1
                verdict = "wrong"
                if q.kind == "count" and isinstance(got, (int, float)) and isinstance(q.answer, (int, float)):
                    # the paper's figure 4a splits wrong counts by direction
                    side = "too_low" if got < q.answer else "too_high"
                    s[side] = s.get(side, 0) + 1
            if q.kind == "route" and isinstance(q.answer, (list, tuple)):
                # route accuracy by route length (the paper's table 16)
                cell = self.route_by_length.setdefault(len(q.answer), {"asked": 0, "right": 0})
                cell["asked"] += 1
                cell["right"] += verdict == "right"
            if len(self.log) < 50:
                self.log.append({"step": step, "question": q.text, "truth": _jsonable(q.answer), "memory": _jsonable(got), "verdict": verdict})

    def to_dict(self) -> dict:
        return {"by_kind": {k: dict(v) for k, v in self.scores.items()}, "log": self.log,
                "route_by_length": {str(k): dict(v) for k, v in sorted(self.route_by_length.items())}}


def _jsonable(x):
    if isinstance(x, tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer, np.floating)):
        return x.item()
    return x
