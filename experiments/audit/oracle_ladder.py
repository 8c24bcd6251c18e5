"""The oracle ladder: how much of the memory's remaining gap is state, access, or grounding?

The paper leaves this open (its appendix: "a matched oracle ladder — correct state, then oracle
access, then oracle grounding — would provide finer attribution"). Each rung replaces one more part
of the memory's decision with privileged truth, so the success difference between consecutive rungs
is what that part still costs:

* ``memory-true-state``: the memory decides *when* to read (its own structured access and gates
  fire, or not, exactly as in ``memory``), but a read answers with the true state: the env's current
  ground-truth subgoal, its objects placed at their *projected centres* (current geometry, not the
  privileged segmentation). A read where nothing depends on the past keeps the memory's own text.
* ``memory-oracle-access``: also read exactly when the current subgoal depends on the past (the
  task's ``history_slot()`` is open), and never otherwise, whatever the memory's access says.
* ``memory-oracle-grounding``: also ground the answer with the privileged segmentation (the oracle
  composer's latched ``<y, x>``), so a read is the oracle subgoal itself.

Why this lives in ``experiments/`` and wraps the memory from outside: the memory layer must never
read the simulator. The ladder is an auditing instrument that overrides the memory's output with
the env's truth; the real memory still runs underneath (its traces, assessment and timings are
reported as usual), and nothing in ``memory/`` can import this module (tested).

With the scripted policy a point selects the nearest candidate object, so rungs 2 and 3 differ
only when a projected centre is nearer to another object than the segmentation centroid; with a
learned policy (pi0.5) the grounding rung can matter more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.contract.frames import Frame
from memory.layer import Revision

__all__ = ["LADDER_RUNGS", "OracleLadder", "ladder_rung"]

# rung number -> condition suffix
LADDER_RUNGS = {1: "true-state", 2: "oracle-access", 3: "oracle-grounding"}


def ladder_rung(flags) -> int:
    """0 for no ladder; else the highest rung whose flag is on (each rung includes the ones below)."""
    if flags.uses_oracle_grounding:
        return 3
    if flags.uses_oracle_access:
        return 2
    return 1 if flags.uses_true_state else 0


@dataclass
class LadderCounts:
    """What the ladder did in one episode (reported under ``memory.ladder``)."""

    revisions: int = 0
    reads: int = 0  # decisions answered from the truth
    memory_fired: int = 0  # the memory's own access or gates fired on the proposal
    slot_open: int = 0  # the current subgoal depended on the past
    changed: int = 0  # the truth's answer differed from what the memory alone would have sent
    decisions: list[dict[str, Any]] = field(default_factory=list)


_NOT_A_READ = ("unparseable", "no-slot", "not-permitted")


def _is_read(trace) -> bool:
    """A trace of the memory's access deciding that the proposal depends on the past (read or abstain)."""
    return not trace.reason.startswith(_NOT_A_READ)


class OracleLadder:
    """Wraps a real :class:`memory.layer.MemoryLayer`; overrides its answers with the env's truth.

    Args:
        memory: the memory layer (built exactly as for ``memory``).
        task: the unwrapped RoboMME task (privileged: ``history_slot``, the current subgoal entry,
            ``grounded_subgoal``, object projections).
        rung: 1, 2 or 3 (see the module docstring).
    """

    def __init__(self, memory, task, rung: int) -> None:
        if rung not in LADDER_RUNGS:
            raise ValueError(f"oracle-ladder rung must be one of {sorted(LADDER_RUNGS)}, got {rung!r}")
        self.memory = memory
        self.task = task
        self.rung = rung
        self.counts = LadderCounts()

    # the rest of the memory interface is the wrapped layer's own, forwarded by name (no __getattr__:
    # what the harness may ask of a ladder is exactly this list)
    def observe(self, frame: Frame) -> None:
        self.memory.observe(frame)

    def snapshot(self, step: int) -> dict:
        return self.memory.snapshot(step)

    def time_s(self) -> float:
        return self.memory.time_s()

    def tools_for(self, goal: str):
        return self.memory.tools_for(goal)

    @property
    def tools(self):
        return self.memory.tools

    @property
    def config(self):
        return self.memory.config

    @property
    def traces(self):
        return self.memory.traces

    def reset(self, goal: str, demo_frames) -> None:
        self.counts = LadderCounts()
        self.memory.reset(goal, demo_frames)

    def _truth(self) -> str | None:
        """The ground-truth subgoal text, grounded as this rung allows."""
        if self.rung >= 3:
            return self.task.grounded_subgoal() or None
        entry = self.task.current_entry
        if entry is None:
            return None
        return self.task.ground_template(entry.template, *entry.ground)

    def revise(self, proposed: str, frame: Frame) -> Revision:
        before = len(self.memory.traces)
        rev = self.memory.revise(proposed, frame)
        c = self.counts
        c.revisions += 1
        fired = any(_is_read(t) for t in self.memory.traces[before:])
        slot = self.task.history_slot()
        c.memory_fired += fired
        c.slot_open += slot is not None
        read = slot is not None if self.rung >= 2 else fired
        if not read:
            # rung 1: the memory did not read, its text stands; rungs 2-3: no read, no change
            text = rev.text if self.rung == 1 else proposed
        elif slot is None:
            text = rev.text  # rung 1 only: the memory read where nothing depends on the past
        else:
            text = self._truth() or rev.text
            c.reads += 1
            c.changed += text != rev.text
            c.decisions.append({"step": frame.step, "proposed": proposed, "memory": rev.text, "truth": text,
                                "memory_fired": fired})
        return Revision(text=text, rewritten=text != proposed, trace=rev.trace, traces=rev.traces)

    def diagnostics(self) -> dict[str, Any]:
        d = dict(self.memory.diagnostics())
        c = self.counts
        d["ladder"] = {"rung": self.rung, "name": LADDER_RUNGS[self.rung], "revisions": c.revisions, "reads": c.reads,
                       "memory_fired": c.memory_fired, "slot_open": c.slot_open, "changed": c.changed,
                       "decisions": c.decisions[:50]}
        return d
