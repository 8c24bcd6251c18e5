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

The tables are in :mod:`memory.language.words` (the one word table); this module only applies them.
"""

from __future__ import annotations

import re

from memory.language.words import COLOUR_WORDS, CONCEPT_NOUNS, HIGHLIGHT_PATTERN
from subgoals.numbers import ordinal_digits

__all__ = ["COLOUR_PATTERN", "canonical_text", "normalise"]

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
