"""Experimental conditions: what a name such as ``memory-no-route`` switches on and off.

A condition fixes three things for an episode: which composer proposes subgoals, whether the memory
layer (and which parts of it) sits between composer and policy, and whether a recent-frame window
replaces it. The name and the switches are two spellings of the same thing, and each is derived
from the other:

>>> from experiments.loop.conditions import condition_from_name, name_of
>>> c = condition_from_name("memory-no-route")
>>> c.memory, c.flags.no_route, c.composer
(True, True, 'history-blind')
>>> name_of(c)
'memory-no-route'

Names:

- ``oracle``: the environment's ground-truth subgoal, no memory (the ceiling).
- ``no-memory``: the deployable composer alone (history-blind by default), no memory.
- ``memory``: the deployable composer followed by the full memory layer.
- ``recent<N>`` (``recent4``, ``recent16``, ``recent32``): no typed memory; the composer's state is
  built from the last N frames only.
- ``memory-<ablation>``: the memory layer with one part removed or replaced, one per field of
  :class:`MemoryFlags` (``memory-no-route``, ``memory-agent-access``, ...). Several ablations at
  once are joined with ``+`` in field order, e.g. ``memory-no-route+no-count``.

The oracle ladder (``memory-true-state``, ``memory-oracle-access``, ``memory-oracle-grounding``)
replaces, rung by rung, what memory believes, when it reads, and how it grounds with privileged
truth. Each rung includes the ones below it; :attr:`MemoryFlags.uses_true_state` and friends spell
that out so the name stays one suffix per flag. The override lives outside the memory, in
``experiments/audit/oracle_ladder.py``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, fields
from typing import Literal

ComposerKind = Literal["oracle", "history-blind", "prior"]


@dataclass(frozen=True)
class MemoryFlags:
    """One switch per ablation of the memory layer; all ``False`` is the full method."""

    no_route: bool = False
    """Remove the ordered route/trajectory state (PatternLock, RouteStick)."""
    no_count: bool = False
    """Remove progress counts (repetitions, flashes, placed items)."""
    no_demo_ref: bool = False
    """Remove references recorded from the demonstration (which object was handled, in which order)."""
    no_live_binding: bool = False
    """Remove the live binding of what hides under which cover, tracked during execution."""
    no_demo_binding: bool = False
    """Remove the cover-to-object bindings observed during the demonstration video."""
    no_demo_relation_update: bool = False
    """Keep demonstration bindings but stop updating them when covers swap."""
    agent_access: bool = False
    """Replace structured access with an agent-decided read at every proposed subgoal."""
    no_identity: bool = False
    """Remove identity tools (feature anchor, optical-flow continuity); colour checks stay."""
    single_vote: bool = False
    """Build the memory specification from one vote instead of several."""
    refine_every_verb: bool = False
    """Let memory revise every subgoal verb, not only history-dependent slots."""
    no_mark_reader: bool = False
    """Remove the highlight/mark reader (PickHighlight)."""
    no_manner: bool = False
    """Do not record the demonstrated manner of manipulation (MoveCube)."""
    no_peg_end_side: bool = False
    """Do not record which peg end and insertion side were demonstrated (InsertPeg)."""
    no_timed_count: bool = False
    """Remove the event-timed count (StopCube)."""
    true_state: bool = False
    """Oracle ladder, rung 1: memory holds the privileged true state instead of its estimate."""
    oracle_access: bool = False
    """Oracle ladder, rung 2: also read exactly when the oracle subgoal needs history."""
    oracle_grounding: bool = False
    """Oracle ladder, rung 3: also ground recalled entities with the privileged segmentation."""

    @property
    def active(self) -> tuple[str, ...]:
        """Suffixes of the switches that are on, in field order (``("no-route", ...)``)."""
        return tuple(_suffix(f.name) for f in fields(self) if getattr(self, f.name))

    @property
    def uses_true_state(self) -> bool:
        """True for every rung of the oracle ladder."""
        return self.true_state or self.oracle_access or self.oracle_grounding

    @property
    def uses_oracle_access(self) -> bool:
        """True for the oracle-access rung and the one above it."""
        return self.oracle_access or self.oracle_grounding

    @property
    def uses_oracle_grounding(self) -> bool:
        return self.oracle_grounding

    @classmethod
    def from_suffixes(cls, suffixes: tuple[str, ...] | list[str]) -> MemoryFlags:
        """Flags with exactly the named switches on; raises naming an unknown suffix."""
        by_suffix = {_suffix(f.name): f.name for f in fields(cls)}
        kwargs = {}
        for s in suffixes:
            if s not in by_suffix:
                raise ValueError(f"unknown ablation {s!r}{_hint(s, list(by_suffix))}")
            kwargs[by_suffix[s]] = True
        return cls(**kwargs)


def _suffix(field_name: str) -> str:
    return field_name.replace("_", "-")


ABLATIONS: tuple[str, ...] = tuple(_suffix(f.name) for f in fields(MemoryFlags))
"""Every ablation suffix, in field order: ``memory-<suffix>`` is a condition name."""


@dataclass(frozen=True)
class Condition:
    """The switches of one condition; every instance has a name (see :func:`name_of`)."""

    composer: ComposerKind = "history-blind"
    """``oracle`` uses the env's ground truth; ``history-blind`` uses the run's deployable composer
    (``--composer``: the history-blind stand-in by default, or a VLM); ``prior`` is the best
    memoryless predictor (``best-memoryless``: a prior fitted on train at history slots,
    :mod:`policies.slot_prior`)."""
    memory: bool = False
    """Whether the memory layer revises the composer's subgoals."""
    recent_window: int | None = None
    """Recent-frame baseline: keep only the last N frames (None: off)."""
    flags: MemoryFlags = MemoryFlags()
    """Ablation switches; only meaningful with ``memory``."""
    custom: str | None = None
    """A researcher's memory class, ``"package.module:Class"`` (:mod:`memory.contract.interface`), instead of ours."""

    def __post_init__(self) -> None:
        name_of(self)  # raises for a combination that has no name

    @property
    def name(self) -> str:
        return name_of(self)


_RECENT = re.compile(r"recent([1-9][0-9]*)")

BASE_CONDITIONS: tuple[str, ...] = ("oracle", "no-memory", "memory", "recent4", "recent16", "recent32")
ALL_CONDITIONS: tuple[str, ...] = BASE_CONDITIONS + tuple(f"memory-{a}" for a in ABLATIONS)
"""The named conditions of the paper protocol: baselines, full memory and every single ablation."""
EXTRA_CONDITIONS: tuple[str, ...] = ("best-memoryless",)
"""Named conditions beyond the paper protocol's (not in the ``paper`` preset; ask for them by name)."""


def name_of(condition: Condition) -> str:
    """The condition's name; raises ``ValueError`` for a combination with no name."""
    c = condition
    if c.composer not in ("oracle", "history-blind", "prior"):
        raise ValueError(f"unknown composer kind {c.composer!r} (expected 'oracle', 'history-blind' or 'prior')")
    if c.recent_window is not None and (not isinstance(c.recent_window, int) or c.recent_window < 1):
        raise ValueError(f"recent window must be a positive int or None, got {c.recent_window!r}")
    flagged = c.flags.active
    if c.composer == "oracle":
        if c.memory or c.recent_window is not None or flagged:
            raise ValueError(f"the oracle condition takes no memory, window or ablation: {c!r}")
        return "oracle"
    if c.composer == "prior":
        if c.memory or c.recent_window is not None or flagged or c.custom is not None:
            raise ValueError(f"the best-memoryless condition takes no memory, window or ablation: {c!r}")
        return "best-memoryless"
    if c.custom is not None:
        if not c.memory or c.recent_window is not None or flagged:
            raise ValueError(f"a custom memory takes no window or ablation: {c!r}")
        return f"memory:{c.custom}"
    if c.memory:
        if c.recent_window is not None:
            raise ValueError(f"memory and a recent-frame window together have no name: {c!r}")
        return "memory" if not flagged else "memory-" + "+".join(flagged)
    if flagged:
        raise ValueError(f"ablation flags {flagged} need memory enabled: {c!r}")
    if c.recent_window is not None:
        return f"recent{c.recent_window}"
    return "no-memory"


def condition_from_name(name: str) -> Condition:
    """Parse a condition name; raises ``ValueError`` naming it, with a close match when one exists."""
    if not isinstance(name, str):
        raise ValueError(f"condition name must be a string, got {name!r}")
    if name == "oracle":
        return Condition(composer="oracle")
    if name == "no-memory":
        return Condition()
    if name == "best-memoryless":
        return Condition(composer="prior")
    if name == "memory":
        return Condition(memory=True)
    if name.startswith("memory:"):
        from memory.contract.interface import load_memory_class

        load_memory_class(name[len("memory:"):])  # fails here, naming the path, not mid-run
        return Condition(memory=True, custom=name[len("memory:"):])
    m = _RECENT.fullmatch(name)
    if m:
        return Condition(recent_window=int(m.group(1)))
    if name.startswith("memory-") and len(name) > len("memory-"):
        parts = name[len("memory-") :].split("+")
        if all(p in ABLATIONS for p in parts):
            if len(set(parts)) != len(parts):
                raise ValueError(f"condition {name!r} repeats an ablation")
            canonical = "memory-" + "+".join(a for a in ABLATIONS if a in parts)
            if canonical != name:
                raise ValueError(f"condition {name!r} lists its ablations out of order; write {canonical!r}")
            return Condition(memory=True, flags=MemoryFlags.from_suffixes(parts))
    known = ALL_CONDITIONS + EXTRA_CONDITIONS
    raise ValueError(f"unknown condition {name!r}{_hint(name, list(known))} (known: {', '.join(known)})")


def specifier_refusal(condition: Condition, specifier: str, endpoint: str | None) -> str | None:
    """Why ``condition`` cannot run under the memory specifier ``specifier``, or ``None`` when it can.

    ``memory-single-vote`` ablates the LLM specifier's voting; the instruction parser takes no votes,
    so under it the condition would run the full memory under another name.
    """
    if specifier not in ("instruction", "llm"):
        return f"unknown specifier {specifier!r} (known: instruction, llm)"
    if specifier == "llm" and not endpoint:
        return "--specifier llm needs --specifier-endpoint (an OpenAI-compatible URL)"
    if condition.memory and condition.flags.single_vote and specifier != "llm":
        return (f"condition {condition.name!r}: the single-vote ablation needs the LLM specifier (--specifier llm "
                "--specifier-endpoint URL); the instruction parser takes no votes, so it would run exactly "
                "the full memory under another name")
    return None


def check_condition(name: str) -> str:
    """Return ``name`` if it parses as a condition, else raise (see :func:`condition_from_name`)."""
    condition_from_name(name)
    return name


def condition_sort_key(name: str) -> tuple[int, int, str]:
    """Display order: oracle, no-memory, best-memoryless, recent windows by size, memory, ablations in field order."""
    try:
        c = condition_from_name(name)
    except ValueError:
        return (9, 0, name)
    if c.composer == "oracle":
        return (0, 0, name)
    if c.composer == "prior":
        return (1, 1, name)
    if not c.memory and c.recent_window is None:
        return (1, 0, name)
    if c.recent_window is not None:
        return (2, c.recent_window, name)
    if c.custom is not None:
        return (3, 1, name)
    if not c.flags.active:
        return (3, 0, name)
    first = ABLATIONS.index(c.flags.active[0])
    return (4 + (len(c.flags.active) > 1), first, name)


def _hint(value: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""
