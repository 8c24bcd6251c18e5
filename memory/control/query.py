"""What structured access asks the store: one history-dependent slot of a proposed subgoal.

Kept in its own module so that tools (which may answer queries) and the access logic
(which builds them) share the type without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.language.spec import ReadKind

__all__ = ["Query"]


@dataclass(frozen=True)
class Query:
    """A request for the entity a slot refers to.

    Attributes:
        kind: the read kind; ``None`` for a plain identity read (only the agent-decided
            access ablation asks those).
        role: canonical role of the slot's head noun (``"cover"``, ``"cube"``, ``"target"``).
        binding: the binding text a record must carry (``"cover hiding the green cube"``),
            or ``None`` for identity reads.
        identity: the identity phrase the slot names (``"green cube"``), if any.
        colour: a colour the slot states (``"blue"`` in "..., which is blue"), used as a filter.
        ordinal: the slot's ordinal (``2`` in "the second highlighted cube"), used to choose among several.
        text: the noun phrase as proposed, for traces.
        np_index: which noun phrase of the subgoal this slot is.
    """

    kind: ReadKind | None
    role: str
    binding: str | None = None
    identity: str | None = None
    colour: str | None = None
    ordinal: int | None = None
    text: str = ""
    np_index: int = 0

    def describe(self) -> str:
        """Short human-readable form used in traces: the binding, or the identity for identity reads."""
        base = self.binding or self.identity or self.role
        extras = []
        if self.colour and self.colour not in base:
            extras.append(self.colour)
        if self.ordinal is not None:
            extras.append(f"#{self.ordinal}")
        return base + (f" [{', '.join(extras)}]" if extras else "")
