"""The memory layer the environment wrappers call.

One object per run, reset per episode. Its whole contract with the outside is five
calls: ``reset`` (goal text and the conditioning video), ``observe`` (every low-level
frame), ``revise`` (a proposed subgoal in, the subgoal to execute out), ``snapshot``
(memory as it was at a step) and ``diagnostics``. Inside, it wires together the
specification (:mod:`memory.language.spec`), the store (:mod:`memory.store.memory_store`), the tools
(:mod:`memory.tools`) and structured access (:mod:`memory.control.access`).

With ``MemoryConfig(enabled=False)`` every proposal passes through untouched and no
tool runs, so the stack behaves exactly as it would without a memory layer.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.control.access import NOT_A_READ, ReadTrace, StructuredAccess, gate_abstention_trace, gate_trace
from subgoals.edits import Abstain
from memory.control.boundary import check_frame, check_text
from memory.events import events_for
from memory.contract.frames import Frame
from memory.store.records import EntityRecord
from memory.control.refine import refine_every_point
from memory.language.needs import Need, needs_of
from memory.language.state_kinds import State, state_kinds_of, unserved_of
from memory.language.spec import InstructionSpecifier, MemorySpec, ReadKind, Specifier
from memory.store.memory_store import EditOp, MemoryStore, StoreKind
from memory.tools.base import Tool
from subgoals.grammar import Point
from memory.tools.groups import check_tool_groups

__all__ = ["MemoryConfig", "MemoryLayer", "Revision"]


@dataclass(frozen=True)
class MemoryConfig:
    """Switches of the memory layer; each ablation is one field."""

    enabled: bool = True
    """Master switch. False: ``revise`` returns the proposal unchanged and no tool runs."""

    tool_groups: frozenset[str] | None = None
    """Tool groups to run (``Tool.group``); ``None`` runs every tool given to the layer."""

    disabled_reads: frozenset[ReadKind] = frozenset()
    """Read kinds removed from every episode's permissions (e.g. no demonstration references)."""

    use_video: bool = True
    """Feed the conditioning video to the tools. False: memory starts from the first live frame."""

    agent_decided_access: bool = False
    """Ablation: read at every subgoal and every noun phrase instead of only history-dependent slots."""

    read_uncertain: bool = False
    """Also answer from records whose position is uncertain (default: abstain)."""

    record_position_fallback: bool = True
    """When re-grounding fails (the object is not found where the record puts it), answer with the
    record's stored position, where the memory itself last placed the object, instead of abstaining.
    Abstaining hands the history slot back to the proposal, which cannot know the answer (a
    container the robot's failed grasps pushed a few centimetres off its record was then swapped for
    the blind proposal's container, and the executor turned from one to the other until the timeout);
    the stored point keeps the executor on the object the memory means, and the executor resolves a
    point to the object nearest it. The read's trace says it came from the stored position. False:
    abstain (an ablation of this fallback; nothing here reads the simulator)."""

    refine_every_verb: bool = False
    """Ablation: after the reads, re-ground the point of every noun phrase of every proposal in the
    current view (``memory/control/refine.py``), not only the points of history-dependent slots."""

    specifier: Specifier | None = field(default=None, compare=False)
    """``goal -> MemorySpec``; ``None`` uses the deterministic instruction parser."""

    specifier_votes: int = 0
    """How many readings the specifier takes (0: it takes no votes, the deterministic parser)."""

    def __post_init__(self) -> None:
        if self.tool_groups is not None:
            object.__setattr__(self, "tool_groups", check_tool_groups(self.tool_groups, where="MemoryConfig.tool_groups"))
        object.__setattr__(self, "disabled_reads", frozenset(ReadKind(r) for r in self.disabled_reads))

    def to_dict(self) -> dict:
        return {
            "enabled": self.enabled,
            "tool_groups": None if self.tool_groups is None else sorted(self.tool_groups),
            "disabled_reads": sorted(r.value for r in self.disabled_reads),
            "use_video": self.use_video,
            "agent_decided_access": self.agent_decided_access,
            "read_uncertain": self.read_uncertain,
            "record_position_fallback": self.record_position_fallback,
            "refine_every_verb": self.refine_every_verb,
            "specifier": "instruction" if self.specifier is None else type(self.specifier).__name__,
            "specifier_votes": self.specifier_votes,
        }


@dataclass(frozen=True)
class Revision:
    """What ``revise`` returns: the text to execute, whether it differs from the proposal, the last
    trace, and every trace this revision left (reads, abstentions, gate rewrites)."""

    text: str
    rewritten: bool
    trace: ReadTrace | None
    traces: tuple[ReadTrace, ...] = ()

    @property
    def read(self) -> bool:
        """Memory answered part of this proposal (a read or a gate rewrite; a confirming read counts)."""
        return any(not t.abstained for t in self.traces)

    @property
    def abstained(self) -> bool:
        """Memory tried to answer a history-dependent slot and left it alone (no record, no grounding...)."""
        return not self.read and any(t.abstained and t.reason_code not in NOT_A_READ for t in self.traces)


class MemoryLayer:
    """Episode-scoped memory between a subgoal proposer and the policy.

    Args:
        config: the switches.
        tools: the tools to run; those outside ``config.tool_groups`` are ignored.

    Raises:
        TypeError: if a tool is not a :class:`~memory.tools.base.Tool`.
        ValueError: if two tools share a name or a stride is not a positive integer.
    """

    def __init__(self, config: MemoryConfig, tools: Sequence[Tool]) -> None:
        if not isinstance(config, MemoryConfig):
            raise TypeError(f"config must be a MemoryConfig, got {config!r}")
        names: set[str] = set()
        for tool in tools:
            if not isinstance(tool, Tool):
                raise TypeError(f"not a memory Tool: {tool!r}")
            if tool.name in names:
                raise ValueError(f"two tools are named {tool.name!r}")
            if isinstance(tool.stride, bool) or not isinstance(tool.stride, int) or tool.stride < 1:
                raise ValueError(f"tool {tool.name!r} has stride {tool.stride!r}; it must be an int >= 1")
            names.add(tool.name)
        self.config = config
        self.tools: tuple[Tool, ...] = tuple(
            t for t in tools if config.tool_groups is None or t.group in config.tool_groups
        )
        # re-grounding asks the tools that own a record's binding before the generic colour matcher:
        # an owner knows what its object looks like (one cube of a touching pair, a disc partly hidden)
        self._reground_order: tuple[Tool, ...] = tuple(sorted(self.tools, key=lambda t: t.reground_priority))
        self._specifier: Specifier = config.specifier or InstructionSpecifier()
        self.store = MemoryStore()
        self._events = events_for(self.store)  # the shared event detectors (memory.events)
        self._events_s = 0.0  # seconds in them, part of observe_s / reset_s
        self.spec: MemorySpec | None = None
        self._specs: dict[str, MemorySpec] = {}  # goal text -> specification, for tools_for and reset
        self.needs: frozenset[Need] = frozenset()
        self.states: tuple[State, ...] = ()  # the kinds of state the spec asks to keep (memory.language.state_kinds)
        self.unserved: tuple[str, ...] = ()  # what it asks for that no kind keeps, one reason each
        # the tools this episode's specification enables (Tool.enabled_by: declared needs met)
        self._enabled: tuple[Tool, ...] = ()
        self._access: StructuredAccess | None = None
        self._traces: list[ReadTrace] = []
        self._fed: dict[str, int] = {}
        self._frames: Counter = Counter()
        self._revisions = 0
        self._last_step: int | None = None
        # Wall-clock seconds spent inside the layer, accumulated since construction (the harness
        # builds one layer per episode; the recent-N baseline calls ``reset`` at every decision, so
        # these are deliberately not cleared by ``reset``). Read them with :meth:`time_s`.
        self._time: dict[str, float] = {"reset_s": 0.0, "observe_s": 0.0, "revise_s": 0.0}
        # CPU seconds of the calling thread inside the same entry points: what the memory itself
        # costs, apart from the renderer's threads and other processes sharing the machine.
        self._cpu_s = 0.0
        self._tool_time: dict[str, dict[str, float]] = {
            t.name: {"reset_s": 0.0, "observe_s": 0.0, "gate_s": 0.0, "reground_s": 0.0} for t in self.tools
        }

    # ----------------------------------------------------------------- timing

    def time_s(self) -> float:
        """Seconds spent in ``reset`` + ``observe`` + ``revise`` since this layer was built."""
        return sum(self._time.values())

    def timings(self) -> dict[str, float]:
        """Seconds per entry point (``reset_s``, ``observe_s``, ``revise_s``) since this layer was built."""
        return dict(self._time)

    # ----------------------------------------------------------------- episode

    def reset(self, goal: str, demo_frames: Sequence[Frame]) -> None:
        """Start an episode: clear everything, specify from ``goal``, then watch the conditioning video."""
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            self._reset(goal, demo_frames)
        finally:
            self._time["reset_s"] += time.perf_counter() - t0
            self._cpu_s += time.thread_time() - c0

    def _reset(self, goal: str, demo_frames: Sequence[Frame]) -> None:
        check_text(goal, "goal")
        for frame in demo_frames:
            check_frame(frame, "demo frame")
        self.store.reset()
        self._events.reset()  # the tools attach this episode's detectors in their reset
        self._traces = []
        self._fed = {t.name: 0 for t in self.tools}
        self._frames = Counter()
        self._revisions = 0
        self._last_step = None
        if self.config.enabled:
            spec = self._specify(goal)
        else:  # pass-through: do not even consult the specifier (it may be an LLM)
            spec = MemorySpec(goal=goal)
        self.spec = spec
        self._access = StructuredAccess(
            spec,
            agent_decided=self.config.agent_decided_access,
            read_uncertain=self.config.read_uncertain,
            record_position_fallback=self.config.record_position_fallback,
        )
        self.needs = needs_of(spec)
        self.states = state_kinds_of(spec)
        self.unserved = unserved_of(spec)
        self._enabled = ()
        if not self.config.enabled:
            return
        for tool in self.tools:
            t1 = time.perf_counter()
            tool.active = tool.enabled_by(spec)  # from the tool's declared needs and the spec alone
            tool.reset(spec, self.store)  # every tool forgets its last episode, enabled or not
            self._tool_time[tool.name]["reset_s"] += time.perf_counter() - t1
        self._enabled = tuple(t for t in self.tools if t.active)
        for frame in demo_frames:
            if frame.source != "video":
                raise ValueError(f"demo frame at step {frame.step} has source {frame.source!r}; expected 'video'")
            if self.config.use_video:
                self._feed(frame)

    def _specify(self, goal: str) -> MemorySpec:
        """The goal's specification, asked of the specifier once per goal text (it may be an LLM)."""
        if goal not in self._specs:
            self._specs[goal] = self._specifier(goal).without_reads(self.config.disabled_reads)
        return self._specs[goal]

    def tools_for(self, goal: str) -> tuple[Tool, ...]:
        """The tools an episode with goal ``goal`` switches on (their declared needs met by its
        specification), known before the episode starts: the render schedule renders the
        conditioning video only as finely as these tools read it. None when the layer is disabled."""
        check_text(goal, "goal")
        if not self.config.enabled:
            return ()
        spec = self._specify(goal)
        return tuple(t for t in self.tools if t.enabled_by(spec))

    def observe(self, frame: Frame) -> None:
        """Feed one low-level frame (``frame.rgb`` may be ``None`` on unrendered steps)."""
        self._require_reset()
        check_frame(frame)
        if not self.config.enabled or (frame.source == "video" and not self.config.use_video):
            return
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            self._feed(frame)
        finally:
            self._time["observe_s"] += time.perf_counter() - t0
            self._cpu_s += time.thread_time() - c0

    def _feed(self, frame: Frame) -> None:
        if self._last_step is not None and frame.step < self._last_step:
            raise ValueError(
                f"frame step {frame.step} is earlier than the previous frame's step {self._last_step}; "
                "steps must keep increasing through the video and the live phase"
            )
        self._last_step = frame.step
        self._frames[frame.source] += 1
        t0 = time.perf_counter()
        self._events.update(frame)  # each shared event detector sees each frame once, before the tools
        self._events_s += time.perf_counter() - t0
        for tool in self._enabled:
            n = self._fed[tool.name]
            self._fed[tool.name] = n + 1
            if n % tool.stride == 0:
                t0 = time.perf_counter()
                tool.observe(frame, self.store)
                self._tool_time[tool.name]["observe_s"] += time.perf_counter() - t0

    # ----------------------------------------------------------------- decisions

    def _reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        for tool in self._reground_order:
            if tool not in self._enabled:
                continue
            t0 = time.perf_counter()
            point = tool.reground(entity, frame)
            self._tool_time[tool.name]["reground_s"] += time.perf_counter() - t0
            if point is not None:
                return point
        return None

    def revise(self, proposed: str, frame: Frame) -> Revision:
        """Return the subgoal to execute for ``proposed`` at ``frame``; abstaining returns it unchanged."""
        self._require_reset()
        check_text(proposed, "proposed subgoal")
        check_frame(frame)
        if not self.config.enabled:
            return Revision(proposed, False, None)
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return self._revise(proposed, frame)
        finally:
            self._time["revise_s"] += time.perf_counter() - t0
            self._cpu_s += time.thread_time() - c0

    def _revise(self, proposed: str, frame: Frame) -> Revision:
        self._revisions += 1
        assert self._access is not None and self.spec is not None
        text, traces = self._access.revise(proposed, frame, self.store, self._reground, self._enabled)
        for tool in self._enabled:
            kind = tool.gate_kind
            if kind is not None and not self.config.agent_decided_access and not self.spec.allows(kind):
                continue
            t1 = time.perf_counter()
            edit = tool.gate_edit(text, self.store)
            self._tool_time[tool.name]["gate_s"] += time.perf_counter() - t1
            if isinstance(edit, Abstain):  # the decision is the gate's, and it could not make it
                traces.append(gate_abstention_trace(frame.step, tool.name, proposed, text, edit.reason, kind))
                continue
            gated = None if edit is None else edit.apply(text)
            if gated is not None and gated != text:
                traces.append(gate_trace(frame.step, tool.name, proposed, text, gated, kind))
                text = gated
        if self.config.refine_every_verb:
            text, refined = refine_every_point(text, frame)
            traces.extend(refined)
        self._traces.extend(traces)
        return Revision(text=text, rewritten=text != proposed, trace=traces[-1] if traces else None, traces=tuple(traces))

    # ----------------------------------------------------------------- inspection

    def snapshot(self, step: int) -> dict:
        """Memory as it was at ``step`` (records replayed from the edit log) and the traces up to then."""
        self._require_reset()
        snap = self.store.snapshot(step).to_dict()
        snap["traces"] = [t.to_dict() for t in self._traces if t.step <= step]
        return snap

    @property
    def traces(self) -> list[ReadTrace]:
        return list(self._traces)

    def diagnostics(self) -> dict[str, Any]:
        """Counts for the results row: reads, abstentions, rewrites, reasons, records, edits (JSON-serialisable)."""
        reads = [t for t in self._traces if not t.abstained]
        abstentions = [t for t in self._traces if t.abstained]
        by_kind: dict[str, dict[str, int]] = {}
        for t in self._traces:
            slot = by_kind.setdefault(t.kind or "none", {"reads": 0, "abstentions": 0})
            slot["abstentions" if t.abstained else "reads"] += 1
        edits = Counter(e.op.value for e in self.store.edits())
        return {
            "enabled": self.config.enabled,
            "config": self.config.to_dict(),
            "revisions": self._revisions,
            "reads": len(reads),
            "abstentions": len(abstentions),
            "rewrites": sum(1 for t in reads if t.changed),
            "by_kind": by_kind,
            "abstain_reasons": dict(Counter(t.reason_code for t in abstentions)),
            "records": {k.value: sum(1 for _ in self.store.items(k)) for k in StoreKind},
            "edits": {op.value: edits.get(op.value, 0) for op in EditOp},
            "frames": dict(self._frames),
            "spec": None if self.spec is None else self.spec.to_dict(),
            "state_kinds": [st.to_dict() for st in self.states],
            "unserved": list(self.unserved),
            "needs": sorted(n.value for n in self.needs),
            "enabled_tools": [t.name for t in self._enabled],
            "tools": {t.name: t.diagnostics() for t in self.tools},
            "time_s": {k: round(v, 6) for k, v in self._time.items()},
            "events_s": round(self._events_s, 6),
            "cpu_s": round(self._cpu_s, 6),
            "tool_time_s": {n: {k: round(v, 6) for k, v in d.items()} for n, d in self._tool_time.items()},
        }

    def _require_reset(self) -> None:
        if self.spec is None:
            raise RuntimeError("MemoryLayer.reset(goal, demo_frames) must be called before use")
