"""The interface every memory tool implements.

A tool turns frames into evidence and evidence into store edits. The memory layer
owns the loop: it calls ``reset`` once per episode with the specification (so a tool
maintains only what the goal asked for), ``observe`` on every ``stride``-th frame it
feeds the tool, and the optional hooks when a proposal is revised:

* ``answer(query, store)``: answer a structured-access query the store cannot;
* ``reground(entity, frame)``: find a recalled entity in the current view;
* ``gate(proposed, store)``: rewrite a symbolic slot (a count, an ordinal, a route word)
  of the proposal from progress or trajectory state. A tool that gates declares
  ``gate_kind`` so that the goal's permissions and the ablation switches apply to it. The
  gate returns a typed edit (:mod:`subgoals.edits`: a slot edit, or a sentence built with
  :mod:`subgoals.phrases` when the action changes) that the layer applies; the memory never
  writes a subgoal sentence itself.

Why gates on evidence: a tool writes only what its evidence gate accepts
(:meth:`Tool.commit`); a rejected observation changes nothing. That is the difference
between a memory of verified facts and a log of detector output.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from memory.contract.frames import Frame
from memory.language.needs import Need, needs_of
from memory.control.query import Query
from memory.store.records import EntityRecord, Record
from memory.contract.render_need import DEFAULT_RENDER, RenderNeed
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import Edit, MemoryStore
from subgoals.edits import Abstain, SubgoalEdit
from subgoals.grammar import Point
from memory.tools.groups import ToolGroup

__all__ = ["REGISTERED_TOOLS", "Tool", "register_tool"]


class Tool(ABC):
    """Base class for memory tools.

    Attributes:
        name: unique name, used in traces and diagnostics.
        group: the tool group configs enable or disable (``"identity"``, ``"cover"``,
            ``"progress"``, ``"route"``, ``"demonstration"``, ...).
        stride: observe every ``stride``-th frame fed to the tool (1 = every step).
        gate_kind: the read kind this tool's ``gate`` performs, or ``None`` if it has no gate
            or the gate should always be allowed.
        serves: the needs (:class:`memory.language.needs.Need`) this tool monitors for; it is enabled in an
            episode exactly when the specification has one of them (:meth:`enabled_by`). A tool
            never decides from the goal's wording whether it runs.
        active: whether the last ``reset`` enabled it (set from :meth:`enabled_by`).
        render: the frames it reads (:class:`memory.contract.render_need.RenderNeed`); the render schedule
            renders exactly the union of what the enabled tools declare.
        reground_priority: order in which the layer asks tools to find a recalled entity in the
            current view, lowest first: owners of a binding (0) know their object best, generic
            matchers (1) come after them.
    """

    name: ClassVar[str] = "tool"
    group: ClassVar[str] = ToolGroup.GENERIC
    gate_kind: ClassVar[ReadKind | None] = None
    serves: ClassVar[frozenset[Need]] = frozenset()
    stride: int = 1
    active: bool = False
    render: RenderNeed = DEFAULT_RENDER
    reground_priority: ClassVar[int] = 0

    def enabled_by(self, spec: MemorySpec) -> bool:
        """Whether an episode with ``spec`` needs this tool: its declared needs meet the spec's."""
        return bool(self.serves & needs_of(spec))

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:  # noqa: B027 - optional hook
        """Start a new episode: forget per-episode state and remember what ``spec`` asks to monitor."""

    def use_perception(self, perception) -> None:  # noqa: B027 - optional hook
        """Take the detector and identity back-ends (:class:`memory.perception.Perception`) to use;
        tools that read only colour predicates of their own ignore it (the default)."""

    @abstractmethod
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        """Extract evidence from ``frame`` and commit what the evidence gate accepts."""

    def answer(self, query: Query, store: MemoryStore) -> EntityRecord | None:
        """Answer ``query`` when no store record does; ``None`` (the default) means no answer."""
        return None

    def reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        """Locate ``entity`` in ``frame``; ``None`` (the default) means this tool cannot."""
        return None

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        """Return the edit to make to ``proposed`` (:mod:`subgoals.edits`), or ``None`` to leave it
        alone (the default). The layer applies it: ``edit.apply(proposed)``."""
        return None

    def gate_edit(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        """:meth:`gate`'s edit of ``proposed``, checked: the layer calls this (an
        :class:`~subgoals.edits.Abstain` becomes an abstention in the audit); a gate that returns
        anything but an edit is a TypeError."""
        edit = self.gate(proposed, store)
        if edit is not None and not isinstance(edit, SubgoalEdit):
            raise TypeError(f"{self.name}.gate returned {edit!r}; a gate returns a subgoals.edits.SubgoalEdit or None")
        return edit

    def gated(self, proposed: str, store: MemoryStore) -> str | None:
        """The subgoal :meth:`gate` makes of ``proposed`` (its edit applied), or ``None`` if it leaves
        it alone (or abstains)."""
        edit = self.gate_edit(proposed, store)
        if edit is None or isinstance(edit, Abstain):
            return None
        return edit.apply(proposed)

    def latched(self, key: tuple, decide: Callable[[], SubgoalEdit | None]) -> tuple[SubgoalEdit | None, bool]:
        """``decide()`` once per ``key`` (the proposal and the tool state its answer depends on), then
        the same answer while the key holds, so the executed subgoal does not flicker while the arm
        moves. Returns ``(answer, fresh)``; the tool resets ``self._latched = None`` per episode."""
        held = getattr(self, "_latched", None)
        if held is not None and held[0] == key:
            return held[1], False
        out = decide()
        self._latched = (key, out)
        return out, True

    def thresholds(self) -> tuple[Any, ...]:
        """The frozen dataclasses of numbers this tool decides with: its own thresholds and the configs
        of the event detectors it attaches (empty by default). Every tool states them here, by name,
        so a run records them (:func:`memory.tools.registry.tool_thresholds`); nothing is found by
        inspecting attributes."""
        return ()

    def diagnostics(self) -> dict:
        """JSON-serialisable counters for logs (empty by default)."""
        return {}

    @staticmethod
    def commit(
        store: MemoryStore,
        key: str,
        record: Record,
        *,
        step: int,
        reason: str,
        accepted: bool,
        log_noop: bool = False,
    ) -> Edit | None:
        """Write ``record`` under ``key`` only if the evidence gate ``accepted`` it.

        Returns the edit made (ADD, UPDATE, or NOOP when ``log_noop``), or ``None`` when the
        evidence was rejected or changed nothing.
        """
        if not accepted:
            return None
        return store.put(key, record, step=step, reason=reason, log_noop=log_noop)


REGISTERED_TOOLS: list[tuple[int, type[Tool], dict]] = []
"""``(order, class, constructor kwargs)`` of every registered tool; see :func:`register_tool`."""


def register_tool(order: int, **kwargs) -> Callable[[type[Tool]], type[Tool]]:
    """Class decorator: add the tool to the default set, built as ``cls(**kwargs)``.

    ``order`` is the tool's place in the layer's loop (frames are fed, gates asked, in ascending
    order); a class registered twice with different ``kwargs`` gives two tools (a live and a video
    variant). :func:`memory.tools.registry.default_tools` builds the set.
    """

    def decorate(cls: type[Tool]) -> type[Tool]:
        if not (isinstance(cls, type) and issubclass(cls, Tool)):
            raise TypeError(f"register_tool decorates Tool subclasses, got {cls!r}")
        if any(o == order for o, _, _ in REGISTERED_TOOLS):
            raise ValueError(f"two tools registered at order {order}")
        REGISTERED_TOOLS.append((order, cls, dict(kwargs)))
        return cls

    return decorate
