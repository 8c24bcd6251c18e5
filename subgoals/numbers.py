"""Number and ordinal words: the one home for how a count or a position is spelled.

Goals ("pick up the cube three times"), subgoals ("... for the second time"), the memory's
reading of both and the tasks' own templates all spell and read numbers here, so a count the
training range never reached ("eleventh", "12 times") is spelled and read the same way
everywhere instead of by a per-module table.
"""

from __future__ import annotations

import operator
import re

__all__ = [
    "ADVERB_COUNTS",
    "CARDINAL_WORDS",
    "ORDINAL_PATTERN",
    "ORDINAL_WORDS",
    "as_integer",
    "is_ordinal_word",
    "number_word",
    "ordinal_digits",
    "ordinal_word",
    "parse_ordinal",
    "small_int",
    "times_phrase",
]

ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
CARDINAL_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
ADVERB_COUNTS = {"once": 1, "twice": 2, "thrice": 3}
_ORDINAL_VALUE = {w: i + 1 for i, w in enumerate(ORDINAL_WORDS)}
_CARDINAL_VALUE = {w: i + 1 for i, w in enumerate(CARDINAL_WORDS)}
_NUMERIC_ORDINAL = re.compile(r"([0-9]+)(st|nd|rd|th)\Z")


def small_int(digits: str) -> int | None:
    """``int(digits)`` for at most nine ASCII digits; longer strings are no count we use (and
    Python refuses to convert very long ones)."""
    if not digits or len(digits) > 9 or not (digits.isascii() and digits.isdigit()):
        return None
    return int(digits)


def as_integer(raw: object, error: type[Exception], message: str) -> int:
    """``raw`` as an int when it is one (numpy integers too, never a bool); else raise ``error(message)``.

    One place for the check every counter, coordinate and step of the project makes, so a bool or a
    float slipping in is refused the same way everywhere."""
    if isinstance(raw, bool):
        raise error(message)
    try:
        return operator.index(raw)
    except TypeError:
        raise error(message) from None


def _positive(n: object, what: str) -> int:
    message = f"{what} must be a positive integer, got {n!r}"
    value = as_integer(n, ValueError, message)
    if value < 1:
        raise ValueError(message)
    return value


def _suffix(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def ordinal_word(n: int) -> str:
    """Return the English ordinal for ``n``: ``1 -> "first"`` ... ``10 -> "tenth"``, then ``"11th"``.

    Raises:
        ValueError: if ``n`` is not a positive integer.
    """
    value = _positive(n, "ordinal")
    if value <= len(ORDINAL_WORDS):
        return ORDINAL_WORDS[value - 1]
    return f"{value}{_suffix(value)}"


def number_word(n: int) -> str:
    """Return the cardinal word for ``n`` (``3 -> "three"``), or its digits above ten.

    Raises:
        ValueError: if ``n`` is not a positive integer.
    """
    value = _positive(n, "count")
    return CARDINAL_WORDS[value - 1] if value <= len(CARDINAL_WORDS) else str(value)


def parse_ordinal(word: str) -> int | None:
    """Read a position or count word: ``"second"``, ``"2nd"``, ``"twice"``, ``"three"``, ``"4"``.

    Ordinals (first..tenth and ``Nth``), adverbial counts (once, twice, thrice), cardinal
    words (one..ten) and plain digits all map to their integer. Anything else, including
    non-strings, returns ``None`` rather than raising, because callers use it to *test*
    whether a word is numeric.
    """
    if not isinstance(word, str):
        return None
    w = word.strip().lower()
    if w in _ORDINAL_VALUE:
        return _ORDINAL_VALUE[w]
    if w in ADVERB_COUNTS:
        return ADVERB_COUNTS[w]
    if w in _CARDINAL_VALUE:
        return _CARDINAL_VALUE[w]
    m = _NUMERIC_ORDINAL.match(w)
    value = small_int(m.group(1) if m else w)
    return value if value is not None and value >= 1 else None


def is_ordinal_word(word: str) -> bool:
    """True for position words only (``"second"``, ``"3rd"``), not counts such as ``"two"``."""
    if not isinstance(word, str):
        return False
    w = word.lower()
    if w in _ORDINAL_VALUE:
        return True
    m = _NUMERIC_ORDINAL.match(w)
    return bool(m) and (small_int(m.group(1)) or 0) >= 1


ORDINAL_PATTERN = r"(?:" + "|".join(ORDINAL_WORDS) + r"|[0-9]+(?:st|nd|rd|th))"
"""A regular expression (no groups) matching one position word: ``first`` .. ``tenth`` or ``Nth``."""


def times_phrase(n: int) -> str:
    """How often, in words: ``1 -> "once"``, ``2 -> "twice"``, ``3 -> "three times"``."""
    return {1: "once", 2: "twice"}.get(n) or f"{number_word(n)} times"


def ordinal_digits(n: int) -> str:
    """A position in digits: ``2 -> "2nd"``, ``11 -> "11th"``, ``23 -> "23rd"``."""
    ordinal_word(n)  # the same validation
    return f"{n}{_suffix(n)}"
