"""The one word table of the memory's language front end: every word the memory knows.

Everything the memory knows about the tabletop domain as *language* is a table here: colour names,
object, cover and scene-item nouns with their surface synonyms, the modifiers and clause words
that point into history, position words, the verbs of hiding, handling, placing and pressing, the
units a count is said in. The mechanisms only combine these tables: :mod:`memory.language.lexicon`
rewrites a goal into canonical words, :mod:`memory.language.spec` reads state kinds from it,
:mod:`memory.control.access` decides what a proposal asks of the past. A new noun is one entry in
:data:`CONCEPT_NOUNS`; no task is named anywhere. The texts of records shared with the envs' audit
probes are not words but a contract: :mod:`subgoals.record_names`.
"""

from __future__ import annotations

from enum import Enum

from subgoals.grammar import DIRECTION_WORDS
from subgoals.numbers import is_ordinal_word, number_word, ordinal_word, parse_ordinal

__all__ = [
    "APPEARANCE_WORDS", "ARRIVAL_WORDS", "COLOUR_WORDS", "CONCEPT_NOUNS", "CONCEPT_ROLES", "COUNT_UNITS",
    "COUNT_WORDS", "DEFAULT_OBJECT_ROLE", "DEMO_WORDS", "DIRECTION_WORDS", "HANDLING_VERBS", "HIDING_VERBS", "HIDING_WORDS",
    "HIGHLIGHT_PATTERN", "HISTORY_CLAUSE_WORDS", "HISTORY_MODIFIERS", "IMMEDIATE_WORDS", "KNOWN_ROLES", "LAYOUT_ROLES",
    "OBJECT_PARTS", "OBJECT_ROLES", "ORDINAL_WORDS", "PART_ROLES", "PLACING_VERBS", "POSITION_WORDS", "PRESS_WORDS",
    "PROCEDURE_NOUNS", "ROLE_SYNONYMS", "ROUTE_NOUNS", "SAME_WORDS", "SCENE_ITEM_KINDS", "SceneItemKind", "TOOL_ROLES", "canonical_role",
    "colour_of", "is_known_noun", "is_ordinal_word", "number_word", "object_role", "ordinal_word", "parse_ordinal",
    "scene_items_of_kind",
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

CONCEPT_NOUNS: dict[str, tuple[str, ...]] = {
    "cube": ("cube", "block", "brick", "cuboid"),
    "peg": ("peg", "rod", "pin", "bar"),
    "container": ("container", "cup", "lid", "bowl", "mug", "shell", "cover"),
    "target": ("target", "disc", "disk", "bullseye", "pad"),
    "button": ("button", "switch"),
    "bin": ("bin", "basket", "bucket", "tub", "trash can", "trashcan", "receptacle"),
    "box": ("box",),
    "ball": ("ball", "sphere", "orb"),
}
"""Canonical noun -> surface nouns (singular; plurals in ``s``/``es`` are recognised)."""

CONCEPT_ROLES: dict[str, str] = {"container": "cover"}
"""Canonical noun -> the role the memory's records use, where the two differ (a *container* is what
the records call a *cover*); every other concept is its own role."""

OBJECT_PARTS: dict[str, tuple[str, ...]] = {"peg": ("end", "side")}
"""Object role -> the parts of it a goal or a demonstration can single out ("the same end"). An
object with parts is grasped *by* a part, so what the memory keeps about a demonstration that
singles it out is the grasp (which part, and where it went), not only which object it was."""

TOOL_ROLES = frozenset({"peg"})
"""Object roles the robot can hold to move another object with (a manner's tool): taking hold of
one starts a push with a tool, not a pick of the moved object."""

PART_ROLES: tuple[str, ...] = tuple(dict.fromkeys(p for parts in OBJECT_PARTS.values() for p in parts))
"""Every part role of :data:`OBJECT_PARTS` (``end``, ``side``)."""

EXTRA_ROLES: tuple[str, ...] = ("stick", *PART_ROLES)
"""Roles that are no object concept of a goal but appear in subgoals (the stick, a peg's end or side)."""


def _role_synonyms() -> dict[str, str]:
    out: dict[str, str] = {}
    for concept, surfaces in CONCEPT_NOUNS.items():
        role = CONCEPT_ROLES.get(concept, concept)
        for noun in surfaces:
            out[noun] = role
            out[noun + ("es" if noun.endswith(("x", "s", "sh", "ch")) else "s")] = role
    for role in EXTRA_ROLES:
        out[role] = out[role + "s"] = role
    return out


ROLE_SYNONYMS: dict[str, str] = _role_synonyms()
"""Surface noun (singular or plural) -> role, derived from :data:`CONCEPT_NOUNS`."""

class SceneItemKind(str, Enum):
    """What a stable scene item is for, which decides the state a goal about it asks to keep."""

    PLACE = "place"
    """Objects are set on it or arrive at it: arrivals are counted, demonstrated places listed."""
    SWITCH = "switch"
    """Pressed to finish or to mark a moment."""
    RECEPTACLE = "receptacle"
    """Swallows what is put into it: deposits are counted per kind, since the view no longer shows them."""
    SOCKET = "socket"
    """Something is inserted into it."""


SCENE_ITEM_KINDS: dict[str, SceneItemKind] = {
    "target": SceneItemKind.PLACE,
    "button": SceneItemKind.SWITCH,
    "bin": SceneItemKind.RECEPTACLE,
    "box": SceneItemKind.SOCKET,
}
"""Role of a stable scene item -> what it is for. A new scene item is one entry here besides its
nouns in :data:`CONCEPT_NOUNS`."""

LAYOUT_ROLES = frozenset(SCENE_ITEM_KINDS)
"""Roles of stable scene items that go to the layout store."""

OBJECT_ROLES: tuple[str, ...] = tuple(
    role for role in dict.fromkeys(CONCEPT_ROLES.get(c, c) for c in CONCEPT_NOUNS)
    if role not in LAYOUT_ROLES and role != "cover"
)
"""Roles of the objects a goal names by colour and the robot handles (``cube``, ``peg``, ...): every
concept that is neither a cover nor a stable scene item, in table order. Derived from
:data:`CONCEPT_NOUNS`, so a new object noun is still one entry there: the specifier's object
patterns are built from this tuple."""

DEFAULT_OBJECT_ROLE: str = OBJECT_ROLES[0]
"""The role records use for an object the goal names by no noun of the table ("the highlighted
ones"): the table's first object concept. A reader that falls back to it reports the missing noun
(:func:`memory.language.state_kinds.unserved_of`); it never decides *whether* a state is kept."""

KNOWN_ROLES = frozenset(ROLE_SYNONYMS.values())
"""Every role a noun of the table maps to (objects, covers, scene items, extra roles)."""

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

HIDING_VERBS: tuple[str, ...] = (
    "hiding", "hides", "hide", "hidden", "cover", "covering", "covers", "concealing", "conceals", "conceal",
    "concealed", "containing", "contains", "holding", "holds", "sheltering", "shelters", "masking", "masks",
)
"""Verbs of a cover relation ("the container that hides the green cube", "the cup holding it")."""

HIDING_WORDS: tuple[str, ...] = HIDING_VERBS + (
    "underneath", "under", "beneath", "below", "inside", "over", "atop",
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

def canonical_role(noun: str) -> str:
    """Map a surface noun to its role (``"container" -> "cover"``); unknown nouns map to themselves."""
    w = noun.lower()
    if w in ROLE_SYNONYMS:
        return ROLE_SYNONYMS[w]
    if w.endswith("s") and w[:-1] in ROLE_SYNONYMS:
        return ROLE_SYNONYMS[w[:-1]]
    return w


def scene_items_of_kind(roles, kind: SceneItemKind) -> tuple[str, ...]:
    """The roles among ``roles`` whose scene-item kind (:data:`SCENE_ITEM_KINDS`) is ``kind``, in order."""
    return tuple(r for r in roles if SCENE_ITEM_KINDS.get(r) == kind)


def object_role(phrase: str) -> str | None:
    """The object role a phrase names by its head noun (``"red block" -> "cube"``), or ``None`` when
    its head is no object noun of the table (a scene item, a cover, an unknown word)."""
    words = phrase.split()
    if not words:
        return None
    role = canonical_role(words[-1])
    return role if role in OBJECT_ROLES else None


def is_known_noun(word: str) -> bool:
    """Whether ``word`` (singular or plural) is a noun of the table: a concept's surface word or an extra role."""
    return canonical_role(word) in KNOWN_ROLES


def colour_of(words) -> str | None:
    """The first colour word among ``words`` (any iterable of strings), or ``None``."""
    for word in words:
        if word.lower() in COLOUR_WORDS:
            return word.lower()
    return None
