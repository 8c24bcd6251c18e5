"""The benchmark's words, kept apart from the mechanisms that use them.

Everything the memory knows about the tabletop domain as *language* lives here: the
colour names objects come in, the role nouns and their synonyms, the modifiers that
point into history, position words, and the phrasing of relations. The parser in
:mod:`memory.language.spec` and the structural test in :mod:`memory.control.access` only combine these
lists; swapping this module is how the same machinery would be aimed at another
benchmark. No task is named anywhere: task knowledge reaches the memory only through
the wording of the goal and of the proposed subgoal.
"""

from __future__ import annotations

from subgoals.grammar import DIRECTION_WORDS
from subgoals.numbers import is_ordinal_word, number_word, ordinal_word, parse_ordinal

__all__ = [
    "APPEARANCE_WORDS",
    "COLOUR_WORDS",
    "COUNT_WORDS",
    "DIRECTION_WORDS",
    "HISTORY_MODIFIERS",
    "LAYOUT_ROLES",
    "OBJECT_NOUNS",
    "ORDINAL_WORDS",
    "POSITION_WORDS",
    "PROCEDURE_WORDS",
    "ROLE_SYNONYMS",
    "ROUTE_WORDS",
    "canonical_role",
    "colour_of",
    "cover_binding",
    "highlight_binding",
    "is_ordinal_word",
    "number_word",
    "ordinal_word",
    "parse_ordinal",
    "reference_binding",
]

COLOUR_WORDS: tuple[str, ...] = ("red", "green", "blue", "yellow", "cyan", "magenta")
"""Object colours the scenes use (the ood split adds yellow, cyan and magenta cubes); the colour
tool has a hue window for each."""

APPEARANCE_WORDS = frozenset(COLOUR_WORDS) | {"white", "gray", "grey", "purple", "salmon", "colored", "coloured"}
"""Words that describe how something looks now: the current view can answer them, so they never trigger a read."""

ORDINAL_WORDS: tuple[str, ...] = tuple(ordinal_word(n) for n in range(1, 11))
COUNT_WORDS: tuple[str, ...] = tuple(number_word(n) for n in range(1, 11))

POSITION_WORDS = frozenset(
    (
        "left right left-side right-side top bottom front back near far nearest farthest closest middle "
        "center centre upper lower other next"
    ).split()
) | frozenset(ORDINAL_WORDS)
"""Where something is (or which in an enumeration): answerable from the view, so not a read."""

ROLE_SYNONYMS: dict[str, str] = {
    "cube": "cube",
    "cubes": "cube",
    "block": "cube",
    "blocks": "cube",
    "container": "cover",
    "containers": "cover",
    "cover": "cover",
    "covers": "cover",
    "cup": "cover",
    "cups": "cover",
    "target": "target",
    "targets": "target",
    "disc": "target",
    "disk": "target",
    "bullseye": "target",
    "button": "button",
    "buttons": "button",
    "bin": "bin",
    "peg": "peg",
    "pegs": "peg",
    "stick": "stick",
    "sticks": "stick",
    "box": "box",
    "end": "end",
    "side": "side",
}
"""Surface noun -> role. Several nouns name one role (a *container* is what the memory calls a *cover*)."""

OBJECT_NOUNS = frozenset({"cube", "cubes", "block", "blocks", "peg", "pegs"})
"""Nouns for movable objects whose identity is worth watching."""

LAYOUT_ROLES = frozenset({"target", "button", "bin", "box"})
"""Roles of stable scene items that go to the layout store."""

HISTORY_MODIFIERS: dict[str, str] = {
    "highlighted": "highlighted",
    "marked": "highlighted",
    "correct": "reference",
    "same": "reference",
    "previous": "reference",
    "original": "reference",
    "demonstrated": "reference",
}
"""Modifier -> kind of history it points into. A slot carrying one cannot be resolved from the current view."""

HISTORY_CLAUSE_WORDS = frozenset({"previously", "before", "earlier", "demonstrated", "same"})
"""Words inside a post-modifier ("that was previously picked up") that make it a history reference."""

ROUTE_WORDS = frozenset({"path", "pattern", "route", "sequence", "order", "trajectory"})
"""Nouns after "same" that name an ordered route the demonstration showed."""

PROCEDURE_WORDS = frozenset({"manner", "way", "method", "motion", "fashion"})
"""Nouns after "same" that name a demonstrated way of doing something."""

COVER_VERBS = frozenset({"hides", "hide", "hiding", "covers", "cover", "covering", "conceals", "concealing", "contains", "containing"})
"""Verbs of a cover relation ("the container that hides the green cube")."""


def canonical_role(noun: str) -> str:
    """Map a surface noun to its role (``"container" -> "cover"``); unknown nouns map to themselves."""
    w = noun.lower()
    if w in ROLE_SYNONYMS:
        return ROLE_SYNONYMS[w]
    if w.endswith("s") and w[:-1] in ROLE_SYNONYMS:
        return ROLE_SYNONYMS[w[:-1]]
    return w


def colour_of(words) -> str | None:
    """The first colour word among ``words`` (any iterable of strings), or ``None``."""
    for word in words:
        if word.lower() in COLOUR_WORDS:
            return word.lower()
    return None


def cover_binding(identity: str) -> str:
    """Binding text of a cover over ``identity``: ``"cover hiding the green cube"``."""
    return f"cover hiding the {identity}"


def highlight_binding(role: str) -> str:
    """Binding text of an object marked during the episode: ``"highlighted cube"``."""
    return f"highlighted {role}"


def reference_binding(role: str) -> str:
    """Binding text of the object the demonstration singled out: ``"reference target"``."""
    return f"reference {role}"
