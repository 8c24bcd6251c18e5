"""The retrospective memory assessment: questions from the env's truth, answered from a snapshot alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from envs.core.probes import ProbeQuestion
from experiments.audit.assessment import Assessment
from memory.store.records import ProgressRecord
from memory.store.memory_store import MemoryStore


@dataclass
class _Memory:
    """The part of the memory interface the audit reads: ``snapshot(step)`` (memory/contract/interface.py)."""

    store: MemoryStore = field(default_factory=MemoryStore)

    def snapshot(self, step: int) -> dict:
        return self.store.snapshot(step).to_dict()


class _Task:
    """Stands in for a task's probe list (the questions are data; the truth side is not under test)."""

    def __init__(self, questions):
        self.questions = questions

    def probe_questions(self):
        return self.questions


def test_wrong_counts_are_split_into_too_low_and_too_high_and_missing_records_are_not_available():
    mem = _Memory()
    mem.store.add("progress/x", ProgressRecord(name="repetitions", count=2, ordinal=None, target=3), step=5, reason="test")
    a = Assessment()
    for truth in (2, 3, 1):
        a.probe(_Task([ProbeQuestion("count", "how many?", "repetitions", truth)]), mem, step=10)
    a.probe(_Task([ProbeQuestion("count", "how many?", "passes", 1)]), mem, step=10)  # no such record
    a.probe(_Task([ProbeQuestion("count", "how many?", "repetitions", 0)]), mem, step=4)  # before the record existed
    s = a.to_dict()["by_kind"]["count"]
    assert s == {"asked": 5, "right": 1, "wrong": 2, "not_available": 2, "too_low": 1, "too_high": 1}
