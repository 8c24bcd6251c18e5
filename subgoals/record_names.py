"""The names of memory records that the envs' audit probes ask about: one contract, two readers.

Why here: the envs' probes (``envs/core/probes.py``) ask "what does the record named N hold?" and the
memory's tools write records under those names. When the two sides spelt the names separately, a
rename on one side silently scored nothing. Both import this module (it sits in the bottom layer,
which imports nothing of the project), and :func:`check_record_name` refuses a probe that names a
record no tool writes, listing the known names.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "FIXED_NAMES", "RecordName", "check_record_name", "cover_binding", "deposited", "highlight_binding", "highlight_count",
    "reference_binding", "reference_picks",
]


class RecordName:
    """Records with a fixed name: counts (progress records), bindings and routes (trajectories).

    Plain ``str`` constants (not an Enum), so a name keys dicts and rows exactly as its text does."""

    REPETITIONS: Final = "repetitions"
    TARGET_VISITS: Final = "target visits"
    ROUND_TRIPS: Final = "round trips"
    PASSES: Final = "passes"
    HIGHLIGHTED_CUBES: Final = "highlighted cubes"
    HIGHLIGHTED_CUBE: Final = "highlighted cube"
    REFERENCE_CUBE: Final = "reference cube"
    REFERENCE_TARGET: Final = "reference target"
    REFERENCE_CUBE_PICKS: Final = "picks of the reference cube"
    DEMONSTRATED_PLACES: Final = "demonstrated places"
    DEMONSTRATED_ROUTE: Final = "demonstrated route"
    DEMONSTRATED_PROCEDURE: Final = "demonstrated procedure"
    DEMONSTRATED_INSERTION: Final = "demonstrated insertion"
    PEG_END_GRASPED: Final = "peg end grasped in the demonstration"


FIXED_NAMES: tuple[str, ...] = tuple(v for k, v in vars(RecordName).items() if k.isupper())


def cover_binding(identity: str) -> str:
    """Binding text of a cover over ``identity``: ``"cover hiding the green cube"``."""
    return f"cover hiding the {identity}"


def highlight_binding(role: str) -> str:
    """Binding text of an object marked during the episode: ``"highlighted cube"``."""
    return f"highlighted {role}"


def reference_binding(role: str) -> str:
    """Binding text of the object the demonstration singled out: ``"reference target"``."""
    return f"reference {role}"


def highlight_count(role: str) -> str:
    """Count record of the objects marked during the episode: ``"highlighted cubes"``."""
    return f"{highlight_binding(role)}s"


def reference_picks(role: str) -> str:
    """Count record of the picks of the object the demonstration singled out: ``"picks of the reference cube"``."""
    return f"picks of the {reference_binding(role)}"


def deposited(colour: str, role: str) -> str:
    """Count record of the objects of ``role`` and ``colour`` put in a receptacle: ``"deposited red cube"``."""
    return f"deposited {colour} {role}"


_PATTERNS = {
    # the cover-binding tool writes one per binding the goal names, whatever its object noun
    # ("cover hiding the red cube", "cover hiding the red ball")
    "cover hiding the <colour> <object>": re.compile(r"cover hiding the [a-z]+ [a-z]+"),
    # the deposit counter writes one per colour the goal counts, whatever its object noun
    "deposited <colour> <object>": re.compile(r"deposited [a-z]+ [a-z]+"),
}


def check_record_name(name: str) -> str:
    """``name`` if it is a record name of the contract; a ``ValueError`` listing the known ones otherwise."""
    if name in FIXED_NAMES or any(p.fullmatch(name) for p in _PATTERNS.values()):
        return name
    known = sorted(FIXED_NAMES) + sorted(_PATTERNS)
    raise ValueError(f"unknown record name {name!r} (known: {', '.join(known)})")
