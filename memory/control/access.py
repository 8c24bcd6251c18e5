"""Structured access: read memory only where the proposed subgoal needs history.

The composer proposes a subgoal such as
``"pick up the container at <80, 90> that hides the green cube"``. The current view
can check colours and positions, but it cannot tell which plain container hides the
green cube: that slot is *history-dependent*. This module

1. parses the proposal with the shared grammar and applies a structural test to each
   noun phrase (:func:`slot_query`): a cover relation in a post-modifier, or a modifier
   that points into history ("highlighted", "correct", "same", "previous"), makes the
   slot a read; colour and position words never do, because the view answers them;
2. checks the goal permitted that kind of read (:class:`~memory.language.spec.MemorySpec`);
3. looks for exactly one record with a readable status (verified or reacquired) that
   answers the slot;
4. re-grounds the recalled entity in the current frame through a callable the tools
   provide, since memory knows *which* object but its stored position may be stale; where the
   view does not show it there, the record's stored position (where the memory itself last
   placed it) answers, unless ``record_position_fallback`` is off;
5. rewrites only that slot's point; otherwise it abstains and the proposal goes through
   unchanged.

Every read and every abstention leaves a :class:`ReadTrace`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory.contract.frames import Frame
from memory.control.query import Query
from memory.store.records import EntityRecord, EntityStatus
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.language.words import COLOUR_WORDS, HIDING_VERBS, HISTORY_CLAUSE_WORDS, HISTORY_MODIFIERS, canonical_role, colour_of
from subgoals.record_names import cover_binding, highlight_binding, reference_binding
from subgoals.grammar import (
    NounPhrase,
    Point,
    Subgoal,
    SubgoalParseError,
    format_subgoal,
    is_ordinal_word,
    parse_ordinal,
    parse_subgoal,
)

__all__ = ["Answerer", "ReadTrace", "Regrounder", "StructuredAccess", "slot_query"]

Regrounder = Callable[[EntityRecord, Frame], "Point | None"]
"""``reground(entity, frame) -> Point | None``: find a recalled entity in the current view."""


class Answerer(Protocol):
    """Anything that can answer a query the store itself cannot (tools implement this)."""

    name: str

    def answer(self, query: Query, store: MemoryStore) -> EntityRecord | None: ...


# Reason codes start every trace reason, so diagnostics can count them.
READ = "read"
NO_RECORD = "no-record"
AMBIGUOUS = "ambiguous"
NOT_PERMITTED = "not-permitted"
NO_GROUNDING = "no-grounding"
UNPARSEABLE = "unparseable"
NO_SLOT = "no-slot"
GATE = "gate"
GATE_ABSTAINED = "gate-abstained"
NOT_A_READ = (UNPARSEABLE, NO_SLOT, NOT_PERMITTED)
"""Reason codes of traces where the memory decided the proposal needs no read (not abstentions)."""


@dataclass(frozen=True)
class ReadTrace:
    """One read or abstention.

    Attributes:
        step: frame step at which the subgoal was revised.
        query: what was asked (a binding such as ``"cover hiding the green cube"``).
        proposed: the subgoal as proposed.
        answer: what memory answered (the recalled identity and its new point), ``None`` when abstaining.
        record_key: the store key the answer came from.
        record_status: that record's status at read time (``"verified"``, ...), or of the
            best unreadable match when abstaining for that reason.
        rewritten: the subgoal text after this read (equal to ``proposed`` when abstaining).
        abstained: True when memory left the slot alone.
        reason: a reason code (``read``, ``no-record``, ``ambiguous``, ``not-permitted``,
            ``no-grounding``, ``unparseable``, ``no-slot``, ``gate``), a colon, and details.
        kind: the read kind, if any.
        correct: filled in by an auditor that knows the truth; the memory never sets it.
    """

    step: int
    query: str
    proposed: str
    answer: str | None
    record_key: str | None
    record_status: str | None
    rewritten: str
    abstained: bool
    reason: str
    kind: str | None = None
    correct: bool | None = None

    @property
    def reason_code(self) -> str:
        return self.reason.split(":", 1)[0]

    @property
    def changed(self) -> bool:
        return self.rewritten != self.proposed

    def to_dict(self) -> dict:
        return {
            "step": self.step,
            "query": self.query,
            "proposed": self.proposed,
            "answer": self.answer,
            "record_key": self.record_key,
            "record_status": self.record_status,
            "rewritten": self.rewritten,
            "abstained": self.abstained,
            "reason": self.reason,
            "kind": self.kind,
            "correct": self.correct,
        }


# --------------------------------------------------------------------------- structural test

_DETERMINER = r"(?:the|a|an)"
_RE_HIDDEN = re.compile(
    rf"^(?:that |which )?(?:is |are )?(?:{'|'.join(sorted(HIDING_VERBS, key=len, reverse=True))}) (?:{_DETERMINER} )?(.+)$"
)
_RE_WHICH_IS = re.compile(rf"^(?:which|that) (?:is|are) (?:{_DETERMINER} )?({'|'.join(COLOUR_WORDS)})\b")


def _clause_words(post: str) -> list[str]:
    return re.sub(r"[^a-z0-9\- ]+", " ", post.lower()).split()


def _hidden_identity(post: str) -> str | None:
    """``"that hides the green cube"`` -> ``"green cube"``; ``None`` if the clause is not a cover relation."""
    m = _RE_HIDDEN.match(" ".join(_clause_words(post)))
    if not m:
        return None
    words = m.group(1).split()
    colour = words[0] if words[0] in COLOUR_WORDS else None
    nouns = words[1:] if colour else words
    if not nouns:
        return None
    noun = canonical_role(nouns[0])
    return f"{colour} {noun}" if colour else noun


def _stated_colour(np_: NounPhrase) -> str | None:
    colour = colour_of(np_.modifiers)
    if colour:
        return colour
    for post in np_.post_modifiers:
        m = _RE_WHICH_IS.match(" ".join(_clause_words(post)))
        if m:
            return m.group(1)
    return None


def slot_query(np_: NounPhrase, np_index: int = 0) -> Query | None:
    """The read a noun phrase needs, or ``None`` when the current view can resolve it.

    Reads: a cover head with a hiding clause; a modifier in
    :data:`~memory.language.words.HISTORY_MODIFIERS`; a post-modifier that refers back in
    time ("that was previously picked up"). Not reads: colour, position and ordinal
    words alone, pronouns, bare heads.
    """
    role = canonical_role(np_.head)
    colour = _stated_colour(np_)
    ordinal = next((parse_ordinal(w) for w in np_.modifiers if is_ordinal_word(w)), None)
    common = dict(role=role, colour=colour, ordinal=ordinal, text=np_.text, np_index=np_index)
    if role == "cover":
        for post in np_.post_modifiers:
            hidden = _hidden_identity(post)
            if hidden:
                return Query(kind=ReadKind.COVER_BINDING, binding=cover_binding(hidden), identity=hidden, **common)
    for word in np_.modifiers:
        history = HISTORY_MODIFIERS.get(word.lower())
        if history == "highlighted":
            return Query(kind=ReadKind.HIGHLIGHT_RELATION, binding=highlight_binding(role), **common)
        if history == "reference":
            return Query(kind=ReadKind.DEMO_REFERENCE, binding=reference_binding(role), **common)
    for post in np_.post_modifiers:
        words = set(_clause_words(post))
        if any(w.startswith("highlight") for w in words):
            return Query(kind=ReadKind.HIGHLIGHT_RELATION, binding=highlight_binding(role), **common)
        if words & HISTORY_CLAUSE_WORDS:
            return Query(kind=ReadKind.DEMO_REFERENCE, binding=reference_binding(role), **common)
    return None


def identity_query(np_: NounPhrase, np_index: int = 0) -> Query | None:
    """A plain identity read ("the red cube" -> entity "red cube"); used only by agent-decided access."""
    role = canonical_role(np_.head)
    if np_.determiner is None and np_.head.lower() in ("it", "them", "itself"):
        return None
    colour = _stated_colour(np_)
    identity = f"{colour} {role}" if colour else role
    return Query(kind=None, role=role, identity=identity, colour=colour, text=np_.text, np_index=np_index)


# --------------------------------------------------------------------------- access


class StructuredAccess:
    """Decides, reads, re-grounds and rewrites; one instance per episode.

    Args:
        spec: the episode's specification (its ``reads`` are the permitted read kinds).
        agent_decided: ablation: read at every subgoal, for every noun phrase, whether or
            not the structural test finds a history-dependent slot, and ignore the permissions.
        read_uncertain: also answer from records whose status is ``uncertain``.
        record_position_fallback: when re-grounding fails, use the record's stored position
            (where the memory itself last saw the object) instead of abstaining: an ablation of
            current-view re-grounding; nothing here reads the simulator.
    """

    def __init__(
        self,
        spec: MemorySpec,
        *,
        agent_decided: bool = False,
        read_uncertain: bool = False,
        record_position_fallback: bool = False,
    ) -> None:
        self.spec = spec
        self.agent_decided = agent_decided
        self.read_uncertain = read_uncertain
        self.record_position_fallback = record_position_fallback

    # ----------------------------------------------------------------- deciding

    def queries(self, sg: Subgoal) -> list[Query]:
        """The slots of ``sg`` that memory should try to answer."""
        out: list[Query] = []
        for i, np_ in enumerate(sg.noun_phrases):
            q = slot_query(np_, i)
            if q is None and self.agent_decided:
                q = identity_query(np_, i)
            if q is not None:
                out.append(q)
        return out

    def _readable(self, record: EntityRecord) -> bool:
        return record.status.readable or (self.read_uncertain and record.status is EntityStatus.UNCERTAIN)

    @staticmethod
    def _matches(record: EntityRecord, q: Query) -> bool:
        if q.binding is not None:
            return record.binding == q.binding
        if q.colour is not None:
            return record.identity == q.identity
        return record.role == q.role or record.identity == q.identity

    def lookup(
        self, q: Query, store: MemoryStore, answerers: Sequence[Answerer] = ()
    ) -> tuple[str | None, EntityRecord | None, str, str | None]:
        """Find the record answering ``q``: ``(key, record, reason, status)``; key/record are None when abstaining."""
        matches = [(k, r) for k, r in store.entities().items() if self._matches(r, q)]
        readable = [(k, r) for k, r in matches if self._readable(r)]
        if q.colour is not None and q.kind in (ReadKind.HIGHLIGHT_RELATION, ReadKind.DEMO_REFERENCE):
            # "the highlighted cube, which is blue": the colour names the recalled object itself.
            # (In "the red container that hides ..." it would describe the cover, so covers skip this.)
            same_colour = [(k, r) for k, r in readable if q.colour in r.identity.lower().split()]
            stated = any(q.colour in r.identity.lower().split() for _, r in matches)
            if q.kind is ReadKind.HIGHLIGHT_RELATION and not stated:
                # the colour of a marked object is as history-dependent as its place: a proposal that
                # guessed it wrong is answered by the marked objects whatever their colour (and the
                # read restates the colour)
                same_colour = readable
            readable = same_colour
        if not readable:
            for answerer in answerers:
                record = answerer.answer(q, store)
                if record is not None and self._readable(record):
                    return f"{answerer.name}:answer", record, f"{READ}: answered by {answerer.name}", record.status.value
            if matches:
                statuses = sorted({r.status.value for _, r in matches})
                return None, None, f"{NO_RECORD}: no readable record for {q.describe()!r} (found {', '.join(statuses)})", statuses[0]
            return None, None, f"{NO_RECORD}: nothing in memory answers {q.describe()!r}", None
        if len(readable) > 1:
            if q.kind is ReadKind.HIGHLIGHT_RELATION:
                # several marked objects not handled yet (a handled one loses its binding): each is a
                # right answer to this pick, so take the first in the memory's own order. The
                # proposal's position word ("the second highlighted cube") is never used to choose: it
                # is the proposer's count, not evidence the memory has.
                key, record = readable[0]
                return key, record, f"{READ}: {len(readable)} marked objects left, took the first", record.status.value
            return None, None, f"{AMBIGUOUS}: {len(readable)} records answer {q.describe()!r}", None
        key, record = readable[0]
        return key, record, READ, record.status.value

    # ----------------------------------------------------------------- revising

    def revise(
        self,
        proposed: str,
        frame: Frame,
        store: MemoryStore,
        reground: Regrounder,
        answerers: Sequence[Answerer] = (),
    ) -> tuple[str, list[ReadTrace]]:
        """Revise one proposal; return the text to execute and the traces of this revision.

        The text is ``proposed`` itself (byte for byte) unless a read moved a point, in
        which case it is the canonical form of the rewritten subgoal.
        """
        step = frame.step
        try:
            sg = parse_subgoal(proposed)
        except SubgoalParseError as exc:
            trace = ReadTrace(step, "", proposed, None, None, None, proposed, True, f"{UNPARSEABLE}: {exc.problem}")
            return proposed, [trace]
        traces: list[ReadTrace] = []
        queries = self.queries(sg)
        if not queries and self.agent_decided:
            traces.append(ReadTrace(step, "", proposed, None, None, None, proposed, True, f"{NO_SLOT}: no argument to read"))
        current = sg
        current_text = proposed
        for q in queries:
            kind = None if q.kind is None else q.kind.value
            if q.kind is not None and not self.agent_decided and not self.spec.allows(q.kind):
                traces.append(
                    ReadTrace(step, q.describe(), proposed, None, None, None, current_text, True,
                              f"{NOT_PERMITTED}: the goal does not call for {q.kind.value} reads", kind)
                )
                continue
            key, record, reason, status = self.lookup(q, store, answerers)
            if record is None:
                traces.append(ReadTrace(step, q.describe(), proposed, None, None, status, current_text, True, reason, kind))
                continue
            point = reground(record, frame)
            how = "re-grounded in the current view"
            if point is None and self.record_position_fallback and record.position is not None:
                point, how = Point(*record.position), "stored position (re-grounding failed)"
            if point is None:
                why = "frame has no image" if frame.rgb is None else "not found in the current view"
                traces.append(
                    ReadTrace(step, q.describe(), proposed, None, key, status, current_text, True,
                              f"{NO_GROUNDING}: {record.identity!r} {why}", kind)
                )
                continue
            if current.noun_phrases[q.np_index].point != point:
                current = current.with_noun_phrase_point(q.np_index, point)
                current_text = format_subgoal(current)
            recolored = _restate_colour(current_text, q, record)
            if recolored != current_text:
                current, current_text = parse_subgoal(recolored), recolored
            # else: the proposal already points there; keep its text byte for byte
            detail = reason if reason != READ else f"{READ}: {how}"
            traces.append(
                ReadTrace(step, q.describe(), proposed, f"{record.identity} at {point}", key, status, current_text, False, detail, kind)
            )
        return current_text, traces


def _restate_colour(text: str, q: Query, record: EntityRecord) -> str:
    """For a marked object, state the recalled object's colour where the proposal guessed another
    ("the highlighted cube, which is red" -> "..., which is blue"); other reads keep their words."""
    if q.kind is not ReadKind.HIGHLIGHT_RELATION or q.colour is None:
        return text
    colour = colour_of(record.identity.split())
    if colour is None or colour == q.colour:
        return text
    out = re.sub(rf"\b(which|that) (is|are) (the |a |an )?{q.colour}\b", rf"\1 \2 \3{colour}", text, count=1)
    if out == text:
        out = re.sub(rf"\b{q.colour} {q.role}\b", f"{colour} {q.role}", text, count=1)
    return out


def gate_abstention_trace(step: int, tool_name: str, proposed: str, text: str, why: str,
                          kind: ReadKind | None) -> ReadTrace:
    """The trace of a tool gate that abstained (``subgoals.edits.Abstain``): ``text`` stands."""
    return ReadTrace(step, f"gate:{tool_name}", proposed, None, None, None, text, True,
                     f"{GATE_ABSTAINED}: {tool_name}: {why}", None if kind is None else kind.value)


def gate_trace(step: int, tool_name: str, proposed: str, before: str, after: str, kind: ReadKind | None) -> ReadTrace:
    """The trace of a tool gate that rewrote ``before`` into ``after``."""
    return ReadTrace(
        step, f"gate:{tool_name}", proposed, after, None, None, after, False, f"{GATE}: {tool_name} rewrote {before!r}",
        None if kind is None else kind.value,
    )

