"""A small grammar for RoboMME-style subgoal strings.

Every part of the project passes subgoals around as plain English strings such as
``"pick up the red cube at <142, 97> for the first time"``: the composer proposes them,
the memory layer may rewrite a point in them, the scripted policy executes them and the
recorder draws them. This module is the one place that knows how such a string is put
together, so that nobody else has to write a regular expression for ``<y, x>``.

Design choices, and why:

* **Lossless.** A parsed :class:`Subgoal` keeps every token of its text, in order, as a
  sequence of *parts* (noun phrases, bare points and literal word runs). Formatting walks
  the parts, so ``format_subgoal(parse_subgoal(t)) == t`` holds for every text ``t``
  already in canonical spacing, whatever its words are. Rewriting one point therefore
  never disturbs the rest of the sentence.
* **Canonical spacing.** Tokens are separated by one space; ``,`` and trailing ``.;:!?``
  hug the word before them; points are written ``<y, x>``. Any other spacing
  (``"<142,97>"``, double spaces) still parses and formats to the canonical text.
* **Strict about points, lenient about words.** The only malformed inputs are empty
  text, broken or unbalanced ``<...>``, and coordinates that are not integers in 0..255:
  those raise :class:`SubgoalParseError`, whose message quotes the text. Unknown words
  are never an error; the structural analysis (verb, noun phrases, ordinal, directions)
  is best effort and built from closed word classes only, so unusual wording degrades
  to literal text instead of failing.

``<y, x>`` are integer pixel (row, column) coordinates in the 256x256 front image.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Union

from subgoals.numbers import ORDINAL_PATTERN, as_integer, is_ordinal_word, number_word, ordinal_word, parse_ordinal, small_int

__all__ = [
    "COORD_MAX",
    "COORD_MIN",
    "DIRECTION_WORDS",
    "NounPhrase",
    "Part",
    "Point",
    "Subgoal",
    "SubgoalParseError",
    "format_subgoal",
    "is_ordinal_word",
    "number_word",
    "ordinal_word",
    "parse_ordinal",
    "without_ordinals",
    "parse_subgoal",
    "points",
    "points_in",
    "replace_point",
    "strip_points",
    "try_parse",
    "ungrounded",
]

COORD_MIN = 0
COORD_MAX = 255  # the front camera is 256x256

# --------------------------------------------------------------------------- numbers
# (spelled and read in subgoals.numbers; re-exported here because subgoal text carries them)

_ORDINAL_RE = ORDINAL_PATTERN
_FOR_THE_NTH_TIME = re.compile(rf"\s+for the {_ORDINAL_RE} time\b", re.IGNORECASE)
_NTH_MODIFIER = re.compile(rf"\b(the|a|an) {_ORDINAL_RE} (?=\w)", re.IGNORECASE)


def without_ordinals(text: str) -> str:
    """``text`` with every position word removed: ``"pick up the second red cube at <1, 2> for the
    third time"`` -> ``"pick up the red cube at <1, 2>"``.

    A memoryless predictor cannot know how many times something happened; a subgoal it proposes
    must not carry a count taken from the simulator's truth.
    """
    return _NTH_MODIFIER.sub(r"\1 ", _FOR_THE_NTH_TIME.sub("", text))


# --------------------------------------------------------------------------- word classes
# Closed classes only: an open-class word (noun, adjective, unknown) is never a boundary.

_DETERMINERS = frozenset(
    "the a an another both all each every its their this these those some any".split()
)
_PRONOUNS = frozenset("it them itself".split())
_PARTICLES = frozenset("up down off out away back".split())
_PREPOSITIONS = frozenset(
    (
        "at to onto into on in with from by for of around above below under over near toward towards "
        "behind beside between across along through inside upon within against"
    ).split()
)
_CONJUNCTIONS = frozenset("and or then but so while when until before after as just finally also exactly".split())
_RELATIVES = frozenset("that which who whose where".split())
_PARTICIPLES = frozenset("hiding covering containing holding concealing".split())
_ADVERBS = frozenset(
    "clockwise counterclockwise anticlockwise counter-clockwise again once twice thrice together carefully".split()
)
_AUXILIARIES = frozenset("is are was were be been being has have had do does did can will".split())

_POST_STARTERS = _RELATIVES | _PARTICIPLES
_NOT_A_VERB = _DETERMINERS | _PRONOUNS

# A noun phrase stops growing at any of these.
_NP_STOP = (
    _DETERMINERS
    | _PRONOUNS
    | _PREPOSITIONS
    | _CONJUNCTIONS
    | _RELATIVES
    | _PARTICIPLES
    | _ADVERBS
    | _AUXILIARIES
)

DIRECTION_WORDS = frozenset(
    (
        "forward backward left right forward-left forward-right backward-left backward-right "
        "clockwise counterclockwise anticlockwise counter-clockwise"
    ).split()
)
"""Movement directions and circling senses reported by :attr:`Subgoal.directions`."""

_TIME_PHRASE = re.compile(r"\bfor the (\S+) time\b")

# --------------------------------------------------------------------------- data types


class SubgoalParseError(ValueError):
    """A subgoal string that cannot be read; the message quotes the offending text."""

    def __init__(self, text: object, problem: str):
        self.text = text
        self.problem = problem
        shown = repr(text) if not isinstance(text, str) or len(text) <= 200 else repr(text[:200] + "...")
        super().__init__(f"malformed subgoal {shown}: {problem}")


@dataclass(frozen=True, order=True)
class Point:
    """A pixel in the 256x256 front image, as (row ``y``, column ``x``)."""

    y: int
    x: int

    def __post_init__(self) -> None:
        for name in ("y", "x"):
            raw = getattr(self, name)
            value = as_integer(raw, ValueError, f"point coordinate {name}={raw!r} must be an integer")
            if not COORD_MIN <= value <= COORD_MAX:
                raise ValueError(f"point coordinate {name}={value} is outside {COORD_MIN}..{COORD_MAX}")
            object.__setattr__(self, name, int(value))

    def __str__(self) -> str:
        return f"<{self.y}, {self.x}>"

    def as_tuple(self) -> tuple[int, int]:
        return (self.y, self.x)


@dataclass(frozen=True)
class NounPhrase:
    """One argument of a subgoal, e.g. ``the container at <80, 90> that hides the green cube``.

    Attributes:
        determiner: ``"the"``, ``"another"``, ...; ``None`` for a pronoun (``it``) or a bare noun.
        modifiers: the words between determiner and head (``("second", "highlighted")``).
        head: the head noun (``"cube"``) or pronoun (``"it"``).
        post_modifiers: clauses after the head, each as canonical text
            (``"that hides the green cube"``, ``", which is blue"``).
        point: the ``at <y, x>`` attached to this phrase, if any.
        point_slot: how many post-modifiers come before the point (0 = right after the head),
            so that both word orders format back exactly.
    """

    determiner: str | None
    modifiers: tuple[str, ...]
    head: str
    post_modifiers: tuple[str, ...] = ()
    point: Point | None = None
    point_slot: int = 0

    @property
    def phrase(self) -> str:
        """Modifiers and head without determiner or point: ``"second highlighted cube"``."""
        return " ".join((*self.modifiers, self.head))

    @property
    def text(self) -> str:
        """The phrase as it reads in the subgoal, point included."""
        return _render(self._tokens())

    def _tokens(self) -> list[_Token]:
        toks: list[_Token] = []
        if self.determiner:
            toks += _tokens_of(self.determiner)
        for word in self.modifiers:
            toks += _tokens_of(word)
        toks += _tokens_of(self.head)
        slot = max(0, min(self.point_slot, len(self.post_modifiers)))
        for i, post in enumerate(self.post_modifiers):
            if i == slot and self.point is not None:
                toks += [("word", "at"), ("point", self.point)]
            toks += _tokens_of(post)
        if self.point is not None and slot >= len(self.post_modifiers):
            toks += [("word", "at"), ("point", self.point)]
        return toks

    def to_dict(self) -> dict:
        return {
            "determiner": self.determiner,
            "modifiers": list(self.modifiers),
            "head": self.head,
            "post_modifiers": list(self.post_modifiers),
            "point": None if self.point is None else [self.point.y, self.point.x],
            "point_slot": self.point_slot,
        }


Part = Union[NounPhrase, Point, str]
"""A piece of a subgoal after its verb: a noun phrase, a bare point, or literal words."""


@dataclass(frozen=True)
class Subgoal:
    """A parsed subgoal: its verb phrase followed by ordered parts.

    ``noun_phrases``, ``points``, ``ordinal`` and ``directions`` are derived from the parts,
    so they can never disagree with what :func:`format_subgoal` writes.

    Attributes:
        verb: the verb phrase, e.g. ``"pick up"``, ``"Hook"``; empty if the text starts otherwise.
        parts: everything after the verb, in order.
        text: the original text this was parsed from (informational; formatting ignores it).
    """

    verb: str
    parts: tuple[Part, ...]
    text: str = field(default="", compare=False)

    @property
    def noun_phrases(self) -> tuple[NounPhrase, ...]:
        return tuple(p for p in self.parts if isinstance(p, NounPhrase))

    @property
    def points(self) -> tuple[Point, ...]:
        """Every point in reading order, attached to a noun phrase or not."""
        out: list[Point] = []
        for part in self.parts:
            if isinstance(part, Point):
                out.append(part)
            elif isinstance(part, NounPhrase) and part.point is not None:
                out.append(part.point)
        return tuple(out)

    @property
    def ordinal(self) -> int | None:
        """``2`` for "... for the second time" or "the second highlighted cube"; else ``None``."""
        for part in self.parts:
            if isinstance(part, str):
                m = _TIME_PHRASE.search(part.lower())
                if m and is_ordinal_word(m.group(1)):
                    return parse_ordinal(m.group(1))
        for np_ in self.noun_phrases:
            for word in np_.modifiers:
                if is_ordinal_word(word):
                    return parse_ordinal(word)
        return None

    @property
    def directions(self) -> tuple[str, ...]:
        """Direction and circling words in reading order (``("left", "clockwise")``)."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                words = [v for k, v in _tokens_of(part) if k == "word"]
            elif isinstance(part, NounPhrase):
                words = [*part.modifiers, part.head]
            else:
                continue
            out += [w.lower() for w in words if w.lower() in DIRECTION_WORDS]
        return tuple(out)

    def with_point(self, index: int, point: Point) -> Subgoal:
        """Return a copy whose ``index``-th point (reading order, negatives allowed) is ``point``."""
        return _set_point(self, index, point)

    def with_noun_phrase_point(self, np_index: int, point: Point | None) -> Subgoal:
        """Return a copy where the ``np_index``-th noun phrase carries ``point`` (added if absent)."""
        phrases = [i for i, p in enumerate(self.parts) if isinstance(p, NounPhrase)]
        if not -len(phrases) <= np_index < len(phrases):
            raise IndexError(f"noun phrase index {np_index} out of range for {format_subgoal(self)!r}")
        where = phrases[np_index]
        parts = list(self.parts)
        parts[where] = replace(parts[where], point=point)
        return replace(self, parts=tuple(parts))

    def to_dict(self) -> dict:
        return {
            "text": format_subgoal(self),
            "verb": self.verb,
            "noun_phrases": [np_.to_dict() for np_ in self.noun_phrases],
            "points": [[p.y, p.x] for p in self.points],
            "ordinal": self.ordinal,
            "directions": list(self.directions),
        }

    def __str__(self) -> str:
        return format_subgoal(self)


# --------------------------------------------------------------------------- lexer

_Token = tuple  # ("word" | "punct", str) or ("point", Point)

_LEX = re.compile(
    r"(?P<ws>\s+)|(?P<pt><[^<>]*>)|(?P<comma>,)|(?P<stray>[<>])|(?P<word>[^\s,<>]+)"
)
_POINT_BODY = re.compile(r"\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*\Z")
_DECIMAL = re.compile(r"\s*-?[0-9]*\.[0-9]*\s*\Z|\s*-?[0-9]+\s*\Z")
_TRAILING = re.compile(r"(.*?)([.;:!?]*)\Z", re.S)


def _point_from(body: str, raw: str, text: str) -> Point:
    if len(raw) > 40:
        raw = raw[:37] + "..."
    m = _POINT_BODY.match(body)
    if m is None:
        if not body.strip():
            raise SubgoalParseError(text, f"empty point {raw!r} (an unfilled placeholder)")
        pieces = body.split(",")
        if len(pieces) == 2 and all(_DECIMAL.match(p) for p in pieces):
            raise SubgoalParseError(text, f"non-integer coordinate in {raw!r}; expected <y, x> in whole pixels")
        raise SubgoalParseError(text, f"garbled point {raw!r}; expected <y, x> with two integers")
    values = []
    for name, digits in (("y", m.group(1)), ("x", m.group(2))):
        value = small_int(digits.lstrip("-").lstrip("0") or "0")
        if value is None or digits.startswith("-") or not COORD_MIN <= value <= COORD_MAX:
            shown = digits if len(digits) <= 12 else digits[:9] + "..."
            raise SubgoalParseError(text, f"coordinate {name}={shown} in {raw!r} is outside {COORD_MIN}..{COORD_MAX}")
        values.append(value)
    return Point(*values)


def _lex(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in _LEX.finditer(text):
        kind = m.lastgroup
        if kind == "ws":
            continue
        if kind == "pt":
            tokens.append(("point", _point_from(m.group()[1:-1], m.group(), text)))
        elif kind == "comma":
            tokens.append(("punct", ","))
        elif kind == "stray":
            raise SubgoalParseError(
                text, f"unbalanced {m.group()!r} at character {m.start()}; points are written <y, x>"
            )
        else:
            base, trail = _TRAILING.match(m.group()).groups()
            if base:
                tokens.append(("word", base))
            tokens += [("punct", ch) for ch in trail]
    return tokens


def _tokens_of(piece: str) -> list[_Token]:
    return _lex(piece)


def _render(tokens: Sequence[_Token]) -> str:
    out: list[str] = []
    for kind, value in tokens:
        if out and kind != "punct":
            out.append(" ")
        out.append(str(value))
    return "".join(out)


# --------------------------------------------------------------------------- parser


def _is_word(tokens: Sequence[_Token], i: int, *, exact: str | None = None, among=None) -> bool:
    if i >= len(tokens) or tokens[i][0] != "word":
        return False
    if exact is not None:
        return tokens[i][1] == exact
    if among is not None:
        return tokens[i][1].lower() in among
    return True


def _is_point_at(tokens: Sequence[_Token], i: int) -> bool:
    """``at <y, x>`` starts at ``i`` (only lower-case ``at`` attaches, so formatting is exact)."""
    return _is_word(tokens, i, exact="at") and i + 1 < len(tokens) and tokens[i + 1][0] == "point"


def _is_time_phrase(tokens: Sequence[_Token], i: int) -> bool:
    """``for the <word> time`` starts at ``i``."""
    return (
        _is_word(tokens, i, among={"for"})
        and _is_word(tokens, i + 1, among={"the"})
        and _is_word(tokens, i + 2)
        and _is_word(tokens, i + 3, among={"time"})
    )


def _starts_post_modifier(tokens: Sequence[_Token], i: int) -> bool:
    if _is_word(tokens, i, among=_POST_STARTERS):
        return True
    return i < len(tokens) and tokens[i] == ("punct", ",") and _is_word(tokens, i + 1, among=_RELATIVES)


def _post_modifier_ends(tokens: Sequence[_Token], j: int, start: int) -> bool:
    kind, value = tokens[j]
    if kind == "point" or _is_point_at(tokens, j) or _is_time_phrase(tokens, j):
        return True
    if kind == "punct" and j > start:
        return True
    return kind == "word" and value.lower() == "then"


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _lex(text)
        self.parts: list[Part] = []
        self.literal: list[_Token] = []

    def flush(self) -> None:
        if self.literal:
            self.parts.append(_render(self.literal))
            self.literal = []

    def run(self) -> Subgoal:
        toks = self.tokens
        if not toks:
            raise SubgoalParseError(self.text, "empty subgoal")
        i = 0
        verb_words: list[str] = []
        if _is_word(toks, 0) and toks[0][1].lower() not in _NOT_A_VERB:
            verb_words.append(toks[0][1])
            i = 1
            if _is_word(toks, 1, among=_PARTICLES):
                verb_words.append(toks[1][1])
                i = 2
        while i < len(toks):
            i = self.step(i)
        self.flush()
        return Subgoal(verb=" ".join(verb_words), parts=tuple(self.parts), text=self.text)

    def step(self, i: int) -> int:
        toks = self.tokens
        kind, value = toks[i]
        if kind == "word" and _is_time_phrase(toks, i):
            self.literal += toks[i : i + 4]
            return i + 4
        if kind == "word" and value.lower() in _PRONOUNS:
            self.flush()
            return self.noun_phrase(i + 1, determiner=None, words=[value])
        if kind == "word" and value.lower() in _DETERMINERS:
            j = i + 1
            while _is_word(toks, j) and toks[j][1].lower() not in _NP_STOP:
                j += 1
            if j > i + 1:
                self.flush()
                return self.noun_phrase(j, determiner=value, words=[v for _, v in toks[i + 1 : j]])
            self.literal.append(toks[i])
            return i + 1
        if _is_point_at(toks, i):
            # A bare noun right before "at <y, x>" ("pick up red cube at <1, 2>") still owns the point.
            k = len(self.literal)
            while k > 0 and self.literal[k - 1][0] == "word" and self.literal[k - 1][1].lower() not in _NP_STOP:
                k -= 1
            if k < len(self.literal):
                words = [v for _, v in self.literal[k:]]
                self.literal = self.literal[:k]
                self.flush()
                return self.noun_phrase(i, determiner=None, words=words)
            self.literal.append(toks[i])
            self.flush()
            self.parts.append(toks[i + 1][1])
            return i + 2
        if kind == "point":
            self.flush()
            self.parts.append(value)
            return i + 1
        self.literal.append(toks[i])
        return i + 1

    def noun_phrase(self, i: int, determiner: str | None, words: list[str]) -> int:
        """Build the phrase whose words are known; read its point and post-modifiers from ``i``."""
        toks = self.tokens
        point: Point | None = None
        slot = 0
        posts: list[str] = []
        if _is_point_at(toks, i):
            point = toks[i + 1][1]
            i += 2
        while i < len(toks) and _starts_post_modifier(toks, i):
            start = i
            i += 1
            inner_noun = False  # the clause already holds "determiner + word" (its own object)
            while i < len(toks) and not _post_modifier_ends(toks, i, start):
                if _is_word(toks, i, among=_PREPOSITIONS) and (
                    inner_noun or _is_word(toks, i - 1, among=_PARTICLES)
                ):
                    # "that hides the green cube | onto ...", "that was picked up | onto ...": the
                    # clause is complete; "that was placed on the target" keeps its object.
                    break
                if _is_word(toks, i, among=_DETERMINERS) and _is_word(toks, i + 1) and toks[i + 1][1].lower() not in _NP_STOP:
                    inner_noun = True
                i += 1
            posts.append(_render(toks[start:i]))
            if point is None and _is_point_at(toks, i):
                point, slot = toks[i + 1][1], len(posts)
                i += 2
        self.parts.append(
            NounPhrase(
                determiner=determiner,
                modifiers=tuple(words[:-1]),
                head=words[-1],
                post_modifiers=tuple(posts),
                point=point,
                point_slot=slot,
            )
        )
        return i


# --------------------------------------------------------------------------- public functions


def parse_subgoal(text: str) -> Subgoal:
    """Parse a subgoal string.

    Raises:
        SubgoalParseError: for non-string or empty input, unbalanced or garbled ``<...>``,
            non-integer coordinates, or coordinates outside 0..255.
    """
    if not isinstance(text, str):
        raise SubgoalParseError(text, f"expected a string, got {type(text).__name__}")
    return _Parser(text).run()


def try_parse(text: str) -> Subgoal | None:
    """Like :func:`parse_subgoal`, but return ``None`` for malformed input."""
    try:
        return parse_subgoal(text)
    except SubgoalParseError:
        return None


def _subgoal_tokens(sg: Subgoal) -> Iterator[_Token]:
    if sg.verb:
        yield from _tokens_of(sg.verb)
    for part in sg.parts:
        if isinstance(part, NounPhrase):
            yield from part._tokens()
        elif isinstance(part, Point):
            yield ("point", part)
        else:
            yield from _tokens_of(part)


def format_subgoal(sg: Subgoal) -> str:
    """Write a subgoal back as canonical text (``format_subgoal(parse_subgoal(t)) == t`` for canonical ``t``)."""
    return _render(list(_subgoal_tokens(sg)))


def points(text: str) -> tuple[Point, ...]:
    """All points of a subgoal in reading order."""
    return parse_subgoal(text).points


def points_in(text: str | None) -> tuple[Point, ...]:
    """The points of ``text`` in reading order, or ``()`` when it does not parse.

    For consumers that must act on whatever a composer sent (the executor, the episode recorder):
    a garbled answer such as ``<12, >`` carries no point to act on, and a second, laxer point
    pattern beside the grammar would read one that the memory and the audit do not.
    """
    sg = try_parse(text) if text else None
    return () if sg is None else sg.points


def ungrounded(text: str | None) -> str:
    """``text`` without its points (see :func:`strip_points`), or ``text`` itself when it does not
    parse: the form a policy prompt or a same-motion key compares."""
    if not text:
        return ""
    try:
        return strip_points(text)
    except SubgoalParseError:
        return text


def _set_point(sg: Subgoal, index: int, point: Point | None) -> Subgoal:
    holders = [
        i
        for i, part in enumerate(sg.parts)
        if isinstance(part, Point) or (isinstance(part, NounPhrase) and part.point is not None)
    ]
    if not -len(holders) <= index < len(holders):
        raise IndexError(
            f"point index {index} out of range: {format_subgoal(sg)!r} has {len(holders)} point(s)"
        )
    where = holders[index]
    parts = list(sg.parts)
    old = parts[where]
    if isinstance(old, NounPhrase):
        parts[where] = replace(old, point=point)
    else:
        parts[where] = point
    return replace(sg, parts=tuple(parts))


def replace_point(text: str, index: int, point: Point) -> str:
    """Return ``text`` (canonicalised) with its ``index``-th point replaced by ``point``.

    Raises:
        SubgoalParseError: if ``text`` is malformed.
        IndexError: if the subgoal has no point at ``index``.
        TypeError: if ``point`` is not a :class:`Point`.
    """
    if not isinstance(point, Point):
        raise TypeError(f"replace_point needs a Point, got {point!r}")
    return format_subgoal(_set_point(parse_subgoal(text), index, point))


def strip_points(text: str) -> str:
    """Remove every ``at <y, x>`` (and any bare point): the ungrounded form of a subgoal."""
    sg = parse_subgoal(text)
    parts: list[Part] = []
    for part in sg.parts:
        if isinstance(part, NounPhrase):
            parts.append(replace(part, point=None, point_slot=0))
        elif isinstance(part, Point):
            if parts and isinstance(parts[-1], str):
                toks = _tokens_of(parts[-1])
                if toks and toks[-1] == ("word", "at"):
                    toks = toks[:-1]
                    if toks:
                        parts[-1] = _render(toks)
                    else:
                        parts.pop()
        else:
            if parts and isinstance(parts[-1], str):
                parts[-1] = _render(_tokens_of(parts[-1]) + _tokens_of(part))
            else:
                parts.append(part)
    return format_subgoal(replace(sg, parts=tuple(parts)))
