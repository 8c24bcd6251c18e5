"""The count gate: a verified count against the goal's target decides whether the next subgoal
continues the repetition or stops it.

The counting tools (the repetition counter, the deposit counter, the flash counter's round trips,
the reference-cube picks of demo_handled) each carried the same comparison by hand: while the count
is below the target, a proposal to stop (press the button, put the object down) is early and the
next repetition is due, with the ordinal of the next one; once the count is reached, a proposal to
go on (another pick, another swing) is one too many and the stop is due. Only verified events move
a count (each tool's evidence gate decides what counts); the proposer's own ordinal word is never
read. How a tool words the rewrite stays with the tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["CountGate", "CountGates", "Verdict"]

Verdict = Literal["continue", "stop"]

ORDINAL_CAP = 10
"""The largest ordinal the subgoal language spells ("for the tenth time")."""


@dataclass
class CountGate:
    """One count and its target.

    Attributes:
        target: how many the goal asks for.
        count: how many are verified so far.
    """

    target: int
    count: int = 0

    def add(self, n: int = 1) -> int:
        """Count ``n`` more verified events (a negative ``n`` takes some back); the new count."""
        self.count += n
        return self.count

    @property
    def owed(self) -> bool:
        """Fewer verified than the target: the repetition goes on."""
        return self.count < self.target

    @property
    def reached(self) -> bool:
        return not self.owed

    def next_ordinal(self) -> int:
        """The ordinal of the next repetition (capped at what the language spells)."""
        return min(self.count + 1, ORDINAL_CAP)

    def verdict(self, *, stops: bool, continues: bool) -> Verdict | None:
        """What the count says about a proposal that ``stops`` the repetition or ``continues`` it:
        ``"continue"`` (a stop while owed: the next repetition is due), ``"stop"`` (another
        repetition although the target is reached: the stop is due), ``None`` (it stands)."""
        if stops and self.owed:
            return "continue"
        if continues and self.reached:
            return "stop"
        return None


class CountGates:
    """Counts per kind (the cubes of each colour the goal wants in the bin), in goal order.

    ``counts`` is one dict over every kind (0 for the kinds the goal does not name), kept in place
    so that readers holding it see every change.
    """

    def __init__(self, targets: Mapping[str, int], kinds: Iterable[str] = ()) -> None:
        self.targets: dict[str, int] = dict(targets)  # goal order
        self.counts: dict[str, int] = dict.fromkeys(kinds, 0)
        for k in self.targets:
            self.counts.setdefault(k, 0)

    def gate(self, kind: str) -> CountGate:
        """The count gate of one kind (a snapshot: add through :meth:`add`)."""
        return CountGate(self.targets.get(kind, 0), self.counts.get(kind, 0))

    def add(self, kind: str, n: int = 1) -> int:
        self.counts[kind] = self.counts.get(kind, 0) + n
        return self.counts[kind]

    def owed(self) -> list[str]:
        """The kinds still owed, in goal order."""
        return [k for k in self.targets if self.gate(k).owed]

    @property
    def reached(self) -> bool:
        return not self.owed()

    def next_ordinal(self, kind: str) -> int:
        return self.gate(kind).next_ordinal()
