"""The memory specification ``C(goal) -> MemorySpec``: what to watch and which reads may fire.

The goal text is the only task knowledge the memory gets, and it is enough: wording
such as "watch the video", "repeating this action three times", "the container hiding
the red cube" or "the second target it was previously placed on" says which parts of
history will matter later. The specification turns that wording into

* *monitors* (SimpleARM's P): watch phrases, relation bindings, counts, ordinals,
  event anchors, demonstrated routes; and
* *permitted reads* (SimpleARM's A): a set of :class:`ReadKind`. A permitted read is a
  permission, not an action: it fires only if a proposed subgoal later contains a
  slot of that kind (see :mod:`memory.access`).

Two specifiers share one interface (``goal -> MemorySpec``): the deterministic
:class:`InstructionSpecifier` (the default; regular expressions over the vocabulary in
:mod:`memory.vocabulary`) and :class:`LLMSpecifier`, which asks a chat model the same
question at three line widths and keeps only what a majority of readings agree on.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Protocol

from memory.store import StoreKind
from memory.vocabulary import (
    COLOUR_WORDS,
    COVER_VERBS,
    LAYOUT_ROLES,
    OBJECT_NOUNS,
    PROCEDURE_WORDS,
    ROUTE_WORDS,
    canonical_role,
    cover_binding,
    highlight_binding,
    is_ordinal_word,
    parse_ordinal,
)

__all__ = [
    "EventAnchor",
    "EvidenceSource",
    "InstructionSpecifier",
    "LLMSpecifier",
    "MemorySpec",
    "ReadKind",
    "Specifier",
    "build_prompt",
    "format_answer",
    "parse_answer",
    "specify",
]


class EvidenceSource(str, Enum):
    """Where the deciding evidence will be seen: in live interaction or in the conditioning video."""

    LIVE = "live"
    VIDEO = "video"


class ReadKind(str, Enum):
    """Kinds of read the structured access (or a tool's gate) may perform."""

    COVER_BINDING = "cover_binding"
    """An object named by what it hides ("the container that hides the green cube")."""
    HIGHLIGHT_RELATION = "highlight_relation"
    """An object named by a mark it carried earlier ("the highlighted cube")."""
    DEMO_REFERENCE = "demo_reference"
    """An object or place singled out by the demonstration ("the correct target", "the same block")."""
    COUNT_GATE = "count_gate"
    """A repetition or per-kind count that decides when to move on."""
    EVENT_ORDINAL = "event_ordinal"
    """The k-th occurrence of an event ("as it reaches the target for the third time")."""
    ROUTE_FILL = "route_fill"
    """The next element of a demonstrated route ("following the same path")."""
    PROCEDURE_REFERENCE = "procedure_reference"
    """Which demonstrated way of doing the task to repeat ("in the same manner")."""


@dataclass(frozen=True)
class EventAnchor:
    """A moment named relative to an event: "right before the button was pressed".

    Attributes:
        relation: ``"before"`` or ``"after"``.
        event: the event in a few words: ``"button pressed"``.
        immediate: the goal says right/just/immediately before or after.
        which: ``"first"`` or ``"last"`` when the goal says so ("last placed before").
    """

    relation: str
    event: str
    immediate: bool = False
    which: str | None = None

    def to_dict(self) -> dict:
        return {"relation": self.relation, "event": self.event, "immediate": self.immediate, "which": self.which}


@dataclass(frozen=True)
class MemorySpec:
    """What to monitor during one episode and which reads may fire.

    Attributes:
        goal: the instruction this was read from.
        source: where the deciding evidence is shown (video or live).
        watch: identity phrases to track (``"green cube"``, ``"highlighted cube"``).
        bindings: relation bindings to maintain (``"cover hiding the red cube"``).
        repetitions: N from "three times" / "twice", if the goal repeats something.
        counts: per-kind counts, as ``(phrase, n)`` pairs in goal order (a repeated phrase is summed).
        ordinal: k from "the second target ..." or "for the third time".
        anchor: an event-relative moment, if any.
        highlighted: the goal refers to objects marked during the episode.
        same: what must match the demonstration (``"manner"``, ``"path"``, ``"end"``).
        layout: stable scene roles the goal mentions (``"target"``, ``"button"``, ``"bin"``).
        reads: read kinds permitted in this episode.
    """

    goal: str
    source: EvidenceSource = EvidenceSource.LIVE
    watch: tuple[str, ...] = ()
    bindings: tuple[str, ...] = ()
    repetitions: int | None = None
    counts: tuple[tuple[str, int], ...] = ()
    ordinal: int | None = None
    anchor: EventAnchor | None = None
    highlighted: bool = False
    same: tuple[str, ...] = ()
    layout: tuple[str, ...] = ()
    reads: frozenset[ReadKind] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", EvidenceSource(self.source))
        object.__setattr__(self, "reads", frozenset(ReadKind(r) for r in self.reads))
        merged: dict[str, int] = {}
        for phrase, n in self.counts:  # "two red cubes and one red cube" is three red cubes
            merged[str(phrase)] = merged.get(str(phrase), 0) + int(n)
        object.__setattr__(self, "counts", tuple(merged.items()))
        for name in ("watch", "bindings", "same", "layout"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def count_map(self) -> dict[str, int]:
        return dict(self.counts)

    @property
    def monitors(self) -> frozenset[StoreKind]:
        """Which typed stores the episode needs (SimpleARM's P, by store)."""
        kinds: set[StoreKind] = set()
        if self.watch or self.bindings or ReadKind.DEMO_REFERENCE in self.reads:
            kinds.add(StoreKind.ENTITY)
        if self.bindings or self.highlighted:
            kinds.add(StoreKind.RELATION)
        if self.reads & {ReadKind.COUNT_GATE, ReadKind.EVENT_ORDINAL} or self.anchor is not None:
            kinds.add(StoreKind.PROGRESS)
        if self.reads & {ReadKind.ROUTE_FILL, ReadKind.PROCEDURE_REFERENCE}:
            kinds.add(StoreKind.TRAJECTORY)
        if self.layout:
            kinds.add(StoreKind.LAYOUT)
        return frozenset(kinds)

    def allows(self, kind: ReadKind | str) -> bool:
        return ReadKind(kind) in self.reads

    def without_reads(self, kinds: Iterable[ReadKind | str]) -> MemorySpec:
        """The same spec with some read kinds switched off (used by ablations)."""
        drop = {ReadKind(k) for k in kinds}
        return replace(self, reads=self.reads - drop)

    def to_dict(self) -> dict:
        return {
            "goal": self.goal,
            "source": self.source.value,
            "watch": list(self.watch),
            "bindings": list(self.bindings),
            "repetitions": self.repetitions,
            "counts": {p: n for p, n in self.counts},
            "ordinal": self.ordinal,
            "anchor": None if self.anchor is None else self.anchor.to_dict(),
            "highlighted": self.highlighted,
            "same": list(self.same),
            "layout": list(self.layout),
            "reads": sorted(r.value for r in self.reads),
            "monitors": sorted(k.value for k in self.monitors),
        }

    @classmethod
    def from_dict(cls, data: dict) -> MemorySpec:
        anchor = data.get("anchor")
        return cls(
            goal=data["goal"],
            source=EvidenceSource(data.get("source", "live")),
            watch=tuple(data.get("watch", ())),
            bindings=tuple(data.get("bindings", ())),
            repetitions=data.get("repetitions"),
            counts=tuple(dict(data.get("counts", {})).items()),
            ordinal=data.get("ordinal"),
            anchor=None if anchor is None else EventAnchor(**anchor),
            highlighted=bool(data.get("highlighted", False)),
            same=tuple(data.get("same", ())),
            layout=tuple(data.get("layout", ())),
            reads=frozenset(ReadKind(r) for r in data.get("reads", ())),
        )


class Specifier(Protocol):
    """Anything that turns a goal into a :class:`MemorySpec`."""

    def __call__(self, goal: str) -> MemorySpec: ...


# --------------------------------------------------------------------------- deterministic parser

_COLOUR = "|".join(COLOUR_WORDS)
_OBJECT = "|".join(sorted(OBJECT_NOUNS, key=len, reverse=True))
_NUMBER = r"one|two|three|four|five|six|seven|eight|nine|ten|[0-9]+"
_ORD = r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|[0-9]+(?:st|nd|rd|th)"
_COVER_NOUN = r"containers?|covers?|cups?"
_COVER_VERB = "|".join(sorted(COVER_VERBS, key=len, reverse=True))

_RE_VIDEO = re.compile(r"\b(?:video|demonstration|demo)\b")
_RE_COLOURED = re.compile(rf"\b({_COLOUR}) ({_OBJECT})\b")
_RE_OBJECT = re.compile(rf"\b({_OBJECT})\b")
_RE_BINDING = re.compile(
    rf"\b(?:{_COVER_NOUN}) (?:that |which )?(?:is |are )?(?:{_COVER_VERB}) (?:the |a |an )?({_COLOUR}) ({_OBJECT})\b"
)
_RE_HIGHLIGHT = re.compile(r"\bhighlight\w*")
_RE_COUNT = re.compile(rf"\b({_NUMBER}) ({_COLOUR}) ({_OBJECT})\b")
_RE_TIMES = re.compile(rf"\b({_NUMBER}) times\b")
_RE_ADVERB_TIMES = re.compile(r"\b(once|twice|thrice)\b")
_RE_ROUND_TRIPS = re.compile(rf"\b({_NUMBER}) round trips?\b")
# a trip between two named sides ("over the right-side target, then ... the left-side target"): done once
# unless the goal gives a count
_RE_TWO_SIDES = re.compile(r"\b(?:right|left)-side (\w+)\b.*\b(?:right|left)-side \1\b")
# one place followed by the stop ("place it on the target, then press the button to stop"): done once;
# a second pick before the press is as wrong as a missing one
_RE_ONCE_THEN_STOP = re.compile(r"\bplace (?:it|them) (?:on|onto) the \w+ then press the \w+ to stop\b")
_RE_EVENT_ORDINAL = re.compile(rf"\b(?:for|on|at) (?:the|its) ({_ORD}) (?:time|visit|arrival|pass|crossing)\b")
_RE_REFERENCE_ORDINAL = re.compile(rf"\bthe ({_ORD}) (\w+) (?:it|that|which|where|you)\b")
_RE_ANCHOR = re.compile(
    r"\b(?:(right|just|immediately) )?(before|after) the (\w+) (?:was|is|has been|had been|got|gets) (\w+)"
)
_RE_WHICH = re.compile(r"\b(first|last) (?:\w+ )?(?:before|after) the \w+ (?:was|is|has been|had been|got|gets)\b")
_RE_SAME = re.compile(r"\bsame (\w+)")
_RE_RETRACE = re.compile(r"\bretrac\w*|\b(?:route|path|pattern)s? (?:you were|that was|it was) shown\b")
_RE_PREVIOUS = re.compile(r"\bpreviously\b")
# "the block that was picked up in it" (it: the video): an object singled out by the demonstration
_RE_SHOWN = re.compile(rf"\b(?:{_OBJECT}) (?:that|which) (?:was|were) [a-z]+(?: up| down)? in (?:it|the video|the demonstration)\b")
_RE_LAYOUT = re.compile(r"\b(targets?|buttons?|bins?|box(?:es)?)\b")


def _normalise(goal: str) -> str:
    text = goal.lower().replace("\u2019", "'")
    text = re.sub(r"[^a-z0-9'\- ]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def _unique(items: Iterable[Any]) -> tuple:
    seen: dict[Any, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


class InstructionSpecifier:
    """Deterministic ``C(goal)``: reads the goal's wording with regular expressions over the vocabulary.

    It never fails on odd wording; a goal it cannot read yields a spec that watches
    nothing and permits no reads, i.e. the memory passes proposals through.
    """

    def __call__(self, goal: str) -> MemorySpec:
        if not isinstance(goal, str):
            raise ValueError(f"goal must be a string, got {goal!r}")
        text = _normalise(goal)

        source = EvidenceSource.VIDEO if _RE_VIDEO.search(text) else EvidenceSource.LIVE
        highlighted = bool(_RE_HIGHLIGHT.search(text))

        watch: list[str] = [f"{c} {canonical_role(o)}" for c, o in _RE_COLOURED.findall(text)]
        objects = [canonical_role(o) for o in _RE_OBJECT.findall(text)]
        if highlighted:
            watch.append(highlight_binding(objects[0] if objects else "object"))
        if not watch and objects:
            watch.append(objects[0])

        bindings = [cover_binding(f"{c} {canonical_role(o)}") for c, o in _RE_BINDING.findall(text)]
        counts = [(f"{c} {canonical_role(o)}", parse_ordinal(n)) for n, c, o in _RE_COUNT.findall(text)]
        counts = [(phrase, n) for phrase, n in counts if n is not None]

        repetitions = None
        m = _RE_TIMES.search(text) or _RE_ADVERB_TIMES.search(text) or _RE_ROUND_TRIPS.search(text)
        if m:
            repetitions = parse_ordinal(m.group(1))
        elif _RE_TWO_SIDES.search(text) or _RE_ONCE_THEN_STOP.search(text):
            repetitions = 1

        event_ordinal = _RE_EVENT_ORDINAL.search(text)
        reference_ordinal = _RE_REFERENCE_ORDINAL.search(text)
        ordinal = None
        if reference_ordinal and is_ordinal_word(reference_ordinal.group(1)):
            ordinal = parse_ordinal(reference_ordinal.group(1))
        elif event_ordinal:
            ordinal = parse_ordinal(event_ordinal.group(1))

        anchor = None
        m = _RE_ANCHOR.search(text)
        if m:
            which = _RE_WHICH.search(text)
            anchor = EventAnchor(
                relation=m.group(2),
                event=f"{canonical_role(m.group(3))} {m.group(4)}",
                immediate=m.group(1) is not None,
                which=which.group(1) if which else None,
            )

        same = [canonical_role(w) for w in _RE_SAME.findall(text)]
        route = bool(_RE_RETRACE.search(text)) or any(w in ROUTE_WORDS for w in same)
        procedure = any(w in PROCEDURE_WORDS for w in same)
        same_objects = [w for w in same if w not in ROUTE_WORDS and w not in PROCEDURE_WORDS]

        layout = [canonical_role(w) for w in _RE_LAYOUT.findall(text)]
        layout = [w for w in layout if w in LAYOUT_ROLES]

        reads: set[ReadKind] = set()
        if bindings:
            reads.add(ReadKind.COVER_BINDING)
        if highlighted:
            reads.add(ReadKind.HIGHLIGHT_RELATION)
        if same_objects or _RE_PREVIOUS.search(text) or _RE_SHOWN.search(text) or anchor is not None or (ordinal and reference_ordinal):
            reads.add(ReadKind.DEMO_REFERENCE)
        if repetitions is not None or counts:
            reads.add(ReadKind.COUNT_GATE)
        if event_ordinal and not reference_ordinal:
            reads.add(ReadKind.EVENT_ORDINAL)
        if route:
            reads.add(ReadKind.ROUTE_FILL)
        if procedure:
            reads.add(ReadKind.PROCEDURE_REFERENCE)

        return MemorySpec(
            goal=goal,
            source=source,
            watch=_unique(watch),
            bindings=_unique(bindings),
            repetitions=repetitions,
            counts=_unique(counts),
            ordinal=ordinal,
            anchor=anchor,
            highlighted=highlighted,
            same=_unique(same),
            layout=_unique(layout),
            reads=frozenset(reads),
        )


def specify(goal: str) -> MemorySpec:
    """The default specification: :class:`InstructionSpecifier` applied to ``goal``."""
    return InstructionSpecifier()(goal)


# --------------------------------------------------------------------------- LLM specifier

_FIELD_HELP: tuple[tuple[str, str], ...] = (
    ("SOURCE", "video if the goal asks to watch a video or demonstration before acting, otherwise live."),
    ("WATCH", "objects whose identity must be remembered, as colour and noun (for example: red cube), separated by semicolons."),
    ("BINDINGS", "hiding relations to keep, each written as: cover hiding the <object>, separated by semicolons."),
    ("REPEAT", "the number of times the goal asks to repeat an action, as digits."),
    ("COUNTS", "how many objects of each kind must be handled, as <object>=<digits>, separated by semicolons."),
    ("ORDINAL", "the position the goal refers to (the second target, the third time), as digits."),
    ("ANCHOR", "if the goal names a moment relative to an event: before or after; the event in two words; yes or no for right/just/immediately; first, last or none."),
    ("HIGHLIGHTED", "yes if the goal refers to objects marked or highlighted during the task, otherwise no."),
    ("SAME", "what must match the demonstration (manner, path, pattern, end, side, peg, cube), separated by semicolons."),
    ("LAYOUT", "fixed scene items the goal mentions (target, button, bin, box), separated by semicolons."),
    ("READS", "the memory reads that may be needed, chosen from: " + ", ".join(k.value for k in ReadKind) + "."),
)
FIELDS: tuple[str, ...] = tuple(name for name, _ in _FIELD_HELP)
_SET_FIELDS = frozenset({"WATCH", "BINDINGS", "COUNTS", "SAME", "LAYOUT", "READS"})


def build_prompt(goal: str) -> str:
    """The specification question for ``goal``, unwrapped (one paragraph per line)."""
    lines = [
        "You are preparing the memory of a robot arm before it starts a tabletop task. "
        "You see only the task goal below. Decide what the robot will need to remember while it works.",
        "Answer with exactly one line per field, in this order, each line being the field name in capitals, "
        "a colon and the value. Write none when a field does not apply.",
    ]
    lines += [f"{name}: {help_}" for name, help_ in _FIELD_HELP]
    lines += ["GOAL:", " ".join(goal.split()), "END GOAL"]
    return "\n".join(lines)


def wrap_prompt(prompt: str, width: int | None) -> str:
    """Re-wrap every line of ``prompt`` at ``width`` columns (``None``: leave it unwrapped)."""
    if width is None:
        return prompt
    return "\n".join(textwrap.fill(line, width) if line.strip() else line for line in prompt.split("\n"))


def format_answer(spec: MemorySpec) -> str:
    """Write ``spec`` in the answer format the prompt asks for (used to build test backends and logs)."""

    def items(values: Iterable[str]) -> str:
        values = list(values)
        return "; ".join(values) if values else "none"

    anchor = spec.anchor
    return "\n".join(
        [
            f"SOURCE: {spec.source.value}",
            f"WATCH: {items(spec.watch)}",
            f"BINDINGS: {items(spec.bindings)}",
            f"REPEAT: {spec.repetitions if spec.repetitions is not None else 'none'}",
            f"COUNTS: {items(f'{p}={n}' for p, n in spec.counts)}",
            f"ORDINAL: {spec.ordinal if spec.ordinal is not None else 'none'}",
            "ANCHOR: "
            + (
                "none"
                if anchor is None
                else f"{anchor.relation}; {anchor.event}; {'yes' if anchor.immediate else 'no'}; {anchor.which or 'none'}"
            ),
            f"HIGHLIGHTED: {'yes' if spec.highlighted else 'no'}",
            f"SAME: {items(spec.same)}",
            f"LAYOUT: {items(spec.layout)}",
            f"READS: {items(sorted(r.value for r in spec.reads))}",
        ]
    )


class _Invalid(Exception):
    pass


def _phrases(value: str) -> tuple[str, ...]:
    if value.strip().lower() in ("", "none"):
        return ()
    return tuple(" ".join(p.lower().split()) for p in re.split(r"[;,]", value) if p.strip())


def _positive(value: str) -> int | None:
    v = value.strip().lower()
    if v == "none":
        return None
    n = parse_ordinal(v)
    if n is None:
        raise _Invalid(value)
    return n


def _parse_field(name: str, value: str) -> Any:
    v = value.strip()
    if name == "SOURCE":
        if v.lower() not in ("live", "video"):
            raise _Invalid(v)
        return EvidenceSource(v.lower())
    if name in ("WATCH", "BINDINGS", "SAME", "LAYOUT"):
        return _phrases(v)
    if name in ("REPEAT", "ORDINAL"):
        return _positive(v)
    if name == "COUNTS":
        out = []
        for item in _phrases(v):
            phrase, sep, number = item.rpartition("=")
            if not sep or not phrase.strip():
                raise _Invalid(item)
            n = _positive(number)
            if n is None:
                raise _Invalid(item)
            out.append((phrase.strip(), n))
        return tuple(out)
    if name == "ANCHOR":
        if v.lower() == "none":
            return None
        bits = [b.strip().lower() for b in v.split(";")]
        if len(bits) != 4 or bits[0] not in ("before", "after") or bits[2] not in ("yes", "no"):
            raise _Invalid(v)
        which = None if bits[3] == "none" else bits[3]
        if which not in (None, "first", "last"):
            raise _Invalid(v)
        return EventAnchor(relation=bits[0], event=" ".join(bits[1].split()), immediate=bits[2] == "yes", which=which)
    if name == "HIGHLIGHTED":
        if v.lower() in ("yes", "true"):
            return True
        if v.lower() in ("no", "false"):
            return False
        raise _Invalid(v)
    if name == "READS":
        try:
            return tuple(ReadKind(p) for p in _phrases(v))
        except ValueError:
            raise _Invalid(v) from None
    raise _Invalid(name)


def parse_answer(reply: str) -> dict[str, Any]:
    """Schema-check one reply: return ``{FIELD: value}`` for every field that is present and valid."""
    out: dict[str, Any] = {}
    if not isinstance(reply, str):
        return out
    for line in reply.splitlines():
        m = re.match(r"\s*([A-Za-z]+)\s*:\s*(.*)\Z", line)
        if not m or m.group(1).upper() not in FIELDS or m.group(1).upper() in out:
            continue
        try:
            out[m.group(1).upper()] = _parse_field(m.group(1).upper(), m.group(2))
        except _Invalid:
            continue
    return out


_DEFAULTS: dict[str, Any] = {
    "SOURCE": EvidenceSource.LIVE,
    "WATCH": (),
    "BINDINGS": (),
    "REPEAT": None,
    "COUNTS": (),
    "ORDINAL": None,
    "ANCHOR": None,
    "HIGHLIGHTED": False,
    "SAME": (),
    "LAYOUT": (),
    "READS": (),
}


@dataclass
class VoteRecord:
    """What the last :class:`LLMSpecifier` call saw and decided, for logs."""

    prompts: list[str] = field(default_factory=list)
    replies: list[str | None] = field(default_factory=list)
    readings: list[dict[str, Any]] = field(default_factory=list)
    adopted: dict[str, bool] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


class LLMSpecifier:
    """``C(goal)`` by a chat model, stabilised by voting over re-wrapped prompts.

    The same question is asked at several line widths (by default unwrapped, 78 and 70
    columns). Identical wording under different line breaks should get identical
    answers from a deterministic decoder; where it does not, the answer is fragile and
    is dropped. A scalar field is adopted when at least ``min_agree`` readings give the
    same valid value; list fields are voted item by item, so one stray phrase does not
    discard the agreed ones. Fields without agreement fall back to their neutral
    default (nothing watched, no read), which makes the memory pass proposals through.

    Args:
        backend: any ``(prompt) -> reply`` callable (an HTTP client, an in-process model, a test function).
        widths: one entry per reading; ``None`` means no wrapping.
        min_agree: readings that must agree; ``len(widths) == 1`` with ``min_agree=1`` is the single-vote ablation.
    """

    def __init__(
        self,
        backend: Callable[[str], str],
        widths: Sequence[int | None] = (None, 78, 70),
        min_agree: int = 2,
    ) -> None:
        if not callable(backend):
            raise TypeError(f"backend must be callable, got {backend!r}")
        if not widths:
            raise ValueError("widths must name at least one reading")
        if not 1 <= min_agree <= len(widths):
            raise ValueError(f"min_agree={min_agree} must be between 1 and the number of readings ({len(widths)})")
        self.backend = backend
        self.widths = tuple(widths)
        self.min_agree = min_agree
        self.last_vote = VoteRecord()

    def __call__(self, goal: str) -> MemorySpec:
        if not isinstance(goal, str):
            raise ValueError(f"goal must be a string, got {goal!r}")
        record = VoteRecord()
        base = build_prompt(goal)
        for width in self.widths:
            prompt = wrap_prompt(base, width)
            record.prompts.append(prompt)
            try:
                reply = self.backend(prompt)
            except Exception as exc:  # a failed call is a missing vote, not a crash of the episode
                record.errors.append(f"width={width}: {type(exc).__name__}: {exc}")
                reply = None
            record.replies.append(reply)
            record.readings.append(parse_answer(reply) if isinstance(reply, str) else {})
        values = {name: self._vote(name, record) for name in FIELDS}
        self.last_vote = record
        return MemorySpec(
            goal=goal,
            source=values["SOURCE"],
            watch=values["WATCH"],
            bindings=values["BINDINGS"],
            repetitions=values["REPEAT"],
            counts=values["COUNTS"],
            ordinal=values["ORDINAL"],
            anchor=values["ANCHOR"],
            highlighted=values["HIGHLIGHTED"],
            same=values["SAME"],
            layout=values["LAYOUT"],
            reads=frozenset(values["READS"]),
        )

    def _vote(self, name: str, record: VoteRecord) -> Any:
        valid = [reading[name] for reading in record.readings if name in reading]
        if name in _SET_FIELDS:
            tally: Counter = Counter()
            order: dict[Any, None] = {}
            for items in valid:
                for item in _unique(items):
                    tally[item] += 1
                    order.setdefault(item, None)
            kept = tuple(item for item in order if tally[item] >= self.min_agree)
            record.adopted[name] = bool(kept) or sum(1 for items in valid if not items) >= self.min_agree
            return kept
        tally = Counter(valid)
        if tally:
            value, n = tally.most_common(1)[0]
            if n >= self.min_agree:
                record.adopted[name] = True
                return value
        record.adopted[name] = False
        return _DEFAULTS[name]

