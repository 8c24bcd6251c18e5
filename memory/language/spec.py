"""The memory specification ``C(goal) -> MemorySpec``: what to watch and which reads may fire.

The goal text is the only task knowledge the memory gets, and it is enough: wording
such as "watch the video", "repeating this action three times", "the container hiding
the red cube" or "the second target it was previously placed on" says which parts of
history will matter later. The specification turns that wording into

* *monitors* (SimpleARM's P): watch phrases, relation bindings, counts, ordinals,
  event anchors, demonstrated routes; and
* *permitted reads* (SimpleARM's A): a set of :class:`ReadKind`. A permitted read is a
  permission, not an action: it fires only if a proposed subgoal later contains a
  slot of that kind (see :mod:`memory.control.access`).

Two specifiers share one interface (``goal -> MemorySpec``): the deterministic
:class:`InstructionSpecifier` (the default; regular expressions over the vocabulary in
:mod:`memory.language.words`) and :class:`LLMSpecifier`, which asks a chat model the same
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

from memory.language.lexicon import canonical_text
from memory.language.words import ARRIVAL_WORDS, COUNT_UNITS, DEMO_WORDS, HANDLING_VERBS, HIDING_WORDS, IMMEDIATE_WORDS, PLACING_VERBS, PRESS_WORDS, PROCEDURE_NOUNS, ROUTE_NOUNS, SAME_WORDS
from memory.store.memory_store import StoreKind
from memory.language.words import COLOUR_WORDS, LAYOUT_ROLES, OBJECT_ROLES, PART_ROLES, canonical_role, parse_ordinal
from subgoals.record_names import cover_binding, highlight_binding
from subgoals.numbers import ADVERB_COUNTS, CARDINAL_WORDS, ORDINAL_PATTERN

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
        ordinal_event: the event an event ordinal counts (``"arrival"`` at a place), ``None`` for a
            reference ordinal ("the second target it was placed on") or when none is named.
        anchor: an event-relative moment, if any.
        highlighted: the goal refers to objects marked during the episode.
        same: what must match the demonstration (``"manner"``, ``"route"``, ``"end"``, ``"peg"``).
        layout: stable scene roles the goal mentions (``"target"``, ``"button"``, ``"bin"``).
        sides: the sides of the layout the goal names (``("right", "left")``: a trip between two places).
        reads: read kinds permitted in this episode.
        unfilled: fields the goal asked for in words the specifier could not read (``"repetitions"``
            for "repeat it a few times"); not part of the specification's meaning, a report on it.
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
    sides: tuple[str, ...] = ()
    ordinal_event: str | None = None
    reads: frozenset[ReadKind] = frozenset()
    unfilled: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", EvidenceSource(self.source))
        object.__setattr__(self, "reads", frozenset(ReadKind(r) for r in self.reads))
        merged: dict[str, int] = {}
        for phrase, n in self.counts:  # "two red cubes and one red cube" is three red cubes
            merged[str(phrase)] = merged.get(str(phrase), 0) + int(n)
        object.__setattr__(self, "counts", tuple(merged.items()))
        for name in ("watch", "bindings", "same", "layout", "sides", "unfilled"):
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
            "sides": list(self.sides),
            "ordinal_event": self.ordinal_event,
            "reads": sorted(r.value for r in self.reads),
            "monitors": sorted(k.value for k in self.monitors),
            "unfilled": list(self.unfilled),
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
            sides=tuple(data.get("sides", ())),
            ordinal_event=data.get("ordinal_event"),
            reads=frozenset(ReadKind(r) for r in data.get("reads", ())),
            unfilled=tuple(data.get("unfilled", ())),
        )


class Specifier(Protocol):
    """Anything that turns a goal into a :class:`MemorySpec`."""

    def __call__(self, goal: str) -> MemorySpec: ...


# --------------------------------------------------------------------------- deterministic parser
#
# The goal is first rewritten into canonical words (memory.language.lexicon.canonical_text: one noun per
# object kind, one verb per relation); every rule below then reads a *structure* over those words
# (a number before a coloured object, a relation word in the same clause as a cover and a coloured
# object, an ordinal before an event noun, "before/after" before a passive event), anywhere in the
# goal, so clause order and synonyms do not change what is read.

_COLOUR = "|".join(COLOUR_WORDS)
# the objects a goal names by colour, from the word table (a new object noun is one table entry)
_OBJ = "|".join(OBJECT_ROLES)
_ROLE = "|".join((*OBJECT_ROLES, *PART_ROLES))  # what a demonstration can single out by what was done to it
_DEMO = "|".join(DEMO_WORDS)
_NUM = "|".join(CARDINAL_WORDS) + r"|[0-9]+|a single"
_ORD = ORDINAL_PATTERN
_UNITS = "|".join(sorted((re.escape(u) for u in COUNT_UNITS), key=len, reverse=True))
_HIDING = "|".join(HIDING_WORDS)
_HANDLED = "|".join(HANDLING_VERBS)
_PRESS = "|".join(PRESS_WORDS)
_IMM = "|".join(IMMEDIATE_WORDS)
_SAME = "|".join(SAME_WORDS)
_EVENT_NOUNS = r"time|visit|arrival|pass|crossing|approach|lap|go|trip"

_RE_VIDEO = re.compile(
    r"\b(?:" + "|".join(DEMO_WORDS) + r")\b"
    # "as shown", "the route you were shown": a demonstration without naming the video
    r"|\bas (?:shown|demonstrated)\b|\b(?:you|we) were shown\b"
    r"|\b(?:route|path|pattern|way|manner|one) (?:that was |which was )?shown\b"
)
_RE_COLOURED = re.compile(rf"\b({_COLOUR}) ({_OBJ})s?\b")
_RE_OBJECT = re.compile(rf"\b({_OBJ})s?\b")
_RE_CONTAINER = re.compile(r"\bcontainers?\b")
_RE_PRONOUN = re.compile(r"\b(?:it|them)\b")
_RE_HIDING = re.compile(rf"\b(?:{_HIDING})\b")
_RE_COUNT = re.compile(rf"\b({_NUM}) ({_COLOUR}) ({_OBJ})s?\b")
_RE_ELIDED_COUNT = re.compile(
    rf"\b({_NUM}) ({_COLOUR}) ((?:and )?(?:{_NUM}) (?:{_COLOUR}) (?:(?:and )?(?:{_NUM}) (?:{_COLOUR}) )*?({_OBJ})s?)\b"
)
_RE_TIMES = re.compile(rf"\b({_NUM}) (?:more |separate |full |whole |distinct |consecutive |pick-and-place |back-and-forth )?(?:{_UNITS})\b")
_RE_ADVERB_TIMES = re.compile(r"\b(" + "|".join(ADVERB_COUNTS) + r")\b")
# "over the right and left targets": both sides, the noun said once
_RE_BOTH_SIDES = re.compile(r"\b(?:right|left)(?:-side|-hand| side| hand)? (?:and|or|to) (?:the )?(?:right|left)(?:-side|-hand| side| hand)? targets\b")
_RE_SIDE = re.compile(r"\b(right|left)(?:-side|-hand| side| hand)? targets?\b|\btargets? on the (right|left)\b")
_RE_PLACE_ON_TARGET = re.compile(rf"\b(?:{'|'.join(PLACING_VERBS)})\w* (?:\w+ ){{0,4}}?(?:on|onto|upon) (?:the |a )?(?:\w+ )?target\b")
_RE_STOP = re.compile(r"\b(?:stop|finish|end)\b")
_RE_EVENT_ORDINAL = re.compile(rf"\b({_ORD}) ({_EVENT_NOUNS})s?\b")
_RE_REFERENCE_ORDINAL = re.compile(
    rf"\b(?:the|its) ({_ORD})\b(?! (?:{_EVENT_NOUNS})s?\b)|\b(?:placed|put|set|visited|went|landed|left)(?: (?:on|onto|at|to|in))? ({_ORD})\b"
)
_RE_ARRIVAL = re.compile(ARRIVAL_WORDS)
_AUX = r"(?:was |is |got |gets |had been |has been |being |were )?"
_RE_ANCHORS = (
    # "right before the button was pressed", "just after the button press"
    re.compile(rf"\b(?:({_IMM}) )?(before|after) (?:the |a |its )?(button)s? {_AUX}(?:{_PRESS})\b"),
    # "immediately after the press of the button"
    re.compile(rf"\b(?:({_IMM}) )?(before|after) (?:the |a )(?:{_PRESS}) of (?:the |a )(button)\b"),
    # "directly after someone pressed the button"
    re.compile(rf"\b(?:({_IMM}) )?(before|after) (?:someone |somebody |the robot |it )(?:{_PRESS}) (?:the |a )(button)\b"),
)
_RE_PRESS_MENTION = re.compile(rf"\bbuttons? {_AUX}(?:{_PRESS})\b|\b(?:{_PRESS}) (?:of )?(?:the |a )?buttons?\b|\bbutton (?:press|push)\b")
_RE_ANAPHORIC_ANCHOR = re.compile(rf"\b(?:({_IMM}) )?(before|after) (?:that|this|it)\b")
_RE_INSERT = re.compile(r"\binsert(?:s|ed|ing)?\b")
_RE_WHERE_PLACED = re.compile(rf"\bwhere (?:it|the (?:\w+ )?(?:{_OBJ})) {_AUX}(?:{'|'.join(PLACING_VERBS)})\w*\b")
_RE_WHICH = re.compile(r"\b(first|last) (?:\w+ ){0,2}?(?:before|after)\b")
_RE_SAME = re.compile(rf"\b(?:{_SAME}) (?:(?:{_COLOUR}) )?([a-z\-]+)(?: ([a-z\-]+))?")
_RE_HANDLED_OBJECT = re.compile(
    rf"\b({_ROLE})s? (?:up )?(?:that |which |it |you |you've |you have |we |the robot |the (?:{_DEMO}) )"
    rf"(?:\w+ ){{0,4}}?(?:{_HANDLED})\b"
    # "the peg from the video", "the cube in the demonstration"
    rf"|\b({_ROLE})s? (?:from|in|of) the (?:{_DEMO})\b"
    # "the video's cube"
    rf"|\b(?:{_DEMO})'s ({_ROLE})\b"
    # "the demonstrated peg", "the original cube"
    rf"|\b(?:demonstrated|shown|original) ({_ROLE})\b"
    # "pick that peg up again"
    rf"|\bthat ({_ROLE}) (?:\w+ ){{0,2}}?again\b"
)
_RE_PROCEDURE_CLAUSE = re.compile(
    r"\b(?:the way|the manner|how) (?:(?:it|that|the video|the demonstration|the robot|this) )?(?:\w+ ){0,2}?"
    r"(?:done|did|shown|showed|demonstrated|performed|moved|handled)\b|\bas it was (?:done|shown|demonstrated|performed)\b"
    # "repeat what the robot did in the video"
    r"|\bwhat (?:it|the robot|the video|the demonstration|the demo|you|we) did\b"
    # "exactly like the robot did in the video", "as the demonstration did"
    r"|\b(?:like|as) (?:it|the robot|the video|the demonstration|the demo|the clip|the recording|you|we) (?:did|does|had)\b"
    # "replicate how the cube was moved"
    r"|\bhow (?:\w+ ){0,3}?(?:was|were|got) (?:done|moved|pushed|carried|handled|shown|demonstrated|brought)\b"
)
# a route noun as a noun: after a determiner or a modifier ("the demonstrated path"), not the verb
# of "keep track of the cups"
_RE_ROUTE_NOUN = re.compile(
    r"\b(?:the|a|its|that|this|same|demonstrated|shown|original|identical) (?:\w+ )?(?:"
    + "|".join(n for n in ROUTE_NOUNS if n != "sequence") + r")s?\b"
)
_RE_ROUTE_VERB = re.compile(
    r"\b(?:re)?trac(?:e|es|ed|ing)\b|\bnavigat\w*|\bsteer\w*|\bweav\w*|\bredraw\w*|\b(?:way|path|route)s? around\b"
)
_RE_PREVIOUS = re.compile(r"\bpreviously\b")
# the stable scene items, from the word table (a new scene item is an entry there, not a pattern here)
_RE_LAYOUT = re.compile(r"\b(" + "|".join(sorted(LAYOUT_ROLES, key=lambda r: (-len(r), r))) + r")(?:es|s)?\b")
_RE_CLAUSE_BREAK = re.compile(r" [,;] | (?:and )?then | followed by | (?:and )?after that | (?:and )?next | finally | afterwards ")
# cues that a field was asked for although no value could be read
_RE_REPEAT_CUE = re.compile(rf"\b(?:{_UNITS}|repeatedly|repeat\w* (?:this|it|that|the action))\b")
_RE_BARE_COLOUR = re.compile(rf"\b({_COLOUR})\b(?! (?:{_OBJ})s?\b)")
_RE_IMM_ANCHOR_CUE = re.compile(rf"\b(?:{_IMM}) (?:before|after)\b")


def _unique(items: Iterable[Any]) -> tuple:
    seen: dict[Any, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


def _same_concept(word: str) -> str | None:
    """What "the same <word>" must match: a route, a manner, or an object or part role."""
    if word in ROUTE_NOUNS or (word.endswith("s") and word[:-1] in ROUTE_NOUNS):
        return "route"
    if word in PROCEDURE_NOUNS:
        return "manner"
    role = canonical_role(word)
    return role if role in SAME_ROLES else None


SAME_ROLES = frozenset({*OBJECT_ROLES, *PART_ROLES, *LAYOUT_ROLES, "container"})
"""Roles "the same ..." may name besides routes and manners."""


class InstructionSpecifier:
    """Deterministic ``C(goal)``: structural rules over the goal in canonical words.

    It never fails on odd wording; a goal it cannot read yields a spec that watches nothing and
    permits no reads (the memory passes proposals through), and ``unfilled`` names the fields the
    goal asked for in words that no rule could read.
    """

    def __call__(self, goal: str) -> MemorySpec:
        if not isinstance(goal, str):
            raise ValueError(f"goal must be a string, got {goal!r}")
        text = canonical_text(goal)
        flat = re.sub(r" [,;] ", " ", text)  # the goal without clause marks, for phrase rules
        clauses = [c for c in _RE_CLAUSE_BREAK.split(f" {text} ") if c.strip()]
        unfilled: list[str] = []

        source = EvidenceSource.VIDEO if _RE_VIDEO.search(flat) else EvidenceSource.LIVE
        highlighted = "highlighted" in flat.split()

        watch: list[str] = [f"{c} {o}" for c, o in _RE_COLOURED.findall(flat)]
        objects = _RE_OBJECT.findall(flat)
        if highlighted:
            watch.append(highlight_binding(objects[0] if objects else "object"))
        if not watch and objects:
            watch.append(objects[0])
        if _RE_BARE_COLOUR.search(flat):
            unfilled.append("watch")

        # a cover binding: a coloured object in a clause that relates it to a cover ("the cup that
        # conceals the red block", "the container the red cube is hidden under")
        bindings: list[str] = []
        if _RE_CONTAINER.search(flat):
            last_named: list[tuple[str, str]] = []
            for clause in clauses:
                named = _RE_COLOURED.findall(clause)
                if _RE_HIDING.search(clause):
                    if not named and last_named and _RE_PRONOUN.search(clause) and _RE_CONTAINER.search(clause):
                        named = last_named[-1:]
                    bindings += [cover_binding(f"{c} {o}") for c, o in named]
                last_named += named
            if not bindings and _RE_HIDING.search(flat):
                unfilled.append("bindings")

        # "2 red and 1 blue cube": the noun of a list of counts is said once, at its end
        counted = _RE_ELIDED_COUNT.sub(lambda m: f"{m.group(1)} {m.group(2)} {m.group(4)} {m.group(3)}", flat)
        while counted != flat and _RE_ELIDED_COUNT.search(counted):
            counted = _RE_ELIDED_COUNT.sub(lambda m: f"{m.group(1)} {m.group(2)} {m.group(4)} {m.group(3)}", counted)
        if counted != flat:
            watch = _unique([f"{c} {o}" for c, o in _RE_COLOURED.findall(counted)] + watch)
        counts = [(f"{c} {o}", 1 if n == "a single" else parse_ordinal(n)) for n, c, o in _RE_COUNT.findall(counted)]
        counts = [(phrase, n) for phrase, n in counts if n is not None]

        sides = tuple(sorted({a or b for a, b in _RE_SIDE.findall(flat)} | set(_RE_BOTH_SIDES.findall(flat) and ("right", "left")),
                             reverse=True))

        event_ordinal = _RE_EVENT_ORDINAL.search(flat)
        reference_ordinal = _RE_REFERENCE_ORDINAL.search(flat) if source is EvidenceSource.VIDEO else None
        if event_ordinal and not reference_ordinal and source is EvidenceSource.VIDEO and not _RE_ARRIVAL.search(flat):
            # "where it was placed the second time" (in the video): the k-th of the shown events
            reference_ordinal, event_ordinal = event_ordinal, None

        repetitions = None
        m = _RE_TIMES.search(flat) or _RE_ADVERB_TIMES.search(flat)
        if m:
            repetitions = 1 if m.group(1) == "a single" else parse_ordinal(m.group(1))
        elif not counts and set(sides) == {"left", "right"}:
            repetitions = 1  # a trip between the two named sides, no count given: done once
        elif not counts and _RE_PLACE_ON_TARGET.search(flat) and "button" in flat and _RE_STOP.search(flat):
            repetitions = 1  # one place, then the stop: a second place before the press is as wrong as none
        elif _RE_REPEAT_CUE.search(flat) and not event_ordinal:
            unfilled.append("repetitions")

        ordinal = None
        ordinal_event = None
        if reference_ordinal:
            ordinal = parse_ordinal(reference_ordinal.group(1) or reference_ordinal.group(2))
        elif event_ordinal:
            ordinal = parse_ordinal(event_ordinal.group(1))
            # "its third visit", "the third go at the target": the noun itself is the arrival
            if _RE_ARRIVAL.search(flat) or (event_ordinal.group(2) != "time" and "target" in flat):
                ordinal_event = "arrival"
            else:
                unfilled.append("ordinal_event")

        anchor = None
        for pattern in _RE_ANCHORS if source is EvidenceSource.VIDEO else ():  # a demonstrated event
            m = pattern.search(flat)
            if m:
                which = _RE_WHICH.search(flat)
                relation, nearest = m.group(2), which.group(1) if which else None
                # "the target it was placed on after the press" names one place: the one next to the press
                immediate = m.group(1) is not None or nearest is None
                if (relation, nearest) in (("before", "last"), ("after", "first")):
                    immediate, nearest = True, None  # "last placed before" is "right before"
                anchor = EventAnchor(relation=relation, event=f"{m.group(3)} pressed", immediate=immediate, which=nearest)
                break
        if anchor is None and source is EvidenceSource.VIDEO and _RE_PRESS_MENTION.search(flat):
            # "a button is pressed in the video; place the cube where it was put just after that"
            m = _RE_ANAPHORIC_ANCHOR.search(flat)
            if m:
                anchor = EventAnchor(relation=m.group(2), event="button pressed", immediate=True, which=None)
        if anchor is None and _RE_IMM_ANCHOR_CUE.search(flat) and source is EvidenceSource.VIDEO:
            unfilled.append("anchor")

        same: list[str] = []
        for word, following in _RE_SAME.findall(flat):
            concept = _same_concept(word) or (following and _same_concept(following))
            if concept is None:
                unfilled.append("same")
            else:
                same.append(concept)
        handled = [next(filter(None, m)) for m in _RE_HANDLED_OBJECT.findall(flat)] if source is EvidenceSource.VIDEO else []
        same += handled
        if source is EvidenceSource.VIDEO and _RE_PROCEDURE_CLAUSE.search(flat):
            same.append("manner")
        if source is EvidenceSource.VIDEO and (_RE_ROUTE_NOUN.search(flat) or _RE_ROUTE_VERB.search(flat)):
            if "manner" in same and _RE_ROUTE_VERB.search(flat):
                same = [w for w in same if w != "manner"]  # "the same way around the sticks": a route, not a manner
            if "manner" not in same:
                same.append("route")
        route = "route" in same
        procedure = "manner" in same and not route
        same_objects = [w for w in same if w not in ("route", "manner")]

        layout = [canonical_role(w) for w in _RE_LAYOUT.findall(flat)]
        layout = [w for w in layout if w in LAYOUT_ROLES]
        if source is EvidenceSource.VIDEO and "target" not in layout and _RE_WHERE_PLACED.search(flat):
            layout.append("target")  # "place it where it was put the first time": the places are the targets
        if "box" not in layout and _RE_INSERT.search(flat):
            layout.append("box")  # "insert it from the same side": what a peg is inserted into is the box

        reads: set[ReadKind] = set()
        if bindings:
            reads.add(ReadKind.COVER_BINDING)
        if highlighted:
            reads.add(ReadKind.HIGHLIGHT_RELATION)
        if same_objects or _RE_PREVIOUS.search(flat) or anchor is not None or (ordinal and reference_ordinal):
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
            ordinal_event=ordinal_event,
            anchor=anchor,
            highlighted=highlighted,
            same=_unique(same),
            layout=_unique(layout),
            sides=sides,
            reads=frozenset(reads),
            unfilled=_unique(unfilled),
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
    ("EVENT", "arrival if the ordinal counts the moving object's arrivals at a place (the third time it reaches the target), otherwise none."),
    ("ANCHOR", "if the goal names a moment relative to an event: before or after; the event in two words; yes or no for right/just/immediately; first, last or none."),
    ("HIGHLIGHTED", "yes if the goal refers to objects marked or highlighted during the task, otherwise no."),
    ("SAME", "what must match the demonstration (manner, path, pattern, end, side, peg, cube), separated by semicolons."),
    ("LAYOUT", "fixed scene items the goal mentions (target, button, bin, box), separated by semicolons."),
    ("SIDES", "the sides of the table the goal names for its targets (right, left), separated by semicolons."),
    ("READS", "the memory reads that may be needed, chosen from: " + ", ".join(k.value for k in ReadKind) + "."),
)
FIELDS: tuple[str, ...] = tuple(name for name, _ in _FIELD_HELP)
_SET_FIELDS = frozenset({"WATCH", "BINDINGS", "COUNTS", "SAME", "LAYOUT", "SIDES", "READS"})
_FIELD_OF: dict[str, str] = {
    "SOURCE": "source", "WATCH": "watch", "BINDINGS": "bindings", "REPEAT": "repetitions", "COUNTS": "counts",
    "ORDINAL": "ordinal", "EVENT": "ordinal_event", "ANCHOR": "anchor", "HIGHLIGHTED": "highlighted",
    "SAME": "same", "LAYOUT": "layout", "SIDES": "sides", "READS": "reads",
}
"""Answer field -> :class:`MemorySpec` field."""


def build_prompt(goal: str) -> str:
    """The specification question for ``goal``, one paragraph per line (no line breaks inside a paragraph)."""
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
    """Re-wrap every line of ``prompt`` at ``width`` columns (``None``: leave its lines as they are)."""
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
            f"EVENT: {spec.ordinal_event or 'none'}",
            "ANCHOR: "
            + (
                "none"
                if anchor is None
                else f"{anchor.relation}; {anchor.event}; {'yes' if anchor.immediate else 'no'}; {anchor.which or 'none'}"
            ),
            f"HIGHLIGHTED: {'yes' if spec.highlighted else 'no'}",
            f"SAME: {items(spec.same)}",
            f"LAYOUT: {items(spec.layout)}",
            f"SIDES: {items(spec.sides)}",
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
    if name in ("WATCH", "BINDINGS", "SAME", "LAYOUT", "SIDES"):
        return _phrases(v)
    if name == "EVENT":
        if v.lower() == "none":
            return None
        if v.lower() != "arrival":
            raise _Invalid(v)
        return "arrival"
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
    "EVENT": None,
    "ANCHOR": None,
    "HIGHLIGHTED": False,
    "SAME": (),
    "LAYOUT": (),
    "SIDES": (),
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

    The same question is asked at several line widths (by default one line per paragraph, 78 and 70
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
            ordinal_event=values["EVENT"],
            anchor=values["ANCHOR"],
            highlighted=values["HIGHLIGHTED"],
            same=values["SAME"],
            layout=values["LAYOUT"],
            sides=values["SIDES"],
            reads=frozenset(values["READS"]),
            # a field the readings did not agree on fell back to its neutral default: not filled
            unfilled=tuple(_FIELD_OF[name] for name in FIELDS if not record.adopted.get(name, False)),
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

