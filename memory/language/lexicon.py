"""Concepts and their surface words: how a goal's wording is reduced to what it means.

Why: a person asking for "the cup covering the red block" means what the template means by
"the container hiding the red cube". The specifier (:mod:`memory.language.spec`) should see one concept
per meaning, whatever words carry it, so that its structural rules (which object a relation binds,
which number counts what) are written once over concepts instead of once per phrasing.

:func:`canonical_text` rewrites a goal into canonical words:

* object nouns -> ``cube`` / ``peg``; cover nouns -> ``container``; scene items -> ``target`` /
  ``button`` / ``bin`` / ``box`` (plural kept as a trailing ``s`` only where it is a count);
* relation verbs of hiding -> ``hiding``; marks seen during the episode -> ``highlighted``;
* number words and digits stay (``parse_ordinal`` reads both); ``once`` is a count only where it
  is not the conjunction ("once you have placed ...", "once the video is over").

The tables are the whole domain knowledge; :mod:`memory.language.spec` combines them by structure only.
"""

from __future__ import annotations

import re

from memory.language.vocabulary import COLOUR_WORDS
from subgoals.numbers import ordinal_digits

__all__ = [
    "ARRIVAL_WORDS",
    "CONCEPT_NOUNS",
    "COUNT_UNITS",
    "DEMO_WORDS",
    "HANDLING_VERBS",
    "HIDING_WORDS",
    "IMMEDIATE_WORDS",
    "PLACING_VERBS",
    "PRESS_WORDS",
    "PROCEDURE_NOUNS",
    "ROUTE_NOUNS",
    "SAME_WORDS",
    "canonical_text",
]

CONCEPT_NOUNS: dict[str, tuple[str, ...]] = {
    "cube": ("cube", "block", "brick", "cuboid"),
    "peg": ("peg", "rod", "pin", "bar"),
    "container": ("container", "cup", "lid", "bowl", "mug", "shell", "cover"),
    "target": ("target", "disc", "disk", "bullseye", "pad"),
    "button": ("button", "switch"),
    "bin": ("bin", "basket", "bucket", "tub", "trash can", "trashcan", "receptacle"),
    "box": ("box",),
}
"""Canonical noun -> surface nouns (singular; plurals in ``s``/``es`` are recognised)."""

HIDING_WORDS: tuple[str, ...] = (
    "hiding", "hides", "hide", "hidden", "covering", "covers", "concealing", "conceals", "conceal", "concealed",
    "containing", "contains", "holding", "holds", "sheltering", "shelters", "masking", "masks", "underneath",
    "under", "beneath", "below", "inside", "over", "atop",
    # lifting the cover is finding what is under it: "uncover the red cube by lifting its container",
    # "lift another cup to reveal the green cube"
    "uncover", "uncovers", "uncovering", "reveal", "reveals", "revealing", "expose", "exposes", "exposing",
    "find", "finds", "finding",
)
"""Words that relate a cover to what is below it (clause-local with a container and a coloured object)."""

HIGHLIGHT_PATTERN = (
    r"\bhighlight\w*|\bmarked\b|\blit up\b|\blit\b|\billuminated\b|\bglowing\b|\bflagged\b|\bspotlit\b"
    r"|\bwhite (?:area|patch|spot|mark|highlight|disc|disk|circle|light|glow|ring)(?:e?s)?\b"
)
"""Marks the scene showed on objects during the episode ("highlighted", "marked by a white spot")."""

DEMO_WORDS: tuple[str, ...] = ("video", "demonstration", "demo", "demonstrated", "recording", "clip")
"""The conditioning video: the deciding evidence is shown before acting."""

SAME_WORDS: tuple[str, ...] = ("same", "identical", "exact same")
"""A modifier that asks for what the demonstration used."""

PROCEDURE_NOUNS: tuple[str, ...] = ("manner", "way", "method", "fashion", "style", "technique", "approach", "motion")
"""What "the same ..." names when it is a way of doing the task."""

ROUTE_NOUNS: tuple[str, ...] = ("path", "route", "pattern", "trajectory", "course", "track", "sequence")
"""What "the same ..." names when it is an ordered route to retrace."""

HANDLING_VERBS: tuple[str, ...] = (
    "picked", "lifted", "grabbed", "grasped", "taken", "took", "handled", "moved", "chosen", "used", "repicked",
    "raised", "selected", "held", "gripped", "carried", "inserted",
)
"""Past verbs that single out an object handled in the demonstration ("the block that was picked up")."""

PLACING_VERBS: tuple[str, ...] = ("place", "put", "set", "lay", "drop", "leave", "deposit", "rest")
"""Verbs that put an object somewhere."""

PRESS_WORDS: tuple[str, ...] = (
    "pressed", "pushed", "hit", "tapped", "pressing", "pushing", "hitting", "tapping", "press", "push", "tap",
    "activated", "triggered", "clicked",
)
"""Words of the pressing event."""

IMMEDIATE_WORDS: tuple[str, ...] = ("right", "just", "immediately", "directly", "straight")
"""Adverbs that make an event-relative moment the adjacent one ("right before")."""

ARRIVAL_WORDS = (
    r"\breach\w*|\barriv\w*|\bvisit\w*|\bpass\w*|\bcross\w*|\bgets? there\b|\bgets? to\b|\bcomes? by\b"
    r"|\bcomes? to\b|\blands?\b|\bhits? the target\b|\bgoes? over\b|\bmoves? over\b"
    # "the fourth time it is on the target"
    r"|\b(?:is|it's|sits|lies|slides|comes|gets|goes|moves) (?:on|onto|over|across|at) the target\b"
)
"""The moving object's arrival at a place, the event an event ordinal counts."""

COUNT_UNITS: tuple[str, ...] = (
    "times", "time", "round trips", "round trip", "rounds", "round", "repetitions", "repetition", "repeats",
    "cycles", "cycle", "trips", "trip", "swings", "laps",
)
"""What follows a number when it counts repetitions ("three times", "2 round trips")."""

# "once" is the conjunction when a clause follows it ("once you have ...", "once the video is over")
_NUMBERED_EVENT = re.compile(r"\b(visit|pass|time|arrival|crossing|lap|trip|approach)s? (?:number |no |# ?)([1-9][0-9]?)(?:st|nd|rd|th)?\b")
_ONCE_CONJUNCTION = re.compile(
    r"\bonce (?=(?:you|the|that|it|this|these|those|both|all|everything|each|a|an|its|they|we|i|he|she|done|"
    r"finished|complete|completed|over|more|again|there|your|its|every|no)\b)"
)


def _plural_forms(noun: str) -> str:
    if " " in noun:
        return re.escape(noun) + "s?"
    if noun.endswith(("x", "s", "sh", "ch")):
        return re.escape(noun) + "(?:es)?"
    return re.escape(noun) + "s?"


def _noun_pattern(surfaces: tuple[str, ...]) -> re.Pattern:
    alts = sorted(surfaces, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(_plural_forms(s) for s in alts) + r")\b")


_NOUN_PATTERNS = {canonical: _noun_pattern(surfaces) for canonical, surfaces in CONCEPT_NOUNS.items()}
_HIGHLIGHT = re.compile(HIGHLIGHT_PATTERN)


def normalise(goal: str) -> str:
    """Lower case, one space between words, punctuation other than , ; ' - dropped (commas and
    semicolons kept: they end clauses)."""
    text = goal.lower().replace("\u2019", "'")
    text = re.sub(r"[^a-z0-9'\-,; ]+", " ", text)
    text = re.sub(r"\s*([,;])\s*", r" \1 ", text)
    return re.sub(r"\s+", " ", text).strip()


def canonical_text(goal: str) -> str:
    """``goal`` in canonical words (see the module docstring)."""
    text = normalise(goal)
    text = _HIGHLIGHT.sub("highlighted", text)
    # "cover" before an object is the verb ("cups that cover the red cube"); otherwise the noun
    text = re.sub(r"\bcover(?=s? (?:the|a|an|up)\b)", "hide", text)
    text = re.sub(r"\bcovers\b(?= (?:the|a|an)\b)", "hides", text)
    text = re.sub(r"\bcovering\b", "hiding", text)
    for canonical, pattern in _NOUN_PATTERNS.items():
        text = pattern.sub(lambda m, c=canonical: c + (("es" if c == "box" else "s") if _is_plural(m.group(0)) else ""), text)
    text = re.sub(r"\bon top of\b", "atop", text)
    text = _ONCE_CONJUNCTION.sub("when ", text)
    # "3x", "x3": three times; "a pair of" / "a couple of": two
    text = re.sub(r"\b([0-9]{1,2}) ?x\b|\bx ?([0-9]{1,2})\b", lambda m: f"{m.group(1) or m.group(2)} times", text)
    text = re.sub(r"\ba (?:pair|couple) of\b", "two", text)
    # "on visit number 4", "pass no. 3": the ordinal before its event noun, as the templates say it
    text = _NUMBERED_EVENT.sub(lambda m: f"{ordinal_digits(int(m.group(2)))} {m.group(1)}", text)
    text = re.sub(r"\bonce (?=more\b|again\b)", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _is_plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us")) and word not in ("bus",)


COLOUR_PATTERN = "|".join(COLOUR_WORDS)
